/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench-upstream: the benchmark upstream (upstream.h) as a program, for
 * bench/unit/ (the env server and the service of the bench unit run it in
 * their containers).
 *
 *   bench-upstream [--tcp PORT]... [--unix PATH]... [--step-done]
 *
 * TCP listeners bind 127.0.0.1 (inside a container: its own loopback, which
 * the shim bridges to the daemon's socket).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include "base/parse-util.h"
#include "base/util.h"
#include "upstream.h"

#define MAX_LISTEN 8

static int listen_tcp(uint16_t port)
{
        struct sockaddr_in sa = { .sin_family = AF_INET,
                                  .sin_port = htons(port),
                                  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

        if (fd < 0)
                return -errno;
        (void) setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &(int){ 1 }, sizeof(int));
        if (bind(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0 || listen(fd, 512) < 0) {
                int r = -errno;
                close(fd);
                return r;
        }
        return fd;
}

static int listen_unix(const char *path)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd;

        if (strlen(path) >= sizeof(sa.sun_path))
                return -ENAMETOOLONG;
        memcpy(sa.sun_path, path, strlen(path) + 1);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        (void) unlink(path);
        if (bind(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0 || listen(fd, 512) < 0) {
                int r = -errno;
                close(fd);
                return r;
        }
        return fd;
}

int main(int argc, char **argv)
{
        struct upstream_options o = {};
        int fds[MAX_LISTEN];
        size_t n = 0;

        for (int i = 1; i < argc; i++) {
                int fd;
                if (streq(argv[i], "--step-done")) {
                        o.step_done = true;
                        continue;
                }
                if (i + 1 >= argc || n == MAX_LISTEN)
                        goto usage;
                if (streq(argv[i], "--tcp")) {
                        unsigned port;
                        if (parse_uint(argv[++i], 1, 65535, &port) < 0)
                                goto usage;
                        fd = listen_tcp((uint16_t) port);
                } else if (streq(argv[i], "--unix"))
                        fd = listen_unix(argv[++i]);
                else
                        goto usage;
                if (fd < 0) {
                        fprintf(stderr, "bench-upstream: %s %s: %s\n", argv[i - 1], argv[i],
                                strerror(-fd));
                        return 1;
                }
                fds[n++] = fd;
        }
        if (n == 0)
                goto usage;
        o.listen_fds = fds;
        o.n_listen_fds = n;
        upstream_serve(&o);
usage:
        fputs("usage: bench-upstream [--tcp PORT]... [--unix PATH]... [--step-done]\n", stderr);
        return 2;
}
