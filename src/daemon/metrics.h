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

/*
 * The daemon's own /proc files, opened once at start: a scrape must still
 * count fds and read RSS when the daemon is at its fd limit, which is when
 * an operator looks at them. -EBADF: could not be opened (the families are
 * left out).
 */
struct metrics_self {
        int fd_dir; /* owned: /proc/self/fd */
        int statm;  /* owned: /proc/self/statm */
};

void metrics_self_open(struct metrics_self *ret);
void metrics_self_close(struct metrics_self *s);

struct metrics_input {
        const struct unit_stats *unit; /* borrowed */
        enum phase phase;
        const struct http_proxy_stats *relay; /* borrowed: the unit's port */
        unsigned connections;                 /* open on the unit's port */
        const struct cgroup_stats *subtree;   /* the daemon's whole subtree; NULL: unreadable */
        double start_time;                    /* the daemon's start, seconds since the epoch */
        const struct metrics_self *self;      /* borrowed */
};

/* The exposition text (new string, *ret_len bytes). */
char *metrics_render(const struct metrics_input *in, size_t *ret_len);
