/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A plain HTTP relay from a unix listener to a unix upstream, used for the
 * service relay (the env container's svc-<name>.sock → the service's
 * svc.sock) and for the harness's MCP relay (mcp.sock → the env server).
 * Every request is forwarded with Authorization stripped; everything else,
 * WebSocket upgrades included (spliced), is relayed byte for byte.
 *
 * With hooks (the harness's MCP relay), the harness's tool calls are the
 * agent's actions: targets are normalised as on the unit's port
 * (request-target.h: malformed ones are 400, the normalised one is
 * forwarded), and POST /mcp bodies and WebSocket /mcp messages are read for
 * MCP tools/call requests (on_action) and results that report done
 * (on_done) (openenv-messages.h).
 *
 * Ownership: owns listen_fd and its connections; hooks are copied.
 */
#include "base/event-loop.h"
#include "relay/openenv-messages.h"

struct service_relay;

struct service_relay_hooks {
        void (*on_action)(void *userdata, const struct openenv_action *a); /* via "harness" */
        void (*on_done)(void *userdata);
        void *userdata;
};

/* Takes ownership of listen_fd (also on failure); hooks may be NULL. */
int service_relay_new(struct loop *l, int listen_fd, const char *upstream_path, usec_t idle_timeout,
                      const struct service_relay_hooks *hooks, struct service_relay **ret);
struct service_relay *service_relay_free(struct service_relay *s);
DEFINE_CLEANUP_FUNC(struct service_relay, service_relay_free);
