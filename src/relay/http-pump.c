/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The pump: drives one connection until nothing more can move. Each round
 * it lets the connection's mode route and classify what is buffered, sends
 * each side what is due (socket I/O: http-io.c), runs the mode's end-of-round
 * duties and reads. It knows no protocol: what the bytes mean, and what an
 * upstream's failure means, is the mode's business (c->mode: http_mode in
 * http-exchange.c, ws_mode in http-ws.c). Accepting, timers and connecting
 * are http-proxy.c's.
 */
#include <errno.h>
#include <sys/socket.h>

#include "base/fd-util.h"
#include "relay/http-conn.h"

/* A closing connection reads and drops what its client still sends for at
 * most this long (or this many bytes), so the answer is not lost to a reset. */
#define LINGER_TIMEOUT (USEC_PER_SEC)
#define LINGER_BYTES   (64UL * 1024)

void conn_kill(struct http_conn *c)
{
        c->dead = true;
}

void conn_close_when_flushed(struct http_conn *c)
{
        c->close_after_flush = true;
        c->linger = !c->c_eof;
}

/* What an upstream failure means is the mode's verdict; the pump carries it
 * out. 1 progress, 0 when the connection died. */
static int conn_upstream_fault(struct http_conn *c, enum upstream_fault fault)
{
        switch (c->mode->upstream_fault(c, fault)) {
        case CONN_HANDLED:
                return 1;
        case CONN_UPSTREAM_GONE:
                if (fault == UPSTREAM_CONNECT)
                        conn_close_upstream_socket(c);
                if (fault == UPSTREAM_SEND)
                        c->c_fwd = 0; /* nowhere to send them */
                c->u_eof = c->u_error = true;
                return 1;
        case CONN_KILL:
                break;
        }
        conn_kill(c);
        return 0;
}

/* The upstream can take request bytes: connected and, for TLS, verified. */
static bool upstream_ready(const struct http_conn *c)
{
        return c->ufd >= 0 && !c->u_connecting && !c->u_handshaking;
}

/* Drives the upstream TLS handshake: 1 done (or failed, with the 502 queued),
 * 0 waiting for an event, -errno. */
static int conn_handshake(struct http_conn *c)
{
        int r;

        if (!c->u_hs_ready)
                return 0;
        r = tls_stream_handshake(c->tls);
        if (r == -EAGAIN) {
                c->u_hs_ready = false;
                return tls_stream_want_write(c->tls) ? side_watch_out(&c->uio, c->usrc) : 0;
        }
        if (r < 0) /* refused certificate or broken handshake */
                return conn_upstream_fault(c, UPSTREAM_TLS);
        c->u_handshaking = false;
        /* Verified: let the pump write the request and read what follows. */
        c->uio.drained = c->uio.blocked = false;
        return 1;
}

/* --- passes --- */

int conn_pass(struct http_conn *c, bool to_upstream, uint64_t n)
{
        /* TLS records are not the bytes to splice. */
        if (c->tls)
                return -EOPNOTSUPP;
        /* The buffer's bytes go first: all of them must be classified. */
        if (to_upstream ? c->c_fwd != buf_avail(&c->cin) : c->u_fwd != buf_avail(&c->uin))
                return -EBUSY;
        if (conn_pipe_open(to_upstream ? &c->c_pipe : &c->u_pipe) < 0)
                return -EMFILE;
        *(to_upstream ? &c->c_pass : &c->u_pass) = n;
        return 0;
}

/* Everything due to the upstream, in order: what the pipe still holds (a
 * pass that ended), what the mode queued and classified, then the client's
 * bytes of a pass through the pipe (filled only once all before them is
 * out, so they keep their place). Reading stops once closing, as buffered
 * reads do. 1 progress, 0 nothing or blocked, -errno from the upstream; a
 * client's error kills. */
static int conn_send_upstream(struct http_conn *c)
{
        int progress = 0, r;

        for (;;) {
                ssize_t n;

                r = pipe_drain(&c->c_pipe, c->ufd, &c->uio, c->usrc);
                if (r < 0)
                        return r;
                progress |= r;
                if (c->c_pipe.pending > 0)
                        return progress;
                r = flush_side(c->ufd, c->tls, &c->uio, c->usrc, &c->uout, &c->uout_off, &c->cin,
                               &c->c_fwd);
                if (r < 0)
                        return r;
                progress |= r;
                if (c->c_pass == 0 || !upstream_flushed(c) || c->close_after_flush || c->c_eof ||
                    c->cio.drained)
                        return progress;
                n = pipe_fill(&c->c_pipe, c->cfd, &c->cio, &c->c_pass, &c->c_eof);
                if (n < 0) {
                        conn_kill(c);
                        return 0;
                }
                if (n == 0)
                        return progress | c->c_eof; /* drained, or the mode hears of the end */
                c->proxy->stats.bytes_up += (uint64_t) n;
                c->proxy->stats.bytes_spliced += (uint64_t) n;
                progress = 1;
        }
}

/* The same towards the client: -errno from the client; an upstream's error
 * is the mode's (conn_upstream_fault()). */
static int conn_send_client(struct http_conn *c)
{
        int progress = 0, r;

        for (;;) {
                ssize_t n;

                r = pipe_drain(&c->u_pipe, c->cfd, &c->cio, c->csrc);
                if (r < 0)
                        return r;
                progress |= r;
                if (c->u_pipe.pending > 0)
                        return progress;
                r = flush_side(c->cfd, NULL, &c->cio, c->csrc, &c->cout, &c->cout_off, &c->uin,
                               &c->u_fwd);
                if (r < 0)
                        return r;
                progress |= r;
                if (c->u_pass == 0 || !client_flushed(c) || c->close_after_flush ||
                    !upstream_ready(c) || c->u_eof || c->uio.drained)
                        return progress;
                n = pipe_fill(&c->u_pipe, c->ufd, &c->uio, &c->u_pass, &c->u_eof);
                if (n < 0)
                        return progress | conn_upstream_fault(c, UPSTREAM_RECV);
                if (n == 0)
                        return progress | c->u_eof;
                c->proxy->stats.bytes_down += (uint64_t) n;
                c->proxy->stats.bytes_spliced += (uint64_t) n;
                progress = 1;
        }
}

/* --- the pump --- */

/* A closing connection: once the answer is out, the write side shuts and
 * what the client still sends is read and dropped (bounded in time and
 * bytes), so the answer is not lost to a reset. 1 while lingering. */
static int conn_linger(struct http_conn *c)
{
        if (!c->linger || c->c_eof) {
                conn_kill(c);
                return 0;
        }
        if (!c->c_shut) {
                (void) shutdown(c->cfd, SHUT_WR);
                c->c_shut = true;
                loop_timer_set(c->timer, loop_now(c->proxy->loop) + LINGER_TIMEOUT);
        }
        while (!c->c_eof && !c->cio.drained && c->lingered < LINGER_BYTES) {
                char buf[4096];
                ssize_t n = recv(c->cfd, buf, sizeof(buf), 0);
                if (n > 0) {
                        c->lingered += (size_t) n;
                        continue;
                }
                if (n == 0 || !errno_is_again(errno))
                        c->c_eof = true;
                else
                        c->cio.drained = true;
        }
        if (c->c_eof || c->lingered >= LINGER_BYTES)
                conn_kill(c);
        return 0;
}

static void conn_pump(struct http_conn *c)
{
        int progress;

        do {
                int r;
                progress = 0;
                if (c->dead)
                        return;

                /* Route and classify all that is buffered first, so that the
                 * flush below sends each direction's bytes in one go. */
                while (!c->close_after_flush) {
                        r = c->mode->process_client(c);
                        if (c->dead)
                                return;
                        r |= c->mode->process_upstream(c);
                        if (c->dead)
                                return;
                        if (!r)
                                break;
                        progress = 1;
                }

                if (c->u_handshaking && !c->u_connecting) {
                        r = conn_handshake(c);
                        if (r < 0)
                                conn_kill(c);
                        if (c->dead)
                                return;
                        progress |= r;
                }
                if (upstream_ready(c)) {
                        r = conn_send_upstream(c);
                        if (r < 0)
                                r = conn_upstream_fault(c, UPSTREAM_SEND);
                        if (c->dead)
                                return;
                        progress |= r;
                }
                r = conn_send_client(c);
                if (r < 0)
                        conn_kill(c);
                if (c->dead)
                        return;
                progress |= r;
                if (c->close_after_flush) {
                        if (client_flushed(c))
                                (void) conn_linger(c);
                        if (c->dead)
                                return;
                        /* Nothing else is read or routed once closing. */
                        if (r > 0)
                                continue;
                        break;
                }

                if (c->mode->pump_ends) {
                        progress |= c->mode->pump_ends(c);
                        if (c->dead)
                                return;
                }

                /* While a pass runs, its side's bytes are the pipe's. */
                if (!c->c_eof && !c->cio.drained && c->c_pass == 0) {
                        r = buf_read(&c->cin, c->cfd, NULL, &c->cio, c->csrc, &c->c_eof);
                        if (r < 0) {
                                conn_kill(c);
                                return;
                        }
                        c->heard |= buf_avail(&c->cin) > 0;
                        progress |= r;
                }
                if (upstream_ready(c) && !c->u_eof && !c->uio.drained && c->u_pass == 0) {
                        r = buf_read(&c->uin, c->ufd, c->tls, &c->uio, c->usrc, &c->u_eof);
                        if (r < 0)
                                r = conn_upstream_fault(c, UPSTREAM_RECV);
                        if (c->dead)
                                return;
                        progress |= r;
                }
                if (progress)
                        c->last_activity = loop_now(c->proxy->loop);
                /* The policy acted on this connection from a callback. */
                progress |= c->kicked;
                c->kicked = false;
        } while (progress);
}

void conn_pump_and_reap(struct http_conn *c)
{
        /* From a policy callback inside this connection's own pump: that
         * pump goes round once more instead (and frees it if need be). */
        if (c->in_pump) {
                c->kicked = true;
                return;
        }
        c->in_pump = true;
        conn_pump(c);
        c->in_pump = false;
        if (c->dead)
                conn_free(c);
}

int conn_client_event(struct loop_source *s, int fd, uint32_t revents, void *userdata)
{
        struct http_conn *c = userdata;

        (void) s;
        (void) fd;
        side_io_event(&c->cio, revents);
        conn_pump_and_reap(c);
        return 0;
}

int conn_upstream_event(struct loop_source *s, int fd, uint32_t revents, void *userdata)
{
        struct http_conn *c = userdata;

        (void) s;
        side_io_event(&c->uio, revents);
        if (c->tls) {
                /* A TLS read may wait for writability and a write for
                 * readability: any event may unblock either, so both
                 * directions (and the handshake) are simply retried. */
                c->uio.drained = c->uio.blocked = false;
                c->u_hs_ready = true;
        }
        if (c->u_connecting) {
                int err = 0;
                socklen_t len = sizeof(err);
                if (!(revents & (EPOLLOUT | EPOLLERR | EPOLLHUP)))
                        return 0;
                c->u_connecting = false;
                if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0 || err != 0) {
                        struct http_proxy *p = c->proxy;
                        /* This address is down: the next one, if any. */
                        if (p->cfg.n_upstream && p->next_addr == c->u_addr)
                                p->next_addr = (c->u_addr + 1) % p->cfg.n_upstream;
                        if (conn_connect_next(c) < 0)
                                (void) conn_upstream_fault(c, UPSTREAM_CONNECT);
                }
        }
        conn_pump_and_reap(c);
        return 0;
}
