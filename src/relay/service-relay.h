/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A plain HTTP relay from a unix listener to a unix upstream, used for the
 * service relay (the env container's svc-<name>.sock → the service's
 * svc.sock) and for the harness's MCP relay (mcp.sock → the env server).
 * Every request is forwarded with Authorization stripped; everything else,
 * WebSocket upgrades included (spliced), is relayed byte for byte.
 *
 * Ownership: owns listen_fd and its connections.
 */
#include "base/event-loop.h"

struct service_relay;

/* Takes ownership of listen_fd (also on failure). */
int service_relay_new(struct loop *l, int listen_fd, const char *upstream_path, usec_t idle_timeout,
                      struct service_relay **ret);
struct service_relay *service_relay_free(struct service_relay *s);
DEFINE_CLEANUP_FUNC(struct service_relay, service_relay_free);
