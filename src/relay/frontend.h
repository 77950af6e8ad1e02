/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The external listener (DESIGN.md section 7): control routes answered by
 * the unit through struct frontend_ops, everything else relayed to the env
 * server's unix socket by an http_proxy.
 *
 * Routing, per request (every request of a keep-alive connection):
 *   - the path is percent-decoded for matching only (the raw target is
 *     forwarded byte for byte); "//", "/./", "/../" segments and %00 are 400,
 *     so no spelling of /step reaches the env without the token;
 *   - GET /healthz: no token;
 *   - control routes (/info /verdict /logs GET, /reset_unit /inspect /resume
 *     /end_episode POST): token, then method (405, never relayed);
 *   - /reset /step /state /ws (trailing slash ignored): token; Authorization
 *     is stripped before forwarding (on every env request, in fact);
 *   - everything else (/mcp...) needs no token;
 *   - env traffic only while env_traffic_allowed() (503 otherwise).
 * Hooks: on_step() for each relayed POST /step and each client→env /ws text
 * message of type "step"; on_done() when a 200 /step response body or an
 * env→client /ws message {"type":"observation",...} carries "done": true
 * (top level or under "data"). Bodies above HTTP_MAX_INSPECT_BYTES /
 * WS_MAX_INSPECT_BYTES are relayed without detection.
 *
 * Ownership: the frontend owns the listening fd and its connections; ops
 * and userdata are borrowed; the token is copied.
 */
#include <stdbool.h>
#include <stddef.h>

#include "base/time-util.h"
#include "base/event-loop.h"

struct http_deferred; /* relay/http-proxy.h */
struct http_exchange;

struct frontend_request {
        const char *route; /* normalised: "/info" */
        const char *query; /* raw query string (after '?'), "" when none */
        const char *body;
        size_t body_len;
        struct http_exchange *x; /* private to the frontend */
};

struct frontend_reply {
        unsigned status; /* 200...; errors are turned into {"error":{"code":...}} */
        char *json;      /* owned: success body (NULL: "{}") */
        char *text;      /* owned: a text/plain body instead (text_len bytes) */
        size_t text_len;
        const char *error_code; /* static: for status >= 400 */
        bool later;             /* no answer now: frontend_answer() comes later */
};

struct frontend_ops {
        /* Control route, token and method already checked. Answers in
         * reply now, or calls frontend_later(), sets reply->later and
         * answers through frontend_answer() later. */
        void (*control)(void *userdata, const struct frontend_request *req,
                        struct frontend_reply *reply);
        /* A pending answer's client went away: forget it. */
        void (*pending_gone)(void *userdata, struct http_deferred *pending);
        bool (*env_traffic_allowed)(void *userdata);
        void (*on_step)(void *userdata);
        void (*on_done)(void *userdata);
};

struct frontend_config {
        const char *env_socket;            /* unix path of the env server (NULL: none yet) */
        const char *token;                 /* orchestrator token */
        usec_t head_timeout, idle_timeout; /* 0: defaults (10 s, 600 s) */
        unsigned max_connections;          /* 0: HTTP_MAX_CONNECTIONS */
};

struct frontend;

/* Takes ownership of listen_fd (also on failure). */
int frontend_new(struct loop *l, int listen_fd, const struct frontend_config *cfg,
                 const struct frontend_ops *ops, void *userdata, struct frontend **ret);
struct frontend *frontend_free(struct frontend *f);
DEFINE_CLEANUP_FUNC(struct frontend, frontend_free);
unsigned frontend_connections(const struct frontend *f);
/* New env requests go to path from now on (NULL: none is live). */
int frontend_set_env_socket(struct frontend *f, const char *path);
/* From control(): the answer comes later; the handle is what to answer. */
struct http_deferred *frontend_later(const struct frontend_request *req);
/* Answers a pending control request (reply's strings are freed). */
void frontend_answer(struct http_deferred *pending, struct frontend_reply *reply);

/* The orchestrator token: from path (read once, trailing newline dropped) if
 * non-NULL, else $OPENENVD_TOKEN, else 32 random bytes in hex
 * (*ret_generated = true: the caller prints it once). */
int frontend_token_load(const char *path, char **ret_token, bool *ret_generated);
