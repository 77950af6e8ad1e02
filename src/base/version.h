/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The build's version, one string for every binary, their --version, the
 * daemon's first log line, /info and the build_info metric: the project's
 * version and the commit it was built from, "0.1.0 (git 4cef96b2e1a0)",
 * "-dirty" after the hash for a tree with uncommitted changes, the
 * project's version alone outside a git checkout.
 */
extern const char openenvd_version[];
