/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * openenvctl: the operator's command line. Dispatches to one file per command.
 */
#include <stdio.h>
#include <string.h>

#include "base/log.h"
#include "base/util.h"
#include "base/version.h"
#include "cli/cli.h"

static void usage(FILE *f)
{
        fputs("Usage:\n"
              "  openenvctl manifest validate FILE [--json]\n"
              "  openenvctl check preflight [--json] [--rootfs DIR | --host-root-unfiltered]\n"
              "  openenvctl check enforcement [--manifest FILE] [--json]\n"
              "  openenvctl validate IMAGE [--json]\n"
              "  openenvctl status|episodes|verdict|logs|metrics [--url URL] [--json]\n"
              "  openenvctl --version\n"
              "\n"
              "Exit codes: see docs/CLI.md.\n",
              f);
}

int main(int argc, char **argv)
{
        log_set_program("openenvctl");
        /* "openenvctl --help" and a group's ("openenvctl check --help"). */
        if ((argc >= 2 && (streq(argv[1], "--help") || streq(argv[1], "-h"))) ||
            (argc == 3 && (streq(argv[1], "manifest") || streq(argv[1], "check")) &&
             (streq(argv[2], "--help") || streq(argv[2], "-h")))) {
                usage(stdout);
                return EXIT_CODE_OK;
        }
        if (argc >= 2 && streq(argv[1], "--version")) {
                printf("openenvctl %s\n", openenvd_version);
                return EXIT_CODE_OK;
        }
        if (argc >= 3 && streq(argv[1], "manifest") && streq(argv[2], "validate"))
                return cli_manifest_validate(argc - 2, argv + 2);
        if (argc >= 3 && streq(argv[1], "check") && streq(argv[2], "preflight"))
                return cli_check_preflight(argc - 2, argv + 2);
        if (argc >= 3 && streq(argv[1], "check") && streq(argv[2], "enforcement"))
                return cli_check_enforcement(argc - 2, argv + 2);
        if (argc >= 2 && streq(argv[1], "validate"))
                return cli_validate(argc - 1, argv + 1);
        if (argc >= 2 &&
            (streq(argv[1], "status") || streq(argv[1], "episodes") || streq(argv[1], "verdict") ||
             streq(argv[1], "logs") || streq(argv[1], "metrics")))
                return cli_unit(argc - 1, argv + 1);
        usage(stderr);
        return EXIT_CODE_INVALID;
}
