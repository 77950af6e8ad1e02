/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The routes openenvd answers itself on the unit's port, one table: its
 * path, its method, the principals that may use it (credentials.h) and
 * whether it takes query parameters. The frontend classifies by it (401,
 * 403, 405 and whom it asks) and the daemon dispatches by its index
 * (daemon.c, a handler per route); docs/DAEMON.md's "Control API" lists the
 * same routes, checked by tests/relay/test-control-routes.c. Every other
 * path is the env's (docs/RELAY.md).
 */
#include <stdbool.h>

#include "relay/credentials.h"

enum control_route {
        /* Answered by the frontend, no token needed. */
        CR_HEALTHZ,
        CR_READYZ,
        CR_HEALTH,
        /* Answered by the unit (frontend_ops.control). */
        CR_INFO,
        CR_EPISODES,
        CR_VERDICT,
        CR_LOGS,
        CR_METRICS,
        CR_RESET_UNIT,
        CR_INSPECT,
        CR_RESUME,
        CR_END_EPISODE,
        _CR_MAX,
};

#define CR_PRINCIPAL(p) (1u << (p))

struct control_route_def {
        const char *path;
        unsigned method;     /* enum http_method; GET ones also answer HEAD */
        unsigned principals; /* CR_PRINCIPAL() of each that may use it */
        bool query;          /* takes parameters (the others refuse any) */
};

extern const struct control_route_def control_route_table[_CR_MAX];

/* The route a normalised path names, or -1: the env's. */
int control_route_lookup(const char *path);
/* Whether no token is needed. */
bool control_route_public(enum control_route r);
