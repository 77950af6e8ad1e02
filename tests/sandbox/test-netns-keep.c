/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The daemon's network namespaces (sandbox/netns-keep.h) on the real
 * kernel, as root. A container in one keeps every confinement of a fresh
 * one; each container gets a new one, so what episode N leaves everywhere
 * it can (tests/sandbox/leftover.c) is nowhere in episode N+1's; the
 * caller's thread never stands in one, watched from another thread all
 * along; the daemon's sockets in one reach only it.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include <seccomp.h>

#include "sandbox/netns-keep.h"
#include "sandbox-test.h"

#ifndef LEFTOVER_PATH
#error "LEFTOVER_PATH must be defined by the build"
#endif

static struct kept_netns *K;

static void fini(void)
{
        box_fini();
        K = kept_netns_free(K);
}

TestSuite(netns_keep, .fini = fini, .timeout = 60);

/* A box whose principal is leftover, in the kept namespace K. */
static void kept_box_init(void)
{
        box_init();
        cr_assert(kept_netns_new(&K) == 0);
        B.spec.netns = K;
        B.mounts[0].source = (char *) LEFTOVER_PATH;
}

static const char *run(const char *what, const char *arg)
{
        box_reset();
        return box_attack(what, arg, NULL);
}

static void assert_result(const char *got, const char *want)
{
        cr_assert(streq(got, want), "got \"%s\", want \"%s\"", got, want);
}

#define LEAVE_RESULT                                                                          \
        "abstract=ok listen=ok connect=ok pty=ok ptys=1 tmp=ok shm=ok sysv=ok add_key=EPERM " \
        "sysctl=EACCES "                                                                      \
        "survivor=ok"
#define CLEAN_LOOK                                                                             \
        "abstract=ECONNREFUSED bind=ok bind80=ok tcp=0 tcp6=0 udp=0 unix=0 ptys=0 tmp=ENOENT " \
        "shm=ENOENT "                                                                          \
        "sysv=ENOENT key=EPERM port_range=32768 60999 pids=1,2"

Test(netns_keep, confinement_unchanged)
{
        box_init();
        cr_assert(kept_netns_new(&K) == 0);
        B.spec.netns = K;
        /* The attacker's own checks, as in test-launcher, in a kept one. */
        assert_result(box_attack("ids", NULL, NULL),
                      "uid=1000 euid=1000 gid=1000 groups=0 CapInh=0000000000000000 "
                      "CapPrm=0000000000000000 CapEff=0000000000000000 "
                      "CapBnd=0000000000000000 CapAmb=0000000000000000 NoNewPrivs=1 Seccomp=2");
        assert_result(run("netifs", NULL), "ifs lo / lo");
        assert_result(run("hostname", NULL), "hostname sbx-test");
        assert_result(run("pids", NULL), "pids 1 2");
        assert_result(run("unshare", NULL), "denied EPERM");
        assert_result(run("setns", NULL), "denied EPERM");
        assert_result(run("create", "/sys/oe-attack"), "denied EROFS");
        /* lo is up (a down lo would say ENETUNREACH). */
        box_reset();
        assert_result(box_attack("connect", "127.0.0.1", "9"), "denied ECONNREFUSED");
}

/* Episode N leaves state everywhere it can and keeps holding it; episode
 * N+1's container, in the namespace made for it, sees none of it. The
 * control: the same look inside N's namespace sees what N left. */
Test(netns_keep, each_container_a_new_namespace)
{
        struct stat first, second;
        kept_box_init();
        B.argv[1] = (char *) "leave";
        B.argv[2] = (char *) "hold";
        B.argv[3] = NULL;
        box_start();
        cr_assert(box_read_until("result: ready"));
        cr_assert(strstr(B.out, LEAVE_RESULT), "%s", B.out);
        struct container *holder = TAKE_PTR(B.c);
        int holder_out = TAKE_FD(B.out_r);
        cr_assert(fstat(kept_netns_fd(K), &first) == 0);

        /* The control: in the holder's namespace its state shows. */
        const char *look = run("look", NULL);
        cr_assert(strstr(look, "abstract=ok "), "%s", look);
        cr_assert(strstr(look, " bind=EADDRINUSE "), "%s", look);

        struct kept_netns *next = NULL;
        cr_assert(kept_netns_new(&next) == 0);
        cr_assert(fstat(kept_netns_fd(next), &second) == 0);
        cr_assert(first.st_ino != second.st_ino, "the same namespace twice");
        kept_netns_free(K);
        K = next;
        B.spec.netns = K;
        assert_result(run("look", NULL), CLEAN_LOOK);

        cr_assert(container_kill(holder, SIGKILL) == 0);
        container_free(holder);
        safe_close(holder_out);
}

static int tcp_listen(uint16_t port)
{
        struct sockaddr_in sin = { .sin_family = AF_INET,
                                   .sin_port = htons(port),
                                   .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        cr_assert(l >= 0);
        cr_assert(bind(l, (struct sockaddr *) &sin, sizeof(sin)) == 0, "%m");
        cr_assert(listen(l, 4) == 0);
        return l;
}

/* What `nsenter -t <daemon>` joins: the network namespace /proc/<pid>/ns
 * shows for the process, read in a loop from a thread of our own. */
struct watch {
        char home[64];
        atomic_bool stop;
        atomic_long looks, away;
        char seen[64];
};

static void *watch_main(void *p)
{
        struct watch *w = p;
        char path[64], now[64];
        (void) snprintf(path, sizeof(path), "/proc/%d/ns/net", (int) getpid());
        while (!atomic_load(&w->stop)) {
                ssize_t n = readlink(path, now, sizeof(now) - 1);
                if (n < 0)
                        continue;
                now[n] = '\0';
                atomic_fetch_add(&w->looks, 1);
                if (!streq(now, w->home) && atomic_fetch_add(&w->away, 1) == 0)
                        memcpy(w->seen, now, sizeof(now));
        }
        return NULL;
}

/* Everything the daemon does with its namespaces (make them, make sockets
 * in them, clone containers into them), over and over, while the watcher
 * looks: the process never shows another network namespace. Before the
 * helper the daemon's thread stepped in for each of them. */
Test(netns_keep, the_caller_never_enters_one)
{
        static struct watch w;
        pthread_t t;
        box_init();
        ssize_t n = readlink("/proc/self/ns/net", w.home, sizeof(w.home) - 1);
        cr_assert(n > 0);
        cr_assert(pthread_create(&t, NULL, watch_main, &w) == 0);
        for (int i = 0; i < 20; i++) {
                K = kept_netns_free(K);
                cr_assert(kept_netns_new(&K) == 0);
                for (int j = 0; j < 64; j++)
                        safe_close(kept_netns_socket(K, j % 2 ? AF_INET : AF_INET6));
                if (i % 5 == 0) {
                        B.spec.netns = K;
                        assert_result(run("hostname", NULL), "hostname sbx-test");
                }
        }
        atomic_store(&w.stop, true);
        cr_assert(pthread_join(t, NULL) == 0);
        cr_assert(atomic_load(&w.looks) > 0);
        cr_assert(atomic_load(&w.away) == 0,
                  "the process stood in %s (%ld of %ld looks), not its own %s", w.seen,
                  atomic_load(&w.away), atomic_load(&w.looks), w.home);
}

/* The daemon's own sockets in its namespace (kept_netns_socket(), how the
 * frontend reaches the env server): they connect to what listens there,
 * never to the same port in the caller's namespace, and leave the caller
 * where it was. */
Test(netns_keep, kept_socket_reaches_the_namespace_only)
{
        struct stat home, after;
        require_root();
        cr_assert(kept_netns_new(&K) == 0);
        cr_assert(stat("/proc/thread-self/ns/net", &home) == 0);

        int outside = tcp_listen(7074);
        cr_assert(fcntl(outside, F_SETFL, O_NONBLOCK) == 0);
        /* The test itself steps in to listen there, and back. */
        int home_fd = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
        cr_assert(home_fd >= 0 && setns(kept_netns_fd(K), CLONE_NEWNET) == 0);
        int inside = tcp_listen(7074);
        cr_assert(setns(home_fd, CLONE_NEWNET) == 0);
        safe_close(home_fd);

        int c = kept_netns_socket(K, AF_INET);
        cr_assert(c >= 0, "%s", strerror(-c));
        cr_assert(stat("/proc/thread-self/ns/net", &after) == 0);
        cr_assert(home.st_ino == after.st_ino && home.st_dev == after.st_dev,
                  "the caller was left in another network namespace");
        struct sockaddr_in sin = { .sin_family = AF_INET,
                                   .sin_port = htons(7074),
                                   .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        int r = connect(c, (struct sockaddr *) &sin, sizeof(sin));
        cr_assert(r == 0 || errno == EINPROGRESS, "%m");
        /* A hang guard, not a timing: loopback connects at once. */
        cr_assert(poll(&(struct pollfd){ .fd = inside, .events = POLLIN }, 1, 10000) == 1,
                  "nothing reached the namespace's listener");
        int a = accept4(inside, NULL, NULL, SOCK_CLOEXEC);
        cr_assert(a >= 0, "%m");
        cr_assert(accept4(outside, NULL, NULL, SOCK_CLOEXEC) < 0 && errno == EAGAIN,
                  "the connection reached the caller's namespace");
        safe_close(a);
        safe_close(inside);
        safe_close(outside);
        safe_close(c);
}

/* A seccomp profile without setns() (Docker's, narrowed: deploy/docker/)
 * must cost the daemon's namespaces, never a spawn: kept_netns_new()
 * refuses (nothing could be cloned into one, nor a socket made there), and
 * the caller stays in its own namespace. */
Test(netns_keep, refused_setns_leaves_caller_home)
{
        pid_t pid = fork();
        cr_assert(pid >= 0);
        if (pid == 0) {
                struct stat home, after;
                struct kept_netns *k = NULL;
                scmp_filter_ctx f = seccomp_init(SCMP_ACT_ALLOW);
                if (!f || seccomp_rule_add(f, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(setns), 0) < 0 ||
                    seccomp_load(f) < 0 || stat("/proc/thread-self/ns/net", &home) < 0)
                        _exit(10);
                if (kept_netns_new(&k) != -EPERM || k)
                        _exit(11);
                if (stat("/proc/thread-self/ns/net", &after) < 0 || after.st_ino != home.st_ino)
                        _exit(12);
                _exit(0);
        }
        int status;
        cr_assert(waitpid(pid, &status, 0) == pid);
        cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);
}

/* "tcp_ehash=N udp_hash=N" as a container in a namespace made from the
 * incubator sees it, or ENOENT for a table this kernel cannot give a
 * namespace of its own (before 6.1 and 6.2). */
static const char *own_tables(void)
{
        static char want[128];
        bool tcp = access("/proc/sys/net/ipv4/tcp_child_ehash_entries", F_OK) == 0;
        bool udp = access("/proc/sys/net/ipv4/udp_child_hash_entries", F_OK) == 0;
        (void) snprintf(want, sizeof(want), "tables tcp_ehash=%s udp_hash=%s",
                        tcp ? "1024" : "ENOENT", udp ? "256" : "ENOENT");
        return want;
}

/* An agent's sockets share no hash table with the host's or another
 * unit's: the namespace it gets, kept (made by kept_netns_new()) or fresh
 * (made by its clone), owns its TCP and UDP tables. The control: a
 * namespace made the plain way, as before the incubator, shares the host's
 * (a negative count). */
Test(netns_keep, own_tcp_and_udp_hash_tables)
{
        kept_box_init();
        assert_result(run("tables", NULL), own_tables());
        kept_netns_free(K);
        K = NULL;
        B.spec.netns = NULL;
        assert_result(run("tables", NULL), own_tables());

        pid_t pid = fork();
        cr_assert(pid >= 0);
        if (pid == 0) {
                char v[32] = "";
                if (unshare(CLONE_NEWNET) < 0)
                        _exit(10);
                int fd = open("/proc/sys/net/ipv4/tcp_ehash_entries", O_RDONLY | O_CLOEXEC);
                if (fd < 0)
                        _exit(errno == ENOENT ? 0 : 11);
                _exit(read(fd, v, sizeof(v) - 1) > 0 && v[0] == '-' ? 0 : 12);
        }
        int status;
        cr_assert(waitpid(pid, &status, 0) == pid);
        cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "control: status %d", status);
}
