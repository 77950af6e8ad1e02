/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * openenvd-shim as PID 1 of real containers: exit status propagation,
 * signal forwarding, orphan reaping and the forwarders (both directions,
 * half-close, a 1 MiB payload, a missing upstream, no Nagle delay).
 */
#include <dirent.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>

#include "base/parse-util.h"
#include "sandbox-test.h"

TestSuite(shim, .fini = box_fini, .timeout = 60);

#define MIB (1024 * 1024)

Test(shim, exit_status_propagates)
{
        box_init();
        B.argv[1] = (char *) "exit";
        B.argv[2] = (char *) "3";
        box_start();
        cr_assert_eq(box_wait(), 3);
}

Test(shim, killed_principal_is_128_plus_signal)
{
        box_init();
        B.argv[1] = (char *) "kill-self";
        B.argv[2] = (char *) "9";
        box_start();
        cr_assert_eq(box_wait(), 137);
}

Test(shim, missing_principal_is_127)
{
        box_init();
        B.argv[0] = (char *) "/nonexistent/principal";
        box_start();
        cr_assert_eq(box_wait(), 127);
        cr_assert(strstr(B.out, "openenvd-shim: failed to start the principal"), "%s", B.out);
}

/* The shim blocks every signal it handles (signalfd) and is PID 1; the
 * principal must start with none blocked, leading its own session (so a
 * forwarded signal reaches its whole group). */
Test(shim, principal_starts_unblocked_in_its_own_session)
{
        box_init();
        B.argv[1] = (char *) "start-state";
        box_start();
        cr_assert_eq(box_wait(), 0, "output: %s", B.out);
        cr_assert(strstr(B.out, "result: blocked none leader yes sigpipe default"), "%s", B.out);
}

/* The same under a caller that, like the daemon's loop, blocks SIGCHLD,
 * SIGTERM and SIGINT and ignores SIGPIPE: both survive an exec, and the
 * launcher undoes them (a principal deaf to the shim's SIGTERM; a template
 * that never reaped its copies). */
Test(shim, principal_starts_without_the_callers_blocked_or_ignored_signals)
{
        sigset_t mask;
        sigemptyset(&mask);
        sigaddset(&mask, SIGCHLD);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        cr_assert(sigprocmask(SIG_BLOCK, &mask, NULL) == 0);
        cr_assert(signal(SIGPIPE, SIG_IGN) != SIG_ERR);
        box_init();
        B.argv[1] = (char *) "start-state";
        box_start();
        cr_assert_eq(box_wait(), 0, "output: %s", B.out);
        cr_assert(strstr(B.out, "result: blocked none leader yes sigpipe default"), "%s", B.out);
}

Test(shim, sigterm_forwarded)
{
        box_init();
        B.argv[1] = (char *) "wait-term";
        box_start();
        cr_assert(box_read_until("result: ready"));
        cr_assert_eq(container_kill(B.c, SIGTERM), 0);
        cr_assert_eq(box_wait(), 42, "output: %s", B.out);
        cr_assert(strstr(B.out, "result: got TERM"), "%s", B.out);
}

Test(shim, orphans_reaped)
{
        box_init();
        B.argv[1] = (char *) "orphan";
        box_start();
        cr_assert_eq(box_wait(), 0, "output: %s", B.out);
        cr_assert(streq(box_result(), "reaped"), "%s", B.out);
}

/* A one-shot echo server on a unix socket, in a child process: reads to EOF,
 * writes everything back, closes. Returns its pid. */
static pid_t unix_echo_server(const char *path)
{
        struct sockaddr_un sun = { .sun_family = AF_UNIX };
        cr_assert(strlen(path) < sizeof(sun.sun_path));
        memcpy(sun.sun_path, path, strlen(path) + 1);
        int l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        cr_assert(l >= 0);
        cr_assert(bind(l, (struct sockaddr *) &sun, sizeof(sun)) == 0);
        cr_assert(chmod(path, 0666) == 0);
        cr_assert(listen(l, 4) == 0);
        pid_t pid = fork();
        cr_assert(pid >= 0);
        if (pid == 0) {
                int c = accept4(l, NULL, NULL, SOCK_CLOEXEC);
                size_t cap = 2 * MIB, len = 0;
                char *buf = malloc(cap);
                if (c < 0 || !buf)
                        _exit(1);
                for (;;) {
                        ssize_t n = read(c, buf + len, cap - len);
                        if (n <= 0)
                                break;
                        len += (size_t) n;
                }
                _exit(write_all(c, buf, len) < 0 ? 1 : 0);
        }
        close(l);
        return pid;
}

static void tcp_to_unix_round_trip(const char *bytes)
{
        box_init();
        cleanup_free char *path = xasprintf("%s/echo.sock", B.sockdir);
        pid_t server = unix_echo_server(path);
        B.forwards[0] = (struct forward){ .kind = FORWARD_TCP_TO_UNIX,
                                          .host = (char *) "127.0.0.1",
                                          .port = 8000,
                                          .path = (char *) "/run/openenvd/echo.sock" };
        B.spec.n_forwards = 1;
        cleanup_free char *want = xasprintf("sent %s received %s same", bytes, bytes);
        const char *got = box_attack("tcp-client", "8000", bytes);
        cr_assert(streq(got, want), "got \"%s\"", got);
        int st;
        cr_assert_eq(waitpid(server, &st, 0), server);
        cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

Test(shim, forward_tcp_to_unix_half_close)
{
        tcp_to_unix_round_trip("11");
}

Test(shim, forward_tcp_to_unix_1mib)
{
        tcp_to_unix_round_trip("1048576");
}

/* A tcp-echo principal on 127.0.0.1:9000 behind a unix-to-tcp forwarder at
 * in.sock: a client connected to that socket. */
static int connect_unix_to_tcp_echo(void)
{
        box_init();
        B.forwards[0] = (struct forward){ .kind = FORWARD_UNIX_TO_TCP,
                                          .host = (char *) "127.0.0.1",
                                          .port = 9000,
                                          .path = (char *) "/run/openenvd/in.sock" };
        B.spec.n_forwards = 1;
        B.argv[1] = (char *) "tcp-echo";
        B.argv[2] = (char *) "9000";
        box_start();
        /* The shim listens before the principal starts; the principal's TCP
         * listener is up once it says so. */
        cr_assert(box_read_until("result: ready"));

        struct sockaddr_un sun = { .sun_family = AF_UNIX };
        (void) snprintf(sun.sun_path, sizeof(sun.sun_path), "%s/in.sock", B.sockdir);
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        cr_assert(fd >= 0);
        cr_assert(connect(fd, (struct sockaddr *) &sun, sizeof(sun)) == 0, "%s", strerror(errno));
        return fd;
}

Test(shim, forward_unix_to_tcp_1mib)
{
        cleanup_close int fd = connect_unix_to_tcp_echo();

        cleanup_free char *buf = xmalloc(MIB), *back = xmalloc(MIB + 1);
        for (size_t i = 0; i < MIB; i++)
                buf[i] = (char) (i * 13 + i / 509);
        /* The echo reads to EOF before answering: write all, half-close. A
         * child writes so that the reply can flow while we send. */
        pid_t w = fork();
        cr_assert(w >= 0);
        if (w == 0)
                _exit(write_all(fd, buf, MIB) < 0 || shutdown(fd, SHUT_WR) < 0 ? 1 : 0);
        size_t got = 0;
        for (;;) {
                ssize_t n = read(fd, back + got, MIB + 1 - got);
                cr_assert(n >= 0);
                if (n == 0)
                        break;
                got += (size_t) n;
                if (got > MIB)
                        break;
        }
        int st;
        cr_assert_eq(waitpid(w, &st, 0), w);
        cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
        /* The principal reports, then stays up until told (the container
         * ends with it). */
        cr_assert(box_read_until("result: echoed 1048576"), "%s", B.out);
        cr_assert_eq(container_kill(B.c, SIGTERM), 0);
        int status = box_wait();
        cr_assert_eq(got, (size_t) MIB, "got %zu bytes back, output: %s", got, B.out);
        cr_assert(memcmp(buf, back, MIB) == 0);
        cr_assert_eq(status, 128 + SIGTERM, "output: %s", B.out);
}

/* TCP sockets of pid (connected ones, not listeners): how many, and how
 * many of them have TCP_NODELAY. Read through pidfd_getfd() (we are root). */
static void tcp_sockets_of(pid_t pid, unsigned *ret_n, unsigned *ret_nodelay)
{
        cleanup_free char *dir = xasprintf("/proc/%d/fd", (int) pid);
        cleanup_close int pidfd = (int) syscall(SYS_pidfd_open, pid, 0);
        DIR *d = opendir(dir);
        struct dirent *de;

        cr_assert(pidfd >= 0 && d);
        *ret_n = *ret_nodelay = 0;
        while ((de = readdir(d))) {
                int one = 0, proto = 0, listening = 0;
                socklen_t l1 = sizeof(one), l2 = sizeof(proto), l3 = sizeof(listening);
                unsigned target;
                if (parse_uint(de->d_name, 0, INT_MAX, &target) < 0)
                        continue;
                cleanup_close int fd = (int) syscall(SYS_pidfd_getfd, pidfd, (int) target, 0);
                if (fd < 0 || getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &proto, &l2) < 0 ||
                    proto != IPPROTO_TCP ||
                    getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &l3) < 0 || listening)
                        continue;
                (*ret_n)++;
                if (getsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, &l1) == 0 && one)
                        (*ret_nodelay)++;
        }
        closedir(d);
}

/*
 * Every forwarded write is a message (an HTTP head, a WebSocket frame) that
 * a peer waits for: the shim's TCP side must not hold a small write back
 * under Nagle until the previous one is acknowledged (an HTTP server that
 * writes head and body apart made every relayed step ~1 ms slower). Seen
 * from the host: the shim's connection to the principal has TCP_NODELAY.
 */
Test(shim, forwarded_tcp_connections_have_nodelay)
{
        cleanup_close int fd = connect_unix_to_tcp_echo();
        cr_assert_eq(write(fd, "x", 1), 1);
        /* The shim connects upstream once it accepted us. */
        unsigned n = 0, nodelay = 0;
        for (int i = 0; i < 5000 && n == 0; i++) {
                tcp_sockets_of(container_pid(B.c), &n, &nodelay);
                if (n == 0)
                        (void) poll(NULL, 0, 1);
        }
        cr_assert_eq(n, 1u, "the shim holds %u connected TCP socket(s)", n);
        cr_assert_eq(nodelay, 1u, "the shim's connection to the principal has no TCP_NODELAY");
        cr_assert(shutdown(fd, SHUT_WR) == 0);
        cr_assert(box_read_until("result: echoed 1"), "%s", B.out);
        cr_assert_eq(container_kill(B.c, SIGTERM), 0);
        cr_assert_eq(box_wait(), 128 + SIGTERM, "output: %s", B.out);
}

Test(shim, forward_without_upstream_closes_client)
{
        box_init();
        B.forwards[0] = (struct forward){ .kind = FORWARD_TCP_TO_UNIX,
                                          .host = (char *) "127.0.0.1",
                                          .port = 8000,
                                          .path = (char *) "/run/openenvd/nobody.sock" };
        B.spec.n_forwards = 1;
        /* The client connects (the kernel accepts), the shim finds nobody
         * upstream and closes: the client reads EOF, or a reset if its
         * write raced the close. Never any data. */
        const char *got = box_attack("tcp-client", "8000", "5");
        cr_assert(streq(got, "sent 5 received 0 different") || streq(got, "denied ECONNRESET") ||
                          streq(got, "denied EPIPE") || streq(got, "denied ENOTCONN"),
                  "got \"%s\"", got);
}

/* A listening unix socket bound in a root-only directory the container never
 * sees: the daemon's side of socket activation. */
static int private_listener(char *dir_tmpl, char **ret_path)
{
        struct sockaddr_un sun = { .sun_family = AF_UNIX };
        cr_assert(mkdtemp(dir_tmpl));
        cr_assert(chmod(dir_tmpl, 0700) == 0);
        *ret_path = xasprintf("%s/env.sock", dir_tmpl);
        memcpy(sun.sun_path, *ret_path, strlen(*ret_path) + 1);
        int l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        cr_assert(l >= 0);
        cr_assert(bind(l, (struct sockaddr *) &sun, sizeof(sun)) == 0);
        cr_assert(listen(l, 16) == 0);
        return l;
}

static bool notified(int fd, int timeout_ms)
{
        struct pollfd p = { .fd = fd, .events = POLLIN };
        char buf[16] = "";
        if (poll(&p, 1, timeout_ms) != 1)
                return false;
        ssize_t n = read(fd, buf, sizeof(buf) - 1);
        cr_assert(n > 0, "notify pipe: %zd", n);
        cr_assert_str_eq(buf, "READY=1\n");
        return true;
}

/*
 * Socket activation: the daemon's listening socket, inherited as fd 3, is
 * forwarded to the principal's TCP port; READY arrives on the notify pipe
 * only once the principal listens; the principal holds neither fd.
 */
Test(shim, fd_to_tcp_with_readiness_notification)
{
        char dir[] = "/tmp/oe-sbx-priv-XXXXXX";
        cleanup_free char *path = NULL;
        int pass[2], notify[2];

        box_init();
        pass[0] = private_listener(dir, &path);
        cr_assert(pipe2(notify, O_CLOEXEC) == 0);
        pass[1] = notify[1];
        B.spec.pass_fds = pass;
        B.spec.n_pass_fds = 2;
        B.spec.notify = true;
        B.spec.notify_pass_index = 1;
        B.forwards[0] = (struct forward){ .kind = FORWARD_FD_TO_TCP,
                                          .host = (char *) "127.0.0.1",
                                          .port = 9000,
                                          .pass_index = 0 };
        B.spec.n_forwards = 1;
        B.argv[1] = (char *) "tcp-echo";
        B.argv[2] = (char *) "9000";
        box_start();
        safe_close(notify[1]);
        safe_close(pass[0]);
        cr_assert(box_read_until("result: ready"));
        cr_assert(notified(notify[0], 10000), "no READY although the principal listens");

        struct sockaddr_un sun = { .sun_family = AF_UNIX };
        memcpy(sun.sun_path, path, strlen(path) + 1);
        cleanup_close int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        cr_assert(connect(fd, (struct sockaddr *) &sun, sizeof(sun)) == 0, "%s", strerror(errno));
        cr_assert(write_all(fd, "hello", 5) == 0 && shutdown(fd, SHUT_WR) == 0);
        char back[16] = "";
        size_t got = 0;
        for (ssize_t n; (n = read(fd, back + got, sizeof(back) - 1 - got)) > 0;)
                got += (size_t) n;
        cr_assert_str_eq(back, "hello");
        cr_assert(box_read_until("result: echoed 5"), "%s", B.out);
        cr_assert_eq(container_kill(B.c, SIGTERM), 0);
        (void) box_wait();
        safe_close(notify[0]);
        (void) unlink(path);
        (void) rmdir(dir);
}

Test(shim, no_ready_while_nothing_listens_and_principal_inherits_no_fd)
{
        char dir[] = "/tmp/oe-sbx-priv-XXXXXX";
        cleanup_free char *path = NULL;
        int pass[2], notify[2];

        box_init();
        pass[0] = private_listener(dir, &path);
        cr_assert(pipe2(notify, O_CLOEXEC) == 0);
        pass[1] = notify[1];
        B.spec.pass_fds = pass;
        B.spec.n_pass_fds = 2;
        B.spec.notify = true;
        B.spec.notify_pass_index = 1;
        B.forwards[0] = (struct forward){ .kind = FORWARD_FD_TO_TCP,
                                          .host = (char *) "127.0.0.1",
                                          .port = 9000,
                                          .pass_index = 0 };
        B.spec.n_forwards = 1;
        /* The principal lists its fds and exits without ever listening. */
        const char *got = box_attack("fds", NULL, NULL);
        cr_assert_str_eq(got, "fds 0 1 2");
        safe_close(notify[1]);
        safe_close(pass[0]);
        /* The shim exited with it: EOF, never READY. */
        char buf[16];
        cr_assert_eq(read(notify[0], buf, sizeof(buf)), 0);
        safe_close(notify[0]);
        (void) unlink(path);
        (void) rmdir(dir);
}

/* A container made ahead of its turn: the shim holds its principal at the
 * gate until the daemon releases it, with what the release says in the
 * environment; the principal inherits neither the gate nor anything else. */
static void gated_box(int gate[2], const char *attack, const char *x)
{
        box_init();
        cr_assert(pipe2(gate, O_CLOEXEC) == 0);
        B.spec.pass_fds = &gate[0];
        B.spec.n_pass_fds = 1;
        B.spec.gate = true;
        B.spec.gate_pass_index = 0;
        B.argv[1] = (char *) attack;
        B.argv[2] = (char *) x;
        box_start();
        gate[0] = safe_close(gate[0]);
}

Test(shim, gated_principal_starts_only_when_released)
{
        int gate[2];
        struct pollfd p = { .events = POLLIN };

        gated_box(gate, "env", "OPENENVD_ACTIONS");
        /* Held: nothing printed, the shim alive. */
        p.fd = B.out_r;
        cr_assert_eq(poll(&p, 1, 300), 0, "the principal ran before its release: %s", B.out);
        cr_assert_eq(container_kill(B.c, 0), 0);
        static const char release[] = "OPENENVD_ACTIONS=7\nOPENENVD_PHASE=grading\n\n";
        cr_assert(write_all(gate[1], release, strlen(release)) == 0);
        safe_close(gate[1]);
        cr_assert_eq(box_wait(), 0, "%s", B.out);
        cr_assert(strstr(B.out, "result: env OPENENVD_ACTIONS=7"), "%s", B.out);
}

Test(shim, gated_principal_inherits_no_gate)
{
        int gate[2];

        gated_box(gate, "fds", NULL);
        cr_assert(write_all(gate[1], "\n", 1) == 0);
        safe_close(gate[1]);
        cr_assert_eq(box_wait(), 0, "%s", B.out);
        cr_assert_str_eq(box_result(), "fds 0 1 2");
}

Test(shim, gate_closed_without_release_starts_nothing)
{
        int gate[2];

        gated_box(gate, "env", "HOME");
        /* Half a release, then the daemon gives the container up. */
        cr_assert(write_all(gate[1], "OPENENVD_ACTIONS=7\n", 19) == 0);
        safe_close(gate[1]);
        cr_assert_eq(box_wait(), 126, "%s", B.out);
        cr_assert(strstr(B.out, "openenvd-shim: not released"), "%s", B.out);
        cr_assert(!strstr(B.out, "result:"), "%s", B.out);
}

Test(shim, gate_refuses_a_malformed_release)
{
        int gate[2];

        gated_box(gate, "env", "HOME");
        cr_assert(write_all(gate[1], "1BAD=x\n\n", 9) == 0);
        safe_close(gate[1]);
        cr_assert_eq(box_wait(), 126, "%s", B.out);
        cr_assert(strstr(B.out, "openenvd-shim: bad release message"), "%s", B.out);
        cr_assert(!strstr(B.out, "result:"), "%s", B.out);
}

Test(shim, inherited_fd_must_be_a_listening_socket)
{
        int pass[1], p[2];

        box_init();
        cr_assert(pipe2(p, O_CLOEXEC) == 0);
        pass[0] = p[0]; /* a pipe, not a listener */
        B.spec.pass_fds = pass;
        B.spec.n_pass_fds = 1;
        B.forwards[0] = (struct forward){ .kind = FORWARD_FD_TO_TCP,
                                          .host = (char *) "127.0.0.1",
                                          .port = 9000,
                                          .pass_index = 0 };
        B.spec.n_forwards = 1;
        box_start();
        cr_assert_eq(box_wait(), 126);
        cr_assert(strstr(B.out, "openenvd-shim: bad option --fd-to-tcp 3=127.0.0.1:9000"), "%s",
                  B.out);
        safe_close(p[0]);
        safe_close(p[1]);
}

/* --- the shim run directly: --pass-fd, --adopt-fd, --linger --------------- */

/* An fd of ours that the shim gets at another number. */
struct placed {
        int fd, at;
};

/*
 * openenvd-shim as PID 1 of a new pid namespace, without a container
 * (clone(CLONE_NEWPID) used as fork(): we stay outside and are its parent).
 * The fds in `fds` arrive at their `at` numbers, not CLOEXEC.
 */
static pid_t shim_run(char **argv, const struct placed *fds, size_t n)
{
        require_root();
        pid_t pid = (pid_t) syscall(SYS_clone, CLONE_NEWPID | SIGCHLD, 0, 0, 0, 0);
        cr_assert(pid >= 0, "clone: %s", strerror(errno));
        if (pid == 0) {
                int tmp[4];
                /* Out of the way first, so no target overwrites a source. */
                for (size_t i = 0; i < n; i++)
                        if ((tmp[i] = fcntl(fds[i].fd, F_DUPFD_CLOEXEC, 100)) < 0)
                                _exit(125);
                for (size_t i = 0; i < n; i++)
                        if (dup2(tmp[i], fds[i].at) < 0)
                                _exit(125);
                execv(SHIM_PATH, argv);
                _exit(125);
        }
        return pid;
}

/* The shim's exit status; fails after 10 s. */
static int shim_wait(pid_t pid)
{
        cleanup_close int pidfd = (int) syscall(SYS_pidfd_open, pid, 0);
        struct pollfd p = { .fd = pidfd, .events = POLLIN };
        int st;

        cr_assert(pidfd >= 0);
        if (poll(&p, 1, 10000) != 1) {
                (void) kill(pid, SIGKILL);
                (void) waitpid(pid, NULL, 0);
                cr_assert_fail("the shim did not exit");
        }
        cr_assert_eq(waitpid(pid, &st, 0), pid);
        cr_assert(WIFEXITED(st), "status %#x", st);
        return WEXITSTATUS(st);
}

/* Until the shim blocks sig (its setup_signals()): before that, as its
 * namespace's init, it would drop it. Within 10 s. */
static void wait_signal_blocked(pid_t shim, int sig)
{
        cleanup_free char *path = xasprintf("/proc/%d/status", (int) shim);

        for (int i = 0; i < 1000; i++) {
                cleanup_free char *status = NULL;
                unsigned long long mask;
                const char *l;
                if (read_full_file_at(AT_FDCWD, path, 65536, &status, NULL) >= 0 &&
                    (l = strstr(status, "\nSigBlk:")) && sscanf(l + 8, "%llx", &mask) == 1 &&
                    mask & (1ULL << (sig - 1)))
                        return;
                (void) poll(NULL, 0, 10);
        }
        cr_assert_fail("the shim never blocked signal %d", sig);
}

static bool shim_alive_after(pid_t pid, int ms)
{
        (void) poll(NULL, 0, ms);
        return waitpid(pid, NULL, WNOHANG) == 0;
}

/* Everything until EOF (at most size - 1 bytes), NUL-terminated. */
static void read_to_eof(int fd, char *buf, size_t size)
{
        size_t got = 0;
        for (ssize_t n; got < size - 1 && (n = read(fd, buf + got, size - 1 - got)) > 0;)
                got += (size_t) n;
        buf[got] = '\0';
}

static void pass_fd_run(bool pass, char *out, size_t size, int *ret_status)
{
        int p[2];
        char *argv[] = { (char *) SHIM_PATH,     (char *) "--pass-fd",
                         (char *) "5",           (char *) "--",
                         (char *) "/bin/sh",     (char *) "-c",
                         (char *) "echo hi >&5", NULL };

        cr_assert(pipe2(p, O_CLOEXEC) == 0);
        if (!pass)
                argv[2] = (char *) SHIM_PATH; /* argv + 2: without --pass-fd */
        pid_t pid = shim_run(pass ? argv : argv + 2, &(struct placed){ p[1], 5 }, 1);
        safe_close(p[1]);
        read_to_eof(p[0], out, size);
        safe_close(p[0]);
        *ret_status = shim_wait(pid);
}

Test(shim, pass_fd_reaches_the_principal_at_its_number)
{
        char out[64];
        int status;

        pass_fd_run(true, out, sizeof(out), &status);
        cr_assert_eq(status, 0);
        cr_assert_str_eq(out, "hi\n");
}

/* The same fd handed to the shim, but named by no option: the principal
 * does not get it (sh fails on a bad fd). */
Test(shim, fd_without_pass_fd_is_not_the_principals)
{
        char out[64];
        int status;

        pass_fd_run(false, out, sizeof(out), &status);
        cr_assert_neq(status, 0);
        cr_assert_str_eq(out, "");
}

/* Once the principal started, the shim holds no copy: the principal
 * closing its own is the writer's end. */
Test(shim, pass_fd_closed_by_the_shim_once_the_principal_runs)
{
        int p[2];
        char out[64];
        char *argv[] = { (char *) SHIM_PATH,
                         (char *) "--pass-fd",
                         (char *) "5",
                         (char *) "--",
                         (char *) "/bin/sh",
                         (char *) "-c",
                         (char *) "echo hi >&5; exec 5>&-; "
                                  "exec sleep 10",
                         NULL };

        cr_assert(pipe2(p, O_CLOEXEC) == 0);
        pid_t pid = shim_run(argv, &(struct placed){ p[1], 5 }, 1);
        safe_close(p[1]);
        read_to_eof(p[0], out, sizeof(out));
        safe_close(p[0]);
        cr_assert_str_eq(out, "hi\n");
        cr_assert(shim_alive_after(pid, 0), "EOF only because the shim exited");
        cr_assert_eq(kill(pid, SIGTERM), 0);
        cr_assert_eq(shim_wait(pid), 128 + SIGTERM);
}

Test(shim, pass_fd_refuses_a_closed_or_claimed_fd)
{
        int p[2];
        char *closed[] = { (char *) SHIM_PATH, (char *) "--pass-fd", (char *) "9",
                           (char *) "--",      (char *) "/bin/true", NULL };
        char *claimed[] = { (char *) SHIM_PATH,   (char *) "--notify-fd",
                            (char *) "5",         (char *) "--pass-fd",
                            (char *) "5",         (char *) "--",
                            (char *) "/bin/true", NULL };

        cr_assert(pipe2(p, O_CLOEXEC) == 0);
        cr_assert_eq(shim_wait(shim_run(closed, &(struct placed){ p[1], 5 }, 1)), 126);
        cr_assert_eq(shim_wait(shim_run(claimed, &(struct placed){ p[1], 5 }, 1)), 126);
        safe_close(p[0]);
        safe_close(p[1]);
}

Test(shim, linger_outlives_the_principal_until_sigterm)
{
        char *argv[] = { (char *) SHIM_PATH, (char *) "--linger", (char *) "--", (char *) "/bin/sh",
                         (char *) "-c",      (char *) "exit 3",   NULL };
        pid_t pid = shim_run(argv, NULL, 0);

        cr_assert(shim_alive_after(pid, 200), "the shim left with its principal");
        wait_signal_blocked(pid, SIGTERM);
        cr_assert_eq(kill(pid, SIGTERM), 0);
        cr_assert_eq(shim_wait(pid), 3, "not the principal's status");
}

Test(shim, linger_with_true_exits_0_on_sigterm)
{
        char *argv[] = { (char *) SHIM_PATH, (char *) "--linger", (char *) "--",
                         (char *) "/bin/true", NULL };
        pid_t pid = shim_run(argv, NULL, 0);

        cr_assert(shim_alive_after(pid, 200), "the shim left with its principal");
        wait_signal_blocked(pid, SIGTERM);
        cr_assert_eq(kill(pid, SIGTERM), 0);
        cr_assert_eq(shim_wait(pid), 0);
}

/* What the adopted process does once its pid is written. */
enum adoptee {
        ADOPTEE_EXIT_7_LATER,   /* sleeps 0.2 s, exits 7 */
        ADOPTEE_EXIT_7_AT_ONCE, /* exits 7 right after writing */
        ADOPTEE_KILLED,         /* SIGKILLs itself after 0.1 s */
        ADOPTEE_TERM_IS_3,      /* waits for SIGTERM, exits 3 */
};

static void on_term_exit_3(int sig)
{
        (void) sig;
        _exit(3);
}

static noreturn_fn void adoptee_run(enum adoptee what, int pid_w, int ready_w)
{
        char line[16];
        int n;

        if (what == ADOPTEE_TERM_IS_3)
                (void) signal(SIGTERM, on_term_exit_3);
        /* Its own session: the shim forwards signals to its group. */
        if (setsid() < 0)
                _exit(100);
        n = snprintf(line, sizeof(line), "%d\n", (int) getpid());
        if (write_all(pid_w, line, (size_t) n) < 0)
                _exit(101);
        close(pid_w);
        (void) !write(ready_w, "r", 1);
        close(ready_w);
        switch (what) {
        case ADOPTEE_EXIT_7_LATER:
                (void) poll(NULL, 0, 200);
                _exit(7);
        case ADOPTEE_EXIT_7_AT_ONCE:
                _exit(7);
        case ADOPTEE_KILLED:
                (void) poll(NULL, 0, 100);
                (void) kill(getpid(), SIGKILL);
                _exit(102);
        case ADOPTEE_TERM_IS_3:
                for (;;)
                        pause();
        }
        _exit(103);
}

/*
 * A process born in the shim's pid namespace elsewhere, handed over: P
 * joins the namespace with setns() (which places only its children there)
 * and forks G, which forks the adoptee and exits, so the kernel reparents
 * the adoptee to the namespace's init, the shim. (A child of P itself would
 * go to P's own reaper outside when P exits: reparenting follows the dying
 * parent's namespace, not the child's.) Returns once G is gone; ready_w
 * gets a byte once the pid is written.
 */
static void adopt_handover(pid_t shim, int pid_w, int ready_w, enum adoptee what)
{
        cleanup_free char *ns = xasprintf("/proc/%d/ns/pid", (int) shim);
        int st;
        pid_t p = fork();

        cr_assert(p >= 0);
        if (p == 0) {
                int fd = open(ns, O_RDONLY | O_CLOEXEC);
                if (fd < 0 || setns(fd, CLONE_NEWPID) < 0)
                        _exit(1);
                pid_t g = fork();
                if (g == 0) {
                        if (fork() == 0)
                                adoptee_run(what, pid_w, ready_w);
                        _exit(0);
                }
                _exit(g > 0 && waitpid(g, &st, 0) == g ? 0 : 1);
        }
        cr_assert_eq(waitpid(p, &st, 0), p);
        cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* A shim with --adopt-fd 5 (the read end of *ret_w's pipe) and --linger
 * or not; the pipe's write end stays with the caller. */
static pid_t adopt_shim(bool linger, int *ret_w)
{
        int p[2];
        char *argv[] = { (char *) SHIM_PATH, (char *) "--adopt-fd", (char *) "5", NULL, NULL };

        if (linger)
                argv[3] = (char *) "--linger";
        cr_assert(pipe2(p, O_CLOEXEC) == 0);
        pid_t pid = shim_run(argv, &(struct placed){ p[0], 5 }, 1);
        safe_close(p[0]);
        *ret_w = p[1];
        return pid;
}

static int adopt_status(enum adoptee what)
{
        int w, ready[2];
        char c;
        pid_t shim = adopt_shim(false, &w);

        cr_assert(pipe2(ready, O_CLOEXEC) == 0);
        adopt_handover(shim, w, ready[1], what);
        safe_close(w);
        safe_close(ready[1]);
        cr_assert_eq(read(ready[0], &c, 1), 1, "the adoptee never wrote its pid");
        safe_close(ready[0]);
        if (what == ADOPTEE_TERM_IS_3) {
                wait_signal_blocked(shim, SIGTERM);
                cr_assert_eq(kill(shim, SIGTERM), 0);
        }
        return shim_wait(shim);
}

Test(shim, adopted_process_exit_status_is_the_shims)
{
        cr_assert_eq(adopt_status(ADOPTEE_EXIT_7_LATER), 7);
}

Test(shim, adopted_process_killed_is_128_plus_signal)
{
        cr_assert_eq(adopt_status(ADOPTEE_KILLED), 128 + SIGKILL);
}

Test(shim, adopted_process_exiting_at_once_is_still_the_principal)
{
        cr_assert_eq(adopt_status(ADOPTEE_EXIT_7_AT_ONCE), 7);
}

Test(shim, sigterm_forwarded_to_the_adopted_process)
{
        cr_assert_eq(adopt_status(ADOPTEE_TERM_IS_3), 3);
}

/*
 * The pid arrives only after the adoptee is dead and reaped as an orphan:
 * the shim remembers what it reaped. Here the pid goes through a relay pipe
 * we hold, written once the adoptee's end of `alive` closed.
 */
Test(shim, adopt_pid_arriving_after_the_exit)
{
        int w, relay[2], alive[2];
        char line[32];
        pid_t shim = adopt_shim(false, &w);

        cr_assert(pipe2(relay, O_CLOEXEC) == 0 && pipe2(alive, O_CLOEXEC) == 0);
        adopt_handover(shim, relay[1], alive[1], ADOPTEE_EXIT_7_AT_ONCE);
        safe_close(relay[1]);
        safe_close(alive[1]);
        read_to_eof(alive[0], line, sizeof(line)); /* EOF: it exited */
        read_to_eof(relay[0], line, sizeof(line));
        /* Time for the shim to reap it first (no assertion rests on it). */
        (void) poll(NULL, 0, 100);
        cr_assert(shim_alive_after(shim, 0), "the shim left before the pid arrived");
        cr_assert(write_all(w, line, strlen(line)) == 0);
        safe_close(w);
        safe_close(relay[0]);
        safe_close(alive[0]);
        cr_assert_eq(shim_wait(shim), 7);
}

/* The shim refuses to go on (126) and says why on stderr; close_after_start
 * is our end of a pipe it reads. */
static void shim_fails(char **argv, struct placed *fds, size_t n, int close_after_start,
                       const char *message)
{
        int err[2];
        char out[512];

        cr_assert(pipe2(err, O_CLOEXEC) == 0);
        fds[n] = (struct placed){ err[1], 2 };
        pid_t pid = shim_run(argv, fds, n + 1);
        safe_close(err[1]);
        safe_close(close_after_start);
        int status = shim_wait(pid); /* first: bounded */
        read_to_eof(err[0], out, sizeof(out));
        safe_close(err[0]);
        cr_assert_eq(status, 126, "%s", out);
        cr_assert(strstr(out, message), "%s", out);
}

Test(shim, adopt_eof_without_a_pid_is_126)
{
        int p[2];
        char *argv[] = { (char *) SHIM_PATH, (char *) "--adopt-fd", (char *) "5", NULL };
        struct placed fds[2];

        cr_assert(pipe2(p, O_CLOEXEC) == 0);
        fds[0] = (struct placed){ p[0], 5 };
        shim_fails(argv, fds, 1, p[1], "openenvd-shim: no process to adopt");
        safe_close(p[0]);
}

Test(shim, adopt_malformed_pid_is_126)
{
        int p[2];
        char *argv[] = { (char *) SHIM_PATH, (char *) "--adopt-fd", (char *) "5", NULL };
        struct placed fds[2];

        cr_assert(pipe2(p, O_CLOEXEC) == 0);
        cr_assert(write_all(p[1], "12x\n", 4) == 0);
        fds[0] = (struct placed){ p[0], 5 };
        shim_fails(argv, fds, 1, p[1], "openenvd-shim: malformed pid to adopt");
        safe_close(p[0]);
}

Test(shim, adopt_fd_with_a_principal_is_refused)
{
        int p[2];
        char *argv[] = { (char *) SHIM_PATH, (char *) "--adopt-fd", (char *) "5",
                         (char *) "--",      (char *) "/bin/true",  NULL };
        struct placed fds[2];

        cr_assert(pipe2(p, O_CLOEXEC) == 0);
        fds[0] = (struct placed){ p[0], 5 };
        shim_fails(argv, fds, 1, p[1], "openenvd-shim: --adopt-fd starts no principal");
        safe_close(p[0]);
}

Test(shim, adopt_fd_with_a_gate_is_refused)
{
        int p[2], g[2];
        char *argv[] = { (char *) SHIM_PATH,    (char *) "--gate-fd", (char *) "6",
                         (char *) "--adopt-fd", (char *) "5",         NULL };
        struct placed fds[3];

        cr_assert(pipe2(p, O_CLOEXEC) == 0 && pipe2(g, O_CLOEXEC) == 0);
        fds[0] = (struct placed){ p[0], 5 };
        fds[1] = (struct placed){ g[0], 6 };
        shim_fails(argv, fds, 2, p[1], "openenvd-shim: --adopt-fd starts no principal");
        safe_close(p[0]);
        safe_close(g[0]);
        safe_close(g[1]);
}
