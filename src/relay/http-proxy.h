/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * An HTTP/1.1-aware relay: one listening socket, each accepted connection
 * paired 1:1 with its own upstream connection (unix or TCP). Every request
 * head on a connection (keep-alive included) is parsed and handed to the
 * policy (struct http_proxy_ops), which answers locally or forwards it with
 * whole header lines removed or added; everything else (bodies, responses,
 * WebSocket frames) is relayed byte for byte while light-weight framing
 * parsers (http-chunked.h, ws-frame.h) track message boundaries.
 *
 * Requests are handled one at a time per connection: the next request head
 * is not routed before the previous response ended, so answers never
 * overtake each other (pipelined requests wait in the bounded buffer).
 * Upgrades the policy does not watch are handed to a splice(2) pipe_relay.
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

#include "base/limits.h"
#include "base/strbuf.h"
#include "base/event-loop.h"
#include "relay/http-head.h"

struct tls_client;

enum http_action {
        HTTP_ACTION_RESPOND,   /* answer set with http_exchange_respond()/_error() */
        HTTP_ACTION_FORWARD,   /* relay to the upstream */
        HTTP_ACTION_READ_BODY, /* read the body (<= HTTP_MAX_CONTROL_BODY), then on_request_body */
};

struct http_exchange {
        /* Valid during on_request only: borrowed from the connection buffer. */
        const struct http_head *req;
        const char *path; /* target up to '?' (not NUL-terminated) */
        size_t path_len;
        struct strbuf query; /* the raw query string after '?' (kept for the exchange) */

        /* Policy decisions. */
        int tag;                    /* free for the policy (route id) */
        const char *const *strip;   /* request header names to remove (NULL-terminated) */
        struct strbuf add_request;  /* raw "Name: value\r\n" lines to add upstream */
        struct strbuf add_response; /* raw lines added to the response head */
        bool inspect_response;      /* collect <= HTTP_MAX_INSPECT_BYTES of the body */
        bool watch_ws;              /* after a 101: validate frames, report text messages */

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

/* A local answer the policy gives later (http_exchange_defer()). */
struct http_deferred;

struct http_proxy_ops {
        int (*on_request)(void *userdata, struct http_exchange *x);
        /* After HTTP_ACTION_READ_BODY; must answer (respond or error) or
         * call http_exchange_defer(). */
        void (*on_request_body)(void *userdata, struct http_exchange *x, const char *body,
                                size_t len);
        /* A deferred answer's client went away: the handle is freed after
         * this returns and must not be answered. */
        void (*on_deferred_gone)(void *userdata, struct http_deferred *d);
        /* After a forwarded exchange with inspect_response ended. */
        void (*on_response)(void *userdata, struct http_exchange *x, unsigned status,
                            const char *body, size_t len, bool truncated);
        /* A complete text message on a watched WebSocket. */
        void (*on_ws_text)(void *userdata, struct http_exchange *x, bool from_client,
                           const char *data, size_t len);
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
        struct tls_client *tls; /* NULL: plain; else TLS to the upstream */
        const char *tls_host;   /* SNI and the name the certificate must carry */
        usec_t head_timeout;    /* a request head must be complete within this */
        usec_t idle_timeout;    /* no byte moved for this long: close */
        unsigned max_connections;
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
};
void http_proxy_stats(const struct http_proxy *p, struct http_proxy_stats *ret);

void http_exchange_respond(struct http_exchange *x, unsigned status, const char *json);
/* A non-JSON local answer (content_type static, e.g. "text/plain; charset=utf-8"). */
void http_exchange_respond_body(struct http_exchange *x, unsigned status, const char *content_type,
                                const char *body, size_t len);
/*
 * From on_request_body(): the answer comes later, from the loop, through
 * http_deferred_respond()/_error(). Meanwhile nothing else is read or routed
 * on this connection (answers never overtake each other). The handle belongs
 * to the proxy: it is freed by the answer, or after on_deferred_gone().
 */
struct http_deferred *http_exchange_defer(struct http_exchange *x);
void http_deferred_respond(struct http_deferred *d, unsigned status, const char *json);
void http_deferred_respond_body(struct http_deferred *d, unsigned status, const char *content_type,
                                const char *body, size_t len);
void http_deferred_error(struct http_deferred *d, unsigned status, const char *code);
/* {"error":{"code":"<code>"}}: the only error shape any client ever sees. */
void http_exchange_error(struct http_exchange *x, unsigned status, const char *code);

/* Where new requests go from now on (a path, NULL: nowhere — the policy
 * answers 503 itself); connections already open keep their upstream. */
int http_proxy_set_upstream_unix(struct http_proxy *p, const char *path);

/* Sets cfg->upstream to a unix socket path (-ENAMETOOLONG). */
int http_proxy_upstream_unix(struct http_proxy_config *cfg, const char *path);
/* Appends one more address: -E2BIG past HTTP_MAX_UPSTREAM_ADDRS, -EINVAL if
 * it does not fit a sockaddr_storage. */
int http_proxy_upstream_add(struct http_proxy_config *cfg, const struct sockaddr *sa,
                            socklen_t len);
