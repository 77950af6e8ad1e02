/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A function run in a forked child, so that the event loop goes on while it
 * works: the daemon copies and walks trees that agent code made (custody
 * copies, disk accounting) this way. The child shares nothing with us after
 * fork(): it writes its result (at most CHILD_JOB_MAX_RESULT bytes) to a
 * pipe and _exit()s. The parent watches the pipe and the child's pidfd and,
 * past the timeout, SIGKILLs it.
 *
 * done() runs once, from the loop (never from child_job_start()), with 0 and
 * the result bytes as soon as the child has written them all (the child
 * frames them with their length; its exit is reaped after), -ETIMEDOUT
 * (killed), or -ECHILD (the child died without a complete result). The job is inert afterwards; the
 * caller frees it, also from inside done(). child_job_free() of a running job kills and reaps the
 * child.
 *
 * The child is reaped through its pidfd only: a process-wide reaper must ask
 * child_job_pid() before reaping anything (see daemon_reap()). A child
 * reaped elsewhere all the same still ends the job, with -ECHILD.
 */
#include <stddef.h>
#include <sys/types.h>

#include "base/event-loop.h"
#include "base/macro.h"

#define CHILD_JOB_MAX_RESULT (64UL * 1024)

/* Runs in the child: fills out (out_size bytes) and returns how much it used. */
typedef size_t (*child_job_fn)(void *arg, char *out, size_t out_size);
typedef void (*child_job_done_fn)(void *userdata, int result, const char *out, size_t len);

struct child_job;

int child_job_start(struct loop *l, child_job_fn fn, void *arg, usec_t timeout,
                    child_job_done_fn done, void *userdata, struct child_job **ret);
struct child_job *child_job_free(struct child_job *j);
DEFINE_CLEANUP_FUNC(struct child_job, child_job_free);
pid_t child_job_pid(const struct child_job *j); /* 0 once reaped */
/* Reaps the child now if it has exited (for a process-wide reaper that
 * found it among its zombies); done() follows from the loop as usual. */
void child_job_poll(struct child_job *j);
