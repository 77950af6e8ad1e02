/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The unit's port (docs/DESIGN.md §8): control routes answered by the unit
 * through struct frontend_ops, everything else relayed to the live env
 * server's unix socket by an http_proxy.
 *
 * Per request (every request of a keep-alive connection):
 *   - the target is normalised once (request-target.h): a malformed one is
 *     400 and closes the connection; the normalised form is what is matched
 *     and what is forwarded;
 *   - GET /healthz, /readyz and /health need no credentials: /healthz is
 *     liveness (the daemon answers), /readyz readiness (an episode can
 *     serve), /health OpenEnv's answer for the same readiness:
 *     {"status":"healthy"} 200, or {"status":"unhealthy","reason"} 503;
 *   - everything else needs a principal (credentials.h): 401 without;
 *     the agent principal reaches /mcp (and below) and the manifest's agent
 *     paths only (403 elsewhere); the orchestrator reaches everything;
 *   - control routes (/info /verdict /logs /metrics GET, /reset_unit
 *     /inspect /resume /end_episode POST): method checked (405), never
 *     relayed; what they answer is the unit's business (ops->control);
 *   - env traffic flows while an episode is live (503 otherwise), with
 *     Authorization and any "token" parameter removed and WebSocket
 *     compression declined (so frames stay readable).
 *
 * The episode's hooks: on_action() for each POST /step, /ws step, MCP
 * tools/call (HTTP or WebSocket /mcp, /ws {"type":"mcp"}); on_done() when a
 * /step response, a /ws observation or an MCP result reports done
 * (openenv-messages.h).
 *
 * A stock OpenEnv client keeps one WebSocket for many episodes. The
 * orchestrator's /ws sessions are sticky: when the episode ends (after the
 * final observation reached the client) the session detaches from the
 * env server instead of closing; while detached, {"type":"reset"} starts
 * the next episode (and is its first message), {"type":"close"} closes,
 * anything else is answered with an error message. POST /reset and a /ws
 * handshake by the orchestrator while no episode is live wait for a new
 * one. Other WebSocket sessions end with a close frame (1001 "episode
 * ended").
 *
 * Lanes (frontend_config.lanes > 1: the unit runs that many episodes at
 * once): each orchestrator /ws session takes a lane of its own when it
 * opens (ops->acquire) and gives it back when it closes (ops->release); its
 * episodes are that lane's, its upstream sockets are made for that lane's
 * env server (env->make_socket), and its 101 says which lane
 * (X-Openenvd-Lane). A session that finds every lane taken answers its
 * first message with OpenEnv's own capacity error (CAPACITY_REACHED) and
 * closes. MCP sessions take lanes too: a WebSocket /mcp session is its
 * lane's episode's (the handshake waits until it is live); an HTTP MCP
 * session (openenv/session/create, then params.session_id) is routed request
 * by request by its body, on any connection, and gives its lane back on
 * openenv/session/close, at the end of its episode, or after
 * cfg.session_idle unused. Env requests outside a session are refused (409
 * concurrent_episodes): no episode is theirs. With one lane, everything is
 * lane 0's.
 *
 * Ownership: the frontend owns the listening fd and its connections; ops,
 * userdata and the credentials are borrowed.
 */
#include <stdbool.h>
#include <stddef.h>

#include "base/event-loop.h"
#include "base/time-util.h"
#include "relay/control-routes.h"
#include "relay/openenv-messages.h"

struct http_handle; /* relay/http-proxy.h */
struct http_exchange;
struct credentials;

struct frontend_request {
        enum control_route id; /* control-routes.h */
        const char *route;     /* its path: "/info" */
        const char *query;     /* the raw query string (after '?'), "" when none */
        const char *body;
        size_t body_len;
        struct http_exchange *x; /* private to the frontend */
};

struct frontend_reply {
        unsigned status; /* 200...; errors are turned into {"error":{"code":...}} */
        char *json;      /* owned: success body (NULL: "{}") */
        char *text;      /* owned: a text body instead (text_len bytes) */
        size_t text_len;
        const char *content_type; /* static: the text's (NULL: text/plain; charset=utf-8) */
        const char *error_code;   /* static: for status >= 400 */
        /* owned: "message" beside the code (what was wrong with the request;
         * never a path or an errno text); NULL: the code's own words */
        char *error_message;
        bool later; /* no answer now: frontend_answer() comes later */
};

typedef void (*frontend_done_fn)(void *cookie, int result);

struct frontend_ops {
        /* Control route, principal and method already checked. Answers in
         * reply now, or calls frontend_later(), sets reply->later and
         * answers through frontend_answer() later. */
        void (*control)(void *userdata, const struct frontend_request *req,
                        struct frontend_reply *reply);
        /* A pending answer's client went away: forget it. */
        void (*pending_gone)(void *userdata, struct http_handle *pending);
        bool (*env_traffic_allowed)(void *userdata, unsigned lane);
        const char *(*phase)(void *userdata); /* for /health */
        /* For /health and /readyz: can an episode serve now (or when a
         * reset asks)? If not, *ret_reason: a new string saying why. */
        bool (*ready)(void *userdata, char **ret_reason);
        /* The orchestrator's client wants an episode while none is live:
         * 0 live now, 1 done(cookie, result) follows, < 0 refused. */
        int (*request_episode)(void *userdata, unsigned lane, frontend_done_fn done, void *cookie);
        /* A cookie's client went away: its done() must not be called. */
        void (*forget)(void *userdata, void *cookie);
        void (*on_action)(void *userdata, unsigned lane, const struct openenv_action *a);
        void (*on_done)(void *userdata, unsigned lane);
        /* Lanes (> 1): a free one for a new session (-EBUSY: none), and
         * its return when the session goes. */
        int (*acquire)(void *userdata);
        void (*release)(void *userdata, unsigned lane);
};

struct frontend_config {
        const char *env_socket;            /* unix path of the env server (NULL: none yet) */
        const struct credentials *creds;   /* borrowed */
        char *const *agent_paths;          /* more routes for the agent principal (borrowed) */
        usec_t head_timeout, idle_timeout; /* 0: defaults (10 s, 600 s) */
        unsigned max_connections;          /* 0: HTTP_MAX_CONNECTIONS */
        unsigned lanes;                    /* episodes at once (0: 1) */
        usec_t session_idle; /* lanes: an HTTP MCP session unused this long ends (0: 600 s) */
};

struct frontend;

/* Takes ownership of listen_fd (also on failure). */
int frontend_new(struct loop *l, int listen_fd, const struct frontend_config *cfg,
                 const struct frontend_ops *ops, void *userdata, struct frontend **ret);
struct frontend *frontend_free(struct frontend *f);
DEFINE_CLEANUP_FUNC(struct frontend, frontend_free);
unsigned frontend_connections(const struct frontend *f);
struct http_proxy_stats;
void frontend_stats(const struct frontend *f, struct http_proxy_stats *ret);
/* Where the live env server answers. */
struct frontend_env {
        const char *socket; /* unix path of the shim's activation socket */
        /* Non-NULL: straight to 127.0.0.1:port over TCP instead, from sockets
         * this makes (in the lane's env server's network namespace: no hop
         * through the shim), fd or -errno. With lanes, the only way. */
        int (*make_socket)(void *userdata, unsigned lane, int family);
        void *make_socket_userdata;
        uint16_t port;
};

/* The lane's env requests go to env from now on (NULL: none is live);
 * sessions of the lane's previous env server detach (sticky) or close,
 * idle connections let go of their upstream socket. */
int frontend_set_env(struct frontend *f, unsigned lane, const struct frontend_env *env);
/* From control(): the answer comes later; the handle is what to answer. */
struct http_handle *frontend_later(const struct frontend_request *req);
/* Answers a pending control request (reply's strings are freed). */
void frontend_answer(struct http_handle *pending, struct frontend_reply *reply);
/* Whether route is one the agent principal may never reach. */
bool frontend_route_is_orchestrators(const char *route);
