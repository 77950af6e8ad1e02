/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Is the env server healthy? `GET /health` over its activation socket (a
 * path only the daemon can reach), without blocking the event loop: healthy
 * when the status is below 500. A failed attempt (refused, closed, 5xx,
 * garbage, no answer within a second) is retried after a pause that grows
 * from 100 µs to 10 ms, until the deadline.
 *
 * The callback runs once, from the loop, with 0 (healthy) or -ETIMEDOUT;
 * the probe is inert afterwards and the caller frees it (also from inside
 * the callback).
 */
#include "base/event-loop.h"
#include "base/macro.h"

typedef void (*health_probe_fn)(void *userdata, int result);

struct health_probe;

int health_probe_start(struct loop *l, const char *socket_path, usec_t timeout, health_probe_fn cb,
                       void *userdata, struct health_probe **ret);
struct health_probe *health_probe_free(struct health_probe *p);
DEFINE_CLEANUP_FUNC(struct health_probe, health_probe_free);
