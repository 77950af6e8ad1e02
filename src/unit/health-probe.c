/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "unit/health-probe.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "base/fd-util.h"
#include "base/util.h"
#include "relay/http-head.h"

#define ATTEMPT_TIMEOUT USEC_PER_SEC
#define FIRST_PAUSE     100
#define MAX_PAUSE       (10 * USEC_PER_MSEC)

static const char request[] = "GET /health HTTP/1.1\r\nHost: env\r\nConnection: close\r\n\r\n";

struct health_probe {
        struct loop *loop;
        struct sockaddr_un addr;
        usec_t deadline, pause;
        int fd;
        size_t sent;
        char buf[64];
        size_t len;
        struct loop_source *io, *timer;
        health_probe_fn cb;
        void *userdata;
        bool done;
};

static void attempt(struct health_probe *p);

static void close_attempt(struct health_probe *p)
{
        p->io = loop_source_free(p->io);
        p->fd = safe_close(p->fd);
        p->sent = p->len = 0;
}

static void finish(struct health_probe *p, int result)
{
        close_attempt(p);
        p->timer = loop_source_free(p->timer);
        p->done = true;
        p->cb(p->userdata, result);
}

/* The attempt failed: another one after a pause, or give up. */
static void retry(struct health_probe *p)
{
        usec_t now = loop_now(p->loop);

        close_attempt(p);
        if (now >= p->deadline) {
                finish(p, -ETIMEDOUT);
                return;
        }
        loop_timer_set(p->timer, MIN(now + p->pause, p->deadline));
        p->pause = MIN(p->pause * 2, (usec_t) MAX_PAUSE);
}

/* -1 failed, 0 need more, 1 healthy. */
static int parse(const struct health_probe *p)
{
        unsigned status;
        int r = http_status_line_parse(p->buf, p->len, &status);

        if (r <= 0)
                return r < 0 ? -1 : 0;
        return status < 500 ? 1 : -1;
}

static int on_io(struct loop_source *s, int fd, uint32_t revents, void *userdata)
{
        struct health_probe *p = userdata;
        ssize_t n;

        (void) s;
        if (p->sent < sizeof(request) - 1) {
                n = send(fd, request + p->sent, sizeof(request) - 1 - p->sent, MSG_NOSIGNAL);
                if (n < 0 && errno != EAGAIN) {
                        retry(p);
                        return 0;
                }
                if (n > 0)
                        p->sent += (size_t) n;
                if (p->sent < sizeof(request) - 1)
                        return 0;
                (void) loop_io_set_events(p->io, EPOLLIN);
                return 0;
        }
        if (!(revents & (EPOLLIN | EPOLLHUP | EPOLLERR)))
                return 0;
        n = recv(fd, p->buf + p->len, sizeof(p->buf) - 1 - p->len, 0);
        if (n < 0 && errno == EAGAIN)
                return 0;
        if (n > 0)
                p->len += (size_t) n;
        int r = parse(p);
        if (r > 0)
                finish(p, 0);
        else if (r < 0 || n <= 0 || p->len >= sizeof(p->buf) - 1)
                retry(p);
        return 0;
}

static void attempt(struct health_probe *p)
{
        p->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        /* A unix connect() completes at once or fails (EAGAIN: backlog full). */
        if (p->fd < 0 || connect(p->fd, (struct sockaddr *) &p->addr, sizeof(p->addr)) < 0 ||
            loop_add_io(p->loop, p->fd, EPOLLOUT, on_io, p, &p->io) < 0) {
                retry(p);
                return;
        }
        /* One attempt may take a second at most; the timer is the retry
         * timer too (a fresh attempt re-arms it). */
        loop_timer_set(p->timer, MIN(loop_now(p->loop) + ATTEMPT_TIMEOUT, p->deadline));
}

static int on_timer(struct loop_source *s, usec_t now, void *userdata)
{
        struct health_probe *p = userdata;
        (void) s;
        if (p->done)
                return 0;
        if (p->fd >= 0) {
                /* The attempt hung. */
                retry(p);
                return 0;
        }
        if (now >= p->deadline) {
                finish(p, -ETIMEDOUT);
                return 0;
        }
        attempt(p);
        return 0;
}

int health_probe_start(struct loop *l, const char *socket_path, usec_t timeout, health_probe_fn cb,
                       void *userdata, struct health_probe **ret)
{
        struct health_probe *p;

        if (strlen(socket_path) >= sizeof(p->addr.sun_path))
                return -ENAMETOOLONG;
        p = xcalloc(1, sizeof(*p));
        p->loop = l;
        p->addr.sun_family = AF_UNIX;
        memcpy(p->addr.sun_path, socket_path, strlen(socket_path) + 1);
        p->fd = -EBADF;
        p->deadline = loop_now(l) + timeout;
        p->pause = FIRST_PAUSE;
        p->cb = cb;
        p->userdata = userdata;
        /* The first attempt at the start of the next round. */
        (void) loop_add_timer(l, loop_now(l), on_timer, p, &p->timer);
        *ret = p;
        return 0;
}

struct health_probe *health_probe_free(struct health_probe *p)
{
        if (!p)
                return NULL;
        loop_source_free(p->io);
        loop_source_free(p->timer);
        safe_close(p->fd);
        return mfree(p);
}
