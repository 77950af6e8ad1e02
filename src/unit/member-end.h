/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Who ended a member, from what the kernel says and nothing a container
 * can write: its init's wait status and its cgroup leaf's counters.
 *
 * The init of every container is openenvd-shim, PID 1 of the container's
 * pid namespace. The kernel drops every signal sent to a namespace's init
 * from inside that namespace unless the init handles it, and the shim
 * handles none fatally; from an ancestor namespace only SIGKILL and
 * SIGSTOP get through (kernel/signal.c, sig_task_ignored()). So an init
 * killed by SIGKILL with no OOM kill in its cgroup was killed from outside
 * the container (an operator or the host: the daemon's own kills are known
 * to the caller); by any other signal, it crashed (a fault the kernel
 * forces). Code inside can have done neither.
 * The principal, a child of the shim, can be killed by anything inside
 * that shares its uid: its death by a signal stays the container's own.
 *
 * An OOM kill is the container's own limit when its leaf reached
 * memory.max (v1: failcnt) at least once; with no limit of its own ever
 * reached, the OOM killer came from above it: the host, or a limit set
 * over the whole daemon.
 */
#include <stdbool.h>

#include "cgroup/cgroup.h"

enum member_end {
        MEMBER_END_INSIDE,         /* its own code: an exit, or a signal from inside */
        MEMBER_END_MEMORY_LIMIT,   /* the OOM killer at its own memory limit */
        MEMBER_END_PIDS_LIMIT,     /* forks refused by its pids limit */
        MEMBER_END_HOST_OOM,       /* the OOM killer, its own limit never reached */
        MEMBER_END_OUTSIDE_SIGNAL, /* its init got SIGKILL from outside the container */
        MEMBER_END_INIT_CRASHED,   /* its init (openenvd-shim) died of a fault */
        _MEMBER_END_MAX,
};

/* The signal a member's status says killed it (the shim exits with its
 * principal's status, 128 + N for a signal, as a shell reports it), or 0. */
int member_status_signal(int status);
/* "exited with status 3", "was killed by signal 9 (KILL)"; new string. */
char *member_status_text(int status);

/* "inside", "memory_limit", "pids_limit", "host_oom", "outside_signal",
 * "init_crashed". */
const char *member_end_to_string(enum member_end e);

/* What its leaf's counters say, whether or not it still runs. */
enum member_end member_end_of_limits(const struct cgroup_stats *st);
/* How a member ended: stats NULL when its leaf could not be read;
 * init_signal the signal the container's init itself died of, or 0. */
enum member_end member_end_of(const struct cgroup_stats *st, int init_signal);
/* Whether code in the container can have caused it (its zone is blamed)
 * or not (the infrastructure is). */
bool member_end_is_its_own(enum member_end e);
/* "exhausted its memory (HOW; the OOM killer)", "HOW": for a reason
 * "NAME <text>", how being "was killed by signal 9 (KILL)" and the like;
 * new string. */
char *member_end_text(enum member_end e, const char *how);
