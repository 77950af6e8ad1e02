/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The network: no listener outside the zone is reachable by TCP, and no
 * socket of the daemon or another container by its host path.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "base/macro.h"
#include "base/parse-util.h"
#include "base/util.h"
#include "probe/attack-internal.h"

void attack_connect_tcp(const char *arg, struct attack_outcome *o)
{
        struct sockaddr_in sa = { .sin_family = AF_INET };
        char host[64];
        const char *colon = strrchr(arg, ':');
        unsigned port;

        if (!colon || (size_t) (colon - arg) >= sizeof(host) ||
            parse_uint(colon + 1, 1, 65535, &port) < 0)
                return attack_outcome_set(o, ATTACK_ERROR, "bad address '%s'", arg);
        memcpy(host, arg, (size_t) (colon - arg));
        host[colon - arg] = '\0';
        if (inet_pton(AF_INET, host, &sa.sin_addr) != 1)
                return attack_outcome_set(o, ATTACK_ERROR, "bad address '%s'", arg);
        sa.sin_port = htons((uint16_t) port);

        cleanup_close int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return attack_outcome_errno(o, errno, attack_deny_perm, "socket");
        if (connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0) {
                if (errno != EINPROGRESS)
                        return attack_outcome_errno(o, errno, attack_deny_net, "connect");
                struct pollfd p = { .fd = fd, .events = POLLOUT };
                int n = poll(&p, 1, 2000);
                if (n < 0)
                        return attack_outcome_errno(o, errno, (const int[]){ 0 }, "poll");
                if (n == 0)
                        return attack_outcome_set(o, ATTACK_DENIED, "connect: no answer in 2 s");
                int err = 0;
                socklen_t l = sizeof(err);
                if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &l) < 0)
                        return attack_outcome_errno(o, errno, (const int[]){ 0 }, "getsockopt");
                if (err != 0)
                        return attack_outcome_errno(o, err, attack_deny_net, "connect");
        }
        attack_outcome_set(o, ATTACK_ALLOWED, "connected to %s", arg);
}

void attack_connect_unix(const char *path, struct attack_outcome *o)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };

        if (strlen(path) >= sizeof(sa.sun_path))
                return attack_outcome_set(o, ATTACK_ERROR, "path too long for sockaddr_un");
        memcpy(sa.sun_path, path, strlen(path) + 1);
        cleanup_close int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return attack_outcome_errno(o, errno, attack_deny_perm, "socket");
        if (connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0)
                return attack_outcome_errno(o, errno, attack_deny_unix, "connect");
        attack_outcome_set(o, ATTACK_ALLOWED, "connected to %s", path);
}
