/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Where a helper binary (openenvd-shim, openenvd-probe) is found by the
 * program that runs it: written once here for openenvd and openenvctl.
 *
 *   1. $env_override, when set and not empty;
 *   2. beside the running program (the directory of /proc/self/exe), then in
 *      ../libexec/openenvd/ (meson's install_dir for helpers), then in the
 *      build tree's ../sandbox/shim/ and ../probe/ (programs are built in
 *      src/<module>/); the first that is executable;
 *   3. the default install location, /usr/libexec/openenvd/<name>.
 *
 * Returns a new string (never NULL).
 */
char *sibling_binary_find(const char *name, const char *env_override);
