/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * ws_mode: WebSocket sessions. A watched session is parsed frame by frame
 * in both directions and relayed byte for byte while it has an upstream. A
 * sticky one survives its upstream: when the env server goes away (its
 * episode ended) between two frames, the session is "detached": the client
 * stays connected, its text messages go to the policy one at a time (pings
 * are answered here, a close is echoed), and http_handle_ws_attach()
 * connects it to a new upstream with a fresh handshake. An upgrade the
 * policy does not watch is handed to a splice(2) pipe_relay and leaves the
 * proxy. A session's state (struct ws_session) is written here only.
 */
#include <errno.h>
#include <http_parser.h>
#include <openssl/evp.h>
#include <string.h>

#include "base/macro.h"
#include "base/util.h"
#include "relay/http-conn.h"

enum ws_state {
        WS_RELAYING,  /* an upstream session: frames relayed both ways */
        WS_DETACHED,  /* a sticky session without an upstream */
        WS_ATTACHING, /* ... waiting for a new upstream's 101 */
};

struct ws_session {
        struct ws_parser from_client, from_upstream;
        struct strbuf first; /* attaching: the masked frame sent once the 101 is in */
        enum ws_state state;
        bool ended;          /* ws_end(): closing, nothing more is relayed */
        bool detach_pending; /* detach once the upstream's bytes reached the client */
        bool awaiting;       /* detached: a client message is with the policy */
};

/* Detached or attaching: the client's messages are the policy's. */
static bool ws_detached(const struct ws_session *s)
{
        return s->state != WS_RELAYING;
}

static void ws_event(struct http_conn *c, enum http_ws_event ev)
{
        struct http_proxy *p = c->proxy;

        if (p->ops->on_ws_event)
                p->ops->on_ws_event(p->userdata, &c->x, ev);
}

static void on_client_text(void *userdata, const char *data, size_t len)
{
        struct http_conn *c = userdata;
        struct http_proxy *p = c->proxy;

        if (ws_detached(c->ws)) {
                /* One message at a time: the next one waits in the buffer
                 * until the policy answered this one. */
                c->ws->awaiting = true;
                c->ws->from_client.stop = true;
        }
        if (p->ops->on_ws_text)
                p->ops->on_ws_text(p->userdata, &c->x, true, data, len);
}

static void on_upstream_text(void *userdata, const char *data, size_t len)
{
        struct http_conn *c = userdata;
        struct http_proxy *p = c->proxy;

        if (p->ops->on_ws_text)
                p->ops->on_ws_text(p->userdata, &c->x, false, data, len);
}

/* Control frames from the client of a detached session are answered here
 * (attached, they are the env server's to answer). */
static void on_client_control(void *userdata, uint8_t opcode, const uint8_t *payload, size_t len)
{
        struct http_conn *c = userdata;

        if (!ws_detached(c->ws))
                return;
        /* While a message is with the policy or the session is attaching,
         * control frames are read one at a time (ws_process_client()). */
        if (c->ws->awaiting || c->ws->state == WS_ATTACHING)
                c->ws->from_client.stop = true;
        if (opcode == WS_OP_PING)
                ws_append_frame(&c->cout, WS_OP_PONG, payload, len, NULL);
        else if (opcode == WS_OP_CLOSE) {
                uint16_t code = c->ws->from_client.peer_close;
                ws_append_close(&c->cout, code == 1005 ? WS_CLOSE_NORMAL : code, NULL, NULL);
                conn_close_when_flushed(c);
                c->ws->from_client.stop = true;
        }
}

static void ws_upstream_parser_init(struct http_conn *c)
{
        ws_parser_done(&c->ws->from_upstream);
        ws_parser_init(&c->ws->from_upstream, false, on_upstream_text, c);
}

/* The upgrade: the connection is a WebSocket session from now on. */
static void ws_session_start(struct http_conn *c, enum ws_state state)
{
        c->ws = xcalloc(1, sizeof(*c->ws));
        c->ws->first = (struct strbuf) STRBUF_INIT;
        c->ws->state = state;
        ws_parser_init(&c->ws->from_client, true, on_client_text, c);
        c->ws->from_client.on_control = on_client_control;
        ws_upstream_parser_init(c);
        c->mode = &ws_mode;
}

void ws_session_free(struct http_conn *c)
{
        if (!c->ws)
                return;
        ws_parser_done(&c->ws->from_client);
        ws_parser_done(&c->ws->from_upstream);
        strbuf_release(&c->ws->first);
        c->ws = mfree(c->ws);
}

/* --- unwatched upgrades: splice --- */

static void tunnel_done(struct pipe_relay *r, int error, void *userdata)
{
        struct tunnel *t = userdata;
        struct http_proxy *p = t->proxy;

        (void) r;
        (void) error;
        if (t->prev)
                t->prev->next = t->next;
        else
                p->tunnels = t->next;
        if (t->next)
                t->next->prev = t->prev;
        p->n_tunnels--;
        free(t);
}

/* Hands both sockets to a splice relay, with every byte already read or
 * generated primed in order; the connection itself is done. */
static int splice_tunnel_start(struct http_conn *c)
{
        struct http_proxy *p = c->proxy;
        struct tunnel *t = xcalloc(1, sizeof(*t));
        struct pipe_relay *relay;
        int r;

        /* The relay registers the fds with the loop itself: they must leave
         * the connection's sources first (epoll would say EEXIST). */
        c->csrc = loop_source_free(c->csrc);
        c->usrc = loop_source_free(c->usrc);
        t->proxy = p;
        r = pipe_relay_new(p->loop, c->cfd, c->ufd, p->cfg.idle_timeout, tunnel_done, t, &relay);
        if (r < 0) {
                free(t);
                conn_kill(c);
                return 0;
        }
        pipe_relay_prime(relay, false, c->cout.buf + c->cout_off, c->cout.len - c->cout_off);
        pipe_relay_prime(relay, false, c->uin.data + c->uin.start, buf_avail(&c->uin));
        pipe_relay_prime(relay, true, c->uout.buf + c->uout_off, c->uout.len - c->uout_off);
        if (c->cin.data)
                pipe_relay_prime(relay, true, c->cin.data + c->cin.start, buf_avail(&c->cin));
        t->relay = relay;
        t->next = p->tunnels;
        if (p->tunnels)
                p->tunnels->prev = t;
        p->tunnels = t;
        p->n_tunnels++;
        /* The relay owns the fds now. */
        c->cfd = -EBADF;
        c->ufd = -EBADF;
        conn_kill(c);
        return 0;
}

int ws_tunnel_start(struct http_conn *c)
{
        if (!c->x.watch_ws)
                return splice_tunnel_start(c);
        ws_session_start(c, WS_RELAYING);
        return 1;
}

/* --- local accept --- */

int ws_accept_local(struct http_conn *c, const struct http_head *h)
{
        const struct http_header *key = http_head_get(h, "Sec-WebSocket-Key");
        const struct http_header *version = http_head_get(h, "Sec-WebSocket-Version");
        char accept[29];

        if (!h->upgrade || h->method != HTTP_GET || !key || !version || version->value_len != 2 ||
            memcmp(version->value, "13", 2) != 0 ||
            ws_accept_key(key->value, key->value_len, accept) < 0)
                return -EINVAL;
        strbuf_addf(&c->cout,
                    "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                    "Connection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n",
                    accept);
        strbuf_add(&c->cout, c->x.add_response.buf, c->x.add_response.len);
        strbuf_adds(&c->cout, "\r\n");
        /* A detached session has no upstream: not even one left from an
         * earlier exchange of this connection. */
        conn_close_upstream(c);
        ws_session_start(c, WS_DETACHED);
        conn_arm_idle_timer(c);
        return 0;
}

/* --- frames --- */

/* Ends the session: the client gets a close frame with code (if the stream
 * towards it is between frames), then the connection closes. */
static void ws_end(struct http_conn *c, bool client_at_boundary, uint16_t code, const char *reason)
{
        if (client_at_boundary && c->u_fwd == 0)
                ws_append_close(&c->cout, code, reason, NULL);
        conn_close_when_flushed(c);
        c->cin.start = c->cin.end = 0;
        c->c_fwd = 0;
        conn_close_upstream(c);
        c->ws->ended = true;
}

static int ws_process_client(struct http_conn *c)
{
        size_t avail = buf_avail(&c->cin);
        const uint8_t *data = (const uint8_t *) c->cin.data + c->cin.start;
        ssize_t n;

        /* Detaching (the client's next message is for the next episode, not
         * for an env server that is going away): the next frames wait
         * (bounded by the buffer, then back-pressure). */
        if (c->c_fwd > 0 || avail == 0 || c->ws->detach_pending)
                return 0;
        /* Attaching, or a detached message is with the policy: data frames
         * wait likewise, but control frames are answered here, as long as
         * they come before the next data frame. A held reset lasts as long
         * as a provisioning, and a client's keep-alive gives up on a ping
         * left unanswered (OpenEnv's client, websockets: 20 s + 20 s). */
        if ((c->ws->state == WS_ATTACHING || c->ws->awaiting) &&
            !ws_parser_next_is_control(&c->ws->from_client, data, avail))
                return 0;
        n = ws_parser_feed(&c->ws->from_client, data, avail);
        if (n < 0) {
                /* The client broke the protocol: nothing more goes upstream. */
                ws_end(c, ws_parser_at_boundary(&c->ws->from_upstream),
                       c->ws->from_client.error_code, NULL);
                return 1;
        }
        if (ws_detached(c->ws))
                buf_consume(&c->cin, (size_t) n); /* handled here, in the callbacks */
        else {
                c->c_fwd = (size_t) n;
                c->proxy->stats.bytes_up += (size_t) n;
        }
        return n > 0;
}

/* Upstream frames of an attached session. */
static int ws_relay_upstream(struct http_conn *c)
{
        size_t avail = buf_avail(&c->uin);
        const uint8_t *data = (const uint8_t *) c->uin.data + c->uin.start;
        bool boundary;
        ssize_t n;

        if (c->u_fwd > 0 || avail == 0)
                return 0;
        boundary = ws_parser_at_boundary(&c->ws->from_upstream);
        n = ws_parser_feed(&c->ws->from_upstream, data, avail);
        if (n < 0) {
                /* The env server broke the protocol (1002, 1007): none of
                 * these bytes reach the client, which gets a close frame if
                 * it is between frames. */
                ws_end(c, boundary, c->ws->from_upstream.error_code, NULL);
                return 1;
        }
        c->u_fwd = (size_t) n;
        c->proxy->stats.bytes_down += (size_t) n;
        return n > 0;
}

static void ws_detach(struct http_conn *c)
{
        conn_close_upstream(c);
        ws_upstream_parser_init(c);
        c->ws->state = WS_DETACHED;
        c->ws->detach_pending = false;
        c->ws->awaiting = false;
        ws_event(c, HTTP_WS_DETACHED);
}

static void ws_attach_failed(struct http_conn *c)
{
        conn_close_upstream(c);
        ws_upstream_parser_init(c);
        c->ws->state = WS_DETACHED;
        c->ws->awaiting = false;
        strbuf_release(&c->ws->first);
        ws_event(c, HTTP_WS_ATTACH_FAILED);
}

/* A new upstream's answer to the re-attach handshake. */
static int ws_process_handshake(struct http_conn *c)
{
        const char *raw = c->uin.data + c->uin.start;
        struct http_head h;
        size_t end = 0;
        int r;

        r = http_head_find_end(raw, buf_avail(&c->uin), &end);
        if (r == 0 && !c->u_eof)
                return 0;
        if (r <= 0 || http_head_parse(raw, end, true, false, &h) < 0 || h.status != 101) {
                ws_attach_failed(c);
                return 1;
        }
        buf_consume(&c->uin, end);
        /* Only now the message that asked for the episode: RFC 6455 4.1,
         * a client sends nothing after its handshake until the answer, and
         * servers lose what arrives before (uvicorn's websockets server
         * drops a frame that came with the handshake). */
        strbuf_add(&c->uout, c->ws->first.buf, c->ws->first.len);
        c->proxy->stats.bytes_up += c->ws->first.len;
        strbuf_release(&c->ws->first);
        c->ws->state = WS_RELAYING;
        c->ws->awaiting = false;
        ws_event(c, HTTP_WS_ATTACHED);
        return 1;
}

static int ws_process_upstream(struct http_conn *c)
{
        if (c->ws->ended)
                return 0;
        switch (c->ws->state) {
        case WS_RELAYING:
                return ws_relay_upstream(c);
        case WS_ATTACHING:
                return ws_process_handshake(c);
        case WS_DETACHED:
                break;
        }
        return 0;
}

/* The tunnel's ends in the pump: half-closes, detaching; 1 progress. */
static int ws_pump_ends(struct http_conn *c)
{
        bool at_boundary = ws_parser_at_boundary(&c->ws->from_upstream);
        bool u_delivered = client_flushed(c) && buf_avail(&c->uin) == 0;

        if (ws_detached(c->ws)) {
                if (c->c_eof && buf_avail(&c->cin) == 0)
                        conn_kill(c); /* the client left */
                return 0;
        }
        if (c->ws->detach_pending && client_flushed(c) && at_boundary) {
                /* The episode's last message reached the client. */
                ws_detach(c);
                return 1;
        }
        if (c->u_eof && !c->c_shut && u_delivered && !c->ws->from_upstream.closed) {
                /* The env server went away without a close frame (its
                 * episode ended, it was killed or crashed). A sticky
                 * session waits for the next one; any other is told why
                 * instead of getting a bare TCP close. */
                if (c->x.ws_sticky && at_boundary && !c->ws->from_client.closed) {
                        ws_detach(c);
                        return 1;
                }
                ws_end(c, at_boundary, c->u_error ? WS_CLOSE_INTERNAL : WS_CLOSE_GOING_AWAY,
                       "episode ended");
                return 1;
        }
        /* Half-closes are forwarded once all before them is. */
        if (c->c_eof && !c->u_shut && c->ufd >= 0 && upstream_flushed(c) &&
            buf_avail(&c->cin) == 0) {
                (void) shutdown(c->ufd, SHUT_WR);
                c->u_shut = true;
        }
        if (c->u_eof && !c->c_shut && u_delivered) {
                (void) shutdown(c->cfd, SHUT_WR);
                c->c_shut = true;
        }
        if (c->u_shut && c->c_shut)
                conn_kill(c);
        return 0;
}

/* The upstream failed: every failure ends the upstream's side of the
 * session, and ws_pump_ends() or the handshake decide what it means. */
static enum conn_verdict ws_upstream_fault(struct http_conn *c, enum upstream_fault fault)
{
        (void) c;
        (void) fault;
        return CONN_UPSTREAM_GONE;
}

static bool ws_idle(const struct http_conn *c)
{
        (void) c;
        return false; /* a session is never between exchanges */
}

static int ws_timer(struct http_conn *c)
{
        (void) c;
        return 0; /* no head to time out: the idle timeout rules */
}

const struct conn_mode ws_mode = {
        .process_client = ws_process_client,
        .process_upstream = ws_process_upstream,
        .upstream_fault = ws_upstream_fault,
        .pump_ends = ws_pump_ends,
        .idle = ws_idle,
        .timer = ws_timer,
};

bool http_exchange_ws_detached(const struct http_exchange *x)
{
        const struct http_conn *c =
                (const struct http_conn *) ((const char *) x - offsetof(struct http_conn, x));
        return c->ws && ws_detached(c->ws);
}

/* --- the policy's handle on a session --- */

int http_handle_ws_send_text(struct http_handle *h, const char *text, size_t len)
{
        struct http_conn *c = h->conn;

        if (!c->ws || c->ws->state != WS_DETACHED || c->close_after_flush)
                return -ESTALE;
        ws_append_frame(&c->cout, WS_OP_TEXT, text, len, NULL);
        c->ws->awaiting = false;
        conn_pump_and_reap(c);
        return 0;
}

void http_handle_ws_close(struct http_handle *h, uint16_t code, const char *reason)
{
        struct http_conn *c = h->conn;

        if (!c->ws || c->close_after_flush)
                return;
        ws_end(c, ws_parser_at_boundary(&c->ws->from_upstream), code, reason);
        conn_pump_and_reap(c);
}

void http_handle_ws_detach(struct http_handle *h)
{
        struct http_conn *c = h->conn;

        if (!c->ws || ws_detached(c->ws) || !c->x.ws_sticky)
                return;
        c->ws->detach_pending = true;
        conn_pump_and_reap(c);
}

int http_handle_ws_attach(struct http_handle *h, const char *path, const char *text, size_t len)
{
        struct http_conn *c = h->conn;
        uint8_t key[16], mask[4];
        char key64[25];
        int r;

        if (!c->ws || c->ws->state != WS_DETACHED || c->close_after_flush)
                return -ESTALE;
        r = random_bytes(key, sizeof(key));
        if (r >= 0)
                r = random_bytes(mask, sizeof(mask));
        if (r >= 0)
                r = conn_connect_upstream(c);
        if (r < 0)
                return r;
        EVP_EncodeBlock((unsigned char *) key64, key, sizeof(key));
        strbuf_addf(&c->uout,
                    "GET %s HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\n"
                    "Connection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
                    "Sec-WebSocket-Key: %s\r\n",
                    path, key64);
        strbuf_add(&c->uout, c->x.add_request.buf, c->x.add_request.len);
        strbuf_adds(&c->uout, "\r\n");
        /* The message that asked for the new episode is its first, sent
         * when the handshake is answered (ws_process_handshake()). */
        strbuf_release(&c->ws->first);
        if (text)
                ws_append_frame(&c->ws->first, WS_OP_TEXT, text, len, mask);
        c->ws->state = WS_ATTACHING;
        conn_pump_and_reap(c);
        return 0;
}
