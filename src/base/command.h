/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Runs one external program and waits for it: the project's one command
 * runner (git's run-command). Users: the Docker provider (the docker CLI)
 * and the OCI launcher (runc, crun, runsc).
 *
 * An argv array, never a shell. By default stdout and stderr are captured,
 * each bounded: at most max_out bytes are kept and the rest is drained and
 * dropped (the `truncated` flags say so), so a hostile image's huge metadata
 * cannot exhaust memory. The child gets its own process group (a terminal's
 * Ctrl-C reaches only us; we decide when it dies) and an empty signal mask.
 * A timeout, silence beyond the idle timeout (a child that stopped making
 * progress) or a readable cancel_fd kills the whole group with SIGKILL and
 * reaps it.
 *
 * The child is started with posix_spawn() (vfork-like: nothing of the
 * caller is copied, whatever its size), after the binary was looked up in
 * PATH; glibc reports a failed exec as its errno. Only a child that must
 * enter a mount namespace first (COMMAND_ENTER_MOUNT_NS), which
 * posix_spawn() cannot do, is forked instead.
 */
#include <stdbool.h>
#include <stddef.h>

#include "base/time-util.h"

struct command_output {
        char *out; /* owned, NUL-terminated */
        size_t out_len;
        bool out_truncated;
        char *err; /* owned, NUL-terminated */
        size_t err_len;
        bool err_truncated;
        int exit_status; /* exit code, or 128+signal */
};

enum {
        /* stdout and stderr go to output_fd; nothing is captured, and the
         * run ends when the child exits. */
        COMMAND_OUTPUT_TO_FD = 1U << 0,
        /* The child keeps our signal mask and process group (what a
         * container runtime passes on to the container's init). */
        COMMAND_INHERIT_SIGNALS = 1U << 1,
        /* The child enters mount_ns_fd's mount namespace before the exec
         * (the binary path and the fds were resolved in ours). */
        COMMAND_ENTER_MOUNT_NS = 1U << 2,
};

struct command_spec {
        char *const *argv;   /* argv[0] is looked up in PATH unless it contains '/' */
        char *const *envp;   /* NULL: our environment */
        int stdin_fd;        /* < 0: /dev/null */
        const int *pass_fds; /* become fds 3, 4, ... in the child (n_pass of them) */
        size_t n_pass;
        unsigned flags;
        int output_fd;       /* with COMMAND_OUTPUT_TO_FD; < 0: /dev/null */
        usec_t timeout;      /* the whole run; 0: none */
        usec_t idle_timeout; /* 0: none; else no output on either pipe for this long ends it */
        size_t max_out;      /* bytes kept of stdout and of stderr, each */
        int cancel_fd;       /* < 0: none; readable = stop now */
        int mount_ns_fd;     /* with COMMAND_ENTER_MOUNT_NS: a /proc/PID/ns/mnt fd */
};

/* Returns 0 when the command ran to completion (whatever its exit status),
 * -ETIMEDOUT (timeout), -ETIME (idle_timeout), -ECANCELED, or the errno of a
 * failed exec (e.g. -ENOENT). After a timeout or cancellation the whole
 * process group is killed and reaped. On error ret is left untouched. */
int command_run(const struct command_spec *spec, struct command_output *ret);

/* The search path when PATH is unset or empty. */
#define COMMAND_DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

/* The executable `name` as command_run() finds it: a name with a '/' as it
 * is, else the first executable in an absolute directory of $PATH
 * (COMMAND_DEFAULT_PATH when unset). -ENOENT if none. */
int command_find_binary(const char *name, char **ret);
void command_output_done(struct command_output *o);
