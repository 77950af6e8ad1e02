/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The planner decides what every container can see and reach; these tests
 * pin the isolation-relevant parts of each plan without a kernel.
 */
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"
#include "manifest/manifest.h"
#include "sandbox/host-view.h"
#include "test-helpers.h"
#include "unit/unit-plan.h"

static const char unit_yaml[] =
        "app: server.app:app\n"
        "port: 8000\n"
        "openenvd:\n"
        "  privileged_assets:\n"
        "    oracle: assets/oracle.json\n"
        "  zones:\n"
        "    agent:\n"
        "      resources: {disk_mb: 32}\n"
        "      containers:\n"
        "        env: {}\n"
        "        harness: {argv: [/usr/bin/python3, /opt/u/harness.py]}\n"
        "    services:\n"
        "      containers:\n"
        "        sim:\n"
        "          argv: [/usr/bin/python3, /opt/u/sim.py, '8080']\n"
        "          port: 8080\n"
        "          expose: {host: sim.local, port: 80}\n"
        "          state: /var/lib/sim\n"
        "    observers:\n"
        "      containers:\n"
        "        runner: {argv: [/bin/true], reads: [workspace], phases: [grading], output: "
        "/out/report.json}\n"
        "        verdict:\n"
        "          argv: [/bin/true]\n"
        "          reads: [assets.oracle, runner.output, services.sim.state]\n"
        "          after: runner\n"
        "          phases: [grading]\n";

static bool never_dir(const char *p)
{
        (void) p;
        return false;
}

static struct manifest *m;
static struct unit_plan_context ctx;

static void setup(void)
{
        struct manifest_errors errs;
        manifest_errors_init(&errs, "test.yaml");
        int r = manifest_parse(unit_yaml, strlen(unit_yaml), "/srv/unit", 0, &errs, &m);
        if (r < 0) {
                struct strbuf sb = STRBUF_INIT;
                manifest_errors_format(&errs, &sb);
                cr_log_error("%s", sb.buf);
                strbuf_release(&sb);
        }
        cr_assert_eq(r, 0);
        manifest_errors_done(&errs);
        ctx = (struct unit_plan_context){
                .manifest = m,
                .state_dir = "/var/lib/openenvd",
                .episode_dir = "/var/lib/openenvd/episodes/abc",
                .episode_id = "abc",
                .uid_base = 1u << 30,
                .phase = PHASE_GRADING,
                .is_dir = never_dir,
        };
}

static void teardown(void)
{
        manifest_free(m);
}

static const struct mount_entry *find_mount(const struct container_spec *s, const char *target)
{
        for (size_t i = 0; i < s->n_mounts; i++)
                if (streq(s->mounts[i].target, target))
                        return &s->mounts[i];
        return NULL;
}

static bool has_env(const struct container_spec *s, const char *kv)
{
        return strv_contains(s->env, kv);
}

static struct container_spec plan(const char *name)
{
        struct container_spec s;
        const struct manifest_container *c = manifest_find_container(m, name);
        cr_assert_not_null(c, "no container %s", name);
        cr_assert_eq(unit_plan_container(&ctx, c, &s), 0);
        return s;
}

TestSuite(plan, .init = setup, .fini = teardown);

Test(plan, every_container_gets_its_own_socket_dir_and_uid_range)
{
        const char *names[] = { "env", "harness", "sim", "runner", "verdict" };
        uid_t seen[5];
        for (size_t i = 0; i < 5; i++) {
                struct container_spec s = plan(names[i]);
                /* The launcher binds socket_dir itself: no second mount. */
                cr_assert_null(find_mount(&s, "/run/openenvd"));
                cr_assert_not_null(s.socket_dir);
                /* Per episode: a fresh tmpfs each time. */
                char *want = xasprintf("/var/lib/openenvd/episodes/abc/sock/%s", names[i]);
                cr_assert_str_eq(s.socket_dir, want);
                free(want);
                cr_assert_neq(s.uid, 0, "principal must not be root inside");
                seen[i] = s.host_uid;
                for (size_t j = 0; j < i; j++)
                        cr_assert_neq(seen[j], seen[i], "host uid ranges must differ");
                cr_assert_geq(s.host_uid, 1u << 30);
                cr_assert_lt(s.host_uid, (1u << 30) + 5 * UNIT_UID_RANGE);
                container_spec_done(&s);
        }
}

Test(plan, state_dir_secrets_and_asset_sources_are_masked_everywhere)
{
        const char *names[] = { "env", "harness", "sim", "runner", "verdict" };
        for (size_t i = 0; i < 5; i++) {
                struct container_spec s = plan(names[i]);
                cr_assert(strv_contains(s.masks, "/var/lib/openenvd"), "%s", names[i]);
                cr_assert(strv_contains(s.masks, "/run/secrets"), "%s", names[i]);
                /* The file itself, not its directory (issue 26). */
                cr_assert(strv_contains(s.masks, "/srv/unit/assets/oracle.json"), "%s", names[i]);
                cr_assert_not(strv_contains(s.masks, "/srv/unit/assets"), "%s", names[i]);
                container_spec_done(&s);
        }
}

/* A unit laid out as an image is: openenv.yaml, the env's own package and
 * the graders' files side by side in one directory, the env started there. */
static const char beside_yaml[] =
        "app: server.app:app\n"
        "openenvd:\n"
        "  privileged_assets:\n"
        "    answers: answers.json\n"
        "    inputs: cases\n"
        "  zones:\n"
        "    observers:\n"
        "      containers:\n"
        "        runner: {argv: [/bin/true], reads: [assets.inputs], phases: [grading], output: "
        "/out/r.json}\n"
        "        verdict: {argv: [/bin/true], reads: [assets.answers, runner.output], after: "
        "runner, phases: [grading]}\n";

static bool cases_is_dir(const char *p)
{
        return streq(p, "/app/env/cases") || streq(p, "/app/env");
}

static bool always_reachable(const char *p)
{
        (void) p;
        return true;
}

Test(plan, a_file_asset_masks_that_file_only_a_directory_asset_that_directory)
{
        struct manifest_errors errs;
        struct manifest *b = NULL;
        struct mount_entry usr = { .kind = MOUNT_BIND,
                                   .source = (char *) "/usr",
                                   .target = (char *) "/usr",
                                   .flags = MS_RDONLY | MS_NOSUID | MS_NODEV };
        struct host_view view = { .root = (char *) "/var/lib/openenvd/host-view",
                                  .binds = &usr,
                                  .n_binds = 1 };
        struct env_origin o;
        char *daemon_env[] = { "PYTHONPATH=/app/env", NULL };
        static const char *const names[] = { "env", "runner", "verdict" };

        manifest_errors_init(&errs, "openenv.yaml");
        cr_assert_eq(manifest_parse(beside_yaml, strlen(beside_yaml), "/app/env", 0, &errs, &b), 0);
        manifest_errors_done(&errs);
        env_origin_init(&o, daemon_env, "/app/env");
        struct unit_plan_context c = ctx;
        c.manifest = b;
        c.host_view = &view;
        c.env_origin = &o;
        c.is_dir = cases_is_dir;
        c.reachable = always_reachable;

        for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                struct container_spec s;
                cr_assert_eq(unit_plan_container(&c, manifest_find_container(b, names[i]), &s), 0);
                cr_expect(strv_contains(s.masks, "/app/env/answers.json"), "%s", names[i]);
                cr_expect(strv_contains(s.masks, "/app/env/cases"), "%s", names[i]);
                /* Nothing the env needs: its directory stays, and nothing
                 * above or beside the assets is hidden. */
                for (char **k = s.masks; *k; k++)
                        cr_expect(streq(*k, "/app/env/answers.json") ||
                                          streq(*k, "/app/env/cases") || !startswith(*k, "/app"),
                                  "%s masks %s", names[i], *k);
                container_spec_done(&s);
        }
        /* The env runs from its directory, bound in the host view; the
         * masks go on top of it (mount-setup.h: the policy last). */
        struct container_spec env;
        cr_assert_eq(unit_plan_container(&c, manifest_find_container(b, "env"), &env), 0);
        cr_expect_str_eq(env.workdir, "/app/env");
        cr_expect_not_null(find_mount(&env, "/app/env"));
        container_spec_done(&env);
        env_origin_done(&o);
        manifest_free(b);
}

/* An author's assets/ closed to others (0700): no container can pass it,
 * and a mask below it could not be placed (the launchers resolve masks as
 * the container's root: EACCES). The mask goes on the closed directory. */
Test(plan, an_asset_behind_a_closed_directory_is_masked_at_that_directory)
{
        char dir[] = "/tmp/plan-masks.XXXXXX";
        struct manifest_errors errs;
        struct manifest *b = NULL;

        cr_assert_not_null(mkdtemp(dir));
        cr_assert_eq(chmod(dir, 0755), 0);
        cleanup_free char *open_dir = xasprintf("%s/open", dir);
        cleanup_free char *closed = xasprintf("%s/closed", dir);
        cr_assert_eq(mkdir(open_dir, 0755), 0);
        cr_assert_eq(mkdir(closed, 0700), 0);
        cr_assert_eq(chmod(closed, 0700), 0);
        cleanup_free char *yaml = xasprintf("app: server.app:app\n"
                                            "openenvd:\n"
                                            "  privileged_assets:\n"
                                            "    seen: %s/answers.json\n"
                                            "    locked: %s/answers.json\n",
                                            open_dir, closed);
        manifest_errors_init(&errs, "openenv.yaml");
        cr_assert_eq(manifest_parse(yaml, strlen(yaml), dir, 0, &errs, &b), 0);
        manifest_errors_done(&errs);
        struct unit_plan_context c = ctx;
        c.manifest = b;

        cleanup_free char *seen = xasprintf("%s/answers.json", open_dir);
        cleanup_strv char **masks = unit_masks(&c);
        cr_expect(strv_contains(masks, seen), "a reachable file alone");
        cr_expect(strv_contains(masks, closed), "the closed directory on the way");
        cr_expect_not(strv_contains(masks, open_dir));
        cr_expect_not(strv_contains(masks, dir));
        manifest_free(b);
        (void) rmdir(open_dir);
        (void) rmdir(closed);
        (void) rmdir(dir);
}

/* The history of an asset is the asset: the .git of each work tree around it
 * is masked (a superproject's directory and a submodule's file naming its git
 * dir), nothing else of the checkout. */
Test(plan, the_git_dirs_around_an_asset_are_masked)
{
        char dir[] = "/tmp/plan-git.XXXXXX";
        struct manifest_errors errs;
        struct manifest *b = NULL;

        cr_assert_not_null(mkdtemp(dir));
        cr_assert_eq(chmod(dir, 0755), 0);
        cleanup_free char *git = xasprintf("%s/.git", dir);
        cleanup_free char *sub = xasprintf("%s/sub", dir);
        cleanup_free char *sub_git = xasprintf("%s/sub/.git", dir);
        cleanup_free char *tests = xasprintf("%s/sub/tests", dir);
        cr_assert_eq(mkdir(git, 0755), 0);
        cr_assert_eq(mkdir(sub, 0755), 0);
        cr_assert_eq(mkdir(tests, 0755), 0);
        FILE *f = fopen(sub_git, "we");
        cr_assert_not_null(f);
        cr_assert_geq(fputs("gitdir: ../.git/modules/sub\n", f), 0);
        cr_assert_eq(fclose(f), 0);
        static const char yaml[] = "app: server.app:app\n"
                                   "openenvd:\n"
                                   "  privileged_assets:\n"
                                   "    answers: tests/answers.json\n";
        manifest_errors_init(&errs, "openenv.yaml");
        cr_assert_eq(manifest_parse(yaml, strlen(yaml), sub, 0, &errs, &b), 0);
        manifest_errors_done(&errs);
        struct unit_plan_context c = ctx;
        c.manifest = b;

        cleanup_strv char **masks = unit_masks(&c);
        cr_expect(strv_contains(masks, git), "the superproject's .git");
        cr_expect(strv_contains(masks, sub_git), "the submodule's .git file");
        for (char **k = masks; *k; k++)
                cr_expect(!startswith(*k, dir) || streq(*k, git) || streq(*k, sub_git) ||
                                  endswith(*k, "/answers.json"),
                          "masks %s", *k);
        manifest_free(b);
        (void) unlink(sub_git);
        (void) rmdir(tests);
        (void) rmdir(sub);
        (void) rmdir(git);
        (void) rmdir(dir);
}

/* Asset-level visibility: an observer sees the assets it lists, each, and
 * no other (issue 26: inputs to the runner, answers to the verdict only). */
Test(plan, each_observer_sees_only_the_assets_it_lists)
{
        struct manifest_errors errs;
        struct manifest *b = NULL;

        manifest_errors_init(&errs, "openenv.yaml");
        cr_assert_eq(manifest_parse(beside_yaml, strlen(beside_yaml), "/app/env", 0, &errs, &b), 0);
        manifest_errors_done(&errs);
        struct unit_plan_context c = ctx;
        c.manifest = b;

        struct container_spec r, v;
        cr_assert_eq(unit_plan_container(&c, manifest_find_container(b, "runner"), &r), 0);
        cr_assert_eq(unit_plan_container(&c, manifest_find_container(b, "verdict"), &v), 0);
        cr_expect_not_null(find_mount(&r, "/assets/inputs"));
        cr_expect_null(find_mount(&r, "/assets/answers"), "the runner never sees the answers");
        cr_expect_not_null(find_mount(&v, "/assets/answers"));
        cr_expect_null(find_mount(&v, "/assets/inputs"), "the verdict did not list the inputs");
        for (size_t k = 0; k < r.n_mounts; k++)
                cr_expect(!startswith(r.mounts[k].source, "/var/lib/openenvd/assets/answers"),
                          "runner: %s", r.mounts[k].source);
        container_spec_done(&r);
        container_spec_done(&v);
        manifest_free(b);
}

Test(plan, only_the_verdict_sees_assets_and_never_the_workspace)
{
        struct container_spec v = plan("verdict");
        const struct mount_entry *a = find_mount(&v, "/assets/oracle");
        cr_assert_not_null(a);
        cr_assert_str_eq(a->source, "/var/lib/openenvd/assets/oracle");
        cr_assert_eq(a->flags & (MS_RDONLY | MS_NOSYMFOLLOW | MS_NOEXEC),
                     MS_RDONLY | MS_NOSYMFOLLOW | MS_NOEXEC);
        cr_assert_null(find_mount(&v, "/workspace"));
        const struct mount_entry *in = find_mount(&v, "/inputs/runner");
        cr_assert_not_null(in);
        cr_assert_str_eq(in->source,
                         "/var/lib/openenvd/episodes/abc/observers/verdict/inputs/runner");
        cr_assert(in->flags & MS_RDONLY);
        const struct mount_entry *sv = find_mount(&v, "/services/sim");
        cr_assert_not_null(sv);
        cr_assert(sv->flags & MS_RDONLY);
        container_spec_done(&v);

        const char *others[] = { "env", "harness", "sim", "runner" };
        for (size_t i = 0; i < 4; i++) {
                struct container_spec s = plan(others[i]);
                for (size_t k = 0; k < s.n_mounts; k++)
                        cr_assert_null(startswith(s.mounts[k].target, "/assets"), "%s sees %s",
                                       others[i], s.mounts[k].target);
                container_spec_done(&s);
        }
}

Test(plan, runner_reads_workspace_read_only_without_links_or_exec)
{
        struct container_spec r = plan("runner");
        const struct mount_entry *w = find_mount(&r, "/workspace");
        cr_assert_not_null(w);
        /* Grading: never the agent's live workspace, its custody copy. */
        cr_assert_str_eq(w->source, "/var/lib/openenvd/episodes/abc/workspace-copy/ws");
        cr_assert_eq(w->flags & (MS_RDONLY | MS_NOSYMFOLLOW | MS_NOEXEC | MS_NODEV | MS_NOSUID),
                     MS_RDONLY | MS_NOSYMFOLLOW | MS_NOEXEC | MS_NODEV | MS_NOSUID);
        const struct mount_entry *o = find_mount(&r, "/out");
        cr_assert_not_null(o);
        cr_assert_not(o->flags & MS_RDONLY);
        cr_assert(has_env(&r, "OPENENVD_PHASE=grading"));
        container_spec_done(&r);
}

Test(plan, observers_beside_the_agent_see_the_live_workspace)
{
        ctx.phase = PHASE_READY;
        struct container_spec r = plan("runner");
        const struct mount_entry *w = find_mount(&r, "/workspace");
        cr_assert_not_null(w);
        cr_assert_str_eq(w->source, "/var/lib/openenvd/episodes/abc/workspace/merged");
        cr_assert(w->flags & MS_RDONLY);
        container_spec_done(&r);
}

Test(plan, env_reaches_the_service_only_through_its_socket)
{
        struct container_spec e = plan("env");
        cr_assert_eq(e.n_forwards, 2);
        /* Socket activation: the daemon's listener, fd 3, to its port. */
        cr_assert_eq(e.forwards[0].kind, FORWARD_FD_TO_TCP);
        cr_assert_eq(e.forwards[0].pass_index, 0);
        cr_assert_eq(e.n_pass_fds, 1);
        cr_assert_eq(e.forwards[0].port, 8000);
        cr_assert_eq(e.forwards[1].kind, FORWARD_TCP_TO_UNIX);
        cr_assert_str_eq(e.forwards[1].host, "127.0.0.10");
        cr_assert_eq(e.forwards[1].port, 80);
        cr_assert_str_eq(e.forwards[1].path, "/run/openenvd/svc-sim.sock");
        cr_assert(has_env(&e, "OPENENVD_SERVICE_SIM=http://sim.local:80"));
        const struct mount_entry *h = find_mount(&e, "/etc/hosts");
        cr_assert_not_null(h);
        cr_assert(h->flags & MS_RDONLY);
        /* Not in its own (writable) socket dir. */
        cr_assert_str_eq(h->source, "/var/lib/openenvd/episodes/abc/hosts");
        const struct mount_entry *w = find_mount(&e, "/workspace");
        cr_assert_not_null(w);
        cr_assert_not(w->flags & MS_RDONLY);
        cr_assert_eq(e.tmp_bytes, 32ULL * 1024 * 1024);
        container_spec_done(&e);

        /* Nobody else gets a way to the service. */
        const char *others[] = { "harness", "runner", "verdict" };
        for (size_t i = 0; i < 3; i++) {
                struct container_spec s = plan(others[i]);
                for (size_t k = 0; k < s.n_forwards; k++)
                        cr_assert(!s.forwards[k].path || !strstr(s.forwards[k].path, "svc-"), "%s",
                                  others[i]);
                cr_assert_null(find_mount(&s, "/etc/hosts"));
                container_spec_done(&s);
        }
}

Test(plan, harness_holds_only_the_placeholder_key)
{
        struct container_spec h = plan("harness");
        cr_assert(has_env(&h, "ANTHROPIC_API_KEY=" UNIT_MODEL_PLACEHOLDER));
        cr_assert(has_env(&h, "OPENAI_API_KEY=" UNIT_MODEL_PLACEHOLDER));
        cr_assert(has_env(&h, "MCP_URL=http://127.0.0.1:8000/mcp"));
        cr_assert_eq(h.n_forwards, 2);
        cr_assert_str_eq(h.forwards[0].path, "/run/openenvd/mcp.sock");
        cr_assert_str_eq(h.forwards[1].path, "/run/openenvd/model.sock");
        container_spec_done(&h);
}

Test(plan, service_state_is_its_episode_overlay)
{
        struct container_spec s = plan("sim");
        const struct mount_entry *st = find_mount(&s, "/var/lib/sim");
        cr_assert_not_null(st);
        cr_assert_str_eq(st->source, "/var/lib/openenvd/episodes/abc/services/sim/merged");
        cr_assert_eq(s.n_forwards, 1);
        cr_assert_eq(s.forwards[0].kind, FORWARD_FD_TO_TCP);
        cr_assert_eq(s.n_pass_fds, 1);
        cr_assert_eq(s.forwards[0].port, 8080);
        container_spec_done(&s);
}

Test(plan, hosts_file_names_each_exposed_service)
{
        char *h = unit_hosts_file(m);
        cr_assert_str_eq(h, "127.0.0.1 localhost\n::1 localhost\n127.0.0.10 sim.local\n");
        free(h);
}

/* --- where and with what the env server starts (env-origin.h) --- */

static size_t count_key(const struct container_spec *s, const char *key)
{
        size_t n = 0, l = strlen(key);
        for (char **e = s->env; e && *e; e++)
                n += strncmp(*e, key, l) == 0 && (*e)[l] == '=';
        return n;
}

Test(plan, env_starts_in_the_daemons_directory_with_its_environment)
{
        char *daemon_env[] = { "PATH=/app/.venv/bin:/usr/bin",
                               "PYTHONPATH=/app/env",
                               "ENABLE_WEB_INTERFACE=false",
                               "OPENENVD_TOKEN=orchestrator-secret",
                               "OPENENVD_AGENT_TOKEN=agent-secret",
                               "ANTHROPIC_API_KEY=sk-real",
                               "HF_TOKEN=hf-real",
                               "AWS_SECRET_ACCESS_KEY=aws-real",
                               "SSH_KEY=ssh-real",
                               "HOME=/root",
                               "NOTIFY_SOCKET=/run/systemd/notify",
                               "OPENENVD_EPISODE=forged",
                               NULL };
        struct env_origin o;
        struct container_spec env, harness, runner;

        env_origin_init(&o, daemon_env, "/app");
        ctx.env_origin = &o;
        env = plan("env");
        harness = plan("harness");
        runner = plan("runner");

        cr_expect_str_eq(env.workdir, "/app");
        cr_expect(has_env(&env, "PATH=/app/.venv/bin:/usr/bin"));
        cr_expect_eq(count_key(&env, "PATH"), 1, "one PATH: the image's replaces the default");
        cr_expect(has_env(&env, "PYTHONPATH=/app/env"));
        cr_expect(has_env(&env, "ENABLE_WEB_INTERFACE=false"));
        cr_expect(has_env(&env, "HOME=/tmp"), "the principal's HOME, not the daemon's");
        cr_expect(has_env(&env, "OPENENVD_EPISODE=abc"), "openenvd's own variables are its own");
        cr_expect_eq(count_key(&env, "OPENENVD_EPISODE"), 1);
        for (char **e = env.env; *e; e++) {
                cr_expect_null(strstr(*e, "secret"), "%s reached the env", *e);
                cr_expect_null(strstr(*e, "-real"), "%s reached the env", *e);
                cr_expect_null(strstr(*e, "NOTIFY_SOCKET"), "%s reached the env", *e);
        }
        /* Only the env server: the harness and observers keep their own. */
        cr_expect_str_eq(harness.workdir, "/workspace");
        cr_expect_str_eq(runner.workdir, "/");
        cr_expect_not(has_env(&harness, "PYTHONPATH=/app/env"));
        cr_expect_not(has_env(&runner, "PYTHONPATH=/app/env"));
        /* The withheld are named (the daemon logs them), not valued. */
        cr_expect(strv_contains(o.withheld, "OPENENVD_TOKEN"));
        cr_expect(strv_contains(o.withheld, "ANTHROPIC_API_KEY"));
        cr_expect(strv_contains(o.withheld, "HF_TOKEN"));
        cr_expect_not(strv_contains(o.withheld, "HOME"));
        container_spec_done(&env);
        container_spec_done(&harness);
        container_spec_done(&runner);

        /* In another root (--rootfs) the daemon's directory means nothing. */
        ctx.rootfs = "/srv/image";
        env = plan("env");
        cr_expect_str_eq(env.rootfs, "/srv/image");
        cr_expect_str_eq(env.workdir, "/");
        container_spec_done(&env);
        ctx.rootfs = NULL;
        ctx.env_origin = NULL;
        env_origin_done(&o);
}

Test(plan, manifest_workdir_and_env_win)
{
        static const char yaml[] =
                "app: a:b\n"
                "openenvd:\n"
                "  zones:\n"
                "    agent:\n"
                "      containers:\n"
                "        env: {workdir: /app/env, env: {PATH: /opt/bin, HF_TOKEN: deliberate}}\n";
        struct manifest_errors errs;
        struct manifest *mm = NULL;
        char *daemon_env[] = { "PATH=/image/bin", "HF_TOKEN=from-daemon", NULL };
        struct env_origin o;
        struct unit_plan_context c2 = ctx;
        struct container_spec s;

        manifest_errors_init(&errs, "t.yaml");
        cr_assert_eq(manifest_parse(yaml, strlen(yaml), "/srv", 0, &errs, &mm), 0);
        manifest_errors_done(&errs);
        env_origin_init(&o, daemon_env, "/app");
        c2.manifest = mm;
        c2.env_origin = &o;
        cr_assert_eq(unit_plan_container(&c2, manifest_find_container(mm, "env"), &s), 0);
        cr_expect_str_eq(s.workdir, "/app/env");
        cr_expect(strv_contains(s.env, "PATH=/opt/bin"));
        cr_expect_eq(count_key(&s, "PATH"), 1);
        /* A manifest passes a secret on only by writing it. */
        cr_expect(strv_contains(s.env, "HF_TOKEN=deliberate"));
        cr_expect_eq(count_key(&s, "HF_TOKEN"), 1);
        container_spec_done(&s);
        env_origin_done(&o);
        manifest_free(mm);
}

Test(plan, env_origin_classifies_by_name)
{
        static const struct {
                const char *name;
                enum env_origin_class want;
        } cases[] = {
                { "PATH", ENV_ORIGIN_PASS },
                { "PYTHONPATH", ENV_ORIGIN_PASS },
                { "MAX_CONCURRENT_ENVS", ENV_ORIGIN_PASS },
                { "KEYBOARD_LAYOUT", ENV_ORIGIN_PASS },
                { "GIT_AUTHOR_NAME", ENV_ORIGIN_PASS },
                { "OPENENVD_TOKEN", ENV_ORIGIN_SECRET },
                { "OPENENVD_REQUIRE_ISOLATION", ENV_ORIGIN_SECRET },
                { "openai_api_key", ENV_ORIGIN_SECRET },
                { "GITHUB_TOKEN", ENV_ORIGIN_SECRET },
                { "PGPASSWORD", ENV_ORIGIN_SECRET },
                { "DB_PASSWD", ENV_ORIGIN_SECRET },
                { "CLIENT_SECRET", ENV_ORIGIN_SECRET },
                { "GOOGLE_APPLICATION_CREDENTIALS", ENV_ORIGIN_SECRET },
                { "AWS_ACCESS_KEY_ID", ENV_ORIGIN_SECRET },
                { "SIGNING_KEY", ENV_ORIGIN_SECRET },
                { "KEY", ENV_ORIGIN_SECRET },
                { "HOME", ENV_ORIGIN_CONTEXT },
                { "LISTEN_FDS", ENV_ORIGIN_CONTEXT },
                { "SSH_AUTH_SOCK", ENV_ORIGIN_CONTEXT },
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                cr_expect_eq(env_origin_classify(cases[i].name, strlen(cases[i].name)),
                             cases[i].want, "%s", cases[i].name);
}

/* The daemon's --rootfs is every container's root unless the manifest names
 * one for it; without either, the root is "/" (the image's own, as PID 1). */
Test(plan, root_is_the_daemons_rootfs_unless_the_manifest_names_one)
{
        static const char *const names[] = { "env", "harness", "sim", "runner", "verdict" };
        struct manifest_container *sim =
                (struct manifest_container *) manifest_find_container(m, "sim");

        for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                struct container_spec s = plan(names[i]);
                cr_expect_str_eq(s.rootfs, "/", "%s", names[i]);
                container_spec_done(&s);
        }
        ctx.rootfs = "/srv/image";
        sim->rootfs = xstrdup("/srv/sim-root");
        for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                struct container_spec s = plan(names[i]);
                cr_expect_str_eq(s.rootfs, streq(names[i], "sim") ? "/srv/sim-root" : "/srv/image",
                                 "%s", names[i]);
                container_spec_done(&s);
        }
}

/* The host view: a fake host where /app, /app/env, /app/.venv(/bin), /opt/u,
 * /srv/other and /root/.cargo/bin are directories, and /root is 0700. */
static bool fake_dir(const char *p)
{
        static const char *const dirs[] = { "/app",           "/app/env",         "/app/.venv",
                                            "/app/.venv/bin", "/opt/u",           "/srv/other",
                                            "/root/.cargo",   "/root/.cargo/bin", "/opt/tool",
                                            "/opt/tool/bin" };
        for (size_t i = 0; i < ELEMENTSOF(dirs); i++)
                if (streq(p, dirs[i]))
                        return true;
        return false;
}

static bool fake_reachable(const char *p)
{
        return strncmp(p, "/root/", 6) != 0;
}

static bool binds_source(const struct container_spec *s, const char *source)
{
        for (size_t i = 0; i < s->n_mounts; i++)
                if (s->mounts[i].source && streq(s->mounts[i].source, source))
                        return true;
        return false;
}

Test(plan, host_view_shows_the_view_and_the_units_own_directories_only)
{
        struct mount_entry usr = { .kind = MOUNT_BIND,
                                   .source = (char *) "/usr",
                                   .target = (char *) "/usr",
                                   .flags = MS_RDONLY | MS_NOSUID | MS_NODEV };
        struct host_view view = { .root = (char *) "/var/lib/openenvd/host-view",
                                  .binds = &usr,
                                  .n_binds = 1 };
        char *daemon_env[] = { "PATH=/app/.venv/bin:/root/.cargo/bin:/opt/tool/bin:/usr/bin",
                               "PYTHONPATH=/app/env:/etc/python3:/srv/../srv/other:/nowhere",
                               NULL };
        struct env_origin o;

        env_origin_init(&o, daemon_env, "/app");
        ctx.env_origin = &o;
        ctx.host_view = &view;
        ctx.is_dir = fake_dir;
        ctx.reachable = fake_reachable;

        struct container_spec env = plan("env");
        cr_expect_str_eq(env.rootfs, view.root);
        cr_expect_str_eq(env.workdir, "/app", "the daemon's directory, as on the whole host");
        const struct mount_entry *b = find_mount(&env, "/usr");
        cr_assert_not_null(b);
        cr_expect_eq(b->flags, usr.flags);
        /* The workdir holds PYTHONPATH's /app/env and the virtualenv: one bind. */
        b = find_mount(&env, "/app");
        cr_assert_not_null(b, "the env's directory");
        cr_expect_str_eq(b->source, "/app");
        cr_expect(b->flags & MS_RDONLY && b->flags & MS_NOSUID && b->flags & MS_NODEV);
        cr_expect_not(b->flags & MS_NOEXEC, "its programs run");
        cr_expect_null(find_mount(&env, "/app/env"));
        cr_expect_null(find_mount(&env, "/app/.venv"));
        /* A bin directory stands for its prefix. */
        cr_expect_not_null(find_mount(&env, "/opt/tool"));
        /* Never below a 0700 directory, never /etc from the host, never a
         * path with "..", never what does not exist. */
        cr_expect_not(binds_source(&env, "/root/.cargo"));
        cr_expect_not(binds_source(&env, "/root/.cargo/bin"));
        cr_expect_not(binds_source(&env, "/etc/python3"));
        cr_expect_not(binds_source(&env, "/srv/other"));
        cr_expect_not(binds_source(&env, "/srv/../srv/other"));
        cr_expect_not(binds_source(&env, "/nowhere"));
        /* The zone's own mounts come after the view, on top of it. */
        cr_expect_str_eq(env.mounts[0].target, "/usr");
        container_spec_done(&env);

        /* The harness: its script's directory, none of the env's. */
        struct container_spec harness = plan("harness");
        cr_expect_str_eq(harness.rootfs, view.root);
        cr_expect_not_null(find_mount(&harness, "/opt/u"));
        cr_expect_null(find_mount(&harness, "/app"));
        cr_expect_not(binds_source(&harness, "/usr/bin"), "/usr/bin/python3 is in /usr already");
        harness.shim_path = xstrdup("/usr/libexec/openenvd-shim"); /* the unit's, not the plan's */
        cr_expect_eq(container_spec_validate(&harness), 0, "a view every launcher takes");
        container_spec_done(&harness);

        /* --host-root-unfiltered: the whole "/", nothing bound for it. */
        ctx.rootfs = "/";
        env = plan("env");
        cr_expect_str_eq(env.rootfs, "/");
        cr_expect_str_eq(env.workdir, "/app");
        cr_expect_null(find_mount(&env, "/usr"));
        cr_expect_null(find_mount(&env, "/app"));
        container_spec_done(&env);
        /* --rootfs: the image, nothing of the host. */
        ctx.rootfs = "/srv/image";
        env = plan("env");
        cr_expect_str_eq(env.rootfs, "/srv/image");
        cr_expect_null(find_mount(&env, "/usr"));
        container_spec_done(&env);

        ctx.rootfs = NULL;
        ctx.env_origin = NULL;
        env_origin_done(&o);
}

/* Observers learn the daemon's own count of actions (the one step count no
 * agent code can write); nobody else is told it. */
Test(plan, observers_get_the_daemons_count_of_actions)
{
        static const char *const agents[] = { "env", "harness", "sim" };

        ctx.actions = 7;
        struct container_spec v = plan("verdict");
        cr_expect(has_env(&v, "OPENENVD_ACTIONS=7"));
        container_spec_done(&v);
        for (size_t i = 0; i < ELEMENTSOF(agents); i++) {
                struct container_spec s = plan(agents[i]);
                for (char **e = s.env; e && *e; e++)
                        cr_expect(!startswith(*e, "OPENENVD_ACTIONS="), "%s: %s", agents[i], *e);
                container_spec_done(&s);
        }
}
