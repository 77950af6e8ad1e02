/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The unified (v2) backend: controller delegation top-down through
 * cgroup.subtree_control and limits in memory.max / memory.swap.max /
 * pids.max / cpu.max. On hybrid hosts only the core files of the cgroup2 tree
 * are used (cgroup-tree.c), never these.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/macro.h"
#include "base/util.h"
#include "cgroup/cgroup-internal.h"

static const struct {
        const char *name;
        unsigned bit;
} managed[] = {
        /* Order matters: tests and humans read "+cpu +memory +pids". */
        { "cpu", CG_CTRL_CPU },
        { "memory", CG_CTRL_MEMORY },
        { "pids", CG_CTRL_PIDS },
};

unsigned cgroup_v2_ctrl_parse(const char *list)
{
        unsigned mask = 0;
        const char *p = list;

        while (*p) {
                size_t n;

                p += strspn(p, " \n\t");
                n = strcspn(p, " \n\t");
                for (size_t i = 0; i < ELEMENTSOF(managed); i++)
                        if (n == strlen(managed[i].name) && strncmp(p, managed[i].name, n) == 0)
                                mask |= managed[i].bit;
                p += n;
        }
        return mask;
}

int cgroup_v2_offered(int dirfd, unsigned *ret_mask)
{
        cleanup_free char *s = NULL;
        int r = cgroup_read_at(dirfd, "cgroup.controllers", &s);
        if (r < 0)
                return r;
        *ret_mask = cgroup_v2_ctrl_parse(s);
        return 0;
}

static int subtree_control_write(int dirfd, unsigned mask, char sign)
{
        char buf[64] = "";
        size_t len = 0;

        for (size_t i = 0; i < ELEMENTSOF(managed); i++) {
                if (!(mask & managed[i].bit))
                        continue;
                int n = snprintf(buf + len, sizeof(buf) - len, "%s%c%s", len ? " " : "", sign,
                                 managed[i].name);
                if (n < 0 || (size_t) n >= sizeof(buf) - len)
                        return -ENOBUFS;
                len += (size_t) n;
        }
        if (len == 0)
                return 0;
        /* All controllers in ONE write: the kernel applies the line atomically,
         * so a failure leaves subtree_control as it was. */
        return cgroup_write_at(dirfd, "cgroup.subtree_control", buf);
}

int cgroup_v2_enable(int dirfd, unsigned *ret_enabled)
{
        cleanup_free char *enabled_s = NULL;
        unsigned offered, enabled, missing;
        int r;

        r = cgroup_v2_offered(dirfd, &offered);
        if (r < 0)
                return r;
        r = cgroup_read_at(dirfd, "cgroup.subtree_control", &enabled_s);
        if (r < 0)
                return r;
        enabled = cgroup_v2_ctrl_parse(enabled_s);
        /* Only what this cgroup is offered: asking for more is EINVAL/ENOENT. */
        missing = offered & ~enabled & CG_CTRL_ALL;
        r = subtree_control_write(dirfd, missing, '+');
        if (r < 0)
                return r;
        if (ret_enabled)
                *ret_enabled = missing;
        return 0;
}

int cgroup_v2_disable(int dirfd, unsigned mask)
{
        return subtree_control_write(dirfd, mask & CG_CTRL_ALL, '-');
}

int cgroup_cpu_quota(double cpu, uint64_t *ret_quota)
{
        double q;

        /* 4096 CPUs is far beyond any host here; it keeps the product finite. */
        if (!isfinite(cpu) || cpu <= 0 || cpu > 4096)
                return -EINVAL;
        q = cpu * (double) CGROUP_CPU_PERIOD_USEC + 0.5;
        /* The kernel refuses quotas under 1 ms (cpu.max and cfs_quota_us). */
        *ret_quota = MAX((uint64_t) q, CGROUP_CPU_MIN_QUOTA_USEC);
        return 0;
}

int cgroup_v2_set_limits(int leaf_fd, const struct cgroup_limits *l)
{
        char buf[64];
        unsigned offered;
        int r;

        r = cgroup_v2_offered(leaf_fd, &offered);
        if (r < 0)
                return r;
        /* A limit on a controller the host did not delegate would silently
         * not exist: refuse instead of pretending. */
        if ((l->memory_bytes && !(offered & CG_CTRL_MEMORY)) ||
            (l->pids && !(offered & CG_CTRL_PIDS)) || (l->cpu != 0 && !(offered & CG_CTRL_CPU)))
                return -EOPNOTSUPP;

        if (offered & CG_CTRL_MEMORY) {
                if (l->memory_bytes)
                        (void) snprintf(buf, sizeof(buf), "%llu",
                                        (unsigned long long) l->memory_bytes);
                else
                        (void) snprintf(buf, sizeof(buf), "max");
                r = cgroup_write_at(leaf_fd, "memory.max", buf);
                if (r < 0)
                        return r;
                /* memory.swap.max only exists with swap accounting; without it
                 * there is no swap to limit. */
                r = cgroup_write_at(leaf_fd, "memory.swap.max", l->memory_bytes ? "0" : "max");
                if (r < 0 && r != -ENOENT)
                        return r;
        }
        if (offered & CG_CTRL_PIDS) {
                if (l->pids)
                        (void) snprintf(buf, sizeof(buf), "%llu", (unsigned long long) l->pids);
                else
                        (void) snprintf(buf, sizeof(buf), "max");
                r = cgroup_write_at(leaf_fd, "pids.max", buf);
                if (r < 0)
                        return r;
        }
        if (offered & CG_CTRL_CPU) {
                if (l->cpu != 0) {
                        uint64_t quota;
                        r = cgroup_cpu_quota(l->cpu, &quota);
                        if (r < 0)
                                return r;
                        (void) snprintf(buf, sizeof(buf), "%llu %llu", (unsigned long long) quota,
                                        (unsigned long long) CGROUP_CPU_PERIOD_USEC);
                } else
                        (void) snprintf(buf, sizeof(buf), "max %llu",
                                        (unsigned long long) CGROUP_CPU_PERIOD_USEC);
                r = cgroup_write_at(leaf_fd, "cpu.max", buf);
                if (r < 0)
                        return r;
        }
        return 0;
}

int cgroup_v2_stats(int leaf_fd, struct cgroup_stats *ret)
{
        struct cgroup_stats s = { 0 };
        int r;

        /* Files of controllers that are not enabled do not exist: zero. */
        r = cgroup_read_u64_at(leaf_fd, "memory.current", &s.memory_current);
        if (r < 0 && r != -ENOENT)
                return r;
        r = cgroup_read_keyed_at(leaf_fd, "memory.events", "max", &s.memory_max_events);
        if (r < 0 && r != -ENOENT)
                return r;
        r = cgroup_read_keyed_at(leaf_fd, "memory.events", "oom_kill", &s.oom_kills);
        if (r < 0 && r != -ENOENT)
                return r;
        r = cgroup_read_u64_at(leaf_fd, "pids.current", &s.pids_current);
        if (r < 0 && r != -ENOENT)
                return r;
        r = cgroup_read_keyed_at(leaf_fd, "pids.events", "max", &s.pids_max_events);
        if (r < 0 && r != -ENOENT)
                return r;
        /* cpu.stat usage_usec is a core file: present even without the cpu
         * controller (and so on the controller-less cgroup2 of hybrid hosts). */
        r = cgroup_read_keyed_at(leaf_fd, "cpu.stat", "usage_usec", &s.cpu_usage_usec);
        if (r < 0 && r != -ENOENT)
                return r;
        *ret = s;
        return 0;
}
