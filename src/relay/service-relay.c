/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "relay/service-relay.h"

#include <http_parser.h>

#include "base/util.h"
#include "relay/http-proxy.h"
#include "relay/openenv-messages.h"
#include "relay/request-target.h"

struct service_relay {
        struct http_proxy *proxy; /* owned */
        struct service_relay_hooks hooks;
};

enum { TAG_OTHER, TAG_MCP };

static const char *const strip_service[] = { "authorization", NULL };

static int sr_on_request(void *userdata, struct http_exchange *x)
{
        struct service_relay *s = userdata;
        struct request_target t;

        x->strip = strip_service;
        if (!s->hooks.on_action)
                return HTTP_ACTION_FORWARD;
        /* What is counted is what is forwarded: one normalisation, as on
         * the unit's port. */
        if (request_target_parse(x->req->target, x->req->target_len, &t) < 0) {
                http_exchange_error(x, 400, "bad_request");
                return HTTP_ACTION_RESPOND;
        }
        strbuf_adds(&x->target, t.target);
        if (streq(t.route, "/mcp")) {
                x->tag = TAG_MCP;
                if (x->req->upgrade)
                        x->watch_ws = true;
                else if (x->req->method == HTTP_POST)
                        x->inspect_request = x->inspect_response = true;
        }
        request_target_done(&t);
        return HTTP_ACTION_FORWARD;
}

static void sr_count(struct service_relay *s, const char *data, size_t len)
{
        unsigned n = openenv_mcp_actions(data, len);
        if (n > 0)
                s->hooks.on_action(s->hooks.userdata,
                                   &(struct openenv_action){ n, "harness", data, len });
}

static void sr_done(struct service_relay *s, const char *data, size_t len)
{
        if (s->hooks.on_done && openenv_mcp_done(data, len))
                s->hooks.on_done(s->hooks.userdata);
}

static void sr_on_request_inspected(void *userdata, struct http_exchange *x, const char *body,
                                    size_t len, bool truncated)
{
        if (x->tag == TAG_MCP && !truncated)
                sr_count(userdata, body, len);
}

static void sr_on_response(void *userdata, struct http_exchange *x, unsigned status,
                           const char *body, size_t len, bool truncated)
{
        if (x->tag == TAG_MCP && status == 200 && !truncated)
                sr_done(userdata, body, len);
}

static void sr_on_ws_text(void *userdata, struct http_exchange *x, bool from_client,
                          const char *data, size_t len)
{
        if (x->tag != TAG_MCP)
                return;
        if (from_client)
                sr_count(userdata, data, len);
        else
                sr_done(userdata, data, len);
}

static const struct http_proxy_ops service_relay_ops = {
        .on_request = sr_on_request,
        .on_request_inspected = sr_on_request_inspected,
        .on_response = sr_on_response,
        .on_ws_text = sr_on_ws_text,
};

int service_relay_new(struct loop *l, int listen_fd, const char *upstream_path, usec_t idle_timeout,
                      const struct service_relay_hooks *hooks, struct service_relay **ret)
{
        struct http_proxy_config pc = { .idle_timeout = idle_timeout };
        struct service_relay *s;
        int r;

        r = http_proxy_upstream_unix(&pc, upstream_path);
        if (r < 0) {
                safe_close(listen_fd);
                return r;
        }
        s = xcalloc(1, sizeof(*s));
        if (hooks)
                s->hooks = *hooks;
        r = http_proxy_new(l, listen_fd, &pc, &service_relay_ops, s, &s->proxy);
        if (r < 0) {
                free(s);
                return r;
        }
        *ret = s;
        return 0;
}

struct service_relay *service_relay_free(struct service_relay *s)
{
        if (!s)
                return NULL;
        http_proxy_free(s->proxy);
        return mfree(s);
}
