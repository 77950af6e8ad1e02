/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "base/event-loop.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/macro.h"
#include "base/util.h"

#define LOOP_MAX_EVENTS 64

enum source_type { SOURCE_IO, SOURCE_TIMER, SOURCE_SIGNAL, SOURCE_CHILD };

struct loop_source {
        struct loop *loop; /* borrowed: the loop outlives its sources */
        enum source_type type;
        bool dead; /* freed during dispatch; reclaimed after the round */
        int fd;    /* watched fd (owned for SIGNAL and CHILD) */
        uint32_t events;
        usec_t when;     /* TIMER: USEC_INFINITY when disarmed */
        size_t heap_idx; /* TIMER: position in loop->heap, SIZE_MAX if not queued */
        void *userdata;
        union {
                loop_io_fn io;
                loop_time_fn time;
                loop_signal_fn signal;
                loop_child_fn child;
        } cb;
        struct loop_source *next_dead;
};

struct loop_defer_item {
        loop_defer_fn cb;
        void *userdata;
        struct loop_defer_item *next;
};

struct loop {
        int epfd;
        usec_t now;
        bool quit;
        int quit_code;
        struct loop_source **heap; /* min-heap on ->when */
        size_t heap_len, heap_alloc;
        struct loop_source *dead; /* freed sources awaiting reclaim */
        struct loop_defer_item *defer_head, *defer_tail;
};

int loop_new(struct loop **ret)
{
        struct loop *l = xcalloc(1, sizeof(*l));

        l->epfd = epoll_create1(EPOLL_CLOEXEC);
        if (l->epfd < 0) {
                int r = negative_errno();
                free(l);
                return r;
        }
        l->now = now_usec(CLOCK_MONOTONIC);
        *ret = l;
        return 0;
}

static void loop_reclaim(struct loop *l)
{
        while (l->dead) {
                struct loop_source *s = l->dead;
                l->dead = s->next_dead;
                free(s);
        }
}

struct loop *loop_free(struct loop *l)
{
        if (!l)
                return NULL;
        /* Sources still attached belong to owners that should have freed them;
         * their memory is theirs, only the loop's own state goes here. */
        loop_reclaim(l);
        while (l->defer_head) {
                struct loop_defer_item *d = l->defer_head;
                l->defer_head = d->next;
                free(d);
        }
        free(l->heap);
        safe_close(l->epfd);
        return mfree(l);
}

usec_t loop_now(struct loop *l)
{
        return l->now;
}

void loop_quit(struct loop *l, int code)
{
        l->quit = true;
        l->quit_code = code;
}

static struct loop_source *source_new(struct loop *l, enum source_type type, void *userdata)
{
        struct loop_source *s = xcalloc(1, sizeof(*s));
        s->loop = l;
        s->type = type;
        s->fd = -EBADF;
        s->when = USEC_INFINITY;
        s->heap_idx = SIZE_MAX;
        s->userdata = userdata;
        return s;
}

/* --- timer heap --- */

static void heap_swap(struct loop *l, size_t a, size_t b)
{
        struct loop_source *t = l->heap[a];
        l->heap[a] = l->heap[b];
        l->heap[b] = t;
        l->heap[a]->heap_idx = a;
        l->heap[b]->heap_idx = b;
}

static void heap_up(struct loop *l, size_t i)
{
        while (i > 0) {
                size_t p = (i - 1) / 2;
                if (l->heap[p]->when <= l->heap[i]->when)
                        break;
                heap_swap(l, i, p);
                i = p;
        }
}

static void heap_down(struct loop *l, size_t i)
{
        for (;;) {
                size_t c = 2 * i + 1, m = i;
                if (c < l->heap_len && l->heap[c]->when < l->heap[m]->when)
                        m = c;
                if (c + 1 < l->heap_len && l->heap[c + 1]->when < l->heap[m]->when)
                        m = c + 1;
                if (m == i)
                        break;
                heap_swap(l, i, m);
                i = m;
        }
}

static void heap_remove(struct loop *l, struct loop_source *s)
{
        size_t i = s->heap_idx;

        if (i == SIZE_MAX)
                return;
        s->heap_idx = SIZE_MAX;
        l->heap_len--;
        if (i == l->heap_len)
                return;
        l->heap[i] = l->heap[l->heap_len];
        l->heap[i]->heap_idx = i;
        heap_up(l, i);
        heap_down(l, l->heap[i]->heap_idx);
}

static void heap_insert(struct loop *l, struct loop_source *s)
{
        if (l->heap_len == l->heap_alloc) {
                l->heap_alloc = l->heap_alloc ? l->heap_alloc * 2 : 16;
                /* An array of pointers: the sources live in their own allocations. */
                l->heap = xrealloc(l->heap, l->heap_alloc * sizeof(struct loop_source *));
        }
        s->heap_idx = l->heap_len;
        l->heap[l->heap_len++] = s;
        heap_up(l, s->heap_idx);
}

void loop_timer_set(struct loop_source *s, usec_t when)
{
        if (!s || s->dead || s->type != SOURCE_TIMER)
                return;
        heap_remove(s->loop, s);
        s->when = when;
        if (when != USEC_INFINITY)
                heap_insert(s->loop, s);
}

int loop_add_timer(struct loop *l, usec_t when, loop_time_fn cb, void *userdata,
                   struct loop_source **ret)
{
        struct loop_source *s = source_new(l, SOURCE_TIMER, userdata);
        s->cb.time = cb;
        loop_timer_set(s, when);
        *ret = s;
        return 0;
}

/* --- fd sources --- */

static int source_watch(struct loop_source *s, int fd, uint32_t events)
{
        struct epoll_event ev = { .events = events, .data.ptr = s };

        if (epoll_ctl(s->loop->epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
                return negative_errno();
        s->fd = fd;
        s->events = events;
        return 0;
}

int loop_add_io(struct loop *l, int fd, uint32_t events, loop_io_fn cb, void *userdata,
                struct loop_source **ret)
{
        struct loop_source *s = source_new(l, SOURCE_IO, userdata);
        int r;

        s->cb.io = cb;
        r = source_watch(s, fd, events);
        if (r < 0) {
                free(s);
                return r;
        }
        *ret = s;
        return 0;
}

int loop_io_set_events(struct loop_source *s, uint32_t events)
{
        struct epoll_event ev = { .events = events, .data.ptr = s };

        if (s->events == events)
                return 0;
        if (epoll_ctl(s->loop->epfd, EPOLL_CTL_MOD, s->fd, &ev) < 0)
                return negative_errno();
        s->events = events;
        return 0;
}

int loop_add_signals(struct loop *l, const sigset_t *mask, loop_signal_fn cb, void *userdata,
                     struct loop_source **ret)
{
        struct loop_source *s;
        int fd, r;

        /* Blocked first, so a signal queues for the signalfd instead of
         * running a default action between the two calls. */
        if (sigprocmask(SIG_BLOCK, mask, NULL) < 0)
                return negative_errno();
        fd = signalfd(-1, mask, SFD_CLOEXEC | SFD_NONBLOCK);
        if (fd < 0)
                return negative_errno();
        s = source_new(l, SOURCE_SIGNAL, userdata);
        s->cb.signal = cb;
        r = source_watch(s, fd, EPOLLIN);
        if (r < 0) {
                safe_close(fd);
                free(s);
                return r;
        }
        *ret = s;
        return 0;
}

int loop_add_signal(struct loop *l, int sig, loop_signal_fn cb, void *userdata,
                    struct loop_source **ret)
{
        sigset_t mask;

        sigemptyset(&mask);
        sigaddset(&mask, sig);
        return loop_add_signals(l, &mask, cb, userdata, ret);
}

int loop_add_child(struct loop *l, int pidfd, loop_child_fn cb, void *userdata,
                   struct loop_source **ret)
{
        struct loop_source *s = source_new(l, SOURCE_CHILD, userdata);
        int r;

        /* A pidfd becomes readable once the process exits (pidfd_open(2)). */
        s->cb.child = cb;
        r = source_watch(s, pidfd, EPOLLIN);
        if (r < 0) {
                safe_close(pidfd);
                free(s);
                return r;
        }
        *ret = s;
        return 0;
}

struct loop_source *loop_source_free(struct loop_source *s)
{
        struct loop *l;

        if (!s || s->dead)
                return NULL;
        l = s->loop;
        if (s->type == SOURCE_TIMER)
                heap_remove(l, s);
        else if (s->fd >= 0) {
                (void) epoll_ctl(l->epfd, EPOLL_CTL_DEL, s->fd, NULL);
                if (s->type != SOURCE_IO)
                        safe_close(s->fd);
        }
        /* Not freed yet: epoll may have returned an event for s in the
         * current batch; dispatch skips dead sources. */
        s->dead = true;
        s->next_dead = l->dead;
        l->dead = s;
        return NULL;
}

void loop_defer(struct loop *l, loop_defer_fn cb, void *userdata)
{
        struct loop_defer_item *d = xcalloc(1, sizeof(*d));

        d->cb = cb;
        d->userdata = userdata;
        if (l->defer_tail)
                l->defer_tail->next = d;
        else
                l->defer_head = d;
        l->defer_tail = d;
}

static int dispatch_fd(struct loop_source *s, uint32_t revents)
{
        switch (s->type) {
        case SOURCE_IO:
                return s->cb.io(s, s->fd, revents, s->userdata);
        case SOURCE_SIGNAL: {
                struct signalfd_siginfo si;
                for (;;) {
                        ssize_t n = read(s->fd, &si, sizeof(si));
                        if (n != (ssize_t) sizeof(si))
                                return 0;
                        int r = s->cb.signal(s, &si, s->userdata);
                        if (r < 0 || s->dead)
                                return r;
                }
        }
        case SOURCE_CHILD: {
                siginfo_t si = {};
                if (waitid(P_PIDFD, (id_t) s->fd, &si, WEXITED | WNOHANG) < 0)
                        return 0;
                if (si.si_pid == 0)
                        return 0; /* spurious: not exited yet */
                /* One-shot: the pidfd stays readable forever after exit. */
                (void) epoll_ctl(s->loop->epfd, EPOLL_CTL_DEL, s->fd, NULL);
                return s->cb.child(s, &si, s->userdata);
        }
        case SOURCE_TIMER:
                break;
        }
        return 0;
}

static int run_timers(struct loop *l)
{
        while (l->heap_len > 0 && l->heap[0]->when <= l->now) {
                struct loop_source *s = l->heap[0];
                heap_remove(l, s);
                s->when = USEC_INFINITY;
                int r = s->cb.time(s, l->now, s->userdata);
                if (r < 0)
                        return r;
        }
        return 0;
}

static void run_deferred(struct loop *l)
{
        /* Items queued by deferred callbacks run in the next round. */
        struct loop_defer_item *d = l->defer_head;

        l->defer_head = l->defer_tail = NULL;
        while (d) {
                struct loop_defer_item *next = d->next;
                d->cb(d->userdata);
                free(d);
                d = next;
        }
}

int loop_run_once(struct loop *l, usec_t timeout_usec)
{
        struct epoll_event evs[LOOP_MAX_EVENTS];
        int timeout_ms = -1, n, r = 0;

        l->now = now_usec(CLOCK_MONOTONIC);
        if (l->defer_head)
                timeout_usec = 0;
        if (l->heap_len > 0) {
                usec_t next = l->heap[0]->when;
                usec_t d = next > l->now ? next - l->now : 0;
                if (d < timeout_usec)
                        timeout_usec = d;
        }
        if (timeout_usec != USEC_INFINITY) {
                /* Round up, so a timer never fires early and spins. */
                usec_t ms = (timeout_usec + USEC_PER_MSEC - 1) / USEC_PER_MSEC;
                timeout_ms = ms > INT32_MAX ? INT32_MAX : (int) ms;
        }
        n = epoll_wait(l->epfd, evs, LOOP_MAX_EVENTS, timeout_ms);
        if (n < 0 && errno != EINTR)
                return negative_errno();
        l->now = now_usec(CLOCK_MONOTONIC);
        for (int i = 0; i < n && r >= 0; i++) {
                struct loop_source *s = evs[i].data.ptr;
                if (!s->dead)
                        r = dispatch_fd(s, evs[i].events);
        }
        if (r >= 0)
                r = run_timers(l);
        run_deferred(l);
        loop_reclaim(l);
        return r;
}

int loop_run(struct loop *l)
{
        l->quit = false;
        while (!l->quit) {
                int r = loop_run_once(l, USEC_INFINITY);
                if (r < 0)
                        return r;
        }
        return l->quit_code;
}
