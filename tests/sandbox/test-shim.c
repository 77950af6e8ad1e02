/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * openenvd-shim as PID 1 of real containers: exit status propagation,
 * signal forwarding, orphan reaping and the forwarders (both directions,
 * half-close, a 1 MiB payload, a missing upstream).
 */
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>

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

Test(shim, forward_unix_to_tcp_1mib)
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
        cleanup_close int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        cr_assert(fd >= 0);
        cr_assert(connect(fd, (struct sockaddr *) &sun, sizeof(sun)) == 0, "%s", strerror(errno));

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
