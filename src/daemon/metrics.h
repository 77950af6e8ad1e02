/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * GET /metrics: the unit, its port and the daemon's own process in
 * Prometheus' text exposition format (docs/DAEMON.md, "Metrics"). The
 * frontend only routes the request; what is measured and how it is named
 * is decided here, from what the unit (unit_stats()), the frontend
 * (frontend_stats()) and the cgroup subtree report.
 */
#include <stddef.h>

#include "cgroup/cgroup.h"
#include "phase/phase.h"
#include "relay/http-proxy.h"
#include "unit/unit-stats.h"

struct metrics_input {
        const struct unit_stats *unit; /* borrowed */
        enum phase phase;
        const struct http_proxy_stats *relay; /* borrowed: the unit's port */
        unsigned connections;                 /* open on the unit's port */
        const struct cgroup_stats *subtree;   /* the daemon's whole subtree; NULL: unreadable */
        double start_time;                    /* the daemon's start, seconds since the epoch */
};

/* The exposition text (new string, *ret_len bytes). */
char *metrics_render(const struct metrics_input *in, size_t *ret_len);
