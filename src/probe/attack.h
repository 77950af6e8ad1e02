/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Attacks: what a confined process must NOT be able to do, attempted for
 * real by the process itself (`openenvd-probe attack`, run inside a throwaway
 * container by `openenvctl check enforcement`). This is the "what can this
 * process do" half that is shared with `openenvctl validate`: read/write checks
 * come from write-check.h, mount tables from mountinfo.h, credentials from
 * proc-status.h.
 *
 * Each attempt runs in a forked child (so an attack that succeeds - a new
 * user namespace, a ptrace attachment, a mount - changes nothing for the
 * attempts after it, and a crash or hang is contained), bounded by
 * ATTACK_TIMEOUT_USEC and reported as one outcome:
 *   denied   the kernel refused: the guarantee held for this attempt
 *   allowed  the attempt succeeded: a violation
 *   error    neither proven (an unexpected errno, a crash, a timeout)
 * The check treats anything but `denied` as a failure (fail closed).
 *
 * The probe is single-threaded, so the child may use the whole library
 * (including malloc) before it reports over its pipe and _exit()s.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define ATTACK_TIMEOUT_USEC (10ULL * 1000 * 1000)
#define ATTACK_DETAIL_MAX   160

enum attack_result {
        ATTACK_DENIED,
        ATTACK_ALLOWED,
        ATTACK_ERROR,
        _ATTACK_RESULT_MAX,
};

struct attack_outcome {
        enum attack_result result;
        char detail[ATTACK_DETAIL_MAX]; /* short evidence: an errno name, a count */
};

/* What the probe observed about itself before any attempt ran. */
struct attack_context {
        unsigned inherited_fds; /* fds > 2 open at startup (before the probe opened any) */
        unsigned dir_fds;       /* of fds 0..2: how many are directories */
        int first_inherited;    /* lowest such fd, -1 if none */
};

const char *attack_result_to_string(enum attack_result r);
int attack_result_from_string(const char *s); /* -EINVAL if unknown */

/* Test-only ways for the probe to misbehave (`openenvd-probe attack
 * --test-fault`, `openenvctl check enforcement --test-probe-fault`), so the
 * tests can prove the check fails closed (docs/ENFORCEMENT.md "Test knobs"). */
enum probe_fault {
        PROBE_FAULT_NONE,
        PROBE_FAULT_SILENT,  /* exit 0 without reporting anything */
        PROBE_FAULT_PARTIAL, /* report the first half only, no end line */
        PROBE_FAULT_GARBLE,  /* every line cut in half */
        PROBE_FAULT_CRASH,   /* SIGSEGV after the first report */
        _PROBE_FAULT_MAX,
};

/* The fault named s ("silent", ...); -EINVAL if unknown ("none" is not a name). */
int probe_fault_from_string(const char *s);

/* True if kind names an attack this library implements. */
bool attack_kind_known(const char *kind);

/* Scans /proc/self/fd; call first thing in main(). */
void attack_context_init(struct attack_context *ret);

/*
 * Runs one attempt of `kind` with its argument (see docs/ENFORCEMENT.md for
 * the kinds and what each argument means) in a forked child and waits for
 * it (bounded). Always fills *ret; returns 0, or -errno if the attempt could
 * not even be started (fork/pipe failure: reported as an error outcome too).
 */
int attack_run(const char *kind, const char *arg, const struct attack_context *ctx,
               struct attack_outcome *ret);

/* "EPERM" for EPERM; "E123" for unknown values; "0" for 0. Never NULL. */
const char *attack_errno_name(int err, char buf[static 16]);
