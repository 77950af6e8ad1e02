/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "relay/listen-socket.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/macro.h"

#define LISTEN_BACKLOG 1024

int socket_listen_tcp(const char *ipv4, uint16_t port, int *ret_fd)
{
        cleanup_close int fd = -EBADF;
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };

        if (inet_pton(AF_INET, ipv4, &sa.sin_addr) != 1)
                return -EINVAL;
        fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
                return negative_errno();
        /* Restarting the daemon must not wait out TIME_WAIT on its port. */
        if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &(int){ 1 }, sizeof(int)) < 0)
                return negative_errno();
        if (bind(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0)
                return negative_errno();
        if (listen(fd, LISTEN_BACKLOG) < 0)
                return negative_errno();
        *ret_fd = TAKE_FD(fd);
        return 0;
}

int socket_listen_unix(const char *path, mode_t mode, int *ret_fd)
{
        cleanup_close int fd = -EBADF;
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        size_t n = strlen(path);
        mode_t old;
        int r;

        if (n == 0 || n >= sizeof(sa.sun_path))
                return -ENAMETOOLONG;
        memcpy(sa.sun_path, path, n);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
                return negative_errno();
        /* The mode comes from the umask at bind() time: no chmod() by path
         * afterwards (fchmod() on a socket fd would not reach the inode),
         * and bind() itself never follows or replaces what is at path. */
        old = umask(~mode & 0777);
        r = bind(fd, (struct sockaddr *) &sa,
                 (socklen_t) (offsetof(struct sockaddr_un, sun_path) + n + 1));
        if (r < 0)
                r = negative_errno();
        (void) umask(old);
        if (r < 0)
                return r;
        if (listen(fd, LISTEN_BACKLOG) < 0)
                return negative_errno();
        *ret_fd = TAKE_FD(fd);
        return 0;
}

int socket_local_port(int fd, uint16_t *ret_port)
{
        /* Zeroed: a socket of another family fills (and truncates to) only
         * what fits, and an unbound one as little as sa_family. */
        struct sockaddr_in sa = {};
        socklen_t len = sizeof(sa);

        if (getsockname(fd, (struct sockaddr *) &sa, &len) < 0)
                return negative_errno();
        if (len != sizeof(sa) || sa.sin_family != AF_INET)
                return -EAFNOSUPPORT;
        *ret_port = ntohs(sa.sin_port);
        return 0;
}
