/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Internal to preflight: the checks that run in a forked child
 * (preflight-mounts.c: overlayfs, nosymfollow, pivot_root, a fresh proc and
 * sysfs), run and reported by preflight.c. A child check returns a
 * PREFLIGHT_STEP_* (and sets *err) or PREFLIGHT_STEP_OK, and ends in _exit().
 */
#include "preflight/preflight.h"

/* What a child check reports over its pipe. */
struct child_report {
        int step;
        int err;
};

/* Scratch paths under a tmpfs the child mounts in its own mount namespace. */
struct preflight_mount_paths {
        char dir[64], lower[80], upper[80], work[80], merged[80], file[96], upper_file[96],
                opts[400], link[96];
};

void preflight_mount_paths_init(struct preflight_mount_paths *m);
int preflight_child_overlay(const void *userdata, int *err);     /* userdata: mount paths */
int preflight_child_nosymfollow(const void *userdata, int *err); /* userdata: mount paths */
int preflight_child_pivot_root(const void *userdata, int *err);  /* userdata: mount paths */
int preflight_child_procfs(const void *userdata, int *err);      /* userdata: NULL */
int preflight_child_sysfs(const void *userdata, int *err);       /* userdata: NULL */
