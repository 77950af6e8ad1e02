/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The containers' root on a host without --rootfs: an allowlisted view of
 * the host instead of its whole "/" (docs/SANDBOX.md, "The host view").
 *
 * A skeleton directory, made once by the daemon at start-up in its private
 * state tmpfs, is the read-only image root; read-only binds of the host's
 * own directories go on top of it:
 *
 *   /usr                       bound (the programs and libraries)
 *   /bin /sbin /lib /lib32     the host's symlinks copied as symlinks (usrmerge),
 *   /lib64 /libx32             or bound when the host has real directories
 *   /etc                       a filtered copy: the loader's cache and config,
 *                              name-service and time-zone files, a generated
 *                              minimal passwd and group, ld.so.conf.d,
 *                              alternatives, ssl/certs, python3* (one level);
 *                              never shadow, ssh keys, machine-id or anything
 *                              else
 *   /proc /sys /dev /tmp /run  empty mount points
 *
 * The unit's own image paths (the directories its argv, working directory,
 * PATH and PYTHONPATH point into) are added per container by the planner
 * (unit-plan.c). Each bind is a struct mount_entry, so the native and the
 * OCI launcher build the very same view.
 *
 * Ownership: a host_view owns its strings; the unit borrows it.
 */
#include <stdbool.h>
#include <stddef.h>

#include "sandbox/container-spec.h"

struct host_view {
        char *root;                /* owned: the skeleton directory */
        struct mount_entry *binds; /* owned: read-only binds of host paths, in order */
        size_t n_binds;
};

/* Builds the skeleton at dir (created 0755, must not exist) from the host
 * at host_root ("/" but in tests) and fills *ret. Returns 0 or -errno. */
int host_view_make(const char *host_root, const char *dir, struct host_view *ret);
void host_view_done(struct host_view *v);

/* Whether path (absolute) lies at or below one of the view's binds or its
 * mount points (so binding it again would add nothing of the host). */
bool host_view_covers(const struct host_view *v, const char *path);

/*
 * The container's own mount point that hides path (absolute) from a
 * container whose root is the host view (view) or a whole image root: a
 * fresh /tmp, /run, /dev, /proc, /sys or /workspace, and the view's filtered
 * /etc; NULL when path is the host's there. So a working directory below
 * /tmp is not the one the host has (docs/SANDBOX.md).
 */
const char *host_view_hidden_by(const char *path, bool view);

/* The generated /etc/passwd and /etc/group (pure; static strings). */
const char *host_view_passwd(void);
const char *host_view_group(void);
