/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The manifest contract: defaults, field-by-field merge, narrowing, paths,
 * observer order, JSON rendering, and a data-driven pass over
 * tests/manifests/{valid,invalid}: every invalid manifest's complete error
 * output must equal its .expected file (set MANIFEST_UPDATE_EXPECTED=1 to
 * rewrite them, then review the diff).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/fd-util.h"
#include "base/limits.h"
#include "base/strbuf.h"
#include "base/util.h"
#include "manifest/manifest.h"
#include "test-helpers.h"

#define MANIFESTS_DIR TEST_SRCDIR "/manifests"
#define EXAMPLE       TEST_SRCDIR "/../examples/echo/openenv.yaml"

/* Parses yaml (no filesystem checks, base dir /base); fails the test with
 * the error text if it is invalid. */
static struct manifest *parse_ok(const char *yaml)
{
        cleanup_manifest_errors struct manifest_errors e = { 0 };
        struct manifest *m = NULL;
        struct strbuf sb = STRBUF_INIT;
        int r;

        manifest_errors_init(&e, "t.yaml");
        r = manifest_parse(yaml, strlen(yaml), "/base", 0, &e, &m);
        manifest_errors_format(&e, &sb);
        cr_assert_eq(r, 0, "expected valid, got %d:\n%s", r, sb.buf);
        strbuf_release(&sb);
        return m;
}

/* Parses yaml expecting it to be invalid; returns the formatted errors. */
static char *parse_errors(const char *yaml)
{
        cleanup_manifest_errors struct manifest_errors e = { 0 };
        struct manifest *m = NULL;
        struct strbuf sb = STRBUF_INIT;
        int r;

        manifest_errors_init(&e, "t.yaml");
        r = manifest_parse(yaml, strlen(yaml), "/base", 0, &e, &m);
        cr_assert_eq(r, -EINVAL, "expected -EINVAL, got %d", r);
        cr_assert_null(m);
        manifest_errors_format(&e, &sb);
        return strbuf_detach(&sb, NULL);
}

static const struct manifest_container *find(const struct manifest *m, const char *name)
{
        const struct manifest_container *c = manifest_find_container(m, name);
        cr_assert_not_null(c, "no container %s", name);
        return c;
}

Test(manifest, defaults_without_openenvd_block)
{
        cleanup(manifest_freep) struct manifest *m = parse_ok("app: server.app:app\n");
        const struct manifest_container *env = find(m, "env");

        cr_expect_str_eq(m->app, "server.app:app");
        cr_expect_eq(m->port, 8000);
        cr_expect_eq(m->kill_deadline_s, 10.0);
        cr_expect_eq(m->standby, 1u);
        cr_expect(m->env_template);
        cr_expect_null(m->workspace_seed);
        cr_expect_eq(m->n_assets, 0);
        cr_expect_eq(m->zones[MANIFEST_ZONE_AGENT].n_containers, 1);
        cr_expect_eq(m->zones[MANIFEST_ZONE_SERVICES].n_containers, 0);
        cr_expect_eq(m->zones[MANIFEST_ZONE_OBSERVERS].n_containers, 0);
        cr_expect_eq(m->zones[MANIFEST_ZONE_AGENT].egress, MANIFEST_EGRESS_RELAYS_ONLY);
        cr_expect_eq(m->zones[MANIFEST_ZONE_SERVICES].egress, MANIFEST_EGRESS_NONE);
        cr_expect_eq(m->zones[MANIFEST_ZONE_AGENT].oci, MANIFEST_OCI_NATIVE);
        cr_expect_eq(m->zones[MANIFEST_ZONE_AGENT].resources.memory_mb, 1024);
        cr_expect_eq(m->zones[MANIFEST_ZONE_AGENT].resources.pids, 512);
        cr_expect_eq(m->zones[MANIFEST_ZONE_AGENT].resources.cpu, 0);
        cr_expect_eq(m->zones[MANIFEST_ZONE_AGENT].resources.disk_mb, 256);
        cr_expect_eq(m->zones[MANIFEST_ZONE_SERVICES].during_grading,
                     MANIFEST_DURING_GRADING_FROZEN);
        /* No model budget unless the manifest sets one. */
        cr_expect_eq(m->model.budget.requests, 0);
        cr_expect_eq(m->model.budget.bytes, 0);
        cr_expect_eq(m->model.budget.tokens, 0);

        /* docs/DESIGN.md §8: the env runs what it runs without openenvd. */
        cr_expect_eq(strv_length(env->argv), 6);
        cr_expect_str_eq(env->argv[0], "uvicorn");
        cr_expect_str_eq(env->argv[1], "server.app:app");
        cr_expect_str_eq(env->argv[2], "--host");
        cr_expect_str_eq(env->argv[3], "0.0.0.0");
        cr_expect_str_eq(env->argv[4], "--port");
        cr_expect_str_eq(env->argv[5], "8000");
        cr_expect_eq(env->port, 8000);
        cr_expect_eq(env->phases, PHASE_BIT(PHASE_READY) | PHASE_BIT(PHASE_RUNNING));
        cr_expect_eq(env->egress, MANIFEST_EGRESS_RELAYS_ONLY);
        cr_expect_eq(env->effective.memory_mb, 1024);
        cr_expect_eq(env->argv_source, MANIFEST_ARGV_APP);
        /* The env starts where openenvd started (an image's WORKDIR). */
        cr_expect_null(env->workdir);
        cr_expect_null(env->rootfs); /* the daemon's --rootfs, else "/" */
        cr_expect_null(env->env[0]);
}

Test(manifest, template_false_turns_the_env_template_off)
{
        cleanup(manifest_freep) struct manifest *m =
                parse_ok("app: server.app:app\nopenenvd:\n  template: false\n");
        cr_expect_not(m->env_template);
}

Test(manifest, standby_is_a_pool_size_or_a_bool)
{
        static const struct {
                const char *value;
                unsigned pool;
        } cases[] = {
                { "true", 1 }, { "True", 1 }, { "false", 0 }, { "FALSE", 0 },
                { "0", 0 },    { "2", 2 },    { "8", 8 },     { "32", MANIFEST_STANDBY_MAX },
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                cleanup_free char *yaml = xasprintf(
                        "app: server.app:app\nopenenvd:\n  standby: %s\n", cases[i].value);
                cleanup(manifest_freep) struct manifest *m = parse_ok(yaml);
                cr_expect_eq(m->standby, cases[i].pool, "standby: %s", cases[i].value);
        }
}

Test(manifest, concurrent_episodes_default_to_one_and_sessions_idle_out)
{
        cleanup(manifest_freep) struct manifest *one = parse_ok("app: a.b:c\n");
        cleanup(manifest_freep) struct manifest *four = parse_ok(
                "app: a.b:c\nopenenvd:\n  episodes: {concurrent: 4, session_idle_s: 30}\n");
        cleanup(manifest_freep) struct manifest *empty =
                parse_ok("app: a.b:c\nopenenvd:\n  episodes: {}\n");

        cr_expect_eq(one->concurrent, 1);
        cr_expect_eq(four->concurrent, 4);
        cr_expect_eq(empty->concurrent, 1);
        /* An HTTP MCP session's idle bound: the relay's idle timeout unless set. */
        cr_expect_eq(one->session_idle_s, 600);
        cr_expect_eq(four->session_idle_s, 30);
}

Test(manifest, top_level_app_and_port_feed_openenvd)
{
        cleanup(manifest_freep) struct manifest *a = parse_ok("app: a.b:c\nport: 9000\n");
        cleanup(manifest_freep) struct manifest *b =
                parse_ok("app: a.b:c\nport: 9000\nopenenvd: {app: x:y, port: 7000}\n");

        cr_expect_eq(a->port, 9000);
        cr_expect_str_eq(find(a, "env")->argv[5], "9000");
        cr_expect_eq(find(a, "env")->port, 9000);
        /* openenvd.* wins over the top level. */
        cr_expect_str_eq(b->app, "x:y");
        cr_expect_eq(b->port, 7000);
        cr_expect_str_eq(find(b, "env")->argv[1], "x:y");
        cr_expect_str_eq(find(b, "env")->argv[5], "7000");
}

Test(manifest, partial_blocks_merge_field_by_field)
{
        /* The prototype lost relays-only and the other limits this way. */
        cleanup(manifest_freep) struct manifest *m = parse_ok("app: s:a\n"
                                                              "openenvd:\n"
                                                              "  zones:\n"
                                                              "    agent:\n"
                                                              "      network: {}\n"
                                                              "      resources: {cpu: 2}\n"
                                                              "    services:\n"
                                                              "      resources: {pids: 100}\n"
                                                              "      runtime: {}\n");
        const struct manifest_zone *ag = manifest_zone(m, MANIFEST_ZONE_AGENT);
        const struct manifest_zone *sv = manifest_zone(m, MANIFEST_ZONE_SERVICES);

        cr_expect_eq(ag->egress, MANIFEST_EGRESS_RELAYS_ONLY);
        cr_expect_eq(ag->resources.memory_mb, 1024);
        cr_expect_eq(ag->resources.pids, 512);
        cr_expect_eq(ag->resources.cpu, 2.0);
        cr_expect_eq(ag->resources.disk_mb, 256);
        cr_expect_eq(sv->resources.memory_mb, 512);
        cr_expect_eq(sv->resources.pids, 100);
        cr_expect_eq(sv->oci, MANIFEST_OCI_NATIVE);
        /* A zone mapping without containers still gets the env server. */
        cr_expect_eq(ag->n_containers, 1);
        cr_expect_str_eq(ag->containers[0].name, "env");
}

Test(manifest, effective_resources_are_narrowed_by_the_zone)
{
        cleanup(manifest_freep) struct manifest *m =
                parse_ok("app: s:a\n"
                         "openenvd:\n"
                         "  zones:\n"
                         "    agent:\n"
                         "      resources: {memory_mb: 1000, cpu: 1.5}\n"
                         "      containers:\n"
                         "        env: {resources: {memory_mb: 600}}\n"
                         "        harness: {argv: [h], resources: {cpu: 0.5, pids: 10},\n"
                         "                  network: {egress: none}}\n");
        const struct manifest_container *env = find(m, "env"), *h = find(m, "harness");

        cr_expect_eq(env->resources.memory_mb, 600);
        cr_expect_eq(env->resources.pids, 0);
        cr_expect_eq(env->effective.memory_mb, 600);
        cr_expect_eq(env->effective.pids, 512);
        cr_expect_eq(env->effective.cpu, 1.5);
        cr_expect_eq(env->effective.disk_mb, 256);
        cr_expect_eq(h->effective.memory_mb, 1000);
        cr_expect_eq(h->effective.cpu, 0.5);
        cr_expect_eq(h->effective.pids, 10);
        cr_expect_eq(h->egress, MANIFEST_EGRESS_NONE);
        cr_expect_eq(env->egress, MANIFEST_EGRESS_RELAYS_ONLY);
        cr_expect_str_eq(h->argv[0], "h");
        cr_expect_null(h->argv[1]);
}

Test(manifest, narrowing_violations_are_errors)
{
        cleanup_free char *out = parse_errors("app: s:a\n"
                                              "openenvd:\n"
                                              "  zones:\n"
                                              "    services:\n"
                                              "      resources: {memory_mb: 100}\n"
                                              "      containers:\n"
                                              "        s1: {argv: [x], resources: {memory_mb: "
                                              "200}, network: {egress: relays-only}}\n");

        cr_expect_str_eq(out,
                         "t.yaml:7:48: zones.services.containers.s1.resources.memory_mb: memory_mb "
                         "200 exceeds the zone ceiling 100\n"
                         "t.yaml:7:72: zones.services.containers.s1.network.egress: egress "
                         "'relays-only' is wider than the zone's 'none'\n");
}

Test(manifest, env_argv_and_order_preserving_env)
{
        cleanup(manifest_freep) struct manifest *m =
                parse_ok("openenvd:\n"
                         "  zones:\n"
                         "    agent:\n"
                         "      containers:\n"
                         "        env:\n"
                         "          argv: [python3, -m, server, 8080]\n"
                         "          env: {ZED: 1, ALPHA: 'two words', EMPTY: ''}\n");
        const struct manifest_container *env = find(m, "env");

        cr_expect_null(m->app);
        cr_expect_str_eq(env->argv[3], "8080");
        cr_expect_str_eq(env->env[0], "ZED=1");
        cr_expect_str_eq(env->env[1], "ALPHA=two words");
        cr_expect_str_eq(env->env[2], "EMPTY=");
        cr_expect_null(env->env[3]);
}

Test(manifest, workdir_per_container_with_zone_defaults)
{
        cleanup(manifest_freep) struct manifest *m =
                parse_ok("app: a:b\n"
                         "openenvd:\n"
                         "  zones:\n"
                         "    agent:\n"
                         "      containers:\n"
                         "        env: {workdir: /app/env}\n"
                         "        harness: {argv: [/bin/h]}\n"
                         "        helper: {argv: [/bin/h], workdir: /srv}\n"
                         "    services: {containers: {sim: {argv: [/bin/s]}}}\n"
                         "    observers: {containers: {j: {argv: [/bin/j], phases: [grading]}}}\n");

        cr_expect_str_eq(find(m, "env")->workdir, "/app/env");
        cr_expect_str_eq(find(m, "harness")->workdir, "/workspace");
        cr_expect_str_eq(find(m, "helper")->workdir, "/srv");
        cr_expect_str_eq(find(m, "sim")->workdir, "/");
        cr_expect_str_eq(find(m, "j")->workdir, "/");
}

/* Parses yaml with the command openenvd was given after `--`. */
static struct manifest *parse_with_command(const char *yaml, char *const *cmd)
{
        cleanup_manifest_errors struct manifest_errors e = { 0 };
        const struct manifest_overrides o = { .env_argv = cmd };
        struct manifest *m = NULL;
        struct strbuf sb = STRBUF_INIT;
        int r;

        manifest_errors_init(&e, "t.yaml");
        r = manifest_parse_with(yaml, strlen(yaml), "/base", 0, &o, &e, &m);
        manifest_errors_format(&e, &sb);
        cr_assert_eq(r, 0, "expected valid, got %d:\n%s", r, sb.buf);
        strbuf_release(&sb);
        return m;
}

Test(manifest, command_line_is_the_env_command)
{
        char *cmd[] = { "sh", "-c", "cd /app/env && uvicorn server.app:app --port 8000", NULL };
        char *none[] = { NULL };
        cleanup_free char *text = NULL;
        size_t len;

        /* An OpenEnv manifest without app: invalid alone, valid with a
         * command, which becomes the env's argv. */
        cr_assert_eq(read_full_file_at(AT_FDCWD, MANIFESTS_DIR "/invalid/openenv-no-app.yaml",
                                       1 << 20, &text, &len),
                     0);
        {
                cleanup(manifest_freep) struct manifest *m = parse_with_command(text, cmd);
                const struct manifest_container *env = find(m, "env");
                cr_expect_eq(strv_length(env->argv), 3);
                cr_expect_str_eq(env->argv[2], cmd[2]);
                cr_expect_eq(env->argv_source, MANIFEST_ARGV_COMMAND_LINE);
                cr_expect_eq(env->port, 8000);
                cr_expect_null(m->app);
        }
        /* It wins over the app and over the manifest's own argv (as a
         * `docker run IMAGE CMD` wins over the image's CMD). */
        {
                cleanup(manifest_freep) struct manifest *m = parse_with_command(
                        "app: a:b\nopenenvd: {zones: {agent: {containers: {env: {argv: [x]}}}}}\n",
                        cmd);
                cr_expect_str_eq(find(m, "env")->argv[0], "sh");
                cr_expect_eq(find(m, "env")->argv_source, MANIFEST_ARGV_COMMAND_LINE);
        }
        /* An empty command (ENTRYPOINT ["openenvd", "--"] without a CMD)
         * leaves the manifest's. */
        {
                cleanup(manifest_freep) struct manifest *m = parse_with_command("app: a:b\n", none);
                cr_expect_str_eq(find(m, "env")->argv[0], "uvicorn");
                cr_expect_eq(find(m, "env")->argv_source, MANIFEST_ARGV_APP);
        }
        /* No manifest at all (an image without openenv.yaml): all defaults. */
        {
                cleanup(manifest_freep) struct manifest *m = parse_with_command("", cmd);
                cr_expect_eq(m->port, 8000);
                cr_expect_str_eq(find(m, "env")->argv[0], "sh");
        }
        /* Other containers are not touched; the app's argv is spelled once. */
        {
                cleanup_strv char **a = manifest_app_argv("m:app", "127.0.0.1", 9000);
                cleanup_free char *line = NULL;
                struct manifest_container c = { .argv = a };
                line = manifest_container_command_line(&c);
                cr_expect_str_eq(line, "uvicorn m:app --host 127.0.0.1 --port 9000");
        }
}

Test(manifest, paths_resolve_against_base_dir)
{
        cleanup(manifest_freep) struct manifest *m = parse_ok("app: s:a\n"
                                                              "openenvd:\n"
                                                              "  workspace_seed: ./seed//sub/\n"
                                                              "  privileged_assets:\n"
                                                              "    oracle: assets/oracle.json\n"
                                                              "    abs: /srv/answers\n");

        cr_expect_str_eq(m->base_dir, "/base");
        cr_expect_str_eq(m->workspace_seed, "/base/seed/sub");
        cr_expect_str_eq(manifest_find_asset(m, "oracle")->path, "/base/assets/oracle.json");
        cr_expect_str_eq(manifest_find_asset(m, "abs")->path, "/srv/answers");
        cr_expect_null(manifest_find_asset(m, "nope"));
}

Test(manifest, load_resolves_against_the_manifest_directory)
{
        cleanup_manifest_errors struct manifest_errors e = { 0 };
        cleanup(manifest_freep) struct manifest *m = NULL;
        cleanup_free char *dir = NULL, *want = NULL;
        int r;

        manifest_errors_init(&e, "openenv.yaml");
        r = manifest_load(EXAMPLE, &e, &m);
        cr_assert_eq(r, 0, "example invalid (%d): %zu errors, first: %s", r, e.n,
                     e.n ? e.items[0].message : "");
        dir = realpath(TEST_SRCDIR "/../examples/echo", NULL);
        cr_assert_not_null(dir);
        want = xasprintf("%s/assets/oracle.json", dir);
        cr_expect_str_eq(manifest_find_asset(m, "oracle")->path, want);
        free(want);
        want = xasprintf("%s/seed", dir);
        cr_expect_str_eq(m->workspace_seed, want);
}

Test(manifest, example_is_a_full_unit)
{
        cleanup_manifest_errors struct manifest_errors e = { 0 };
        cleanup(manifest_freep) struct manifest *m = NULL;
        const struct manifest_container *const *order;
        const struct manifest_container *sim, *verdict;

        manifest_errors_init(&e, "openenv.yaml");
        cr_assert_eq(manifest_load(EXAMPLE, &e, &m), 0);
        find(m, "env");
        find(m, "harness");
        sim = find(m, "sim");
        verdict = find(m, "verdict");
        cr_expect_eq(sim->zone, MANIFEST_ZONE_SERVICES);
        cr_expect_str_eq(sim->state, "/var/lib/sim");
        cr_expect_str_eq(sim->expose.host, "sim.local");
        cr_expect_eq(sim->expose.port, 80);
        cr_expect_eq(sim->port, 8080);
        cr_expect_eq(verdict->n_reads, 3);
        cr_expect_eq(verdict->reads[0].kind, MANIFEST_READ_ASSET);
        cr_expect_str_eq(verdict->reads[0].target, "oracle");
        cr_expect_eq(verdict->reads[1].kind, MANIFEST_READ_OUTPUT);
        cr_expect_str_eq(verdict->reads[1].target, "runner");
        cr_expect_eq(verdict->reads[2].kind, MANIFEST_READ_SERVICE_STATE);
        cr_expect_str_eq(verdict->reads[2].target, "sim");
        cr_expect(manifest_container_reads(verdict, MANIFEST_READ_ASSET));
        cr_expect_not(manifest_container_reads(verdict, MANIFEST_READ_WORKSPACE));
        cr_expect_eq(verdict->phases, PHASE_BIT(PHASE_GRADING));
        cr_assert_eq(manifest_observer_order(m, &order), 2);
        cr_expect_str_eq(order[0]->name, "runner");
        cr_expect_str_eq(order[1]->name, "verdict");
        cr_expect_eq(find(m, "env")->effective.memory_mb, 768);
        cr_expect_eq(find(m, "env")->effective.cpu, 1.5);
}

Test(manifest, observer_order_is_topological)
{
        /* Declared in reverse; c -> b -> a by `after`, d independent. */
        cleanup(manifest_freep) struct manifest *m = parse_ok(
                "app: s:a\n"
                "openenvd:\n"
                "  zones:\n"
                "    observers:\n"
                "      containers:\n"
                "        a: {argv: [x], phases: [grading], after: [b, d]}\n"
                "        b: {argv: [x], phases: [grading], after: c}\n"
                "        c: {argv: [x], phases: [grading], output: /out/r.json}\n"
                "        d: {argv: [x], phases: [grading]}\n"
                "        e: {argv: [x], phases: [grading], reads: [c.output], after: a}\n");
        const struct manifest_container *const *order;

        cr_assert_eq(manifest_observer_order(m, &order), 5);
        cr_expect_str_eq(order[0]->name, "c");
        cr_expect_str_eq(order[1]->name, "b");
        cr_expect_str_eq(order[2]->name, "d");
        cr_expect_str_eq(order[3]->name, "a");
        cr_expect_str_eq(order[4]->name, "e");
        cr_expect_eq(strv_length(find(m, "a")->after), 2);
}

Test(manifest, model_budget_fields_default_to_unlimited_one_by_one)
{
        cleanup(manifest_freep) struct manifest *m =
                parse_ok("app: s:a\nopenenvd:\n  model: {budget: {tokens: 200000, requests: 0}}\n");
        json_t *j = manifest_to_json(m);
        char *s = json_dumps(json_object_get(j, "model"), JSON_COMPACT);

        cr_expect_eq(m->model.budget.tokens, 200000);
        cr_expect_eq(m->model.budget.requests, 0);
        cr_expect_eq(m->model.budget.bytes, 0);
        cr_expect_str_eq(s, "{\"budget\":{\"requests\":null,\"bytes\":null,\"tokens\":200000}}");
        free(s);
        json_decref(j);

        manifest_free(m);
        m = parse_ok("app: s:a\nopenenvd:\n  model:\n");
        cr_expect_eq(m->model.budget.tokens, 0);
}

Test(manifest, json_renders_the_defaulted_contract)
{
        cleanup(manifest_freep) struct manifest *m =
                parse_ok("app: s:a\n"
                         "openenvd:\n"
                         "  privileged_assets: {oracle: o.json}\n"
                         "  zones:\n"
                         "    services:\n"
                         "      containers:\n"
                         "        sim: {argv: [x], port: 8080, expose: {host: sim.local, port: 80},"
                         " state: /var/lib/sim}\n"
                         "    observers:\n"
                         "      containers:\n"
                         "        v: {argv: [x], phases: [grading], reads: [assets.oracle, "
                         "services.sim.state]}\n");
        json_t *j = manifest_to_json(m);
        char *s = json_dumps(j, JSON_COMPACT);
        json_error_t err;
        json_t *back = json_loads(s, 0, &err);
        json_t *env, *v, *sim;

        cr_assert_not_null(back, "%s", err.text);
        cr_expect_str_eq(json_string_value(json_object_get(back, "app")), "s:a");
        cr_expect_eq(json_integer_value(json_object_get(back, "port")), 8000);
        cr_expect_str_eq(json_string_value(json_object_get(
                                 json_object_get(back, "privileged_assets"), "oracle")),
                         "/base/o.json");
        env = json_object_get(
                json_object_get(json_object_get(json_object_get(back, "zones"), "agent"),
                                "containers"),
                "env");
        cr_assert_not_null(env);
        cr_expect_str_eq(json_string_value(json_array_get(json_object_get(env, "argv"), 0)),
                         "uvicorn");
        cr_expect_str_eq(json_string_value(json_object_get(env, "argv_source")), "app");
        cr_expect(json_is_null(json_object_get(env, "workdir")), "the env's workdir is openenvd's");
        cr_expect_eq(json_integer_value(json_object_get(json_object_get(env, "effective_resources"),
                                                        "memory_mb")),
                     1024);
        cr_expect(json_is_null(json_object_get(json_object_get(env, "resources"), "memory_mb")));
        cr_expect_str_eq(
                json_string_value(json_object_get(json_object_get(env, "network"), "egress")),
                "relays-only");
        sim = json_object_get(
                json_object_get(json_object_get(json_object_get(back, "zones"), "services"),
                                "containers"),
                "sim");
        cr_expect_str_eq(json_string_value(json_object_get(json_object_get(sim, "expose"), "host")),
                         "sim.local");
        cr_expect_str_eq(json_string_value(json_object_get(
                                 json_object_get(json_object_get(back, "zones"), "services"),
                                 "during_grading")),
                         "frozen");
        v = json_object_get(
                json_object_get(json_object_get(json_object_get(back, "zones"), "observers"),
                                "containers"),
                "v");
        cr_expect_str_eq(json_string_value(json_object_get(
                                 json_array_get(json_object_get(v, "reads"), 1), "kind")),
                         "service_state");
        cr_expect_str_eq(json_string_value(json_array_get(json_object_get(v, "phases"), 0)),
                         "grading");
        cr_expect_str_eq(
                json_string_value(json_array_get(json_object_get(back, "observer_order"), 0)), "v");
        json_decref(back);
        free(s);
        json_decref(j);
}

Test(manifest, all_errors_in_one_run_sorted_by_position)
{
        cleanup_free char *out =
                parse_errors("openenvd:\n"
                             "  zones:\n"
                             "    observers:\n"
                             "      containers:\n"
                             "        g: {argv: [x], phases: [grading], reads: [assets.oracel]}\n"
                             "  port: 0\n"
                             "  bogus: 1\n");

        cr_expect_str_eq(
                out,
                "t.yaml:1:1: zones.agent.containers.env: the env container has no argv and the "
                "manifest sets no app (set the top-level app:, openenvd.app or an argv, or give "
                "the "
                "server's command: openenvd -- CMD...)\n"
                "t.yaml:5:51: zones.observers.containers.g.reads[0]: unknown asset 'oracel'\n"
                "t.yaml:6:9: port: expected an integer in 1..65535, got '0'\n"
                "t.yaml:7:3: openenvd: unknown key 'bogus' (allowed: app, port, kill_deadline_s, "
                "workspace_seed, privileged_assets, zones, model, standby, agent_paths, "
                "enforcement, verdict_policy, template, episodes)\n");
}

Test(manifest, enforcement_require_names_rfc009_guarantees)
{
        struct manifest *m = parse_ok("app: s:a\nopenenvd:\n  enforcement:\n    require: "
                                      "[asset_isolation, egress_control, privilege_drop, "
                                      "control_plane_isolation]\n");

        cr_assert_eq(strv_length(m->require), 4);
        cr_expect_str_eq(m->require[3], "control_plane_isolation");
        manifest_free(m);
        m = parse_ok("app: s:a\n");
        cr_expect_null(m->require, "nothing required unless listed");
        manifest_free(m);
}

Test(manifest, verdict_policy_defaults_unit_keys_and_container_overrides)
{
        struct manifest *m = parse_ok("app: s:a\n");
        const struct manifest_container *env = manifest_find_container(m, "env");
        cleanup_free char *js = NULL;
        const char *env_exit = NULL;
        json_t *j;

        /* RL's defaults: a failed program is recorded, a dead container voids. */
        cr_expect_eq(m->verdict_policy.on[MANIFEST_VERDICT_EVENT_OOM_KILL],
                     MANIFEST_VERDICT_RECORD);
        cr_expect_eq(m->verdict_policy.on[MANIFEST_VERDICT_EVENT_PIDS_LIMIT],
                     MANIFEST_VERDICT_RECORD);
        cr_expect_eq(m->verdict_policy.on[MANIFEST_VERDICT_EVENT_DETACHED],
                     MANIFEST_VERDICT_RECORD);
        cr_expect_eq(m->verdict_policy.on[MANIFEST_VERDICT_EVENT_DISK_FULL],
                     MANIFEST_VERDICT_RECORD);
        cr_expect_eq(m->verdict_policy.on[MANIFEST_VERDICT_EVENT_EXIT], MANIFEST_VERDICT_VOID);
        cr_expect_eq(memcmp(&env->verdict_policy, &m->verdict_policy, sizeof(m->verdict_policy)),
                     0);
        manifest_free(m);

        /* The unit's keys over the defaults, a container's over the unit's,
         * field by field. */
        m = parse_ok("app: s:a\nopenenvd:\n  verdict_policy: {oom_kill: void}\n  zones:\n"
                     "    agent:\n      containers:\n        env: {verdict_policy: {exit: "
                     "record}}\n        harness: {argv: [h]}\n");
        env = manifest_find_container(m, "env");
        cr_expect_eq(m->verdict_policy.on[MANIFEST_VERDICT_EVENT_OOM_KILL], MANIFEST_VERDICT_VOID);
        cr_expect_eq(m->verdict_policy.on[MANIFEST_VERDICT_EVENT_EXIT], MANIFEST_VERDICT_VOID);
        cr_expect_eq(env->verdict_policy.on[MANIFEST_VERDICT_EVENT_OOM_KILL],
                     MANIFEST_VERDICT_VOID);
        cr_expect_eq(env->verdict_policy.on[MANIFEST_VERDICT_EVENT_EXIT], MANIFEST_VERDICT_RECORD);
        cr_expect_eq(manifest_find_container(m, "harness")
                             ->verdict_policy.on[MANIFEST_VERDICT_EVENT_EXIT],
                     MANIFEST_VERDICT_VOID);
        j = manifest_to_json(m);
        js = json_dumps(json_object_get(j, "verdict_policy"), JSON_SORT_KEYS | JSON_COMPACT);
        cr_expect_str_eq(js, "{\"detached\":\"record\",\"disk_full\":\"record\",\"exit\":"
                             "\"void\",\"oom_kill\":\"void\",\"pids_limit\":\"record\"}");
        cr_assert_eq(json_unpack(j, "{s:{s:{s:{s:{s:{s:s}}}}}}", "zones", "agent", "containers",
                                 "env", "verdict_policy", "exit", &env_exit),
                     0);
        cr_expect_str_eq(env_exit, "record");
        json_decref(j);
        manifest_free(m);
}

Test(manifest, error_count_is_bounded)
{
        struct strbuf y = STRBUF_INIT;
        cleanup_manifest_errors struct manifest_errors e = { 0 };
        struct manifest *m = NULL;

        strbuf_adds(&y, "app: s:a\nopenenvd:\n");
        for (int i = 0; i < 1000; i++)
                strbuf_addf(&y, "  k%d: 1\n", i);
        manifest_errors_init(&e, "t.yaml");
        cr_expect_eq(manifest_parse(y.buf, y.len, "/base", 0, &e, &m), -EINVAL);
        cr_expect_eq(e.n, MANIFEST_MAX_ERRORS);
        cr_expect(e.truncated);
        strbuf_release(&y);
}

static int write_temp(const char *data, size_t len, char *path)
{
        cleanup_close int fd = mkostemp(path, O_CLOEXEC);

        if (fd < 0)
                return -errno;
        return write_all(fd, data, len);
}

Test(manifest, huge_file_is_invalid_not_a_crash)
{
        char path[] = "/tmp/test-manifest-huge-XXXXXX";
        size_t len = MANIFEST_MAX_BYTES + 1;
        cleanup_free char *big = xmalloc(len);
        cleanup_manifest_errors struct manifest_errors e = { 0 };
        struct manifest *m = NULL;
        struct strbuf sb = STRBUF_INIT;
        cleanup_free char *want = NULL;
        int r;

        /* A comment line repeated: valid YAML, just too large. */
        memset(big, '#', len);
        for (size_t i = 79; i < len; i += 80)
                big[i] = '\n';
        cr_assert_eq(write_temp(big, len, path), 0);
        manifest_errors_init(&e, "huge.yaml");
        r = manifest_load(path, &e, &m);
        unlink(path);
        cr_assert_eq(r, -EINVAL);
        manifest_errors_format(&e, &sb);
        want = xasprintf("huge.yaml:1:1: file is %zu bytes, larger than the limit of %d bytes\n",
                         len, MANIFEST_MAX_BYTES);
        cr_expect_str_eq(sb.buf, want);
        strbuf_release(&sb);
}

Test(manifest, unreadable_is_not_invalid)
{
        cleanup_manifest_errors struct manifest_errors e = { 0 };
        struct manifest *m = NULL;

        manifest_errors_init(&e, NULL);
        cr_expect_eq(manifest_load("/nonexistent/openenv.yaml", &e, &m), -ENOENT);
        cr_expect_eq(manifest_load(TEST_SRCDIR, &e, &m), -EISDIR);
        cr_expect_eq(manifest_load("/dev/null", &e, &m), -EBADFD);
        cr_expect_eq(e.n, 0);
}

static bool has_suffix(const char *s, const char *suffix)
{
        return endswith(s, suffix);
}

static int cmp_str(const void *a, const void *b)
{
        return strcmp(*(char *const *) a, *(char *const *) b);
}

static char **list_dir(const char *dir, const char *suffix)
{
        char **v = xcalloc(1, sizeof(char *));
        DIR *d = opendir(dir);
        struct dirent *de;

        cr_assert_not_null(d, "%s: %s", dir, strerror(errno));
        while ((de = readdir(d)))
                if (de->d_name[0] != '.' && has_suffix(de->d_name, suffix))
                        strv_push(&v, xstrdup(de->d_name));
        closedir(d);
        qsort(v, strv_length(v), sizeof(char *), cmp_str);
        return v;
}

Test(manifest, valid_manifests_validate)
{
        cleanup_strv char **files = list_dir(MANIFESTS_DIR "/valid", ".yaml");

        cr_assert_geq(strv_length(files), 5);
        for (char **f = files; *f; f++) {
                cleanup_manifest_errors struct manifest_errors e = { 0 };
                cleanup(manifest_freep) struct manifest *m = NULL;
                cleanup_free char *path = xasprintf("%s/valid/%s", MANIFESTS_DIR, *f);
                struct strbuf sb = STRBUF_INIT;
                int r;

                manifest_errors_init(&e, *f);
                r = manifest_load(path, &e, &m);
                manifest_errors_format(&e, &sb);
                cr_expect_eq(r, 0, "%s: %d\n%s", *f, r, sb.buf);
                strbuf_release(&sb);
        }
}

Test(manifest, invalid_manifests_report_exact_errors)
{
        cleanup_strv char **files = list_dir(MANIFESTS_DIR "/invalid", ".yaml");
        bool update = getenv("MANIFEST_UPDATE_EXPECTED") != NULL;

        cr_assert_geq(strv_length(files), 30);
        for (char **f = files; *f; f++) {
                cleanup_manifest_errors struct manifest_errors e = { 0 };
                cleanup(manifest_freep) struct manifest *m = NULL;
                cleanup_free char *path = xasprintf("%s/invalid/%s", MANIFESTS_DIR, *f);
                cleanup_free char *expected_path = NULL, *expected = NULL;
                struct strbuf sb = STRBUF_INIT;
                size_t len;
                int r;

                expected_path = xasprintf("%.*s.expected", (int) (strlen(path) - 5), path);
                manifest_errors_init(&e, *f);
                r = manifest_load(path, &e, &m);
                cr_expect_eq(r, -EINVAL, "%s: expected invalid, got %d", *f, r);
                manifest_errors_format(&e, &sb);
                if (update) {
                        cleanup_close int fd =
                                open(expected_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
                        cr_assert_geq(fd, 0);
                        cr_assert_eq(write_all(fd, sb.buf, sb.len), 0);
                }
                r = read_full_file_at(AT_FDCWD, expected_path, 1 << 20, &expected, &len);
                cr_expect_eq(r, 0, "%s: %s", expected_path, strerror(-r));
                if (r == 0)
                        cr_expect_str_eq(sb.buf, expected, "%s: got:\n%s\nexpected:\n%s", *f,
                                         sb.buf, expected);
                cr_expect_gt(sb.len, 0, "%s: no error text", *f);
                strbuf_release(&sb);
        }
}
