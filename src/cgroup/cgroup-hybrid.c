/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The v1 half of the hybrid backend: limits in the memory, pids and cpu
 * hierarchies, stats from them, and the v1 freezer as the fallback when the
 * cgroup2 tree has no cgroup.freeze. Kill, freeze and "populated" otherwise
 * come from the controller-less cgroup2 tree (cgroup-tree.c).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/macro.h"
#include "base/util.h"
#include "cgroup/cgroup-internal.h"

static int v1_leaf(struct cgroup_tree *t, int which, const char *rel)
{
        if (t->v1[which].root_fd < 0)
                return -EOPNOTSUPP;
        return cgroup_open_dir(t->v1[which].root_fd, rel);
}

static int v1_memory_limit(int fd, uint64_t bytes)
{
        char buf[32];
        bool memsw = faccessat(fd, "memory.memsw.limit_in_bytes", F_OK, 0) == 0;
        int r;

        if (bytes)
                (void) snprintf(buf, sizeof(buf), "%llu", (unsigned long long) bytes);
        else
                (void) snprintf(buf, sizeof(buf), "-1");

        /* The kernel keeps limit_in_bytes <= memsw.limit_in_bytes at every
         * step: lowering writes limit first, raising writes memsw first.
         * Try the lowering order; on EINVAL the raising order works. */
        r = cgroup_write_at(fd, "memory.limit_in_bytes", buf);
        if (r == -EINVAL && memsw) {
                r = cgroup_write_at(fd, "memory.memsw.limit_in_bytes", buf);
                if (r < 0)
                        return r;
                return cgroup_write_at(fd, "memory.limit_in_bytes", buf);
        }
        if (r < 0)
                return r;
        /* Swap off: memory+swap capped at the memory limit. Without swap
         * accounting (no memsw file) there is nothing more to cap. */
        if (memsw) {
                r = cgroup_write_at(fd, "memory.memsw.limit_in_bytes", buf);
                if (r < 0)
                        return r;
        }
        if (bytes) {
                /* Reclaim without swapping, and keep the OOM killer enabled so
                 * the limit kills instead of hanging the group (oom_kill_disable=0). */
                r = cgroup_write_at(fd, "memory.swappiness", "0");
                if (r < 0 && r != -ENOENT)
                        return r;
                r = cgroup_write_at(fd, "memory.oom_control", "0");
                if (r < 0 && r != -ENOENT)
                        return r;
        }
        return 0;
}

int cgroup_v1_set_limits(struct cgroup_tree *t, const char *rel, const struct cgroup_limits *l)
{
        char buf[32];
        int r;

        if ((l->memory_bytes && t->v1[CG_V1_MEMORY].root_fd < 0) ||
            (l->pids && t->v1[CG_V1_PIDS].root_fd < 0) ||
            (l->cpu != 0 && t->v1[CG_V1_CPU].root_fd < 0))
                return -EOPNOTSUPP;

        if (t->v1[CG_V1_MEMORY].root_fd >= 0) {
                cleanup_close int fd = v1_leaf(t, CG_V1_MEMORY, rel);
                if (fd < 0)
                        return fd;
                r = v1_memory_limit(fd, l->memory_bytes);
                if (r < 0)
                        return r;
        }
        if (t->v1[CG_V1_PIDS].root_fd >= 0) {
                cleanup_close int fd = v1_leaf(t, CG_V1_PIDS, rel);
                if (fd < 0)
                        return fd;
                if (l->pids)
                        (void) snprintf(buf, sizeof(buf), "%llu", (unsigned long long) l->pids);
                else
                        (void) snprintf(buf, sizeof(buf), "max");
                r = cgroup_write_at(fd, "pids.max", buf);
                if (r < 0)
                        return r;
        }
        if (t->v1[CG_V1_CPU].root_fd >= 0) {
                cleanup_close int fd = v1_leaf(t, CG_V1_CPU, rel);
                uint64_t quota = 0;

                if (fd < 0)
                        return fd;
                if (l->cpu != 0) {
                        r = cgroup_cpu_quota(l->cpu, &quota);
                        if (r < 0)
                                return r;
                }
                (void) snprintf(buf, sizeof(buf), "%llu",
                                (unsigned long long) CGROUP_CPU_PERIOD_USEC);
                r = cgroup_write_at(fd, "cpu.cfs_period_us", buf);
                if (r < 0)
                        return r;
                if (quota)
                        (void) snprintf(buf, sizeof(buf), "%llu", (unsigned long long) quota);
                else
                        (void) snprintf(buf, sizeof(buf), "-1");
                r = cgroup_write_at(fd, "cpu.cfs_quota_us", buf);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Whether a v1 memory cgroup's peak reached its own limit (memory, or
 * memory+swap). Linux 6.13 stopped counting failcnt on the memsw counter,
 * which is charged first and so fails first: with swap accounting on, both
 * failcnts stay 0 however often the limit is hit. The watermark is still
 * kept: at the limit's OOM kill it is the limit; an OOM from above (the
 * host, a parent's limit) leaves it below. */
static bool v1_peak_reached_limit(int fd)
{
        static const char *const files[][2] = {
                { "memory.max_usage_in_bytes", "memory.limit_in_bytes" },
                { "memory.memsw.max_usage_in_bytes", "memory.memsw.limit_in_bytes" },
        };

        for (size_t i = 0; i < ELEMENTSOF(files); i++) {
                uint64_t peak, limit;
                if (cgroup_read_u64_at(fd, files[i][0], &peak) < 0 ||
                    cgroup_read_u64_at(fd, files[i][1], &limit) < 0)
                        continue;
                /* Charges come in batches of pages: within a 16th of the
                 * limit, at most 1 MiB, is at it. */
                if (peak + MIN(limit / 16, (uint64_t) 1 << 20) >= limit)
                        return true;
        }
        return false;
}

int cgroup_v1_stats(struct cgroup_tree *t, const char *rel, struct cgroup_stats *ret)
{
        struct cgroup_stats s = { 0 };
        int r;

        if (t->v1[CG_V1_MEMORY].root_fd >= 0) {
                cleanup_close int fd = v1_leaf(t, CG_V1_MEMORY, rel);
                if (fd < 0)
                        return fd;
                r = cgroup_read_u64_at(fd, "memory.usage_in_bytes", &s.memory_current);
                if (r < 0)
                        return r;
                r = cgroup_read_u64_at(fd, "memory.failcnt", &s.memory_max_events);
                if (r < 0)
                        return r;
                /* With swap off memsw.limit == limit, and the kernel charges
                 * memsw first: the hits of the limit are counted there. */
                uint64_t memsw = 0;
                r = cgroup_read_u64_at(fd, "memory.memsw.failcnt", &memsw);
                if (r < 0 && r != -ENOENT)
                        return r;
                s.memory_max_events += memsw;
                if (s.memory_max_events == 0 && v1_peak_reached_limit(fd))
                        s.memory_max_events = 1;
                /* "oom_kill N" appeared in memory.oom_control in Linux 4.13. */
                r = cgroup_read_keyed_at(fd, "memory.oom_control", "oom_kill", &s.oom_kills);
                if (r < 0 && r != -ENOENT && r != -ENODATA)
                        return r;
        }
        if (t->v1[CG_V1_PIDS].root_fd >= 0) {
                cleanup_close int fd = v1_leaf(t, CG_V1_PIDS, rel);
                if (fd < 0)
                        return fd;
                r = cgroup_read_u64_at(fd, "pids.current", &s.pids_current);
                if (r < 0)
                        return r;
                /* Forks refused by pids.max: evidence of a fork bomb after the kill. */
                r = cgroup_read_keyed_at(fd, "pids.events", "max", &s.pids_max_events);
                if (r < 0 && r != -ENOENT && r != -ENODATA)
                        return r;
        }
        /* CPU time from the cgroup2 tree's core cpu.stat (no cpuacct needed). */
        {
                cleanup_close int fd = cgroup_open_dir(t->v2.root_fd, rel);
                if (fd < 0)
                        return fd;
                r = cgroup_read_keyed_at(fd, "cpu.stat", "usage_usec", &s.cpu_usage_usec);
                if (r < 0 && r != -ENOENT)
                        return r;
        }
        *ret = s;
        return 0;
}

int cgroup_v1_freezer_set(struct cgroup_tree *t, const char *rel, bool frozen)
{
        cleanup_close int fd = v1_leaf(t, CG_V1_FREEZER, rel);
        if (fd < 0)
                return fd;
        return cgroup_write_at(fd, "freezer.state", frozen ? "FROZEN" : "THAWED");
}

int cgroup_v1_freezer_state(struct cgroup_tree *t, const char *rel)
{
        cleanup_close int fd = v1_leaf(t, CG_V1_FREEZER, rel);
        cleanup_free char *s = NULL;
        int r;

        if (fd < 0)
                return fd;
        r = cgroup_read_at(fd, "freezer.state", &s);
        if (r < 0)
                return r;
        /* FREEZING means some task has not stopped yet: not frozen. */
        return startswith(s, "FROZEN") ? 1 : 0;
}
