/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * One single-threaded event loop (after redis' ae.c): epoll fd watches,
 * monotonic one-shot timers (a binary min-heap), signalfd sources, pidfd
 * sources and deferred callbacks. No asynchronous signal handlers anywhere.
 *
 * Ownership: the loop owns every source; loop_source_free() detaches one at
 * any time, including from inside any callback (the memory is reclaimed
 * after the current dispatch round, so a pending event for a freed source is
 * dropped, never delivered). Fds passed to loop_add_io() stay owned by the
 * caller; the signalfd and the pidfd of the signal/child sources are owned
 * by the source. Callbacks returning < 0 stop loop_run() with that error.
 */
#include <signal.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/wait.h>

#include "base/macro.h"
#include "base/time-util.h"

struct loop;
struct loop_source;

typedef int (*loop_io_fn)(struct loop_source *s, int fd, uint32_t revents, void *userdata);
typedef int (*loop_time_fn)(struct loop_source *s, usec_t now, void *userdata);
typedef int (*loop_signal_fn)(struct loop_source *s, const struct signalfd_siginfo *si,
                              void *userdata);
/* Called once when the child exits; si is the reaped status (waitid P_PIDFD). */
typedef int (*loop_child_fn)(struct loop_source *s, const siginfo_t *si, void *userdata);
typedef void (*loop_defer_fn)(void *userdata);

int loop_new(struct loop **ret);
struct loop *loop_free(struct loop *l);
DEFINE_CLEANUP_FUNC(struct loop, loop_free);

/* events: EPOLLIN/EPOLLOUT/EPOLLRDHUP/EPOLLET... */
int loop_add_io(struct loop *l, int fd, uint32_t events, loop_io_fn cb, void *userdata,
                struct loop_source **ret);
int loop_io_set_events(struct loop_source *s, uint32_t events);

/* One-shot timer at an absolute CLOCK_MONOTONIC time; USEC_INFINITY disarms. */
int loop_add_timer(struct loop *l, usec_t when, loop_time_fn cb, void *userdata,
                   struct loop_source **ret);
void loop_timer_set(struct loop_source *s, usec_t when);

/* Blocks the signals of mask in the calling thread and delivers them
 * through one signalfd (cb tells them apart by ssi_signo). */
int loop_add_signals(struct loop *l, const sigset_t *mask, loop_signal_fn cb, void *userdata,
                     struct loop_source **ret);
int loop_add_signal(struct loop *l, int sig, loop_signal_fn cb, void *userdata,
                    struct loop_source **ret);
/* Takes ownership of pidfd (also on failure). The child is reaped by the source. */
int loop_add_child(struct loop *l, int pidfd, loop_child_fn cb, void *userdata,
                   struct loop_source **ret);

/* Runs cb at the end of the current (or next) dispatch round. */
void loop_defer(struct loop *l, loop_defer_fn cb, void *userdata);

/* Detaches and frees a source; NULL is fine. Returns NULL. */
struct loop_source *loop_source_free(struct loop_source *s);

/* Cached monotonic time of the current round. */
usec_t loop_now(struct loop *l);

/* One round: wait at most timeout_usec (USEC_INFINITY: no limit), dispatch. */
int loop_run_once(struct loop *l, usec_t timeout_usec);
/* Runs until loop_quit() or a callback error; returns the quit code. */
int loop_run(struct loop *l);
void loop_quit(struct loop *l, int code);
