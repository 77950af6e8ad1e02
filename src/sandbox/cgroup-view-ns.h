/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A mount namespace in which a container runtime that looks its cgroups up
 * below /sys/fs/cgroup itself (runc on a hybrid host) sees only a
 * struct cgroup_view: a slave copy of our namespace whose /sys/fs/cgroup is
 * a read-only tmpfs holding exactly the view's directories, each bound at
 * /sys/fs/cgroup/<name>. Every run of the runtime for one container
 * (create, start, delete) enters the same namespace (COMMAND_ENTER_MOUNT_NS),
 * so the absolute paths the runtime records in its state name the same
 * directories each time; in our own namespace they would name the roots of
 * the host's hierarchies.
 *
 * The namespace lives as long as the returned fd (and anything that runs in
 * it); creating it briefly forks a helper that is reaped before returning.
 */
#include "cgroup/cgroup.h"

#define CGROUP_VIEW_NS_ROOT "/sys/fs/cgroup"

/* *ret_fd: an O_CLOEXEC fd of the namespace (setns(fd, CLONE_NEWNS)). */
int cgroup_view_ns_create(const struct cgroup_view *v, int *ret_fd);
