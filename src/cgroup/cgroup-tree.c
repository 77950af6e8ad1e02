/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The daemon's cgroup subtree as a whole: opening the subtree root in every
 * hierarchy, adopting ourselves into control/, creating groups with their
 * limits, statistics, removal, the blame lookup, destroying the subtree and
 * sweeping the stale ones of daemons that died. Mode-specific work is in
 * cgroup-v2.c and cgroup-hybrid.c; freezing, killing and the waits in
 * cgroup-kill.c; placing a child in cgroup-placement.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/dir-walk.h"
#include "base/fd-util.h"
#include "base/limits.h"
#include "base/macro.h"
#include "base/parse-util.h"
#include "base/string-table.h"
#include "base/util.h"
#include "cgroup/cgroup-internal.h"

static void hier_done(struct cgroup_hier *h)
{
        h->own_fd = safe_close(h->own_fd);
        h->root_fd = safe_close(h->root_fd);
        h->own_path = mfree(h->own_path);
        h->root_abs = mfree(h->root_abs);
}

struct cgroup_tree *cgroup_tree_free(struct cgroup_tree *t)
{
        if (!t)
                return NULL;
        hier_done(&t->v2);
        for (size_t i = 0; i < CG_V1_MAX; i++)
                hier_done(&t->v1[i]);
        free(t->subtree_name);
        free(t);
        return NULL;
}

enum cgroup_mode cgroup_tree_mode(const struct cgroup_tree *t)
{
        return t->mode;
}

/* Opens own (from /proc/self/cgroup) and creates + opens the subtree root. */
static int hier_open(struct cgroup_hier *h, const char *mount, const char *own_path,
                     const char *subtree)
{
        cleanup_close int mfd = -EBADF, own = -EBADF, root = -EBADF;

        mfd = open(mount, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (mfd < 0)
                return -errno;
        /* A path with ".." means we live outside our cgroup namespace's root:
         * RESOLVE_BENEATH refuses it rather than walking somewhere else. */
        own = cgroup_open_dir(mfd, own_path + 1);
        if (own < 0)
                return own;
        if (subtree) {
                if (mkdirat(own, subtree, 0755) < 0 && errno != EEXIST)
                        return -errno;
                root = cgroup_open_dir(own, subtree);
        } else
                root = fcntl(own, F_DUPFD_CLOEXEC, 3);
        if (root < 0)
                return root == -1 ? -errno : root;

        h->own_fd = TAKE_FD(own);
        h->root_fd = TAKE_FD(root);
        h->own_path = xstrdup(own_path);
        h->root_abs = xasprintf("%s%s%s%s%s", mount, streq(own_path, "/") ? "" : own_path,
                                subtree ? "/" : "", subtree ? subtree : "",
                                !subtree && streq(own_path, "/") ? "/" : "");
        return 0;
}

int cgroup_tree_open(const struct cgroup_layout *layout, struct cgroup_tree **ret)
{
        cleanup(cgroup_tree_freep) struct cgroup_tree *t = NULL;
        cleanup_free char *self = NULL, *v2_path = NULL;
        const char *text = layout->self_cgroup;
        int r;

        if (!layout->v2_mount)
                return -EINVAL;
        if (layout->subtree_name &&
            (!cgroup_rel_valid(layout->subtree_name, false) || strchr(layout->subtree_name, '/')))
                return -EINVAL;
        if (!text) {
                r = read_full_file_at(AT_FDCWD, "/proc/self/cgroup", CGROUP_FILE_MAX_BYTES, &self,
                                      NULL);
                if (r < 0)
                        return r;
                text = self;
        }

        t = xcalloc(1, sizeof(*t));
        t->v2 = (struct cgroup_hier){ .own_fd = -EBADF, .root_fd = -EBADF };
        for (size_t i = 0; i < CG_V1_MAX; i++)
                t->v1[i] = (struct cgroup_hier){ .own_fd = -EBADF, .root_fd = -EBADF };
        t->mode = layout->v1_mount ? CGROUP_MODE_HYBRID : CGROUP_MODE_V2;
        t->flags = layout->flags;
        t->subtree_name = layout->subtree_name ? xstrdup(layout->subtree_name) : NULL;

        r = cgroup_self_path_parse(text, NULL, &v2_path);
        if (r < 0)
                return r;
        r = hier_open(&t->v2, layout->v2_mount, v2_path, t->subtree_name);
        if (r < 0)
                return r;

        if (t->mode == CGROUP_MODE_HYBRID)
                for (size_t i = 0; i < CG_V1_MAX; i++) {
                        cleanup_free char *p = NULL, *mount = NULL;

                        if (i == CG_V1_DEVICES && !(t->flags & CGROUP_LAYOUT_DEVICES))
                                continue;
                        /* A controller the kernel lacks or the host did not
                         * mount is simply unused (limits on it: -EOPNOTSUPP). */
                        if (cgroup_self_path_parse(text, cgroup_v1_names[i], &p) < 0)
                                continue;
                        mount = xasprintf("%s/%s", layout->v1_mount, cgroup_v1_names[i]);
                        r = hier_open(&t->v1[i], mount, p, t->subtree_name);
                        if (r == -ENOENT)
                                continue;
                        if (r < 0)
                                return r;
                }

        t->has_kill = !(t->flags & CGROUP_LAYOUT_NO_KILL) &&
                      faccessat(t->v2.root_fd, "cgroup.kill", F_OK, 0) == 0;
        t->has_freeze = !(t->flags & CGROUP_LAYOUT_NO_FREEZE) &&
                        faccessat(t->v2.root_fd, "cgroup.freeze", F_OK, 0) == 0;
        *ret = TAKE_PTR(t);
        return 0;
}

int cgroup_sweep_stale(const struct cgroup_layout *layout, const char *prefix)
{
        cleanup_free char *self = NULL, *v2_path = NULL, *dir = NULL;
        cleanup_strv char **names = NULL, **stale = NULL;
        cleanup_close int dfd = -EBADF;
        const char *text = layout->self_cgroup;
        int r, n = 0;

        if (!text) {
                r = read_full_file_at(AT_FDCWD, "/proc/self/cgroup", CGROUP_FILE_MAX_BYTES, &self,
                                      NULL);
                if (r < 0)
                        return r;
                text = self;
        }
        r = cgroup_self_path_parse(text, NULL, &v2_path);
        if (r < 0)
                return r;
        dir = xasprintf("%s%s", layout->v2_mount, v2_path);
        dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return -errno;
        r = dir_list_names(dfd, true, &names);
        if (r < 0)
                return r;
        for (char **name = names; name && *name; name++) {
                const char *digits = startswith(*name, prefix);
                int pid;
                if (!digits || parse_int(digits, 1, INT_MAX, &pid) < 0 || pid == getpid())
                        continue;
                /* Alive (or ours to not know about): left alone. */
                if (kill(pid, 0) == 0 || errno == EPERM)
                        continue;
                strv_push(&stale, xstrdup(*name));
        }
        for (char **name = stale; name && *name; name++) {
                struct cgroup_layout l = *layout;
                cleanup(cgroup_tree_freep) struct cgroup_tree *t = NULL;
                l.subtree_name = *name;
                l.self_cgroup = text;
                l.flags |= CGROUP_LAYOUT_DEVICES; /* whether or not it had runc zones */
                if (cgroup_tree_open(&l, &t) < 0 || cgroup_tree_destroy(t) < 0)
                        continue;
                n++;
        }
        return n;
}

bool cgroup_tree_has_kill(const struct cgroup_tree *t)
{
        return t->has_kill;
}

bool cgroup_tree_has_freeze(const struct cgroup_tree *t)
{
        return t->has_freeze || t->v1[CG_V1_FREEZER].root_fd >= 0;
}

const char *cgroup_tree_path(const struct cgroup_tree *t, const char *controller)
{
        ssize_t i;

        if (!controller)
                return t->v2.root_abs;
        i = string_table_lookup_from_string(cgroup_v1_names, CG_V1_MAX, controller);
        return i < 0 ? NULL : t->v1[i].root_abs;
}

int cgroup_tree_missing_controllers(const struct cgroup_tree *t, char **ret)
{
        static const struct {
                const char *name;
                unsigned bit;
                int v1;
        } want[] = {
                { "cpu", CG_CTRL_CPU, CG_V1_CPU },
                { "memory", CG_CTRL_MEMORY, CG_V1_MEMORY },
                { "pids", CG_CTRL_PIDS, CG_V1_PIDS },
        };
        unsigned have = 0;
        char buf[32] = "";
        int r;

        if (t->mode == CGROUP_MODE_V2) {
                r = cgroup_v2_offered(t->v2.own_fd, &have);
                if (r < 0)
                        return r;
        } else
                for (size_t i = 0; i < ELEMENTSOF(want); i++)
                        if (t->v1[want[i].v1].root_fd >= 0)
                                have |= want[i].bit;
        for (size_t i = 0; i < ELEMENTSOF(want); i++)
                if (!(have & want[i].bit)) {
                        if (*buf)
                                (void) strncat(buf, " ", sizeof(buf) - strlen(buf) - 1);
                        (void) strncat(buf, want[i].name, sizeof(buf) - strlen(buf) - 1);
                }
        *ret = xstrdup(buf);
        return 0;
}

static int procs_write_self(int root_fd, const char *rel)
{
        cleanup_close int dfd = cgroup_open_dir(root_fd, rel);
        char buf[32];

        if (dfd < 0)
                return dfd;
        (void) snprintf(buf, sizeof(buf), "%d", (int) getpid());
        return cgroup_write_at(dfd, "cgroup.procs", buf);
}

/* Enables the managed controllers top-down on own, the root and every
 * component of rel (rel's last component excluded: a leaf delegates nothing). */
static int v2_enable_path(struct cgroup_tree *t, const char *rel, bool include_last)
{
        cleanup_free char *p = xstrdup(rel);
        unsigned enabled = 0;
        int r;

        r = cgroup_v2_enable(t->v2.own_fd, &enabled);
        if (r < 0)
                return r;
        t->own_enabled |= enabled;
        if (t->subtree_name) {
                r = cgroup_v2_enable(t->v2.root_fd, NULL);
                if (r < 0)
                        return r;
        }
        for (char *s = p; *p; s++) {
                bool last = *s == '\0';
                if (*s != '/' && !last)
                        continue;
                if (last && !include_last)
                        break;
                *s = '\0';
                {
                        cleanup_close int fd = -EBADF;
                        r = cgroup_mkdir_p(t->v2.root_fd, p);
                        if (r < 0)
                                return r;
                        fd = cgroup_open_dir(t->v2.root_fd, p);
                        if (fd < 0)
                                return fd;
                        r = cgroup_v2_enable(fd, NULL);
                        if (r < 0)
                                return r;
                }
                if (last)
                        break;
                *s = '/';
        }
        return 0;
}

int cgroup_tree_adopt_self(struct cgroup_tree *t)
{
        int r;

        for (size_t i = 0; i < CG_V1_MAX; i++) {
                if (t->v1[i].root_fd < 0)
                        continue;
                if (mkdirat(t->v1[i].root_fd, "control", 0755) < 0 && errno != EEXIST)
                        return -errno;
                r = procs_write_self(t->v1[i].root_fd, "control");
                if (r < 0)
                        return r;
        }
        if (mkdirat(t->v2.root_fd, "control", 0755) < 0 && errno != EEXIST)
                return -errno;
        /* Only getpid(): the whole thread group moves; nothing else does. */
        r = procs_write_self(t->v2.root_fd, "control");
        if (r < 0)
                return r;
        t->adopted = true;
        /* v2 forbids processes in a cgroup that delegates controllers (the
         * "no internal processes" rule): only now, with us out of own, can
         * own and the root enable them. Another process left in own makes
         * this fail with EBUSY: we never move it. */
        if (t->mode == CGROUP_MODE_V2)
                return v2_enable_path(t, "", false);
        return 0;
}

int cgroup_create(struct cgroup_tree *t, const char *rel, const struct cgroup_limits *limits)
{
        int r;

        if (!cgroup_rel_valid(rel, false))
                return -EINVAL;
        if (t->mode == CGROUP_MODE_V2) {
                r = v2_enable_path(t, rel, false);
                if (r < 0)
                        return r;
                r = cgroup_mkdir_p(t->v2.root_fd, rel);
                if (r < 0)
                        return r;
        } else {
                r = cgroup_mkdir_p(t->v2.root_fd, rel);
                if (r < 0)
                        return r;
                for (size_t i = 0; i < CG_V1_MAX; i++) {
                        if (t->v1[i].root_fd < 0)
                                continue;
                        r = cgroup_mkdir_p(t->v1[i].root_fd, rel);
                        if (r < 0)
                                return r;
                }
        }
        if (!limits)
                return 0;
        return cgroup_set_limits(t, rel, limits);
}

int cgroup_set_limits(struct cgroup_tree *t, const char *rel, const struct cgroup_limits *limits)
{
        if (!cgroup_rel_valid(rel, false) || !limits)
                return -EINVAL;
        if (limits->cpu < 0 || limits->cpu != limits->cpu)
                return -EINVAL;
        if (t->mode == CGROUP_MODE_V2) {
                cleanup_close int fd = cgroup_open_dir(t->v2.root_fd, rel);
                if (fd < 0)
                        return fd;
                return cgroup_v2_set_limits(fd, limits);
        }
        return cgroup_v1_set_limits(t, rel, limits);
}

/* ---- stats, removal, blame ------------------------------------------------- */

int cgroup_stats(struct cgroup_tree *t, const char *rel, struct cgroup_stats *ret)
{
        if (!cgroup_rel_valid(rel, true))
                return -EINVAL;
        if (t->mode == CGROUP_MODE_V2) {
                cleanup_close int fd = cgroup_open_dir(t->v2.root_fd, rel);
                if (fd < 0)
                        return fd;
                return cgroup_v2_stats(fd, ret);
        }
        return cgroup_v1_stats(t, rel, ret);
}

int cgroup_remove(struct cgroup_tree *t, const char *rel)
{
        int r = 0;

        if (!cgroup_rel_valid(rel, false))
                return -EINVAL;
        for (size_t i = 0; i < CG_V1_MAX; i++) {
                if (t->v1[i].root_fd < 0)
                        continue;
                int k = cgroup_rmdir_tree(t->v1[i].root_fd, rel);
                if (k < 0 && r == 0)
                        r = k;
        }
        int k = cgroup_rmdir_tree(t->v2.root_fd, rel);
        return r < 0 ? r : k;
}

static int move_self_back(struct cgroup_tree *t)
{
        char buf[32];
        int r = 0;

        (void) snprintf(buf, sizeof(buf), "%d", (int) getpid());
        for (size_t i = 0; i < CG_V1_MAX; i++) {
                if (t->v1[i].own_fd < 0)
                        continue;
                int k = cgroup_write_at(t->v1[i].own_fd, "cgroup.procs", buf);
                if (k < 0 && r == 0)
                        r = k;
        }
        int k = cgroup_write_at(t->v2.own_fd, "cgroup.procs", buf);
        return r < 0 ? r : k;
}

/* Kill, wait and remove one direct child of the subtree root. */
static int destroy_child(struct cgroup_tree *t, const char *name)
{
        int r = cgroup_kill(t, name);
        if (r < 0)
                return r;
        r = cgroup_wait_empty(t, name, 5 * USEC_PER_SEC);
        if (r < 0)
                return r;
        return cgroup_remove(t, name);
}

int cgroup_tree_destroy(struct cgroup_tree *t)
{
        cleanup_strv char **names = NULL;
        int r = 0, k;

        /* Without a subtree of our own the "subtree" is the cgroup we were
         * started in, whose other children are not ours: never sweep it. */
        if (!t->subtree_name)
                return -EPERM;

        /* 1. Everything but control/: children first, so the controllers
         *    they use can be handed back afterwards. */
        r = dir_list_names(t->v2.root_fd, true, &names);
        if (r < 0)
                return r;
        for (char **n = names; n && *n; n++) {
                if (streq(*n, "control"))
                        continue;
                k = destroy_child(t, *n);
                if (k < 0 && r == 0)
                        r = k;
        }

        /* 2. v2: undo the delegation so own may hold a process again. */
        if (t->mode == CGROUP_MODE_V2) {
                if (t->subtree_name)
                        (void) cgroup_v2_disable(t->v2.root_fd, CG_CTRL_ALL);
                if (t->own_enabled && cgroup_v2_disable(t->v2.own_fd, t->own_enabled) >= 0)
                        t->own_enabled = 0;
        }

        /* 3. Back to where we started, then control/ and the root itself. */
        if (t->adopted) {
                k = move_self_back(t);
                if (k < 0)
                        return r < 0 ? r : k; /* still inside: removing control would kill us */
                t->adopted = false;
        }
        k = destroy_child(t, "control");
        if (k < 0 && r == 0)
                r = k;
        if (t->subtree_name) {
                for (size_t i = 0; i < CG_V1_MAX; i++)
                        if (t->v1[i].own_fd >= 0 &&
                            unlinkat(t->v1[i].own_fd, t->subtree_name, AT_REMOVEDIR) < 0 &&
                            errno != ENOENT && r == 0)
                                r = -errno;
                if (unlinkat(t->v2.own_fd, t->subtree_name, AT_REMOVEDIR) < 0 && errno != ENOENT &&
                    r == 0)
                        r = -errno;
        }
        return r;
}

int cgroup_pid_subtree(struct cgroup_tree *t, pid_t pid, char **ret_rel)
{
        cleanup_free char *text = NULL, *path = NULL, *root = NULL, *file = NULL;
        const char *rest;
        int r;

        if (pid <= 0)
                return -EINVAL;
        file = xasprintf("/proc/%d/cgroup", (int) pid);
        r = read_full_file_at(AT_FDCWD, file, CGROUP_FILE_MAX_BYTES, &text, NULL);
        if (r == -ESRCH)
                return -ENOENT;
        if (r < 0)
                return r;
        r = cgroup_self_path_parse(text, NULL, &path);
        if (r < 0)
                return r == -ENOENT ? -EXDEV : r;
        /* Compare whole components: zones/agentx is not inside zones/agent. */
        if (streq(t->v2.own_path, "/"))
                root = t->subtree_name ? xasprintf("/%s", t->subtree_name) : xstrdup("");
        else
                root = t->subtree_name ? xasprintf("%s/%s", t->v2.own_path, t->subtree_name)
                                       : xstrdup(t->v2.own_path);
        rest = startswith(path, root);
        if (!rest)
                return -EXDEV;
        if (*rest == '\0') {
                *ret_rel = xstrdup("");
                return 0;
        }
        if (*rest != '/')
                return -EXDEV;
        *ret_rel = xstrdup(rest + 1);
        return 0;
}
