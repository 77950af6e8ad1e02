/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "relay/frontend.h"

#include <errno.h>
#include <fcntl.h>
#include <http_parser.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "base/fd-util.h"
#include "base/util.h"
#include "relay/http-chunked.h"
#include "relay/http-proxy.h"

#define TOKEN_MAX_BYTES 4096

enum route {
        ROUTE_ENV,       /* agent traffic, no token */
        ROUTE_ENV_TOKEN, /* orchestrator-only env path */
        ROUTE_STEP,      /* POST /step: token, hooks */
        ROUTE_WS,        /* /ws: token, watched frames */
};

struct frontend {
        struct http_proxy *proxy;       /* owned */
        const struct frontend_ops *ops; /* borrowed */
        void *userdata;                 /* borrowed */
        char *token;                    /* owned */
};

static const char *const strip_env[] = { "authorization", NULL };
/* No extension negotiation on /ws: frames stay plain (RSV bits 0) so the
 * validator can read them. */
static const char *const strip_ws[] = { "authorization", "sec-websocket-extensions", NULL };

static const struct control_route {
        const char *path;
        unsigned method;
} control_routes[] = {
        { "/info", HTTP_GET },    { "/reset_unit", HTTP_POST },  { "/inspect", HTTP_POST },
        { "/resume", HTTP_POST }, { "/end_episode", HTTP_POST }, { "/verdict", HTTP_GET },
        { "/logs", HTTP_GET },
};

static const char *const token_paths[] = { "/reset", "/step", "/state", "/ws" };

/* Percent-decodes the path into out (NUL-terminated) and drops one trailing
 * slash. -EBADMSG for encodings an env server might read differently. */
static int path_normalize(const char *p, size_t n, char *out, size_t out_size)
{
        size_t k = 0;

        if (n == 0 || p[0] != '/' || n >= out_size)
                return -EBADMSG;
        for (size_t i = 0; i < n; i++) {
                char ch = p[i];
                if (ch == '%') {
                        int hi = i + 2 < n ? http_hexval(p[i + 1]) : -1;
                        int lo = i + 2 < n ? http_hexval(p[i + 2]) : -1;
                        if (hi < 0 || lo < 0)
                                return -EBADMSG;
                        ch = (char) (hi * 16 + lo);
                        if (ch == 0)
                                return -EBADMSG;
                        i += 2;
                }
                out[k++] = ch;
        }
        out[k] = 0;
        if (strstr(out, "//") || strstr(out, "/./") || strstr(out, "/../") || endswith(out, "/.") ||
            endswith(out, "/.."))
                return -EBADMSG;
        if (k > 1 && out[k - 1] == '/')
                out[--k] = 0;
        return 0;
}

static bool token_ok(const struct frontend *f, const struct http_head *h)
{
        size_t from = 0, tl = strlen(f->token);
        const struct http_header *hd;
        bool ok = false;
        unsigned n = 0;

        while ((hd = http_head_next(h, "authorization", &from))) {
                n++;
                if (hd->value_len > 7 && strncasecmp(hd->value, "Bearer ", 7) == 0)
                        ok = memeq_consttime(hd->value + 7, hd->value_len - 7, f->token, tl);
        }
        /* Several Authorization headers are ambiguous: refuse. */
        return ok && n == 1;
}

static void reply_from(struct http_exchange *x, struct frontend_reply *reply)
{
        if (reply->status == 0 || reply->status >= 400)
                http_exchange_error(x, reply->status ? reply->status : 500,
                                    reply->error_code ? reply->error_code : "infrastructure_error");
        else if (reply->text)
                http_exchange_respond_body(x, reply->status, "text/plain; charset=utf-8",
                                           reply->text, reply->text_len);
        else
                http_exchange_respond(x, reply->status, reply->json ? reply->json : "{}");
        free(reply->json);
        free(reply->text);
}

struct http_deferred *frontend_later(const struct frontend_request *req)
{
        return http_exchange_defer(req->x);
}

void frontend_answer(struct http_deferred *pending, struct frontend_reply *reply)
{
        if (reply->status == 0 || reply->status >= 400)
                http_deferred_error(pending, reply->status ? reply->status : 500,
                                    reply->error_code ? reply->error_code : "infrastructure_error");
        else if (reply->text)
                http_deferred_respond_body(pending, reply->status, "text/plain; charset=utf-8",
                                           reply->text, reply->text_len);
        else
                http_deferred_respond(pending, reply->status, reply->json ? reply->json : "{}");
        free(reply->json);
        free(reply->text);
}

static int fe_on_request(void *userdata, struct http_exchange *x)
{
        struct frontend *f = userdata;
        const struct http_head *h = x->req;
        char path[HTTP_MAX_HEAD_BYTES];
        bool is_token_path = false;

        if (path_normalize(x->path, x->path_len, path, sizeof(path)) < 0) {
                http_exchange_error(x, 400, "bad_request");
                return HTTP_ACTION_RESPOND;
        }
        if (streq(path, "/healthz")) {
                if (h->method != HTTP_GET) {
                        strbuf_adds(&x->headers, "Allow: GET\r\n");
                        http_exchange_error(x, 405, "method_not_allowed");
                } else
                        http_exchange_respond(x, 200, "{\"status\":\"ok\"}");
                return HTTP_ACTION_RESPOND;
        }
        for (size_t i = 0; i < ELEMENTSOF(control_routes); i++) {
                const struct control_route *cr = &control_routes[i];
                if (!streq(path, cr->path))
                        continue;
                /* Authenticate before anything else: an anonymous caller
                 * learns nothing, and no control path is ever relayed. */
                if (!token_ok(f, h))
                        http_exchange_error(x, 401, "not_permitted");
                else if (h->method != cr->method) {
                        strbuf_addf(&x->headers, "Allow: %s\r\n",
                                    http_method_str((enum http_method) cr->method));
                        http_exchange_error(x, 405, "method_not_allowed");
                } else {
                        x->tag = (int) i;
                        return HTTP_ACTION_READ_BODY;
                }
                return HTTP_ACTION_RESPOND;
        }
        for (size_t i = 0; i < ELEMENTSOF(token_paths); i++)
                if (streq(path, token_paths[i]))
                        is_token_path = true;
        if (is_token_path && !token_ok(f, h)) {
                http_exchange_error(x, 401, "not_permitted");
                return HTTP_ACTION_RESPOND;
        }
        if (h->method == HTTP_CONNECT) {
                http_exchange_error(x, 405, "method_not_allowed");
                return HTTP_ACTION_RESPOND;
        }
        if (!f->ops->env_traffic_allowed(f->userdata)) {
                http_exchange_error(x, 503, "episode_unavailable");
                return HTTP_ACTION_RESPOND;
        }
        x->strip = strip_env;
        x->tag = is_token_path ? ROUTE_ENV_TOKEN : ROUTE_ENV;
        if (streq(path, "/step") && h->method == HTTP_POST) {
                x->tag = ROUTE_STEP;
                x->inspect_response = true;
                if (f->ops->on_step)
                        f->ops->on_step(f->userdata);
        } else if (streq(path, "/ws") && h->upgrade) {
                x->tag = ROUTE_WS;
                x->strip = strip_ws;
                x->watch_ws = true;
        }
        return HTTP_ACTION_FORWARD;
}

static void fe_on_request_body(void *userdata, struct http_exchange *x, const char *body,
                               size_t len)
{
        struct frontend *f = userdata;
        const struct control_route *cr = &control_routes[x->tag];
        struct frontend_reply reply = {};
        struct frontend_request req = {
                .route = cr->path,
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

static void fe_on_deferred_gone(void *userdata, struct http_deferred *d)
{
        struct frontend *f = userdata;
        if (f->ops->pending_gone)
                f->ops->pending_gone(f->userdata, d);
}

/* Whether a JSON text may hold a member named key: the name appears quoted
 * as is, or written with \u escapes (the only escapes that can spell letters).
 * Cheap enough to run before jansson on every step. */
static bool json_may_have_key(const char *data, size_t len, const char *quoted_key)
{
        return memmem(data, len, quoted_key, strlen(quoted_key)) || memmem(data, len, "\\u", 2);
}

static bool json_done(const char *data, size_t len, bool need_observation)
{
        if (!json_may_have_key(data, len, "\"done\""))
                return false;
        json_t *root = json_loadb(data, len, 0, NULL);
        bool done = false;

        if (!root)
                return false;
        if (json_is_object(root)) {
                json_t *type = json_object_get(root, "type");
                json_t *d = json_object_get(root, "data");
                bool ok = !need_observation ||
                          (json_is_string(type) && streq(json_string_value(type), "observation"));
                if (ok)
                        done = json_is_true(json_object_get(root, "done")) ||
                               (json_is_object(d) && json_is_true(json_object_get(d, "done")));
        }
        json_decref(root);
        return done;
}

static bool json_is_step(const char *data, size_t len)
{
        if (!json_may_have_key(data, len, "\"step\""))
                return false;
        json_t *root = json_loadb(data, len, 0, NULL);
        bool step = false;

        if (root && json_is_object(root)) {
                json_t *type = json_object_get(root, "type");
                step = json_is_string(type) && streq(json_string_value(type), "step");
        }
        json_decref(root);
        return step;
}

static void fe_on_response(void *userdata, struct http_exchange *x, unsigned status,
                           const char *body, size_t len, bool truncated)
{
        struct frontend *f = userdata;

        if (x->tag == ROUTE_STEP && status == 200 && !truncated && json_done(body, len, false) &&
            f->ops->on_done)
                f->ops->on_done(f->userdata);
}

static void fe_on_ws_text(void *userdata, struct http_exchange *x, bool from_client,
                          const char *data, size_t len)
{
        struct frontend *f = userdata;

        if (x->tag != ROUTE_WS)
                return;
        if (from_client) {
                if (f->ops->on_step && json_is_step(data, len))
                        f->ops->on_step(f->userdata);
        } else if (f->ops->on_done && json_done(data, len, true))
                f->ops->on_done(f->userdata);
}

static const struct http_proxy_ops frontend_proxy_ops = {
        .on_request = fe_on_request,
        .on_request_body = fe_on_request_body,
        .on_deferred_gone = fe_on_deferred_gone,
        .on_response = fe_on_response,
        .on_ws_text = fe_on_ws_text,
};

int frontend_new(struct loop *l, int listen_fd, const struct frontend_config *cfg,
                 const struct frontend_ops *ops, void *userdata, struct frontend **ret)
{
        struct http_proxy_config pc = {
                .head_timeout = cfg->head_timeout,
                .idle_timeout = cfg->idle_timeout,
                .max_connections = cfg->max_connections,
        };
        struct frontend *f;
        int r;

        if (!cfg->token || !*cfg->token) {
                safe_close(listen_fd);
                return -EINVAL;
        }
        r = cfg->env_socket ? http_proxy_upstream_unix(&pc, cfg->env_socket) : 0;
        if (r < 0) {
                safe_close(listen_fd);
                return r;
        }
        f = xcalloc(1, sizeof(*f));
        f->ops = ops;
        f->userdata = userdata;
        f->token = xstrdup(cfg->token);
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
        http_proxy_free(f->proxy);
        if (f->token) {
                explicit_bzero(f->token, strlen(f->token));
                free(f->token);
        }
        return mfree(f);
}

int frontend_set_env_socket(struct frontend *f, const char *path)
{
        return http_proxy_set_upstream_unix(f->proxy, path);
}

unsigned frontend_connections(const struct frontend *f)
{
        return http_proxy_connections(f->proxy);
}

int frontend_token_load(const char *path, char **ret_token, bool *ret_generated)
{
        const char *env;
        char *t = NULL;
        size_t len;
        int r;

        if (path) {
                r = read_full_file_at(AT_FDCWD, path, TOKEN_MAX_BYTES, &t, &len);
                if (r < 0)
                        return r;
                while (len > 0 && (t[len - 1] == '\n' || t[len - 1] == '\r'))
                        t[--len] = 0;
                if (len == 0 || strlen(t) != len) {
                        free(t);
                        return -EINVAL;
                }
                *ret_token = t;
                *ret_generated = false;
                return 0;
        }
        env = getenv("OPENENVD_TOKEN");
        if (env && *env) {
                *ret_token = xstrdup(env);
                *ret_generated = false;
                return 0;
        }
        r = random_hex(32, &t);
        if (r < 0)
                return r;
        *ret_token = t;
        *ret_generated = true;
        return 0;
}
