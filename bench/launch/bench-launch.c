/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench-launch: starts one fully confined container running /bin/true with
 * the native launcher and waits for it (what hyperfine times), or, with -n N,
 * does that N times in-process and prints the median, min and p90 of
 * spawn-to-reaped in microseconds.
 *
 *   bench-launch [-n N] [--shim PATH] [--cgroup] [--fresh-netns] [--steps]
 *                [--serve SOCKET]
 *
 * By default every container runs in a network namespace made for it by the
 * daemon's code (kept_netns_new()) before the spawn, as the daemon makes
 * one per container while it provisions a standby; --fresh-netns lets the
 * clone make the namespace (the path the daemon takes without one, and the
 * one an OCI runtime takes). --steps (with -n) prints the median time of
 * each spawn step (struct container_timing) and of making the namespace.
 *
 * --serve: one container per connection on SOCKET, its exit status written
 * back as one byte (bench-launch-client is the other end); runs until killed.
 *
 * The container gets everything a production one gets: seven namespaces,
 * read-only root, /proc with masks, /dev, /sys, /tmp, /run, a socket dir,
 * no capabilities, no_new_privs, the syscall filter; with --cgroup it is
 * also placed into a cgroup with memory and pids limits.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/fd-util.h"
#include "base/parse-util.h"
#include "base/time-util.h"
#include "base/util.h"
#include "cgroup/cgroup.h"
#include "sandbox/launcher-native.h"
#include "sandbox/netns-keep.h"
#include "sandbox/syscall-filter.h"

#ifndef SHIM_PATH
#define SHIM_PATH "openenvd-shim"
#endif

static int cmp_u64(const void *a, const void *b)
{
        usec_t x = *(const usec_t *) a, y = *(const usec_t *) b;
        return x < y ? -1 : x > y;
}

static int spawn_once(struct container_spec *spec);

static struct kept_netns *kept;

/* What the daemon does for the next container: never the last one's
 * namespace (sandbox/netns-keep.h), a new one. */
static int netns_take(void)
{
        int r;

        if (!kept)
                return 0;
        kept = kept_netns_free(kept);
        r = kept_netns_new(&kept);
        if (r < 0)
                fprintf(stderr, "bench-launch: kept namespace: %s\n", strerror(-r));
        return r;
}

/* One spawn per client; the status byte is 0 or 1 (failed). */
static int serve(struct container_spec *spec, const char *path)
{
        struct sockaddr_un sun = { .sun_family = AF_UNIX };
        if (strlen(path) >= sizeof(sun.sun_path))
                return -ENAMETOOLONG;
        memcpy(sun.sun_path, path, strlen(path) + 1);
        (void) unlink(path);
        cleanup_close int l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (l < 0 || bind(l, (struct sockaddr *) &sun, sizeof(sun)) < 0 || listen(l, 16) < 0)
                return -errno;
        for (;;) {
                cleanup_close int c = accept4(l, NULL, NULL, SOCK_CLOEXEC);
                if (c < 0) {
                        if (errno == EINTR || errno == ECONNABORTED)
                                continue;
                        return -errno;
                }
                unsigned char status = spawn_once(spec) < 0;
                (void) send(c, &status, 1, MSG_NOSIGNAL);
                /* After the answer: the daemon makes the next namespace
                 * off the next spawn's path. */
                if (netns_take() < 0)
                        return -EIO;
        }
}

static int spawn_once(struct container_spec *spec)
{
        spec->netns = kept;
        struct container_error e = {};
        struct container *c = NULL;
        int status = -1;
        int r = container_spawn(spec, &c, &e);
        if (r < 0) {
                fprintf(stderr, "bench-launch: spawn failed at %s\n", error_detail_text(&e.detail));
                error_detail_done(&e.detail);
                return r;
        }
        r = container_wait(c, &status);
        container_free(c);
        if (r < 0 || status != 0) {
                fprintf(stderr, "bench-launch: container exited with %d\n", status);
                return -EIO;
        }
        return 0;
}

/* CPU time of this process and of every reaped descendant (the CLONE_VM
 * child, the shim, the principal): what a spawn costs whatever the load. */
static usec_t cpu_usec(void)
{
        struct rusage self, kids;
        (void) getrusage(RUSAGE_SELF, &self);
        (void) getrusage(RUSAGE_CHILDREN, &kids);
        usec_t t = 0;
        const struct timeval *tv[] = { &self.ru_utime, &self.ru_stime, &kids.ru_utime,
                                       &kids.ru_stime };
        for (size_t i = 0; i < ELEMENTSOF(tv); i++)
                t += (usec_t) tv[i]->tv_sec * USEC_PER_SEC + (usec_t) tv[i]->tv_usec;
        return t;
}

static usec_t median(usec_t *v, unsigned n)
{
        qsort(v, n, sizeof(*v), cmp_u64);
        return v[n / 2];
}

/* n spawns in-process: spawn to reaped, then the next namespace made;
 * with steps the median of each step of struct container_timing as well. */
static int measure(struct container_spec *spec, unsigned n, bool steps)
{
        cleanup_free usec_t *t = xcalloc(n, sizeof(*t));
        cleanup_free usec_t *check = xcalloc(n, sizeof(*check));
        cleanup_free usec_t *exit_t = xcalloc(n, sizeof(*exit_t));
        cleanup_free usec_t *step = xcalloc((size_t) n * _CONTAINER_MARK_MAX, sizeof(*step));
        struct container_timing timing;
        int r = 0;

        spec->timing = steps ? &timing : NULL;
        usec_t cpu0 = cpu_usec();
        for (unsigned i = 0; i < n && r >= 0; i++) {
                timing = (struct container_timing){};
                usec_t t0 = now_usec(CLOCK_MONOTONIC);
                r = spawn_once(spec);
                usec_t t1 = now_usec(CLOCK_MONOTONIC);
                t[i] = t1 - t0;
                /* The daemon makes it off the spawn path (a standby's
                 * provisioning): timed on its own, and in the CPU per spawn. */
                if (r >= 0)
                        r = netns_take();
                check[i] = now_usec(CLOCK_MONOTONIC) - t1;
                if (timing.ns[CONTAINER_MARK_EXECED])
                        exit_t[i] = t1 - timing.ns[CONTAINER_MARK_EXECED] / 1000;
                for (int m = 1; m < _CONTAINER_MARK_MAX; m++)
                        if (timing.ns[m] && timing.ns[m - 1])
                                step[(size_t) m * n + i] = (timing.ns[m] - timing.ns[m - 1]) / 1000;
        }
        usec_t cpu = cpu_usec() - cpu0;
        spec->timing = NULL;
        if (r < 0)
                return r;
        printf("native launcher, in-process, %s netns, n=%u: median %llu us, CPU %llu us per "
               "spawn\n",
               kept ? "premade" : "fresh", n, (unsigned long long) median(t, n),
               (unsigned long long) (cpu / n));
        if (!steps)
                return 0;
        printf("  step medians (us):");
        if (kept)
                printf(" netns-new %llu", (unsigned long long) median(check, n));
        for (int m = 1; m < _CONTAINER_MARK_MAX; m++)
                printf(" %s %llu", container_mark_to_string(m),
                       (unsigned long long) median(step + (size_t) m * n, n));
        printf(" shim+true+reap %llu\n", (unsigned long long) median(exit_t, n));
        return 0;
}

int main(int argc, char **argv)
{
        unsigned n = 0;
        const char *shim = SHIM_PATH;
        bool use_cgroup = false, fresh_netns = false, steps = false;
        const char *serve_path = NULL;

        for (int i = 1; i < argc; i++) {
                if (streq(argv[i], "-n") && i + 1 < argc) {
                        if (parse_uint(argv[++i], 1, 100000, &n) < 0)
                                return 2;
                } else if (streq(argv[i], "--shim") && i + 1 < argc) {
                        shim = argv[++i];
                } else if (streq(argv[i], "--serve") && i + 1 < argc) {
                        serve_path = argv[++i];
                } else if (streq(argv[i], "--cgroup")) {
                        use_cgroup = true;
                } else if (streq(argv[i], "--fresh-netns")) {
                        fresh_netns = true;
                } else if (streq(argv[i], "--steps")) {
                        steps = true;
                } else {
                        fprintf(stderr, "usage: bench-launch [-n N] [--shim PATH] [--cgroup] "
                                        "[--fresh-netns] [--steps] [--serve SOCKET]\n");
                        return 2;
                }
        }

        const char *tmp = getenv("TMPDIR");
        cleanup_free char *sockdir = xasprintf("%s/bench-launch-XXXXXX", tmp ? tmp : "/tmp");
        if (!mkdtemp(sockdir)) {
                perror("mkdtemp");
                return 1;
        }
        char *argv_true[] = { (char *) "/bin/true", NULL };
        char *env[] = { (char *) "PATH=/usr/local/bin:/usr/bin:/bin", NULL };
        char *masks[] = { (char *) "/run/secrets", (char *) "/var/lib/openenvd", NULL };
        struct container_spec spec = {
                .name = (char *) "bench",
                .argv = argv_true,
                .env = env,
                .rootfs = (char *) "/",
                .shim_path = (char *) shim,
                .socket_dir = sockdir,
                .host_uid = 100000,
                .uid_count = 65536,
                .uid = 1000,
                .gid = 1000,
                .masks = masks,
                .tmp_bytes = 64ULL << 20,
                .nofile = 4096,
                .stdio_fd = -EBADF,
        };

        /* Compiled once, as the daemon does at startup. */
        cleanup(syscall_filter_freep) struct syscall_filter *filter = NULL;
        int fr = syscall_filter_new(&filter);
        if (fr < 0) {
                fprintf(stderr, "bench-launch: syscall filter: %s\n", strerror(-fr));
                return 1;
        }
        spec.filter = filter;

        if (!fresh_netns) {
                fr = kept_netns_new(&kept);
                if (fr < 0) {
                        fprintf(stderr, "bench-launch: kept namespace: %s\n", strerror(-fr));
                        return 1;
                }
        }

        struct cgroup_layout layout = {};
        enum cgroup_mode mode;
        struct cgroup_tree *tree = NULL;
        struct cgroup_placement placement = { .v2_fd = -EBADF };
        int r = 0;
        if (use_cgroup) {
                struct cgroup_limits limits = { .memory_bytes = 256ULL << 20, .pids = 64 };
                r = cgroup_layout_detect(&layout, &mode);
                /* Our own subtree: cgroup_tree_destroy() removes exactly it. */
                cleanup_free char *subtree = xasprintf("bench-launch-%d", (int) getpid());
                layout.subtree_name = subtree;
                if (r >= 0)
                        r = cgroup_tree_open(&layout, &tree);
                if (r >= 0)
                        r = cgroup_create(tree, "zones/bench/c", &limits);
                if (r >= 0)
                        r = cgroup_placement_open(tree, "zones/bench/c", &placement);
                if (r < 0) {
                        fprintf(stderr, "bench-launch: cgroup: %s\n", strerror(-r));
                        goto out;
                }
                spec.placement = &placement;
        }

        if (serve_path) {
                r = serve(&spec, serve_path);
                fprintf(stderr, "bench-launch: serve: %s\n", strerror(-r));
        } else if (n == 0) {
                r = spawn_once(&spec);
        } else {
                r = measure(&spec, n, steps);
        }
out:
        if (tree) {
                cgroup_placement_done(&placement);
                (void) cgroup_tree_destroy(tree);
                cgroup_tree_free(tree);
        }
        kept = kept_netns_free(kept);
        (void) rmdir(sockdir);
        return r < 0 ? 1 : 0;
}
