/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "relay/frontend.h"

#include <assert.h>
#include <errno.h>
#include <http_parser.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "base/json-writer.h"
#include "base/log.h"
#include "base/util.h"
#include "relay/credentials.h"
#include "relay/http-proxy.h"
#include "relay/control-routes.h"
#include "relay/openenv-messages.h"
#include "relay/request-target.h"
#include "relay/ws-frame.h"

enum route {
        ROUTE_ENV,        /* any other env path */
        ROUTE_STEP,       /* POST /step: an action, done in the response */
        ROUTE_MCP,        /* POST /mcp: tool calls, done in the results */
        ROUTE_MCP_CREATE, /* POST /mcp openenv/session/create (lanes): its answer names it */
        ROUTE_WS,         /* WebSocket /ws: OpenEnv's messages */
        ROUTE_WS_MCP,     /* WebSocket /mcp: JSON-RPC */
        ROUTE_WS_OTHER,   /* any other upgrade: framing checked only */
        ROUTE_CONTROL,    /* + its enum control_route */
};

struct frontend {
        struct http_proxy *proxy;        /* owned */
        const struct frontend_ops *ops;  /* borrowed */
        void *userdata;                  /* borrowed */
        const struct credentials *creds; /* borrowed */
        char *const *agent_paths;        /* borrowed */
        struct session *sessions;        /* owned */
        unsigned lanes;                  /* episodes at once: 1, or a lane per session */
        struct lane_env *envs;           /* owned: lanes of them */
        bool freeing;                    /* sessions go without giving their lanes back */
        struct loop *loop;               /* borrowed */
        struct mcp_session *mcp;         /* owned: HTTP MCP sessions (lanes) */
        struct loop_source *mcp_timer;   /* owned: the next one to go idle */
        usec_t session_idle;
};

/*
 * An HTTP MCP session on a unit of lanes (OpenEnv's production mode): the
 * id the lane's env server gave it at "openenv/session/create", and the lane
 * it holds until "openenv/session/close", the end of its episode, or
 * session_idle without a request. Its requests may come on any connection:
 * each is routed by the session_id in its body.
 */
struct mcp_session {
        struct mcp_session *next;
        char *id;
        unsigned lane;
        unsigned inflight; /* its requests being relayed: never idle meanwhile */
        bool gone;         /* over: freed when the last request is through */
        usec_t last_used;
};

/* Where a lane's live env server answers (frontend_set_env()). */
struct lane_env {
        bool live;
        struct http_proxy_addr addr;
        int (*make_socket)(void *userdata, unsigned lane, int family); /* NULL: socket(2) */
        void *make_socket_userdata;
};

/*
 * What the frontend remembers about one client connection beyond a single
 * request: a WebSocket session (to detach, close or re-attach it when
 * episodes change) or a request held until an episode is live.
 */
struct session {
        struct frontend *f;
        struct http_handle *h; /* borrowed: valid until on_handle_gone */
        struct session *prev, *next;
        enum route route; /* ROUTE_WS*: the session's kind; else a held request */
        bool sticky;      /* the orchestrator's /ws: outlives episodes */
        bool waiting;     /* request_episode() answers later */
        bool held;        /* a request held until its episode is live */
        bool failed;      /* held: no episode could be started */
        bool full;        /* lanes: none was free when it opened */
        bool holds_lane;  /* lanes: took lane, gives it back when it goes */
        bool creating;    /* its MCP session create went to the lane's env server */
        int lane;         /* its episodes' lane (HTTP: this request's); -1: none (yet) */
        char *first;      /* detached: the message to open the next episode with */
        size_t first_len;
        /* ROUTE_WS: client messages the env has not answered yet (OpenEnv's
         * /ws is request, then exactly one reply; "close" has none). */
        unsigned unanswered;
};

static const char *const strip_env[] = { "authorization", NULL };
/* No extension negotiation on upgrades: frames stay plain (RSV bits 0) so
 * the validator can read them; clients fall back to no compression. */
static const char *const strip_ws[] = { "authorization", "sec-websocket-extensions", NULL };

/* The orchestrator's env paths: the episode's own controls. */
static const char *const orchestrator_paths[] = { "/reset", "/step", "/state", "/ws" };

bool frontend_route_is_orchestrators(const char *route)
{
        for (size_t i = 0; i < ELEMENTSOF(orchestrator_paths); i++)
                if (streq(route, orchestrator_paths[i]))
                        return true;
        int id = control_route_lookup(route);
        return id >= 0 && !control_route_public(id);
}

static bool agent_may(const struct frontend *f, const char *route)
{
        if (frontend_route_is_orchestrators(route))
                return false;
        if (streq(route, "/mcp") || startswith(route, "/mcp/"))
                return true;
        return f->agent_paths && strv_contains(f->agent_paths, route);
}

/* Whether who may use a route: a control route by its table, an env path
 * by the principal's own rule (the scraper reaches none). */
static bool principal_may(const struct frontend *f, enum principal who, int id, const char *route)
{
        if (id >= 0)
                return control_route_table[id].principals & CR_PRINCIPAL(who);
        return who == PRINCIPAL_ORCHESTRATOR || (who == PRINCIPAL_AGENT && agent_may(f, route));
}

/* --- sessions --- */

static struct session *session_of(struct http_exchange *x)
{
        return http_handle_data(http_exchange_handle(x));
}

static struct session *session_get(struct frontend *f, struct http_exchange *x)
{
        struct http_handle *h = http_exchange_handle(x);
        struct session *s = http_handle_data(h);

        if (s)
                return s;
        s = xcalloc(1, sizeof(*s));
        s->f = f;
        s->h = h;
        s->lane = f->lanes > 1 ? -1 : 0;
        s->next = f->sessions;
        if (f->sessions)
                f->sessions->prev = s;
        f->sessions = s;
        http_handle_set_data(h, s);
        return s;
}

static void session_free(struct session *s)
{
        struct frontend *f = s->f;
        /* Not while the frontend goes: the unit goes after it, and no
         * episode is ended and graded for a daemon that is leaving. */
        int lane = s->holds_lane && !f->freeing ? s->lane : -1;

        if (s->waiting && f->ops->forget)
                f->ops->forget(f->userdata, s);
        if (s->prev)
                s->prev->next = s->next;
        else
                f->sessions = s->next;
        if (s->next)
                s->next->prev = s->prev;
        http_handle_set_data(s->h, NULL);
        free(s->first);
        free(s);
        /* Last: ending its episode changes the lane's env (frontend_set_env()),
         * which must not find this session any more. */
        if (lane >= 0 && f->ops->release)
                f->ops->release(f->userdata, (unsigned) lane);
}

/* A lane the session took, given back (its episode ends and is graded). */
static void session_let_lane_go(struct session *s)
{
        if (!s->holds_lane)
                return;
        s->holds_lane = false;
        s->f->ops->release(s->f->userdata, (unsigned) s->lane);
}

/* The lane a request acts on: its session's; 0 with one lane. */
static unsigned lane_of(const struct session *s)
{
        return s && s->lane > 0 ? (unsigned) s->lane : 0;
}

static void note_action(struct frontend *f, unsigned lane, unsigned n, const char *via,
                        const char *data, size_t len)
{
        if (n > 0 && f->ops->on_action)
                f->ops->on_action(f->userdata, lane, &(struct openenv_action){ n, via, data, len });
}

/* OpenEnv's error message on a WebSocket; message may quote anything.
 * sessions: OpenEnv's capacity error's counts (NULL: none). */
static void ws_error_counts(struct session *s, const char *code, const char *message,
                            const unsigned sessions[2])
{
        cleanup_strbuf struct strbuf sb = STRBUF_INIT;
        struct jwriter w;

        jwriter_init(&w, &sb);
        jwriter_object_begin(&w);
        jwriter_kv_string(&w, "type", "error");
        jwriter_key(&w, "data");
        jwriter_object_begin(&w);
        jwriter_kv_string(&w, "message", message);
        jwriter_kv_string(&w, "code", code);
        if (sessions) {
                jwriter_kv_uint(&w, "active_sessions", sessions[0]);
                jwriter_kv_uint(&w, "max_sessions", sessions[1]);
        }
        jwriter_object_end(&w);
        jwriter_object_end(&w);
        (void) http_handle_ws_send_text(s->h, sb.buf, sb.len);
}

static void ws_error(struct session *s, const char *code, const char *message)
{
        ws_error_counts(s, code, message, NULL);
}

static char *capacity_message(const struct frontend *f)
{
        return xasprintf("Server at capacity: %u/%u sessions active. Cannot accept new "
                         "connections.",
                         f->lanes, f->lanes);
}

/* Every lane is held: what OpenEnv's own server says when its sessions are
 * all taken (SessionCapacityError), then the session closes. */
static void ws_capacity(struct session *s)
{
        const unsigned n = s->f->lanes;
        cleanup_free char *m = capacity_message(s->f);

        ws_error_counts(s, "CAPACITY_REACHED", m, (const unsigned[2]){ n, n });
        http_handle_ws_close(s->h, WS_CLOSE_NORMAL, NULL);
}

/* A WebSocket /mcp session that found every lane held: its first request
 * gets OpenEnv's capacity error in JSON-RPC (as OpenEnv's /mcp sends it),
 * then the session closes. */
static void mcp_ws_capacity(struct session *s, const char *data, size_t len)
{
        struct openenv_mcp_request req;
        cleanup_free char *m = capacity_message(s->f);
        cleanup_free char *json = NULL;

        (void) openenv_mcp_request_parse(data, len, &req); /* else: id null */
        json = openenv_jsonrpc_error(req.id, JSONRPC_SERVER_ERROR, m,
                                     (const unsigned[2]){ s->f->lanes, s->f->lanes });
        openenv_mcp_request_done(&req);
        (void) http_handle_ws_send_text(s->h, json, strlen(json));
        http_handle_ws_close(s->h, WS_CLOSE_NORMAL, NULL);
}

/* Why no episode serves a client: what happened, and the unit's reason
 * when it is not ready (the first episode starting, the last one failed). */
static char *unavailable_message(struct frontend *f, const char *what)
{
        cleanup_free char *reason = NULL;

        if (f->ops->ready(f->userdata, &reason) || !reason)
                return xstrdup(what);
        return xasprintf("%s: %s", what, reason);
}

static void ws_unavailable(struct session *s, const char *what)
{
        cleanup_free char *m = unavailable_message(s->f, what);
        ws_error(s, "EPISODE_UNAVAILABLE", m);
}

static void session_attach(struct session *s)
{
        int r = http_handle_ws_attach(s->h, "/ws", s->first, s->first_len);

        s->first = mfree(s->first);
        if (r < 0)
                ws_unavailable(s, "the episode's env server cannot be reached");
}

/* request_episode()'s answer. The session may be freed by what it does. */
static void session_episode_ready(void *cookie, int result)
{
        struct session *s = cookie;

        s->waiting = false;
        if (s->held) {
                s->failed = result < 0;
                http_handle_resume(s->h); /* routed again: now live, or failed */
        } else if (result < 0)
                ws_unavailable(s, "no episode could be started");
        else
                session_attach(s);
}

/* A client message on a detached sticky session. */
static void session_detached_message(struct session *s, const char *data, size_t len)
{
        struct frontend *f = s->f;
        enum openenv_ws_type t = openenv_ws_type(data, len);
        int r = 0;

        if (t == OPENENV_WS_CLOSE) {
                http_handle_ws_close(s->h, WS_CLOSE_NORMAL, NULL);
                return;
        }
        if (s->full) {
                ws_capacity(s);
                return;
        }
        if (t != OPENENV_WS_RESET && !f->ops->env_traffic_allowed(f->userdata, lane_of(s))) {
                ws_error(s, "EPISODE_ENDED",
                         "the episode is over: send reset to start the next one");
                return;
        }
        free(s->first);
        s->first = xmalloc(len + 1);
        memcpy(s->first, data, len);
        s->first_len = len;
        if (t == OPENENV_WS_RESET)
                r = f->ops->request_episode(f->userdata, lane_of(s), session_episode_ready, s);
        else
                note_action(f, lane_of(s), openenv_ws_actions(data, len), "ws", data, len);
        if (r == 1) {
                s->waiting = true;
                return;
        }
        if (r < 0) {
                s->first = mfree(s->first);
                ws_unavailable(s, "no episode could be started");
                return;
        }
        session_attach(s);
}

/* --- control answers --- */

static const char *reply_error_code(const struct frontend_reply *reply)
{
        return reply->error_code ? reply->error_code : "infrastructure_error";
}

static void reply_from(struct http_exchange *x, struct frontend_reply *reply)
{
        if (reply->status == 0 || reply->status >= 400)
                http_exchange_error_message(x, reply->status ? reply->status : 500,
                                            reply_error_code(reply), reply->error_message);
        else if (reply->text)
                http_exchange_respond_body(x, reply->status,
                                           reply->content_type ?: "text/plain; charset=utf-8",
                                           reply->text, reply->text_len);
        else
                http_exchange_respond(x, reply->status, reply->json ? reply->json : "{}");
        free(reply->json);
        free(reply->text);
        free(reply->error_message);
}

struct http_handle *frontend_later(const struct frontend_request *req)
{
        return http_exchange_defer(req->x);
}

void frontend_answer(struct http_handle *pending, struct frontend_reply *reply)
{
        if (reply->status == 0 || reply->status >= 400)
                http_handle_error(pending, reply->status ? reply->status : 500,
                                  reply_error_code(reply), reply->error_message);
        else if (reply->text)
                http_handle_respond_body(pending, reply->status,
                                         reply->content_type ?: "text/plain; charset=utf-8",
                                         reply->text, reply->text_len);
        else
                http_handle_respond(pending, reply->status, reply->json ? reply->json : "{}");
        free(reply->json);
        free(reply->text);
        free(reply->error_message);
}

/* --- routing --- */

static int respond_error(struct http_exchange *x, unsigned status, const char *code)
{
        http_exchange_error(x, status, code);
        return HTTP_ACTION_RESPOND;
}

/* 503 episode_unavailable with a message: what happened, and with f (the
 * orchestrator asked) the unit's reason when it is not ready. */
static int respond_unavailable(struct http_exchange *x, const char *what, struct frontend *f)
{
        cleanup_free char *message = f ? unavailable_message(f, what) : xstrdup(what);

        http_exchange_error_message(x, 503, "episode_unavailable", message);
        return HTTP_ACTION_RESPOND;
}

static int method_not_allowed(struct http_exchange *x, const char *allow)
{
        strbuf_addf(&x->headers, "Allow: %s\r\n", allow);
        return respond_error(x, 405, "method_not_allowed");
}

/* /readyz, and /health in OpenEnv's words (its provider and validator poll
 * it until 200, then use the env at once): 503 with the reason until an
 * episode can serve. */
static int respond_readiness(struct frontend *f, struct http_exchange *x, bool openenv)
{
        cleanup_free char *reason = NULL;
        cleanup_strbuf struct strbuf sb = STRBUF_INIT;
        bool ready = f->ops->ready(f->userdata, &reason);
        struct jwriter w;

        jwriter_init(&w, &sb);
        jwriter_object_begin(&w);
        if (openenv)
                jwriter_kv_string(&w, "status", ready ? "healthy" : "unhealthy");
        else
                jwriter_kv_bool(&w, "ready", ready);
        jwriter_kv_string(&w, "phase", f->ops->phase(f->userdata));
        if (!ready)
                jwriter_kv_string(&w, "reason", reason ? reason : "unknown");
        jwriter_object_end(&w);
        http_exchange_respond(x, ready ? 200 : 503, sb.buf);
        return HTTP_ACTION_RESPOND;
}

/* Routes without credentials. -1: not one of them. */
/* The routes no token is needed for, answered here. */
static int route_public(struct frontend *f, struct http_exchange *x, int id)
{
        const struct http_head *h = x->req;

        if (id < 0 || !control_route_public(id))
                return -1;
        if (h->method != HTTP_GET && h->method != HTTP_HEAD)
                return method_not_allowed(x, "GET");
        if (id == CR_HEALTHZ) {
                http_exchange_respond(x, 200, "{\"status\":\"ok\"}");
                return HTTP_ACTION_RESPOND;
        }
        return respond_readiness(f, x, id == CR_HEALTH);
}

/* The unit's routes: asked of ops->control() once the body is read. */
static int route_control(struct http_exchange *x, int id)
{
        const struct control_route_def *cr;

        if (id < 0)
                return -1;
        cr = &control_route_table[id];
        if (x->req->method != cr->method)
                return method_not_allowed(x, http_method_str((enum http_method) cr->method));
        x->tag = ROUTE_CONTROL + id;
        return HTTP_ACTION_READ_BODY;
}

/* The session's lane's episode: live now (-1), or an action (held until it
 * is; the session gone and an error when none could be started). */
static int lane_episode(struct frontend *f, struct http_exchange *x, struct session *s)
{
        int r = f->ops->request_episode(f->userdata, (unsigned) s->lane, session_episode_ready, s);

        if (r == 0)
                return -1;
        if (r == 1) {
                s->waiting = s->held = true;
                return HTTP_ACTION_HOLD;
        }
        session_free(s);
        return respond_unavailable(x, "no episode could be started", f);
}

/* No episode is live: the orchestrator's reset and /ws wait for one. */
static int route_no_episode(struct frontend *f, struct http_exchange *x, const char *route,
                            enum principal who)
{
        const struct http_head *h = x->req;
        struct session *s;
        int action;

        if (who == PRINCIPAL_ORCHESTRATOR && streq(route, "/ws") && h->upgrade) {
                x->strip = strip_ws;
                x->tag = ROUTE_WS;
                s = session_get(f, x);
                s->route = ROUTE_WS;
                s->sticky = true;
                return HTTP_ACTION_WS_ACCEPT;
        }
        if (who != PRINCIPAL_ORCHESTRATOR)
                return respond_unavailable(x, "no episode is live", NULL);
        if (!streq(route, "/reset") || h->method != HTTP_POST)
                return respond_unavailable(x, "no episode is live (POST /reset starts one)", f);
        s = session_get(f, x);
        s->route = ROUTE_ENV;
        action = lane_episode(f, x, s);
        if (action < 0)
                session_free(s); /* live now: nothing to hold */
        return action;
}

/* A free lane for the session; false when every one is held. */
static bool session_take_lane(struct frontend *f, struct session *s)
{
        int lane;

        if (s->holds_lane)
                return true;
        lane = f->ops->acquire(f->userdata);
        if (lane < 0)
                return false;
        s->lane = lane;
        s->holds_lane = true;
        return true;
}

/* A JSON-RPC answer given here to an HTTP MCP request (HTTP 200, as OpenEnv's). */
static int respond_jsonrpc(struct http_exchange *x, char *json)
{
        http_exchange_respond(x, 200, json);
        free(json);
        return HTTP_ACTION_RESPOND;
}

static int respond_jsonrpc_error(struct http_exchange *x, const char *id, int code,
                                 const char *message)
{
        return respond_jsonrpc(x, openenv_jsonrpc_error(id, code, message, NULL));
}

/* --- HTTP MCP sessions (lanes) --- */

static struct mcp_session *mcp_session_find(struct frontend *f, const char *id)
{
        for (struct mcp_session *m = f->mcp; m; m = m->next)
                if (!m->gone && streq(m->id, id))
                        return m;
        return NULL;
}

static void mcp_timer_arm(struct frontend *f);

static void mcp_session_unlink_free(struct frontend *f, struct mcp_session *m)
{
        for (struct mcp_session **p = &f->mcp; *p; p = &(*p)->next)
                if (*p == m) {
                        *p = m->next;
                        break;
                }
        free(m->id);
        free(m);
}

/* The session is over: its lane goes back at once (its episode ends and
 * is graded), the record once no request of it is relayed any more. */
static void mcp_session_end(struct frontend *f, struct mcp_session *m, const char *why)
{
        unsigned lane = m->lane;

        log_info("MCP session %s (lane %u): %s", m->id, lane, why);
        m->gone = true;
        if (m->inflight == 0)
                mcp_session_unlink_free(f, m);
        if (!f->freeing)
                f->ops->release(f->userdata, lane);
}

static int mcp_idle_timer(struct loop_source *src, usec_t now, void *userdata)
{
        struct frontend *f = userdata;

        (void) src;
        for (struct mcp_session *m = f->mcp, *next; m; m = next) {
                next = m->next;
                if (!m->gone && m->inflight == 0 && now - m->last_used >= f->session_idle)
                        mcp_session_end(f, m, "unused for too long");
        }
        mcp_timer_arm(f);
        return 0;
}

/* The timer for the session that goes idle first (none: off). */
static void mcp_timer_arm(struct frontend *f)
{
        usec_t when = USEC_INFINITY;

        for (const struct mcp_session *m = f->mcp; m; m = m->next)
                if (!m->gone && m->inflight == 0)
                        when = MIN(when, m->last_used + f->session_idle);
        if (!f->mcp_timer && when != USEC_INFINITY &&
            loop_add_timer(f->loop, when, mcp_idle_timer, f, &f->mcp_timer) < 0)
                log_warning("MCP sessions: no idle timer");
        else if (f->mcp_timer)
                loop_timer_set(f->mcp_timer, when);
}

/* A create's answer (on_response): the session the lane's env server made. */
static void mcp_session_created(struct frontend *f, struct session *s, unsigned status,
                                const char *body, size_t len, bool truncated)
{
        cleanup_free char *id =
                status == 200 && !truncated ? openenv_mcp_session_created(body, len) : NULL;
        struct mcp_session *m;

        if (!s || !s->creating)
                return;
        s->creating = false;
        if (!id || (m = mcp_session_find(f, id))) {
                /* No session, so nothing holds the lane. Or one another
                 * lane's env server named too (a deterministic id: copies of
                 * one template share their random state): the answer is on
                 * its way to this client already, whose requests would reach
                 * the other lane's episode; both end, and the id with them. */
                if (id) {
                        log_warning("MCP session %s: named by the env servers of lanes %u "
                                    "and %d; both sessions end (an env's session ids must be "
                                    "unique)",
                                    id, m->lane, s->lane);
                        mcp_session_end(f, m, "its id was named twice");
                }
                session_let_lane_go(s);
                return;
        }
        m = xcalloc(1, sizeof(*m));
        m->id = TAKE_PTR(id);
        m->lane = (unsigned) s->lane;
        m->last_used = loop_now(f->loop);
        m->next = f->mcp;
        f->mcp = m;
        s->holds_lane = false; /* the session's now */
        log_info("MCP session %s: lane %u", m->id, m->lane);
        mcp_timer_arm(f);
}

/* An HTTP POST /mcp on a unit of lanes, its body in hand: to the lane of the
 * session it names; a create takes a lane; a close is answered here. */
static int route_lane_mcp_http(struct frontend *f, struct http_exchange *x)
{
        struct openenv_mcp_request req;
        struct session *s;
        struct mcp_session *m;
        int action;

        if (!x->peek)
                return HTTP_ACTION_PEEK_BODY;
        if (openenv_mcp_request_parse(x->peek, x->peek_len, &req) < 0)
                return respond_jsonrpc_error(x, NULL, JSONRPC_INVALID_REQUEST,
                                             "Invalid request: one JSON-RPC 2.0 request object "
                                             "(this unit routes each by its session)");
        s = session_get(f, x);
        if (s->creating) {
                /* A create on this connection that came to nothing (no
                 * answer from the env server): its lane goes back. Not a
                 * create routed again (its body read, its episode live). */
                s->creating = false;
                session_let_lane_go(s);
        }
        s->route = ROUTE_MCP;
        if (streq(req.method, "openenv/session/create")) {
                if (!session_take_lane(f, s)) {
                        cleanup_free char *msg = capacity_message(f);
                        action = respond_jsonrpc(
                                x,
                                openenv_jsonrpc_error(req.id, JSONRPC_SERVER_ERROR, msg,
                                                      (const unsigned[2]){ f->lanes, f->lanes }));
                        goto out;
                }
                action = lane_episode(f, x, s);
                if (action >= 0)
                        goto out;
                x->tag = ROUTE_MCP_CREATE;
                x->inspect_response = true;
                s->creating = true;
                /* As a WebSocket session's 101 says it: the lane, whose
                 * episode GET /episodes names. */
                strbuf_addf(&x->add_response, "X-Openenvd-Lane: %d\r\n", s->lane);
        } else {
                cleanup_free char *unknown = NULL;
                m = req.session_id ? mcp_session_find(f, req.session_id) : NULL;
                if (!m) {
                        unknown = req.session_id
                                          ? xasprintf("Unknown session_id: %s", req.session_id)
                                          : xasprintf("this unit runs up to %u episodes at once, "
                                                      "each a session's: call "
                                                      "openenv/session/create first and name "
                                                      "its session_id",
                                                      f->lanes);
                        action = respond_jsonrpc_error(x, req.id, JSONRPC_INVALID_PARAMS, unknown);
                        goto out;
                }
                if (streq(req.method, "openenv/session/close")) {
                        mcp_session_end(f, m, "closed by the client");
                        action = respond_jsonrpc(x, openenv_jsonrpc_closed(req.id, req.session_id));
                        goto out;
                }
                s->lane = (int) m->lane;
                m->inflight++;
                m->last_used = loop_now(f->loop);
                x->data = m;
                x->tag = ROUTE_MCP;
                x->inspect_request = x->inspect_response = true;
        }
        x->strip = strip_env;
        x->upstream_key = (unsigned) s->lane;
        action = HTTP_ACTION_FORWARD;
out:
        openenv_mcp_request_done(&req);
        return action;
}

/* Lanes: each of the orchestrator's sessions takes one of its own. A /ws
 * session starts detached (its first reset asks the lane for an episode);
 * a WebSocket /mcp session is its episode's (the upgrade waits for it); an
 * HTTP MCP session is routed by its body (route_lane_mcp_http()). */
static int route_lane(struct frontend *f, struct http_exchange *x, const char *route,
                      enum principal who)
{
        const struct http_head *h = x->req;
        bool mcp = streq(route, "/mcp");
        struct session *s;
        int action;

        if (who != PRINCIPAL_ORCHESTRATOR || !(streq(route, "/ws") || mcp) ||
            (!h->upgrade && !(mcp && h->method == HTTP_POST))) {
                cleanup_free char *m = xasprintf(
                        "this unit runs up to %u episodes at once, each a session's: open "
                        "/ws (the OpenEnv client does) and reset there, or an MCP session "
                        "(WebSocket /mcp, or openenv/session/create over HTTP /mcp)",
                        f->lanes);
                http_exchange_error_message(x, 409, "concurrent_episodes", m);
                return HTTP_ACTION_RESPOND;
        }
        if (!h->upgrade)
                return route_lane_mcp_http(f, x);
        x->strip = strip_ws;
        s = session_get(f, x);
        if (!session_take_lane(f, s))
                s->full = true;
        if (s->holds_lane)
                strbuf_addf(&x->add_response, "X-Openenvd-Lane: %d\r\n", s->lane);
        if (!mcp) {
                x->tag = ROUTE_WS;
                s->route = ROUTE_WS;
                s->sticky = true;
                return HTTP_ACTION_WS_ACCEPT;
        }
        if (s->full) {
                /* Accepted here: its first message gets the capacity error. */
                x->tag = ROUTE_WS_MCP;
                s->route = ROUTE_WS_MCP;
                return HTTP_ACTION_WS_ACCEPT;
        }
        action = lane_episode(f, x, s);
        if (action >= 0)
                return action;
        x->upstream_key = (unsigned) s->lane;
        return -1; /* relayed to the lane's env server */
}

static int route_env(struct frontend *f, struct http_exchange *x, const char *route,
                     enum principal who)
{
        const struct http_head *h = x->req;
        struct session *s;

        x->strip = strip_env;
        x->tag = ROUTE_ENV;
        if (h->upgrade) {
                x->strip = strip_ws;
                x->watch_ws = true;
                x->tag = streq(route, "/ws")    ? ROUTE_WS
                         : streq(route, "/mcp") ? ROUTE_WS_MCP
                                                : ROUTE_WS_OTHER;
                s = session_get(f, x);
                s->route = (enum route) x->tag;
                s->sticky = x->ws_sticky = x->tag == ROUTE_WS && who == PRINCIPAL_ORCHESTRATOR;
        } else if (streq(route, "/step") && h->method == HTTP_POST) {
                /* Counted once its body is whole: the env acts on no less. */
                x->tag = ROUTE_STEP;
                x->inspect_request = x->inspect_response = true;
        } else if (streq(route, "/mcp") && h->method == HTTP_POST) {
                x->tag = ROUTE_MCP;
                x->inspect_request = x->inspect_response = true;
        }
        return HTTP_ACTION_FORWARD;
}

static int fe_on_request(void *userdata, struct http_exchange *x)
{
        struct frontend *f = userdata;
        const struct http_head *h = x->req;
        struct request_target t;
        struct session *s = session_of(x);
        enum principal who;
        int action, id;

        /* A held request routed again: how its episode request went. A
         * lane's session keeps its lane (and goes on to its episode). */
        if (s && s->held) {
                bool failed = s->failed;
                s->held = s->failed = false;
                if (failed || !s->holds_lane)
                        session_free(s);
                if (failed)
                        return respond_unavailable(x, "no episode could be started", f);
        }
        if (request_target_parse(h->target, h->target_len, &t) < 0)
                return respond_error(x, 400, "bad_request");
        id = control_route_lookup(t.route);
        action = route_public(f, x, id);
        if (action >= 0)
                goto done;
        who = credentials_check(f->creds, h, t.token, t.n_tokens);
        if (who == PRINCIPAL_NONE) {
                strbuf_adds(&x->headers, "WWW-Authenticate: Basic realm=\"openenvd\"\r\n");
                http_exchange_error_message(x, 401, "not_permitted",
                                            "credentials missing or wrong: send the unit's token "
                                            "as Authorization: Bearer TOKEN, or in the URL "
                                            "(http://openenv:TOKEN@host:port)");
                action = HTTP_ACTION_RESPOND;
                goto done;
        }
        x->authenticated = true;
        if (!principal_may(f, who, id, t.route)) {
                action = respond_error(x, 403, "not_permitted");
                goto done;
        }
        action = route_control(x, id);
        if (action >= 0)
                goto done;
        if (h->method == HTTP_CONNECT) {
                action = respond_error(x, 405, "method_not_allowed");
                goto done;
        }
        strbuf_adds(&x->target, t.target);
        if (f->lanes > 1)
                action = route_lane(f, x, t.route, who);
        else if (!f->ops->env_traffic_allowed(f->userdata, 0))
                action = route_no_episode(f, x, t.route, who);
        else
                action = -1;
        if (action < 0)
                action = route_env(f, x, t.route, who);
done:
        request_target_done(&t);
        return action;
}

static void fe_on_request_body(void *userdata, struct http_exchange *x, const char *body,
                               size_t len)
{
        struct frontend *f = userdata;
        enum control_route id = (enum control_route)(x->tag - ROUTE_CONTROL);
        struct frontend_reply reply = {};
        struct frontend_request req = {
                .id = id,
                .route = control_route_table[id].path,
                .query = x->query.buf ? x->query.buf : "",
                .body = body,
                .body_len = len,
                .x = x,
        };

        f->ops->control(f->userdata, &req, &reply);
        if (reply.later)
                return;
        reply_from(x, &reply);
}

static void fe_on_handle_gone(void *userdata, struct http_handle *h)
{
        struct frontend *f = userdata;
        struct session *s = http_handle_data(h);

        if (s)
                session_free(s);
        if (f->ops->pending_gone)
                f->ops->pending_gone(f->userdata, h);
}

static void fe_on_request_inspected(void *userdata, struct http_exchange *x, const char *body,
                                    size_t len, bool truncated)
{
        struct frontend *f = userdata;

        /* A step is one action whatever its body; a cut one is recorded
         * without it. */
        if (x->tag == ROUTE_STEP)
                note_action(f, 0, 1, "step", truncated ? NULL : body, len);
        else if (x->tag == ROUTE_MCP && !truncated)
                note_action(f, lane_of(session_of(x)), openenv_mcp_actions(body, len), "mcp", body,
                            len);
}

static void fe_on_response(void *userdata, struct http_exchange *x, unsigned status,
                           const char *body, size_t len, bool truncated)
{
        struct frontend *f = userdata;
        bool done = false;

        if (x->tag == ROUTE_MCP_CREATE) {
                mcp_session_created(f, session_of(x), status, body, len, truncated);
                return;
        }
        if (status != 200 || truncated || !f->ops->on_done)
                return;
        if (x->tag == ROUTE_STEP)
                done = openenv_step_done(body, len);
        else if (x->tag == ROUTE_MCP)
                done = openenv_mcp_done(body, len);
        if (done)
                f->ops->on_done(f->userdata, lane_of(session_of(x)));
}

/* An HTTP MCP session's request is through: idle from now. */
static void fe_on_exchange_done(void *userdata, struct http_exchange *x)
{
        struct frontend *f = userdata;
        struct mcp_session *m = x->data;

        x->data = NULL;
        assert(m && m->inflight > 0);
        m->inflight--;
        m->last_used = loop_now(f->loop);
        if (m->gone && m->inflight == 0)
                mcp_session_unlink_free(f, m);
        else
                mcp_timer_arm(f);
}

static void fe_on_ws_text(void *userdata, struct http_exchange *x, bool from_client,
                          const char *data, size_t len)
{
        struct frontend *f = userdata;
        struct session *s = session_of(x);
        unsigned n = 0;
        bool done = false;

        if (!s)
                return;
        if (from_client && http_exchange_ws_detached(x) && s->route == ROUTE_WS_MCP) {
                mcp_ws_capacity(s, data, len); /* the only detached /mcp: a full one */
                return;
        }
        if (from_client && http_exchange_ws_detached(x)) {
                session_detached_message(s, data, len);
                return;
        }
        if (s->route == ROUTE_WS) {
                if (from_client) {
                        n = openenv_ws_actions(data, len);
                        if (openenv_ws_type(data, len) != OPENENV_WS_CLOSE)
                                s->unanswered++;
                } else {
                        done = openenv_ws_done(data, len);
                        if (s->unanswered > 0)
                                s->unanswered--;
                }
        } else if (s->route == ROUTE_WS_MCP) {
                if (from_client)
                        n = openenv_mcp_actions(data, len);
                else
                        done = openenv_mcp_done(data, len);
        }
        note_action(f, lane_of(s), n, s->route == ROUTE_WS ? "ws" : "mcp", data, len);
        if (!done)
                return;
        /* The final observation goes out first; a sticky session then
         * waits for the next episode without its env server. */
        if (s->sticky)
                http_handle_ws_detach(s->h);
        if (f->ops->on_done)
                f->ops->on_done(f->userdata, lane_of(s));
}

static void fe_on_ws_event(void *userdata, struct http_exchange *x, enum http_ws_event ev)
{
        struct session *s = session_of(x);

        (void) userdata;
        if (!s)
                return;
        switch (ev) {
        case HTTP_WS_ATTACH_FAILED:
                ws_error(s, "EPISODE_UNAVAILABLE", "the episode's env server did not accept");
                break;
        case HTTP_WS_ATTACHED:
                /* The message that asked for the episode went with the handshake. */
                s->unanswered = 1;
                break;
        case HTTP_WS_DETACHED:
                /* The env server went away (killed, crashed) with a request
                 * of the client's unanswered: the client waits for exactly
                 * one reply, and without this one it hung until its own
                 * timeout (the stock client: minutes). */
                if (s->unanswered > 0)
                        ws_error(s, "EPISODE_ENDED",
                                 "the episode's env server ended before it answered; the "
                                 "episode is over (its verdict: GET /verdict)");
                s->unanswered = 0;
                break;
        }
}

static const struct http_proxy_ops frontend_proxy_ops = {
        .on_request = fe_on_request,
        .on_request_body = fe_on_request_body,
        .on_request_inspected = fe_on_request_inspected,
        .on_response = fe_on_response,
        .on_ws_text = fe_on_ws_text,
        .on_ws_event = fe_on_ws_event,
        .on_exchange_done = fe_on_exchange_done,
        .on_handle_gone = fe_on_handle_gone,
};

/* The upstream of the connection h: its lane's env server; none for a
 * connection without a lane, or while its lane has no live one. */
static int fe_upstream_for(void *userdata, struct http_handle *h, struct http_proxy_addr *ret)
{
        struct frontend *f = userdata;
        const struct session *s = h ? http_handle_data(h) : NULL;
        const struct lane_env *e = &f->envs[lane_of(s)];

        if ((f->lanes > 1 && (!s || s->lane < 0)) || !e->live)
                return -ENETUNREACH;
        *ret = e->addr;
        return 0;
}

/* ... and its socket: made by the lane's make_socket (in the env server's
 * network namespace) for TCP. */
static int fe_make_socket(void *userdata, struct http_handle *h, int family)
{
        struct frontend *f = userdata;
        const struct session *s = h ? http_handle_data(h) : NULL;
        const struct lane_env *e = &f->envs[lane_of(s)];
        int fd;

        if (e->make_socket && family != AF_UNIX)
                return e->make_socket(e->make_socket_userdata, lane_of(s), family);
        fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        return fd < 0 ? -errno : fd;
}

/* Every connection asks the frontend where it goes (its session's lane). */
static void route_config(struct frontend *f, struct http_proxy_config *pc)
{
        pc->upstream_for = fe_upstream_for;
        pc->upstream_for_userdata = f;
        pc->make_socket = fe_make_socket;
        pc->make_socket_userdata = f;
}

/* e: a unix socket path, or 127.0.0.1:port from env->make_socket's sockets. */
static int lane_env_set(struct lane_env *e, const struct frontend_env *env)
{
        struct http_proxy_config one = {};
        int r;

        *e = (struct lane_env){};
        if (!env)
                return 0;
        if (env->make_socket) {
                struct sockaddr_in sin = {
                        .sin_family = AF_INET,
                        .sin_port = htons(env->port),
                        .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
                };
                r = http_proxy_upstream_add(&one, (const struct sockaddr *) &sin, sizeof(sin));
                e->make_socket = env->make_socket;
                e->make_socket_userdata = env->make_socket_userdata;
        } else
                r = http_proxy_upstream_unix(&one, env->socket);
        if (r < 0)
                return r; /* nothing is reachable: requests get a 502 */
        e->addr = one.upstream[0];
        e->live = true;
        return 0;
}

int frontend_set_env(struct frontend *f, unsigned lane, const struct frontend_env *env)
{
        struct http_proxy_config up = {};
        int r;

        assert(lane < f->lanes);
        r = lane_env_set(&f->envs[lane], env);
        /* Idle connections let go of their upstream socket: nothing of the
         * previous env server lingers (http_proxy_set_upstream()). */
        route_config(f, &up);
        http_proxy_set_upstream(f->proxy, &up);

        /* The lane's HTTP MCP session (one at most: it holds the lane): its
         * env server, which knew its id, is gone. */
        for (struct mcp_session *m = f->mcp; m; m = m->next)
                if (!m->gone && m->lane == lane) {
                        mcp_session_end(f, m, "its episode ended");
                        break;
                }
        /* The lane's sessions on the previous env server: it is gone (or going). */
        for (struct session *s = f->sessions, *next; s; s = next) {
                next = s->next;
                if (s->route < ROUTE_WS || s->lane < 0 || (unsigned) s->lane != lane)
                        continue;
                if (s->sticky)
                        http_handle_ws_detach(s->h);
                else
                        http_handle_ws_close(s->h, WS_CLOSE_GOING_AWAY, "episode ended");
        }
        return r;
}

int frontend_new(struct loop *l, int listen_fd, const struct frontend_config *cfg,
                 const struct frontend_ops *ops, void *userdata, struct frontend **ret)
{
        struct http_proxy_config pc = {
                .head_timeout = cfg->head_timeout,
                .idle_timeout = cfg->idle_timeout,
                .max_connections = cfg->max_connections,
                .auth_required = true,
        };
        struct frontend *f;
        int r;

        if (!cfg->creds || !cfg->creds->orchestrator) {
                safe_close(listen_fd);
                return -EINVAL;
        }
        for (char *const *p = cfg->agent_paths; p && *p; p++)
                if (frontend_route_is_orchestrators(*p)) {
                        log_error("agent path %s is the orchestrator's: the agent never "
                                  "reaches it",
                                  *p);
                        safe_close(listen_fd);
                        return -EPERM;
                }
        f = xcalloc(1, sizeof(*f));
        f->ops = ops;
        f->userdata = userdata;
        f->creds = cfg->creds;
        f->agent_paths = cfg->agent_paths;
        f->lanes = MAX(cfg->lanes, 1u);
        f->loop = l;
        f->session_idle = cfg->session_idle ? cfg->session_idle : HTTP_IDLE_TIMEOUT;
        f->envs = xcalloc(f->lanes, sizeof(*f->envs));
        r = lane_env_set(&f->envs[0], cfg->env_socket
                                              ? &(struct frontend_env){ .socket = cfg->env_socket }
                                              : NULL);
        if (r < 0) {
                safe_close(listen_fd);
                frontend_free(f);
                return r;
        }
        route_config(f, &pc);
        r = http_proxy_new(l, listen_fd, &pc, &frontend_proxy_ops, f, &f->proxy);
        if (r < 0) {
                frontend_free(f);
                return r;
        }
        *ret = f;
        return 0;
}

struct frontend *frontend_free(struct frontend *f)
{
        if (!f)
                return NULL;
        /* Closing the connections frees their sessions (on_handle_gone). */
        f->freeing = true;
        http_proxy_free(f->proxy);
        while (f->mcp)
                mcp_session_unlink_free(f, f->mcp);
        loop_source_free(f->mcp_timer);
        free(f->envs);
        return mfree(f);
}

unsigned frontend_connections(const struct frontend *f)
{
        return http_proxy_connections(f->proxy);
}

void frontend_stats(const struct frontend *f, struct http_proxy_stats *ret)
{
        http_proxy_stats(f->proxy, ret);
}
