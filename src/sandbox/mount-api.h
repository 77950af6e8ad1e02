/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The new mount API (fsopen/fsmount, open_tree/move_mount, mount_setattr),
 * wrapped for the sandbox: every mount is a file descriptor until it is
 * attached, and every one is made private, so that nothing mounted under it
 * later propagates anywhere. Used by the container's view (mount-setup.c)
 * and by the kept network namespaces (netns-keep.c). All return -errno.
 */
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_NOSYMFOLLOW → MOUNT_ATTR_*. */
unsigned long long mount_attr_from_flags(unsigned long flags);

/* Adds attributes to a mount (tree, if recursive) and makes it private. */
int mount_set_attr(int fd, unsigned long long attr, bool recursive);

/* Attaches the detached mount mnt_fd on the O_PATH target_fd. */
int mount_attach_fd(int mnt_fd, int target_fd);

/* A recursive, private, detached clone of dir_fd/path ("" = dir_fd itself)
 * with attributes added; mounts the kernel locked can only be cloned so. */
int mount_clone_at(int dir_fd, const char *path, unsigned long long attr);

/* A fresh detached file system without a source (tmpfs, proc, sysfs, devpts,
 * overlay) configured with n_opts/2 key, value pairs (a NULL value sets a
 * flag). */
int mount_fs_new(const char *type, const char *const *opts, size_t n_opts, unsigned long long attr);

/* A fresh detached tmpfs of the given size ("64k") and root mode. */
int mount_tmpfs_new(const char *size, mode_t mode, unsigned long long attr);
