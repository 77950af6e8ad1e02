/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The model proxy (docs/DESIGN.md §8): one per harness per episode, on a
 * unix socket in the harness's socket dir. The harness speaks plain HTTP/1.1
 * with a placeholder key; the proxy decides per request, in this order:
 *
 *   401 not_permitted     the credentials (every x-api-key and Authorization
 *                         header, at least one) are not exactly the placeholder
 *   403 not_permitted     not one of the provider's model endpoints: POST and a
 *                         request target equal byte for byte to an allowed one
 *                         (docs/RELAY.md has the lists and why); no upgrades
 *   429 budget_exhausted  the episode's budget (requests, bytes, tokens) is used
 *                         up, or the request's declared body would exceed it
 *
 * and nothing of a refused request reaches the provider. A forwarded request
 * loses Authorization, x-api-key, Host, Accept-Encoding and the OpenAI
 * organization/project selectors and gains the real credential (x-api-key
 * for anthropic, Authorization: Bearer for openai), Host of the upstream and
 * Accept-Encoding: identity; the response streams back unchanged (SSE
 * included) plus x-openenvd-request-id, while its usage is counted
 * (model-usage.h). Upstream: model-upstream.h (plain or TLS).
 *
 * Budgets are checked when a request arrives; requests already in flight
 * finish, so bytes and tokens can overshoot by what at most
 * MODEL_PROXY_MAX_CONNECTIONS concurrent requests use.
 *
 * The real key is read once from key_file, which is then unlinked; it lives
 * only in this object's memory (wiped on free) and in the upstream requests:
 * never in an answer, the stats, or a log line.
 */
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/event-loop.h"

struct model_upstream;

/* 0 in a field: unlimited. */
struct model_budget {
        uint64_t requests; /* requests forwarded */
        uint64_t bytes;    /* request + response bytes relayed to and from the provider */
        uint64_t tokens;   /* input + output tokens the provider reported */
};

enum model_budget_dim {
        MODEL_BUDGET_REQUESTS,
        MODEL_BUDGET_BYTES,
        MODEL_BUDGET_TOKENS,
        MODEL_BUDGET_DIM_MAX,
};
#define MODEL_BUDGET_BIT(d) (1u << (d))
const char *model_budget_dim_to_string(enum model_budget_dim d);

struct model_proxy_config {
        const struct model_upstream *upstream; /* borrowed, resolved; outlives the proxy */
        const char *provider;                  /* "anthropic" (NULL) or "openai" */
        const char *placeholder;               /* NULL: "openenvd-placeholder" */
        const char *key_file;                  /* read once, then unlinked */
        usec_t idle_timeout;
        struct model_budget budget;
};

struct model_proxy_stats {
        const char *provider;             /* static */
        uint64_t forwarded;               /* requests sent to the provider */
        uint64_t refused_credentials;     /* 401 */
        uint64_t refused_allowlist;       /* 403 */
        uint64_t refused_budget;          /* 429 */
        uint64_t bytes_up, bytes_down;    /* to and from the provider */
        uint64_t tokens_in, tokens_out;   /* as reported (model-usage.h) */
        uint64_t responses_without_usage; /* 2xx responses that reported none */
        uint64_t upstream_failures;       /* 502 upstream_unavailable */
        uint64_t tls_failures;            /* 502 upstream_tls */
        const char *last_tls_failure;     /* static ("certificate has expired") or NULL */
        struct model_budget budget;       /* the limits */
        unsigned budget_exhausted;        /* MODEL_BUDGET_BIT()s of the dimensions used up */
};

struct model_proxy;

/* Takes ownership of listen_fd (also on failure). -EINVAL: unknown provider,
 * empty key or placeholder equal to the key; -EDESTADDRREQ: the upstream has
 * no address (not resolved). */
int model_proxy_new(struct loop *l, int listen_fd, const struct model_proxy_config *cfg,
                    struct model_proxy **ret);
struct model_proxy *model_proxy_free(struct model_proxy *m);
DEFINE_CLEANUP_FUNC(struct model_proxy, model_proxy_free);

void model_proxy_stats(const struct model_proxy *m, struct model_proxy_stats *ret);
/* The stats as the verdict records them (docs/RELAY.md, "Model proxy"):
 * field names as in struct model_proxy_stats, unlimited budgets as null,
 * budget_exhausted as a list of dimension names. */
json_t *model_proxy_stats_to_json(const struct model_proxy_stats *s);

/* "anthropic", "openai": the providers whose endpoints the proxy knows. */
bool model_provider_known(const char *name);
