/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Bidirectional byte relay between two connected stream sockets (unix or
 * TCP), for bytes that need no inspection: splice(2) through one pipe per
 * direction, so payload never enters user space and each direction holds at
 * most one pipe's capacity (back-pressure: a full pipe stops reading, the
 * kernel socket buffers fill, TCP flow control does the rest). If pipes are
 * unavailable the direction falls back to a bounded user-space buffer.
 *
 * Half-close is preserved: EOF from one side becomes shutdown(SHUT_WR) on the
 * other after the pending bytes are delivered; the other direction continues.
 * The relay ends when both directions have ended, on a hard error, or when
 * no byte moved for idle_timeout.
 *
 * Ownership: on success the relay owns both fds. When it ends it calls done
 * (once) and then frees itself; pipe_relay_free() tears it down early without
 * calling done.
 */
#include <stddef.h>

#include "base/event-loop.h"

struct pipe_relay;

/* error: 0 for a clean end (both sides EOF), -ETIMEDOUT, or the socket error. */
typedef void (*pipe_relay_done_fn)(struct pipe_relay *r, int error, void *userdata);

int pipe_relay_new(struct loop *l, int fd_a, int fd_b, usec_t idle_timeout, pipe_relay_done_fn done,
                   void *userdata, struct pipe_relay **ret);
/* Bytes already read from one side (e.g. after an HTTP upgrade) to deliver
 * before anything else: to_b=true sends them to fd_b. Copied. Call before the
 * first loop round. */
void pipe_relay_prime(struct pipe_relay *r, bool to_b, const void *buf, size_t len);
struct pipe_relay *pipe_relay_free(struct pipe_relay *r);
DEFINE_CLEANUP_FUNC(struct pipe_relay, pipe_relay_free);
/* Bytes moved so far in each direction (a→b, b→a). */
void pipe_relay_stats(const struct pipe_relay *r, uint64_t *ret_ab, uint64_t *ret_ba);
