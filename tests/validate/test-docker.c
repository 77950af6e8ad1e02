/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * `openenvctl validate` against a real Docker engine (suite 'docker'), from
 * the side of a hostile image author: every case builds (or reuses) an image
 * that attacks one seam and asserts the verdict, the exit code and the reason
 * in the JSON report, and that nothing was left behind.
 *
 *   - a hardened subject passes; each test-only fault knob fails;
 *   - a subject that ptrace-attaches to the helper cannot forge its results
 *     (and, as a control, does forge them when the helper is made readable);
 *   - a look-alike image planted under the helper's tag is never run;
 *   - option-shaped image names never reach docker as options;
 *   - VOLUME in allotted and other places fails, naming the path;
 *   - an image with no command is unusable input; a failed start carries
 *     Docker's whole error;
 *   - a subject that stops or kills the helper (before or after it execs)
 *     ends the run with a reason that says so;
 *   - a tree past the walk bound is reported as truncated.
 *
 * main() prepares once for all cases: uses $DOCKER_HOST when it answers,
 * otherwise starts a private dockerd with scripts/dockerd.sh in a temp dir
 * (stopped and removed at the end), and imports the images from tarballs we
 * write ourselves (static busybox, the static hostile-subject). Without
 * docker.io the cases skip outside CI and fail in CI.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/fd-util.h"
#include "base/util.h"
#include "base/command.h"
#include "validate/tar-writer.h"
#include "test-helpers.h"

#define SUBJECT_IMAGE "openenv-test-subject:hardened"
#define HOSTILE_REPO  "openenv-test-hostile"
#define BUSYBOX       "/bin/busybox"
#define SLEEP_CMD     "CMD [\"/bin/busybox\", \"sleep\", \"3600\"]"
#define TREE_FILES    5000 /* past PROBE_WALK_MAX_ENTRIES (4096) */

static char dockerd_dir[64];

/* test-helpers.h's require_feature() without cr_fatal (not in Criterion 2.4's
 * classic API): skip outside CI, fail in CI. */
#define require_docker()                                                           \
        do {                                                                       \
                if (!getenv("OPENENV_DOCKER_READY")) {                             \
                        if (test_in_ci())                                          \
                                cr_assert_fail("docker engine unavailable in CI"); \
                        cr_skip_test("docker engine (docker.io) unavailable");     \
                }                                                                  \
        } while (0)

static int run_in(char *const *argv, int stdin_fd, usec_t timeout, struct command_output *o)
{
        return command_run(&(struct command_spec){ .argv = argv,
                                                   .stdin_fd = stdin_fd,
                                                   .timeout = timeout,
                                                   .max_out = 4 << 20,
                                                   .cancel_fd = -1 },
                           o);
}

static int run(char *const *argv, int stdin_fd, struct command_output *o)
{
        return run_in(argv, stdin_fd, 120 * USEC_PER_SEC, o);
}

/* Runs a docker command for its effect; returns its exit status or -errno. */
static int docker_quiet(char *const *argv)
{
        struct command_output o;
        int r = run(argv, -1, &o);

        if (r < 0)
                return r;
        r = o.exit_status;
        command_output_done(&o);
        return r;
}

static bool docker_answers(void)
{
        char *const argv[] = { "docker", "info", "--format={{.ServerVersion}}", NULL };
        return docker_quiet(argv) == 0;
}

/* ---- images, from tarballs written here ---- */

struct image_spec {
        const char *tag;
        const char *changes[4]; /* `docker import --change` lines, NULL-terminated */
        bool hostile;           /* add /bin/hostile-subject */
        bool tmp_is_file;       /* /tmp a regular file: --tmpfs /tmp cannot mount */
        unsigned tree_files;    /* /many/fNNNN, root-owned */
        const char *planted;    /* /openenvd-probe is a script printing this file */
};

static int tar_host_file(int fd, const char *name, mode_t mode, const char *path)
{
        cleanup_free char *data = NULL;
        size_t len;
        int r = read_full_file_at(AT_FDCWD, path, 16 << 20, &data, &len);

        return r < 0 ? r : tar_add_file(fd, name, mode, 0, 0, data, len);
}

static int import_image(const struct image_spec *s)
{
        cleanup_close int fd = memfd_create("image", MFD_CLOEXEC);
        cleanup_strv char **argv = NULL;
        struct command_output o;
        int r;

        if (fd < 0)
                return -errno;
        /* /data owned by the subject user: an anonymous volume copies it, so
         * the volume fault is writable, as a real image's would be. */
        if ((r = tar_add_dir(fd, "bin/", 0755, 0, 0)) < 0 ||
            (r = tar_host_file(fd, "bin/busybox", 0755, BUSYBOX)) < 0 ||
            (r = tar_add_dir(fd, "data/", 0755, 65532, 65532)) < 0 ||
            (r = tar_add_dir(fd, "etc/", 0755, 0, 0)) < 0)
                return r;
        r = s->tmp_is_file ? tar_add_file(fd, "tmp", 0644, 0, 0, "x\n", 2)
                           : tar_add_dir(fd, "tmp/", 01777, 0, 0);
        if (r < 0)
                return r;
        if (s->hostile &&
            (r = tar_host_file(fd, "bin/hostile-subject", 0755, getenv("HOSTILE_SUBJECT"))) < 0)
                return r;
        if (s->tree_files > 0 && (r = tar_add_dir(fd, "many/", 0755, 0, 0)) < 0)
                return r;
        for (unsigned i = 0; i < s->tree_files; i++) {
                char name[32];
                (void) snprintf(name, sizeof(name), "many/f%05u", i);
                if ((r = tar_add_file(fd, name, 0644, 0, 0, "", 0)) < 0)
                        return r;
        }
        if (s->planted) {
                static const char script[] = "#!/bin/busybox sh\n/bin/busybox cat /recorded.json\n";
                if ((r = tar_add_file(fd, "openenvd-probe", 0755, 0, 0, script,
                                      sizeof(script) - 1)) < 0 ||
                    (r = tar_host_file(fd, "recorded.json", 0644, s->planted)) < 0)
                        return r;
        }
        if ((r = tar_finish(fd)) < 0)
                return r;
        if (lseek(fd, 0, SEEK_SET) < 0)
                return -errno;

        strv_push(&argv, xstrdup("docker"));
        strv_push(&argv, xstrdup("import"));
        for (size_t i = 0; i < ELEMENTSOF(s->changes) && s->changes[i]; i++) {
                strv_push(&argv, xstrdup("--change"));
                strv_push(&argv, xstrdup(s->changes[i]));
        }
        strv_push(&argv, xstrdup("-"));
        strv_push(&argv, xstrdup(s->tag));
        r = run(argv, fd, &o);
        if (r < 0)
                return r;
        r = o.exit_status == 0 ? 0 : -EIO;
        if (r < 0)
                fprintf(stderr, "docker import %s: %s\n", s->tag, o.err);
        command_output_done(&o);
        return r;
}

#define HOSTILE(mode)                                                                 \
        {                                                                             \
                .tag = HOSTILE_REPO ":" mode,                                         \
                .changes = { "ENTRYPOINT [\"/bin/hostile-subject\", \"" mode "\"]" }, \
                .hostile = true                                                       \
        }
#define WITH_VOLUME(name, path)                                                              \
        {                                                                                    \
                .tag = "openenv-test-volume:" name, .changes = { SLEEP_CMD, "VOLUME " path } \
        }

/* The subject's own command carries the marker that makes the suite's OCI
 * runtime (tests/validate/fault-runtime.py) rewrite its mounts. */
#define RUNTIME_FAULT(name)                                                                 \
        {                                                                                   \
                .tag = "openenv-test-rtfault:" name, .changes = {                           \
                        "CMD [\"/bin/busybox\", \"sh\", \"-c\", \"exec /bin/busybox sleep " \
                        "3600\", \"openenv-runtime-fault=" name "\"]"                       \
                }                                                                           \
        }

static const struct image_spec images[] = {
        { .tag = SUBJECT_IMAGE, .changes = { SLEEP_CMD } },
        HOSTILE("trace"),
        HOSTILE("stop"),
        HOSTILE("kill"),
        HOSTILE("stop-helper"),
        HOSTILE("kill-helper"),
        WITH_VOLUME("data", "/data"),
        WITH_VOLUME("dev-cache", "/dev/cache"),
        WITH_VOLUME("tmp-x", "/tmp/x"),
        WITH_VOLUME("tmp", "/tmp"),
        WITH_VOLUME("dev-shm", "/dev/shm"),
        { .tag = "openenv-test-nocmd:1" },
        { .tag = "openenv-test-tmpfile:1", .changes = { SLEEP_CMD }, .tmp_is_file = true },
        { .tag = "openenv-test-tree:1", .changes = { SLEEP_CMD }, .tree_files = TREE_FILES },
        { .tag = "openenv-test-health:1",
          .changes = { SLEEP_CMD, "HEALTHCHECK --interval=1s CMD [\"/bin/busybox\", \"true\"]" } },
        RUNTIME_FAULT("tmp-bind"),
        RUNTIME_FAULT("shm-bind"),
        RUNTIME_FAULT("mqueue-host"),
        RUNTIME_FAULT("run-bind"),
        RUNTIME_FAULT("scratch-owned"),
};

static char *volumes_before; /* the engine's volumes before any case ran */

static char *volume_list(void)
{
        struct command_output o;
        char *const vols[] = { "docker", "volume", "ls", "--quiet", NULL };
        char *list = NULL;

        if (run(vols, -1, &o) < 0)
                return NULL;
        if (o.exit_status == 0)
                list = xstrdup(o.out);
        command_output_done(&o);
        return list;
}

static void dockerd_script(const char *verb)
{
        struct command_output o;
        const char *script = getenv("DOCKERD_SH");
        char *const argv[] = { "bash", (char *) script, (char *) verb, dockerd_dir, NULL };
        if (run(argv, -1, &o) == 0) {
                if (o.exit_status != 0)
                        fprintf(stderr, "dockerd.sh %s: %s\n", verb, o.err);
                command_output_done(&o);
        }
}

/* Our private dockerd runs every container through the fault-injecting
 * runtime, copied into its directory (where it keeps its host state). */
static void fault_runtime_install(void)
{
        cleanup_free char *dst = xasprintf("%s/fault-runtime", dockerd_dir);
        cleanup_free char *text = NULL;
        cleanup_close int fd = -EBADF;
        const char *src = getenv("FAULT_RUNTIME");
        size_t len;

        if (!src || read_full_file_at(AT_FDCWD, src, 1 << 20, &text, &len) < 0)
                return;
        fd = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
        if (fd < 0 || write(fd, text, len) != (ssize_t) len)
                return;
        setenv("DOCKERD_RUNTIME", dst, 1);
        setenv("OPENENV_FAULT_RUNTIME", "1", 1);
}

static void setup(void)
{
        cleanup_free char *dummy = NULL;

        if (access(BUSYBOX, X_OK) < 0 || !getenv("OPENENVCTL_BIN") || !getenv("DOCKERD_SH") ||
            !getenv("HOSTILE_SUBJECT") || !getenv("RECORDED_PROBE")) {
                fprintf(stderr, "# docker suite: busybox-static or test paths missing\n");
                return;
        }
        if (!getenv("DOCKER_HOST") || !docker_answers()) {
                char *const argv[] = { "sh", "-c", "command -v dockerd && command -v docker",
                                       NULL };
                if (docker_quiet(argv) != 0) {
                        fprintf(stderr, "# docker suite: docker.io not installed\n");
                        return;
                }
                (void) snprintf(dockerd_dir, sizeof(dockerd_dir), "/tmp/openenv-dockerd-XXXXXX");
                if (!mkdtemp(dockerd_dir)) {
                        dockerd_dir[0] = '\0';
                        return;
                }
                dummy = xasprintf("unix://%s/docker.sock", dockerd_dir);
                setenv("DOCKER_HOST", dummy, 1);
                fault_runtime_install();
                dockerd_script("start");
                if (!docker_answers())
                        return;
        }
        for (size_t i = 0; i < ELEMENTSOF(images); i++)
                if (import_image(&images[i]) < 0)
                        return;
        volumes_before = volume_list();
        if (volumes_before)
                setenv("OPENENV_DOCKER_READY", "1", 1);
}

static void teardown(void)
{
        if (getenv("OPENENV_DOCKER_READY"))
                for (size_t i = 0; i < ELEMENTSOF(images); i++) {
                        char *const rmi[] = { "docker",  "image", "rm",
                                              "--force", "--",    (char *) images[i].tag,
                                              NULL };
                        (void) docker_quiet(rmi);
                }
        if (dockerd_dir[0])
                dockerd_script("stop");
        free(volumes_before);
}

/* ---- running the validator ---- */

struct outcome {
        int exit_code;
        json_t *report; /* the whole JSON report */
        json_t *result; /* borrowed from report: the single check result */
};

static void outcome_done(struct outcome *o)
{
        json_decref(o->report);
        *o = (struct outcome){};
}

/* openenvctl validate --json [--fault=F] [--] IMAGE; asserts a JSON report
 * whose exit_code is the process's. */
static struct outcome validate_args(const char *fault, bool dashdash, const char *image)
{
        cleanup_strv char **argv = NULL;
        struct command_output o;
        struct outcome out = {};

        require_docker();
        strv_push(&argv, xstrdup(getenv("OPENENVCTL_BIN")));
        strv_push(&argv, xstrdup("validate"));
        strv_push(&argv, xstrdup("--json"));
        if (fault)
                strv_push(&argv, xasprintf("--fault=%s", fault));
        if (dashdash)
                strv_push(&argv, xstrdup("--"));
        strv_push(&argv, xstrdup(image));
        cr_assert_eq(run_in(argv, -1, 240 * USEC_PER_SEC, &o), 0);
        out.exit_code = o.exit_status;
        out.report = json_loadb(o.out, o.out_len, 0, NULL);
        cr_assert_not_null(out.report, "no JSON report (exit %d): %s", o.exit_status, o.err);
        out.result = json_array_get(json_object_get(out.report, "results"), 0);
        cr_assert_not_null(out.result);
        cr_log_info("%s %s: %s", image, fault ? fault : "", o.out);
        cr_assert_eq(json_integer_value(json_object_get(out.report, "exit_code")), out.exit_code);
        cr_assert_eq(json_integer_value(json_object_get(out.report, "schema_version")), 1);
        cr_assert(json_is_integer(json_object_get(out.report, "policy_version")));
        cr_assert_str_eq(json_string_value(json_object_get(out.result, "check_id")),
                         "runtime.host_containment");
        command_output_done(&o);
        return out;
}

static struct outcome validate(const char *image, const char *fault)
{
        return validate_args(fault, false, image);
}

/* Cases run one at a time (--jobs=1), so any labelled container is a leak,
 * as is any new volume. */
static void assert_nothing_left(void)
{
        struct command_output o;
        cleanup_free char *vols = NULL;
        char *const ps[] = { "docker",  "ps",       "--all",
                             "--quiet", "--filter", "label=org.openenvd.validation.run",
                             NULL };

        cr_assert_eq(run(ps, -1, &o), 0);
        cr_assert_eq(o.exit_status, 0);
        cr_assert_eq(o.out_len, 0, "containers left behind: %s", o.out);
        command_output_done(&o);
        vols = volume_list();
        cr_assert_not_null(vols);
        cr_assert_str_eq(vols, volumes_before ? volumes_before : "", "volumes left behind");
}

static bool evidence_has(json_t *result, const char *needle)
{
        size_t i;
        json_t *l;
        json_array_foreach(json_object_get(result, "evidence"), i,
                           l) if (strstr(json_string_value(l), needle)) return true;
        return false;
}

static const char *status_of(const struct outcome *o)
{
        return json_string_value(json_object_get(o->result, "status"));
}

static const char *verdict_of(const struct outcome *o)
{
        return json_string_value(json_object_get(o->report, "verdict"));
}

static void check(const struct outcome *o, const char *what, const char *status,
                  const char *verdict, int exit_code, const char *needle)
{
        /* On a mismatch, the evidence and the processes the helper saw. */
        json_t *brief = json_pack(
                "{s:O,s:O}", "evidence", json_object_get(o->result, "evidence"), "processes",
                json_object_get(json_object_get(o->result, "measured"), "processes")
                        ?: json_null());
        cleanup_free char *why = json_dumps(brief, JSON_COMPACT);

        json_decref(brief);
        cr_assert_str_eq(status_of(o), status, "%s: status %s, want %s: %s", what, status_of(o),
                         status, why);
        cr_assert_str_eq(verdict_of(o), verdict, "%s: verdict %s, want %s: %s", what, verdict_of(o),
                         verdict, why);
        cr_assert_eq(o->exit_code, exit_code, "%s: exit %d, want %d: %s", what, o->exit_code,
                     exit_code, why);
        cr_assert(evidence_has(o->result, needle), "%s: no evidence '%s': %s", what, needle, why);
        if (streq(status, "fail"))
                cr_assert(json_is_string(json_object_get(o->result, "remediation")));
}

static void expect(const char *image, const char *fault, const char *status, int exit_code,
                   const char *needle)
{
        static const struct {
                const char *status, *verdict;
        } verdicts[] = { { "pass", "pass" }, { "skip", "warn" }, { "fail", "fail" } };
        const char *verdict = "?";
        struct outcome o = validate(image, fault);

        for (size_t i = 0; i < ELEMENTSOF(verdicts); i++)
                if (streq(status, verdicts[i].status))
                        verdict = verdicts[i].verdict;
        check(&o, fault ? fault : image, status, verdict, exit_code, needle);
        outcome_done(&o);
        assert_nothing_left();
}

static json_t *measured(const struct outcome *o, const char *key)
{
        return json_object_get(json_object_get(o->result, "measured"), key);
}

/* Cases with the fault runtime need our private dockerd (an engine given in
 * $DOCKER_HOST has no such runtime): skipped, and said so, without it. */
#define require_fault_runtime()                                                          \
        do {                                                                             \
                require_docker();                                                        \
                if (!getenv("OPENENV_FAULT_RUNTIME"))                                    \
                        cr_skip_test("fault runtime needs the suite's private dockerd"); \
        } while (0)

/* ---- the ordinary cases ---- */

Test(docker, hardened_subject_passes_and_shows_why)
{
        struct outcome o = validate(SUBJECT_IMAGE, NULL);
        json_t *mounts = measured(&o, "mounts"), *m, *helper = measured(&o, "helper");
        size_t i;

        check(&o, "hardened", "pass", "pass", 0, "measured containment matches the contract");
        /* The report carries what was measured: launch, processes, every
         * mount with its verdict, and the helper it was measured with. */
        cr_assert_str_eq(json_string_value(json_object_get(measured(&o, "launch"), "verdict")),
                         "hardened");
        cr_assert_gt(json_array_size(measured(&o, "processes")), 0);
        cr_assert_gt(json_array_size(mounts), 5);
        json_array_foreach(mounts, i, m)
                cr_assert(json_is_string(json_object_get(m, "verdict")), "mount %zu", i);
        cr_assert_eq(json_integer_value(json_object_get(helper, "dumpable_at_start")), 0);
        cr_assert_eq(json_integer_value(json_object_get(helper, "tracer_pid")), 0);
        cr_assert(startswith(json_string_value(json_object_get(helper, "layer")), "sha256:"));
        cr_assert(startswith(json_string_value(json_object_get(o.report, "image_id")), "sha256:"));
        outcome_done(&o);
        assert_nothing_left();
}

Test(docker, no_read_only_fails)
{
        expect(SUBJECT_IMAGE, "no-read-only", "fail", 1, "image root / is mounted read-write");
}

Test(docker, dev_tmpfs_fails)
{
        expect(SUBJECT_IMAGE, "dev-tmpfs", "fail", 1,
               "subject can write directory /dev/openenv-fault");
}

Test(docker, writable_bind_fails)
{
        expect(SUBJECT_IMAGE, "writable-bind", "fail", 1,
               "subject can write directory /mnt/openenv-fault");
}

Test(docker, volume_fails)
{
        expect(SUBJECT_IMAGE, "volume", "fail", 1, "subject can write directory /data");
}

Test(docker, privileged_fails)
{
        expect(SUBJECT_IMAGE, "privileged", "fail", 1, "holds capabilities: cap_bnd=");
}

Test(docker, cap_add_fails)
{
        expect(SUBJECT_IMAGE, "cap-add", "fail", 1, "holds capabilities: cap_bnd=0000000000000400");
}

Test(docker, root_fails)
{
        expect(SUBJECT_IMAGE, "root", "fail", 1, "runs as root (uid 0)");
}

Test(docker, host_pid_fails)
{
        expect(SUBJECT_IMAGE, "host-pid", "fail", 1,
               "subject shares the host's pid namespace (measured)");
}

Test(docker, broken_control_skips)
{
        expect(SUBJECT_IMAGE, "broken-control", "skip", 0, "positive control failed for /tmp");
}

Test(docker, violation_plus_broken_control_fails)
{
        expect(SUBJECT_IMAGE, "broken-control,dev-tmpfs", "fail", 1,
               "also unproven: positive control failed");
}

Test(docker, missing_image_is_unusable_input)
{
        struct outcome o = validate("openenv-no-such-image:0", NULL);

        check(&o, "missing", "skip", "unusable", 2, "no such image: openenv-no-such-image:0");
        outcome_done(&o);
        assert_nothing_left();
}

/* ---- a subject that goes after the helper ---- */

Test(docker, tracer_cannot_forge_the_helper)
{
        /* The subject ptrace-attaches to every new process and rewrites
         * "writable" into "denied" on stdout; the slow-helper knob gives it
         * all the time it wants. The helper is execute-only, hence not
         * dumpable from its first instruction: the attach fails and the
         * writable tmpfs is reported. */
        struct outcome o = validate(HOSTILE_REPO ":trace", "dev-tmpfs,slow-helper");

        check(&o, "tracer", "fail", "fail", 1, "subject can write directory /dev/openenv-fault");
        cr_assert_not(evidence_has(o.result, "malformed"));
        cr_assert_eq(json_integer_value(json_object_get(measured(&o, "helper"), "tracer_pid")), 0);
        outcome_done(&o);
        assert_nothing_left();
}

Test(docker, tracer_does_forge_a_readable_helper)
{
        /* The control for the case above: with the helper binary readable
         * (test-only fault), the same tracer attaches and rewrites the
         * results. That must be caught, never a PASS. */
        cleanup_free char *scope = NULL;
        size_t len;
        bool yama = read_full_file_at(AT_FDCWD, "/proc/sys/kernel/yama/ptrace_scope", 64, &scope,
                                      &len) >= 0;

        require_feature(!yama || scope[0] == '0', "ptrace between non-relatives (yama scope 0)");
        struct outcome o =
                validate(HOSTILE_REPO ":trace", "dev-tmpfs,traceable-helper,slow-helper");

        check(&o, "readable helper", "fail", "fail", 1, "malformed containment evidence");
        cr_assert(evidence_has(o.result, "the helper was traced by process") ||
                          evidence_has(o.result, "denied with errno 0 (impossible"),
                  "the tracer left no trace: did it attach?");
        outcome_done(&o);
        assert_nothing_left();
}

Test(docker, helper_stopped_before_it_runs)
{
        /* SIGSTOP on the runtime's init, waiting to exec the helper. */
        expect(HOSTILE_REPO ":stop", NULL, "skip", 0,
               "the helper never started: for 10 s the runtime's init");
}

Test(docker, helper_stopped_while_it_runs)
{
        expect(HOSTILE_REPO ":stop-helper", "slow-helper", "skip", 0,
               "the helper was stopped (process state T");
}

Test(docker, helper_killed_before_it_runs)
{
        expect(HOSTILE_REPO ":kill", NULL, "skip", 0, "the helper was killed before it ran");
}

Test(docker, helper_killed_while_it_runs)
{
        expect(HOSTILE_REPO ":kill-helper", "slow-helper", "skip", 0,
               "the helper was killed by signal 9");
}

/* Removed however the case ends: the look-alike, and the helper image it
 * pushed off the tag (the provider imports a fresh one). */
static char planted_id[80], displaced_id[80];

static void planted_remove(void)
{
        char *const ids[] = { planted_id, displaced_id };

        for (size_t i = 0; i < ELEMENTSOF(ids); i++) {
                char *const rmi[] = { "docker", "image", "rm", "--force", "--", ids[i], NULL };
                if (ids[i][0])
                        (void) docker_quiet(rmi);
        }
}

Test(docker, planted_helper_tag_is_never_run, .fini = planted_remove)
{
        /* Whoever can reach the engine plants a look-alike under the helper's
         * tag that prints a recorded clean document (test-grader.c proves it
         * would PASS). The provider must run its own bytes: the writable
         * tmpfs, which the recording knows nothing about, is still found. */
        struct outcome o = validate(SUBJECT_IMAGE, NULL);
        const char *tag = json_string_value(json_object_get(measured(&o, "helper"), "tag"));
        const char *layer = json_string_value(json_object_get(measured(&o, "helper"), "layer"));
        cleanup_free char *tag_copy = xstrdup(tag), *layer_copy = xstrdup(layer);
        (void) snprintf(displaced_id, sizeof(displaced_id), "%s",
                        json_string_value(json_object_get(measured(&o, "helper"), "id")));
        struct image_spec planted = { .tag = tag_copy, .planted = getenv("RECORDED_PROBE") };
        struct command_output out;
        char *const id_of[] = { "docker", "image",  "inspect", "--format={{.Id}}",
                                "--",     tag_copy, NULL };

        outcome_done(&o);
        cr_assert_eq(import_image(&planted), 0);
        cr_assert_eq(run(id_of, -1, &out), 0);
        (void) snprintf(planted_id, sizeof(planted_id), "%.*s", (int) strcspn(out.out, "\n"),
                        out.out);
        command_output_done(&out);
        cr_assert(startswith(planted_id, "sha256:"), "%s", planted_id);

        o = validate(SUBJECT_IMAGE, "dev-tmpfs");
        check(&o, "planted", "fail", "fail", 1, "subject can write directory /dev/openenv-fault");
        cr_assert_str_eq(json_string_value(json_object_get(measured(&o, "helper"), "layer")),
                         layer_copy);
        cr_assert_str_neq(json_string_value(json_object_get(measured(&o, "helper"), "id")),
                          planted_id);
        outcome_done(&o);
        assert_nothing_left();
}

/* ---- what the image declares ---- */

Test(docker, option_shaped_names_never_reach_docker)
{
        static const char *const names[] = { "--format={{.Id}}", "-H", "--privileged" };

        for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                struct outcome o = validate_args(NULL, true, names[i]);
                check(&o, names[i], "skip", "unusable", 2, "not a valid image reference");
                cr_assert(json_is_null(json_object_get(o.report, "run_id")), "%s", names[i]);
                outcome_done(&o);
        }
        /* Without "--" it is a bad option, still a report. */
        struct outcome o = validate("--format={{.Id}}", NULL);
        check(&o, "option", "skip", "unusable", 2, "unknown option '--format={{.Id}}'");
        outcome_done(&o);
        assert_nothing_left();
}

static char fake_dir[64];

static void fake_dir_make(void)
{
        (void) snprintf(fake_dir, sizeof(fake_dir), "/tmp/openenv-fake-docker-XXXXXX");
        cr_assert_not_null(mkdtemp(fake_dir));
}

static void fake_dir_remove(void)
{
        (void) rm_rf_at(AT_FDCWD, fake_dir);
}

/* A docker CLI stand-in in fake_dir; returns its path. */
static char *fake_docker_write(const char *script)
{
        char *fake = xasprintf("%s/docker", fake_dir);
        int fd = open(fake, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);

        cr_assert_geq(fd, 0);
        cr_assert_eq(write_all(fd, script, strlen(script)), 0);
        close(fd);
        return fake;
}

Test(docker, image_reference_reaches_docker_after_dash_dash, .init = fake_dir_make,
     .fini = fake_dir_remove)
{
        /* A docker CLI stand-in that logs its argv: whatever the image
         * argument is, it comes after "--". */
        cleanup_free char *log = xasprintf("%s/argv", fake_dir);
        cleanup_free char *text = NULL;
        struct command_output o;
        size_t len;
        cleanup_free char *script = xasprintf("#!/bin/sh\nprintf '%%s\\n' \"$*\" >> %s\n"
                                              "[ \"$2\" = version ] && { echo 20.10; exit 0; }\n"
                                              "[ \"$2\" = ps ] && exit 0\n"
                                              "echo 'Error: No such image: x' >&2; exit 1\n",
                                              log);
        cleanup_free char *fake = fake_docker_write(script);
        char *const argv[] = { getenv("OPENENVCTL_BIN"),
                               "validate",
                               "--json",
                               "--docker",
                               fake,
                               "--host=unix:///nonexistent.sock",
                               "localhost:5000/a/b:c",
                               NULL };
        cr_assert_eq(run(argv, -1, &o), 0);
        cr_assert_eq(o.exit_status, 2, "%s", o.err);
        command_output_done(&o);
        cr_assert_eq(read_full_file_at(AT_FDCWD, log, 4096, &text, &len), 0);
        cr_log_info("fake docker saw:\n%s", text);
        cr_assert(strstr(text, "--host=unix:///nonexistent.sock version"), "%s", text);
        cr_assert(strstr(text, "--host=unix:///nonexistent.sock image inspect -- "
                               "localhost:5000/a/b:c\n"),
                  "%s", text);
}

static void expect_volume_fails(const char *tag, const char *path)
{
        cleanup_free char *needle = xasprintf("image declares VOLUME %s:", path);
        struct outcome o = validate(tag, NULL);

        check(&o, tag, "fail", "fail", 1, needle);
        /* Not launched: Docker would have created the volume already. */
        cr_assert(evidence_has(o.result, "not launched: the image declares VOLUMEs"));
        outcome_done(&o);
        assert_nothing_left();
}

Test(docker, volume_outside_allotted_roots_fails)
{
        expect_volume_fails("openenv-test-volume:data", "/data");
}

Test(docker, volume_under_dev_fails)
{
        expect_volume_fails("openenv-test-volume:dev-cache", "/dev/cache");
}

Test(docker, volume_below_an_allotted_root_fails)
{
        expect_volume_fails("openenv-test-volume:tmp-x", "/tmp/x");
}

Test(docker, volume_on_allotted_roots_fails)
{
        expect_volume_fails("openenv-test-volume:tmp", "/tmp");
        expect_volume_fails("openenv-test-volume:dev-shm", "/dev/shm");
}

Test(docker, image_without_command_is_unusable_input)
{
        struct outcome o = validate("openenv-test-nocmd:1", NULL);

        check(&o, "nocmd", "skip", "unusable", 2,
              "image has no command: it declares neither ENTRYPOINT nor CMD");
        cr_assert(startswith(json_string_value(json_object_get(o.report, "image_id")), "sha256:"));
        outcome_done(&o);
        assert_nothing_left();
}

Test(docker, failed_start_carries_dockers_whole_error)
{
        /* /tmp is a file, so the engine cannot mount the /tmp tmpfs: the
         * cause is on one line, "failed to start containers" on the last. */
        struct outcome o = validate("openenv-test-tmpfile:1", NULL);

        check(&o, "tmpfile", "skip", "warn", 0, "not a directory");
        cr_assert(evidence_has(o.result, "failed to start containers"));
        outcome_done(&o);
        assert_nothing_left();
}

Test(docker, walk_past_its_bound_says_truncated)
{
        /* A writable root holding more entries than the walk examines: the
         * FAIL stands, and the unwalked rest is reported as truncated. */
        struct outcome o = validate("openenv-test-tree:1", "no-read-only");

        check(&o, "tree", "fail", "fail", 1, "image root / is mounted read-write");
        cr_assert(evidence_has(o.result, "write check truncated at /: walk bound "
                                         "max_entries=4096 reached after 4096 entries"));
        outcome_done(&o);
        assert_nothing_left();
}

int main(int argc, char **argv)
{
        struct criterion_test_set *tests = criterion_initialize();
        int result = 0;

        if (criterion_handle_args(argc, argv, true)) {
                setup();
                result = !criterion_run_all_tests(tests);
                teardown();
        }
        criterion_finalize(tests);
        return result;
}

/* ---- a runtime that backs the subject's mounts with host storage ----
 *
 * Behind Docker's back (its inspection shows the hardened launch): the suite's
 * OCI runtime rewrites the subject's mounts. What backs a mount decides, not
 * its path, type or mode (docs/VALIDATE.md "What backs a mount"). */

/* The runtime removes its host state when the container goes (runc delete). */
static void expect_runtime_fault(const char *name, const char *needle)
{
        cleanup_free char *image = xasprintf("openenv-test-rtfault:%s", name);
        cleanup_free char *faults = xasprintf("%s/faults", dockerd_dir);
        cleanup_free char *ls = xasprintf("ls -A %s 2>/dev/null", faults);
        char *const argv[] = { "sh", "-c", ls, NULL };
        struct command_output o;

        require_fault_runtime();
        expect(image, NULL, "fail", 1, needle);
        cr_assert_eq(run(argv, -1, &o), 0);
        cr_assert_eq(o.out_len, 0, "fault runtime state left: %s", o.out);
        command_output_done(&o);
}

Test(docker, host_directory_over_tmp_fails)
{
        expect_runtime_fault("tmp-bind",
                             "allotted root /tmp is not a private tmpfs: it is host storage (ext4");
}

Test(docker, host_directory_over_dev_shm_fails)
{
        expect_runtime_fault("shm-bind",
                             "allotted root /dev/shm is not a private tmpfs: it is host storage");
}

Test(docker, host_mqueue_over_dev_mqueue_fails)
{
        /* The host's IPC namespace's queues, not the subject's own. */
        expect_runtime_fault("mqueue-host",
                             "/dev/mqueue is host storage mounted read-write (mqueue");
}

Test(docker, host_directory_under_run_fails_whatever_its_mode)
{
        /* Root-owned 0755: the subject cannot write it now; it is the
         * host's disk all the same. */
        expect_runtime_fault("run-bind",
                             "/run/openenv-fault is host storage mounted read-write (ext4");
}

Test(docker, owned_tmpfs_without_write_bit_fails)
{
        /* A tmpfs the subject owns, mode 0555 when the helper looks: its
         * owner makes it writable again with one chmod. */
        expect_runtime_fault(
                "scratch-owned",
                "subject can write directory /scratch (on /scratch, tmpfs; it owns it");
}

/* ---- concurrent runs share one helper image ---- */

#define CONCURRENT_RUNS 3

/* The engine's image IDs matching a `docker images` filter, one a line. */
static char *image_ids(const char *filter)
{
        char *const argv[] = { "docker",     "images",   "--all",         "--quiet",
                               "--no-trunc", "--filter", (char *) filter, NULL };
        struct command_output o;
        char *ids;

        cr_assert_eq(run(argv, -1, &o), 0);
        cr_assert_eq(o.exit_status, 0, "%s", o.err);
        ids = xstrdup(o.out);
        command_output_done(&o);
        return ids;
}

static size_t count_lines(const char *s)
{
        size_t n = 0;
        for (; *s; s++)
                n += *s == '\n';
        return n;
}

/* Starts openenvctl validate --json with a docker stand-in, stdout to out. */
static pid_t spawn_validate(const char *docker, const char *out)
{
        pid_t pid = fork();

        cr_assert_geq(pid, 0);
        if (pid == 0) {
                int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
                if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0)
                        _exit(127);
                execl(getenv("OPENENVCTL_BIN"), "openenvctl", "validate", "--json", "--docker",
                      docker, SUBJECT_IMAGE, (char *) NULL);
                _exit(127);
        }
        return pid;
}

Test(docker, concurrent_runs_share_one_helper_image, .init = fake_dir_make, .fini = fake_dir_remove)
{
        /* Three runs with no helper cached, held together (a barrier in a
         * docker stand-in) until each has looked for the helper and found
         * none: each then brings it in. They must end with one helper image
         * and no untagged leftovers. */
        cleanup_free char *script = xasprintf(
                "#!/bin/sh\n"
                "case \"$*\" in *'image inspect -- openenvd-probe-helper:'*)\n"
                "  mkdir %s/arrived-$$; n=0\n"
                "  while [ $(ls -d %s/arrived-* | wc -l) -lt %d ] && [ $n -lt 1200 ]; do\n"
                "    sleep 0.05; n=$((n+1)); done;;\n"
                "esac\n"
                "exec docker \"$@\"\n",
                fake_dir, fake_dir, CONCURRENT_RUNS);
        cleanup_free char *helpers = NULL, *dangling_before = NULL, *dangling = NULL, *fake = NULL;
        pid_t pids[CONCURRENT_RUNS];

        require_docker();
        fake = fake_docker_write(script);
        /* No helper cached (it comes back with the first run below). */
        helpers = image_ids("reference=openenvd-probe-helper");
        for (char *p = helpers, *nl; *p; p = nl + 1) {
                nl = strchr(p, '\n');
                *nl = '\0';
                char *const rmi[] = { "docker", "image", "rm", "--force", "--", p, NULL };
                cr_assert_eq(docker_quiet(rmi), 0);
        }
        free(helpers);
        dangling_before = image_ids("dangling=true");

        for (int i = 0; i < CONCURRENT_RUNS; i++) {
                cleanup_free char *out = xasprintf("%s/report-%d", fake_dir, i);
                pids[i] = spawn_validate(fake, out);
        }
        for (int i = 0; i < CONCURRENT_RUNS; i++) {
                cleanup_free char *out = xasprintf("%s/report-%d", fake_dir, i);
                cleanup_free char *text = NULL;
                json_t *report;
                size_t len;
                int status;

                cr_assert_eq(waitpid(pids[i], &status, 0), pids[i]);
                cr_assert_eq(read_full_file_at(AT_FDCWD, out, 1 << 22, &text, &len), 0);
                report = json_loadb(text, len, 0, NULL);
                cr_assert_not_null(report, "run %d: no report", i);
                cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "run %d: %s", i, text);
                cr_assert_str_eq(json_string_value(json_object_get(report, "verdict")), "pass",
                                 "run %d: %s", i, text);
                json_decref(report);
        }
        helpers = image_ids("reference=openenvd-probe-helper");
        cr_assert_eq(count_lines(helpers), 1, "helper images: %s", helpers);
        dangling = image_ids("dangling=true");
        cr_assert_str_eq(dangling, dangling_before, "untagged images left: %s", dangling);
        assert_nothing_left();
}

/* ---- a report that cannot be written ---- */

Test(docker, report_on_a_full_device_is_an_error_on_stderr)
{
        /* stdout on a full device: the report (here: unusable input, exit 2
         * otherwise) never arrives, so the run is an error, said on stderr.
         * No docker needed: the name is refused before any docker call. */
        char *const argv[] = { "sh", "-c", "exec \"$0\" validate --json -- -H >/dev/full",
                               getenv("OPENENVCTL_BIN"), NULL };
        struct command_output o;

        cr_assert_not_null(argv[3]);
        cr_assert_eq(run(argv, -1, &o), 0);
        cr_assert_eq(o.exit_status, 3, "exit %d: %s", o.exit_status, o.err);
        cr_assert(strstr(o.err, "the report (verdict unusable) could not be written to stdout: "
                                "No space left on device"),
                  "%s", o.err);
        command_output_done(&o);
}

/* Removes what a run labelled run_id left (the case below leaves it on
 * purpose: the engine "refused" every rm). */
static void remove_run(const char *run_id)
{
        cleanup_free char *filter = xasprintf("label=org.openenvd.validation.run=%s", run_id);
        char *const ps[] = { "docker", "ps", "--all", "--quiet", "--filter", filter, NULL };
        struct command_output o;

        cr_assert_eq(run(ps, -1, &o), 0);
        for (char *p = o.out, *nl; p && *p; p = nl) {
                nl = strchr(p, '\n');
                if (nl)
                        *nl++ = '\0';
                char *const rm[] = { "docker", "rm", "--force", "--volumes", "--", p, NULL };
                cr_assert_eq(docker_quiet(rm), 0);
        }
        command_output_done(&o);
}

Test(docker, interrupted_with_unverified_cleanup_is_an_error_naming_what_is_left,
     .init = fake_dir_make, .fini = fake_dir_remove)
{
        /* SIGINT arrives while the subject starts (a docker stand-in sends
         * it), and the engine then refuses every rm, as a frozen one would
         * time out: the containers stay. The report must be an error (3)
         * that names them, never "interrupted: everything created was
         * removed". */
        const char *script = "#!/bin/sh\n"
                             "case \" $* \" in\n"
                             "*' start -- '*) kill -INT $PPID;;\n"
                             "*' rm '*) echo 'Error response from daemon: frozen' >&2; exit 1;;\n"
                             "esac\n"
                             "exec docker \"$@\"\n";
        cleanup_free char *fake = NULL;
        struct command_output o;
        json_t *report, *result;
        const char *run_id;

        require_docker();
        fake = fake_docker_write(script);
        char *const argv[] = { getenv("OPENENVCTL_BIN"),
                               "validate",
                               "--json",
                               "--docker",
                               fake,
                               SUBJECT_IMAGE,
                               NULL };
        cr_assert_eq(run(argv, -1, &o), 0);
        report = json_loadb(o.out, o.out_len, 0, NULL);
        cr_assert_not_null(report, "exit %d, no report: %s", o.exit_status, o.err);
        run_id = json_string_value(json_object_get(report, "run_id"));
        cr_assert_not_null(run_id);
        remove_run(run_id);
        result = json_array_get(json_object_get(report, "results"), 0);
        cr_log_info("%s", o.out);
        cr_assert_eq(o.exit_status, 3, "exit %d: %s", o.exit_status, o.out);
        cr_assert_str_eq(json_string_value(json_object_get(report, "verdict")), "error");
        cr_assert_not(evidence_has(result, "everything created was removed"), "%s", o.out);
        cr_assert(evidence_has(result, "cleanup could not be verified: validation container"), "%s",
                  o.out);
        cr_assert(evidence_has(result, "-subject"), "%s", o.out);
        json_decref(report);
        command_output_done(&o);
        assert_nothing_left();
}

/* Runs validate --json with the stand-in and checks it reports an interrupt
 * by sig: verdict interrupted, exit 128 + sig, nothing left. wrap, if not
 * NULL, is a python3 program that execs argv[1:] (the signal set-up). */
static void expect_interrupted(const char *fake, const char *wrap, int sig)
{
        char *const plain[] = { getenv("OPENENVCTL_BIN"),
                                "validate",
                                "--json",
                                "--docker",
                                (char *) fake,
                                SUBJECT_IMAGE,
                                NULL };
        char *const wrapped[] = { "python3", "-c",     (char *) wrap, plain[0], plain[1],
                                  plain[2],  plain[3], plain[4],      plain[5], NULL };
        struct command_output o;
        json_t *report;

        cr_assert_not_null(plain[0]);
        cr_assert_eq(run(wrap ? wrapped : plain, -1, &o), 0);
        cr_log_info("exit %d: %s%s", o.exit_status, o.out, o.err);
        report = json_loadb(o.out, o.out_len, 0, NULL);
        cr_assert_not_null(report, "exit %d, no report: %s", o.exit_status, o.err);
        cr_assert_eq(o.exit_status, 128 + sig, "exit %d: %s", o.exit_status, o.out);
        cr_assert_str_eq(json_string_value(json_object_get(report, "verdict")), "interrupted");
        cr_assert_eq(json_integer_value(json_object_get(report, "exit_code")), 128 + sig);
        cr_assert(evidence_has(json_array_get(json_object_get(report, "results"), 0),
                               "everything created was removed"),
                  "%s", o.out);
        json_decref(report);
        command_output_done(&o);
        assert_nothing_left();
}

Test(docker, sigterm_during_the_engine_check_is_an_interrupted_report, .init = fake_dir_make,
     .fini = fake_dir_remove)
{
        /* The first docker call (version) is where SIGTERM used to end the
         * run with exit 1 and nothing on stdout. */
        cleanup_free char *fake = NULL;

        require_docker();
        fake = fake_docker_write(
                "#!/bin/sh\n"
                "case \" $* \" in *' version '*) kill -TERM $PPID; sleep 5;; esac\n"
                "exec docker \"$@\"\n");
        expect_interrupted(fake, NULL, SIGTERM);
}

Test(docker, signal_before_the_first_instruction_is_an_interrupted_report, .init = fake_dir_make,
     .fini = fake_dir_remove)
{
        /* A SIGTERM that comes before validate runs a line of its own (the
         * caller holds it blocked across exec: it stays pending) is
         * reported like a later one, and no docker call creates anything. */
        cleanup_free char *log = xasprintf("%s/argv", fake_dir);
        cleanup_free char *script = xasprintf("#!/bin/sh\nprintf '%%s\\n' \"$*\" >> %s\n"
                                              "exec docker \"$@\"\n",
                                              log);
        cleanup_free char *fake = NULL, *text = NULL;
        size_t len;

        require_docker();
        fake = fake_docker_write(script);
        expect_interrupted(fake,
                           "import os, signal, sys\n"
                           "signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGTERM])\n"
                           "os.kill(os.getpid(), signal.SIGTERM)\n"
                           "os.execv(sys.argv[1], sys.argv[1:])\n",
                           SIGTERM);
        if (read_full_file_at(AT_FDCWD, log, 1 << 16, &text, &len) == 0) {
                cr_log_info("fake docker saw:\n%s", text);
                cr_assert_null(strstr(text, " create "), "%s", text);
        }
}

Test(docker, subject_health_check_is_off)
{
        /* The image declares a health check: the engine would run its
         * command in the subject beside the subject's processes while the
         * helper counts them. The subject runs with it off. */
        struct outcome o = validate("openenv-test-health:1", NULL);

        check(&o, "health", "pass", "pass", 0, "measured containment matches the contract");
        cr_assert(json_is_false(json_object_get(measured(&o, "launch"), "healthcheck")),
                  "launch.healthcheck is not false");
        outcome_done(&o);
        assert_nothing_left();
}
