/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "relay/service-relay.h"

#include "base/util.h"
#include "relay/http-proxy.h"

struct service_relay {
        struct http_proxy *proxy; /* owned */
};

static const char *const strip_service[] = { "authorization", NULL };

static int sr_on_request(void *userdata, struct http_exchange *x)
{
        (void) userdata;
        x->strip = strip_service;
        return HTTP_ACTION_FORWARD;
}

static const struct http_proxy_ops service_relay_ops = {
        .on_request = sr_on_request,
};

int service_relay_new(struct loop *l, int listen_fd, const char *upstream_path, usec_t idle_timeout,
                      struct service_relay **ret)
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
