/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Runs one external command (the docker CLI) with fork/execve and an argv
 * array — never a shell — and captures its stdout and stderr, each bounded:
 * at most max_out bytes are kept and the rest is drained and dropped (the
 * `truncated` flags say so), so a hostile image's huge metadata cannot exhaust
 * memory. The child gets its own process group so a terminal Ctrl-C reaches
 * only us; we decide when it dies. A timeout, silence beyond the idle
 * timeout (a child that stopped making progress) or a readable cancel_fd
 * kills the whole group with SIGKILL and reaps it.
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

struct command_spec {
        char *const *argv;   /* argv[0] is looked up in PATH unless it contains '/' */
        int stdin_fd;        /* < 0: /dev/null */
        usec_t timeout;      /* the whole run */
        usec_t idle_timeout; /* 0: none; else no output on either pipe for this long ends it */
        size_t max_out;      /* bytes kept of stdout and of stderr, each */
        int cancel_fd;       /* < 0: none; readable = stop now */
};

/* Returns 0 when the command ran to completion (whatever its exit status),
 * -ETIMEDOUT (timeout), -ETIME (idle_timeout), -ECANCELED, or the errno of a
 * failed exec (e.g. -ENOENT). After a timeout or cancellation the whole
 * process group is killed and reaped. On error ret is left untouched. */
int command_run(const struct command_spec *spec, struct command_output *ret);
void command_output_done(struct command_output *o);
