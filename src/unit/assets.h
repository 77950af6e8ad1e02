/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The daemon's private copy of the manifest's privileged assets:
 * <state>/assets/<name>/ (a directory asset copied whole by custody rules, a
 * file asset as <name>/<basename>), world-readable because observers are
 * other uids in other user namespaces and the author's files may well be
 * 0600. Made once, at start; the state dir (masked in every container, a
 * tmpfs in the daemon's own mount namespace) keeps it from everyone but the
 * observers that bind it read-only.
 */
#include "manifest/manifest.h"

int assets_copy(const struct manifest *m, const char *state_dir);
