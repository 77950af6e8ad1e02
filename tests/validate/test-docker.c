/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Regression cases against a real Docker engine (suite 'docker'): a hardened
 * subject passes; each test-only fault knob fails with the right evidence; a
 * broken positive control skips; a violation plus a broken control fails.
 *
 * main() prepares once for all cases: uses $DOCKER_HOST when it answers,
 * otherwise starts a private dockerd with scripts/dockerd.sh in a temp dir
 * (stopped and removed at the end), and imports one tiny subject image (a
 * static busybox running `sleep`) from a tarball we write ourselves. Without
 * docker.io the cases skip outside CI and fail in CI.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/fd-util.h"
#include "base/util.h"
#include "validate/command.h"
#include "validate/tar-writer.h"
#include "test-helpers.h"

#define SUBJECT_IMAGE "openenv-test-subject:hardened"
#define BUSYBOX       "/bin/busybox"

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

static int run(char *const *argv, int stdin_fd, struct command_output *o)
{
        return command_run(&(struct command_spec){ .argv = argv,
                                                   .stdin_fd = stdin_fd,
                                                   .timeout = 120 * USEC_PER_SEC,
                                                   .max_out = 4 << 20,
                                                   .cancel_fd = -1 },
                           o);
}

static bool docker_answers(void)
{
        struct command_output o;
        char *const argv[] = { "docker", "info", "--format", "{{.ServerVersion}}", NULL };
        bool ok = run(argv, -1, &o) == 0 && o.exit_status == 0;
        if (ok || o.out)
                command_output_done(&o);
        return ok;
}

static int build_subject_image(void)
{
        cleanup_free char *bb = NULL;
        cleanup_close int fd = memfd_create("subject", MFD_CLOEXEC);
        struct command_output o;
        size_t len;
        int r;
        char *const argv[] = { "docker",   "import",
                               "--change", "CMD [\"/bin/busybox\", \"sleep\", \"3600\"]",
                               "-",        SUBJECT_IMAGE,
                               NULL };

        r = read_full_file_at(AT_FDCWD, BUSYBOX, 16 << 20, &bb, &len);
        if (r < 0 || fd < 0)
                return r < 0 ? r : -errno;
        /* /data owned by the subject user: an anonymous volume copies it, so
         * the volume fault is writable, as a real image's would be. */
        if ((r = tar_add_dir(fd, "bin/", 0755, 0, 0)) < 0 ||
            (r = tar_add_file(fd, "bin/busybox", 0755, 0, 0, bb, len)) < 0 ||
            (r = tar_add_dir(fd, "data/", 0755, 65532, 65532)) < 0 ||
            (r = tar_add_dir(fd, "etc/", 0755, 0, 0)) < 0 ||
            (r = tar_add_dir(fd, "tmp/", 01777, 0, 0)) < 0 || (r = tar_finish(fd)) < 0)
                return r;
        if (lseek(fd, 0, SEEK_SET) < 0)
                return -errno;
        r = run(argv, fd, &o);
        if (r < 0)
                return r;
        r = o.exit_status == 0 ? 0 : -EIO;
        if (r < 0)
                fprintf(stderr, "docker import: %s\n", o.err);
        command_output_done(&o);
        return r;
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

static void setup(void)
{
        cleanup_free char *dummy = NULL;

        if (access(BUSYBOX, X_OK) < 0 || !getenv("OPENENVCTL_BIN") || !getenv("DOCKERD_SH")) {
                fprintf(stderr, "# docker suite: busybox-static or test paths missing\n");
                return;
        }
        if (!getenv("DOCKER_HOST") || !docker_answers()) {
                struct command_output o;
                char *const argv[] = { "sh", "-c", "command -v dockerd && command -v docker",
                                       NULL };
                if (run(argv, -1, &o) < 0 || o.exit_status != 0) {
                        fprintf(stderr, "# docker suite: docker.io not installed\n");
                        return;
                }
                command_output_done(&o);
                (void) snprintf(dockerd_dir, sizeof(dockerd_dir), "/tmp/openenv-dockerd-XXXXXX");
                if (!mkdtemp(dockerd_dir)) {
                        dockerd_dir[0] = '\0';
                        return;
                }
                dummy = xasprintf("unix://%s/docker.sock", dockerd_dir);
                setenv("DOCKER_HOST", dummy, 1);
                dockerd_script("start");
                if (!docker_answers())
                        return;
        }
        if (build_subject_image() < 0)
                return;
        setenv("OPENENV_DOCKER_READY", "1", 1);
}

static void teardown(void)
{
        struct command_output o;
        char *const rmi[] = { "docker", "image", "rm", "--force", SUBJECT_IMAGE, NULL };

        if (getenv("OPENENV_DOCKER_READY") && run(rmi, -1, &o) == 0)
                command_output_done(&o);
        if (dockerd_dir[0])
                dockerd_script("stop");
}

struct outcome {
        int exit_code;
        char *run_id;   /* owned */
        json_t *result; /* the single check result */
};

static struct outcome validate(const char *fault)
{
        cleanup_free char *fault_arg = fault ? xasprintf("--fault=%s", fault) : NULL;
        char *const argv[] = {
                getenv("OPENENVCTL_BIN"), "validate", "--json", SUBJECT_IMAGE, fault_arg, NULL
        };
        struct command_output o;
        struct outcome out = {};
        json_t *doc;

        require_docker();
        cr_assert_eq(command_run(&(struct command_spec){ .argv = argv,
                                                         .stdin_fd = -1,
                                                         .timeout = 240 * USEC_PER_SEC,
                                                         .max_out = 4 << 20,
                                                         .cancel_fd = -1 },
                                 &o),
                     0);
        out.exit_code = o.exit_status;
        doc = json_loadb(o.out, o.out_len, 0, NULL);
        cr_assert_not_null(doc, "no JSON report (exit %d): %s", o.exit_status, o.err);
        out.result = json_incref(json_array_get(json_object_get(doc, "results"), 0));
        out.run_id = xstrdup(json_string_value(json_object_get(doc, "run_id")) ?: "");
        cr_assert_not_null(out.result);
        cr_log_info("%s: %s", fault ? fault : "hardened", o.out);
        json_decref(doc);
        command_output_done(&o);
        return out;
}

/* Cases run one at a time (--jobs=1), so any labelled container is a leak;
 * with a run id, that run's label is checked by value too. */
static void assert_nothing_left(const char *run_id)
{
        struct command_output o;
        cleanup_free char *filter =
                run_id && *run_id ? xasprintf("label=org.openenvd.validation.run=%s", run_id)
                                  : xstrdup("label=org.openenvd.validation.run");
        char *const argv[] = { "docker", "ps", "--all", "--quiet", "--filter", filter, NULL };
        cr_assert_eq(run(argv, -1, &o), 0);
        cr_assert_eq(o.exit_status, 0);
        cr_assert_eq(o.out_len, 0, "containers left behind: %s", o.out);
        command_output_done(&o);
}

static bool evidence_has(json_t *result, const char *needle)
{
        size_t i;
        json_t *l;
        json_array_foreach(json_object_get(result, "evidence"), i,
                           l) if (strstr(json_string_value(l), needle)) return true;
        return false;
}

static void expect(const char *fault, const char *status, int exit_code, const char *needle)
{
        struct outcome o = validate(fault);
        const char *st = json_string_value(json_object_get(o.result, "status"));

        cr_assert_str_eq(json_string_value(json_object_get(o.result, "check_id")),
                         "runtime.host_containment");
        cr_assert_str_eq(st, status, "%s: status %s, want %s", fault ? fault : "-", st, status);
        cr_assert_eq(o.exit_code, exit_code);
        cr_assert(evidence_has(o.result, needle), "%s: no evidence '%s'", fault ? fault : "-",
                  needle);
        if (streq(status, "fail"))
                cr_assert(json_is_string(json_object_get(o.result, "remediation")));
        json_decref(o.result);
        assert_nothing_left(o.run_id);
        assert_nothing_left(NULL);
        free(o.run_id);
}

Test(docker, hardened_subject_passes)
{
        expect(NULL, "pass", 0, "measured containment matches the contract");
}

Test(docker, no_read_only_fails)
{
        expect("no-read-only", "fail", 1, "image root / is mounted read-write");
}

Test(docker, dev_tmpfs_fails)
{
        expect("dev-tmpfs", "fail", 1, "subject can write directory /dev/openenv-fault");
}

Test(docker, writable_bind_fails)
{
        expect("writable-bind", "fail", 1, "subject can write directory /mnt/openenv-fault");
}

Test(docker, volume_fails)
{
        expect("volume", "fail", 1, "subject can write directory /data");
}

Test(docker, privileged_fails)
{
        expect("privileged", "fail", 1, "holds capabilities: cap_bnd=");
}

Test(docker, cap_add_fails)
{
        expect("cap-add", "fail", 1, "holds capabilities: cap_bnd=0000000000000400");
}

Test(docker, root_fails)
{
        expect("root", "fail", 1, "runs as root (uid 0)");
}

Test(docker, host_pid_fails)
{
        expect("host-pid", "fail", 1, "subject shares the host's pid namespace (measured)");
}

Test(docker, broken_control_skips)
{
        expect("broken-control", "skip", 0, "positive control failed for /tmp");
}

Test(docker, violation_plus_broken_control_fails)
{
        expect("broken-control,dev-tmpfs", "fail", 1, "also unproven: positive control failed");
}

Test(docker, missing_image_is_unusable_input)
{
        char *const argv[] = { getenv("OPENENVCTL_BIN"), "validate", "openenv-no-such-image:0",
                               NULL };
        struct command_output o;

        require_docker();
        cr_assert_eq(command_run(&(struct command_spec){ .argv = argv,
                                                         .stdin_fd = -1,
                                                         .timeout = 60 * USEC_PER_SEC,
                                                         .max_out = 1 << 20,
                                                         .cancel_fd = -1 },
                                 &o),
                     0);
        cr_assert_eq(o.exit_status, 2, "%s", o.err);
        cr_assert(strstr(o.err, "no such image"), "%s", o.err);
        command_output_done(&o);
        assert_nothing_left(NULL);
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
