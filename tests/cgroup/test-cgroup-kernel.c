/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cgroup module on the real kernel (suite 'kernel', root): a uniquely named
 * subtree per test, children placed with clone3(CLONE_INTO_CGROUP) plus the
 * v1 attach, limits that bite, freeze, kill of a fork bomb, stats, removal.
 * Every test destroys its subtree in .fini and the last check of each test
 * is that nothing is left.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/fd-util.h"
#include "base/util.h"
#include "cgroup/cgroup.h"
#include <criterion/new/assert.h>

#include "test-helpers.h"

static struct cgroup_layout layout;
static struct cgroup_tree *tree;
static char name[64];
static char *paths[6];
static size_t n_paths;

static void remember_paths(void)
{
        const char *ctrls[] = { NULL, "memory", "pids", "cpu", "freezer" };
        n_paths = 0;
        for (size_t i = 0; i < ELEMENTSOF(ctrls); i++) {
                const char *p = cgroup_tree_path(tree, ctrls[i]);
                if (p)
                        paths[n_paths++] = xstrdup(p);
        }
}

static void teardown(void);

static void open_tree(unsigned flags)
{
        cleanup_free char *hex = NULL;
        enum cgroup_mode mode;
        int r;

        if (tree) /* a test re-opening with other flags */
                teardown();

        r = cgroup_layout_detect(&layout, &mode);
        require_feature(r == 0, "cgroup2 mount");
        cr_assert_eq(random_hex(6, &hex), 0);
        snprintf(name, sizeof(name), "openenvd-test-%s", hex);
        layout.subtree_name = name;
        layout.flags = flags;
        r = cgroup_tree_open(&layout, &tree);
        cr_assert_eq(r, 0, "open: %s", strerror(-r));
        cr_assert_eq(cgroup_tree_mode(tree), mode);
        remember_paths();
}

static void setup(void)
{
        require_root();
        open_tree(0);
}

static void teardown(void)
{
        if (tree) {
                int r = cgroup_tree_destroy(tree);
                tree = cgroup_tree_free(tree);
                /* Reap whatever the test left (all killed by destroy). */
                while (waitpid(-1, NULL, WNOHANG) > 0)
                        ;
                cr_expect_eq(r, 0, "destroy: %s", strerror(-r));
        }
        for (size_t i = 0; i < n_paths; i++) {
                cr_expect(access(paths[i], F_OK) < 0 && errno == ENOENT, "%s left behind",
                          paths[i]);
                paths[i] = mfree(paths[i]);
        }
        n_paths = 0;
        cgroup_layout_done(&layout);
}

TestSuite(cgroup_kernel, .init = setup, .fini = teardown, .timeout = 60);

/*
 * Spawns fn in leaf rel: clone3 places the child in the cgroup2 leaf
 * atomically; on hybrid hosts the v1 leaves get its pid while it still waits
 * for the go byte, so it runs its first instruction of fn fully placed.
 */
static pid_t spawn_in(const char *rel, void (*fn)(void *), void *arg)
{
        struct cgroup_placement p;
        int go[2];
        char c = 1;
        pid_t pid;
        int r;

        r = cgroup_placement_open(tree, rel, &p);
        cr_assert_eq(r, 0, "placement %s: %s", rel, strerror(-r));
        cr_assert_eq(pipe2(go, O_CLOEXEC), 0);
        struct clone_args args = {
                .flags = CLONE_INTO_CGROUP,
                .exit_signal = SIGCHLD,
                .cgroup = (uint64_t) p.v2_fd,
        };
        pid = (pid_t) syscall(SYS_clone3, &args, sizeof(args));
        if (pid == 0) {
                close(go[1]);
                if (read(go[0], &c, 1) != 1)
                        _exit(99);
                fn(arg);
                _exit(0);
        }
        cr_assert_gt(pid, 0, "clone3: %m");
        close(go[0]);
        r = cgroup_placement_attach(&p, pid);
        cr_assert_eq(r, 0, "attach: %s", strerror(-r));
        cgroup_placement_done(&p);
        cr_assert_eq(write(go[1], &c, 1), 1);
        close(go[1]);
        return pid;
}

static void do_pause(void *arg)
{
        (void) arg;
        for (;;)
                pause();
}

static void do_spin(void *arg)
{
        volatile uint64_t *counter = arg;
        for (;;)
                (*counter)++;
}

/* Forks up to 64 children that pause; reports the errno of the first failure. */
static void do_fork_many(void *arg)
{
        int *result = arg;
        for (int i = 0; i < 64; i++) {
                pid_t c = fork();
                if (c == 0)
                        do_pause(NULL);
                if (c < 0) {
                        *result = errno;
                        do_pause(NULL);
                }
        }
        *result = 0;
        do_pause(NULL);
}

static void do_fork_bomb(void *arg)
{
        (void) arg;
        for (;;)
                (void) fork();
}

static void do_touch_pause(void *arg)
{
        (void) arg;
        char *p = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
                _exit(98);
        memset(p, 1, 1 << 20);
        do_pause(NULL);
}

static void do_eat_memory(void *arg)
{
        size_t n = *(size_t *) arg;
        char *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
                _exit(98);
        for (size_t i = 0; i < n; i += 4096)
                p[i] = 1;
        _exit(0);
}

static void *shared_page(void)
{
        void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        cr_assert_neq(p, MAP_FAILED);
        return p;
}

static char *read_file(const char *dir, const char *file)
{
        cleanup_free char *p = xasprintf("%s/%s", dir, file);
        char *s = NULL;
        int r = read_full_file_at(AT_FDCWD, p, 4096, &s, NULL);
        cr_assert_eq(r, 0, "%s: %s", p, strerror(-r));
        s[strcspn(s, "\n")] = '\0';
        return s;
}

Test(cgroup_kernel, limits_written)
{
        struct cgroup_limits l = { .memory_bytes = 64 << 20, .pids = 16, .cpu = 0.5 };

        cr_assert_eq(cgroup_tree_adopt_self(tree), 0);
        int r = cgroup_create(tree, "zones/a/b", &l);
        cr_assert_eq(r, 0, "create: %s", strerror(-r));
        if (cgroup_tree_mode(tree) == CGROUP_MODE_HYBRID) {
                cleanup_free char *mem =
                        xasprintf("%s/zones/a/b", cgroup_tree_path(tree, "memory"));
                cleanup_free char *pids = xasprintf("%s/zones/a/b", cgroup_tree_path(tree, "pids"));
                cleanup_free char *cpu = xasprintf("%s/zones/a/b", cgroup_tree_path(tree, "cpu"));
                cleanup_free char *a = read_file(mem, "memory.limit_in_bytes");
                cleanup_free char *b = read_file(pids, "pids.max");
                cleanup_free char *c = read_file(cpu, "cpu.cfs_quota_us");
                cr_expect_str_eq(a, "67108864");
                cr_expect_str_eq(b, "16");
                cr_expect_str_eq(c, "50000");
                cleanup_free char *memsw = xasprintf("%s/memory.memsw.limit_in_bytes", mem);
                if (access(memsw, F_OK) == 0) {
                        cleanup_free char *d = read_file(mem, "memory.memsw.limit_in_bytes");
                        cr_expect_str_eq(d, "67108864");
                }
        } else {
                cleanup_free char *leaf = xasprintf("%s/zones/a/b", cgroup_tree_path(tree, NULL));
                cleanup_free char *a = read_file(leaf, "memory.max");
                cleanup_free char *b = read_file(leaf, "pids.max");
                cleanup_free char *c = read_file(leaf, "cpu.max");
                cr_expect_str_eq(a, "67108864");
                cr_expect_str_eq(b, "16");
                cr_expect_str_eq(c, "50000 100000");
        }
}

Test(cgroup_kernel, pids_max_bites)
{
        struct cgroup_limits l = { .pids = 4 };
        int *result = shared_page();

        *result = -1;
        cr_assert_eq(cgroup_create(tree, "zones/p", &l), 0);
        pid_t pid = spawn_in("zones/p", do_fork_many, result);
        /* The child reports once its fork loop ends (it then pauses). */
        for (int i = 0; i < 100000 && __atomic_load_n(result, __ATOMIC_ACQUIRE) == -1; i++)
                sched_yield();
        cr_expect_eq(*result, EAGAIN, "fork past pids.max: %d", *result);
        struct cgroup_stats s;
        cr_assert_eq(cgroup_stats(tree, "zones/p", &s), 0);
        cr_expect_eq(s.pids_current, 4);
        cr_assert_eq(cgroup_kill(tree, "zones/p"), 0);
        cr_expect_eq(cgroup_wait_empty(tree, "zones/p", 5 * USEC_PER_SEC), 0);
        cr_expect_eq(waitpid(pid, NULL, 0), pid);
}

Test(cgroup_kernel, memory_limit_oom_kills)
{
        struct cgroup_limits l = { .memory_bytes = 16 << 20 };
        size_t want = 128 << 20;
        struct cgroup_stats s;
        int status;

        cr_assert_eq(cgroup_create(tree, "zones/m", &l), 0);
        pid_t pid = spawn_in("zones/m", do_eat_memory, &want);
        cr_assert_eq(waitpid(pid, &status, 0), pid);
        cr_expect(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "status %#x", status);
        cr_assert_eq(cgroup_stats(tree, "zones/m", &s), 0);
        cr_expect_geq(s.oom_kills, 1);
        /* Linux 6.x no longer counts memory.failcnt on v1 (reads 0 here). */
        if (cgroup_tree_mode(tree) == CGROUP_MODE_V2)
                cr_expect_geq(s.memory_max_events, 1);
        cr_expect_leq(s.memory_current, 16 << 20);
}

static void freeze_thaw(void)
{
        volatile uint64_t *counter = shared_page();
        uint64_t before;

        cr_assert_eq(cgroup_create(tree, "zones/f", NULL), 0);
        pid_t spin = spawn_in("zones/f", do_spin, (void *) counter);
        pid_t idle = spawn_in("zones/f", do_pause, NULL);
        while (*counter == 0)
                sched_yield();

        usec_t t0 = now_usec(CLOCK_MONOTONIC);
        cr_assert_eq(cgroup_freeze(tree, "zones/f"), 0);
        cr_assert_eq(cgroup_wait_frozen(tree, "zones/f", 5 * USEC_PER_SEC), 0);
        /* Informational only (never asserted). */
        cr_log_info("freeze-to-frozen %s: %llu us",
                    cgroup_tree_has_kill(tree) && !(layout.flags & CGROUP_LAYOUT_NO_FREEZE)
                            ? "cgroup.freeze"
                            : "v1 freezer",
                    (unsigned long long) (now_usec(CLOCK_MONOTONIC) - t0));
        /* Frozen: the spinner makes no progress while we run. */
        before = *counter;
        for (int i = 0; i < 2000; i++)
                sched_yield();
        cr_expect_eq(*counter, before, "spinner ran while frozen");

        cr_assert_eq(cgroup_thaw(tree, "zones/f"), 0);
        while (*counter == before)
                sched_yield();
        cr_expect_eq(cgroup_wait_frozen(tree, "zones/f", 1000), -ETIMEDOUT);

        cr_assert_eq(cgroup_kill(tree, "zones/f"), 0);
        cr_assert_eq(cgroup_wait_empty(tree, "zones/f", 5 * USEC_PER_SEC), 0);
        cr_expect_eq(waitpid(spin, NULL, 0), spin);
        cr_expect_eq(waitpid(idle, NULL, 0), idle);
        cr_expect_eq(cgroup_remove(tree, "zones/f"), 0);
}

Test(cgroup_kernel, freeze_thaw_v2)
{
        require_feature(cgroup_tree_has_freeze(tree), "cgroup.freeze");
        freeze_thaw();
}

Test(cgroup_kernel, freeze_thaw_v1_freezer)
{
        open_tree(CGROUP_LAYOUT_NO_FREEZE);
        require_feature(cgroup_tree_has_freeze(tree), "v1 freezer");
        freeze_thaw();
}

static void fork_bomb_killed(void)
{
        struct cgroup_limits l = { .pids = 64 };
        struct cgroup_stats s;
        usec_t t0;

        cr_assert_eq(cgroup_create(tree, "zones/bomb", &l), 0);
        pid_t pid = spawn_in("zones/bomb", do_fork_bomb, NULL);
        /* Let it fill its pids.max. */
        do {
                sched_yield();
                cr_assert_eq(cgroup_stats(tree, "zones/bomb", &s), 0);
        } while (s.pids_current < 32);

        t0 = now_usec(CLOCK_MONOTONIC);
        cr_assert_eq(cgroup_kill(tree, "zones/bomb"), 0);
        cr_assert_eq(cgroup_wait_empty(tree, "zones/bomb", 5 * USEC_PER_SEC), 0);
        /* Informational only (never asserted): kill-to-empty latency. */
        cr_log_info("kill-to-empty %s: %llu us",
                    cgroup_tree_has_kill(tree) ? "cgroup.kill" : "sweep",
                    (unsigned long long) (now_usec(CLOCK_MONOTONIC) - t0));
        cr_expect_eq(cgroup_is_populated(tree, "zones/bomb"), 0);
        cr_expect_eq(waitpid(pid, NULL, 0), pid);
        cr_expect_eq(cgroup_remove(tree, "zones/bomb"), 0);
}

Test(cgroup_kernel, kill_fork_bomb)
{
        require_feature(cgroup_tree_has_kill(tree), "cgroup.kill");
        fork_bomb_killed();
}

Test(cgroup_kernel, kill_fork_bomb_sweep)
{
        open_tree(CGROUP_LAYOUT_NO_KILL);
        cr_expect(!cgroup_tree_has_kill(tree));
        fork_bomb_killed();
}

Test(cgroup_kernel, stats_and_blame)
{
        struct cgroup_stats s;
        cleanup_free char *rel = NULL;
        int status;

        cr_assert_eq(cgroup_create(tree, "zones/agent/env", NULL), 0);
        cr_assert_eq(cgroup_create(tree, "zones/agentx", NULL), 0);
        pid_t a = spawn_in("zones/agent/env", do_touch_pause, NULL);
        pid_t b = spawn_in("zones/agentx", do_pause, NULL);

        cr_assert_eq(cgroup_pid_subtree(tree, a, &rel), 0);
        cr_expect_str_eq(rel, "zones/agent/env");
        free(rel);
        rel = NULL;
        cr_assert_eq(cgroup_pid_subtree(tree, b, &rel), 0);
        cr_expect_str_eq(rel, "zones/agentx");
        cr_expect_eq(cgroup_pid_subtree(tree, getpid(), &rel), -EXDEV);
        cr_expect_eq(cgroup_pid_subtree(tree, 0x3fffffff, &rel), -ENOENT);

        cr_assert_eq(cgroup_stats(tree, "zones/agent", &s), 0);
        cr_expect_eq(s.pids_current, 1, "pids.current is hierarchical");
        cr_assert_eq(cgroup_stats(tree, "zones/agent/env", &s), 0);
        cr_expect_eq(s.pids_current, 1);
        /* The child touches 1 MiB before pausing; wait until it is charged. */
        while (s.memory_current < (1 << 20)) {
                sched_yield();
                cr_assert_eq(cgroup_stats(tree, "zones/agent/env", &s), 0);
        }

        /* Populated groups are not removed. */
        cr_expect_eq(cgroup_remove(tree, "zones/agent"), -EBUSY);
        cr_expect_eq(cgroup_is_populated(tree, "zones/agent"), 1);
        cr_assert_eq(cgroup_kill(tree, "zones"), 0);
        cr_assert_eq(cgroup_wait_empty(tree, "zones", 5 * USEC_PER_SEC), 0);
        cr_expect_eq(waitpid(a, &status, 0), a);
        cr_expect_eq(waitpid(b, &status, 0), b);
        cr_expect_eq(cgroup_remove(tree, "zones"), 0);
        cr_expect_eq(cgroup_pid_subtree(tree, a, &rel), -ENOENT);
}

Test(cgroup_kernel, adopt_self_and_destroy)
{
        cleanup_free char *rel = NULL;

        cr_assert_eq(cgroup_tree_adopt_self(tree), 0);
        cr_assert_eq(cgroup_pid_subtree(tree, getpid(), &rel), 0);
        cr_expect_str_eq(rel, "control");
        /* Never the group we are in. */
        cr_expect_eq(cgroup_kill(tree, "control"), -EBUSY);
        cr_expect_eq(cgroup_kill(tree, ""), -EBUSY);
        cr_assert_eq(cgroup_create(tree, "zones/z/c", NULL), 0);
        spawn_in("zones/z/c", do_pause, NULL);
        /* .fini destroys while we are still in control/ and checks the dirs. */
}
