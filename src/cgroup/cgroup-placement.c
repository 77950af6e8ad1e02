/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Placing a new child: its cgroup.procs files are opened before the clone
 * (the child is born into the v2 leaf with CLONE_INTO_CGROUP; the v1 leaves
 * of a hybrid host are written with its pid right after).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/macro.h"
#include "base/util.h"
#include "cgroup/cgroup-internal.h"

void cgroup_placement_done(struct cgroup_placement *p)
{
        if (!p)
                return;
        p->v2_fd = safe_close(p->v2_fd);
        for (size_t i = 0; i < p->n_v1 && i < ELEMENTSOF(p->v1_procs); i++)
                p->v1_procs[i] = safe_close(p->v1_procs[i]);
        p->n_v1 = 0;
}

int cgroup_placement_open(struct cgroup_tree *t, const char *rel, struct cgroup_placement *ret)
{
        struct cgroup_placement p = { .v2_fd = -EBADF };

        if (!cgroup_rel_valid(rel, false))
                return -EINVAL;
        for (size_t i = 0; i < ELEMENTSOF(p.v1_procs); i++)
                p.v1_procs[i] = -EBADF;
        p.v2_fd = cgroup_open_dir(t->v2.root_fd, rel);
        if (p.v2_fd < 0)
                return p.v2_fd;
        for (size_t i = 0; i < CG_V1_MAX && p.n_v1 < ELEMENTSOF(p.v1_procs); i++) {
                cleanup_close int dfd = -EBADF;
                int fd;

                if (t->v1[i].root_fd < 0 || i == CG_V1_DEVICES)
                        continue;
                dfd = cgroup_open_dir(t->v1[i].root_fd, rel);
                if (dfd < 0) {
                        cgroup_placement_done(&p);
                        return dfd;
                }
                fd = openat(dfd, "cgroup.procs", O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
                if (fd < 0) {
                        int r = -errno;
                        cgroup_placement_done(&p);
                        return r;
                }
                p.v1_procs[p.n_v1++] = fd;
        }
        *ret = p;
        return 0;
}

static int write_pid(int fd, pid_t pid)
{
        char buf[32];
        int n = snprintf(buf, sizeof(buf), "%d", (int) pid);
        ssize_t w = write(fd, buf, (size_t) n);
        if (w < 0)
                return -errno;
        return w == n ? 0 : -EIO;
}

int cgroup_placement_attach(const struct cgroup_placement *p, pid_t child)
{
        if (child <= 0 || child == getpid())
                return -EINVAL;
        for (size_t i = 0; i < p->n_v1; i++) {
                int r = write_pid(p->v1_procs[i], child);
                if (r < 0)
                        return r;
        }
        return 0;
}

int cgroup_placement_attach_v2(const struct cgroup_placement *p, pid_t child)
{
        cleanup_close int fd = -EBADF;

        if (child <= 0 || child == getpid())
                return -EINVAL;
        fd = openat(p->v2_fd, "cgroup.procs", O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return -errno;
        return write_pid(fd, child);
}

int cgroup_placement_attach_all(const struct cgroup_placement *p, pid_t pid)
{
        int r = cgroup_placement_attach(p, pid);
        if (r >= 0 && p->v2_fd >= 0)
                r = cgroup_placement_attach_v2(p, pid);
        return r;
}

void cgroup_view_done(struct cgroup_view *v)
{
        if (!v)
                return;
        for (size_t i = 0; i < v->n; i++)
                v->fds[i] = safe_close(v->fds[i]);
        v->n = 0;
}

int cgroup_view_open(struct cgroup_tree *t, const char *rel, struct cgroup_view *ret)
{
        struct cgroup_view v = {};
        cleanup_free char *parent = NULL;
        const char *slash;

        if (!cgroup_rel_valid(rel, false))
                return -EINVAL;
        if (t->mode != CGROUP_MODE_HYBRID)
                return -EOPNOTSUPP;
        slash = strrchr(rel, '/');
        parent = slash ? xstrndup(rel, (size_t) (slash - rel)) : xstrdup("");
        v.names[v.n] = "unified";
        v.fds[v.n] = cgroup_open_dir(t->v2.root_fd, parent);
        if (v.fds[v.n] < 0)
                return v.fds[v.n];
        v.n++;
        for (size_t i = 0; i < CG_V1_MAX; i++) {
                if (t->v1[i].root_fd < 0)
                        continue;
                v.names[v.n] = cgroup_v1_names[i];
                v.fds[v.n] = cgroup_open_dir(t->v1[i].root_fd, parent);
                if (v.fds[v.n] < 0) {
                        int r = v.fds[v.n];
                        cgroup_view_done(&v);
                        return r;
                }
                v.n++;
        }
        *ret = v;
        return 0;
}
