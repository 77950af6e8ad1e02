/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The proxy and its connections: accepting (with the caps that keep a flood
 * of idle or hostile connections from locking legitimate clients out),
 * timers and upstream connections (TLS included). What moves bytes on a
 * connection is the pump (http-pump.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/fd-util.h"
#include "base/macro.h"
#include "base/util.h"
#include "relay/http-conn.h"

/* --- lifecycle --- */

static void unauth_unlink(struct http_proxy *p, struct http_conn *c)
{
        if (c->unauth_prev)
                c->unauth_prev->unauth_next = c->unauth_next;
        else if (p->unauth_head == c)
                p->unauth_head = c->unauth_next;
        else
                return; /* not on the list: authenticated */
        if (c->unauth_next)
                c->unauth_next->unauth_prev = c->unauth_prev;
        else
                p->unauth_tail = c->unauth_prev;
        c->unauth_prev = c->unauth_next = NULL;
        p->n_unauth--;
}

void conn_set_authenticated(struct http_conn *c)
{
        if (c->authenticated)
                return;
        unauth_unlink(c->proxy, c);
        c->authenticated = true;
}

/* Closes the upstream socket only: what is queued for it stays (a next
 * address may get it). */
void conn_close_upstream_socket(struct http_conn *c)
{
        c->tls = tls_stream_free(c->tls);
        c->usrc = loop_source_free(c->usrc);
        c->ufd = safe_close(c->ufd);
        c->u_connecting = c->u_handshaking = c->u_hs_ready = false;
        c->u_eof = c->u_shut = c->u_error = false;
        c->uio = (struct side_io){ .drained = true };
}

void conn_close_upstream(struct http_conn *c)
{
        conn_close_upstream_socket(c);
        c->uin.start = c->uin.end = 0;
        c->u_fwd = 0;
        strbuf_reset(&c->uout);
        c->uout_off = 0;
        /* A pass in either direction was the upstream's exchange's. */
        c->c_pass = c->u_pass = 0;
        if (c->c_pipe.pending > 0)
                conn_pipe_close(&c->c_pipe);
        if (c->u_pipe.pending > 0)
                conn_pipe_close(&c->u_pipe);
}

void conn_free(struct http_conn *c)
{
        struct http_proxy *p = c->proxy;

        if (c->prev)
                c->prev->next = c->next;
        else
                p->conns = c->next;
        if (c->next)
                c->next->prev = c->prev;
        p->n_conns--;
        unauth_unlink(c->proxy, c);
        if (c->handle) {
                if (p->ops->on_handle_gone)
                        p->ops->on_handle_gone(p->userdata, c->handle);
                free(c->handle);
        }
        loop_source_free(c->csrc);
        loop_source_free(c->timer);
        conn_close_upstream(c);
        conn_pipe_close(&c->c_pipe);
        conn_pipe_close(&c->u_pipe);
        safe_close(c->cfd);
        free(c->cin.data);
        free(c->uin.data);
        strbuf_release(&c->cout);
        strbuf_release(&c->uout);
        exchange_free(c);
        ws_session_free(c);
        free(c);
}

/* --- timers --- */

static usec_t head_timeout(const struct http_conn *c)
{
        const struct http_proxy_config *cfg = &c->proxy->cfg;
        return c->authenticated ? cfg->head_timeout : MIN(cfg->unauth_timeout, cfg->head_timeout);
}

void conn_arm_head_timer(struct http_conn *c)
{
        loop_timer_set(c->timer, loop_now(c->proxy->loop) + head_timeout(c));
}

void conn_arm_idle_timer(struct http_conn *c)
{
        loop_timer_set(c->timer, c->last_activity + c->proxy->cfg.idle_timeout);
}

static int on_conn_timer(struct loop_source *s, usec_t now, void *userdata)
{
        struct http_conn *c = userdata;

        (void) s;
        /* The mode's deadline (a head that never completes gets 408). */
        if (!c->linger && c->mode->timer(c)) {
                conn_pump_and_reap(c);
                return 0;
        }
        /* Lingered long enough, an idle keep-alive connection (closed
         * without a word), or no byte moved for the idle timeout. */
        if (c->linger || c->mode->idle(c) || now - c->last_activity >= c->proxy->cfg.idle_timeout)
                conn_free(c);
        else
                conn_arm_idle_timer(c);
        return 0;
}

/* --- upstream --- */

/* Starts a connection to address a: 0 (maybe still in progress) or -errno. */
static int conn_connect_addr(struct http_conn *c, const struct http_proxy_addr *a)
{
        struct http_proxy *p = c->proxy;
        int fd, r;

        conn_close_upstream_socket(c);
        fd = p->cfg.make_socket
                     ? p->cfg.make_socket(p->cfg.make_socket_userdata, c->handle, a->sa.ss_family)
                     : socket(a->sa.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
                return p->cfg.make_socket ? fd : negative_errno();
        if (a->sa.ss_family != AF_UNIX)
                (void) setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &(int){ 1 }, sizeof(int));
        if (connect(fd, (const struct sockaddr *) &a->sa, a->len) < 0) {
                /* Unix sockets never report EINPROGRESS; EAGAIN there means
                 * the backlog is full, which is an unavailable upstream. */
                if (errno != EINPROGRESS) {
                        r = negative_errno();
                        safe_close(fd);
                        return r;
                }
                c->u_connecting = true;
        }
        if (p->cfg.tls) {
                r = tls_stream_new(p->cfg.tls, fd, p->cfg.tls_host, &c->tls);
                if (r < 0) {
                        safe_close(fd);
                        c->u_connecting = false;
                        return r;
                }
                /* Driven from the pump once connected (conn_handshake). */
                c->u_handshaking = c->u_hs_ready = true;
        }
        /* A fresh connection has nothing to read: ET reports the first bytes. */
        c->uio = (struct side_io){ .drained = true, .out_watched = c->u_connecting };
        r = loop_add_io(p->loop, fd, CONN_EPOLL_EVENTS | (c->u_connecting ? EPOLLOUT : 0),
                        conn_upstream_event, c, &c->usrc);
        if (r < 0) {
                c->tls = tls_stream_free(c->tls);
                safe_close(fd);
                c->u_connecting = c->u_handshaking = false;
                return r;
        }
        c->ufd = fd;
        return 0;
}

/* Tries the remaining addresses in turn: 0 (connecting) or the last error. */
int conn_connect_next(struct http_conn *c)
{
        struct http_proxy *p = c->proxy;
        int r = -EDESTADDRREQ;

        if (p->cfg.upstream_for) {
                struct http_proxy_addr a;
                if (c->u_attempts++ > 0)
                        return r;
                r = p->cfg.upstream_for(p->cfg.upstream_for_userdata, c->handle, &a);
                return r < 0 ? r : conn_connect_addr(c, &a);
        }
        while (c->u_attempts < p->cfg.n_upstream) {
                c->u_addr = (c->u_first + c->u_attempts) % p->cfg.n_upstream;
                c->u_attempts++;
                r = conn_connect_addr(c, &p->cfg.upstream[c->u_addr]);
                if (r >= 0)
                        return 0;
                if (p->next_addr == c->u_addr)
                        p->next_addr = (c->u_addr + 1) % p->cfg.n_upstream;
        }
        return r;
}

int conn_connect_upstream(struct http_conn *c)
{
        conn_close_upstream(c);
        c->u_first = c->proxy->next_addr;
        c->u_attempts = 0;
        return conn_connect_next(c);
}

/* --- listener --- */

static bool same_client(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
        if (a->ss_family != b->ss_family)
                return false;
        if (a->ss_family == AF_INET)
                return ((const struct sockaddr_in *) a)->sin_addr.s_addr ==
                       ((const struct sockaddr_in *) b)->sin_addr.s_addr;
        if (a->ss_family == AF_INET6)
                return memcmp(&((const struct sockaddr_in6 *) a)->sin6_addr,
                              &((const struct sockaddr_in6 *) b)->sin6_addr,
                              sizeof(struct in6_addr)) == 0;
        return true; /* unix: one peer as far as we can tell */
}

/*
 * The unauthenticated connection that must close so that a newcomer from
 * client fits (NULL: none). Whoever holds a connection open without proving
 * who it is yields to a newcomer, the oldest first: first among the
 * client's own past its cap, then among all past the total caps. Among
 * them, one that never sent a byte goes before one that did: a flood of
 * silent connections from the orchestrator's own address used to close
 * the orchestrator's fresh connection, its request already on the way.
 */
static struct http_conn *unauth_victim(struct http_proxy *p, const struct sockaddr_storage *client)
{
        struct http_conn *oldest_of_client = NULL, *silent_of_client = NULL, *silent = NULL;
        unsigned from_client = 0;

        for (struct http_conn *c = p->unauth_head; c; c = c->unauth_next) {
                bool mine = same_client(&c->peer, client);
                if (mine && from_client++ == 0)
                        oldest_of_client = c;
                if (!c->heard && mine && !silent_of_client)
                        silent_of_client = c;
                if (!c->heard && !silent)
                        silent = c;
        }
        if (from_client >= p->cfg.max_unauth_per_client)
                return silent_of_client ?: oldest_of_client;
        if (p->n_unauth >= p->cfg.max_unauth || p->n_conns + p->n_tunnels >= p->cfg.max_connections)
                return silent ?: p->unauth_head;
        return NULL;
}

static void evict(struct http_proxy *p, struct http_conn *c)
{
        p->stats.evicted++;
        unauth_unlink(p, c);
        conn_free(c);
}

/*
 * Out of fds (EMFILE/ENFILE). The oldest unauthenticated connection makes
 * room and the pending connection is accepted as usual on the next try: the
 * newcomer may be the orchestrator, who must still get in while a flood
 * holds every fd. With nobody to evict, the pending connection is accepted
 * with the reserve fd's slot and closed at once, instead of leaving the
 * listener readable forever (level-triggered: the loop would spin at 100 %
 * CPU). Each call evicts one connection or consumes one pending: the
 * caller's accept loop ends.
 */
static bool fd_limit_relief(struct http_proxy *p, int fd)
{
        struct pollfd pfd = { .fd = fd, .events = POLLIN };
        int cfd;

        /* accept4() takes an fd before it looks at the queue (Linux's
         * __sys_accept4_file()): once a newcomer got the last fd, the next
         * call fails with EMFILE although nobody waits, and evicting now
         * would close that newcomer before its head is read. Relief is only
         * for a connection that is really waiting. */
        if (poll(&pfd, 1, 0) <= 0 || !(pfd.revents & POLLIN))
                return false;
        if (p->unauth_head) {
                struct http_conn *silent = p->unauth_head;
                /* As in unauth_victim(): the silent go first. */
                while (silent && silent->heard)
                        silent = silent->unauth_next;
                evict(p, silent ?: p->unauth_head);
                return true;
        }
        if (p->reserve_fd < 0)
                return false;
        p->reserve_fd = safe_close(p->reserve_fd);
        cfd = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
        if (cfd >= 0) {
                /* Counted before the close: whoever sees the close sees it
                 * counted (a test read the counter between the two). */
                p->stats.refused_at_fd_limit++;
                safe_close(cfd);
        }
        p->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
        return cfd >= 0;
}

static struct http_conn *conn_new(struct http_proxy *p, int cfd,
                                  const struct sockaddr_storage *peer, socklen_t peer_len)
{
        struct http_conn *c = xcalloc(1, sizeof(*c));

        c->proxy = p;
        c->cfd = cfd;
        c->ufd = -EBADF;
        c->peer = *peer;
        c->peer_len = peer_len;
        c->cout = (struct strbuf) STRBUF_INIT;
        c->uout = (struct strbuf) STRBUF_INIT;
        conn_pipe_init(&c->c_pipe);
        conn_pipe_init(&c->u_pipe);
        exchange_start(c);
        c->last_activity = loop_now(p->loop);
        c->authenticated = !p->cfg.auth_required;
        if (loop_add_io(p->loop, cfd, CONN_EPOLL_EVENTS, conn_client_event, c, &c->csrc) < 0) {
                exchange_free(c);
                free(c);
                return NULL;
        }
        (void) loop_add_timer(p->loop, USEC_INFINITY, on_conn_timer, c, &c->timer);
        c->next = p->conns;
        if (p->conns)
                p->conns->prev = c;
        p->conns = c;
        p->n_conns++;
        if (!c->authenticated) {
                c->unauth_prev = p->unauth_tail;
                if (p->unauth_tail)
                        p->unauth_tail->unauth_next = c;
                else
                        p->unauth_head = c;
                p->unauth_tail = c;
                p->n_unauth++;
        }
        conn_arm_head_timer(c);
        return c;
}

static int on_accept(struct loop_source *s, int fd, uint32_t revents, void *userdata)
{
        struct http_proxy *p = userdata;

        (void) s;
        (void) revents;
        /* A batch at a time (the listener is level-triggered): the
         * connections accepted so far get their first reads before a
         * flood behind them can push them out. */
        for (unsigned n = 0; n < HTTP_ACCEPT_BATCH; n++) {
                struct http_conn *c;
                struct sockaddr_storage peer = {};
                socklen_t peer_len = sizeof(peer);
                int cfd = accept4(fd, (struct sockaddr *) &peer, &peer_len,
                                  SOCK_CLOEXEC | SOCK_NONBLOCK);

                if (cfd < 0) {
                        if ((errno == EMFILE || errno == ENFILE) && fd_limit_relief(p, fd))
                                continue;
                        return 0; /* EAGAIN, or transient (ECONNABORTED): next event */
                }
                if (p->cfg.auth_required) {
                        struct http_conn *victim = unauth_victim(p, &peer);
                        if (victim)
                                evict(p, victim);
                }
                if (p->n_conns + p->n_tunnels >= p->cfg.max_connections) {
                        /* Over the limit: refuse by closing, before any byte is read. */
                        safe_close(cfd);
                        continue;
                }
                (void) setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &(int){ 1 }, sizeof(int));
                c = conn_new(p, cfd, &peer, peer_len);
                if (!c) {
                        safe_close(cfd);
                        continue;
                }
                /* What the client sent with its connection is read now: a
                 * request that came with it is routed (and its client
                 * authenticated) before the next accept can evict it. */
                conn_pump_and_reap(c);
        }
        return 0;
}

int http_proxy_new(struct loop *l, int listen_fd, const struct http_proxy_config *cfg,
                   const struct http_proxy_ops *ops, void *userdata, struct http_proxy **ret)
{
        struct http_proxy *p;
        int r;

        if (fcntl(listen_fd, F_SETFL, fcntl(listen_fd, F_GETFL) | O_NONBLOCK) < 0) {
                r = negative_errno();
                safe_close(listen_fd);
                return r;
        }
        /* No upstream yet is fine (http_proxy_set_upstream() later:
         * requests get 502 until then). */
        if (cfg->n_upstream > HTTP_MAX_UPSTREAM_ADDRS || (cfg->tls && !cfg->tls_host)) {
                safe_close(listen_fd);
                return -EINVAL;
        }
        p = xcalloc(1, sizeof(*p));
        p->loop = l;
        p->listen_fd = listen_fd;
        p->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
        p->cfg = *cfg;
        if (p->cfg.max_connections == 0)
                p->cfg.max_connections = HTTP_MAX_CONNECTIONS;
        if (p->cfg.head_timeout == 0)
                p->cfg.head_timeout = 10 * USEC_PER_SEC;
        if (p->cfg.idle_timeout == 0)
                p->cfg.idle_timeout = HTTP_IDLE_TIMEOUT;
        if (p->cfg.unauth_timeout == 0)
                p->cfg.unauth_timeout = HTTP_UNAUTH_TIMEOUT;
        if (p->cfg.max_unauth == 0)
                p->cfg.max_unauth = HTTP_MAX_UNAUTH_CONNECTIONS;
        if (p->cfg.max_unauth_per_client == 0)
                p->cfg.max_unauth_per_client = HTTP_MAX_UNAUTH_PER_CLIENT;
        p->ops = ops;
        p->userdata = userdata;
        r = loop_add_io(l, listen_fd, EPOLLIN, on_accept, p, &p->lsrc);
        if (r < 0) {
                http_proxy_free(p);
                return r;
        }
        *ret = p;
        return 0;
}

struct http_proxy *http_proxy_free(struct http_proxy *p)
{
        if (!p)
                return NULL;
        /* Walk with the successor saved before each free, rather than
         * re-reading p->conns: conn_free() unlinks through c->proxy. */
        for (struct http_conn *c = p->conns, *next; c; c = next) {
                next = c->next;
                conn_free(c);
        }
        while (p->tunnels) {
                struct tunnel *t = p->tunnels;
                p->tunnels = t->next;
                pipe_relay_free(t->relay);
                free(t);
        }
        loop_source_free(p->lsrc);
        safe_close(p->listen_fd);
        safe_close(p->reserve_fd);
        return mfree(p);
}

unsigned http_proxy_connections(const struct http_proxy *p)
{
        return p->n_conns + p->n_tunnels;
}

void http_proxy_set_upstream(struct http_proxy *p, const struct http_proxy_config *upstream)
{
        p->next_addr = 0;
        p->cfg.n_upstream = upstream ? upstream->n_upstream : 0;
        if (upstream)
                memcpy(p->cfg.upstream, upstream->upstream, sizeof(p->cfg.upstream));
        p->cfg.make_socket = upstream ? upstream->make_socket : NULL;
        p->cfg.make_socket_userdata = upstream ? upstream->make_socket_userdata : NULL;
        p->cfg.upstream_for = upstream ? upstream->upstream_for : NULL;
        p->cfg.upstream_for_userdata = upstream ? upstream->upstream_for_userdata : NULL;
        /* Nothing of the previous upstream lingers in an idle connection:
         * not a socket into the namespace of an env server that is gone
         * (it would hold the namespace alive for nothing), nor a
         * way to the previous server while it still answers. */
        for (struct http_conn *c = p->conns; c; c = c->next)
                if (c->ufd >= 0 && c->mode->idle(c))
                        conn_close_upstream(c);
}

void http_proxy_stats(const struct http_proxy *p, struct http_proxy_stats *ret)
{
        *ret = p->stats;
}

int http_proxy_upstream_unix(struct http_proxy_config *cfg, const char *path)
{
        struct sockaddr_un *un = (struct sockaddr_un *) &cfg->upstream[0].sa;
        size_t n = strlen(path);

        if (n == 0 || n >= sizeof(un->sun_path))
                return -ENAMETOOLONG;
        memset(&cfg->upstream[0], 0, sizeof(cfg->upstream[0]));
        un->sun_family = AF_UNIX;
        memcpy(un->sun_path, path, n);
        cfg->upstream[0].len = (socklen_t) (offsetof(struct sockaddr_un, sun_path) + n + 1);
        cfg->n_upstream = 1;
        return 0;
}

int http_proxy_upstream_add(struct http_proxy_config *cfg, const struct sockaddr *sa, socklen_t len)
{
        struct http_proxy_addr *a;

        if (cfg->n_upstream >= HTTP_MAX_UPSTREAM_ADDRS)
                return -E2BIG;
        if (len == 0 || len > sizeof(a->sa))
                return -EINVAL;
        a = &cfg->upstream[cfg->n_upstream++];
        memset(a, 0, sizeof(*a));
        memcpy(&a->sa, sa, len);
        a->len = len;
        return 0;
}
