/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench-launch-client SOCKET: asks a `bench-launch --serve SOCKET` to start
 * one fully confined /bin/true and waits for its exit status, which becomes
 * ours. This is how hyperfine times the daemon's path (the filter compiled
 * once, the launcher in a long-lived process), like `docker run` times
 * dockerd. Static and libc-only, so its own start costs as little as
 * possible.
 */
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int main(int argc, char **argv)
{
        struct sockaddr_un sun = { .sun_family = AF_UNIX };
        unsigned char status;

        if (argc != 2 || strlen(argv[1]) >= sizeof(sun.sun_path)) {
                fprintf(stderr, "usage: bench-launch-client SOCKET\n");
                return 2;
        }
        memcpy(sun.sun_path, argv[1], strlen(argv[1]) + 1);
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0 || connect(fd, (struct sockaddr *) &sun, sizeof(sun)) < 0) {
                perror("bench-launch-client: connect");
                return 1;
        }
        if (read(fd, &status, 1) != 1) {
                fprintf(stderr, "bench-launch-client: no status\n");
                return 1;
        }
        return status;
}
