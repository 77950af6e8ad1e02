/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * openenvctl validate IMAGE [--json] [options]: runs `runtime.host_containment`
 * against a local Docker engine (docs/VALIDATE.md).
 *
 * Every outcome is one report (src/validate/report.h): a table, or JSON with
 * --json, whose verdict decides the exit code: 0 pass or warn, 1 fail, 2
 * unusable input (bad usage, not an image reference, no such image, no
 * command), 3 internal error (engine unreachable, cleanup could not be
 * verified). Interrupted by SIGINT/SIGTERM: everything created is removed
 * first, then exit 130/143.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "base/log.h"
#include "base/parse-util.h"
#include "base/sibling-binary.h"
#include "base/text-escape.h"
#include "base/time-util.h"
#include "base/util.h"
#include "cli/cli.h"
#include "validate/check-result.h"
#include "validate/containment-grader.h"
#include "validate/docker-provider.h"
#include "validate/report.h"

static void help(FILE *f)
{
        fputs("Usage: openenvctl validate [options] [--] IMAGE\n"
              "\n"
              "Launches IMAGE under Docker hardened and measures runtime.host_containment.\n"
              "IMAGE must be a Docker image reference ([domain[:port]/]name[:tag][@digest])\n"
              "or an image ID.\n"
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
              "Every outcome is a report with a verdict; the verdict is the exit code:\n"
              "  pass, warn  0   (warn: something could not be proven)\n"
              "  fail        1   (a proven violation, or evidence that cannot be believed)\n"
              "  unusable    2   (bad usage, not an image reference, no such image, no command)\n"
              "  error       3   (engine unreachable, cleanup unverified, internal error)\n"
              "  interrupted 130/143 (SIGINT/SIGTERM, after removing what was created)\n",
              f);
}

/* Prints the report and returns its exit code. A report that did not reach
 * stdout (a full disk, a closed pipe) is no outcome anybody can read: the
 * failure says so on stderr and is an error (3), whatever the verdict. */
static int emit(const struct validate_report *rep, bool json)
{
        int err;

        clearerr(stdout);
        errno = 0;
        if (json)
                (void) cli_print_json(validate_report_to_json(rep), JSON_SORT_KEYS);
        else
                validate_report_print_table(rep, stdout);
        /* The write's errno, from whichever flush failed first. */
        err = errno;
        if (fflush(stdout) == 0 && !ferror(stdout))
                return validate_report_exit_code(rep);
        err = errno ? errno : err ? err : EIO;
        log_error("the report (verdict %s) could not be written to stdout: %s",
                  validate_verdict_to_string(rep->verdict), strerror(err));
        return EXIT_CODE_UNAVAILABLE;
}

/* "WHAT 'ARG'" or "WHAT ARG: 'VALUE'", the caller's bytes escaped: the
 * evidence names the argument even when it is not text. */
static char *usage_error(const char *what, const char *arg, const char *value)
{
        cleanup_free char *a = text_escape_exact(arg), *v = value ? text_escape_exact(value) : NULL;

        return v ? xasprintf("%s %s: '%s'", what, a, v) : xasprintf("%s '%s'", what, a);
}

/* A report for an outcome that measured nothing: one evidence line. */
static struct check_result *outcome_result(enum check_status status, const char *prefix,
                                           const char *message)
{
        struct check_result *r = check_result_new(CONTAINMENT_CHECK_ID, status);
        cleanup_free char *line = xasprintf("%s%s", prefix, message);

        check_result_add_evidence(r, line);
        return r;
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
        cleanup_free char *probe = NULL, *usage = NULL, *target = NULL;
        cleanup(check_result_freep) struct check_result *res = NULL;
        struct docker_run run = {};
        struct validate_report rep = {};
        bool json = false;
        sigset_t mask;
        int c, r, sfd = -1, rc, block_err;
        usec_t start;

        /* SIGINT/SIGTERM are held from our first instruction: one that comes
         * while the options are read is pending, not fatal, and the run
         * reports it (interrupted) like one that comes later. A caller that
         * blocks them across exec closes the loader's window too: a pending
         * signal survives exec. */
        sigemptyset(&mask);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGTERM);
        block_err = sigprocmask(SIG_BLOCK, &mask, NULL) < 0 ? errno : 0;

        optind = 0;
        opterr = 0; /* we say it once, below, and in the report */
        /* Keep parsing after a bad option: --json may come later, and a
         * usage error is a report like any other outcome. */
        while ((c = getopt_long(argc, argv, "hj", opts, NULL)) >= 0) {
                bool bad = false;

                switch (c) {
                case 'h':
                        help(stdout);
                        return EXIT_CODE_OK;
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
                        bad = parse_uint64(optarg, 2, UINT64_C(1024) * 1024, &o.disk_mb) < 0;
                        break;
                case ARG_MEM:
                        bad = parse_uint64(optarg, 16, UINT64_C(1024) * 1024, &o.memory_mb) < 0;
                        break;
                case ARG_PIDS:
                        bad = parse_uint(optarg, 8, 1 << 22, &o.pids) < 0;
                        break;
                case ARG_CPUS:
                        bad = parse_double(optarg, 0.01, 1024, &o.cpus) < 0;
                        break;
                case ARG_NETWORK:
                        if (streq(optarg, "none"))
                                o.loopback_publish = false;
                        else if (streq(optarg, "loopback"))
                                o.loopback_publish = true;
                        else
                                bad = true;
                        break;
                case ARG_FAULT:
                        bad = docker_faults_parse(optarg, &o.faults) < 0;
                        break;
                default:
                        if (!usage)
                                usage = usage_error("unknown option", argv[optind - 1], NULL);
                        break;
                }
                if (bad && !usage)
                        usage = usage_error("invalid value for", argv[optind - 1], optarg);
        }
        if (!usage && optind + 1 != argc)
                usage = xstrdup(optind >= argc ? "no IMAGE given" : "more than one IMAGE given");
        /* What the report and the table show of the caller's argument;
         * docker gets the bytes as they are. */
        if (optind < argc)
                target = text_escape_exact(argv[optind]);
        if (usage) {
                log_error("%s (try 'openenvctl validate --help')", usage);
                res = outcome_result(CHECK_SKIP, "unusable input: usage: ", usage);
                rep = (struct validate_report){ .target = target,
                                                .verdict = VERDICT_UNUSABLE,
                                                .result = res };
                return emit(&rep, json);
        }
        o.image = argv[optind];
        if (!probe)
                probe = sibling_binary_find("openenvd-probe", "OPENENVD_PROBE");
        o.probe_path = probe;

        /* SIGINT/SIGTERM become a readable fd the provider polls; on it the
         * provider stops its current docker call and removes what it made. */
        if (block_err || (sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK)) < 0) {
                cleanup_free char *m = xasprintf("signals: %s", strerror(block_err ?: errno));
                log_error("%s", m);
                res = outcome_result(CHECK_ERROR, "", m);
                rep = (struct validate_report){ .target = target,
                                                .verdict = VERDICT_ERROR,
                                                .result = res };
                return emit(&rep, json);
        }
        o.cancel_fd = sfd;

        start = now_usec(CLOCK_MONOTONIC);
        r = docker_measure_containment(&o, &run);
        if (r < 0)
                run.outcome = DOCKER_FAILED;

        rep = (struct validate_report){ .target = target,
                                        .image_id = run.image_id,
                                        .run_id = run.run_id };
        switch (run.outcome) {
        case DOCKER_MEASURED:
                res = containment_grade(run.evidence);
                rep.verdict = validate_verdict_for(res);
                break;
        case DOCKER_BAD_INPUT:
                log_error("%s: %s", target, run.message ? run.message : "unusable input");
                res = outcome_result(CHECK_SKIP,
                                     "unusable input: ", run.message ? run.message : "unknown");
                rep.verdict = VERDICT_UNUSABLE;
                break;
        case DOCKER_INTERRUPTED: {
                struct signalfd_siginfo si = {};
                rep.signal = read(sfd, &si, sizeof(si)) == (ssize_t) sizeof(si) &&
                                             si.ssi_signo == SIGTERM
                                     ? SIGTERM
                                     : SIGINT;
                log_error("interrupted; everything created was removed%s%s",
                          run.message ? ": " : "", run.message ? run.message : "");
                res = outcome_result(CHECK_SKIP, "interrupted by ", strsignal(rep.signal));
                check_result_add_evidence(res, "everything created was removed");
                rep.verdict = VERDICT_INTERRUPTED;
                break;
        }
        default:
                log_error("%s: %s", target, run.message ? run.message : "internal error");
                res = outcome_result(CHECK_ERROR, "", run.message ? run.message : "internal error");
                rep.verdict = VERDICT_ERROR;
                break;
        }
        res->duration_s = (double) (now_usec(CLOCK_MONOTONIC) - start) / USEC_PER_SEC;
        rep.result = res;
        rc = emit(&rep, json);
        docker_run_done(&run);
        safe_close(sfd);
        /* SIGINT/SIGTERM stay blocked until exit: one that is still pending
         * (not read above, e.g. the run became an error) or arrives now must
         * not kill us with another exit code than the report states. */
        return rc;
}
