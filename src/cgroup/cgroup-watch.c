/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "cgroup/cgroup-watch.h"

#include <errno.h>

#include "base/util.h"

#define FIRST_DELAY 100
#define MAX_DELAY   (2 * USEC_PER_MSEC)

struct cgroup_watch {
        struct loop *loop;        /* borrowed */
        struct cgroup_tree *tree; /* borrowed */
        char *rels[CGROUP_WATCH_MAX];
        size_t n;
        enum cgroup_watch_goal goal;
        usec_t deadline, delay;
        struct loop_source *timer;
        struct loop_source *events[CGROUP_WATCH_MAX];
        int events_fd[CGROUP_WATCH_MAX];
        cgroup_watch_fn cb;
        void *userdata;
        bool done;
};

/* 1 when every cgroup has reached the goal, 0 not yet. */
static int reached(struct cgroup_watch *w)
{
        for (size_t i = 0; i < w->n; i++) {
                int r = w->goal == CGROUP_WATCH_EMPTY ? !cgroup_is_populated(w->tree, w->rels[i])
                                                      : cgroup_is_frozen(w->tree, w->rels[i]);
                /* Gone: empty, and nothing left to freeze. */
                if (r == -ENOENT)
                        continue;
                if (r <= 0)
                        return 0;
        }
        return 1;
}

static void finish(struct cgroup_watch *w, int result)
{
        w->done = true;
        w->timer = loop_source_free(w->timer);
        for (size_t i = 0; i < w->n; i++)
                w->events[i] = loop_source_free(w->events[i]);
        w->cb(w->userdata, result);
}

static void check(struct cgroup_watch *w, usec_t now)
{
        if (w->done)
                return;
        if (reached(w)) {
                finish(w, 0);
                return;
        }
        if (now >= w->deadline) {
                finish(w, -ETIMEDOUT);
                return;
        }
        loop_timer_set(w->timer, MIN(now + w->delay, w->deadline));
        w->delay = MIN(w->delay * 2, (usec_t) MAX_DELAY);
}

static int on_timer(struct loop_source *s, usec_t now, void *userdata)
{
        (void) s;
        check(userdata, now);
        return 0;
}

static int on_events(struct loop_source *s, int fd, uint32_t revents, void *userdata)
{
        struct cgroup_watch *w = userdata;
        (void) s;
        (void) fd;
        (void) revents;
        check(w, loop_now(w->loop));
        return 0;
}

int cgroup_watch_start(struct loop *l, struct cgroup_tree *t, const char *const *rels, size_t n,
                       enum cgroup_watch_goal goal, usec_t timeout, cgroup_watch_fn cb,
                       void *userdata, struct cgroup_watch **ret)
{
        struct cgroup_watch *w;

        if (n > CGROUP_WATCH_MAX)
                return -E2BIG;
        w = xcalloc(1, sizeof(*w));
        w->loop = l;
        w->tree = t;
        w->goal = goal;
        w->n = n;
        w->cb = cb;
        w->userdata = userdata;
        w->delay = FIRST_DELAY;
        w->deadline = loop_now(l) + timeout;
        for (size_t i = 0; i < n; i++) {
                w->rels[i] = xstrdup(rels[i]);
                w->events_fd[i] = cgroup_events_open(t, rels[i]);
                /* Best effort: the timer alone suffices (v1 freezer, gone).
                 * Edge-triggered: kernfs keeps reporting EPOLLPRI until the
                 * watched fd itself is re-read, which it never is. */
                if (w->events_fd[i] >= 0 && loop_add_io(l, w->events_fd[i], EPOLLPRI | EPOLLET,
                                                        on_events, w, &w->events[i]) < 0)
                        w->events[i] = NULL;
        }
        /* First look at the start of the next round: never a callback from
         * inside this call. */
        (void) loop_add_timer(l, loop_now(l), on_timer, w, &w->timer);
        *ret = w;
        return 0;
}

struct cgroup_watch *cgroup_watch_free(struct cgroup_watch *w)
{
        if (!w)
                return NULL;
        loop_source_free(w->timer);
        for (size_t i = 0; i < w->n; i++) {
                loop_source_free(w->events[i]);
                if (w->events_fd[i] >= 0)
                        safe_close(w->events_fd[i]);
                free(w->rels[i]);
        }
        return mfree(w);
}
