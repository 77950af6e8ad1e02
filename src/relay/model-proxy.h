/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The model proxy (DESIGN.md section 7): the harness holds only a
 * placeholder key. A request whose credentials (every x-api-key and
 * Authorization header) are not exactly the placeholder gets 401 and nothing
 * is forwarded. Otherwise those headers (and Host, Accept-Encoding) are
 * replaced by the real credential for the provider (x-api-key for anthropic,
 * Authorization: Bearer for openai), Host of the upstream and
 * Accept-Encoding: identity; the response streams back unchanged plus
 * x-openenvd-request-id. Bodies are relayed through bounded buffers only.
 *
 * The real key is read once from key_file, which is then unlinked; it lives
 * only in this object's memory (wiped on free) and in the upstream requests.
 * The upstream is plain TCP host:port: TLS to a real provider is outside this
 * module.
 */
#include "base/event-loop.h"

struct model_proxy_config {
        const char *upstream;    /* IPv4 "a.b.c.d:port" */
        const char *provider;    /* "anthropic" or "openai" */
        const char *placeholder; /* NULL: "openenvd-placeholder" */
        const char *key_file;    /* read once, then unlinked */
        usec_t idle_timeout;
};

struct model_proxy;

/* Takes ownership of listen_fd (also on failure). -EINVAL: unknown provider,
 * empty key or placeholder equal to the key. */
int model_proxy_new(struct loop *l, int listen_fd, const struct model_proxy_config *cfg,
                    struct model_proxy **ret);
struct model_proxy *model_proxy_free(struct model_proxy *m);
DEFINE_CLEANUP_FUNC(struct model_proxy, model_proxy_free);
/* Requests forwarded so far. */
unsigned long model_proxy_forwarded(const struct model_proxy *m);
