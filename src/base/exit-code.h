/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The exit codes of the project's programs, one table for all of them
 * (openenvctl's commands and openenvd; docs/CLI.md, docs/DAEMON.md). Each
 * command documents which of them it uses and what they mean for it.
 */
#include <signal.h>
#include <sys/wait.h>

enum exit_code {
        EXIT_CODE_OK = 0,          /* valid, isolation on, all held, pass/warn, clean shutdown */
        EXIT_CODE_FAILED = 1,      /* what was checked failed; setup failed; input unreadable */
        EXIT_CODE_INVALID = 2,     /* bad usage or invalid input (manifest, image reference) */
        EXIT_CODE_UNAVAILABLE = 3, /* isolation unavailable; engine unreachable; internal error */
};

/* A run stopped by a signal exits 128 + the signal (as a shell reports it). */
#define EXIT_CODE_SIGNAL(sig) (128 + (sig))

/* A child's end as a shell reports it: its exit code, or 128 + the signal;
 * from waitpid()'s status, or from a waitid() siginfo's code and status. */
static inline int exit_status_from_wait(int status)
{
        return WIFEXITED(status) ? WEXITSTATUS(status) : EXIT_CODE_SIGNAL(WTERMSIG(status));
}

static inline int exit_status_from_siginfo(int code, int status)
{
        return code == CLD_EXITED ? status : EXIT_CODE_SIGNAL(status);
}
