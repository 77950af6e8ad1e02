/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A network namespace made by the daemon for one container, for that
 * container's life only (docs/SANDBOX.md, "The daemon's network
 * namespaces").
 *
 * It is owned by the daemon's user namespace, not by the container's:
 * nothing in a container holds a capability over it, so no container can
 * change its configuration (interfaces, addresses, routes, sysctls,
 * netfilter), and the daemon can make sockets in it (kept_netns_socket():
 * how the frontend reaches a native env server over TCP).
 *
 * It is never handed to a second container, not even the same slot's in
 * the next episode: a namespace keeps state no process holds and no check
 * can clear (IPv6 flow labels lingering after their socket, the
 * interfaces' and the protocols' counters, which also tell the traffic of
 * the last tenant), so only a new one is provably pristine. The next
 * episode's is made while its standby is provisioned, off the reset path.
 *
 * Set up once: lo up, ip_unprivileged_port_start = 0 (what the launcher sets
 * in a fresh one), tcp_max_tw_buckets = 0 (a closed connection leaves no
 * TIME_WAIT socket: on a loopback-only namespace there is no delayed segment
 * for it to absorb), and a detached sysfs instance for the namespace (a
 * container cannot mount one: it does not own the namespace).
 *
 * The calling thread never enters the namespace: everything that must run
 * inside runs in a short-lived helper process (sandbox/ns-helper.h).
 */
#include <stdbool.h>
#include <stddef.h>

#include "base/macro.h"

struct kept_netns;

/* A new namespace, set up as above. */
int kept_netns_new(struct kept_netns **ret);
struct kept_netns *kept_netns_free(struct kept_netns *k);
DEFINE_CLEANUP_FUNC(struct kept_netns, kept_netns_free);

/* The namespace (an nsfs fd) for setns() in a helper: the launcher's clone
 * of the container runs there. Owned by k. */
int kept_netns_fd(const struct kept_netns *k);

/* A socket (family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC) that lives
 * in the namespace, e.g. for the daemon to connect to a server listening
 * on loopback there: fd or -errno. Made by a helper in batches (one
 * helper's start costs as much as a few connections). */
int kept_netns_socket(struct kept_netns *k, int family);

/* A detached read-only sysfs mount showing the namespace's devices (only
 * lo), to be cloned (open_tree OPEN_TREE_CLONE) into each container. */
int kept_netns_sysfs_fd(const struct kept_netns *k);

/* The namespace new ones are made from (netns-keep.c says why): an nsfs fd
 * owned by the module, made at the first call; -errno when it cannot be
 * (cached: the next calls say the same). Call from the daemon's thread,
 * before a helper that makes a namespace runs. */
int netns_incubator(void);

/* In a helper, before it makes a network namespace: step into the
 * incubator fd (nothing for a negative one). False if setns() failed. */
bool netns_enter_incubator(int fd);

/* Brings lo up in the calling thread's network namespace (needs
 * CAP_NET_ADMIN over it). Also used by the launcher for a fresh one. */
int netns_loopback_up(void);
