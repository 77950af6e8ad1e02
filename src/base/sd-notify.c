/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "base/sd-notify.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/macro.h"

int sd_notify_send(const char *state)
{
        const char *path = getenv("NOTIFY_SOCKET");
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        size_t len;
        cleanup_close int fd = -EBADF;

        if (!path || !*path)
                return 0;
        len = strlen(path);
        if ((path[0] != '/' && path[0] != '@') || len >= sizeof(sa.sun_path))
                return -EINVAL;
        memcpy(sa.sun_path, path, len);
        if (path[0] == '@')
                sa.sun_path[0] = '\0'; /* the abstract namespace */
        fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
                return -errno;
        if (sendto(fd, state, strlen(state), MSG_NOSIGNAL, (struct sockaddr *) &sa,
                   (socklen_t) (offsetof(struct sockaddr_un, sun_path) + len)) < 0)
                return -errno;
        return 0;
}
