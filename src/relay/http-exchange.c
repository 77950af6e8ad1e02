/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * http_mode: one request after the other on a connection. The head is
 * parsed and routed through the policy, then answered here (now or later),
 * held, forwarded (head rewritten, body framed and optionally inspected) or
 * turned into a WebSocket (ws_mode from then on); the response is framed
 * back and its end makes room for the next request. The exchange's state
 * (struct exchange_state) is written here only.
 */
#include <errno.h>
#include <http_parser.h>
#include <string.h>

#include "base/macro.h"
#include "base/util.h"
#include "relay/http-conn.h"

enum req_state {
        REQ_HEAD,      /* waiting for / parsing a request head */
        REQ_BODY,      /* forwarding a request body */
        REQ_READ_BODY, /* collecting a body for a local answer */
        REQ_WAIT,      /* request sent (or answered), response not finished */
        REQ_DEFERRED,  /* a local answer the policy gives later */
        REQ_HELD,      /* the head waits in the buffer until the policy resumes it */
        REQ_PEEK,      /* the head and its body wait in the buffer until the body is whole */
};

enum resp_state {
        RESP_IDLE,
        RESP_HEAD,
        RESP_BODY,
};

struct exchange_state {
        uint64_t req_left, resp_left;
        struct strbuf inspect;     /* response body (inspect_response), a body read here */
        struct strbuf inspect_req; /* request body (inspect_request) */
        struct http_chunked req_chunked, resp_chunked;
        enum req_state rstate;
        enum resp_state sstate;
        enum http_body_kind req_body, resp_body;
        unsigned resp_status;
        bool req_keep_alive, resp_keep_alive, upgrade_requested;
        bool answer_later;     /* http_exchange_defer() was called */
        bool in_body_callback; /* inside on_request_body() */
        bool inspect_truncated;
        bool inspect_req_truncated;
        size_t peek_need; /* REQ_PEEK: the bytes of head and body */
        bool peeked;      /* routed again, its body whole behind the head */
};

/* --- local answers --- */

/* Ends the policy's part in the current exchange (idempotent). */
static void conn_exchange_done(struct http_conn *c)
{
        struct http_proxy *p = c->proxy;

        if (c->x.data && p->ops->on_exchange_done)
                p->ops->on_exchange_done(p->userdata, &c->x);
        c->x.data = NULL;
}

static void exchange_reset(struct http_exchange *x)
{
        strbuf_release(&x->add_request);
        strbuf_release(&x->add_response);
        strbuf_release(&x->body);
        strbuf_release(&x->headers);
        strbuf_release(&x->query);
        strbuf_release(&x->target);
        *x = (struct http_exchange){
                .add_request = STRBUF_INIT,
                .add_response = STRBUF_INIT,
                .body = STRBUF_INIT,
                .headers = STRBUF_INIT,
                .query = STRBUF_INIT,
                .target = STRBUF_INIT,
        };
}

/* Queues the exchange's local answer for the client. */
static void conn_answer(struct http_conn *c, bool close)
{
        struct http_exchange *x = &c->x;

        if (x->status == 0)
                http_exchange_error(x, 500, "infrastructure_error");
        http_answer_append(&c->cout, x, close);
        if (close)
                conn_close_when_flushed(c);
}

static void conn_fail(struct http_conn *c, unsigned status, const char *code)
{
        http_exchange_error(&c->x, status, code);
        conn_answer(c, true);
}

/* The upstream failed before any byte of its response reached the client:
 * a clean 502 with code, the request's remaining bytes dropped, and the
 * connection closed after the answer. */
static void conn_upstream_failed(struct http_conn *c, const char *code)
{
        struct http_proxy *p = c->proxy;

        if (streq(code, "upstream_tls")) {
                p->stats.tls_failures++;
                p->stats.last_tls_failure = c->tls ? tls_stream_error(c->tls) : NULL;
        } else
                p->stats.upstream_failures++;
        conn_close_upstream(c);
        c->ex->sstate = RESP_IDLE;
        c->cin.start = c->cin.end = 0;
        c->c_fwd = 0;
        conn_fail(c, 502, code);
        c->ex->rstate = REQ_WAIT;
}

static void request_done_locally(struct http_conn *c, bool had_body)
{
        /* A body is never read for a local answer: that answer is the last. */
        bool close = !c->ex->req_keep_alive || c->c_eof || had_body ||
                     http_answer_closes(c->x.status ?: 500, c->authenticated);

        conn_answer(c, close);
        if (close)
                c->ex->rstate = REQ_WAIT;
        else {
                c->ex->rstate = REQ_HEAD;
                conn_arm_head_timer(c);
        }
}

/* --- handles --- */

static struct http_conn *exchange_conn(struct http_exchange *x)
{
        return (struct http_conn *) ((char *) x - offsetof(struct http_conn, x));
}

struct http_handle *http_exchange_handle(struct http_exchange *x)
{
        struct http_conn *c = exchange_conn(x);

        if (!c->handle) {
                c->handle = xcalloc(1, sizeof(*c->handle));
                c->handle->conn = c;
        }
        return c->handle;
}

void http_handle_set_data(struct http_handle *h, void *data)
{
        h->data = data;
}

void *http_handle_data(const struct http_handle *h)
{
        return h->data;
}

struct http_handle *http_exchange_defer(struct http_exchange *x)
{
        exchange_conn(x)->ex->answer_later = true;
        return http_exchange_handle(x);
}

static void deferred_answer(struct http_conn *c)
{
        /* Answered from inside on_request_body(): the pump goes on there. */
        c->ex->answer_later = false;
        if (c->ex->in_body_callback)
                return;
        if (c->mode != &http_mode || c->ex->rstate != REQ_DEFERRED)
                return;
        c->ex->rstate = REQ_WAIT;
        c->last_activity = loop_now(c->proxy->loop);
        request_done_locally(c, false);
        conn_pump_and_reap(c);
}

void http_handle_respond(struct http_handle *h, unsigned status, const char *json)
{
        http_exchange_respond(&h->conn->x, status, json);
        deferred_answer(h->conn);
}

void http_handle_respond_body(struct http_handle *h, unsigned status, const char *content_type,
                              const char *body, size_t len)
{
        http_exchange_respond_body(&h->conn->x, status, content_type, body, len);
        deferred_answer(h->conn);
}

void http_handle_error(struct http_handle *h, unsigned status, const char *code,
                       const char *message)
{
        http_exchange_error_message(&h->conn->x, status, code, message);
        deferred_answer(h->conn);
}

void http_handle_resume(struct http_handle *h)
{
        struct http_conn *c = h->conn;

        if (c->mode != &http_mode || c->ex->rstate != REQ_HELD)
                return;
        c->ex->rstate = REQ_HEAD;
        c->last_activity = loop_now(c->proxy->loop);
        conn_arm_head_timer(c);
        conn_pump_and_reap(c);
}

/* --- request side --- */

static int process_head(struct http_conn *c)
{
        struct http_proxy *p = c->proxy;
        struct http_head h;
        size_t end;
        const char *raw = c->cin.data + c->cin.start;
        const char *q;
        bool peeked;
        int r, action;

        r = http_head_find_end(raw, buf_avail(&c->cin), &end);
        if (r == 0) {
                if (c->c_eof)
                        conn_kill(c); /* closed mid-head: nobody to answer */
                return 0;
        }
        conn_exchange_done(c);
        exchange_reset(&c->x);
        if (r == -E2BIG) {
                conn_fail(c, 431, "head_too_large");
                c->ex->rstate = REQ_WAIT;
                return 1;
        }
        if (r < 0) {
                conn_fail(c, 400, "bad_request");
                c->ex->rstate = REQ_WAIT;
                return 1;
        }
        r = http_head_parse(raw, end, false, false, &h);
        if (r < 0) {
                conn_fail(c, r == -E2BIG ? 431 : 400,
                          r == -E2BIG ? "head_too_large" : "bad_request");
                c->ex->rstate = REQ_WAIT;
                return 1;
        }
        peeked = c->ex->peeked;
        if (peeked) {
                /* Routed again with its body (HTTP_ACTION_PEEK_BODY): the
                 * same request, counted once. */
                c->ex->peeked = false;
                c->x.peek = raw + end;
                c->x.peek_len = (size_t) h.content_length;
        } else
                p->stats.requests++;
        c->x.req = &h;
        c->x.req_is_head = h.method == HTTP_HEAD;
        c->x.path = h.target;
        q = memchr(h.target, '?', h.target_len);
        c->x.path_len = q ? (size_t) (q - h.target) : h.target_len;
        if (q)
                strbuf_add(&c->x.query, q + 1, h.target_len - c->x.path_len - 1);
        c->ex->req_keep_alive = h.keep_alive;
        c->ex->req_body = h.body;
        c->ex->req_left = h.content_length;
        c->ex->upgrade_requested = h.upgrade;
        c->last_activity = loop_now(p->loop);
        conn_arm_idle_timer(c);

        action = p->ops->on_request(p->userdata, &c->x);
        c->x.req = NULL;
        c->x.peek = NULL;
        if (c->x.authenticated)
                conn_set_authenticated(c);
        switch (action) {
        case HTTP_ACTION_HOLD:
                /* The head stays in the buffer: routed again on resume. */
                c->ex->rstate = REQ_HELD;
                loop_timer_set(c->timer, USEC_INFINITY);
                return 0;
        case HTTP_ACTION_WS_ACCEPT:
                if (h.body == HTTP_BODY_NONE && ws_accept_local(c, &h) >= 0) {
                        /* A session of the policy's own: it sees every message. */
                        c->x.watch_ws = c->x.ws_sticky = true;
                        buf_consume(&c->cin, end);
                        return 1;
                }
                http_exchange_error(&c->x, 400, "bad_request");
                action = HTTP_ACTION_RESPOND;
                break;
        case HTTP_ACTION_PEEK_BODY:
                /* Bounded as a head is: the whole of it in the buffer, by
                 * the head's deadline; asked once. */
                if (h.body == HTTP_BODY_CHUNKED) {
                        http_exchange_error(&c->x, 411, "length_required");
                        action = HTTP_ACTION_RESPOND;
                } else if (h.content_length > CONN_BUF_BYTES - end) {
                        http_exchange_error(&c->x, 413, "body_too_large");
                        action = HTTP_ACTION_RESPOND;
                } else if (peeked) {
                        http_exchange_error(&c->x, 500, "internal_error");
                        action = HTTP_ACTION_RESPOND;
                } else {
                        c->ex->rstate = REQ_PEEK;
                        c->ex->peek_need = end + (size_t) h.content_length;
                        conn_arm_head_timer(c);
                        return 1;
                }
                break;
        case HTTP_ACTION_READ_BODY:
                if (h.body == HTTP_BODY_CHUNKED) {
                        http_exchange_error(&c->x, 411, "length_required");
                        action = HTTP_ACTION_RESPOND;
                } else if (h.content_length > HTTP_MAX_CONTROL_BODY) {
                        http_exchange_error(&c->x, 413, "body_too_large");
                        action = HTTP_ACTION_RESPOND;
                } else {
                        buf_consume(&c->cin, end);
                        strbuf_reset(&c->ex->inspect);
                        c->ex->rstate = REQ_READ_BODY;
                        return 1;
                }
                break;
        default:
                break;
        }
        if (action != HTTP_ACTION_FORWARD) {
                buf_consume(&c->cin, end);
                request_done_locally(c, h.body != HTTP_BODY_NONE);
                return 1;
        }

        /* A request for another of the policy's upstreams than the one this
         * connection has open: that one is closed, idle (one exchange at a time). */
        if (c->ufd < 0 || c->u_eof || c->u_shut ||
            (p->cfg.upstream_for && c->x.upstream_key != c->u_key)) {
                c->u_key = c->x.upstream_key;
                r = conn_connect_upstream(c);
                if (r < 0) {
                        p->stats.upstream_failures++;
                        buf_consume(&c->cin, end);
                        http_exchange_error(&c->x, 502, "upstream_unavailable");
                        request_done_locally(c, h.body != HTTP_BODY_NONE);
                        return 1;
                }
        }
        http_head_rewrite(&c->uout, &h, raw,
                          &(const struct http_head_edit){ .target = c->x.target.buf,
                                                          .target_len = c->x.target.len,
                                                          .strip = c->x.strip,
                                                          .keep = c->x.keep,
                                                          .add = c->x.add_request.buf,
                                                          .add_len = c->x.add_request.len });
        p->stats.bytes_up += c->uout.len;
        buf_consume(&c->cin, end);
        c->ex->sstate = RESP_HEAD;
        c->ex->resp_status = 0;
        strbuf_reset(&c->ex->inspect);
        c->ex->inspect_truncated = false;
        strbuf_reset(&c->ex->inspect_req);
        c->ex->inspect_req_truncated = false;
        if (h.body == HTTP_BODY_NONE) {
                c->ex->rstate = REQ_WAIT;
                if (c->x.inspect_request && p->ops->on_request_inspected)
                        p->ops->on_request_inspected(p->userdata, &c->x, "", 0, false);
        } else {
                c->ex->rstate = REQ_BODY;
                http_chunked_init(&c->ex->req_chunked);
                c->ex->req_chunked.stop_at_trailer = true;
        }
        return 1;
}

/* Request body bytes (chunked framing removed) for inspect_request. */
static void request_data(void *userdata, const char *data, size_t len)
{
        struct http_conn *c = userdata;

        if (!c->x.inspect_request || c->ex->inspect_req_truncated)
                return;
        if (c->ex->inspect_req.len + len > HTTP_MAX_INSPECT_BYTES) {
                c->ex->inspect_req_truncated = true;
                return;
        }
        strbuf_add(&c->ex->inspect_req, data, len);
}

/*
 * Frames the next part of the request body in data (Content-Length countdown
 * or chunked decoding). *ret_n gets how many bytes belong to the body; returns
 * 1 when the body ended with them, 0 when more is to come, < 0 on a framing
 * error.
 */
static int request_body_take(struct http_conn *c, const char *data, size_t avail, size_t *ret_n)
{
        if (c->ex->req_body == HTTP_BODY_LENGTH) {
                size_t n = (size_t) MIN((uint64_t) avail, c->ex->req_left);
                c->ex->req_left -= n;
                *ret_n = n;
                request_data(c, data, n);
                return c->ex->req_left == 0;
        }
        return http_chunked_feed(&c->ex->req_chunked, data, avail, request_data, c, ret_n);
}

/*
 * Request trailers are never forwarded: they are header fields that arrive
 * after the policy vetted the head (a second Host, a credential of the
 * client's own, a provider's organization), and no upstream here needs
 * them (RFC 9110 6.5.1 lets a proxy discard them). The trailer line at
 * data (the bytes behind what is classified for sending) is cut out of the
 * client buffer. 1: dropped, 0: incomplete, < 0: malformed.
 */
static int request_drop_trailer(struct http_conn *c, char *data, size_t avail)
{
        size_t n;
        int r = http_chunked_trailer_line(&c->ex->req_chunked, data, avail, &n);

        if (r <= 0)
                return r;
        memmove(data, data + n, avail - n);
        c->cin.end -= n;
        return 1;
}

static void request_body_done(struct http_conn *c)
{
        struct http_proxy *p = c->proxy;

        c->ex->rstate = REQ_WAIT;
        if (c->x.inspect_request && p->ops->on_request_inspected)
                p->ops->on_request_inspected(p->userdata, &c->x, c->ex->inspect_req.buf ?: "",
                                             c->ex->inspect_req.len, c->ex->inspect_req_truncated);
}

/*
 * A body nobody looks at (Content-Length framing, not inspected) need not
 * pass through user space: once all that is buffered of it is classified,
 * the rest goes to the other side through a pipe (conn_pass(), splice(2)),
 * exactly as many bytes as the framing says, so what follows the body stays
 * the next message's. Small rests are not worth a pipe. True if passed.
 */
static bool request_pass(struct http_conn *c)
{
        struct exchange_state *e = c->ex;

        /* Not before an upgrade either: the session takes the sockets over. */
        if (e->req_body != HTTP_BODY_LENGTH || e->req_left < CONN_PASS_MIN_BYTES ||
            c->x.inspect_request || e->upgrade_requested || c->c_eof ||
            conn_pass(c, true, e->req_left) < 0)
                return false;
        e->req_left = 0; /* the body ends when the pass does */
        return true;
}

static int http_process_client(struct http_conn *c)
{
        struct http_proxy *p = c->proxy;
        size_t avail = buf_avail(&c->cin);
        const char *data = c->cin.data ? c->cin.data + c->cin.start : NULL;

        switch (c->ex->rstate) {
        case REQ_HEAD:
                if (avail == 0 || !client_flushed(c) || c->c_fwd > 0) {
                        if (avail == 0 && c->c_eof && client_flushed(c))
                                conn_kill(c);
                        return 0;
                }
                return process_head(c);
        case REQ_PEEK:
                if (avail < c->ex->peek_need) {
                        if (c->c_eof)
                                conn_kill(c); /* closed mid-body: nobody to answer */
                        return 0;
                }
                c->ex->rstate = REQ_HEAD;
                c->ex->peeked = true;
                return process_head(c);
        case REQ_READ_BODY: {
                size_t n = (size_t) MIN((uint64_t) avail, c->ex->req_left);
                strbuf_add(&c->ex->inspect, data, n);
                buf_consume(&c->cin, n);
                c->ex->req_left -= n;
                if (c->ex->req_left > 0) {
                        if (c->c_eof)
                                conn_kill(c);
                        return n > 0;
                }
                c->ex->in_body_callback = true;
                p->ops->on_request_body(p->userdata, &c->x, c->ex->inspect.buf, c->ex->inspect.len);
                c->ex->in_body_callback = false;
                strbuf_reset(&c->ex->inspect);
                if (c->ex->answer_later) {
                        c->ex->rstate = REQ_DEFERRED;
                        /* Waiting is no idle time: the policy's deadline rules. */
                        loop_timer_set(c->timer, USEC_INFINITY);
                        return 1;
                }
                request_done_locally(c, false);
                return 1;
        }
        case REQ_BODY: {
                size_t n = 0;
                int r;
                if (c->c_pass > 0) {
                        /* The pump moves the rest of the body (a pass). */
                        if (c->c_eof && upstream_flushed(c))
                                conn_kill(c); /* body cut short */
                        return 0;
                }
                if (c->ex->req_body == HTTP_BODY_LENGTH && c->ex->req_left == 0) {
                        request_body_done(c); /* after a pass */
                        return 1;
                }
                /* Bytes are classified behind those still waiting to be
                 * sent, so that one flush carries all of them. */
                data += c->c_fwd;
                avail -= c->c_fwd;
                if (avail == 0) {
                        if (request_pass(c))
                                return 1;
                        if (c->c_eof && c->c_fwd == 0)
                                conn_kill(c); /* body cut short */
                        return 0;
                }
                r = request_body_take(c, data, avail, &n);
                if (r == HTTP_CHUNKED_TRAILER) {
                        c->c_fwd += n;
                        p->stats.bytes_up += n;
                        r = request_drop_trailer(c, c->cin.data + c->cin.start + c->c_fwd,
                                                 avail - n);
                        if (r == 0 && c->c_eof && c->c_fwd == 0)
                                conn_kill(c); /* body cut short */
                        if (r >= 0)
                                return r > 0 || n > 0;
                }
                if (r < 0) {
                        /* The head already went upstream: no clean answer
                         * is possible, cut both sides. */
                        conn_kill(c);
                        return 0;
                }
                c->c_fwd += n;
                p->stats.bytes_up += n;
                if (r > 0)
                        request_body_done(c);
                else
                        (void) request_pass(c);
                return 1;
        }
        case REQ_DEFERRED:
        case REQ_HELD:
                /* The client left while its answer was pending: nobody to
                 * answer (the policy hears of it through on_handle_gone). */
                if (c->c_eof)
                        conn_kill(c);
                return 0;
        case REQ_WAIT:
                return 0;
        }
        return 0;
}

/* --- response side --- */

/* Response body bytes (chunked framing removed), before they are sent. */
static void response_data(void *userdata, const char *data, size_t len)
{
        struct http_conn *c = userdata;
        struct http_proxy *p = c->proxy;

        if (len > 0 && p->ops->on_response_data)
                p->ops->on_response_data(p->userdata, &c->x, data, len);
        if (!c->x.inspect_response || c->ex->inspect_truncated)
                return;
        if (c->ex->inspect.len + len > HTTP_MAX_INSPECT_BYTES) {
                c->ex->inspect_truncated = true;
                return;
        }
        strbuf_add(&c->ex->inspect, data, len);
}

static void response_complete(struct http_conn *c)
{
        struct http_proxy *p = c->proxy;

        if (c->x.inspect_response && p->ops->on_response)
                p->ops->on_response(p->userdata, &c->x, c->ex->resp_status, c->ex->inspect.buf,
                                    c->ex->inspect.len, c->ex->inspect_truncated);
        conn_exchange_done(c);
        strbuf_reset(&c->ex->inspect);
        c->ex->sstate = RESP_IDLE;
        if (!c->ex->resp_keep_alive || !c->ex->req_keep_alive || c->ex->rstate != REQ_WAIT ||
            c->c_eof) {
                c->close_after_flush = true;
                return;
        }
        c->ex->rstate = REQ_HEAD;
        conn_arm_head_timer(c);
}

static int process_response_head(struct http_conn *c)
{
        const char *raw = c->uin.data + c->uin.start;
        struct http_head h;
        size_t end;
        int r;

        r = http_head_find_end(raw, buf_avail(&c->uin), &end);
        if (r == 0 && !c->u_eof)
                return 0;
        if (r > 0)
                r = http_head_parse(raw, end, true, c->x.req_is_head, &h) < 0 ? -EBADMSG : 1;
        if (r <= 0) {
                /* Unreachable, dead or babbling upstream before any byte of
                 * this response reached the client: a clean 502. */
                conn_upstream_failed(c, "upstream_unavailable");
                return 1;
        }
        c->proxy->stats.bytes_down += end;
        c->ex->resp_status = h.status;
        /* An upgrade nobody asked for, or over TLS (TLS records cannot be
         * spliced, and no WebSocket goes to a provider): the upstream broke
         * the exchange's framing before a byte of it reached the client, who
         * gets a 502 and never a tunnel; that upstream connection closes. */
        if (h.status == 101 && (!c->ex->upgrade_requested || c->tls)) {
                conn_upstream_failed(c, "upstream_unavailable");
                return 1;
        }
        if (h.status / 100 == 1 && h.status != 101) {
                c->u_fwd = end; /* interim (100 Continue): the final head follows */
                return 1;
        }
        if (c->x.add_response.len == 0)
                c->u_fwd = end;
        else {
                strbuf_add(&c->cout, raw, end - 2);
                strbuf_add(&c->cout, c->x.add_response.buf, c->x.add_response.len);
                strbuf_adds(&c->cout, "\r\n");
                buf_consume(&c->uin, end);
        }
        if (h.status == 101)
                return ws_tunnel_start(c);
        if (c->proxy->ops->on_response_head)
                c->proxy->ops->on_response_head(c->proxy->userdata, &c->x, &h);
        c->ex->resp_keep_alive = h.keep_alive;
        c->ex->resp_body = h.body;
        c->ex->resp_left = h.content_length;
        http_chunked_init(&c->ex->resp_chunked);
        if (h.body == HTTP_BODY_NONE)
                response_complete(c);
        else
                c->ex->sstate = RESP_BODY;
        return 1;
}

/* As request_pass(); nor does the policy read it as it streams. */
static bool response_pass(struct http_conn *c)
{
        struct exchange_state *e = c->ex;

        if (e->resp_body != HTTP_BODY_LENGTH || e->resp_left < CONN_PASS_MIN_BYTES ||
            c->x.inspect_response || c->proxy->ops->on_response_data || c->u_eof ||
            conn_pass(c, false, e->resp_left) < 0)
                return false;
        e->resp_left = 0;
        return true;
}

static int http_process_upstream(struct http_conn *c)
{
        size_t avail = buf_avail(&c->uin);
        const char *data = c->uin.data ? c->uin.data + c->uin.start : NULL;

        switch (c->ex->sstate) {
        case RESP_IDLE:
                if (c->u_fwd > 0)
                        return 0; /* the end of the last response is still unsent */
                if (avail > 0 || c->u_eof) {
                        /* Bytes or EOF with no request outstanding: this
                         * upstream connection is done; a new one is opened
                         * for the next request. */
                        conn_close_upstream(c);
                        return 1;
                }
                return 0;
        case RESP_HEAD:
                if (c->u_fwd > 0 || (avail == 0 && !c->u_eof))
                        return 0;
                return process_response_head(c);
        case RESP_BODY: {
                size_t n;
                int r = 0;
                if (c->u_pass > 0) {
                        /* The pump moves the rest of the body (a pass). */
                        if (c->u_eof && client_flushed(c))
                                conn_kill(c); /* truncated response */
                        return 0;
                }
                if (c->ex->resp_body == HTTP_BODY_LENGTH && c->ex->resp_left == 0) {
                        response_complete(c); /* after a pass */
                        return 1;
                }
                /* As for request bodies: classify behind the unsent bytes
                 * (the head), so head and body leave in one send. */
                data += c->u_fwd;
                avail -= c->u_fwd;
                if (avail == 0) {
                        if (response_pass(c))
                                return 1;
                        if (!c->u_eof || c->u_fwd > 0)
                                return 0;
                        if (c->ex->resp_body == HTTP_BODY_EOF)
                                response_complete(c);
                        else
                                conn_kill(c); /* truncated response */
                        return 1;
                }
                if (c->ex->resp_body == HTTP_BODY_CHUNKED) {
                        r = http_chunked_feed(&c->ex->resp_chunked, data, avail, response_data, c,
                                              &n);
                        if (r < 0) {
                                conn_kill(c);
                                return 0;
                        }
                } else {
                        n = avail;
                        if (c->ex->resp_body == HTTP_BODY_LENGTH) {
                                n = (size_t) MIN((uint64_t) avail, c->ex->resp_left);
                                c->ex->resp_left -= n;
                                r = c->ex->resp_left == 0;
                        }
                        response_data(c, data, n);
                }
                c->u_fwd += n;
                c->proxy->stats.bytes_down += n;
                if (r > 0)
                        response_complete(c);
                else
                        (void) response_pass(c);
                return 1;
        }
        }
        return 0;
}

/* --- the mode --- */

static enum conn_verdict http_upstream_fault(struct http_conn *c, enum upstream_fault fault)
{
        struct exchange_state *e = c->ex;

        switch (fault) {
        case UPSTREAM_SEND:
                /* Gone while the request went out: a clean 502 if nothing
                 * of a response reached the client yet. */
                if (e->sstate == RESP_HEAD && e->resp_status == 0 && client_flushed(c)) {
                        conn_upstream_failed(c, "upstream_unavailable");
                        return CONN_HANDLED;
                }
                return CONN_KILL;
        case UPSTREAM_RECV:
                if (e->sstate == RESP_IDLE) {
                        /* No response outstanding: the next request connects anew. */
                        conn_close_upstream(c);
                        return CONN_HANDLED;
                }
                return CONN_UPSTREAM_GONE; /* a reset reads as EOF: the framing decides */
        case UPSTREAM_CONNECT:
                conn_upstream_failed(c, "upstream_unavailable");
                return CONN_HANDLED;
        case UPSTREAM_TLS:
                /* The request is still in uout/cin and is dropped unsent. */
                conn_upstream_failed(c, "upstream_tls");
                return CONN_HANDLED;
        }
        return CONN_KILL;
}

static bool http_idle(const struct http_conn *c)
{
        return c->ex->rstate == REQ_HEAD && c->ex->sstate == RESP_IDLE;
}

static int http_timer(struct http_conn *c)
{
        bool peeking = c->ex->rstate == REQ_PEEK && c->ex->sstate == RESP_IDLE;

        if (!(http_idle(c) || peeking) || buf_avail(&c->cin) == 0 || !client_flushed(c))
                return 0;
        /* Slowloris: a partial head (or a body routed by) gets 408 and a close. */
        c->x.req_is_head = false;
        conn_fail(c, 408, "request_timeout");
        c->ex->rstate = REQ_WAIT; /* never parse the partial head */
        conn_arm_head_timer(c);
        return 1;
}

const struct conn_mode http_mode = {
        .process_client = http_process_client,
        .process_upstream = http_process_upstream,
        .upstream_fault = http_upstream_fault,
        .idle = http_idle,
        .timer = http_timer,
};

void exchange_start(struct http_conn *c)
{
        c->ex = xcalloc(1, sizeof(*c->ex));
        c->ex->inspect = (struct strbuf) STRBUF_INIT;
        c->ex->inspect_req = (struct strbuf) STRBUF_INIT;
        c->ex->rstate = REQ_HEAD;
        c->ex->sstate = RESP_IDLE;
        exchange_reset(&c->x);
        c->mode = &http_mode;
}

void exchange_free(struct http_conn *c)
{
        conn_exchange_done(c);
        exchange_reset(&c->x);
        if (!c->ex)
                return;
        strbuf_release(&c->ex->inspect);
        strbuf_release(&c->ex->inspect_req);
        c->ex = mfree(c->ex);
}
