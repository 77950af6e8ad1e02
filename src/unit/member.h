/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * One container of one episode, from spawn to reap.
 *
 *  - Started by the native launcher or an OCI runtime (manifest runtime.oci),
 *    straight into its cgroup leaf.
 *  - Watched through its pidfd: exited() is called once, from the event loop,
 *    with the exit status (128 + signal when killed). Reaping goes through
 *    the pidfd only, so the daemon's orphan reaper never steals the status.
 *  - Its stdout and stderr are one pipe the daemon reads into a bounded log
 *    with each line's time (unit/member-log.h: MEMBER_LOG_MAX_BYTES; read at
 *    most MEMBER_LOG_RATE_BYTES per second, MEMBER_LOG_READ_BYTES per
 *    wake-up): no daemon fd ever enters a container, and a flood costs the
 *    loop a bounded share.
 *  - Its first lines also reach the daemon's own log (forward_episode_id):
 *    escaped there like any message, prefixed "NAME| ", MEMBER_LOG_FORWARD_BYTES
 *    at most, then one line saying the rest is in /logs.
 *  - With notify, the shim's readiness pipe: ready() is called once, when
 *    every TCP port the shim forwards to has a listener.
 *
 * Ownership: a member owns its container, pidfd, pipes and log. The spec is
 * only read during member_start(); pass_fds are duplicated by the launcher.
 */
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "base/error-detail.h"
#include "base/event-loop.h"
#include "base/macro.h"
#include "cgroup/cgroup.h"
#include "manifest/manifest.h"
#include "sandbox/container-spec.h"
#include "unit/member-log.h"

struct member;

struct member_ops {
        void (*exited)(struct member *m, int status, void *userdata);
        void (*ready)(struct member *m, void *userdata);
};

struct member_start;

/*
 * A principal from elsewhere (fork-speed episodes, unit/env-template.h): the
 * container's shim adopts a process a template forks into it (its spec's
 * adopt pipe) instead of starting its argv. supply() is called once the
 * container is up, with its PID 1's pidfd and the container's output, both
 * valid during the call only; 0, or -errno with ret_err saying why (the
 * container is then killed and member_start() fails).
 */
struct member_adopt {
        int (*supply)(void *data, const struct member_start *a, int pidfd, int stdio_fd,
                      struct error_detail *ret_err);
        void *data;
};

/*
 * What starts, signals and reaps the container. member.c has two, the native
 * launcher and an OCI runtime (picked by member_start.runtime when its
 * launcher is NULL); tests pass a fake that starts no process
 * (tests/unit/fake-backend.h). Whichever it is, the member's own work (exit
 * through an fd, output pipe, readiness pipe) is the same code.
 */
struct member_launcher {
        /* Starts it as spec says (a: where, its cgroup leaf, its runtime);
         * spec's fds (stdio, pass_fds, the notify pipe last) are the
         * caller's and valid during the call only. On failure -errno, and
         * ret_err (may be NULL) says why in one line. */
        int (*spawn)(void *data, const char *name, const struct member_start *a,
                     const struct container_spec *spec, void **ret_handle,
                     struct error_detail *ret_err);
        /* An fd that turns readable once it exited (a pidfd's contract). */
        int (*exit_fd)(void *handle);
        pid_t (*pid)(void *handle);
        int (*kill)(void *handle, int sig);
        /* 0 and its status once it exited, -errno before. */
        int (*try_wait)(void *handle, int *ret_status);
        int (*init_signal)(void *handle);
        /* SIGKILLs what still runs, reaps, frees. */
        void (*free)(void *handle);
        void *data;
};

struct member_start {
        const struct container_spec *spec;      /* stdio and the notify pipe are added here */
        const struct member_launcher *launcher; /* NULL: the real one */
        enum manifest_oci runtime;
        struct cgroup_tree *cgroups; /* borrowed */
        const char *cgroup;          /* leaf, relative to the tree */
        const char *oci_state_dir;   /* OCI runtimes only: bundles and runtime root */
        bool notify;                 /* ask the shim for READY (appended to pass_fds) */
        /* Made ahead of its turn: the shim holds the principal at its gate
         * (appended to pass_fds) until member_release(). */
        bool gated;
        /* Its output's first MEMBER_LOG_FORWARD_BYTES also go to the
         * daemon's log, a line an entry "NAME| line" with the episode and
         * container as fields; NULL: not forwarded (--container-output none). */
        const char *forward_episode_id;
        const struct member_adopt *adopt; /* NULL: the shim starts the spec's argv */
};

/*
 * Starts the container. Returns 0, or -errno with ret_err (if given; empty
 * on entry) saying why in one line ("clone: Operation not permitted", the
 * runtime's error...): nothing is left running then.
 */
int member_start(struct loop *l, const char *name, const struct member_start *a,
                 const struct member_ops *ops, void *userdata, struct member **ret,
                 struct error_detail *ret_err);
/* Lets a gated member's principal start, with env ("NAME=VALUE", NULL-
 * terminated, may be NULL) added to its environment: 0, -EALREADY (not
 * gated, or released before), -EPIPE (the shim is gone), -errno. The gate
 * closes either way. */
int member_release(struct member *m, char *const *env);
/* Gated and not yet released. */
bool member_is_gated(const struct member *m);
/* SIGKILLs a member that still runs, reaps it, closes everything. */
struct member *member_free(struct member *m);
DEFINE_CLEANUP_FUNC(struct member, member_free);

const char *member_name(const struct member *m);
pid_t member_pid(const struct member *m);
/* The container's PID 1 (its shim), as a pidfd; borrowed. */
int member_pidfd(const struct member *m);
/* Sends sig to the container's init (the shim); -ESRCH once it is gone. */
int member_kill(struct member *m, int sig);
/* Checks the pidfd now (for the daemon's reaper); true once exited. */
bool member_poll_exit(struct member *m);
/* True once exited, with the status. */
bool member_exited(const struct member *m, int *ret_status);
/* Once exited: the signal its init itself died of, else 0 (member-end.h). */
int member_init_signal(const struct member *m);
bool member_is_ready(const struct member *m);

/* The captured output (unit/member-log.h), still growing; borrowed. */
const struct member_log *member_output(const struct member *m);
/* Stops reading the output and hands its log over, closed: for keeping
 * once the member is freed (the member has none after). */
struct member_log *member_take_output(struct member *m);
/* Its last max_lines lines, each prefixed and with control characters
 * escaped, so that quoting it in the daemon's own log cannot forge a line of
 * the daemon's ("env| ..."); new string, "" when there is none. */
char *member_output_tail(const struct member *m, size_t max_lines);
