/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "sandbox/mount-api.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/fd-util.h"
#include "base/macro.h"

unsigned long long mount_attr_from_flags(unsigned long flags)
{
        unsigned long long a = 0;
        if (flags & MS_RDONLY)
                a |= MOUNT_ATTR_RDONLY;
        if (flags & MS_NOSUID)
                a |= MOUNT_ATTR_NOSUID;
        if (flags & MS_NODEV)
                a |= MOUNT_ATTR_NODEV;
        if (flags & MS_NOEXEC)
                a |= MOUNT_ATTR_NOEXEC;
        if (flags & MS_NOSYMFOLLOW)
                a |= MOUNT_ATTR_NOSYMFOLLOW;
        return a;
}

/* Adds attributes to a mount (tree); also makes it private, so that nothing
 * mounted under it later can propagate anywhere. */
int mount_set_attr(int fd, unsigned long long attr, bool recursive)
{
        struct mount_attr ma = {
                .attr_set = attr,
                .propagation = MS_PRIVATE,
        };
        if (mount_setattr(fd, "", AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0), &ma, sizeof(ma)) <
            0)
                return -errno;
        return 0;
}

int mount_attach_fd(int mnt_fd, int target_fd)
{
        if (move_mount(mnt_fd, "", target_fd, "",
                       MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
                return -errno;
        return 0;
}

#ifndef SYS_open_tree_attr
#define SYS_open_tree_attr 467 /* Linux 6.15, the same number on every architecture */
#endif

/* Recursive clone of whatever fd (O_PATH) points at, with attributes added. */
int mount_clone_at(int dir_fd, const char *path, unsigned long long attr)
{
        unsigned flags = OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE | AT_SYMLINK_NOFOLLOW |
                         (path[0] ? 0 : AT_EMPTY_PATH);
        /* open_tree_attr() clones and sets the attributes (recursively, with
         * AT_RECURSIVE) in one call; older kernels take two. So do seccomp
         * profiles older than the call (Docker's answer EPERM to a syscall
         * they do not list): then the two calls are what was allowed, and
         * the fast path is not tried again. */
        static bool fast_refused = false;
        if (!fast_refused) {
                struct mount_attr ma = { .attr_set = attr, .propagation = MS_PRIVATE };
                long fast = syscall(SYS_open_tree_attr, dir_fd, path, flags, &ma, sizeof(ma));
                if (fast >= 0)
                        return (int) fast;
                if (errno != ENOSYS && errno != EPERM)
                        return -errno;
                fast_refused = true;
        }
        int fd = open_tree(dir_fd, path, flags);
        if (fd < 0)
                return -errno;
        int r = mount_set_attr(fd, attr, true);
        if (r < 0) {
                safe_close(fd);
                return r;
        }
        return fd;
}

/* A fresh detached tmpfs (or any fs without a source) with string options. */
int mount_fs_new(const char *type, const char *const *opts, size_t n_opts, unsigned long long attr)
{
        cleanup_close int fs = fsopen(type, FSOPEN_CLOEXEC);
        if (fs < 0)
                return -errno;
        for (size_t i = 0; i + 1 < n_opts; i += 2) {
                int r = opts[i + 1] ? fsconfig(fs, FSCONFIG_SET_STRING, opts[i], opts[i + 1], 0)
                                    : fsconfig(fs, FSCONFIG_SET_FLAG, opts[i], NULL, 0);
                if (r < 0)
                        return -errno;
        }
        if (fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
                return -errno;
        int mnt = fsmount(fs, FSMOUNT_CLOEXEC, (unsigned) attr);
        if (mnt < 0)
                return -errno;
        if (mount_set_attr(mnt, 0, false) < 0) {
                int r = -errno;
                safe_close(mnt);
                return r;
        }
        return mnt;
}

int mount_tmpfs_new(const char *size, mode_t mode, unsigned long long attr)
{
        char m[16], sz[32];
        (void) snprintf(m, sizeof(m), "%o", (unsigned) (mode & 07777));
        (void) snprintf(sz, sizeof(sz), "%s", size);
        const char *opts[] = { "mode", m, "size", sz };
        return mount_fs_new("tmpfs", opts, ELEMENTSOF(opts), attr);
}
