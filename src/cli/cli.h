/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Sub-commands of `openenvctl`. Each takes the arguments after its own name
 * (argv[0] is the sub-command) and returns the process exit code.
 *
 * Exit codes shared by every command (documented in docs/CLI.md):
 *   0 success / valid / all held / pass
 *   1 failure of what was checked (or: cannot read the input, for manifest validate)
 *   2 invalid input (bad manifest, bad usage)
 *   3 isolation unavailable / internal error (per command, see docs/CLI.md)
 */
int cli_manifest_validate(int argc, char **argv);
int cli_check_preflight(int argc, char **argv);
int cli_check_enforcement(int argc, char **argv);
int cli_validate(int argc, char **argv);
