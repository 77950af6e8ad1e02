/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * openenvctl check preflight [--json] [--rootfs DIR | --host-root-unfiltered]:
 * would isolation be on here? Exit 0 when it would, 3 when it would not
 * (every reason is printed), 2 on bad usage. --rootfs and
 * --host-root-unfiltered name the containers' root the daemon would get
 * (its own options; neither: the host view), for the containers_root check.
 */
#include <stdio.h>
#include <stdlib.h>

#include <jansson.h>

#include "base/log.h"
#include "base/util.h"
#include "cli/cli.h"
#include "preflight/preflight.h"

int cli_check_preflight(int argc, char **argv)
{
        cleanup(preflight_report_freep) struct preflight_report *report = NULL;
        struct preflight_options opts = {};
        bool json = false;
        int r;

        for (int i = 1; i < argc; i++) {
                if (streq(argv[i], "--json"))
                        json = true;
                else if (streq(argv[i], "--rootfs") && i + 1 < argc)
                        opts.rootfs = argv[++i];
                else if (streq(argv[i], "--host-root-unfiltered"))
                        opts.rootfs = "/";
                else if (streq(argv[i], "--help") || streq(argv[i], "-h")) {
                        fputs("Usage: openenvctl check preflight [--json] "
                              "[--rootfs DIR | --host-root-unfiltered]\n"
                              "Exit: 0 isolation on, 3 isolation off, 2 bad usage.\n",
                              stdout);
                        return EXIT_CODE_OK;
                } else {
                        fprintf(stderr, "openenvctl check preflight: unknown argument '%s'\n",
                                argv[i]);
                        return EXIT_CODE_INVALID;
                }
        }

        r = preflight_run(&opts, &report);
        if (r < 0) {
                log_error_errno(r, "preflight: %m");
                return EXIT_CODE_UNAVAILABLE;
        }
        if (json) {
                if (cli_print_json(preflight_report_to_json(report), JSON_PRESERVE_ORDER) < 0)
                        oom();
        } else {
                cleanup_free char *s = preflight_report_format(report);
                fputs(s, stdout);
        }
        return report->isolation ? EXIT_CODE_OK : EXIT_CODE_UNAVAILABLE;
}
