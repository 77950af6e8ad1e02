/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The daemon's cgroup subtree: layout detection, opening the subtree root in
 * every hierarchy, creation, placement, freeze/kill and the bounded waits.
 * Mode-specific work is in cgroup-v2.c and cgroup-hybrid.c.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/dir-walk.h"
#include "base/fd-util.h"
#include "base/limits.h"
#include "base/macro.h"
#include "base/mountinfo.h"
#include "base/parse-util.h"
#include "base/string-table.h"
#include "base/util.h"
#include "cgroup/cgroup-internal.h"

static const char *const cgroup_mode_table[] = {
        [CGROUP_MODE_V2] = "v2",
        [CGROUP_MODE_HYBRID] = "hybrid",
};

DEFINE_STRING_TABLE_LOOKUP_TO_STRING_FALLBACK(cgroup_mode, enum cgroup_mode, "unknown");

/* ---- layout ---------------------------------------------------------------- */

void cgroup_layout_done(struct cgroup_layout *l)
{
        if (!l)
                return;
        free(l->storage);
        *l = (struct cgroup_layout){ 0 };
}

int cgroup_self_path_parse(const char *text, const char *controller, char **ret)
{
        /* Lines are "hierarchy-id:controller-list:path"; the cgroup2 entry is
         * "0::path". The path may contain ':' so split on the first two only. */
        for (const char *p = text; p && *p;) {
                const char *eol = strchr(p, '\n');
                size_t n = eol ? (size_t) (eol - p) : strlen(p);
                const char *c1 = memchr(p, ':', n);
                const char *c2 = c1 ? memchr(c1 + 1, ':', n - (size_t) (c1 + 1 - p)) : NULL;

                if (c2) {
                        const char *list = c1 + 1;
                        size_t llen = (size_t) (c2 - list);
                        const char *path = c2 + 1;
                        size_t plen = n - (size_t) (path - p);
                        bool match = controller ? strn_list_has(list, llen, ',', controller)
                                                : (llen == 0 && c1 - p == 1 && p[0] == '0');
                        if (match) {
                                if (plen == 0 || path[0] != '/' || plen > PATH_MAX)
                                        return -EINVAL;
                                *ret = xstrndup(path, plen);
                                return 0;
                        }
                }
                p = eol ? eol + 1 : NULL;
        }
        return -ENOENT;
}

/* "cgroup" mounts of memory or pids sit in one directory (/sys/fs/cgroup):
 * the v1 root is the parent of either. */
static bool is_v1_anchor(const struct mountinfo_entry *e)
{
        return streq(e->fstype, "cgroup") && (mount_options_has(e->super_options, "memory") ||
                                              mount_options_has(e->super_options, "pids"));
}

int cgroup_layout_detect(struct cgroup_layout *ret, enum cgroup_mode *ret_mode)
{
        cleanup(mountinfo_freep) struct mountinfo *mi = NULL;
        cleanup_free char *v2 = NULL, *v1 = NULL;
        int r;

        r = mountinfo_load_at(AT_FDCWD, "/proc/self/mountinfo", &mi);
        if (r < 0)
                return r;
        for (size_t i = 0; i < mi->n_entries; i++) {
                const struct mountinfo_entry *e = &mi->entries[i];

                /* Paths are built by concatenation below: a mount point the
                 * kernel had to escape (space, tab, newline, backslash) is
                 * never one we set up, so it is not ours to use. */
                if (strpbrk(e->mount_point, " \t\n\\"))
                        continue;
                if (streq(e->fstype, "cgroup2") && !v2)
                        v2 = xstrdup(e->mount_point);
                else if (!v1 && is_v1_anchor(e)) {
                        const char *slash = strrchr(e->mount_point, '/');
                        if (slash && slash != e->mount_point)
                                v1 = xstrndup(e->mount_point, (size_t) (slash - e->mount_point));
                }
        }
        if (!v2)
                return -ENOMEDIUM;

        size_t l2 = strlen(v2), l1 = v1 ? strlen(v1) : 0;
        char *storage = xmalloc(l2 + l1 + 2);
        memcpy(storage, v2, l2 + 1);
        if (v1)
                memcpy(storage + l2 + 1, v1, l1 + 1);
        *ret = (struct cgroup_layout){
                .v2_mount = storage,
                .v1_mount = v1 ? storage + l2 + 1 : NULL,
                .storage = storage,
        };
        if (ret_mode)
                *ret_mode = v1 ? CGROUP_MODE_HYBRID : CGROUP_MODE_V2;
        return 0;
}

/* ---- tree ------------------------------------------------------------------ */

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
        const char *text = layout->self_cgroup;
        char **stale = NULL;
        DIR *d;
        struct dirent *de;
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
        d = opendir(dir);
        if (!d)
                return -errno;
        while ((de = readdir(d))) {
                const char *digits = startswith(de->d_name, prefix);
                int pid;
                if (de->d_type != DT_DIR || !digits || parse_int(digits, 1, INT_MAX, &pid) < 0 ||
                    pid == getpid())
                        continue;
                /* Alive (or ours to not know about): left alone. */
                if (kill(pid, 0) == 0 || errno == EPERM)
                        continue;
                strv_push(&stale, xstrdup(de->d_name));
        }
        closedir(d);
        for (char **name = stale; name && *name; name++) {
                struct cgroup_layout l = *layout;
                cleanup(cgroup_tree_freep) struct cgroup_tree *t = NULL;
                l.subtree_name = *name;
                l.self_cgroup = text;
                if (cgroup_tree_open(&l, &t) < 0 || cgroup_tree_destroy(t) < 0)
                        continue;
                n++;
        }
        strv_free(stale);
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
        if (!controller)
                return t->v2.root_abs;
        for (size_t i = 0; i < CG_V1_MAX; i++)
                if (streq(controller, cgroup_v1_names[i]))
                        return t->v1[i].root_abs;
        return NULL;
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

/* ---- placement ------------------------------------------------------------- */

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
        for (size_t i = 0; i < CG_V1_MAX && i < ELEMENTSOF(p.v1_procs); i++) {
                cleanup_close int dfd = -EBADF;
                int fd;

                if (t->v1[i].root_fd < 0)
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

/* ---- waits ----------------------------------------------------------------- */

/*
 * Waits until check() returns > 0. The kernel changes cgroup.events within
 * ~0.1-0.4 ms but rate-limits its notifications to one per 10 ms per file
 * (CGROUP_FILE_NOTIFY_MIN_INTV), so waiting on poll() alone costs up to
 * 10 ms per event. Re-read instead: sched_yield() for the first 200 µs (the
 * common case finishes there), then sleep in ppoll() on POLLPRI of the
 * events file (woken early by a notification that does arrive) with an
 * exponential back-off capped at 1 ms. Bounded by timeout.
 */
static int wait_until(int (*check)(void *userdata), void *userdata, int events_fd, usec_t timeout)
{
        usec_t start = now_usec(CLOCK_MONOTONIC), delay = 25;

        for (;;) {
                int r = check(userdata);
                if (r != 0)
                        return r < 0 ? r : 0;
                usec_t now = now_usec(CLOCK_MONOTONIC);
                if (now - start >= timeout)
                        return -ETIMEDOUT;
                if (now - start < 200) {
                        (void) sched_yield();
                        continue;
                }
                usec_t d = MIN(delay, timeout - (now - start));
                struct timespec ts = { .tv_sec = 0, .tv_nsec = (long) (d * 1000) };
                struct pollfd pfd = { .fd = events_fd, .events = POLLPRI };
                (void) ppoll(&pfd, events_fd >= 0 ? 1 : 0, &ts, NULL);
                delay = MIN(delay * 2, (usec_t) 1000);
        }
}

struct events_check {
        int fd;
        const char *key;
        uint64_t want;
};

static int events_check(void *userdata)
{
        struct events_check *c = userdata;
        char buf[512];
        uint64_t v;
        /* pread at 0 re-generates the seq_file: always the current state. */
        ssize_t n = pread(c->fd, buf, sizeof(buf) - 1, 0);
        int r;

        if (n < 0)
                return -errno;
        buf[n] = '\0';
        r = cgroup_keyed_get(buf, c->key, &v);
        if (r < 0)
                return r;
        return v == c->want;
}

/* 0 reached, -ETIMEDOUT, -ENOENT if rel does not exist. */
static int wait_events(struct cgroup_tree *t, const char *rel, const char *key, uint64_t want,
                       usec_t timeout)
{
        cleanup_close int dfd = -EBADF, fd = -EBADF;
        struct events_check c = { .key = key, .want = want };

        dfd = cgroup_open_dir(t->v2.root_fd, rel);
        if (dfd < 0)
                return dfd;
        fd = openat(dfd, "cgroup.events", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return -errno;
        c.fd = fd;
        return wait_until(events_check, &c, fd, timeout);
}

int cgroup_is_populated(struct cgroup_tree *t, const char *rel)
{
        cleanup_close int dfd = -EBADF;
        uint64_t v;
        int r;

        if (!cgroup_rel_valid(rel, true))
                return -EINVAL;
        dfd = cgroup_open_dir(t->v2.root_fd, rel);
        if (dfd < 0)
                return dfd == -ENOENT ? 0 : dfd;
        r = cgroup_read_keyed_at(dfd, "cgroup.events", "populated", &v);
        if (r < 0)
                return r;
        return v != 0;
}

int cgroup_is_frozen(struct cgroup_tree *t, const char *rel)
{
        cleanup_close int dfd = -EBADF;
        uint64_t v;
        int r;

        if (!cgroup_rel_valid(rel, true))
                return -EINVAL;
        if (!t->has_freeze)
                return t->v1[CG_V1_FREEZER].root_fd >= 0 ? cgroup_v1_freezer_state(t, rel)
                                                         : -EOPNOTSUPP;
        dfd = cgroup_open_dir(t->v2.root_fd, rel);
        if (dfd < 0)
                return dfd;
        r = cgroup_read_keyed_at(dfd, "cgroup.events", "frozen", &v);
        if (r < 0)
                return r;
        return v != 0;
}

int cgroup_events_open(struct cgroup_tree *t, const char *rel)
{
        cleanup_close int dfd = -EBADF;
        int fd;

        if (!cgroup_rel_valid(rel, true))
                return -EINVAL;
        dfd = cgroup_open_dir(t->v2.root_fd, rel);
        if (dfd < 0)
                return dfd;
        fd = openat(dfd, "cgroup.events", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        return fd < 0 ? -errno : fd;
}

int cgroup_wait_empty(struct cgroup_tree *t, const char *rel, usec_t timeout)
{
        int r;

        if (!cgroup_rel_valid(rel, true))
                return -EINVAL;
        r = wait_events(t, rel, "populated", 0, timeout);
        /* A cgroup that is gone is empty. */
        return r == -ENOENT ? 0 : r;
}

struct freezer_check {
        struct cgroup_tree *t;
        const char *rel;
};

static int freezer_check(void *userdata)
{
        struct freezer_check *c = userdata;
        return cgroup_v1_freezer_state(c->t, c->rel);
}

int cgroup_wait_frozen(struct cgroup_tree *t, const char *rel, usec_t timeout)
{
        if (!cgroup_rel_valid(rel, true))
                return -EINVAL;
        if (t->has_freeze)
                return wait_events(t, rel, "frozen", 1, timeout);
        if (t->v1[CG_V1_FREEZER].root_fd >= 0) {
                /* v1 freezer.state has no notifications: re-read only. */
                struct freezer_check c = { .t = t, .rel = rel };
                return wait_until(freezer_check, &c, -EBADF, timeout);
        }
        return -EOPNOTSUPP;
}

/* ---- freeze / kill --------------------------------------------------------- */

static int freeze_set(struct cgroup_tree *t, const char *rel, bool frozen)
{
        if (!cgroup_rel_valid(rel, true))
                return -EINVAL;
        if (t->has_freeze) {
                cleanup_close int dfd = cgroup_open_dir(t->v2.root_fd, rel);
                if (dfd < 0)
                        return dfd;
                return cgroup_write_at(dfd, "cgroup.freeze", frozen ? "1" : "0");
        }
        if (t->v1[CG_V1_FREEZER].root_fd >= 0)
                return cgroup_v1_freezer_set(t, rel, frozen);
        return -EOPNOTSUPP;
}

int cgroup_freeze(struct cgroup_tree *t, const char *rel)
{
        return freeze_set(t, rel, true);
}

int cgroup_thaw(struct cgroup_tree *t, const char *rel)
{
        return freeze_set(t, rel, false);
}

int cgroup_list_pids(struct cgroup_tree *t, const char *rel, pid_t **ret_pids, size_t *ret_n)
{
        cleanup_close int dfd = -EBADF, fd = -EBADF;
        cleanup_free char *procs = NULL;
        pid_t *pids = NULL;
        size_t n = 0, len;
        int r;

        if (!cgroup_rel_valid(rel, true))
                return -EINVAL;
        dfd = cgroup_open_dir(t->v2.root_fd, rel);
        if (dfd < 0)
                return dfd;
        fd = openat(dfd, "cgroup.procs", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return -errno;
        r = read_full_fd(fd, CGROUP_PROCS_MAX_BYTES, &procs, &len);
        if (r < 0)
                return r;
        /* At most one pid per two bytes ("1\n"). */
        pids = xcalloc(len / 2 + 1, sizeof(*pids));
        for (char *p = procs, *eol; p && *p; p = eol ? eol + 1 : NULL) {
                int pid;
                eol = strchr(p, '\n');
                if (eol)
                        *eol = '\0';
                if (parse_int(p, 1, INT_MAX, &pid) >= 0)
                        pids[n++] = pid;
        }
        *ret_pids = pids;
        *ret_n = n;
        return 0;
}

/* Sends SIGKILL to every pid in dfd's cgroup.procs; counts them. */
static int sweep_procs(int dfd, size_t *count)
{
        cleanup_free char *procs = NULL;
        cleanup_close int fd = openat(dfd, "cgroup.procs", O_RDONLY | O_CLOEXEC);
        int r;

        if (fd < 0)
                return -errno;
        r = read_full_fd(fd, CGROUP_PROCS_MAX_BYTES, &procs, NULL);
        if (r < 0)
                return r;
        for (char *p = procs, *eol; p && *p; p = eol ? eol + 1 : NULL) {
                int pid;
                eol = strchr(p, '\n');
                if (eol)
                        *eol = '\0';
                /* Never ourselves, whatever a confused caller asked for. */
                if (parse_int(p, 1, INT_MAX, &pid) < 0 || pid == getpid())
                        continue;
                (void) kill(pid, SIGKILL);
                (*count)++;
        }
        return 0;
}

struct sweep {
        size_t count;
        int error; /* the first, but a group that vanished (-ENOENT) */
};

static int sweep_visit(const struct dir_walk_entry *e, enum dir_walk_event event, void *userdata)
{
        struct sweep *s = userdata;
        int k = 0;

        if (event == DIR_WALK_ENTER)
                k = sweep_procs(e->fd, &s->count);
        else if (event == DIR_WALK_ERROR && e->error == -ELOOP)
                k = e->error; /* deeper than any cgroup we make: say so */
        /* A child we cannot open has gone (or is not ours): nothing to kill. */
        if (k < 0 && k != -ENOENT && s->error == 0)
                s->error = k;
        /* A group whose pids we cannot read is not entered either. */
        return event == DIR_WALK_ENTER && k < 0 ? DIR_WALK_SKIP : DIR_WALK_CONTINUE;
}

/* SIGKILL to every pid in dfd and in every cgroup below it, parents first. */
static int sweep_tree(int dfd, size_t *count)
{
        struct sweep s = {};
        int r;

        r = sweep_procs(dfd, &s.count);
        if (r < 0)
                return r;
        /* Depth is bounded by CGROUP_PATH_MAX (a level costs at least 2 bytes). */
        r = dir_walk(dfd,
                     &(const struct dir_walk_options){ .max_depth = CGROUP_PATH_MAX / 2,
                                                       .dirs_only = true },
                     sweep_visit, &s);
        *count += s.count;
        return r < 0 ? r : s.error;
}

/*
 * Without cgroup.kill: bounded passes of SIGKILL over cgroup.procs. The group
 * is frozen first so a fork bomb cannot outrun the sweep, and so the pids we
 * read cannot exit and be reused before the signal lands (frozen tasks do not
 * exit on their own; v1-frozen tasks die of SIGKILL only once thawed).
 */
static int kill_sweep(struct cgroup_tree *t, const char *rel)
{
        for (unsigned pass = 0; pass < CGROUP_KILL_PASSES; pass++) {
                size_t count = 0;
                bool frozen = freeze_set(t, rel, true) >= 0;
                int r;

                if (frozen)
                        (void) cgroup_wait_frozen(t, rel, 100 * USEC_PER_MSEC);
                {
                        cleanup_close int dfd = cgroup_open_dir(t->v2.root_fd, rel);
                        if (dfd < 0)
                                return dfd == -ENOENT ? 0 : dfd;
                        r = sweep_tree(dfd, &count);
                }
                /* On hybrid hosts a task might be in a v1 leaf only. */
                if (r >= 0 && t->v1[CG_V1_PIDS].root_fd >= 0) {
                        cleanup_close int dfd = cgroup_open_dir(t->v1[CG_V1_PIDS].root_fd, rel);
                        if (dfd >= 0)
                                r = sweep_tree(dfd, &count);
                }
                if (frozen)
                        (void) freeze_set(t, rel, false);
                if (r < 0 && r != -ENOENT)
                        return r;
                if (count == 0)
                        return 0;
                /* The next pass finds nothing once they are gone. */
                (void) cgroup_wait_empty(t, rel, 10 * USEC_PER_MSEC);
        }
        return -EBUSY;
}

int cgroup_kill(struct cgroup_tree *t, const char *rel)
{
        cleanup_close int dfd = -EBADF;

        if (!cgroup_rel_valid(rel, true))
                return -EINVAL;
        /* Never a group we sit in: cgroup.kill would include us. Without a
         * subtree name the root is our own cgroup. */
        if ((t->adopted || !t->subtree_name) && streq(rel, ""))
                return -EBUSY;
        if (t->adopted && streq(rel, "control"))
                return -EBUSY;
        dfd = cgroup_open_dir(t->v2.root_fd, rel);
        if (dfd < 0)
                return dfd == -ENOENT ? 0 : dfd;
        if (t->has_kill)
                /* Atomic against forks: the kernel kills the whole subtree
                 * while holding the cgroup lock (Linux 5.14). */
                return cgroup_write_at(dfd, "cgroup.kill", "1");
        return kill_sweep(t, rel);
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
        cleanup_close int dup_fd = -EBADF;
        char **names = NULL;
        DIR *d;
        struct dirent *de;
        int r = 0, k;

        /* Without a subtree of our own the "subtree" is the cgroup we were
         * started in, whose other children are not ours: never sweep it. */
        if (!t->subtree_name)
                return -EPERM;

        /* 1. Everything but control/: children first, so the controllers
         *    they use can be handed back afterwards. */
        dup_fd = fcntl(t->v2.root_fd, F_DUPFD_CLOEXEC, 3);
        if (dup_fd < 0)
                return -errno;
        d = fdopendir(dup_fd);
        if (!d)
                return -errno;
        TAKE_FD(dup_fd);
        while ((de = readdir(d)))
                if (de->d_type == DT_DIR && !streq(de->d_name, ".") && !streq(de->d_name, "..") &&
                    !streq(de->d_name, "control"))
                        strv_push(&names, xstrdup(de->d_name));
        closedir(d);
        for (char **n = names; n && *n; n++) {
                k = destroy_child(t, *n);
                if (k < 0 && r == 0)
                        r = k;
        }
        strv_free(names);

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
