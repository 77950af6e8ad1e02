/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A network namespace kept across the containers of one slot (one
 * container of one unit slot, episode after episode): creating a network
 * namespace is the most expensive part of a spawn, and tearing one down
 * costs the kernel as much again in a worker (docs/SANDBOX.md, "Kept
 * network namespaces").
 *
 * The namespace is owned by the daemon's user namespace, not by the
 * container's: nothing in a container holds a capability over it, so no
 * container can change its configuration (interfaces, addresses, routes,
 * sysctls, netfilter). What a container can leave behind in it are sockets
 * (a TIME_WAIT connection, a listener whose fd was passed on, an abstract
 * unix socket held by a survivor); kept_netns_check() proves there are none
 * before the namespace is handed to the next container, and a namespace
 * that fails the check is thrown away.
 *
 * Set up once: lo up, ip_unprivileged_port_start = 0 (what the launcher sets
 * in a fresh one), tcp_max_tw_buckets = 0 (a closed connection leaves no
 * TIME_WAIT socket behind: on a loopback-only namespace there is no delayed
 * segment for it to absorb), tcp_no_metrics_save = 1 (no per-destination
 * TCP metrics outlive a connection), and a detached sysfs instance for the
 * namespace (a container cannot mount one: it does not own the namespace).
 *
 * Every function switches the calling thread's network namespace and back;
 * call them from the thread that created the namespace, with no other
 * socket work in between (the daemon is one event-loop thread).
 */
#include <stdbool.h>
#include <stddef.h>

#include "base/macro.h"

struct kept_netns;

/* A new namespace, set up as above; the calling thread stays where it was. */
int kept_netns_new(struct kept_netns **ret);
struct kept_netns *kept_netns_free(struct kept_netns *k);
DEFINE_CLEANUP_FUNC(struct kept_netns, kept_netns_free);

/*
 * 0 when nothing of the namespace's last tenant is left: no socket of any
 * protocol beyond those that existed right after kept_netns_new() (the
 * per-namespace counts of /proc/net/protocols), no TIME_WAIT socket, no IPv4
 * or IPv6 fragment queue. -EBUSY otherwise, with what (if given) naming the
 * first leftover ("TCP: 1 socket"); -errno if the check could not be made.
 * Call only while no process uses the namespace.
 */
int kept_netns_check(struct kept_netns *k, char *what, size_t what_size);

/* Moves the calling thread into the namespace / back to where it was when
 * the namespace was made (the launcher clones the container in between). */
int kept_netns_enter(const struct kept_netns *k);
int kept_netns_leave(const struct kept_netns *k);

/* A socket (family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC) that lives
 * in the namespace, e.g. for the daemon to connect to a server listening
 * on loopback there: fd or -errno. It counts in kept_netns_check() until
 * closed. */
int kept_netns_socket(const struct kept_netns *k, int family);

/* A detached read-only sysfs mount showing the namespace's devices (only
 * lo), to be cloned (open_tree OPEN_TREE_CLONE) into each container. */
int kept_netns_sysfs_fd(const struct kept_netns *k);

/* Brings lo up in the calling thread's network namespace (needs
 * CAP_NET_ADMIN over it). Also used by the launcher for a fresh one. */
int netns_loopback_up(void);
