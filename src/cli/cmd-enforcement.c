/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * openenvctl check enforcement [--manifest FILE] [--json]: every container of
 * the manifest gets a throwaway probe container with its zone's real
 * confinement, which attacks everything the zone must not do
 * (docs/ENFORCEMENT.md). Exit 0 all held, 1 any guarantee failed (a probe
 * that reported nothing included), 2 bad usage or invalid manifest, 3
 * isolation unavailable (not root, preflight off, or the check itself could
 * not be set up).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "base/log.h"
#include "base/parse-util.h"
#include "base/sibling-binary.h"
#include "base/strbuf.h"
#include "base/util.h"
#include "cli/cli.h"
#include "enforce/enforce.h"
#include "manifest/manifest.h"
#include "preflight/preflight.h"
#include "probe/attack.h"
#include "sandbox/container-spec.h"

static void help(FILE *f)
{
        fputs("Usage: openenvctl check enforcement [--manifest FILE] [--json] [options]\n"
              "                                    [-- CMD...]\n"
              "\n"
              "Attacks every zone from inside a throwaway probe container with the zone's\n"
              "real confinement and reports which guarantees held.\n"
              "\n"
              "  --manifest FILE      manifest (default ./openenv.yaml)\n"
              "  --json               every attempt and its result, as JSON\n"
              "  --shim PATH          openenvd-shim (default: next to openenvctl, or installed)\n"
              "  --probe PATH         static openenvd-probe (default: likewise)\n"
              "  --state-parent DIR   where the temporary state dir goes (default /var/tmp)\n"
              "  --timeout SEC        per probe container (default 60)\n"
              "  -- CMD...            the env server's command, as given to openenvd -- CMD\n"
              "\n"
              "Exit: 0 all held, 1 a guarantee failed, 2 bad usage or invalid manifest,\n"
              "3 isolation unavailable.\n",
              f);
}

/* Test-only: weaken every probe container on purpose, so the tests can
 * prove the check fails (issue 6 item 6). */
static int parse_weaken(const char *s, unsigned *ret)
{
        cleanup_free char *copy = xstrdup(s);
        unsigned w = 0;
        char *save = NULL;

        for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
                int flag = container_weaken_from_string(t);
                if (flag < 0)
                        return flag;
                w |= (unsigned) flag;
        }
        *ret = w;
        return 0;
}

int cli_check_enforcement(int argc, char **argv)
{
        enum { ARG_SHIM = 0x100, ARG_PROBE, ARG_STATE, ARG_TIMEOUT, ARG_WEAKEN, ARG_FAULT };
        static const struct option opts[] = {
                { "help", no_argument, NULL, 'h' },
                { "json", no_argument, NULL, 'j' },
                { "manifest", required_argument, NULL, 'm' },
                { "shim", required_argument, NULL, ARG_SHIM },
                { "probe", required_argument, NULL, ARG_PROBE },
                { "state-parent", required_argument, NULL, ARG_STATE },
                { "timeout", required_argument, NULL, ARG_TIMEOUT },
                /* Hidden, test-only (docs/ENFORCEMENT.md "Test knobs"). */
                { "test-weaken", required_argument, NULL, ARG_WEAKEN },
                { "test-probe-fault", required_argument, NULL, ARG_FAULT },
                {},
        };
        cleanup(manifest_freep) struct manifest *m = NULL;
        cleanup(preflight_report_freep) struct preflight_report *pre = NULL;
        cleanup(enforce_report_freep) struct enforce_report *report = NULL;
        cleanup_free char *shim = NULL, *probe = NULL;
        struct enforce_options o = { 0 };
        const char *manifest_path = "openenv.yaml";
        struct manifest_overrides ov = {};
        bool json = false;
        unsigned timeout_s = 60;
        int c, r;

        /* "-- CMD..." is the env server's command, as for openenvd and
         * manifest validate: split off before any option is read. */
        for (int i = 1; i < argc; i++)
                if (streq(argv[i], "--")) {
                        ov.env_argv = argv + i + 1;
                        argc = i;
                        break;
                }
        optind = 0;
        opterr = 0;
        while ((c = getopt_long(argc, argv, "+hjm:", opts, NULL)) >= 0) {
                switch (c) {
                case 'h':
                        help(stdout);
                        return EXIT_CODE_OK;
                case 'j':
                        json = true;
                        break;
                case 'm':
                        manifest_path = optarg;
                        break;
                case ARG_SHIM:
                        o.shim_path = optarg;
                        break;
                case ARG_PROBE:
                        o.probe_path = optarg;
                        break;
                case ARG_STATE:
                        o.state_parent = optarg;
                        break;
                case ARG_TIMEOUT:
                        if (parse_uint(optarg, 1, 3600, &timeout_s) < 0) {
                                fprintf(stderr,
                                        "openenvctl check enforcement: bad --timeout '%s'\n",
                                        optarg);
                                return EXIT_CODE_INVALID;
                        }
                        break;
                case ARG_WEAKEN:
                        if (parse_weaken(optarg, &o.weaken) < 0) {
                                fprintf(stderr,
                                        "openenvctl check enforcement: unknown weakening in '%s'\n",
                                        optarg);
                                return EXIT_CODE_INVALID;
                        }
                        break;
                case ARG_FAULT:
                        if (probe_fault_from_string(optarg) < 0) {
                                fprintf(stderr,
                                        "openenvctl check enforcement: unknown fault '%s'\n",
                                        optarg);
                                return EXIT_CODE_INVALID;
                        }
                        o.probe_fault = optarg;
                        break;
                default:
                        fprintf(stderr, "openenvctl check enforcement: bad argument '%s'\n",
                                argv[optind - 1]);
                        return EXIT_CODE_INVALID;
                }
        }
        if (optind < argc) {
                fprintf(stderr, "openenvctl check enforcement: unexpected argument '%s'\n",
                        argv[optind]);
                return EXIT_CODE_INVALID;
        }
        o.probe_timeout = (usec_t) timeout_s * USEC_PER_SEC;

        {
                struct manifest_errors errors;
                manifest_errors_init(&errors, manifest_path);
                r = manifest_load_with(manifest_path, &ov, &errors, &m);
                if (r < 0) {
                        struct strbuf sb = STRBUF_INIT;
                        if (r == -EINVAL) {
                                manifest_errors_format(&errors, &sb);
                                fputs(sb.buf, stderr);
                        } else
                                fprintf(stderr, "openenvctl check enforcement: %s: %s\n",
                                        manifest_path, strerror(-r));
                        strbuf_release(&sb);
                        manifest_errors_done(&errors);
                        return EXIT_CODE_INVALID;
                }
                manifest_errors_done(&errors);
        }

        /* Same preconditions as the daemon: without isolation there is
         * nothing to check, and that is not a pass. */
        if (geteuid() != 0) {
                fputs("openenvctl check enforcement: isolation unavailable: must run as root\n",
                      stderr);
                return EXIT_CODE_UNAVAILABLE;
        }
        r = preflight_run(NULL, &pre);
        if (r < 0) {
                log_error_errno(r, "preflight: %m");
                return EXIT_CODE_UNAVAILABLE;
        }
        if (!pre->isolation) {
                cleanup_free char *reasons = preflight_report_reasons(pre);
                fprintf(stderr, "openenvctl check enforcement: isolation unavailable: %s\n",
                        reasons);
                return EXIT_CODE_UNAVAILABLE;
        }

        if (!o.shim_path) {
                shim = sibling_binary_find("openenvd-shim", "OPENENVD_SHIM");
                o.shim_path = shim;
        }
        if (!o.probe_path) {
                probe = sibling_binary_find("openenvd-probe", "OPENENVD_PROBE");
                o.probe_path = probe;
        }
        o.manifest = m;

        r = enforce_run(&o, &report);
        if (r == -EACCES || r == -EINVAL)
                log_error_errno(r,
                                "check enforcement: state parent %s: %m (it must not be under "
                                "/tmp or /run, and every ancestor must be searchable by others)",
                                o.state_parent ?: "/var/tmp");
        else if (r < 0)
                log_error_errno(r, "check enforcement: setting up the probes: %m");
        if (r < 0)
                return EXIT_CODE_UNAVAILABLE;
        if (json) {
                json_t *j = enforce_report_to_json(report);
                json_object_set_new(j, "manifest", json_string(manifest_path));
                if (cli_print_json(j, JSON_PRESERVE_ORDER) < 0)
                        oom();
        } else {
                enforce_report_format(report, stdout);
        }
        fflush(stdout);
        return enforce_report_held(report) ? EXIT_CODE_OK : EXIT_CODE_FAILED;
}
