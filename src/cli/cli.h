/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Sub-commands of `openenvctl`. Each takes the arguments after its own name
 * (argv[0] is the sub-command) and returns the process exit code, one of
 * base/exit-code.h (documented per command in docs/CLI.md):
 *   EXIT_CODE_OK          success / valid / all held / pass
 *   EXIT_CODE_FAILED      failure of what was checked (manifest validate: the
 *                         input cannot be read)
 *   EXIT_CODE_INVALID     invalid input (bad manifest, bad usage)
 *   EXIT_CODE_UNAVAILABLE isolation unavailable / internal error
 */
#include <stddef.h>

#include <jansson.h>

#include "base/exit-code.h"

int cli_manifest_validate(int argc, char **argv);
int cli_check_preflight(int argc, char **argv);
int cli_check_enforcement(int argc, char **argv);
int cli_validate(int argc, char **argv);
/* status, episodes, verdict, logs, metrics: argv[0] says which. */
int cli_unit(int argc, char **argv);

/* Prints j (taken, may be NULL) on stdout as indented JSON with the given
 * json_dumps() flags, and flushes. -ENOMEM if it could not be rendered. */
int cli_print_json(json_t *j, size_t flags);
