/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Stopping what runs in a group: freeze and thaw, cgroup.kill (or bounded
 * SIGKILL sweeps where the kernel lacks it), the pid list, and the bounded
 * waits for "empty" and "frozen" that every one of them ends with.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "base/dir-walk.h"
#include "base/fd-util.h"
#include "base/limits.h"
#include "base/macro.h"
#include "base/parse-util.h"
#include "base/util.h"
#include "cgroup/cgroup-internal.h"

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
