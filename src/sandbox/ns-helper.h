/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Namespace work off the daemon's own thread.
 *
 * A task that steps into a container's namespace with setns(), or makes one
 * with unshare(), can be found there by anyone who joins the daemon's
 * namespaces through /proc/<openenvd>/ns: `nsenter -t`, `docker exec` and a
 * Docker HEALTHCHECK do exactly that with openenvd as PID 1, and would land
 * next to whatever the agent planted there. The daemon's thread therefore
 * never leaves its own namespaces: ns_helper_run() runs fn in a short-lived
 * child process instead (its own pid, gone when fn returns), which shares
 * our file descriptor table, so a socket or namespace fd it opens is ours,
 * and, where that is safe, our memory. We block until it has exited.
 *
 * fn's int result (>= 0, or -errno) is returned; up to NS_HELPER_OUT_MAX
 * bytes that fn writes to out are copied to the caller's out. Writes to any
 * other memory may be lost (sanitizer builds run the helper on a copy of
 * it). A helper that dies before returning gives -ECHILD.
 *
 * Not reentrant: one caller at a time (the daemon is one thread).
 */
#include <stddef.h>

#define NS_HELPER_OUT_MAX 256

typedef int (*ns_helper_fn)(void *userdata, void *out);

int ns_helper_run(ns_helper_fn fn, void *userdata, void *out, size_t out_size);
