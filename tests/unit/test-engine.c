/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The episode engine in-process, without root: a real unit (unit.h) over
 * real episodes, members, relays, grading and teardown on a real event loop,
 * with the fake backend (fake-backend.h: no process, storage as plain
 * directories) and a fake cgroup tree in a temp dir (as test-cgroup-fake.c).
 * Each test drives the unit as the daemon does and checks its phase, the
 * history /info shows, the episode's state and the verdict.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fd-util.h"
#include "base/limits.h"
#include "base/log.h"
#include "base/util.h"
#include "cgroup/cgroup.h"
#include "fake-backend.h"
#include "manifest/manifest.h"
#include "test-helpers.h"
#include "unit/unit-internal.h"
#include "unit/unit-plan.h"
#include "unit/unit.h"

/* Declared out of order on purpose: `after` puts first before second. */
static const char unit_yaml[] =
        "app: server.app:app\n"
        "port: 8000\n"
        "openenvd:\n"
        "  kill_deadline_s: 1\n"
        "  zones:\n"
        "    agent:\n"
        "      containers:\n"
        "        env: {}\n"
        "        harness: {argv: [/bin/true]}\n"
        "    services:\n"
        "      containers:\n"
        "        sim: {argv: [/bin/true], port: 8080}\n"
        "    observers:\n"
        "      containers:\n"
        "        second: {argv: [/bin/true], phases: [grading], after: first}\n"
        "        first: {argv: [/bin/true], phases: [grading]}\n"
        "        peek: {argv: [/bin/true], phases: [frozen]}\n";

static char tmp[64];
static struct loop *loop;
static struct fake_backend fb;
static struct cgroup_tree *cg;
static struct manifest *man;
static struct unit *u;
static char *state_dir;
/* The last completion each kind of call got (unit_done_fn); 1: none yet. */
static int reset_result = 1, end_result = 1, inspect_result = 1;

static void put(const char *dir, const char *file, const char *content)
{
        cleanup_free char *p = xasprintf("%s/%s", dir, file);
        cleanup_close int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        cr_assert_geq(fd, 0, "%s: %m", p);
        cr_assert_eq(write_all(fd, content, strlen(content)), 0);
}

/* What mkdir on cgroup2 makes (what the engine reads and writes of it);
 * "frozen 1" so that an inspection's freeze is seen at once. */
static void mk_cgroup(const char *rel)
{
        cleanup_free char *d = xasprintf("%s/cg/own/%s", tmp, rel);
        cr_assert_eq(mkdir_p_at(AT_FDCWD, d, 0755), 0);
        put(d, "cgroup.controllers", "cpu memory pids");
        put(d, "cgroup.subtree_control", "");
        put(d, "cgroup.procs", "");
        put(d, "cgroup.events", "populated 0\nfrozen 1\n");
        put(d, "cgroup.freeze", "0");
        put(d, "cgroup.kill", "");
        put(d, "cpu.stat", "usage_usec 0\nuser_usec 0\nsystem_usec 0\n");
        put(d, "cpu.max", "max 100000");
        put(d, "memory.max", "max");
        put(d, "memory.swap.max", "max");
        put(d, "memory.current", "0");
        put(d, "memory.events", "low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\n");
        put(d, "pids.max", "max");
        put(d, "pids.current", "0");
        put(d, "pids.events", "max 0\n");
}

static void fake_cgroups(unsigned n_slots)
{
        mk_cgroup("");
        mk_cgroup("sub");
        mk_cgroup("sub/zones");
        for (int z = 0; z < MANIFEST_ZONE_MAX; z++) {
                cleanup_free char *zone = xasprintf("sub/%s", unit_zone_cgroup(z));
                mk_cgroup(zone);
                for (unsigned s = 0; s < n_slots; s++) {
                        cleanup_free char *slot = xasprintf("%s/s%u", zone, s);
                        mk_cgroup(slot);
                        for (size_t k = 0; k < man->zones[z].n_containers; k++) {
                                cleanup_free char *leaf =
                                        xasprintf("%s/%s", slot, man->zones[z].containers[k].name);
                                mk_cgroup(leaf);
                        }
                }
        }
}

static void boot(const char *yaml, unsigned standby)
{
        struct manifest_errors errs;
        cleanup_free char *mount = xasprintf("%s/cg", tmp);
        struct cgroup_layout l = { .v2_mount = mount,
                                   .self_cgroup = "0::/own\n",
                                   .subtree_name = "sub" };

        manifest_errors_init(&errs, "test.yaml");
        cr_assert_eq(manifest_parse(yaml, strlen(yaml), "/srv/unit", 0, &errs, &man), 0);
        manifest_errors_done(&errs);
        fake_cgroups(unit_slot_count(man->concurrent, standby));
        cr_assert_eq(cgroup_tree_open(&l, &cg), 0);
        state_dir = xasprintf("%s/state", tmp);
        cr_assert_eq(mkdir(state_dir, 0755), 0);
        /* What the daemon makes in its state dir before any unit runs. */
        static const char *const sub[] = { "private", "episodes", "assets" };
        for (size_t i = 0; i < ELEMENTSOF(sub); i++) {
                cleanup_free char *d = xasprintf("%s/%s", state_dir, sub[i]);
                cr_assert_eq(mkdir(d, 0755), 0);
        }
        struct unit_config cfg = {
                .manifest = man,
                .state_dir = state_dir,
                .cgroups = cg,
                .loop = loop,
                .shim_path = "/nonexistent/openenvd-shim",
                .rootfs = "/",
                .start_timeout = 2 * USEC_PER_SEC,
                .observer_timeout = 2 * USEC_PER_SEC,
                .standby = standby,
                .concurrent = man->concurrent,
                .uid_base = 1u << 24,
                .uid_slot_size = 1u << 20,
                .backend = &fb.backend,
        };
        static const struct unit_ops no_ops = {};
        cr_assert_eq(unit_new(&cfg, &no_ops, NULL, &u), 0);
}

static void setup(void)
{
        /* As the daemon (a release to a shim that is gone is EPIPE). */
        (void) signal(SIGPIPE, SIG_IGN);
        /* tmpfs when there is one: the fake cgroup tree is hundreds of
         * files, which ext4 creates ten times slower. */
        snprintf(tmp, sizeof(tmp), "/dev/shm/engine-XXXXXX");
        if (!mkdtemp(tmp)) {
                snprintf(tmp, sizeof(tmp), "/tmp/engine-XXXXXX");
                cr_assert_not_null(mkdtemp(tmp));
        }
        log_set_level(LOG_CRIT); /* the engine's warnings are expected here */
        cr_assert_eq(loop_new(&loop), 0);
        fake_backend_init(&fb, loop);
}

static void teardown(void)
{
        u = unit_free(u);
        fake_backend_done(&fb);
        cg = cgroup_tree_free(cg);
        manifest_free(man);
        loop = loop_free(loop);
        free(state_dir);
        (void) rm_rf_at(AT_FDCWD, tmp);
}

TestSuite(engine, .init = setup, .fini = teardown, .timeout = 20);

/* --- driving ----------------------------------------------------------------------- */

/* Runs the loop until cond holds; fails after 3 s (each case needs a few ms). */
#define RUN_UNTIL(cond)                                                                \
        do {                                                                           \
                usec_t end_ = now_usec(CLOCK_MONOTONIC) + 3 * USEC_PER_SEC;            \
                while (!(cond)) {                                                      \
                        cr_assert_lt(now_usec(CLOCK_MONOTONIC), end_,                  \
                                     "waiting for: %s (phase "                         \
                                     "%s: %s)",                                        \
                                     #cond, phase_to_string(unit_phase(u)),            \
                                     u->lanes[0].live ? verdict_field("reason") : ""); \
                        (void) loop_run_once(loop, 10 * USEC_PER_MSEC);                \
                }                                                                      \
        } while (0)

/* A few rounds of the loop with nothing expected: deferred work settles. */
static void settle(void)
{
        for (int i = 0; i < 20; i++)
                (void) loop_run_once(loop, USEC_PER_MSEC);
}

static void on_reset(void *userdata, int result)
{
        (void) userdata;
        reset_result = result;
}

static void on_end(void *userdata, int result)
{
        (void) userdata;
        end_result = result;
}

static void on_inspect(void *userdata, int result)
{
        (void) userdata;
        inspect_result = result;
}

static enum episode_state live_state(void)
{
        cr_assert_not_null(u->lanes[0].live);
        return episode_state(u->lanes[0].live);
}

/* Closed or failed, the unit tears the episode down at once. */
static bool torn_down(void)
{
        return live_state() == EPISODE_TEARDOWN || live_state() == EPISODE_GONE;
}

static const char *verdict_field(const char *key)
{
        json_t *v = unit_verdict(u, NULL);
        static char buf[512];
        json_t *f = json_object_get(v, key);
        if (json_is_object(f))
                f = json_object_get(f, "subtree");
        snprintf(buf, sizeof(buf), "%s", json_is_string(f) ? json_string_value(f) : "");
        json_decref(v);
        return buf;
}

static json_t *event_of(const char *what, const char *container);
static const char *field(json_t *j, const char *key);

/* The unit's phase history (/info's), as "from>to:actor" words. */
static char *history(void)
{
        json_t *info = unit_info(u), *rec;
        struct strbuf sb = STRBUF_INIT;
        size_t i;

        json_array_foreach(json_object_get(info, "history"), i, rec) strbuf_addf(
                &sb, "%s%s>%s:%s", i ? " " : "", json_string_value(json_object_get(rec, "from")),
                json_string_value(json_object_get(rec, "to")),
                json_string_value(json_object_get(rec, "actor")));
        json_decref(info);
        return strbuf_detach(&sb, NULL);
}

static void act(void)
{
        unit_note_actions(
                u, 0, &(struct openenv_action){ .n = 1, .via = "step", .data = "{}", .len = 2 });
}

/* Boots with the first episode and waits until it is ready. */
static void ready(void)
{
        boot(unit_yaml, false);
        cr_assert_eq(unit_start(u, true), 0);
        RUN_UNTIL(unit_phase(u) == PHASE_READY);
}

/* An observer's run: its verdict.json, then it exits 0. */
static void observer_passes(const char *name, const char *verdict)
{
        struct fake_member *fm;
        RUN_UNTIL((fm = fake_find(&fb, name)) != NULL);
        cleanup_free char *out = xasprintf("%s/episodes/%s/observers/%s/out", state_dir,
                                           episode_id(u->lanes[0].live), name);
        put(out, "verdict.json", verdict);
        fake_exit(fm, 0);
}

static void end_and_grade(void)
{
        char refusal[128];
        cr_assert_eq(
                unit_end(u, 0, ACTOR_ORCHESTRATOR, "done", on_end, NULL, refusal, sizeof(refusal)),
                1);
        RUN_UNTIL(fake_find(&fb, "first") != NULL);
        /* The graders run in the grading state, and the unit says so. */
        cr_expect_eq(live_state(), EPISODE_GRADING);
        cr_expect_eq(unit_phase(u), PHASE_GRADING);
        observer_passes("first", "{\"score\": 1}");
        observer_passes("second", "{\"score\": 2}");
        RUN_UNTIL(end_result != 1);
        cr_expect_eq(end_result, 0);
        cr_expect_eq(unit_phase(u), PHASE_CLOSED);
}

/* --- provisioning ------------------------------------------------------------------- */

Test(engine, provisioning_succeeds_to_ready)
{
        ready();
        cr_expect_eq(live_state(), EPISODE_READY);
        /* Services and the env while provisioning, then the harness once live. */
        cr_expect_lt(fake_last(&fb, "env")->seq, fake_last(&fb, "sim")->seq);
        cr_expect_lt(fake_last(&fb, "sim")->seq, fake_last(&fb, "harness")->seq);
        cr_expect_eq(fake_starts(&fb, "first"), 0, "no grading observer before grading");
        cr_expect(unit_ready(u, NULL));
        cleanup_free char *h = history();
        cr_expect(strstr(h, "provisioning>ready:system"), "history: %s", h);
}

Test(engine, member_exit_while_provisioning_fails)
{
        struct fake_member *env;

        fb.manual_ready = true;
        boot(unit_yaml, false);
        cr_assert_eq(unit_start(u, true), 0);
        RUN_UNTIL((env = fake_find(&fb, "env")) != NULL);
        fake_output(env, "Traceback (most recent call last):\nModuleNotFoundError: No module\n");
        settle();
        fake_exit(env, 1);
        RUN_UNTIL(unit_phase(u) == PHASE_FAILED);
        cr_expect(torn_down(), "a failed episode is torn down at once");
        cr_expect_str_eq(verdict_field("verdict"), "infrastructure_error");
        cr_expect(strstr(verdict_field("reason"), "env exited with status 1 while starting: "
                                                  "ModuleNotFoundError: No module"),
                  "reason: %s", verdict_field("reason"));
        cr_expect_str_eq(verdict_field("blame"), "zones/agent/env");
        cr_expect_eq(fake_starts(&fb, "harness"), 0, "never live");
        cr_expect(!unit_ready(u, NULL));
}

Test(engine, member_not_ready_in_time_fails)
{
        fb.manual_ready = true;
        boot(unit_yaml, false);
        u->ecfg.start_timeout = 300 * USEC_PER_MSEC;
        cr_assert_eq(unit_start(u, true), 0);
        RUN_UNTIL(fake_find(&fb, "sim") != NULL);
        fake_ready(fake_find(&fb, "env")); /* sim never says it listens */
        RUN_UNTIL(unit_phase(u) == PHASE_FAILED);
        cr_expect_str_eq(verdict_field("blame"), "zones/services/sim");
        cr_expect(strstr(verdict_field("reason"), "sim did not listen"), "%s",
                  verdict_field("reason"));
}

/* --- an episode's life ------------------------------------------------------------------ */

Test(engine, action_done_sealed_graded_closed)
{
        char refusal[128];

        ready();
        act();
        cr_expect_eq(unit_phase(u), PHASE_RUNNING);
        cr_expect_eq(live_state(), EPISODE_RUNNING);
        cr_assert_eq(
                unit_end(u, 0, ACTOR_ORCHESTRATOR, "done", on_end, NULL, refusal, sizeof(refusal)),
                1);
        /* The agent zone goes first: killed before any grader starts. */
        RUN_UNTIL(fake_find(&fb, "first") != NULL);
        cr_expect(fake_last(&fb, "harness")->exited && fake_last(&fb, "env")->exited);
        cr_expect_eq(live_state(), EPISODE_GRADING);
        cr_expect_eq(unit_phase(u), PHASE_GRADING);
        observer_passes("first", "{\"score\": 1}");
        observer_passes("second", "{\"score\": 2}");
        RUN_UNTIL(end_result != 1);
        cr_expect_eq(end_result, 0);
        cr_expect_eq(unit_phase(u), PHASE_CLOSED);
        cr_expect(torn_down(), "closed, then torn down");
        cr_expect_str_eq(verdict_field("verdict"), "graded");
        json_t *v = unit_verdict(u, NULL);
        cr_expect_eq(json_integer_value(json_object_get(
                             json_object_get(json_object_get(v, "observers"), "second"), "score")),
                     2);
        cr_expect_eq(json_integer_value(json_object_get(v, "actions")), 1);
        json_decref(v);
        cleanup_free char *h = history();
        cr_expect(strstr(h, "ready>running:system running>sealed:orchestrator "
                            "sealed>grading:system grading>closed:system"),
                  "history: %s", h);
}

/* --- member deaths ------------------------------------------------------------------ */

/* The env exits on its own: the agent's fault, and the system seals. */
static void env_dies(void)
{
        fake_exit(fake_find(&fb, "env"), 3);
        RUN_UNTIL(unit_phase(u) == PHASE_CLOSED);
        cr_expect_str_eq(verdict_field("verdict"), "agent_misbehavior");
        cr_expect_str_eq(verdict_field("blame"), "zones/agent/env");
        cr_expect(strstr(verdict_field("reason"), "env exited with status 3"), "%s",
                  verdict_field("reason"));
        cr_expect_eq(fake_starts(&fb, "first"), 0, "a broken episode is not graded");
        cr_expect(fake_last(&fb, "sim")->exited, "torn down: its services too");
}

Test(engine, env_death_in_ready)
{
        ready();
        env_dies();
        cleanup_free char *h = history();
        cr_expect(strstr(h, "ready>sealed:system sealed>closed:system"), "history: %s", h);
}

Test(engine, env_death_in_running)
{
        ready();
        act();
        env_dies();
        cleanup_free char *h = history();
        cr_expect(strstr(h, "running>sealed:system sealed>closed:system"), "history: %s", h);
}

static void inspect_done(void)
{
        char refusal[128];
        cr_assert_eq(unit_inspect(u, 0, on_inspect, NULL, refusal, sizeof(refusal)), 1, "%s",
                     refusal);
        observer_passes("peek", "{\"seen\": true}");
        RUN_UNTIL(inspect_result != 1);
        cr_assert_eq(inspect_result, 0);
        cr_assert_eq(live_state(), EPISODE_FROZEN);
        cr_assert_eq(unit_phase(u), PHASE_FROZEN);
}

Test(engine, env_death_in_frozen)
{
        ready();
        act();
        inspect_done();
        env_dies();
        cleanup_free char *h = history();
        cr_expect(strstr(h, "frozen>sealed:system sealed>closed:system"), "history: %s", h);
}

Test(engine, service_death_is_infrastructure_error)
{
        ready();
        act();
        fake_exit(fake_find(&fb, "sim"), 1);
        RUN_UNTIL(unit_phase(u) == PHASE_CLOSED);
        cr_expect_str_eq(verdict_field("verdict"), "infrastructure_error");
        cr_expect_str_eq(verdict_field("blame"), "zones/services/sim");
}

Test(engine, harness_exit_zero_is_no_failure)
{
        ready();
        act();
        fake_exit(fake_find(&fb, "harness"), 0);
        settle();
        cr_expect_eq(unit_phase(u), PHASE_RUNNING);
        end_and_grade();
        cr_expect_str_eq(verdict_field("verdict"), "graded");
}

/* --- observers ---------------------------------------------------------------------- */

Test(engine, observers_run_in_after_order_one_at_a_time)
{
        char refusal[128];

        ready();
        act();
        cr_assert_eq(
                unit_end(u, 0, ACTOR_ORCHESTRATOR, "done", on_end, NULL, refusal, sizeof(refusal)),
                1);
        RUN_UNTIL(fake_find(&fb, "first") != NULL);
        settle();
        cr_expect_eq(fake_starts(&fb, "second"), 0, "second starts only after first");
        observer_passes("first", "{\"score\": 1}");
        RUN_UNTIL(fake_find(&fb, "second") != NULL);
        cr_expect(fake_last(&fb, "first")->freed, "first reaped before second starts");
        observer_passes("second", "{\"score\": 2}");
        RUN_UNTIL(end_result != 1);
        json_t *v = unit_verdict(u, NULL);
        json_t *obs = json_object_get(v, "observers");
        cr_expect_not_null(json_object_get(obs, "first"));
        cr_expect_not_null(json_object_get(obs, "second"));
        cr_expect(json_is_true(json_object_get(v, "graders_ran")));
        json_decref(v);
}

Test(engine, observer_timeout_is_blamed_on_it)
{
        char refusal[128];

        ready();
        u->ecfg.observer_timeout = 50 * USEC_PER_MSEC;
        act();
        cr_assert_eq(
                unit_end(u, 0, ACTOR_ORCHESTRATOR, "done", on_end, NULL, refusal, sizeof(refusal)),
                1);
        RUN_UNTIL(end_result != 1); /* first never exits */
        cr_expect_eq(unit_phase(u), PHASE_CLOSED);
        cr_expect_str_eq(verdict_field("verdict"), "infrastructure_error");
        cr_expect_str_eq(verdict_field("blame"), "zones/observers/first");
        cr_expect(strstr(verdict_field("reason"), "observer first timed out"), "%s",
                  verdict_field("reason"));
        cr_expect_eq(fake_last(&fb, "first")->last_signal, SIGKILL);
        cr_expect_eq(fake_starts(&fb, "second"), 0, "the first failure ends grading");
}

Test(engine, observer_failure_is_blamed_on_it)
{
        char refusal[128];

        ready();
        act();
        cr_assert_eq(
                unit_end(u, 0, ACTOR_ORCHESTRATOR, "done", on_end, NULL, refusal, sizeof(refusal)),
                1);
        RUN_UNTIL(fake_find(&fb, "first") != NULL);
        fake_exit(fake_find(&fb, "first"), 2);
        RUN_UNTIL(end_result != 1);
        cr_expect_str_eq(verdict_field("verdict"), "infrastructure_error");
        cr_expect_str_eq(verdict_field("blame"), "zones/observers/first");
        cr_expect(strstr(verdict_field("reason"), "observer first exited with status 2"), "%s",
                  verdict_field("reason"));
}

/* --- standby ------------------------------------------------------------------------ */

static void standby_ready(void)
{
        RUN_UNTIL(unit_next_standby(u) && episode_state(unit_next_standby(u)) == EPISODE_STANDBY);
}

Test(engine, standby_goes_live_and_the_next_is_built_after)
{
        char refusal[128];

        boot(unit_yaml, true);
        cr_assert_eq(unit_start(u, false), 0);
        standby_ready();
        cr_expect_eq(fake_starts(&fb, "harness"), 0, "a standby is never exposed");
        struct episode *sb = unit_next_standby(u);
        cr_assert_eq(unit_reset(u, 0, "reset", on_reset, NULL, refusal, sizeof(refusal)), 0,
                     "a standby goes live at once");
        cr_expect_eq(u->lanes[0].live, sb);
        cr_expect_eq(unit_phase(u), PHASE_READY);
        cr_expect_eq(fake_starts(&fb, "harness"), 1);
        /* The next standby: after the live one, in the other slot. */
        standby_ready();
        cr_expect_neq(episode_slot(unit_next_standby(u)), episode_slot(u->lanes[0].live));
        cr_expect_eq(fake_starts(&fb, "env"), 2);
        cr_expect_eq(fake_starts(&fb, "harness"), 1);
}

static unsigned pool_ready(void)
{
        unsigned n = 0;
        for (size_t i = 0; i < u->n_pool; i++)
                n += episode_state(u->pool[i]) == EPISODE_STANDBY;
        return n;
}

/* No two episodes alive hold one slot (cgroup leaves, uid range). */
static void expect_own_slots(void)
{
        bool held[UNIT_SLOTS_MAX] = { false };
        struct episode *all[UNIT_SLOTS_MAX + 8];
        size_t n = 0;

        for (unsigned i = 0; i < unit_lanes(u); i++)
                if (u->lanes[i].live)
                        all[n++] = u->lanes[i].live;
        for (size_t i = 0; i < u->n_pool; i++)
                all[n++] = u->pool[i];
        for (size_t i = 0; i < u->n_retiring; i++)
                if (episode_state(u->retiring[i]) != EPISODE_GONE)
                        all[n++] = u->retiring[i];
        for (size_t i = 0; i < n; i++) {
                unsigned s = episode_slot(all[i]);
                cr_assert_lt(s, unit_slots(u));
                cr_expect_not(held[s], "slot %u held twice", s);
                held[s] = true;
        }
}

/* standby: 2 keeps two ready: two resets back to back both go live at once
 * (a tight loop's resets no longer wait for the one standby's start), and
 * the pool refills, every episode in a slot of its own. */
Test(engine, a_standby_pool_serves_back_to_back_resets_and_refills)
{
        char refusal[128];

        boot(unit_yaml, 2);
        u->standby_yield = 0;
        cr_assert_eq(unit_slots(u), 4u, "the live one, two standbys, one retiring");
        cr_assert_eq(unit_start(u, false), 0);
        RUN_UNTIL(pool_ready() == 2);
        expect_own_slots();
        cr_expect_eq(fake_starts(&fb, "env"), 2);
        cr_expect_eq(fake_starts(&fb, "harness"), 0, "a standby is never exposed");
        for (int i = 0; i < 2; i++) {
                struct episode *next = unit_next_standby(u);
                cr_assert_eq(unit_reset(u, 0, "reset", on_reset, NULL, refusal, sizeof(refusal)), 0,
                             "reset %d: a ready standby goes live at once", i);
                cr_expect_eq(u->lanes[0].live, next);
                expect_own_slots();
        }
        cr_expect_eq(u->stats.reset_seconds[UNIT_RESET_STANDBY].count, 2u);
        RUN_UNTIL(pool_ready() == 2);
        expect_own_slots();
        cr_expect_eq(fake_starts(&fb, "env"), 4);
        cr_expect_eq(fake_starts(&fb, "harness"), 2, "only the two made live");

        cleanup(json_decrefp) json_t *eps = unit_episodes(u);
        cr_expect_eq(json_array_size(json_object_get(eps, "standby_pool")), 2u);
        cleanup(json_decrefp) json_t *info = unit_info(u);
        json_t *sb = json_object_get(info, "standby");
        cr_expect_eq(json_integer_value(json_object_get(sb, "target")), 2);
        cr_expect_eq(json_integer_value(json_object_get(sb, "ready")), 2);
}

/* One standby of the pool that loses a member is discarded alone: the
 * other stays ready and goes live, and the pool refills after the backoff. */
Test(engine, a_failed_standby_of_the_pool_takes_none_of_the_others_with_it)
{
        char refusal[128];

        boot(unit_yaml, 2);
        u->standby_yield = 0;
        cr_assert_eq(unit_start(u, false), 0);
        RUN_UNTIL(pool_ready() == 2);
        struct episode *first = u->pool[0];
        fake_exit(fake_last(&fb, "env"), 1);
        RUN_UNTIL(u->stats.standby_failures == 1);
        cr_expect_eq(unit_next_standby(u), first);
        cr_expect_eq(episode_state(first), EPISODE_STANDBY);
        cr_assert_eq(unit_reset(u, 0, "reset", on_reset, NULL, refusal, sizeof(refusal)), 0);
        cr_expect_eq(u->lanes[0].live, first);
        RUN_UNTIL(pool_ready() == 2);
        expect_own_slots();
}

/* --- lanes: episodes at once --------------------------------------------------- */

static const char lanes_yaml[] = "app: server.app:app\n"
                                 "port: 8000\n"
                                 "openenvd:\n"
                                 "  kill_deadline_s: 1\n"
                                 "  episodes: {concurrent: 2}\n"
                                 "  zones:\n"
                                 "    agent:\n"
                                 "      containers:\n"
                                 "        env: {}\n";
static int lane_result[3] = { 1, 1, 1 };

static void on_lane_episode(void *userdata, int result)
{
        lane_result[(intptr_t) userdata] = result;
}

/* The container name of the episode e (its slot's uid range). */
static struct fake_member *member_of(const struct episode *e, const char *name)
{
        return fake_in_uids(&fb, name, u->cfg.uid_base + episode_slot(e) * u->cfg.uid_slot_size,
                            u->cfg.uid_slot_size);
}

static struct episode *lane_live(unsigned lane)
{
        return u->lanes[lane].live;
}

/* Two sessions, two lanes: each its own episode in its own slot, its own
 * actions and verdict; one's end, and its env server's death, leave the
 * other as it was; a third session finds no lane. */
Test(engine, two_lanes_run_two_episodes_apart)
{
        const char *yaml = lanes_yaml;
        char refusal[128];

        boot(yaml, 1);
        u->standby_yield = 0;
        cr_assert_eq(unit_lanes(u), 2u);
        cr_assert_eq(unit_slots(u), 4u, "two lanes, one standby, one retiring");
        cr_assert_eq(unit_start(u, false), 0);
        standby_ready();
        cr_assert_eq(unit_lane_acquire(u), 0);
        cr_assert_eq(unit_lane_acquire(u), 1);
        cr_expect_eq(unit_lane_acquire(u), -EBUSY, "a third session finds every lane held");
        cr_expect_eq(unit_lanes_held(u), 2u);
        for (intptr_t i = 0; i < 2; i++) {
                int r = unit_request_episode(u, (unsigned) i, on_lane_episode, (void *) i);
                cr_assert_geq(r, 0);
                if (r == 0)
                        lane_result[i] = 0;
        }
        RUN_UNTIL(lane_result[0] == 0 && lane_result[1] == 0);
        cr_assert(unit_env_traffic_allowed(u, 0) && unit_env_traffic_allowed(u, 1));
        struct episode *a = lane_live(0), *b = lane_live(1);
        cr_assert(a && b && a != b);
        cr_expect_neq(episode_slot(a), episode_slot(b));
        expect_own_slots();
        cr_expect_eq(unit_lane_of(u, episode_id(b)), 1);

        unit_note_actions(u, 1,
                          &(struct openenv_action){ .n = 3, .via = "ws", .data = "{}", .len = 2 });
        cr_expect_eq(episode_actions(a), 0u, "lane 1's actions are not lane 0's");
        cr_expect_eq(episode_actions(b), 3u);

        /* Lane 0's env server dies: its episode seals, lane 1's runs on. */
        fake_exit(member_of(a, "env"), 137);
        RUN_UNTIL(u->lanes[0].phase.current == PHASE_CLOSED);
        cr_expect_eq(u->lanes[1].phase.current, PHASE_RUNNING);
        cr_expect_eq(episode_state(b), EPISODE_RUNNING);
        cr_expect_not(member_of(b, "env")->exited, "the sibling's env server lives");
        cr_expect_eq(member_of(b, "env")->kills, 0u, "and was not signalled");

        /* Lane 1 ends: graded with its own actions, by its own id. */
        cr_assert_eq(
                unit_end(u, 1, ACTOR_ORCHESTRATOR, "end", on_end, NULL, refusal, sizeof(refusal)),
                1);
        RUN_UNTIL(u->lanes[1].phase.current == PHASE_CLOSED);
        cleanup(json_decrefp) json_t *va = unit_verdict(u, episode_id(a));
        cleanup(json_decrefp) json_t *vb = unit_verdict(u, episode_id(b));
        cr_expect_str_eq(json_string_value(json_object_get(va, "verdict")), "infrastructure_error");
        cr_expect_str_eq(json_string_value(json_object_get(vb, "verdict")), "graded");
        cr_expect_eq(json_integer_value(json_object_get(vb, "actions")), 3);
        cr_expect_eq(json_integer_value(json_object_get(va, "actions")), 0);

        cleanup(json_decrefp) json_t *eps = unit_episodes(u);
        cr_expect_eq(json_array_size(json_object_get(eps, "live_episodes")), 2u);
        cr_expect_eq(json_integer_value(json_object_get(eps, "concurrent")), 2);
}

/* A session that goes ends the episode it was shown (graded, kept among the
 * recent ones) and frees its lane for the next session. */
Test(engine, a_released_lane_ends_its_episode_and_serves_the_next_session)
{
        const char *yaml = lanes_yaml;

        boot(yaml, 1);
        u->standby_yield = 0;
        cr_assert_eq(unit_start(u, false), 0);
        standby_ready();
        int lane = unit_lane_acquire(u);
        cr_assert_geq(lane, 0);
        lane_result[0] = 1;
        if (unit_request_episode(u, (unsigned) lane, on_lane_episode, (void *) 0) == 0)
                lane_result[0] = 0;
        RUN_UNTIL(lane_result[0] == 0);
        struct episode *e = lane_live((unsigned) lane);
        cleanup_free char *id = xstrdup(episode_id(e));
        unit_note_actions(u, (unsigned) lane,
                          &(struct openenv_action){ .n = 1, .via = "ws", .data = "{}", .len = 2 });
        unit_lane_release(u, (unsigned) lane);
        cr_expect_eq(unit_lanes_held(u), 0u);
        RUN_UNTIL(u->lanes[lane].phase.current == PHASE_CLOSED);
        cleanup(json_decrefp) json_t *v = unit_verdict(u, id);
        cr_assert_not_null(v);
        cr_expect_str_eq(json_string_value(json_object_get(v, "verdict")), "graded");
        cr_expect_eq(json_integer_value(json_object_get(v, "actions")), 1);
        cr_expect_eq(u->stats.episodes[VERDICT_GRADED][UNIT_END_ORCHESTRATOR], 1u);

        /* The next session: a lane, and a fresh episode on its reset. */
        cr_assert_geq(unit_lane_acquire(u), 0);
        cr_expect_eq(unit_lanes_held(u), 1u);
}

/* A lane's reset takes the pool's episode while the pool holds it back
 * (another lane's first exchange): a lane's episode is held by nothing, it
 * goes on at once. (Held, it waited for a bound meant for the pool, or for
 * ever behind another lane's provisioning: bench/README.md.) */
Test(engine, a_lane_takes_a_held_standby_and_it_goes_on)
{
        boot(lanes_yaml, 1);
        u->standby_yield = 0;
        cr_assert_eq(unit_start(u, false), 0);
        standby_ready();
        u->standby_yield = 60 * USEC_PER_SEC;
        lane_result[0] = lane_result[1] = 1;
        cr_assert_eq(unit_lane_acquire(u), 0);
        cr_assert_eq(unit_request_episode(u, 0, on_lane_episode, (void *) 0), 0);
        settle();
        struct episode *held = unit_next_standby(u);
        cr_assert(held && episode_state(held) == EPISODE_PROVISIONING);
        cr_expect_eq(fake_starts(&fb, "env"), 1, "the pool waits for lane 0's first exchange");
        cr_assert_eq(unit_lane_acquire(u), 1);
        cr_assert_eq(unit_request_episode(u, 1, on_lane_episode, (void *) 1), 1);
        cr_expect_eq(lane_live(1), held);
        RUN_UNTIL(lane_result[1] == 0);
        cr_expect_eq(episode_state(held), EPISODE_READY);
}

/* The client's reset that made the standby live is relayed next: the next
 * standby starts nothing for standby_yield after that, then is built. */
Test(engine, the_next_standby_waits_for_the_new_live_episodes_first_exchange)
{
        char refusal[128];

        boot(unit_yaml, true);
        cr_assert_eq(unit_start(u, false), 0);
        standby_ready();
        u->standby_yield = 60 * USEC_PER_SEC;
        cr_assert_eq(unit_reset(u, 0, "reset", on_reset, NULL, refusal, sizeof(refusal)), 0);
        settle();
        cr_expect(unit_next_standby(u) &&
                  episode_state(unit_next_standby(u)) == EPISODE_PROVISIONING);
        cr_expect_eq(fake_starts(&fb, "env"), 1, "no container of the next standby yet");
        u->standby_yield = 0;
        episode_provision_resume(unit_next_standby(u));
        standby_ready();
        cr_expect_eq(fake_starts(&fb, "env"), 2);
}

/* After the live episode went live, a standby starts nothing until its
 * first action (the exchange that made it live is relayed first) or
 * standby_yield, whichever comes first. While the live episode still
 * provisions (a reset took a standby not yet ready), a cold standby starts
 * beside it (only a template's copy waits: no template here). */
Test(engine,
     the_next_standby_waits_until_the_live_one_acts_and_starts_cold_beside_a_provisioning_one)
{
        char refusal[128];

        fb.manual_ready = true;
        boot(unit_yaml, true);
        u->standby_yield = 60 * USEC_PER_SEC;
        cr_assert_eq(unit_start(u, false), 0);
        RUN_UNTIL(fake_find(&fb, "sim") && fake_find(&fb, "env"));
        fake_ready(fake_find(&fb, "env"));
        fake_ready(fake_find(&fb, "sim"));
        standby_ready();
        cr_assert_geq(unit_reset(u, 0, "reset", on_reset, NULL, refusal, sizeof(refusal)), 0);
        RUN_UNTIL(unit_next_standby(u) != NULL);
        settle();
        cr_expect_eq(fake_starts(&fb, "env"), 1, "nothing of the next standby before an action");
        act();
        RUN_UNTIL(fake_starts(&fb, "env") == 2);
        RUN_UNTIL(fake_starts(&fb, "sim") == 2);
        struct fake_member *env2 = fake_find(&fb, "env"), *sim2 = fake_find(&fb, "sim");
        cr_assert(env2 && sim2);

        /* Reset while that standby provisions: it goes live, still
         * provisioning, and the one after it starts (cold) beside it. */
        cr_assert_geq(unit_reset(u, 0, "reset", on_reset, NULL, refusal, sizeof(refusal)), 0);
        cr_expect_eq(unit_phase(u), PHASE_PROVISIONING);
        RUN_UNTIL(fake_starts(&fb, "env") == 3);
        cr_expect_eq(unit_phase(u), PHASE_PROVISIONING);
        fake_ready(env2);
        fake_ready(sim2);
        RUN_UNTIL(unit_phase(u) == PHASE_READY);
}

Test(engine, standby_member_exit_discards_it)
{
        boot(unit_yaml, true);
        cr_assert_eq(unit_start(u, false), 0);
        standby_ready();
        struct episode *sb = unit_next_standby(u);
        struct fake_member *env = fake_find(&fb, "env");
        fake_exit(fake_find(&fb, "sim"), 1);
        RUN_UNTIL(unit_next_standby(u) != sb); /* sb may be freed from here on */
        RUN_UNTIL(env->freed);
        cr_expect_eq(env->last_signal, SIGKILL, "the rest of it killed");
        json_t *info = unit_info(u);
        const char *why = json_string_value(
                json_object_get(json_object_get(info, "standby"), "last_failure"));
        cr_expect(why && strstr(why, "sim exited (status 1) before use: discarded"), "%s", why);
        json_decref(info);
}

/* --- reset, end, inspect ---------------------------------------------------------------- */

/* A reset from where the unit is: a new episode, ready; the old one gone. */
static void reset_to_ready(void)
{
        char refusal[128];
        struct episode *old = u->lanes[0].live;
        const char *old_id = old ? episode_id(old) : NULL;
        cleanup_free char *id = old_id ? xstrdup(old_id) : NULL;

        reset_result = 1;
        int r = unit_reset(u, 0, "reset", on_reset, NULL, refusal, sizeof(refusal));
        cr_assert_geq(r, 0, "%s", refusal);
        RUN_UNTIL(unit_phase(u) == PHASE_READY && (r == 0 || reset_result != 1));
        cr_expect_eq(live_state(), EPISODE_READY);
        cr_expect(!id || !streq(episode_id(u->lanes[0].live), id), "a new episode");
}

Test(engine, reset_from_every_phase)
{
        char refusal[128];

        ready();
        reset_to_ready(); /* from ready */
        act();
        reset_to_ready(); /* from running */
        act();
        inspect_done();
        reset_to_ready(); /* from frozen */
        act();
        end_and_grade();
        cr_assert_eq(unit_phase(u), PHASE_CLOSED);
        reset_to_ready(); /* from closed */
        fb.fail_start = "sim";
        cr_assert_eq(unit_reset(u, 0, "reset", on_reset, NULL, refusal, sizeof(refusal)), 1);
        RUN_UNTIL(unit_phase(u) == PHASE_FAILED);
        cr_expect(strstr(verdict_field("reason"), "sim did not start: execve"), "%s",
                  verdict_field("reason"));
        fb.fail_start = NULL;
        reset_to_ready(); /* from failed */
        settle();
        /* Every earlier episode's members are gone; only the live one's run,
         * and its observers made ahead wait at their gates. */
        size_t running = 0, gated = 0;
        for (size_t i = 0; i < fb.n_members; i++) {
                running += !fb.members[i]->freed && fake_principal_started(fb.members[i]);
                gated += !fb.members[i]->freed && !fake_principal_started(fb.members[i]);
        }
        cr_expect_eq(running, 3, "env, sim and harness of the live episode only");
        cr_expect_eq(gated, 3, "first, second and peek of the live episode only");
        cr_expect_eq(u->n_retiring, 0, "retired episodes freed");
}

Test(engine, reset_during_sealing_and_grading)
{
        char refusal[128];

        ready();
        act();
        cr_assert_eq(
                unit_end(u, 0, ACTOR_ORCHESTRATOR, "done", on_end, NULL, refusal, sizeof(refusal)),
                1);
        struct fake_member *first;
        RUN_UNTIL((first = fake_find(&fb, "first")) != NULL);
        reset_to_ready();
        cr_expect_eq(end_result, -ECANCELED, "the grading was superseded");
        cr_expect(first->freed);
}

Test(engine, end_during_provisioning_is_refused)
{
        char refusal[128] = "";

        fb.manual_ready = true;
        boot(unit_yaml, false);
        cr_assert_eq(unit_start(u, true), 0);
        RUN_UNTIL(fake_find(&fb, "sim") != NULL);
        cr_expect_eq(
                unit_end(u, 0, ACTOR_ORCHESTRATOR, "done", on_end, NULL, refusal, sizeof(refusal)),
                -EPERM);
        cr_expect(strstr(refusal, "provisioning"), "%s", refusal);
        cr_expect_eq(unit_phase(u), PHASE_PROVISIONING);
        fake_ready(fake_find(&fb, "env"));
        fake_ready(fake_find(&fb, "sim"));
        RUN_UNTIL(unit_phase(u) == PHASE_READY);
}

Test(engine, inspect_then_resume)
{
        char refusal[128];

        ready();
        cr_expect_eq(unit_inspect(u, 0, on_inspect, NULL, refusal, sizeof(refusal)), -EPERM,
                     "no inspection before an action");
        act();
        inspect_done();
        json_t *ins = unit_inspection(u, 0);
        cr_expect(json_is_true(json_object_get(json_object_get(ins, "peek"), "seen")));
        json_decref(ins);
        cr_expect(fake_last(&fb, "peek")->freed, "the frozen observer is reaped");
        cr_assert_eq(unit_resume(u, 0, refusal, sizeof(refusal)), 0, "%s", refusal);
        cr_expect_eq(unit_phase(u), PHASE_RUNNING);
        cr_expect_eq(live_state(), EPISODE_RUNNING);
        cr_expect_eq(unit_resume(u, 0, refusal, sizeof(refusal)), -EPERM);
        end_and_grade();
        cr_expect_str_eq(verdict_field("verdict"), "graded");
        cleanup_free char *h = history();
        cr_expect(strstr(h, "running>frozen:orchestrator frozen>running:orchestrator "
                            "running>sealed:orchestrator"),
                  "history: %s", h);
}

Test(engine, standby_built_only_after_the_live_one_is_ready)
{
        fb.manual_ready = true;
        boot(unit_yaml, true);
        cr_assert_eq(unit_start(u, true), 0);
        RUN_UNTIL(fake_find(&fb, "sim") != NULL);
        settle();
        cr_expect_null(unit_next_standby(u), "the live episode first");
        cr_expect_eq(fake_starts(&fb, "env"), 1);
        fake_ready(fake_find(&fb, "env"));
        fake_ready(fake_find(&fb, "sim"));
        RUN_UNTIL(unit_phase(u) == PHASE_READY);
        RUN_UNTIL(unit_next_standby(u) != NULL);
        cr_expect_neq(episode_slot(unit_next_standby(u)), episode_slot(u->lanes[0].live));
}

Test(engine, environment_done_ends_the_episode)
{
        ready();
        act();
        unit_note_done(u, 0);
        cr_expect_eq(unit_phase(u), PHASE_RUNNING, "after this dispatch round");
        RUN_UNTIL(fake_find(&fb, "first") != NULL);
        observer_passes("first", "{}");
        observer_passes("second", "{}");
        RUN_UNTIL(unit_phase(u) == PHASE_CLOSED);
        cleanup_free char *h = history();
        cr_expect(strstr(h, "running>sealed:environment"), "history: %s", h);
        cr_expect_str_eq(verdict_field("verdict"), "graded");
}

Test(engine, harness_failure_is_recorded_not_sealed)
{
        ready();
        act();
        fake_exit(fake_find(&fb, "harness"), 7);
        settle();
        cr_expect_eq(unit_phase(u), PHASE_RUNNING, "the episode goes on");
        cr_expect_str_eq(verdict_field("verdict"), "agent_misbehavior");
        cr_expect_str_eq(verdict_field("blame"), "zones/agent/harness");
        json_t *ev = event_of("exited", "harness");
        cr_expect(ev && streq(field(ev, "policy"), "void"), "exit: void by default");
        json_decref(ev);
}

/* --- the verdict policy (docs/GRADING.md) ------------------------------------------- */

/* yaml with `old` replaced by `new` (once; it must be there). */
static char *yaml_with(const char *yaml, const char *old, const char *new)
{
        const char *at = strstr(yaml, old);
        cr_assert_not_null(at, "%s", old);
        return xasprintf("%.*s%s%s", (int) (at - yaml), yaml, new, at + strlen(old));
}

/* The unit's yaml with openenvd.verdict_policy: policy. */
static char *with_policy(const char *yaml, const char *policy)
{
        cleanup_free char *p = xasprintf("openenvd:\n  verdict_policy: %s\n", policy);
        return yaml_with(yaml, "openenvd:\n", p);
}

static void ready_with(const char *yaml)
{
        boot(yaml, false);
        cr_assert_eq(unit_start(u, true), 0);
        RUN_UNTIL(unit_phase(u) == PHASE_READY);
}

/* Writes what the kernel would in a live member's leaf (the fake tree). */
static void leaf_put(const char *name, const char *file, const char *content)
{
        json_t *info = unit_info(u);
        const char *rel = NULL;
        cr_assert_eq(json_unpack(info, "{s:{s:{s:s}}}", "members", name, "cgroup", &rel), 0);
        cleanup_free char *d = xasprintf("%s/cg/own/sub/%s", tmp, rel);
        put(d, file, content);
        json_decref(info);
}

/* A process of name's OOM-killed at its own limit (memory.events: max
 * reached, one kill); the container itself goes on. */
static void oom_kill_in(const char *name)
{
        leaf_put(name, "memory.events", "low 0\nhigh 0\nmax 4\noom 1\noom_kill 1\n");
}

/* The verdict's first event of kind what in container (a new reference),
 * with its time; NULL when there is none. */
static json_t *event_of(const char *what, const char *container)
{
        json_t *v = unit_verdict(u, NULL), *ev, *found = NULL;
        size_t i;

        json_array_foreach(json_object_get(v, "events"), i, ev)
        {
                if (!found && streq(json_string_value(json_object_get(ev, "what")) ?: "", what) &&
                    streq(json_string_value(json_object_get(ev, "container")) ?: "", container))
                        found = json_incref(ev);
        }
        json_decref(v);
        if (found)
                cr_expect(json_real_value(json_object_get(found, "at")) > 0, "an event has a time");
        return found;
}

static const char *field(json_t *j, const char *key)
{
        return json_string_value(json_object_get(j, key)) ?: "";
}

static const char *verdict_cause(void)
{
        json_t *v = unit_verdict(u, NULL);
        static char buf[64];
        snprintf(buf, sizeof(buf), "%s", field(json_object_get(v, "blame"), "cause"));
        json_decref(v);
        return buf;
}

/* The OOM-then-fix episode: the env server's child program is
 * OOM-killed (the server survives and answers), the agent's fixed program
 * succeeds: graded, the OOM kill listed with its container and time. */
Test(engine, oom_then_fix_is_graded_with_the_oom_kill_listed)
{
        ready();
        act();
        oom_kill_in("env");
        act();
        end_and_grade();
        cr_expect_str_eq(verdict_field("verdict"), "graded");
        json_t *ev = event_of("oom_kill", "env");
        cr_assert_not_null(ev, "the OOM kill is listed");
        cr_expect_str_eq(field(ev, "policy"), "record");
        cr_expect_str_eq(field(ev, "cause"), "memory_limit");
        cr_expect_str_eq(field(ev, "subtree"), "zones/agent/env");
        cr_expect_eq(json_integer_value(json_object_get(ev, "count")), 1);
        json_decref(ev);
}

Test(engine, oom_kill_voids_grading_when_the_policy_says_void)
{
        cleanup_free char *yaml = with_policy(unit_yaml, "{oom_kill: void}");
        char refusal[128];

        ready_with(yaml);
        act();
        oom_kill_in("env");
        cr_assert_eq(
                unit_end(u, 0, ACTOR_ORCHESTRATOR, "done", on_end, NULL, refusal, sizeof(refusal)),
                1);
        RUN_UNTIL(end_result != 1);
        cr_expect_str_eq(verdict_field("verdict"), "agent_misbehavior");
        cr_expect_str_eq(verdict_field("blame"), "zones/agent/env");
        cr_expect_str_eq(verdict_cause(), "memory_limit");
        cr_expect(strstr(verdict_field("reason"), "env exhausted its memory"), "%s",
                  verdict_field("reason"));
        cr_expect_eq(fake_starts(&fb, "first"), 0, "void: no grader runs");
        json_t *ev = event_of("oom_kill", "env");
        cr_expect(ev && streq(field(ev, "policy"), "void"), "listed either way");
        json_decref(ev);
}

/* A container's own keys over the unit's: the harness voids on a refused
 * fork, the env (the unit's default) records one. */
Test(engine, a_containers_policy_overrides_the_units)
{
        cleanup_free char *yaml =
                yaml_with(unit_yaml, "harness: {argv: [/bin/true]}",
                          "harness: {argv: [/bin/true], verdict_policy: {pids_limit: void}}");
        char refusal[128];

        ready_with(yaml);
        act();
        leaf_put("env", "pids.events", "max 2\n");
        end_and_grade();
        cr_expect_str_eq(verdict_field("verdict"), "graded", "the env's refused forks: recorded");
        json_t *ev = event_of("pids_limit", "env");
        cr_expect(ev && streq(field(ev, "policy"), "record") &&
                          json_integer_value(json_object_get(ev, "count")) == 2,
                  "listed");
        json_decref(ev);
        teardown();
        setup();
        end_result = 1;

        ready_with(yaml);
        act();
        leaf_put("harness", "pids.events", "max 1\n");
        cr_assert_eq(
                unit_end(u, 0, ACTOR_ORCHESTRATOR, "done", on_end, NULL, refusal, sizeof(refusal)),
                1);
        RUN_UNTIL(end_result != 1);
        cr_expect_str_eq(verdict_field("verdict"), "agent_misbehavior");
        cr_expect_str_eq(verdict_field("blame"), "zones/agent/harness");
        cr_expect_str_eq(verdict_cause(), "pids_limit");
        cr_expect_eq(fake_starts(&fb, "first"), 0);
}

/* The host's OOM killer (no limit of the container's own reached): no agent
 * byte decides that, whatever the policy says. */
Test(engine, host_oom_is_infrastructure_whatever_the_policy)
{
        char refusal[128];

        ready();
        act();
        leaf_put("env", "memory.events", "low 0\nhigh 0\nmax 0\noom 1\noom_kill 1\n");
        cr_assert_eq(
                unit_end(u, 0, ACTOR_ORCHESTRATOR, "done", on_end, NULL, refusal, sizeof(refusal)),
                1);
        RUN_UNTIL(end_result != 1);
        cr_expect_str_eq(verdict_field("verdict"), "infrastructure_error");
        cr_expect_str_eq(verdict_cause(), "host_oom");
        json_t *ev = event_of("host_oom", "env");
        cr_expect_not_null(ev);
        json_decref(ev);
}

/* exit: record: the env server's death still ends the episode (sealed by
 * the system), and the graders run on what it left. */
Test(engine, env_death_is_graded_when_exit_is_record)
{
        cleanup_free char *yaml = with_policy(unit_yaml, "{exit: record}");

        ready_with(yaml);
        act();
        fake_exit(fake_find(&fb, "env"), 3);
        RUN_UNTIL(fake_find(&fb, "first") != NULL);
        observer_passes("first", "{\"score\": 0}");
        observer_passes("second", "{\"score\": 0}");
        RUN_UNTIL(unit_phase(u) == PHASE_CLOSED);
        cr_expect_str_eq(verdict_field("verdict"), "graded");
        cleanup_free char *h = history();
        cr_expect(strstr(h, "running>sealed:system"), "history: %s", h);
        json_t *ev = event_of("exited", "env");
        cr_expect(ev && streq(field(ev, "policy"), "record") &&
                          json_integer_value(json_object_get(ev, "exit_status")) == 3,
                  "listed with its status");
        json_decref(ev);
}

/* --- custody: the copies are real child jobs over plain directories --------------------- */

/* A unit of an env alone, observers to follow. */
#define ENV_ONLY_HEAD           \
        "app: server.app:app\n" \
        "port: 8000\n"          \
        "openenvd:\n"           \
        "  zones:\n"            \
        "    agent:\n"          \
        "      containers:\n"   \
        "        env: {}\n"

static const char custody_yaml[] = ENV_ONLY_HEAD
        "    observers:\n"
        "      containers:\n"
        "        runner: {argv: [/bin/true], reads: [workspace], phases: [grading], output: "
        "/out/report.json}\n"
        "        judge: {argv: [/bin/true], reads: [runner.output], phases: [grading], "
        "after: runner}\n";

static char *episode_path(const char *rel)
{
        return xasprintf("%s/episodes/%s/%s", state_dir, episode_id(u->lanes[0].live), rel);
}

static void custody_ready(void)
{
        boot(custody_yaml, false);
        cr_assert_eq(unit_start(u, true), 0);
        RUN_UNTIL(unit_phase(u) == PHASE_READY);
        act();
}

Test(engine, custody_copies_workspace_and_output)
{
        char refusal[128];

        custody_ready();
        cleanup_free char *ws = episode_path("workspace/merged");
        put(ws, "answer.txt", "42\n");
        cr_assert_eq(
                unit_end(u, 0, ACTOR_ORCHESTRATOR, "done", on_end, NULL, refusal, sizeof(refusal)),
                1);
        RUN_UNTIL(fake_find(&fb, "runner") != NULL);
        /* The runner starts only once its custody copy is made. */
        cleanup_free char *copy = episode_path("workspace-copy/ws/answer.txt");
        cr_expect_eq(access(copy, F_OK), 0, "%s", copy);
        cleanup_free char *out = episode_path("observers/runner/out");
        put(out, "report.json", "{\"passed\": 3}");
        observer_passes("runner", "{\"score\": 1}");
        RUN_UNTIL(fake_find(&fb, "judge") != NULL);
        cleanup_free char *in = episode_path("observers/judge/inputs/runner/report.json");
        cr_expect_eq(access(in, F_OK), 0, "%s", in);
        observer_passes("judge", "{\"score\": 2}");
        RUN_UNTIL(end_result != 1);
        cr_expect_str_eq(verdict_field("verdict"), "graded");
}

Test(engine, custody_refuses_a_fifo_in_the_workspace)
{
        char refusal[128];

        custody_ready();
        cleanup_free char *fifo = episode_path("workspace/merged/pipe");
        cr_assert_eq(mkfifo(fifo, 0644), 0);
        cr_assert_eq(
                unit_end(u, 0, ACTOR_ORCHESTRATOR, "done", on_end, NULL, refusal, sizeof(refusal)),
                1);
        RUN_UNTIL(end_result != 1);
        cr_expect_eq(fake_starts(&fb, "runner"), 0, "never given refused data");
        cr_expect_str_eq(verdict_field("verdict"), "agent_misbehavior");
        cr_expect(strstr(verdict_field("reason"), "workspace refused by custody"), "%s",
                  verdict_field("reason"));
}

/* --- the blame rule for observers (docs/GRADING.md, observer-blame.c) ------------------ */

/* Ends the episode and lets what = "runner" (or another observer) fail as
 * fail says; the verdict follows the one rule. */
static void observer_fails(const char *what, void (*fail)(struct fake_member *fm), const char *kind,
                           const char *blame, const char *cause, const char *reason)
{
        char refusal[128];
        struct fake_member *fm;

        cr_assert_eq(
                unit_end(u, 0, ACTOR_ORCHESTRATOR, "done", on_end, NULL, refusal, sizeof(refusal)),
                1);
        RUN_UNTIL((fm = fake_find(&fb, what)) != NULL);
        fail(fm);
        RUN_UNTIL(end_result != 1);
        cr_expect_str_eq(verdict_field("verdict"), kind);
        cr_expect_str_eq(verdict_field("blame"), blame);
        cr_expect_str_eq(verdict_cause(), cause);
        cr_expect(strstr(verdict_field("reason"), reason), "%s", verdict_field("reason"));
        const char *name = strrchr(blame, '/') + 1;
        json_t *ev = event_of("observer_failed", name);
        cr_expect(ev && streq(field(ev, "cause"), cause), "listed with its cause");
        json_decref(ev);
}

static void exits_1(struct fake_member *fm)
{
        fake_exit(fm, 1);
}

static void hangs(struct fake_member *fm)
{
        (void) fm;
}

static void out_put(struct fake_member *fm, const char *file, const char *content)
{
        cleanup_free char *rel = xasprintf("observers/%s/out", fm->name);
        cleanup_free char *out = episode_path(rel);
        put(out, file, content);
}

static void writes_garbage(struct fake_member *fm)
{
        out_put(fm, "verdict.json", "[\"not an object\"]");
        fake_exit(fm, 0);
}

static void links_its_verdict(struct fake_member *fm)
{
        cleanup_free char *rel = xasprintf("observers/%s/out/verdict.json", fm->name);
        cleanup_free char *p = episode_path(rel);
        cr_assert_eq(symlink("/etc/passwd", p), 0);
        fake_exit(fm, 0);
}

static void oversize_verdict(struct fake_member *fm)
{
        cleanup_free char *big = xmalloc(VERDICT_MAX_BYTES + 2);
        memset(big, ' ', VERDICT_MAX_BYTES + 1);
        big[0] = '{';
        big[VERDICT_MAX_BYTES] = '}';
        big[VERDICT_MAX_BYTES + 1] = '\0';
        out_put(fm, "verdict.json", big);
        fake_exit(fm, 0);
}

static void oom_killed(struct fake_member *fm)
{
        leaf_put(fm->name, "memory.events", "low 0\nhigh 0\nmax 9\noom 1\noom_kill 1\n");
        fake_exit(fm, 128 + SIGKILL);
}

static void host_oom_killed(struct fake_member *fm)
{
        leaf_put(fm->name, "memory.events", "low 0\nhigh 0\nmax 0\noom 1\noom_kill 1\n");
        fake_exit(fm, 128 + SIGKILL);
}

static void links_in_its_out(struct fake_member *fm)
{
        cleanup_free char *rel = xasprintf("observers/%s/out/evil-link", fm->name);
        cleanup_free char *p = episode_path(rel);
        cr_assert_eq(symlink("/etc/passwd", p), 0);
        out_put(fm, "verdict.json", "{}");
        fake_exit(fm, 0);
}

Test(engine, a_runner_that_exits_non_zero_is_the_agents)
{
        custody_ready();
        observer_fails("runner", exits_1, "agent_misbehavior", "zones/observers/runner",
                       "exit_status", "observer runner exited with status 1");
        cr_expect_eq(fake_starts(&fb, "judge"), 0, "the first failure ends grading");
}

Test(engine, a_runner_that_times_out_is_the_agents)
{
        custody_ready();
        u->ecfg.observer_timeout = 50 * USEC_PER_MSEC;
        observer_fails("runner", hangs, "agent_misbehavior", "zones/observers/runner", "timeout",
                       "observer runner timed out");
}

Test(engine, a_runner_oom_killed_at_its_limit_is_the_agents)
{
        custody_ready();
        observer_fails("runner", oom_killed, "agent_misbehavior", "zones/observers/runner",
                       "memory_limit", "observer runner ran out of memory (its own limit)");
}

Test(engine, a_runners_invalid_verdict_json_is_the_agents)
{
        custody_ready();
        observer_fails("runner", writes_garbage, "agent_misbehavior", "zones/observers/runner",
                       "invalid_result", "observer runner wrote an invalid verdict.json");
}

Test(engine, a_runners_symlink_at_verdict_json_is_the_agents)
{
        custody_ready();
        observer_fails("runner", links_its_verdict, "agent_misbehavior", "zones/observers/runner",
                       "invalid_result", "observer runner wrote an invalid verdict.json");
}

Test(engine, a_runners_oversize_verdict_json_is_the_agents)
{
        custody_ready();
        observer_fails("runner", oversize_verdict, "agent_misbehavior", "zones/observers/runner",
                       "invalid_result", "observer runner wrote an invalid verdict.json");
}

Test(engine, a_runners_symlink_in_out_is_the_agents)
{
        custody_ready();
        observer_fails("runner", links_in_its_out, "agent_misbehavior", "zones/observers/runner",
                       "output_refused", "runner output: ");
        cr_expect_eq(fake_starts(&fb, "judge"), 0, "never given refused data");
}

/* The judge reads the runner's output: a runner too, by design. */
static void runner_passes(struct fake_member *fm)
{
        out_put(fm, "report.json", "{\"passed\": 0}");
        out_put(fm, "verdict.json", "{}");
        fake_exit(fm, 0);
}

Test(engine, an_observer_reading_a_runners_output_is_a_runner_too)
{
        char refusal[128];
        struct fake_member *fm;

        custody_ready();
        cr_assert_eq(
                unit_end(u, 0, ACTOR_ORCHESTRATOR, "done", on_end, NULL, refusal, sizeof(refusal)),
                1);
        RUN_UNTIL((fm = fake_find(&fb, "runner")) != NULL);
        runner_passes(fm);
        RUN_UNTIL((fm = fake_find(&fb, "judge")) != NULL);
        fake_exit(fm, 2);
        RUN_UNTIL(end_result != 1);
        cr_expect_str_eq(verdict_field("verdict"), "agent_misbehavior");
        cr_expect_str_eq(verdict_field("blame"), "zones/observers/judge");
        cr_expect_str_eq(verdict_cause(), "exit_status");
}

Test(engine, a_runner_killed_by_the_hosts_oom_killer_is_infrastructure)
{
        custody_ready();
        observer_fails("runner", host_oom_killed, "infrastructure_error", "zones/observers/runner",
                       "host_oom", "observer runner ran out of memory (the host's OOM killer)");
}

/* Observers that read no agent data (unit_yaml's first and second read
 * nothing): what they do is the unit author's, never the agent's. */
Test(engine, an_observer_of_no_agent_data_writing_an_invalid_verdict_is_infrastructure)
{
        ready();
        act();
        observer_fails("first", writes_garbage, "infrastructure_error", "zones/observers/first",
                       "invalid_result", "observer first wrote an invalid verdict.json");
}

Test(engine, an_observer_of_no_agent_data_oom_killed_is_infrastructure)
{
        ready();
        act();
        observer_fails("first", oom_killed, "infrastructure_error", "zones/observers/first",
                       "memory_limit", "observer first ran out of memory (its own limit)");
}

static const char maker_yaml[] = ENV_ONLY_HEAD
        "    observers:\n"
        "      containers:\n"
        "        maker: {argv: [/bin/true], phases: [grading], output: /out/x}\n"
        "        reader: {argv: [/bin/true], reads: [maker.output], phases: [grading], "
        "after: maker}\n";

Test(engine, an_observer_of_no_agent_data_with_a_symlink_in_out_is_infrastructure)
{
        ready_with(maker_yaml);
        act();
        observer_fails("maker", links_in_its_out, "infrastructure_error", "zones/observers/maker",
                       "output_refused", "maker output: ");
}

/* --- observers made ahead of their turn (observer-gate.c) ----------------------------- */

static unsigned made(const char *name)
{
        unsigned n = 0;
        for (size_t i = 0; i < fb.n_members; i++)
                n += streq(fb.members[i]->name, name);
        return n;
}

Test(engine, observers_are_made_ahead_and_released_at_their_turn)
{
        char refusal[128];

        custody_ready();
        /* Made while the episode provisioned, held at their gates. */
        struct fake_member *runner = fake_last(&fb, "runner"), *judge = fake_last(&fb, "judge");
        cr_assert(runner && runner->gated && !fake_principal_started(runner));
        cr_assert(judge && judge->gated && !fake_principal_started(judge));
        cr_expect_null(fake_find(&fb, "runner"), "no principal runs beside the agent");
        cleanup_free char *ws = episode_path("workspace/merged");
        put(ws, "answer.txt", "42\n");
        act();
        cr_assert_eq(
                unit_end(u, 0, ACTOR_ORCHESTRATOR, "done", on_end, NULL, refusal, sizeof(refusal)),
                1);
        RUN_UNTIL(fake_find(&fb, "runner") != NULL);
        cr_expect_eq(fake_find(&fb, "runner"), runner, "the one made ahead, released");
        cr_expect_eq(made("runner"), 1);
        /* The turn's values, final at sealing: two actions. */
        cr_expect(strstr(runner->release, "OPENENVD_PHASE=grading\n"), "%s", runner->release);
        cr_expect(strstr(runner->release, "OPENENVD_ACTIONS=2\n"), "%s", runner->release);
        /* Its copy is in the directory its view was bound to. */
        cleanup_free char *copy = episode_path("workspace-copy/ws/answer.txt");
        cr_expect_eq(access(copy, F_OK), 0, "%s", copy);
        cr_expect(!fake_principal_started(judge), "judge waits for the runner");
        cleanup_free char *out = episode_path("observers/runner/out");
        put(out, "report.json", "{\"passed\": 3}");
        observer_passes("runner", "{\"score\": 1}");
        RUN_UNTIL(fake_find(&fb, "judge") != NULL);
        cr_expect_eq(made("judge"), 1);
        cleanup_free char *in = episode_path("observers/judge/inputs/runner/report.json");
        cr_expect_eq(access(in, F_OK), 0, "%s", in);
        observer_passes("judge", "{\"score\": 2}");
        RUN_UNTIL(end_result != 1);
        cr_expect_str_eq(verdict_field("verdict"), "graded");
}

/* Dead at its gate, or its release failed: nothing of the episode ran in
 * it, so it is no failure; it is started anew at its turn. */
static void observer_lost_before_its_turn(void (*lose)(struct fake_member *fm))
{
        char refusal[128];

        custody_ready();
        struct fake_member *runner = fake_last(&fb, "runner");
        lose(runner);
        settle();
        cr_expect_eq(unit_phase(u), PHASE_RUNNING);
        cr_expect_str_eq(verdict_field("verdict"), "");
        cr_assert_eq(
                unit_end(u, 0, ACTOR_ORCHESTRATOR, "done", on_end, NULL, refusal, sizeof(refusal)),
                1);
        RUN_UNTIL(fake_find(&fb, "runner") != NULL);
        cr_expect_neq(fake_find(&fb, "runner"), runner);
        cr_expect(runner->freed && !runner->released);
        cr_expect_eq(made("runner"), 2);
        observer_passes("runner", "{}");
        observer_passes("judge", "{}");
        RUN_UNTIL(end_result != 1);
        cr_expect_str_eq(verdict_field("verdict"), "graded");
}

static void exit_at_gate(struct fake_member *fm)
{
        fake_exit(fm, 126);
}

Test(engine, observer_dead_at_its_gate_starts_anew)
{
        observer_lost_before_its_turn(exit_at_gate);
}

Test(engine, observer_whose_release_fails_starts_anew)
{
        observer_lost_before_its_turn(fake_close_gate);
}

/* A failure to make one ahead is no failure, nor an event of the episode:
 * it starts at its turn, and only that start counts. */
Test(engine, observer_not_made_ahead_starts_at_its_turn)
{
        char refusal[128];

        fb.fail_start = "runner";
        custody_ready();
        fb.fail_start = NULL;
        cr_expect_null(fake_last(&fb, "runner"), "not made ahead");
        cr_assert_eq(
                unit_end(u, 0, ACTOR_ORCHESTRATOR, "done", on_end, NULL, refusal, sizeof(refusal)),
                1);
        observer_passes("runner", "{}");
        observer_passes("judge", "{}");
        RUN_UNTIL(end_result != 1);
        cr_expect_str_eq(verdict_field("verdict"), "graded");
        json_t *v = unit_verdict(u, NULL);
        cleanup_free char *events = json_dumps(json_object_get(v, "events"), 0);
        cr_expect_null(strstr(events, "start_failed"), "%s", events);
        json_decref(v);
}

/* An inspection's copy is the episode's first; sealing's goes to a fresh
 * tmpfs, which the runner made ahead does not show: it is started anew. */
Test(engine, second_workspace_copy_discards_the_gated_readers)
{
        static const char yaml[] = ENV_ONLY_HEAD
                "    observers:\n"
                "      containers:\n"
                "        peek: {argv: [/bin/true], reads: [workspace], phases: [frozen]}\n"
                "        runner: {argv: [/bin/true], reads: [workspace], phases: [grading]}\n";
        char refusal[128];

        boot(yaml, false);
        cr_assert_eq(unit_start(u, true), 0);
        RUN_UNTIL(unit_phase(u) == PHASE_READY);
        act();
        struct fake_member *runner = fake_last(&fb, "runner");
        cr_assert(runner && runner->gated);
        cr_assert_eq(unit_inspect(u, 0, on_inspect, NULL, refusal, sizeof(refusal)), 1, "%s",
                     refusal);
        observer_passes("peek", "{}");
        RUN_UNTIL(inspect_result != 1);
        cr_expect_eq(made("peek"), 1, "the inspection used the one made ahead");
        cr_expect(!runner->freed, "one copy so far: the runner's view still holds");
        cr_assert_eq(unit_resume(u, 0, refusal, sizeof(refusal)), 0, "%s", refusal);
        cr_assert_eq(
                unit_end(u, 0, ACTOR_ORCHESTRATOR, "done", on_end, NULL, refusal, sizeof(refusal)),
                1);
        RUN_UNTIL(fake_find(&fb, "runner") != NULL);
        cr_expect(runner->freed && !runner->released);
        cr_expect_eq(made("runner"), 2);
        observer_passes("runner", "{}");
        RUN_UNTIL(end_result != 1);
        cr_expect_str_eq(verdict_field("verdict"), "graded");
}

/* The first standby fails to start its service, so that the next one is
 * built after the backoff, while the live episode is graded (its first
 * observer released and running). */
static void standby_built_during_grading(usec_t yield, unsigned *ret_envs, unsigned *ret_sims)
{
        char refusal[128];

        fb.manual_ready = true;
        boot(unit_yaml, true);
        cr_assert_eq(unit_start(u, true), 0);
        RUN_UNTIL(fake_find(&fb, "sim") != NULL);
        fb.fail_start = "sim";
        fake_ready(fake_find(&fb, "env"));
        fake_ready(fake_find(&fb, "sim"));
        RUN_UNTIL(u->standby_failures == 1);
        u->standby_yield = yield; /* the retry is made while the live episode is graded */
        fb.fail_start = NULL;
        fb.manual_ready = false;
        *ret_envs = made("env");
        *ret_sims = made("sim");
        act();
        cr_assert_eq(
                unit_end(u, 0, ACTOR_ORCHESTRATOR, "done", on_end, NULL, refusal, sizeof(refusal)),
                1);
        RUN_UNTIL(fake_find(&fb, "first") != NULL);
        RUN_UNTIL(unit_next_standby(u) != NULL); /* after the backoff */
}

/* The live episode's grading goes first: a standby being built starts no
 * container while it runs, and goes on once the verdict is final. */
Test(engine, standby_waits_while_the_live_episode_is_graded)
{
        unsigned envs, sims;

        standby_built_during_grading(60 * USEC_PER_SEC, &envs, &sims);
        settle();
        cr_expect_eq(made("env"), envs, "no standby container starts during grading");
        cr_expect_eq(made("sim"), sims);
        observer_passes("first", "{}");
        observer_passes("second", "{}");
        RUN_UNTIL(end_result != 1);
        standby_ready();
        cr_expect_eq(made("env"), envs + 1);
        cr_expect_eq(made("sim"), sims + 1);
}

/* ... for a while only: a slow grader does not hold the next env back. */
Test(engine, standby_goes_on_past_the_yield_during_a_slow_grading)
{
        unsigned envs, sims;

        standby_built_during_grading(100 * USEC_PER_MSEC, &envs, &sims);
        RUN_UNTIL(made("sim") == sims + 1);
        cr_expect_eq(made("env"), envs + 1);
        cr_expect_eq(live_state(), EPISODE_GRADING, "first still runs");
}

/* --- a full workspace ---------------------------------------------------------------- */

/* At sealing the workspace is full: the agent filled its own disk (its
 * doing, never the system's), blamed on whoever owns most of what ran out (a
 * real walk of the upper layer in a child job: here nothing is owned by a
 * container's uid, so the zone as a whole). By default (disk_full: record)
 * the graders run on it, the event listed; with void the episode is sealed,
 * then closed without grading. */
static void workspace_full_at_sealing(int how, const char *reason, bool voids)
{
        cleanup_free char *yaml = with_policy(unit_yaml, voids ? "{disk_full: void}" : "{}");
        char refusal[128];

        ready_with(yaml);
        act();
        cleanup_free char *dir = episode_path("");
        cleanup_free char *upper = episode_path("workspace/upper");
        put(upper, "big", "the agent's bytes\n");
        fake_workspace_fill(dir, how);
        if (!voids) {
                end_and_grade();
                cr_expect_str_eq(verdict_field("verdict"), "graded");
        } else {
                cr_assert_eq(unit_end(u, 0, ACTOR_ORCHESTRATOR, "done", on_end, NULL, refusal,
                                      sizeof(refusal)),
                             1);
                RUN_UNTIL(end_result != 1);
                cr_expect_eq(end_result, 0);
                cr_expect_eq(unit_phase(u), PHASE_CLOSED);
                cr_expect_eq(fake_starts(&fb, "first"), 0, "a void episode is not graded");
                cr_expect_str_eq(verdict_field("verdict"), "agent_misbehavior");
                cr_expect_str_eq(verdict_field("blame"), "zones/agent");
                cr_expect_str_eq(verdict_field("reason"), reason);
                cleanup_free char *h = history();
                cr_expect(strstr(h, "running>sealed:orchestrator sealed>closed:system"),
                          "history: %s", h);
        }
        json_t *v = unit_verdict(u, NULL), *ev;
        size_t i, n = 0;
        json_array_foreach(json_object_get(v, "events"), i, ev)
        {
                if (streq(field(ev, "what"), "disk_full")) {
                        n++;
                        cr_expect_str_eq(field(ev, "reason"), reason);
                        cr_expect_str_eq(field(ev, "subtree"), "zones/agent");
                        cr_expect_str_eq(field(ev, "policy"), voids ? "void" : "record");
                }
        }
        cr_expect_eq(n, 1, "the full workspace listed once");
        json_decref(v);
}

Test(engine, workspace_full_of_bytes_is_the_agents)
{
        workspace_full_at_sealing(EPISODE_FS_FULL_BYTES,
                                  "the agent zone filled its disk (workspace full at 256 MB)",
                                  true);
}

Test(engine, workspace_full_of_bytes_is_graded_by_default)
{
        workspace_full_at_sealing(EPISODE_FS_FULL_BYTES,
                                  "the agent zone filled its disk (workspace full at 256 MB)",
                                  false);
}

Test(engine, workspace_out_of_inodes_is_the_agents)
{
        workspace_full_at_sealing(EPISODE_FS_FULL_INODES,
                                  "the agent zone filled its disk (workspace out of inodes: 65536 "
                                  "entries at 256 MB)",
                                  true);
}
