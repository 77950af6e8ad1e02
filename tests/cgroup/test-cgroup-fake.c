/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cgroup module against fake trees in a temp dir: the exact file writes of
 * both backends, delegation, path refusal, parsers. No root needed.
 *
 * A directory made on tmpfs has no interface files, so each test creates
 * the cgroups it uses (as the kernel would on mkdir) before calling the
 * module; the module itself stays strict about missing files.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fd-util.h"
#include "base/util.h"
#include "cgroup/cgroup-internal.h"
#include "cgroup/cgroup.h"
#include "test-helpers.h"

static char tmp[64];

static void setup(void)
{
        snprintf(tmp, sizeof(tmp), "/tmp/cgroup-fake-XXXXXX");
        cr_assert_not_null(mkdtemp(tmp));
}

static void teardown(void)
{
        (void) rm_rf_at(AT_FDCWD, tmp);
}

static void put(const char *dir, const char *file, const char *content)
{
        cleanup_free char *p = xasprintf("%s/%s/%s", tmp, dir, file);
        FILE *f = fopen(p, "we");
        cr_assert_not_null(f, "%s: %m", p);
        fputs(content, f);
        fclose(f);
}

static char *get(const char *dir, const char *file)
{
        cleanup_free char *p = xasprintf("%s/%s/%s", tmp, dir, file);
        char *s = NULL;
        int r = read_full_file_at(AT_FDCWD, p, 4096, &s, NULL);
        cr_assert_eq(r, 0, "read %s: %s", p, strerror(-r));
        return s;
}

static bool exists(const char *dir, const char *file)
{
        cleanup_free char *p = xasprintf("%s/%s/%s", tmp, dir, file);
        return access(p, F_OK) == 0;
}

/* What mkdir on cgroup2 creates (the subset the module reads or writes). */
static void mk_v2(const char *dir, const char *controllers)
{
        cleanup_free char *p = xasprintf("%s/%s", tmp, dir);
        cr_assert_eq(mkdir_p_at(AT_FDCWD, p, 0755), 0);
        put(dir, "cgroup.controllers", controllers);
        put(dir, "cgroup.subtree_control", "");
        put(dir, "cgroup.procs", "");
        put(dir, "cgroup.events", "populated 0\nfrozen 0\n");
        put(dir, "cgroup.freeze", "0");
        put(dir, "cgroup.kill", "");
        put(dir, "cpu.stat", "usage_usec 0\nuser_usec 0\nsystem_usec 0\n");
        if (strstr(controllers, "memory")) {
                put(dir, "memory.max", "max");
                put(dir, "memory.swap.max", "max");
                put(dir, "memory.current", "0");
                put(dir, "memory.events", "low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\n");
        }
        if (strstr(controllers, "pids")) {
                put(dir, "pids.max", "max");
                put(dir, "pids.current", "0");
        }
        if (strstr(controllers, "cpu"))
                put(dir, "cpu.max", "max 100000");
}

static struct cgroup_tree *open_v2(const char *self, unsigned flags)
{
        cleanup_free char *mount = xasprintf("%s/v2", tmp);
        struct cgroup_layout l = {
                .v2_mount = mount,
                .self_cgroup = self,
                .subtree_name = "sub",
                .flags = flags,
        };
        struct cgroup_tree *t = NULL;
        int r = cgroup_tree_open(&l, &t);
        cr_assert_eq(r, 0, "open: %s", strerror(-r));
        return t;
}

/* own = v2/own, root = v2/own/sub, with a zones/agent/env chain. */
static void v2_chain(const char *offered)
{
        mk_v2("v2/own", offered);
        mk_v2("v2/own/sub", offered);
        mk_v2("v2/own/sub/zones", offered);
        mk_v2("v2/own/sub/zones/agent", offered);
        mk_v2("v2/own/sub/zones/agent/env", offered);
}

TestSuite(cgroup_fake, .init = setup, .fini = teardown);

Test(cgroup_fake, rel_paths_refused)
{
        const char *bad[] = { "..",     ".",     "/abs", "a//b",     "a/",
                              "a/../b", "a/./b", "../x", "zones/..", "a\nb" };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                cr_expect(!cgroup_rel_valid(bad[i], false), "accepted '%s'", bad[i]);
        cr_expect(!cgroup_rel_valid("", false));
        cr_expect(cgroup_rel_valid("", true));
        cr_expect(cgroup_rel_valid("zones/agent/env", false));
        cr_expect(cgroup_rel_valid("zones/a..b/.x", false));
}

Test(cgroup_fake, self_path_parse)
{
        const char *text = "9:name=systemd:/\n8:pids:/\n4:memory:/process_api/abc\n"
                           "2:cpu,cpuacct:/c:with:colons\n0::/unified/x\n";
        cleanup_free char *a = NULL, *b = NULL, *c = NULL, *d = NULL, *e = NULL;

        cr_assert_eq(cgroup_self_path_parse(text, NULL, &a), 0);
        cr_expect_str_eq(a, "/unified/x");
        cr_assert_eq(cgroup_self_path_parse(text, "memory", &b), 0);
        cr_expect_str_eq(b, "/process_api/abc");
        cr_assert_eq(cgroup_self_path_parse(text, "cpu", &c), 0);
        cr_expect_str_eq(c, "/c:with:colons");
        cr_assert_eq(cgroup_self_path_parse(text, "cpuacct", &d), 0);
        cr_expect_eq(cgroup_self_path_parse(text, "freezer", &e), -ENOENT);
        cr_expect_eq(cgroup_self_path_parse("0::relative\n", NULL, &e), -EINVAL);
        cr_expect_eq(cgroup_self_path_parse("garbage", NULL, &e), -ENOENT);
        cr_expect_eq(cgroup_self_path_parse("", NULL, &e), -ENOENT);
        /* "10::/x" is not the cgroup2 line. */
        cr_expect_eq(cgroup_self_path_parse("10::/x\n", NULL, &e), -ENOENT);
}

Test(cgroup_fake, keyed_and_quota)
{
        uint64_t v, q;

        cr_expect_eq(cgroup_keyed_get("populated 1\nfrozen 0\n", "frozen", &v), 0);
        cr_expect_eq(v, 0);
        cr_expect_eq(cgroup_keyed_get("populated 1\nfrozen 0\n", "populated", &v), 0);
        cr_expect_eq(v, 1);
        cr_expect_eq(cgroup_keyed_get("oom 3\noom_kill 2", "oom_kill", &v), 0);
        cr_expect_eq(v, 2);
        cr_expect_eq(cgroup_keyed_get("oom_kill 2\n", "oom", &v), -ENODATA);
        cr_expect_eq(cgroup_keyed_get("max -1\n", "max", &v), -EINVAL);

        cr_expect_eq(cgroup_cpu_quota(1.5, &q), 0);
        cr_expect_eq(q, 150000);
        cr_expect_eq(cgroup_cpu_quota(0.001, &q), 0);
        cr_expect_eq(q, 1000, "quota clamped to 1 ms");
        cr_expect_eq(cgroup_cpu_quota(-1, &q), -EINVAL);
        cr_expect_eq(cgroup_cpu_quota(0.0 / 0.0, &q), -EINVAL);
        cr_expect_eq(cgroup_cpu_quota(1e300, &q), -EINVAL);
}

Test(cgroup_fake, v2_create_delegates_and_limits)
{
        cleanup(cgroup_tree_freep) struct cgroup_tree *t = NULL;
        struct cgroup_limits l = { .memory_bytes = 64 << 20, .pids = 32, .cpu = 1.5 };
        cleanup_free char *own = NULL, *sub = NULL, *zones = NULL, *agent = NULL, *leaf = NULL;
        cleanup_free char *mem = NULL, *swap = NULL, *pids = NULL, *cpu = NULL;

        v2_chain("cpu io memory pids hugetlb\n");
        t = open_v2("0::/own\n", 0);
        cr_expect_eq(cgroup_tree_mode(t), CGROUP_MODE_V2);
        cr_expect(cgroup_tree_has_kill(t));
        cr_expect(cgroup_tree_has_freeze(t));

        int r = cgroup_create(t, "zones/agent/env", &l);
        cr_assert_eq(r, 0, "create: %s", strerror(-r));

        /* Enabled on each ancestor, in one write, only managed controllers. */
        own = get("v2/own", "cgroup.subtree_control");
        sub = get("v2/own/sub", "cgroup.subtree_control");
        zones = get("v2/own/sub/zones", "cgroup.subtree_control");
        agent = get("v2/own/sub/zones/agent", "cgroup.subtree_control");
        leaf = get("v2/own/sub/zones/agent/env", "cgroup.subtree_control");
        cr_expect_str_eq(own, "+cpu +memory +pids");
        cr_expect_str_eq(sub, "+cpu +memory +pids");
        cr_expect_str_eq(zones, "+cpu +memory +pids");
        cr_expect_str_eq(agent, "+cpu +memory +pids");
        cr_expect_str_eq(leaf, "", "a leaf delegates nothing");

        mem = get("v2/own/sub/zones/agent/env", "memory.max");
        swap = get("v2/own/sub/zones/agent/env", "memory.swap.max");
        pids = get("v2/own/sub/zones/agent/env", "pids.max");
        cpu = get("v2/own/sub/zones/agent/env", "cpu.max");
        cr_expect_str_eq(mem, "67108864");
        cr_expect_str_eq(swap, "0");
        cr_expect_str_eq(pids, "32");
        cr_expect_str_eq(cpu, "150000 100000");
}

Test(cgroup_fake, v2_only_offered_controllers)
{
        cleanup(cgroup_tree_freep) struct cgroup_tree *t = NULL;
        struct cgroup_limits nocpu = { .memory_bytes = 1 << 20, .pids = 8 };
        struct cgroup_limits cpu = { .cpu = 0.5 };
        cleanup_free char *own = NULL, *agent = NULL, *missing = NULL;

        v2_chain("memory pids\n");
        t = open_v2("0::/own\n", 0);
        cr_assert_eq(cgroup_tree_missing_controllers(t, &missing), 0);
        cr_expect_str_eq(missing, "cpu");
        cr_assert_eq(cgroup_create(t, "zones/agent/env", &nocpu), 0);
        own = get("v2/own", "cgroup.subtree_control");
        agent = get("v2/own/sub/zones/agent", "cgroup.subtree_control");
        cr_expect_str_eq(own, "+memory +pids");
        cr_expect_str_eq(agent, "+memory +pids");
        /* A cpu limit without the cpu controller is refused, not ignored. */
        cr_expect_eq(cgroup_set_limits(t, "zones/agent/env", &cpu), -EOPNOTSUPP);
        cr_expect(!exists("v2/own/sub/zones/agent/env", "cpu.max"));
}

Test(cgroup_fake, v2_already_enabled_is_not_rewritten)
{
        cleanup(cgroup_tree_freep) struct cgroup_tree *t = NULL;
        cleanup_free char *own = NULL, *zones = NULL, *mem = NULL, *swap = NULL, *pids = NULL,
                          *cpu = NULL;

        v2_chain("cpu memory pids\n");
        put("v2/own", "cgroup.subtree_control", "cpu memory pids\n");
        put("v2/own/sub/zones", "cgroup.subtree_control", "memory\n");
        t = open_v2("0::/own\n", 0);
        cr_assert_eq(cgroup_create(t, "zones/agent/env", NULL), 0);
        own = get("v2/own", "cgroup.subtree_control");
        zones = get("v2/own/sub/zones", "cgroup.subtree_control");
        cr_expect_str_eq(own, "cpu memory pids\n", "no write when all are enabled");
        cr_expect_str_eq(zones, "+cpu +pids", "only the missing ones");

        /* No limits: every managed knob back to "max"; swap follows memory. */
        struct cgroup_limits none = { 0 };
        cr_assert_eq(cgroup_set_limits(t, "zones/agent/env", &none), 0);
        mem = get("v2/own/sub/zones/agent/env", "memory.max");
        swap = get("v2/own/sub/zones/agent/env", "memory.swap.max");
        pids = get("v2/own/sub/zones/agent/env", "pids.max");
        cpu = get("v2/own/sub/zones/agent/env", "cpu.max");
        cr_expect_str_eq(mem, "max");
        cr_expect_str_eq(swap, "max");
        cr_expect_str_eq(pids, "max");
        cr_expect_str_eq(cpu, "max 100000");
}

Test(cgroup_fake, v2_no_swap_file_tolerated_but_memory_max_required)
{
        cleanup(cgroup_tree_freep) struct cgroup_tree *t = NULL;
        struct cgroup_limits l = { .memory_bytes = 4096 };
        cleanup_free char *p = NULL, *mem = NULL;

        v2_chain("memory\n");
        p = xasprintf("%s/v2/own/sub/zones/agent/env/memory.swap.max", tmp);
        cr_assert_eq(unlink(p), 0);
        t = open_v2("0::/own\n", 0);
        cr_assert_eq(cgroup_create(t, "zones/agent/env", &l), 0);
        mem = get("v2/own/sub/zones/agent/env", "memory.max");
        cr_expect_str_eq(mem, "4096");

        free(p);
        p = xasprintf("%s/v2/own/sub/zones/agent/env/memory.max", tmp);
        cr_assert_eq(unlink(p), 0);
        cr_expect_eq(cgroup_set_limits(t, "zones/agent/env", &l), -ENOENT);
}

Test(cgroup_fake, escapes_refused)
{
        cleanup(cgroup_tree_freep) struct cgroup_tree *t = NULL;
        cleanup_free char *link = NULL, *outside = NULL, *target = NULL;
        struct cgroup_limits l = { .pids = 1 };
        struct cgroup_placement p;

        v2_chain("pids\n");
        mk_v2("outside", "pids\n");
        t = open_v2("0::/own\n", 0);
        cr_expect_eq(cgroup_create(t, "../../outside", &l), -EINVAL);
        cr_expect_eq(cgroup_create(t, "zones/../../../outside", &l), -EINVAL);
        cr_expect_eq(cgroup_set_limits(t, "/outside", &l), -EINVAL);
        cr_expect_eq(cgroup_kill(t, ".."), -EINVAL);
        cr_expect_eq(cgroup_remove(t, ""), -EINVAL);
        cr_expect_eq(cgroup_placement_open(t, "..", &p), -EINVAL);

        /* A symlink planted inside the tree is not followed. */
        link = xasprintf("%s/v2/own/sub/zones/evil", tmp);
        target = xasprintf("%s/outside", tmp);
        cr_assert_eq(symlink(target, link), 0);
        cr_expect_lt(cgroup_create(t, "zones/evil/x", &l), 0);
        cr_expect_lt(cgroup_set_limits(t, "zones/evil", &l), 0);
        cr_expect(!exists("outside", "x"));
        outside = get("outside", "pids.max");
        cr_expect_str_eq(outside, "max");

        /* Subtree names are one component. */
        struct cgroup_layout bad = { .v2_mount = tmp,
                                     .self_cgroup = "0::/\n",
                                     .subtree_name = ".." };
        struct cgroup_tree *t2 = NULL;
        cr_expect_eq(cgroup_tree_open(&bad, &t2), -EINVAL);
        bad.subtree_name = "a/b";
        cr_expect_eq(cgroup_tree_open(&bad, &t2), -EINVAL);
        /* An own cgroup outside the namespace root ("/..") is refused. */
        bad.subtree_name = "sub";
        bad.self_cgroup = "0::/../x\n";
        cr_expect_lt(cgroup_tree_open(&bad, &t2), 0);
}

Test(cgroup_fake, v2_freeze_kill_waits_stats)
{
        cleanup(cgroup_tree_freep) struct cgroup_tree *t = NULL;
        cleanup_free char *fr = NULL, *th = NULL, *kl = NULL;
        struct cgroup_stats s;

        v2_chain("cpu memory pids\n");
        t = open_v2("0::/own\n", 0);
        cr_assert_eq(cgroup_freeze(t, "zones/agent"), 0);
        fr = get("v2/own/sub/zones/agent", "cgroup.freeze");
        cr_expect_str_eq(fr, "1");
        put("v2/own/sub/zones/agent", "cgroup.events", "populated 1\nfrozen 1\n");
        cr_expect_eq(cgroup_wait_frozen(t, "zones/agent", 1000), 0);
        cr_expect_eq(cgroup_is_populated(t, "zones/agent"), 1);
        cr_expect_eq(cgroup_wait_empty(t, "zones/agent", 2000), -ETIMEDOUT);
        cr_assert_eq(cgroup_thaw(t, "zones/agent"), 0);
        th = get("v2/own/sub/zones/agent", "cgroup.freeze");
        cr_expect_str_eq(th, "0");
        put("v2/own/sub/zones/agent", "cgroup.events", "populated 1\nfrozen 0\n");
        cr_expect_eq(cgroup_wait_frozen(t, "zones/agent", 2000), -ETIMEDOUT);

        cr_assert_eq(cgroup_kill(t, "zones/agent"), 0);
        kl = get("v2/own/sub/zones/agent", "cgroup.kill");
        cr_expect_str_eq(kl, "1");
        put("v2/own/sub/zones/agent", "cgroup.events", "populated 0\nfrozen 0\n");
        cr_expect_eq(cgroup_wait_empty(t, "zones/agent", 1000), 0);
        cr_expect_eq(cgroup_is_populated(t, "zones/agent"), 0);
        /* Missing groups are empty and have nothing to kill. */
        cr_expect_eq(cgroup_wait_empty(t, "zones/gone", 1000), 0);
        cr_expect_eq(cgroup_kill(t, "zones/gone"), 0);
        cr_expect_eq(cgroup_is_populated(t, "zones/gone"), 0);

        put("v2/own/sub/zones/agent/env", "memory.current", "1234\n");
        put("v2/own/sub/zones/agent/env", "memory.events",
            "low 0\nhigh 0\nmax 7\noom 2\noom_kill 2\noom_group_kill 0\n");
        put("v2/own/sub/zones/agent/env", "pids.current", "3\n");
        put("v2/own/sub/zones/agent/env", "cpu.stat", "usage_usec 555\nuser_usec 500\n");
        cr_assert_eq(cgroup_stats(t, "zones/agent/env", &s), 0);
        cr_expect_eq(s.memory_current, 1234);
        cr_expect_eq(s.memory_max_events, 7);
        cr_expect_eq(s.oom_kills, 2);
        cr_expect_eq(s.pids_current, 3);
        cr_expect_eq(s.cpu_usage_usec, 555);
}

Test(cgroup_fake, v2_no_kill_file_sweeps)
{
        cleanup(cgroup_tree_freep) struct cgroup_tree *t = NULL;
        cleanup_free char *kl = NULL, *fr = NULL;

        v2_chain("pids\n");
        t = open_v2("0::/own\n", CGROUP_LAYOUT_NO_KILL);
        cr_expect(!cgroup_tree_has_kill(t));
        /* An empty group: one pass finds no pid, cgroup.kill untouched, and the
         * freeze taken for the sweep is released again. */
        cr_assert_eq(cgroup_kill(t, "zones/agent"), 0);
        kl = get("v2/own/sub/zones/agent", "cgroup.kill");
        fr = get("v2/own/sub/zones/agent", "cgroup.freeze");
        cr_expect_str_eq(kl, "");
        cr_expect_str_eq(fr, "0");
}

Test(cgroup_fake, placement_v2)
{
        cleanup(cgroup_tree_freep) struct cgroup_tree *t = NULL;
        struct cgroup_placement p;

        v2_chain("pids\n");
        t = open_v2("0::/own\n", 0);
        cr_assert_eq(cgroup_placement_open(t, "zones/agent/env", &p), 0);
        cr_expect_geq(p.v2_fd, 0);
        cr_expect_eq(p.n_v1, 0);
        /* Never ourselves, never nonsense. */
        cr_expect_eq(cgroup_placement_attach(&p, getpid()), -EINVAL);
        cr_expect_eq(cgroup_placement_attach_v2(&p, getpid()), -EINVAL);
        cr_expect_eq(cgroup_placement_attach_v2(&p, 0), -EINVAL);
        cgroup_placement_done(&p);
        cr_expect_eq(p.v2_fd, -EBADF);
        cr_expect_eq(cgroup_placement_open(t, "zones/nothere", &p), -ENOENT);
}

Test(cgroup_fake, v2_subtree_root_is_own_when_unnamed)
{
        cleanup_free char *mount = xasprintf("%s/v2", tmp), *own = NULL;
        struct cgroup_layout l = { .v2_mount = mount, .self_cgroup = "0::/own\n" };
        cleanup(cgroup_tree_freep) struct cgroup_tree *t = NULL;

        mk_v2("v2/own", "memory pids\n");
        mk_v2("v2/own/zones", "memory pids\n");
        mk_v2("v2/own/zones/a", "memory pids\n");
        cr_assert_eq(cgroup_tree_open(&l, &t), 0);
        cr_assert_eq(cgroup_create(t, "zones/a", NULL), 0);
        own = get("v2/own", "cgroup.subtree_control");
        cr_expect_str_eq(own, "+memory +pids");
        cr_expect(!exists("v2/own", "sub"));
}

/* ---- hybrid ---- */

static void mk_v1(const char *ctrl, const char *dir)
{
        cleanup_free char *d = xasprintf("v1/%s/%s", ctrl, dir);
        cleanup_free char *p = xasprintf("%s/%s", tmp, d);
        cr_assert_eq(mkdir_p_at(AT_FDCWD, p, 0755), 0);
        put(d, "cgroup.procs", "");
        if (streq(ctrl, "memory")) {
                put(d, "memory.limit_in_bytes", "9223372036854771712");
                put(d, "memory.memsw.limit_in_bytes", "9223372036854771712");
                put(d, "memory.swappiness", "60");
                put(d, "memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 4\n");
                put(d, "memory.usage_in_bytes", "8192\n");
                put(d, "memory.failcnt", "5\n");
        } else if (streq(ctrl, "pids")) {
                put(d, "pids.max", "max");
                put(d, "pids.current", "2\n");
        } else if (streq(ctrl, "cpu")) {
                put(d, "cpu.cfs_period_us", "100000");
                put(d, "cpu.cfs_quota_us", "-1");
        } else if (streq(ctrl, "freezer"))
                put(d, "freezer.state", "THAWED\n");
}

static const char hybrid_self[] = "8:pids:/\n6:freezer:/\n4:memory:/pa/x\n1:cpu:/\n0::/\n";

static struct cgroup_tree *open_hybrid(unsigned flags)
{
        cleanup_free char *v2 = xasprintf("%s/unified", tmp), *v1 = xasprintf("%s/v1", tmp);
        struct cgroup_layout l = {
                .v2_mount = v2,
                .v1_mount = v1,
                .self_cgroup = hybrid_self,
                .subtree_name = "sub",
                .flags = flags,
        };
        struct cgroup_tree *t = NULL;
        int r = cgroup_tree_open(&l, &t);
        cr_assert_eq(r, 0, "open: %s", strerror(-r));
        return t;
}

static void hybrid_chain(void)
{
        mk_v2("unified", "hugetlb\n");
        mk_v2("unified/sub/zones/a", "");
        mk_v1("memory", "pa/x/sub/zones/a");
        mk_v1("pids", "sub/zones/a");
        mk_v1("cpu", "sub/zones/a");
        mk_v1("freezer", "sub/zones/a");
}

Test(cgroup_fake, hybrid_limits_in_v1)
{
        cleanup(cgroup_tree_freep) struct cgroup_tree *t = NULL;
        struct cgroup_limits l = { .memory_bytes = 64 << 20, .pids = 16, .cpu = 0.5 };
        cleanup_free char *lim = NULL, *memsw = NULL, *swp = NULL, *oom = NULL, *pids = NULL,
                          *per = NULL, *quota = NULL, *missing = NULL, *uctl = NULL;

        hybrid_chain();
        t = open_hybrid(0);
        cr_expect_eq(cgroup_tree_mode(t), CGROUP_MODE_HYBRID);
        cr_assert_eq(cgroup_tree_missing_controllers(t, &missing), 0);
        cr_expect_str_eq(missing, "");
        cr_assert_eq(cgroup_create(t, "zones/a", &l), 0);
        lim = get("v1/memory/pa/x/sub/zones/a", "memory.limit_in_bytes");
        memsw = get("v1/memory/pa/x/sub/zones/a", "memory.memsw.limit_in_bytes");
        swp = get("v1/memory/pa/x/sub/zones/a", "memory.swappiness");
        oom = get("v1/memory/pa/x/sub/zones/a", "memory.oom_control");
        pids = get("v1/pids/sub/zones/a", "pids.max");
        per = get("v1/cpu/sub/zones/a", "cpu.cfs_period_us");
        quota = get("v1/cpu/sub/zones/a", "cpu.cfs_quota_us");
        cr_expect_str_eq(lim, "67108864");
        cr_expect_str_eq(memsw, "67108864", "swap off: memsw == limit");
        cr_expect_str_eq(swp, "0");
        cr_expect_str_eq(oom, "0");
        cr_expect_str_eq(pids, "16");
        cr_expect_str_eq(per, "100000");
        cr_expect_str_eq(quota, "50000");
        /* The controller-less cgroup2 is never asked to delegate. */
        uctl = get("unified", "cgroup.subtree_control");
        cr_expect_str_eq(uctl, "");
        cleanup_free char *want = xasprintf("%s/v1/memory/pa/x/sub", tmp);
        cr_expect_str_eq(cgroup_tree_path(t, "memory"), want);
}

Test(cgroup_fake, hybrid_placement_stats_freezer_fallback)
{
        cleanup(cgroup_tree_freep) struct cgroup_tree *t = NULL;
        struct cgroup_placement p;
        struct cgroup_stats s;
        cleanup_free char *st = NULL;

        hybrid_chain();
        t = open_hybrid(CGROUP_LAYOUT_NO_FREEZE);
        cr_assert_eq(cgroup_placement_open(t, "zones/a", &p), 0);
        cr_expect_eq(p.n_v1, 4, "memory pids cpu freezer");
        cgroup_placement_done(&p);

        cr_assert_eq(cgroup_stats(t, "zones/a", &s), 0);
        cr_expect_eq(s.memory_current, 8192);
        cr_expect_eq(s.memory_max_events, 5);
        cr_expect_eq(s.oom_kills, 4);
        cr_expect_eq(s.pids_current, 2);

        /* Without cgroup.freeze the v1 freezer carries freeze/thaw. */
        cr_assert_eq(cgroup_freeze(t, "zones/a"), 0);
        st = get("v1/freezer/sub/zones/a", "freezer.state");
        cr_expect_str_eq(st, "FROZEN");
        put("v1/freezer/sub/zones/a", "freezer.state", "FREEZING\n");
        cr_expect_eq(cgroup_wait_frozen(t, "zones/a", 2000), -ETIMEDOUT);
        put("v1/freezer/sub/zones/a", "freezer.state", "FROZEN\n");
        cr_expect_eq(cgroup_wait_frozen(t, "zones/a", 2000), 0);
        cr_assert_eq(cgroup_thaw(t, "zones/a"), 0);
        free(st);
        st = get("v1/freezer/sub/zones/a", "freezer.state");
        cr_expect_str_eq(st, "THAWED");
}

/* Linux >= 6.13 counts no failcnt on v1's memsw counter, which fails
 * first: a limit hit shows only in the peak (the kernel's own numbers
 * from an OOM at a leaf's limit, and from one at its parent's). */
Test(cgroup_fake, hybrid_limit_hit_read_from_the_peak_when_failcnt_is_silent)
{
        cleanup(cgroup_tree_freep) struct cgroup_tree *t = NULL;
        const char *leaf = "v1/memory/pa/x/sub/zones/a";
        struct cgroup_stats s;

        hybrid_chain();
        t = open_hybrid(0);
        put(leaf, "memory.failcnt", "0\n");
        put(leaf, "memory.memsw.failcnt", "0\n");
        put(leaf, "memory.limit_in_bytes", "67108864\n");
        put(leaf, "memory.memsw.limit_in_bytes", "67108864\n");
        put(leaf, "memory.max_usage_in_bytes", "67108864\n");
        put(leaf, "memory.memsw.max_usage_in_bytes", "67108864\n");
        cr_assert_eq(cgroup_stats(t, "zones/a", &s), 0);
        cr_expect_eq(s.memory_max_events, 1, "its own limit reached");

        /* Killed by a parent's limit: its own 512 MiB never neared. */
        put(leaf, "memory.limit_in_bytes", "536870912\n");
        put(leaf, "memory.memsw.limit_in_bytes", "9223372036854771712\n");
        put(leaf, "memory.max_usage_in_bytes", "67096576\n");
        put(leaf, "memory.memsw.max_usage_in_bytes", "67358720\n");
        cr_assert_eq(cgroup_stats(t, "zones/a", &s), 0);
        cr_expect_eq(s.memory_max_events, 0, "not its own limit");
        cr_expect_eq(s.oom_kills, 4);
}

Test(cgroup_fake, hybrid_missing_v1_controller)
{
        cleanup_free char *v2 = xasprintf("%s/unified", tmp), *v1 = xasprintf("%s/v1", tmp);
        cleanup_free char *missing = NULL;
        struct cgroup_layout l = {
                .v2_mount = v2,
                .v1_mount = v1,
                .self_cgroup = "8:pids:/\n0::/\n", /* no memory, cpu, freezer */
                .subtree_name = "sub",
        };
        cleanup(cgroup_tree_freep) struct cgroup_tree *t = NULL;
        struct cgroup_limits mem = { .memory_bytes = 1 << 20 };

        hybrid_chain();
        cr_assert_eq(cgroup_tree_open(&l, &t), 0);
        cr_assert_eq(cgroup_tree_missing_controllers(t, &missing), 0);
        cr_expect_str_eq(missing, "cpu memory");
        cr_expect_null(cgroup_tree_path(t, "memory"));
        cr_expect_eq(cgroup_set_limits(t, "zones/a", &mem), -EOPNOTSUPP);
}

/* runc on a hybrid host is shown rel's parent in every hierarchy of the tree,
 * devices included (which no native container is placed in), by name. */
Test(cgroup_fake, hybrid_view_for_runc)
{
        cleanup_free char *v2 = xasprintf("%s/unified", tmp), *v1 = xasprintf("%s/v1", tmp);
        struct cgroup_layout l = {
                .v2_mount = v2,
                .v1_mount = v1,
                .self_cgroup = "8:pids:/\n5:devices:/d\n4:memory:/pa/x\n0::/\n",
                .subtree_name = "sub",
                .flags = CGROUP_LAYOUT_DEVICES,
        };
        static const char *const want_names[] = { "unified", "memory", "pids", "devices" };
        static const char *const want_dirs[] = { "unified/sub/zones/a",
                                                 "v1/memory/pa/x/sub/zones/a",
                                                 "v1/pids/sub/zones/a",
                                                 "v1/devices/d/sub/zones/a" };
        cleanup(cgroup_tree_freep) struct cgroup_tree *t = NULL;
        struct cgroup_placement p;
        struct cgroup_view v;

        hybrid_chain();
        mk_v1("devices", "d");
        l.flags = 0; /* a unit without OCI zones leaves devices alone */
        cr_assert_eq(cgroup_tree_open(&l, &t), 0);
        cr_expect(!exists("v1/devices/d", "sub"));
        t = cgroup_tree_free(t);
        l.flags = CGROUP_LAYOUT_DEVICES;
        cr_assert_eq(cgroup_tree_open(&l, &t), 0);
        cr_assert_eq(cgroup_create(t, "zones/a/env", NULL), 0);
        cr_expect(exists("v1/devices/d/sub/zones/a/env", "."), "the leaf in devices too");
        cr_assert_eq(cgroup_view_open(t, "zones/a/env", &v), 0);
        cr_assert_eq(v.n, ELEMENTSOF(want_names));
        for (size_t i = 0; i < v.n; i++) {
                cleanup_free char *dir = xasprintf("%s/%s", tmp, want_dirs[i]);
                struct stat a, b;
                cr_expect_str_eq(v.names[i], want_names[i]);
                cr_assert_eq(fstat(v.fds[i], &a), 0);
                cr_assert_eq(stat(dir, &b), 0);
                cr_expect(a.st_ino == b.st_ino && a.st_dev == b.st_dev, "%s is not %s", v.names[i],
                          dir);
        }
        cgroup_view_done(&v);
        cr_expect_eq(v.n, 0);

        cr_assert_eq(cgroup_placement_open(t, "zones/a", &p), 0);
        cr_expect_eq(p.n_v1, 2, "memory and pids; never devices");
        cgroup_placement_done(&p);
        cr_expect_eq(cgroup_view_open(t, "zones/../a", &v), -EINVAL);
        cr_expect_eq(cgroup_view_open(t, "zones/nope/env", &v), -ENOENT);
}

Test(cgroup_fake, v2_has_no_view)
{
        cleanup(cgroup_tree_freep) struct cgroup_tree *t = NULL;
        struct cgroup_view v;

        v2_chain("cpu memory pids");
        t = open_v2("0::/own\n", 0);
        cr_expect_eq(cgroup_view_open(t, "zones/agent/env", &v), -EOPNOTSUPP);
}
