/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The container's file system view, built by the freshly cloned child of the
 * native launcher while it is still root of its new user namespace, and
 * entered with pivot_root(). Runs only in that child: it allocates nothing
 * and leaves its fds to be closed by the exec (all are O_CLOEXEC).
 *
 * The view (docs/SANDBOX.md has the full table):
 *   /            the image root, a private recursive bind, read-only, nosuid, nodev
 *   /proc        fresh procfs of the new pid namespace
 *   /dev         read-only tmpfs: null zero full random urandom tty (bound from
 *                the host), pts (new devpts), shm (tmpfs, tmp_bytes), symlinks;
 *                the read-only part is a clone of a template the spawning
 *                process builds once (mount_dev_template()), pts and shm
 *                are new in every container
 *   /sys         fresh read-only sysfs of the new network namespace;
 *                /sys/fs/cgroup is left empty
 *   /tmp         tmpfs of tmp_bytes, nosuid, nodev
 *   /run         read-only tmpfs holding only /run/openenvd (the socket dir)
 *   spec mounts  in order
 *   policy       last: its read-only paths, then its masks (Docker's and the
 *                spec's, struct container_policy)
 *
 * Mount targets that do not exist are created without writing the image: the
 * nearest existing ancestor is covered by a "scaffold" tmpfs that re-binds
 * every original entry (recursively, so submounts and read-only flags stay)
 * and then holds the new mount points; scaffolds are sealed read-only before
 * pivot_root (crun does the same; see docs/SANDBOX.md).
 */
#include "sandbox/container-spec.h"
#include "sandbox/launcher-native.h"

#include "base/limits.h"

/* A failed step as the child reports it over its pipe to the launcher:
 * fixed size, nothing owned (the child allocates nothing). */
struct container_step_error {
        enum container_step step;
        int error; /* positive errno */
        int index; /* spec mount or mask index for the per-entry steps, else -1 */
};

/* O_PATH fds of the host paths the view is made from. */
struct mount_sources {
        int rootfs;
        int socket_dir;                  /* -EBADF without one */
        int binds[CONTAINER_MAX_MOUNTS]; /* MOUNT_BIND sources; -EBADF for other kinds */
        int dev_template;                /* mount_dev_template(), or -EBADF: build /dev */
};

/*
 * The read-only part of every container's /dev, built once by the spawning
 * process: a detached tmpfs holding binds of the host's null, zero, full,
 * random, urandom and tty, the symlinks (ptmx, fd, stdin, stdout, stderr)
 * and the empty pts and shm mount points, sealed read-only. Each container
 * clones it (one open_tree() instead of some fifty calls) and mounts its own
 * devpts and shm tmpfs on it. Returns the mount fd (O_CLOEXEC) or -errno.
 */
int mount_dev_template(void);

/* Opens the sources while the child still has the daemon's host uid (before
 * it becomes root of its namespace), so that host paths the container's own
 * root could not traverse (a 0700 state dir) can still be bound. Only O_PATH
 * opens: nothing is read. Fills *err and returns -errno on failure. */
int mount_sources_open(const struct container_spec *spec, struct mount_sources *ret,
                       struct container_step_error *err);

/* Builds the view and pivots into it; on return the cwd and root are the
 * container's "/". The bind sources in src are closed once cloned (they are
 * the calling child's own fds). On failure fills *err (step, errno, index)
 * and returns -errno. */
int mount_setup(const struct container_spec *spec, const struct container_policy *policy,
                const struct mount_sources *src, struct container_step_error *err);
