/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "base/pipe-relay.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/fd-util.h"
#include "base/macro.h"
#include "base/util.h"

/* The fallback buffer matches the default pipe capacity (pipe(7)). */
#define RELAY_FALLBACK_BYTES (64UL * 1024)
#define RELAY_SPLICE_CHUNK   (64UL * 1024)

struct relay_dir {
        int src, dst;   /* borrowed: pipe_relay.fd[] */
        int pipe[2];    /* owned; -EBADF when using buf */
        size_t pending; /* bytes in the pipe (or buf) not yet written */
        char *buf;      /* owned: fallback buffer, or NULL */
        size_t buf_off; /* start of pending bytes in buf */
        char *prime;    /* owned: bytes to send before anything else */
        size_t prime_len, prime_off;
        bool eof;  /* src reached EOF */
        bool shut; /* dst shut down for writing */
        uint64_t moved;
};

struct pipe_relay {
        struct loop *loop; /* borrowed */
        int fd[2];         /* owned */
        struct loop_source *src[2];
        struct loop_source *timer;
        struct relay_dir dir[2]; /* [0]: a→b, [1]: b→a */
        usec_t idle_timeout, last_activity;
        pipe_relay_done_fn done;
        void *userdata;
        bool in_pump;
        bool finished;
};

static void dir_release(struct relay_dir *d)
{
        safe_close(d->pipe[0]);
        safe_close(d->pipe[1]);
        free(d->buf);
        free(d->prime);
}

struct pipe_relay *pipe_relay_free(struct pipe_relay *r)
{
        if (!r)
                return NULL;
        for (int i = 0; i < 2; i++) {
                loop_source_free(r->src[i]);
                safe_close(r->fd[i]);
                dir_release(&r->dir[i]);
        }
        loop_source_free(r->timer);
        return mfree(r);
}

void pipe_relay_stats(const struct pipe_relay *r, uint64_t *ret_ab, uint64_t *ret_ba)
{
        *ret_ab = r->dir[0].moved;
        *ret_ba = r->dir[1].moved;
}

void pipe_relay_prime(struct pipe_relay *r, bool to_b, const void *buf, size_t len)
{
        struct relay_dir *d = &r->dir[to_b ? 0 : 1];

        if (len == 0)
                return;
        d->prime = xrealloc(d->prime, d->prime_len + len);
        memcpy(d->prime + d->prime_len, buf, len);
        d->prime_len += len;
}

/* Moves bytes in one direction until nothing more can move. Returns > 0 if
 * progress was made, 0 if not, -errno on a hard error. */
static int dir_pump(struct relay_dir *d)
{
        int progress = 0;

        while (d->prime_off < d->prime_len) {
                ssize_t n = send(d->dst, d->prime + d->prime_off, d->prime_len - d->prime_off,
                                 MSG_NOSIGNAL);
                if (n < 0)
                        return errno_is_again(errno) ? progress : negative_errno();
                d->prime_off += (size_t) n;
                d->moved += (uint64_t) n;
                progress = 1;
        }
        for (;;) {
                while (d->pending > 0) {
                        ssize_t n;
                        if (d->pipe[0] >= 0)
                                n = splice(d->pipe[0], NULL, d->dst, NULL, d->pending,
                                           SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
                        else
                                n = send(d->dst, d->buf + d->buf_off, d->pending, MSG_NOSIGNAL);
                        if (n < 0)
                                return errno_is_again(errno) ? progress : negative_errno();
                        d->pending -= (size_t) n;
                        d->buf_off += (size_t) n;
                        d->moved += (uint64_t) n;
                        progress = 1;
                }
                d->buf_off = 0;
                if (d->eof) {
                        if (!d->shut) {
                                /* Half-close: the peer learns about EOF only
                                 * after every pending byte was delivered. */
                                (void) shutdown(d->dst, SHUT_WR);
                                d->shut = true;
                                progress = 1;
                        }
                        return progress;
                }
                ssize_t n;
                if (d->pipe[1] >= 0)
                        n = splice(d->src, NULL, d->pipe[1], NULL, RELAY_SPLICE_CHUNK,
                                   SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
                else
                        n = recv(d->src, d->buf, RELAY_FALLBACK_BYTES, 0);
                if (n < 0)
                        return errno_is_again(errno) ? progress : negative_errno();
                if (n == 0)
                        d->eof = true;
                d->pending = (size_t) n;
                progress = 1;
        }
}

static void relay_finish(struct pipe_relay *r, int error)
{
        pipe_relay_done_fn done = r->done;
        void *userdata = r->userdata;

        if (r->finished)
                return;
        r->finished = true;
        if (done)
                done(r, error, userdata);
        pipe_relay_free(r);
}

static void relay_pump(struct pipe_relay *r)
{
        int progress;

        do {
                progress = 0;
                for (int i = 0; i < 2; i++) {
                        int k = dir_pump(&r->dir[i]);
                        if (k < 0) {
                                relay_finish(r, k);
                                return;
                        }
                        progress |= k;
                }
                if (progress)
                        r->last_activity = loop_now(r->loop);
        } while (progress);
        if (r->dir[0].shut && r->dir[1].shut)
                relay_finish(r, 0);
}

static int on_io(struct loop_source *s, int fd, uint32_t revents, void *userdata)
{
        (void) s;
        (void) fd;
        (void) revents;
        relay_pump(userdata);
        return 0;
}

static int on_timer(struct loop_source *s, usec_t now, void *userdata)
{
        struct pipe_relay *r = userdata;

        if (now - r->last_activity >= r->idle_timeout) {
                relay_finish(r, -ETIMEDOUT);
                return 0;
        }
        /* Re-armed lazily: traffic only updates last_activity, never the heap. */
        loop_timer_set(s, r->last_activity + r->idle_timeout);
        return 0;
}

static int set_nonblock(int fd)
{
        int flags = fcntl(fd, F_GETFL);
        if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
                return negative_errno();
        return 0;
}

int pipe_relay_new(struct loop *l, int fd_a, int fd_b, usec_t idle_timeout, pipe_relay_done_fn done,
                   void *userdata, struct pipe_relay **ret)
{
        cleanup(pipe_relay_freep) struct pipe_relay *r = NULL;
        int k;

        r = xcalloc(1, sizeof(*r));
        r->loop = l;
        r->fd[0] = r->fd[1] = -EBADF;
        r->idle_timeout = idle_timeout;
        r->done = done;
        r->userdata = userdata;
        r->last_activity = loop_now(l);
        for (int i = 0; i < 2; i++) {
                struct relay_dir *d = &r->dir[i];
                d->pipe[0] = d->pipe[1] = -EBADF;
                d->src = i == 0 ? fd_a : fd_b;
                d->dst = i == 0 ? fd_b : fd_a;
                if (pipe2(d->pipe, O_CLOEXEC | O_NONBLOCK) < 0) {
                        /* Out of pipes (EMFILE, pipe-user-pages-hard): copy
                         * through a bounded buffer instead. */
                        d->pipe[0] = d->pipe[1] = -EBADF;
                        d->buf = xmalloc(RELAY_FALLBACK_BYTES);
                }
        }
        k = set_nonblock(fd_a);
        if (k >= 0)
                k = set_nonblock(fd_b);
        if (k < 0)
                return k;
        for (int i = 0; i < 2; i++) {
                /* Edge-triggered: every wakeup pumps both directions until
                 * EAGAIN, so interest never needs to be toggled. */
                k = loop_add_io(l, i == 0 ? fd_a : fd_b, EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET,
                                on_io, r, &r->src[i]);
                if (k < 0)
                        return k;
        }
        if (idle_timeout != USEC_INFINITY)
                (void) loop_add_timer(l, r->last_activity + idle_timeout, on_timer, r, &r->timer);
        /* Owned from here on. */
        r->fd[0] = fd_a;
        r->fd[1] = fd_b;
        /* No explicit first pump: EPOLL_CTL_ADD reports a socket that is
         * already readable or writable, edge-triggered or not (epoll(7)). */
        *ret = TAKE_PTR(r);
        return 0;
}
