/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * `openenvctl check enforcement` for real, as root: the example unit holds every
 * guarantee; each deliberate weakening of the launcher makes the check fail
 * with the right guarantee named; a probe that reports nothing (or dies) is a
 * failure, never a pass; and nothing is left behind (state dir, cgroups,
 * mounts).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "base/fd-util.h"
#include "base/util.h"
#include "cgroup/cgroup.h"
#include "test-helpers.h"

#define ECHO_MANIFEST TEST_SRCDIR "/examples/echo/openenv.yaml"

struct check_run {
        int exit_code;
        char *out; /* stdout */
        size_t out_len;
};

static bool dir_is_empty(const char *path)
{
        DIR *d = opendir(path);
        struct dirent *de;
        bool empty = true;

        cr_assert(d, "%s: %s", path, strerror(errno));
        while ((de = readdir(d)))
                if (!streq(de->d_name, ".") && !streq(de->d_name, ".."))
                        empty = false;
        closedir(d);
        return empty;
}

/* Where the check's cgroup subtree would be, in the cgroup2 tree and in the
 * v1 pids hierarchy (hybrid hosts). */
static void expect_no_cgroup(pid_t pid)
{
        struct cgroup_layout layout = { 0 };
        enum cgroup_mode mode;
        cleanup_free char *text = NULL, *v2 = NULL, *pids = NULL;
        size_t len;

        cr_assert_eq(cgroup_layout_detect(&layout, &mode), 0);
        cr_assert_eq(read_full_file_at(AT_FDCWD, "/proc/self/cgroup", 65536, &text, &len), 0);
        cr_assert_eq(cgroup_self_path_parse(text, NULL, &v2), 0);
        cleanup_free char *p2 = xasprintf("%s%s/openenv-check-%d", layout.v2_mount, v2, (int) pid);
        cr_expect(access(p2, F_OK) < 0 && errno == ENOENT, "left behind: %s", p2);
        if (layout.v1_mount && cgroup_self_path_parse(text, "pids", &pids) == 0) {
                cleanup_free char *p1 =
                        xasprintf("%s/pids%s/openenv-check-%d", layout.v1_mount, pids, (int) pid);
                cr_expect(access(p1, F_OK) < 0 && errno == ENOENT, "left behind: %s", p1);
        }
        cgroup_layout_done(&layout);
}

static void expect_no_mounts(const char *parent)
{
        cleanup_free char *mi = NULL;
        size_t len;
        cr_assert_eq(read_full_file_at(AT_FDCWD, "/proc/self/mountinfo", 4 << 20, &mi, &len), 0);
        cr_expect(!strstr(mi, parent), "a mount under %s is left", parent);
}

/* Runs the CLI with extra arguments (NULL-terminated), in its own state
 * parent, and checks that it cleaned up after itself. */
static void run_check(struct check_run *ret, const char *manifest, ...)
{
        char parent[] = "/var/tmp/openenv-enforce-test.XXXXXX";
        char outp[] = "/var/tmp/openenv-enforce-out.XXXXXX";
        char *argv[32];
        int n = 0, status;
        va_list ap;
        pid_t pid;

        cr_assert(mkdtemp(parent));
        /* The containers open their mount sources as unprivileged uids. */
        cr_assert_eq(chmod(parent, 0711), 0);
        int out = mkostemp(outp, O_CLOEXEC);
        cr_assert(out >= 0);
        (void) unlink(outp);

        argv[n++] = (char *) OPENENVCTL;
        argv[n++] = (char *) "check";
        argv[n++] = (char *) "enforcement";
        argv[n++] = (char *) "--manifest";
        argv[n++] = (char *) manifest;
        argv[n++] = (char *) "--state-parent";
        argv[n++] = parent;
        va_start(ap, manifest);
        for (char *a; (a = va_arg(ap, char *)) && n < 31;)
                argv[n++] = a;
        va_end(ap);
        argv[n] = NULL;

        pid = fork();
        cr_assert(pid >= 0);
        if (pid == 0) {
                (void) dup2(out, STDOUT_FILENO);
                execv(argv[0], argv);
                _exit(127);
        }
        cr_assert_eq(waitpid(pid, &status, 0), pid);
        cr_assert(WIFEXITED(status), "openenv was killed by signal %d", WTERMSIG(status));
        ret->exit_code = WEXITSTATUS(status);
        cr_assert(lseek(out, 0, SEEK_SET) == 0);
        cr_assert_eq(read_full_fd(out, 16 << 20, &ret->out, &ret->out_len), 0);
        safe_close(out);

        /* No state dir, cgroup or mount survives the check. */
        cr_expect(dir_is_empty(parent), "the check left files in %s", parent);
        expect_no_cgroup(pid);
        expect_no_mounts("openenv-enforce.");
        (void) rmdir(parent);
}

static json_t *parse_json(const struct check_run *r)
{
        json_error_t err;
        json_t *j = json_loadb(r->out, r->out_len, 0, &err);
        cr_assert(j, "--json output does not parse: %s: %.200s", err.text, r->out);
        return j;
}

static json_t *guarantee_of(json_t *probe, const char *id)
{
        size_t i;
        json_t *g;
        json_array_foreach(
                json_object_get(probe, "guarantees"), i,
                g) if (streq(json_string_value(json_object_get(g, "guarantee")), id)) return g;
        cr_assert_fail("guarantee %s missing from the report", id);
        return NULL;
}

Test(enforcement, echo_unit_holds_every_guarantee, .timeout = 300)
{
        struct check_run r;

        require_root();
        run_check(&r, ECHO_MANIFEST, NULL);
        cr_expect_eq(r.exit_code, 0, "output:\n%s", r.out);
        cr_expect(strstr(r.out, "enforcement: all 100 guarantees held in 5 probe containers"), "%s",
                  r.out);
        cr_expect(!strstr(r.out, "FAILED"));
        free(r.out);
}

Test(enforcement, json_lists_every_attempt, .timeout = 300)
{
        struct check_run r;
        json_t *j, *probe, *a;
        size_t i, k;

        require_root();
        run_check(&r, ECHO_MANIFEST, "--json", NULL);
        cr_expect_eq(r.exit_code, 0);
        j = parse_json(&r);
        cr_expect(json_is_true(json_object_get(j, "held")));
        cr_assert_eq(json_array_size(json_object_get(j, "probes")), 5);
        json_array_foreach(json_object_get(j, "probes"), i, probe)
        {
                size_t n_probe = 0;
                cr_expect(json_is_string(json_object_get(probe, "zone")));
                cr_expect_eq(json_array_size(json_object_get(probe, "guarantees")), 20);
                json_array_foreach(json_object_get(probe, "attempts"), k, a)
                {
                        static const char *const fields[] = { "name",  "guarantee", "where",
                                                              "kind",  "expected",  "result",
                                                              "detail" };
                        for (size_t f = 0; f < ELEMENTSOF(fields); f++)
                                cr_expect(json_is_string(json_object_get(a, fields[f])),
                                          "attempt field %s", fields[f]);
                        cr_expect(json_is_true(json_object_get(a, "held")), "%s: %s",
                                  json_string_value(json_object_get(a, "name")),
                                  json_string_value(json_object_get(a, "detail")));
                        if (streq(json_string_value(json_object_get(a, "where")), "probe")) {
                                n_probe++;
                                cr_expect_str_eq(json_string_value(json_object_get(a, "result")),
                                                 "denied");
                        }
                }
                cr_expect(n_probe >= 40, "only %zu probe attempts", n_probe);
        }
        json_decref(j);
        free(r.out);
}

static const char *report_detail(json_t *probe)
{
        size_t i;
        json_t *a;
        json_array_foreach(
                json_object_get(probe, "attempts"), i,
                a) if (streq(json_string_value(json_object_get(a, "name")),
                             "probe-report")) return json_string_value(json_object_get(a,
                                                                                       "detail"));
        return "(no probe-report attempt)";
}

struct weakening {
        const char *knob;
        const char *failed[3]; /* must FAIL in every probe container */
        const char *held;      /* must still hold: the failure is specific */
};

static const struct weakening weakenings[] = {
        { "no-seccomp", { "namespaces", "kernel-interfaces", "devices" }, "masked-paths" },
        { "no-masks", { "masked-paths", "model-key", "sockets" }, "namespaces" },
        { "keep-caps", { "non-root", "capabilities", NULL }, "masked-paths" },
        { "writable-root", { "read-only-root", NULL, NULL }, "capabilities" },
};

static void expect_weakening_fails(const struct weakening *w)
{
        cleanup_free char *opt = xasprintf("--test-weaken=%s", w->knob);
        struct check_run r;
        json_t *j, *probe;
        size_t i;

        require_root();
        run_check(&r, ECHO_MANIFEST, "--json", opt, NULL);
        cr_expect_eq(r.exit_code, 1, "%s: exit %d", w->knob, r.exit_code);
        j = parse_json(&r);
        cr_expect(json_is_false(json_object_get(j, "held")));
        json_array_foreach(json_object_get(j, "probes"), i, probe)
        {
                const char *c = json_string_value(json_object_get(probe, "container"));
                for (size_t f = 0; f < ELEMENTSOF(w->failed) && w->failed[f]; f++) {
                        json_t *g = guarantee_of(probe, w->failed[f]);
                        cr_expect(json_is_false(json_object_get(g, "held")), "%s: %s held in %s",
                                  w->knob, w->failed[f], c);
                        cr_expect(json_array_size(json_object_get(g, "failed")) > 0);
                }
                cr_expect(json_is_true(json_object_get(guarantee_of(probe, w->held), "held")),
                          "%s: %s failed in %s too", w->knob, w->held, c);
                cr_expect(
                        json_is_true(json_object_get(guarantee_of(probe, "probe-report"), "held")),
                        "%s: the probe did not report completely in %s: %s", w->knob, c,
                        report_detail(probe));
        }
        json_decref(j);
        free(r.out);
}

Test(enforcement, no_seccomp_fails, .timeout = 300)
{
        expect_weakening_fails(&weakenings[0]);
}

Test(enforcement, no_masks_fails, .timeout = 300)
{
        expect_weakening_fails(&weakenings[1]);
}

Test(enforcement, keep_caps_fails, .timeout = 300)
{
        expect_weakening_fails(&weakenings[2]);
}

Test(enforcement, writable_root_fails, .timeout = 300)
{
        expect_weakening_fails(&weakenings[3]);
}

static void expect_fault_fails(const char *fault)
{
        cleanup_free char *opt = xasprintf("--test-probe-fault=%s", fault);
        struct check_run r;
        json_t *j, *probe;
        size_t i;

        require_root();
        run_check(&r, ECHO_MANIFEST, "--json", opt, NULL);
        cr_expect_eq(r.exit_code, 1, "a %s probe must fail the check (exit %d)", fault,
                     r.exit_code);
        j = parse_json(&r);
        cr_expect(json_is_false(json_object_get(j, "held")));
        json_array_foreach(json_object_get(j, "probes"), i, probe)
        {
                cr_expect(json_is_false(
                        json_object_get(guarantee_of(probe, "probe-report"), "held")));
                /* The attack guarantees whose reports are gone fail too. */
                cr_expect(json_is_false(
                        json_object_get(guarantee_of(probe, "memory-limit"), "held")));
        }
        json_decref(j);
        free(r.out);
}

Test(enforcement, silent_probe_fails, .timeout = 300)
{
        expect_fault_fails("silent");
}

Test(enforcement, crashing_probe_fails, .timeout = 300)
{
        expect_fault_fails("crash");
}

Test(enforcement, garbling_probe_fails, .timeout = 300)
{
        expect_fault_fails("garble");
}

Test(enforcement, bad_input_is_exit_2)
{
        struct check_run r;

        /* Neither needs root: usage and the manifest are checked first. */
        run_check(&r, TEST_SRCDIR "/tests/manifests/does-not-exist.yaml", NULL);
        cr_expect_eq(r.exit_code, 2);
        free(r.out);
        run_check(&r, ECHO_MANIFEST, "--test-weaken=everything", NULL);
        cr_expect_eq(r.exit_code, 2);
        free(r.out);
}

Test(enforcement, state_parent_under_tmp_is_refused)
{
        struct check_run r;

        require_root();
        /* Inside every container /tmp is a fresh tmpfs: a state dir there
         * would make the mask attempts vacuous, so the check refuses. */
        run_check(&r, ECHO_MANIFEST, "--state-parent", "/tmp", NULL);
        cr_expect_eq(r.exit_code, 3);
        free(r.out);
}
