/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Who a request on the unit's port comes from (docs/DESIGN.md §8):
 *
 *   orchestrator  the unit's token: every route
 *   agent         the optional agent token: the agent-facing env paths only
 *   metrics       the optional scraper's token: GET /metrics only (a
 *                 Prometheus server never holds a token that ends episodes)
 *   none          /healthz, /readyz and /health only
 *
 * A token is carried as "Authorization: Bearer TOKEN", as the password of
 * HTTP Basic credentials ("http://openenv:TOKEN@host:port" in a client's
 * base URL: httpx, requests and websockets send it as Basic; the user name
 * is not checked), or, on a WebSocket handshake only, as "?token=TOKEN".
 * Several credentials must agree: two Authorization headers, or a header and
 * a query token naming different principals, prove nothing.
 */
#include <stdbool.h>

#include "base/error-detail.h"
#include "relay/http-head.h"

enum principal {
        PRINCIPAL_NONE,
        PRINCIPAL_AGENT,
        PRINCIPAL_ORCHESTRATOR,
        PRINCIPAL_METRICS,
};

struct credentials {
        char *orchestrator; /* owned secret */
        char *agent;        /* owned secret; NULL: no agent principal */
        char *metrics;      /* owned secret; NULL: no scraper principal */
};

/* Where each token comes from: a file (NULL: its environment variable). */
struct credential_files {
        const char *orchestrator; /* else $OPENENVD_TOKEN, else generated */
        const char *agent;        /* else $OPENENVD_AGENT_TOKEN, else none */
        const char *metrics;      /* else $OPENENVD_METRICS_TOKEN, else none */
};

/* Each token from its file if set, else its environment variable; an
 * orchestrator token of neither is 32 random bytes in hex (*ret_generated:
 * the caller prints it once). -EINVAL when two principals share a token.
 * On failure ret_err (if not NULL) says which and why, naming the option
 * and its path. files may be NULL: the environment only. */
int credentials_load(struct credentials *c, const struct credential_files *files,
                     bool *ret_generated, struct error_detail *ret_err);
void credentials_done(struct credentials *c);

/* query_token: the decoded "token" query parameter (NULL: none), counted in
 * n_query_tokens; taken into account on upgrade requests only. */
enum principal credentials_check(const struct credentials *c, const struct http_head *h,
                                 const char *query_token, unsigned n_query_tokens);
