/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * An HTTP/1.1-aware relay: one listening socket, each accepted connection
 * paired 1:1 with its own upstream connection (unix or TCP). Every request
 * head on a connection (keep-alive included) is parsed and handed to the
 * policy (struct http_proxy_ops), which answers locally, forwards it (with
 * whole header lines removed or added and, if it says so, another request
 * target), holds it for later, or accepts a WebSocket itself; everything
 * else (bodies, responses, WebSocket frames) is relayed byte for byte while
 * light-weight framing parsers (http-chunked.h, ws-frame.h) track message
 * boundaries.
 *
 * Requests are handled one at a time per connection: the next request head
 * is not routed before the previous response ended, so answers never
 * overtake each other (pipelined requests wait in the bounded buffer).
 *
 * Hostile clients (cfg.auth_required): a connection is unauthenticated until
 * the policy marks one of its requests authenticated. Unauthenticated
 * connections get a short deadline for each head and for keep-alive idling
 * (cfg.unauth_timeout), and are capped in number (cfg.max_unauth) and per
 * client address (cfg.max_unauth_per_client): past a cap the oldest one is
 * closed, so a flood of idle connections never locks a legitimate client
 * out. A locally refused request (4xx before authentication, or a malformed
 * one) closes its connection: the body is never read beyond a short linger.
 * At the fd limit the listener closes what it cannot serve (a reserve fd)
 * instead of spinning.
 *
 * WebSockets (http-ws.c): upgrades the policy watches are parsed frame by
 * frame in both directions (text messages up to WS_MAX_INSPECT_BYTES are
 * handed to on_ws_text, frames of any size stream through); a "sticky"
 * session outlives its upstream: when the env server goes away the client
 * stays connected, "detached", its messages go to the policy, and
 * http_handle_ws_attach() opens a new upstream session for it. Upgrades the
 * policy does not watch are handed to a splice(2) pipe_relay.
 *
 * The upstream is one or more addresses of the same server (tried in turn
 * when a connection attempt fails), reached in plain bytes or, with
 * cfg->tls, through a TLS session per connection (tls-stream.h): the plain
 * path is unchanged, TLS replaces only the upstream side's recv/send. The
 * request is written only after the handshake verified the server, so a
 * refused certificate costs the client a 502 `upstream_tls` and the
 * upstream never sees a byte of it. Upgrades are not relayed over TLS.
 *
 * Ownership: the proxy owns the listening fd, all connections and tunnels;
 * http_proxy_free() closes everything. The policy's userdata, cfg->tls and
 * cfg->tls_host are borrowed and must outlive the proxy.
 */
#include <stdbool.h>
#include <sys/socket.h>

#include "base/event-loop.h"
#include "base/limits.h"
#include "base/strbuf.h"
#include "relay/http-head.h"

struct tls_client;

enum http_action {
        HTTP_ACTION_RESPOND,   /* answer set with http_exchange_respond()/_error() */
        HTTP_ACTION_FORWARD,   /* relay to the upstream */
        HTTP_ACTION_READ_BODY, /* read the body (<= HTTP_MAX_CONTROL_BODY), then on_request_body */
        HTTP_ACTION_HOLD,      /* wait: http_handle_resume() routes the request again later */
        HTTP_ACTION_WS_ACCEPT, /* accept the WebSocket here: a detached session, no upstream yet */
        /* Wait until the whole body (Content-Length, head and body within
         * the connection's buffer, by the head's deadline) is buffered, then
         * on_request again with x->peek: to route by what the body says. */
        HTTP_ACTION_PEEK_BODY,
};

struct http_exchange {
        /* Valid during on_request only: borrowed from the connection buffer. */
        const struct http_head *req;
        /* After HTTP_ACTION_PEEK_BODY, during on_request only: the whole
         * request body (peek_len bytes, not NUL-terminated); NULL before. */
        const char *peek;
        size_t peek_len;
        const char *path; /* target up to '?' (not NUL-terminated) */
        size_t path_len;
        struct strbuf query; /* the raw query string after '?' (kept for the exchange) */

        /* Policy decisions. */
        int tag;                  /* free for the policy (route id) */
        const char *const *strip; /* request header names to remove (NULL-terminated) */
        /* If set, the only request headers forwarded (NULL-terminated
         * names; "x-*" matches a prefix) besides the body's framing
         * (Content-Length, Transfer-Encoding), which always stays. */
        const char *const *keep;
        struct strbuf add_request;  /* raw "Name: value\r\n" lines to add upstream */
        struct strbuf add_response; /* raw lines added to the response head */
        struct strbuf target;       /* if not empty: the request target sent upstream */
        /* With cfg.upstream_for: which upstream this request goes to, in the
         * policy's terms; a connection whose upstream was opened for another
         * key opens a new one (keep-alive across upstreams). */
        unsigned upstream_key;
        bool authenticated;    /* the request carried valid credentials */
        bool inspect_request;  /* collect <= HTTP_MAX_INSPECT_BYTES of the forwarded body */
        bool inspect_response; /* collect <= HTTP_MAX_INSPECT_BYTES of the body */
        bool watch_ws;         /* after a 101: validate frames, report text messages */
        bool ws_sticky;        /* a watched session that outlives its upstream */

        /* Local answer. */
        unsigned status;
        const char *content_type; /* static; NULL: application/json */
        struct strbuf body;
        struct strbuf headers; /* extra raw header lines of the local answer */

        bool req_is_head;

        /* Per-exchange state of the policy (owned by it): if set,
         * on_exchange_done() is called once when the exchange is over. */
        void *data;
};

/* The policy's reference to one connection, across loop rounds: to answer
 * later, to resume a held request, to drive a detached WebSocket. */
struct http_handle;

enum http_ws_event {
        HTTP_WS_DETACHED,      /* the upstream went away; the client stays */
        HTTP_WS_ATTACHED,      /* http_handle_ws_attach() succeeded */
        HTTP_WS_ATTACH_FAILED, /* it did not: still detached */
};

struct http_proxy_ops {
        int (*on_request)(void *userdata, struct http_exchange *x);
        /* After HTTP_ACTION_READ_BODY; must answer (respond or error) or
         * call http_exchange_defer(). */
        void (*on_request_body)(void *userdata, struct http_exchange *x, const char *body,
                                size_t len);
        /* A forwarded request's body with inspect_request, once it is all
         * sent (the first HTTP_MAX_INSPECT_BYTES; truncated past them). */
        void (*on_request_inspected)(void *userdata, struct http_exchange *x, const char *body,
                                     size_t len, bool truncated);
        /* After a forwarded exchange with inspect_response ended. */
        void (*on_response)(void *userdata, struct http_exchange *x, unsigned status,
                            const char *body, size_t len, bool truncated);
        /* A complete text message on a watched WebSocket (from the client
         * also while detached: then it was not forwarded anywhere). */
        void (*on_ws_text)(void *userdata, struct http_exchange *x, bool from_client,
                           const char *data, size_t len);
        void (*on_ws_event)(void *userdata, struct http_exchange *x, enum http_ws_event ev);
        /* A forwarded request's final response head (h borrowed for the
         * call), then its body as it is relayed (chunked framing removed);
         * both before the client receives those bytes. */
        void (*on_response_head)(void *userdata, struct http_exchange *x,
                                 const struct http_head *h);
        void (*on_response_data)(void *userdata, struct http_exchange *x, const char *data,
                                 size_t len);
        /* The exchange is over (response relayed, answered locally, or the
         * connection closed): release x->data. */
        void (*on_exchange_done)(void *userdata, struct http_exchange *x);
        /* A handle's connection is gone: the handle is freed after this
         * returns and must not be used again. */
        void (*on_handle_gone)(void *userdata, struct http_handle *h);
};

struct http_proxy_addr {
        struct sockaddr_storage sa;
        socklen_t len;
};

struct http_proxy_config {
        /* AF_UNIX, AF_INET or AF_INET6, tried in order (starting from the
         * last that answered) until a connection succeeds. */
        struct http_proxy_addr upstream[HTTP_MAX_UPSTREAM_ADDRS];
        size_t n_upstream;
        struct tls_client *tls;   /* NULL: plain; else TLS to the upstream */
        const char *tls_host;     /* SNI and the name the certificate must carry */
        usec_t head_timeout;      /* a request head must be complete within this (10 s) */
        usec_t idle_timeout;      /* no byte moved for this long: close (600 s) */
        unsigned max_connections; /* HTTP_MAX_CONNECTIONS */
        /* Hostile clients: see above. Off, every connection is trusted. */
        bool auth_required;
        /* NULL: socket(2). Else it makes every upstream socket (family,
         * SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC) for the connection
         * whose handle is h: fd or -errno; e.g. in the network namespace of
         * that connection's env server. */
        int (*make_socket)(void *userdata, struct http_handle *h, int family);
        void *make_socket_userdata;
        /* NULL: a connection's upstream is upstream[] (tried in turn). Else
         * the one address of the connection whose handle is h, asked at each
         * connect: 0, or -errno (nothing to reach: a 502). */
        int (*upstream_for)(void *userdata, struct http_handle *h, struct http_proxy_addr *ret);
        void *upstream_for_userdata;
        usec_t unauth_timeout;          /* HTTP_UNAUTH_TIMEOUT */
        unsigned max_unauth;            /* HTTP_MAX_UNAUTH_CONNECTIONS */
        unsigned max_unauth_per_client; /* HTTP_MAX_UNAUTH_PER_CLIENT */
};

struct http_proxy;

/* Takes ownership of listen_fd (also on failure). */
int http_proxy_new(struct loop *l, int listen_fd, const struct http_proxy_config *cfg,
                   const struct http_proxy_ops *ops, void *userdata, struct http_proxy **ret);
struct http_proxy *http_proxy_free(struct http_proxy *p);
DEFINE_CLEANUP_FUNC(struct http_proxy, http_proxy_free);
/* Open client connections (HTTP and tunnels). */
unsigned http_proxy_connections(const struct http_proxy *p);

struct http_proxy_stats {
        uint64_t bytes_up;            /* request bytes relayed to the upstream (heads rewritten) */
        uint64_t bytes_down;          /* response bytes relayed from the upstream */
        uint64_t upstream_failures;   /* 502 upstream_unavailable: no connection or no answer */
        uint64_t tls_failures;        /* 502 upstream_tls: handshake or certificate refused */
        const char *last_tls_failure; /* static string (tls_stream_error()), or NULL */
        uint64_t requests;            /* request heads routed */
        uint64_t evicted;             /* unauthenticated connections closed to make room */
        uint64_t refused_at_fd_limit; /* connections closed at once: no fd left */
        uint64_t bytes_spliced;       /* of bytes_up and bytes_down: bodies passed through a pipe */
};
void http_proxy_stats(const struct http_proxy *p, struct http_proxy_stats *ret);

void http_exchange_respond(struct http_exchange *x, unsigned status, const char *json);
/* A non-JSON local answer (content_type static, e.g. "text/plain; charset=utf-8"). */
void http_exchange_respond_body(struct http_exchange *x, unsigned status, const char *content_type,
                                const char *body, size_t len);
/* {"error":{"code":"<code>","message":"..."}}: the only error shape any
 * client ever sees. message NULL: the code's own words (http_error_message()). */
void http_exchange_error(struct http_exchange *x, unsigned status, const char *code);
void http_exchange_error_message(struct http_exchange *x, unsigned status, const char *code,
                                 const char *message);
/* For people: what an error code says (never a path or an errno text). */
const char *http_error_message(const char *code, unsigned status);

/* The handle of the exchange's connection (one per connection, made on
 * first use). Valid until on_handle_gone(). */
struct http_handle *http_exchange_handle(struct http_exchange *x);
/* The policy's own pointer on a handle (NULL until set). */
void http_handle_set_data(struct http_handle *h, void *data);
void *http_handle_data(const struct http_handle *h);
/* From on_request_body(): the answer comes later, from the loop, through
 * http_handle_respond()/_error(). Meanwhile nothing else is read or routed
 * on this connection (answers never overtake each other). */
struct http_handle *http_exchange_defer(struct http_exchange *x);
/* Whether x is a WebSocket session without an upstream right now. */
bool http_exchange_ws_detached(const struct http_exchange *x);

void http_handle_respond(struct http_handle *h, unsigned status, const char *json);
void http_handle_respond_body(struct http_handle *h, unsigned status, const char *content_type,
                              const char *body, size_t len);
/* http_exchange_error_message() for a deferred answer. */
void http_handle_error(struct http_handle *h, unsigned status, const char *code,
                       const char *message);
/* A held request (HTTP_ACTION_HOLD) is routed again, on_request included. */
void http_handle_resume(struct http_handle *h);
/* Detached WebSocket sessions: a text frame or a close frame to the client;
 * a new upstream session (the handshake for path, then text as the first
 * client message): on_ws_event() says how it went. -ESTALE when the
 * session is not detached (or not between frames). */
int http_handle_ws_send_text(struct http_handle *h, const char *text, size_t len);
void http_handle_ws_close(struct http_handle *h, uint16_t code, const char *reason);
int http_handle_ws_attach(struct http_handle *h, const char *path, const char *text, size_t len);
/* A sticky session's upstream ends once what it already sent reached the
 * client (the episode is over): the session is detached then. */
void http_handle_ws_detach(struct http_handle *h);

/* Where requests go from now on: upstream's addresses and make_socket
 * (NULL: nowhere, they get a 502). A connection between two exchanges
 * closes its upstream socket now (its next request connects anew); one in
 * the middle of an exchange finishes it on the socket it has. */
void http_proxy_set_upstream(struct http_proxy *p, const struct http_proxy_config *upstream);
/* Sets cfg->upstream to a unix socket path (-ENAMETOOLONG). */
int http_proxy_upstream_unix(struct http_proxy_config *cfg, const char *path);
/* Appends one more address: -E2BIG past HTTP_MAX_UPSTREAM_ADDRS, -EINVAL if
 * it does not fit a sockaddr_storage. */
int http_proxy_upstream_add(struct http_proxy_config *cfg, const struct sockaddr *sa,
                            socklen_t len);
