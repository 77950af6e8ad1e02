/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The relays of one episode, each a listening unix socket the daemon owns in
 * a container's socket directory, bound before that container starts:
 *
 *   env/svc-<svc>.sock   → <private>/<svc>.sock   (the env's way to a hidden service)
 *   <harness>/mcp.sock   → <private>/env.sock     (the harness's MCP surface; its
 *                                                  tool calls are the agent's actions)
 *   <harness>/model.sock → model upstream         (real key added here, never inside)
 *
 * Upstreams are the daemon's own activation sockets in <private> (0700,
 * root), never a path in a directory a container can write.
 *
 * Authorization headers never cross a relay (relay/service-relay.h,
 * relay/model-proxy.h). Ownership: the set owns its relays; unit_relays_free()
 * closes them all.
 */
#include <jansson.h>

#include "base/event-loop.h"
#include "unit/unit-plan.h"

struct model_upstream;

/* The model proxy's budget per episode is the manifest's openenvd.model. */
struct unit_model {
        const struct model_upstream *upstream; /* resolved at start; NULL: no model proxy */
        const char *provider;                  /* "anthropic" | "openai" */
        const char *key;                       /* the real key (never written into a zone) */
};

struct unit_relays;
struct service_relay_hooks;

/* hooks: the harnesses' MCP relays report the harnesses' tool calls. */
int unit_relays_new(struct loop *l, const struct unit_plan_context *ctx, const char *private_dir,
                    const struct unit_model *model, const struct service_relay_hooks *hooks,
                    struct unit_relays **ret);
/* Closes every relay an agent container can use (at sealing). The model
 * proxies' final stats are kept for unit_relays_model_json(). */
void unit_relays_stop_agent(struct unit_relays *r);
struct unit_relays *unit_relays_free(struct unit_relays *r);
/* What each harness's model proxy did this episode, for the verdict:
 * {"<harness>": model_proxy_stats_to_json(), ...}; null without a model
 * proxy (also for r == NULL). Live while the agent runs, final after
 * unit_relays_stop_agent(). */
json_t *unit_relays_model_json(const struct unit_relays *r);
