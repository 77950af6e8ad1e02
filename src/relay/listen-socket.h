/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Listening sockets for the relays: CLOEXEC and non-blocking from birth.
 * Unix sockets are bound where nothing exists yet (-EADDRINUSE otherwise:
 * nothing is ever replaced) and get the requested mode at bind time, so a
 * confined principal with another uid can connect; callers bind only in
 * directories no container can reach yet (a fresh socket-dir tmpfs before
 * its container starts, or the daemon's private dir).
 */
#include <stdint.h>
#include <sys/types.h>

/* ipv4 "127.0.0.1" or "0.0.0.0"; port 0 picks one (see socket_local_port()). */
int socket_listen_tcp(const char *ipv4, uint16_t port, int *ret_fd);
int socket_listen_unix(const char *path, mode_t mode, int *ret_fd);
int socket_local_port(int fd, uint16_t *ret_port);
