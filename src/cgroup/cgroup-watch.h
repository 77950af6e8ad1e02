/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Waiting for cgroups without blocking an event loop: until every listed
 * cgroup is empty (after a kill) or frozen (after a freeze), or a deadline.
 *
 * The kernel updates cgroup.events within ~0.1-0.4 ms but rate-limits its
 * notifications to one per 10 ms per file, so the watch re-reads on a timer
 * (100 µs doubling to 2 ms) and also wakes on EPOLLPRI of each events file.
 * A cgroup that does not exist counts as empty.
 *
 * The callback runs once, from the loop (never from cgroup_watch_start()),
 * with 0 or -ETIMEDOUT; the watch is inert afterwards and the caller frees
 * it (also from inside the callback).
 */
#include "base/event-loop.h"
#include "cgroup/cgroup.h"

enum cgroup_watch_goal {
        CGROUP_WATCH_EMPTY,
        CGROUP_WATCH_FROZEN,
};

#define CGROUP_WATCH_MAX 8

typedef void (*cgroup_watch_fn)(void *userdata, int result);

struct cgroup_watch;

int cgroup_watch_start(struct loop *l, struct cgroup_tree *t, const char *const *rels, size_t n,
                       enum cgroup_watch_goal goal, usec_t timeout, cgroup_watch_fn cb,
                       void *userdata, struct cgroup_watch **ret);
struct cgroup_watch *cgroup_watch_free(struct cgroup_watch *w);
DEFINE_CLEANUP_FUNC(struct cgroup_watch, cgroup_watch_free);
