/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * openenvctl validate IMAGE [--json] [options]: runs `runtime.host_containment`
 * against a local Docker engine (docs/VALIDATE.md).
 *
 * Exit codes: 0 pass or warn (skip), 1 fail, 2 unusable input (bad usage, no
 * such image, image declares volumes), 3 internal error (engine unreachable,
 * cleanup could not be verified). Interrupted by SIGINT/SIGTERM: everything
 * created is removed first, then exit 130/143.
 */
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "base/log.h"
#include "base/parse-util.h"
#include "base/time-util.h"
#include "base/util.h"
#include "cli/cli.h"
#include "validate/check-result.h"
#include "validate/containment-grader.h"
#include "validate/docker-provider.h"

#define EXIT_FAIL     1
#define EXIT_USAGE    2
#define EXIT_INTERNAL 3

static void help(FILE *f)
{
        fputs("Usage: openenvctl validate IMAGE [--json] [options]\n"
              "\n"
              "Launches IMAGE under Docker hardened and measures runtime.host_containment.\n"
              "\n"
              "  --json               machine-readable report\n"
              "  --host URL           docker engine (default: $DOCKER_HOST)\n"
              "  --docker PATH        docker CLI binary (default: docker)\n"
              "  --probe PATH         static openenvd-probe helper binary\n"
              "  --disk-mb N          writable budget for /tmp + /dev/shm (default 64)\n"
              "  --memory-mb N        memory limit (default 256)\n"
              "  --pids N             pids limit (default 256)\n"
              "  --cpus X             cpu limit (default 1)\n"
              "  --network MODE       none (default) | loopback (publish 8000 on 127.0.0.1)\n"
              "\n"
              "Exit: 0 pass/warn, 1 fail, 2 unusable input, 3 internal error.\n",
              f);
}

/* Next to our own binary (build tree: src/cli/ and src/probe/), then the
 * install location. */
static char *find_probe(void)
{
        char self[PATH_MAX];
        ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
        const char *env = getenv("OPENENVD_PROBE");

        if (env && *env)
                return xstrdup(env);
        if (n > 0) {
                char *slash;
                self[n] = '\0';
                slash = strrchr(self, '/');
                if (slash) {
                        *slash = '\0';
                        cleanup_free char *a = xasprintf("%s/openenvd-probe", self);
                        cleanup_free char *b = xasprintf("%s/../probe/openenvd-probe", self);
                        cleanup_free char *c =
                                xasprintf("%s/../libexec/openenvd/openenvd-probe", self);
                        if (access(a, X_OK) == 0)
                                return TAKE_PTR(a);
                        if (access(b, X_OK) == 0)
                                return TAKE_PTR(b);
                        if (access(c, X_OK) == 0)
                                return TAKE_PTR(c);
                }
        }
        return xstrdup("/usr/libexec/openenvd/openenvd-probe");
}

static int report(struct check_result *r, const char *image, const char *run_id, bool json)
{
        if (json) {
                json_t *o = json_object(), *results = json_array();
                const char *verdict = r->status == CHECK_PASS   ? "pass"
                                      : r->status == CHECK_SKIP ? "warn"
                                                                : "fail";
                json_array_append_new(results, check_result_to_json(r));
                json_object_set_new(o, "target", json_string(image));
                if (run_id)
                        json_object_set_new(o, "run_id", json_string(run_id));
                json_object_set_new(o, "results", results);
                json_object_set_new(o, "verdict", json_string(verdict));
                char *s = json_dumps(o, JSON_INDENT(2) | JSON_SORT_KEYS);
                if (s) {
                        puts(s);
                        free(s);
                }
                json_decref(o);
        } else
                check_result_print_table(r, image, stdout);
        fflush(stdout);
        return check_result_exit_code(r);
}

int cli_validate(int argc, char **argv)
{
        enum {
                ARG_HOST = 0x100,
                ARG_DOCKER,
                ARG_PROBE,
                ARG_DISK,
                ARG_MEM,
                ARG_PIDS,
                ARG_CPUS,
                ARG_NETWORK,
                ARG_FAULT
        };
        static const struct option opts[] = {
                { "help", no_argument, NULL, 'h' },
                { "json", no_argument, NULL, 'j' },
                { "host", required_argument, NULL, ARG_HOST },
                { "docker", required_argument, NULL, ARG_DOCKER },
                { "probe", required_argument, NULL, ARG_PROBE },
                { "disk-mb", required_argument, NULL, ARG_DISK },
                { "memory-mb", required_argument, NULL, ARG_MEM },
                { "pids", required_argument, NULL, ARG_PIDS },
                { "cpus", required_argument, NULL, ARG_CPUS },
                { "network", required_argument, NULL, ARG_NETWORK },
                /* Hidden, test-only: weakens the launch on purpose. */
                { "fault", required_argument, NULL, ARG_FAULT },
                {},
        };
        struct docker_options o = {
                .docker = "docker",
                .disk_mb = 64,
                .memory_mb = 256,
                .pids = 256,
                .cpus = 1.0,
                .cancel_fd = -1,
        };
        cleanup_free char *probe = NULL;
        cleanup(check_result_freep) struct check_result *res = NULL;
        struct docker_run run = {};
        bool json = false;
        sigset_t mask, old;
        int c, r, sfd, rc;
        usec_t start;

        optind = 0;
        while ((c = getopt_long(argc, argv, "hj", opts, NULL)) >= 0) {
                switch (c) {
                case 'h':
                        help(stdout);
                        return 0;
                case 'j':
                        json = true;
                        break;
                case ARG_HOST:
                        o.host = optarg;
                        break;
                case ARG_DOCKER:
                        o.docker = optarg;
                        break;
                case ARG_PROBE:
                        free(probe);
                        probe = xstrdup(optarg);
                        break;
                case ARG_DISK:
                        if (parse_uint64(optarg, 2, UINT64_C(1024) * 1024, &o.disk_mb) < 0)
                                goto bad;
                        break;
                case ARG_MEM:
                        if (parse_uint64(optarg, 16, UINT64_C(1024) * 1024, &o.memory_mb) < 0)
                                goto bad;
                        break;
                case ARG_PIDS:
                        if (parse_uint(optarg, 8, 1 << 22, &o.pids) < 0)
                                goto bad;
                        break;
                case ARG_CPUS:
                        if (parse_double(optarg, 0.01, 1024, &o.cpus) < 0)
                                goto bad;
                        break;
                case ARG_NETWORK:
                        if (streq(optarg, "none"))
                                o.loopback_publish = false;
                        else if (streq(optarg, "loopback"))
                                o.loopback_publish = true;
                        else
                                goto bad;
                        break;
                case ARG_FAULT:
                        if (docker_faults_parse(optarg, &o.faults) < 0)
                                goto bad;
                        break;
                default:
                        help(stderr);
                        return EXIT_USAGE;
                }
        }
        if (optind + 1 != argc) {
                help(stderr);
                return EXIT_USAGE;
        }
        o.image = argv[optind];
        if (!probe)
                probe = find_probe();
        o.probe_path = probe;

        /* SIGINT/SIGTERM become a readable fd the provider polls; on it the
         * provider stops its current docker call and removes what it made. */
        sigemptyset(&mask);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGTERM);
        if (sigprocmask(SIG_BLOCK, &mask, &old) < 0)
                return log_error_errno(errno, "sigprocmask: %m"), EXIT_INTERNAL;
        sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
        if (sfd < 0)
                return log_error_errno(errno, "signalfd: %m"), EXIT_INTERNAL;
        o.cancel_fd = sfd;

        start = now_usec(CLOCK_MONOTONIC);
        r = docker_measure_containment(&o, &run);
        if (r < 0)
                run.outcome = DOCKER_FAILED;

        switch (run.outcome) {
        case DOCKER_MEASURED:
                res = containment_grade(run.evidence);
                break;
        case DOCKER_BAD_INPUT:
                log_error("%s: %s", o.image, run.message ? run.message : "unusable input");
                rc = EXIT_USAGE;
                goto out;
        case DOCKER_INTERRUPTED: {
                struct signalfd_siginfo si = {};
                log_error("interrupted; everything created was removed%s%s",
                          run.message ? ": " : "", run.message ? run.message : "");
                rc = read(sfd, &si, sizeof(si)) == (ssize_t) sizeof(si) && si.ssi_signo == SIGTERM
                             ? 128 + SIGTERM
                             : 128 + SIGINT;
                goto out;
        }
        default:
                res = check_result_new(CONTAINMENT_CHECK_ID, CHECK_ERROR);
                check_result_add_evidence(res, run.message ? run.message : "internal error");
                break;
        }
        res->duration_s = (double) (now_usec(CLOCK_MONOTONIC) - start) / USEC_PER_SEC;
        rc = report(res, o.image, run.run_id, json);
out:
        docker_run_done(&run);
        safe_close(sfd);
        (void) sigprocmask(SIG_SETMASK, &old, NULL);
        return rc;
bad:
        log_error("invalid value for %s: '%s'", argv[optind - 1], optarg);
        return EXIT_USAGE;
}
