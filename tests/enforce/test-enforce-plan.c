/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The fail-closed evaluation of `openenvctl check enforcement` (enforce-plan.c)
 * and the attack library's bookkeeping, without a kernel: a report is only
 * a pass when every planned attempt is reported exactly once as denied, the
 * report ends properly and the probe exited 0.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/strbuf.h"
#include "base/util.h"
#include "enforce/enforce-plan.h"
#include "probe/attack.h"
#include "test-helpers.h"

static char *hidden[] = { (char *) "/srv/assets/oracle.json", (char *) "/srv/assets", NULL };
static char *kmasked[] = { (char *) "/proc/timer_list", NULL };
static char *socks[] = { (char *) "/st/control.sock", (char *) "/st/run/sock/sim/canary.sock",
                         NULL };
static char *hosts[] = { (char *) "127.0.0.1", (char *) "10.0.0.2", NULL };

static const struct enforce_targets targets = {
        .state_dir = "/st",
        .canary_file = "/st/canary",
        .key_file = "/st/model-key",
        .key_marker_hex = "736b2d",
        .hidden_paths = hidden,
        .kernel_masked = kmasked,
        .foreign_sockets = socks,
        .canary_hosts = hosts,
        .canary_port = 40000,
        .host_pid = 4242,
        .link_path = "/run/openenv-links/escape/canary",
        .fork_count = 64,
        .alloc_bytes = 128 << 20,
};

static void plan_new(struct enforce_plan *p)
{
        enforce_plan_init(p, "agent", "harness");
        enforce_plan_build(p, &targets);
}

/* A well-behaved probe's report: every in-probe attempt with `result`,
 * except `skip` (left out) and `dup` (reported twice). */
static char *report_for(const struct enforce_plan *p, const char *result, const char *skip,
                        const char *dup, bool end)
{
        struct strbuf sb = STRBUF_INIT;
        size_t n = 0;

        for (size_t i = 0; i < p->n_attempts; i++) {
                const struct enforce_attempt *a = &p->attempts[i];
                if (a->on_host)
                        continue;
                n++;
                if (skip && streq(a->name, skip))
                        continue;
                for (int k = 0; k < (dup && streq(a->name, dup) ? 2 : 1); k++)
                        strbuf_addf(&sb,
                                    "{\"name\":\"%s\",\"guarantee\":\"%s\",\"kind\":\"%s\","
                                    "\"expected\":\"denied\",\"result\":\"%s\",\"detail\":\"x\"}\n",
                                    a->name, enforce_guarantee_to_string(a->guarantee), a->kind,
                                    result);
        }
        if (end)
                strbuf_addf(&sb, "{\"end\":true,\"attempts\":%zu}\n", n);
        return strbuf_detach(&sb, NULL);
}

/* The host-side attempts, as the runner sets them when all is well. */
static void host_all_denied(struct enforce_plan *p)
{
        for (size_t i = 0; i < p->n_attempts; i++)
                if (p->attempts[i].on_host && p->attempts[i].guarantee != G_PROBE_REPORT)
                        enforce_plan_set(p, p->attempts[i].name, ENFORCE_DENIED, "ok");
}

static const struct enforce_probe_exit exit_ok = { .started = true, .status = 0 };

Test(enforce_plan, every_guarantee_has_an_attempt)
{
        struct enforce_plan p;
        plan_new(&p);
        for (int g = 0; g < _G_MAX; g++) {
                size_t n = 0;
                for (size_t i = 0; i < p.n_attempts; i++)
                        n += p.attempts[i].guarantee == (enum enforce_guarantee) g;
                cr_expect(n > 0, "guarantee %s has no attempt",
                          enforce_guarantee_to_string((enum enforce_guarantee) g));
        }
        /* Every in-probe attempt names a kind the probe implements, and
         * names are unique. */
        for (size_t i = 0; i < p.n_attempts; i++) {
                if (!p.attempts[i].on_host)
                        cr_expect(attack_kind_known(p.attempts[i].kind), "%s", p.attempts[i].kind);
                for (size_t k = i + 1; k < p.n_attempts; k++)
                        cr_expect(!streq(p.attempts[i].name, p.attempts[k].name));
        }
        /* Nothing evaluated yet: nothing held. */
        cr_expect(!enforce_plan_held(&p));
        enforce_plan_done(&p);
}

Test(enforce_plan, design_section_9_targets_are_attacked)
{
        struct enforce_plan p;
        plan_new(&p);
        cr_expect_str_eq(enforce_plan_find(&p, "read-state-canary")->arg, "/st/canary");
        cr_expect_str_eq(enforce_plan_find(&p, "read-hidden-0")->arg, "/srv/assets/oracle.json");
        cr_expect_str_eq(enforce_plan_find(&p, "connect-canary-1")->arg, "10.0.0.2:40000");
        cr_expect_str_eq(enforce_plan_find(&p, "connect-socket-1")->arg,
                         "/st/run/sock/sim/canary.sock");
        cr_expect_str_eq(enforce_plan_find(&p, "signal-host-pid")->arg, "4242");
        cr_expect_str_eq(enforce_plan_find(&p, "fork-past-pids-max")->arg, "64");
        cr_expect_str_eq(enforce_plan_find(&p, "read-via-proc-1-root")->arg,
                         "/proc/1/root/st/canary");
        cr_expect_eq(enforce_plan_find(&p, "unshare-user")->guarantee, G_NAMESPACES);
        cr_expect_eq(enforce_plan_find(&p, "bpf-prog-load")->guarantee, G_BPF);
        cr_expect_eq(enforce_plan_find(&p, "mknod-char-null")->guarantee, G_DEVICES);
        enforce_plan_done(&p);
}

Test(enforce_plan, probe_argv_carries_every_probe_attempt_and_no_secret)
{
        struct enforce_plan p;
        char **argv;
        size_t n_probe = 0;

        plan_new(&p);
        for (size_t i = 0; i < p.n_attempts; i++)
                n_probe += !p.attempts[i].on_host;
        argv = enforce_plan_probe_argv(&p, "/run/openenvd-probe", "/run/openenvd/r", "silent");
        cr_assert_str_eq(argv[0], "/run/openenvd-probe");
        cr_assert_str_eq(argv[1], "attack");
        cr_assert_str_eq(argv[5], "silent");
        cr_assert_str_eq(argv[6], "--");
        cr_expect_eq(strv_length(argv), 7 + 4 * n_probe);
        for (char **a = argv; *a; a++)
                cr_expect(!strstr(*a, "sk-"), "the key marker must only travel hex-encoded");
        strv_free(argv);
        enforce_plan_done(&p);
}

Test(enforce_plan, complete_denied_report_holds)
{
        struct enforce_plan p;
        cleanup_free char *rep = NULL;

        plan_new(&p);
        rep = report_for(&p, "denied", NULL, NULL, true);
        enforce_plan_ingest(&p, rep, strlen(rep), &exit_ok);
        host_all_denied(&p);
        cr_expect(enforce_plan_held(&p));
        cr_expect_eq(enforce_plan_find(&p, "probe-report")->result, ENFORCE_COMPLETE);
        enforce_plan_done(&p);
}

Test(enforce_plan, allowed_attempt_fails_its_guarantee_only)
{
        struct enforce_plan p;
        cleanup_free char *rep = NULL;

        plan_new(&p);
        rep = report_for(&p, "denied", NULL, NULL, true);
        enforce_plan_ingest(&p, rep, strlen(rep), &exit_ok);
        host_all_denied(&p);
        enforce_plan_find(&p, "unshare-user")->result = ENFORCE_ALLOWED;
        cr_expect(!enforce_plan_guarantee_held(&p, G_NAMESPACES));
        cr_expect(enforce_plan_guarantee_held(&p, G_MASKED_PATHS));
        cr_expect(!enforce_plan_held(&p));
        enforce_plan_done(&p);
}

Test(enforce_plan, error_result_is_a_failure)
{
        struct enforce_plan p;
        cleanup_free char *rep = NULL;

        plan_new(&p);
        rep = report_for(&p, "error", NULL, NULL, true);
        enforce_plan_ingest(&p, rep, strlen(rep), &exit_ok);
        host_all_denied(&p);
        cr_expect(!enforce_plan_guarantee_held(&p, G_MOUNT));
        cr_expect(enforce_plan_guarantee_held(&p, G_PROBE_REPORT));
        enforce_plan_done(&p);
}

Test(enforce_plan, silent_probe_fails_everything)
{
        struct enforce_plan p;

        plan_new(&p);
        enforce_plan_ingest(&p, "", 0, &exit_ok);
        host_all_denied(&p);
        for (int g = 0; g < _G_MAX; g++)
                cr_expect(!enforce_plan_guarantee_held(&p, (enum enforce_guarantee) g), "%s",
                          enforce_guarantee_to_string((enum enforce_guarantee) g));
        cr_expect_eq(enforce_plan_find(&p, "read-state-canary")->result, ENFORCE_MISSING);
        cr_expect_str_eq(enforce_plan_find(&p, "read-state-canary")->detail, "report missing");
        enforce_plan_done(&p);
}

Test(enforce_plan, missing_line_fails_that_guarantee)
{
        struct enforce_plan p;
        cleanup_free char *rep = NULL;

        plan_new(&p);
        rep = report_for(&p, "denied", "ptrace-traceme", NULL, true);
        enforce_plan_ingest(&p, rep, strlen(rep), &exit_ok);
        host_all_denied(&p);
        cr_expect_eq(enforce_plan_find(&p, "ptrace-traceme")->result, ENFORCE_MISSING);
        cr_expect(!enforce_plan_guarantee_held(&p, G_PTRACE));
        /* ...and the end line's count no longer matches what arrived? It
         * counts planned attempts, so the report itself is complete. */
        cr_expect(enforce_plan_guarantee_held(&p, G_BPF));
        enforce_plan_done(&p);
}

Test(enforce_plan, duplicated_line_fails)
{
        struct enforce_plan p;
        cleanup_free char *rep = NULL;

        plan_new(&p);
        rep = report_for(&p, "denied", NULL, "bpf-prog-load", true);
        enforce_plan_ingest(&p, rep, strlen(rep), &exit_ok);
        host_all_denied(&p);
        cr_expect_eq(enforce_plan_find(&p, "bpf-prog-load")->result, ENFORCE_ERROR);
        cr_expect_str_eq(enforce_plan_find(&p, "bpf-prog-load")->detail, "report duplicated");
        cr_expect(!enforce_plan_guarantee_held(&p, G_BPF));
        enforce_plan_done(&p);
}

Test(enforce_plan, missing_end_or_bad_exit_fails_the_report)
{
        struct enforce_plan p;
        cleanup_free char *rep = NULL;
        struct enforce_probe_exit crashed = { .started = true, .status = 139 };
        struct enforce_probe_exit hung = { .started = true, .timed_out = true, .status = 137 };
        struct enforce_probe_exit never = { .started = false, .start_error = "step mount" };

        plan_new(&p);
        rep = report_for(&p, "denied", NULL, NULL, false);
        enforce_plan_ingest(&p, rep, strlen(rep), &exit_ok);
        cr_expect(!enforce_plan_guarantee_held(&p, G_PROBE_REPORT));
        cr_expect(strstr(enforce_plan_find(&p, "probe-report")->detail, "no end line"));
        enforce_plan_done(&p);

        free(rep);
        plan_new(&p);
        rep = report_for(&p, "denied", NULL, NULL, true);
        enforce_plan_ingest(&p, rep, strlen(rep), &crashed);
        cr_expect(!enforce_plan_guarantee_held(&p, G_PROBE_REPORT));
        cr_expect(strstr(enforce_plan_find(&p, "probe-report")->detail, "status 139"));
        enforce_plan_done(&p);

        plan_new(&p);
        enforce_plan_ingest(&p, rep, strlen(rep), &hung);
        cr_expect(strstr(enforce_plan_find(&p, "probe-report")->detail, "timed out"));
        enforce_plan_done(&p);

        plan_new(&p);
        enforce_plan_ingest(&p, NULL, 0, &never);
        cr_expect(strstr(enforce_plan_find(&p, "uid-gid-not-zero")->detail, "did not start"));
        cr_expect(!enforce_plan_guarantee_held(&p, G_NON_ROOT));
        enforce_plan_done(&p);
}

Test(enforce_plan, garbled_lines_fail_the_report)
{
        static const char *const bad[] = {
                "not json\n", "[1,2]\n", "{\"name\":\"bpf-prog-load\"}\n",
                "{\"name\":\"nope\",\"guarantee\":\"bpf\",\"kind\":\"bpf\",\"expected\":"
                "\"denied\",\"result\":\"denied\",\"detail\":\"\"}\n",
                /* right name, wrong guarantee: a probe that mislabels */
                "{\"name\":\"bpf-prog-load\",\"guarantee\":\"mount\",\"kind\":\"bpf\","
                "\"expected\":\"denied\",\"result\":\"denied\",\"detail\":\"\"}\n",
                /* a host attempt cannot be reported by the probe */
                "{\"name\":\"pids-max-hit\",\"guarantee\":\"pids-limit\",\"kind\":\"host\","
                "\"expected\":\"denied\",\"result\":\"denied\",\"detail\":\"\"}\n",
                "{\"name\":\"a\",\"name\":\"b\"}\n", "{\"end\":true,\"attempts\":1}\n",
                "{\"end\":true,\"attempts\":1", /* torn */
        };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                struct enforce_plan p;
                cleanup_free char *rep = NULL;
                struct strbuf sb = STRBUF_INIT;

                plan_new(&p);
                rep = report_for(&p, "denied", NULL, NULL, true);
                /* The bad line goes first, the complete report after it
                 * (except an extra end line, which must come last). */
                bool last = startswith(bad[i], "{\"end\"") != NULL;
                if (!last)
                        strbuf_adds(&sb, bad[i]);
                strbuf_adds(&sb, rep);
                if (last)
                        strbuf_adds(&sb, bad[i]);
                enforce_plan_ingest(&p, sb.buf, sb.len, &exit_ok);
                cr_expect(!enforce_plan_guarantee_held(&p, G_PROBE_REPORT), "bad line %zu held", i);
                cr_expect(!enforce_plan_held(&p), "bad line %zu", i);
                strbuf_release(&sb);
                enforce_plan_done(&p);
        }
}

Test(enforce_plan, unknown_result_value_is_an_error)
{
        struct enforce_plan p;
        cleanup_free char *rep = NULL;

        plan_new(&p);
        rep = report_for(&p, "maybe", NULL, NULL, true);
        enforce_plan_ingest(&p, rep, strlen(rep), &exit_ok);
        cr_expect_eq(enforce_plan_find(&p, "uid-gid-not-zero")->result, ENFORCE_ERROR);
        enforce_plan_done(&p);
}

Test(enforce_plan, json_lists_every_attempt)
{
        struct enforce_plan p;
        cleanup_free char *rep = NULL;
        json_t *j;

        plan_new(&p);
        rep = report_for(&p, "denied", NULL, NULL, true);
        enforce_plan_ingest(&p, rep, strlen(rep), &exit_ok);
        j = enforce_plan_to_json(&p);
        cr_expect_eq(json_array_size(json_object_get(j, "attempts")), p.n_attempts);
        cr_expect_eq(json_array_size(json_object_get(j, "guarantees")), (size_t) _G_MAX);
        cr_expect(json_is_false(json_object_get(j, "held"))); /* host attempts pending */
        json_decref(j);
        enforce_plan_done(&p);
}

Test(attack, names_and_results)
{
        char b[16];
        cr_expect_str_eq(attack_errno_name(EPERM, b), "EPERM");
        cr_expect_str_eq(attack_errno_name(-ENOENT, b), "ENOENT");
        cr_expect_str_eq(attack_errno_name(0, b), "0");
        cr_expect_eq(attack_result_from_string("denied"), ATTACK_DENIED);
        cr_expect_eq(attack_result_from_string("bogus"), -EINVAL);
        cr_expect(attack_kind_known("unshare"));
        cr_expect(!attack_kind_known("nope"));
}

Test(attack, outcomes_from_a_forked_child)
{
        struct attack_context ctx;
        struct attack_outcome o;

        attack_context_init(&ctx);
        cr_assert_eq(attack_run("read", "/nonexistent/openenv", &ctx, &o), 0);
        cr_expect_eq(o.result, ATTACK_DENIED);
        cr_expect_str_eq(o.detail, "open: ENOENT");
        /* Readable content is a violation. */
        cr_assert_eq(attack_run("read", "/proc/self/status", &ctx, &o), 0);
        cr_expect_eq(o.result, ATTACK_ALLOWED);
        /* Nonsense never reads as denied. */
        cr_assert_eq(attack_run("nope", "-", &ctx, &o), 0);
        cr_expect_eq(o.result, ATTACK_ERROR);
        cr_assert_eq(attack_run("kill", "notapid", &ctx, &o), 0);
        cr_expect_eq(o.result, ATTACK_ERROR);
        cr_assert_eq(attack_run("connect-tcp", "127.0.0.1", &ctx, &o), 0);
        cr_expect_eq(o.result, ATTACK_ERROR);
}
