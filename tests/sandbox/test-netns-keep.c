/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Kept network namespaces (sandbox/netns-keep.h) on the real kernel, as
 * root. A container in a kept namespace keeps every confinement of a fresh
 * one; episode N leaves state everywhere it can (tests/sandbox/leftover.c)
 * and episode N+1, in the same namespace, sees none of it; the controls run
 * the same look while N still holds its state, and attack the check itself
 * with the leftovers it must refuse.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
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

Test(netns_keep, nothing_crosses_episodes)
{
        kept_box_init();
        for (int episode = 0; episode < 2; episode++) {
                assert_result(run("leave", NULL), LEAVE_RESULT);
                char what[128];
                int r = kept_netns_check(K, what, sizeof(what));
                cr_assert(r == 0, "episode %d left %s (%d)", episode, what, r);
                assert_result(run("look", NULL), CLEAN_LOOK);
        }
}

/* The control: the same look while the previous tenant still holds its
 * state in the namespace sees it, and the check refuses the namespace. */
Test(netns_keep, control_live_state_is_seen)
{
        kept_box_init();
        B.argv[1] = (char *) "leave";
        B.argv[2] = (char *) "hold";
        B.argv[3] = NULL;
        box_start();
        cr_assert(box_read_until("result: ready"));
        cr_assert(strstr(B.out, LEAVE_RESULT), "%s", B.out);
        struct container *holder = TAKE_PTR(B.c);
        int holder_out = TAKE_FD(B.out_r);

        char what[128];
        cr_assert_eq(kept_netns_check(K, what, sizeof(what)), -EBUSY);
        cr_assert(what[0], "no reason given");

        const char *look = run("look", NULL);
        cr_assert(strstr(look, "abstract=ok "), "%s", look);
        cr_assert(strstr(look, " bind=EADDRINUSE "), "%s", look);
        cr_assert(!strstr(look, " tcp=0 "), "%s", look);
        /* Never shared, even while the holder runs: its own /dev/pts. */
        cr_assert(strstr(look, " ptys=0 "), "%s", look);

        cr_assert(container_kill(holder, SIGKILL) == 0);
        container_free(holder);
        safe_close(holder_out);
        /* Reaped: its sockets are closed; loopback finishes their closing
         * handshakes in the background (liveness: within 5 s). */
        int r = -EBUSY;
        for (int i = 0; i < 500 && r == -EBUSY; i++) {
                r = kept_netns_check(K, what, sizeof(what));
                if (r == -EBUSY)
                        (void) nanosleep(&(struct timespec){ 0, 10 * 1000 * 1000 }, NULL);
        }
        cr_assert(r == 0, "still busy: %s", what);
        assert_result(run("look", NULL), CLEAN_LOOK);
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

/* The check itself: a socket of the namespace held from outside (as a fd
 * passed out of a container would be), a TIME_WAIT connection (where the
 * namespace keeps them), an abstract unix socket. */
Test(netns_keep, check_refuses_leftovers)
{
        char what[128];
        require_root();
        cr_assert(kept_netns_new(&K) == 0);
        cr_assert_eq(kept_netns_check(K, what, sizeof(what)), 0);

        cr_assert(kept_netns_enter(K) == 0);
        int l = tcp_listen(7071);
        cr_assert(kept_netns_leave(K) == 0);
        cr_assert_eq(kept_netns_check(K, what, sizeof(what)), -EBUSY);
        cr_assert(strstr(what, "TCP"), "%s", what);
        safe_close(l);
        cr_assert_eq(kept_netns_check(K, what, sizeof(what)), 0);

        cr_assert(kept_netns_enter(K) == 0);
        int u = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        cr_assert(kept_netns_leave(K) == 0);
        cr_assert_eq(kept_netns_check(K, what, sizeof(what)), -EBUSY);
        cr_assert(strstr(what, "UNIX"), "%s", what);
        safe_close(u);
        cr_assert_eq(kept_netns_check(K, what, sizeof(what)), 0);

        /* TIME_WAIT: allowed again in this namespace by the test (root),
         * then a connection closed by its client first. */
        cr_assert(kept_netns_enter(K) == 0);
        cr_assert(write_string_file_at(AT_FDCWD, "/proc/sys/net/ipv4/tcp_max_tw_buckets", "100") ==
                  0);
        l = tcp_listen(7072);
        struct sockaddr_in sin = { .sin_family = AF_INET,
                                   .sin_port = htons(7072),
                                   .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        int c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        cr_assert(connect(c, (struct sockaddr *) &sin, sizeof(sin)) == 0);
        int a = accept4(l, NULL, NULL, SOCK_CLOEXEC);
        cr_assert(a >= 0);
        safe_close(c);
        (void) nanosleep(&(struct timespec){ 0, 20 * 1000 * 1000 }, NULL);
        safe_close(a);
        safe_close(l);
        cr_assert(kept_netns_leave(K) == 0);
        int r = kept_netns_check(K, what, sizeof(what));
        cr_assert_eq(r, -EBUSY, "%d %s", r, what);
        cr_assert(strstr(what, "TIME_WAIT"), "%s", what);
}

/* The daemon's own sockets in a kept namespace (kept_netns_socket(), how
 * the frontend reaches the env server): they connect to what listens
 * there, never to the same port in the caller's namespace, leave the
 * caller where it was, and count in the check until closed. */
Test(netns_keep, kept_socket_reaches_the_namespace_only)
{
        char what[128];
        struct stat home, after;
        require_root();
        cr_assert(kept_netns_new(&K) == 0);
        cr_assert(stat("/proc/thread-self/ns/net", &home) == 0);

        int outside = tcp_listen(7074);
        cr_assert(fcntl(outside, F_SETFL, O_NONBLOCK) == 0);
        cr_assert(kept_netns_enter(K) == 0);
        int inside = tcp_listen(7074);
        cr_assert(kept_netns_leave(K) == 0);

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

        cr_assert_eq(kept_netns_check(K, what, sizeof(what)), -EBUSY);
        cr_assert(strstr(what, "TCP"), "%s", what);
        safe_close(c);
        /* Both ends closed: the loopback FIN exchange may take a moment. */
        for (int i = 0; i < 100 && (r = kept_netns_check(K, what, sizeof(what))) < 0; i++)
                (void) nanosleep(&(struct timespec){ 0, 10 * 1000 * 1000 }, NULL);
        cr_assert_eq(r, 0, "%d %s", r, what);
}

/* A seccomp profile without setns() (Docker's, narrowed: deploy/docker/)
 * must cost the reuse, never the daemon: kept_netns_new() refuses before
 * leaving home, and the caller stays in its own namespace. */
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
