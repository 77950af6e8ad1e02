/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "sandbox/cgroup-view-ns.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/fd-util.h"
#include "base/macro.h"
#include "sandbox/mount-api.h"

/* The view's mounts, made detached in our namespace (a bind from a path
 * cannot reach a mount of another namespace): the helper only attaches them. */
struct view_mounts {
        int root;                  /* tmpfs for /sys/fs/cgroup */
        int dirs[CGROUP_VIEW_MAX]; /* clones of the view's directories */
        const char *const *names;
        size_t n;
};

static void view_mounts_done(struct view_mounts *m)
{
        m->root = safe_close(m->root);
        for (size_t i = 0; i < m->n; i++)
                m->dirs[i] = safe_close(m->dirs[i]);
}

/* In the helper, after fork(): system calls only. */
static int view_attach(const struct view_mounts *m)
{
        int target;

        if (unshare(CLONE_NEWNS) < 0)
                return -errno;
        /* Nothing done here reaches our namespace; our unmounts reach it. */
        if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0)
                return -errno;
        /* The host's hierarchies go, not just out of sight: the runtime finds
         * controllers in mountinfo, where a covered mount still shows. */
        if (umount2(CGROUP_VIEW_NS_ROOT, MNT_DETACH) < 0 && errno != EINVAL)
                return -errno;
        target = open(CGROUP_VIEW_NS_ROOT, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (target < 0 || mount_attach_fd(m->root, target) < 0)
                return -errno;
        for (size_t i = 0; i < m->n; i++) {
                if (mkdirat(m->root, m->names[i], 0755) < 0)
                        return -errno;
                target =
                        openat(m->root, m->names[i], O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (target < 0)
                        return -errno;
                int r = mount_attach_fd(m->dirs[i], target);
                if (r < 0)
                        return r;
        }
        /* Read-only: the runtime cannot add a hierarchy of its own choosing. */
        return mount_set_attr(m->root, MOUNT_ATTR_RDONLY, false);
}

int cgroup_view_ns_create(const struct cgroup_view *v, int *ret_fd)
{
        struct view_mounts m = { .root = -EBADF, .names = v->names, .n = v->n };
        cleanup_close int rd = -EBADF, wr = -EBADF;
        int fds[2], r = 0, ns = -EBADF;
        char path[64];
        ssize_t n;
        pid_t pid;

        if (v->n == 0 || v->n > CGROUP_VIEW_MAX)
                return -EINVAL;
        for (size_t i = 0; i < v->n; i++)
                m.dirs[i] = -EBADF;
        for (size_t i = 0; i < v->n && r >= 0; i++) {
                if (!v->names[i] || !*v->names[i] || strchr(v->names[i], '/'))
                        r = -EINVAL;
                else
                        r = m.dirs[i] = mount_clone_at(v->fds[i], "", 0);
        }
        if (r >= 0)
                r = m.root = mount_tmpfs_new(
                        "16k", 0755, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
        if (r >= 0 && pipe2(fds, O_CLOEXEC) < 0)
                r = -errno;
        if (r < 0) {
                view_mounts_done(&m);
                return r;
        }
        rd = fds[0], wr = fds[1];
        pid = fork();
        if (pid < 0) {
                r = -errno;
                view_mounts_done(&m);
                return r;
        }
        if (pid == 0) {
                int k = view_attach(&m);
                (void) !write(wr, &k, sizeof(k));
                /* Holds the namespace until we have opened it and kill it. */
                for (;;)
                        pause();
        }
        view_mounts_done(&m);
        safe_close(TAKE_FD(wr));
        do
                n = read(rd, &r, sizeof(r));
        while (n < 0 && errno == EINTR);
        if (n != sizeof(r))
                r = -EIO;
        if (r == 0) {
                (void) snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int) pid);
                ns = open(path, O_RDONLY | O_CLOEXEC);
                if (ns < 0)
                        r = -errno;
        }
        (void) kill(pid, SIGKILL);
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
                ;
        if (r < 0)
                return r;
        *ret_fd = ns;
        return 0;
}
