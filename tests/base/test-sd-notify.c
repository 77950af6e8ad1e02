/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sd_notify_send(): what a Type=notify unit's manager receives. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/sd-notify.h"

/* A manager's end: a datagram socket at path (abstract if it starts with '@'). */
static int listen_at(const char *path)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        size_t len = strlen(path);
        int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

        cr_assert_geq(fd, 0);
        memcpy(sa.sun_path, path, len);
        if (path[0] == '@')
                sa.sun_path[0] = '\0';
        cr_assert_eq(bind(fd, (struct sockaddr *) &sa,
                          (socklen_t) (offsetof(struct sockaddr_un, sun_path) + len)),
                     0);
        return fd;
}

static void expect_received(int fd, const char *want)
{
        char buf[256];
        ssize_t n = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);

        cr_assert_gt(n, 0, "nothing received");
        buf[n] = '\0';
        cr_assert_str_eq(buf, want);
}

Test(sd_notify, path_and_abstract_sockets_receive_the_state)
{
        char path[] = "/tmp/openenvd-notify-XXXXXX", sock[64], abstract[64];
        int fd;

        cr_assert_not_null(mkdtemp(path));
        snprintf(sock, sizeof(sock), "%s/notify", path);
        fd = listen_at(sock);
        cr_assert_eq(setenv("NOTIFY_SOCKET", sock, 1), 0);
        cr_assert_eq(sd_notify_send("READY=1\nSTATUS=an episode can serve"), 0);
        expect_received(fd, "READY=1\nSTATUS=an episode can serve");
        close(fd);
        unlink(sock);
        rmdir(path);

        snprintf(abstract, sizeof(abstract), "@openenvd-notify-%d", getpid());
        fd = listen_at(abstract);
        cr_assert_eq(setenv("NOTIFY_SOCKET", abstract, 1), 0);
        cr_assert_eq(sd_notify_send("STOPPING=1"), 0);
        expect_received(fd, "STOPPING=1");
        close(fd);
}

Test(sd_notify, nothing_without_a_manager_and_refuses_a_relative_path)
{
        cr_assert_eq(unsetenv("NOTIFY_SOCKET"), 0);
        cr_assert_eq(sd_notify_send("READY=1"), 0);
        cr_assert_eq(setenv("NOTIFY_SOCKET", "relative/notify", 1), 0);
        cr_assert_eq(sd_notify_send("READY=1"), -EINVAL);
        cr_assert_eq(setenv("NOTIFY_SOCKET", "/nonexistent/notify", 1), 0);
        cr_assert_lt(sd_notify_send("READY=1"), 0, "no such socket is an error");
}
