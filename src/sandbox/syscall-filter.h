/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The container syscall filter: a seccomp allowlist at least as strict as
 * Docker's default profile (docs/SECCOMP.md explains every difference).
 *
 * One constant table of rules in syscall-filter.c is the single source of
 * truth; the native launcher loads it with syscall_filter_load() and the OCI
 * launcher embeds the very same table as config.json's linux.seccomp with
 * syscall_filter_to_oci(). Nothing here keeps state between calls.
 *
 * Invariants:
 * - Anything not in the table fails with EPERM (Docker's defaultErrnoRet 1).
 * - Only the native architecture is in the filter: a syscall made through a
 *   foreign ABI (i386 `int $0x80`, x32 numbers on x86_64) fails with EPERM
 *   without being looked at, so argument rules cannot be dodged through a
 *   second syscall table.
 * - Every argument comparison is part of an ALLOW rule and fails closed: a
 *   value the rule does not recognise (including garbage in the upper half of
 *   a 32-bit argument) falls through to the default EPERM.
 */
#include <jansson.h>

#include "base/macro.h"

enum {
        /* Apply the filter to every thread of the process (SECCOMP_FILTER_FLAG_TSYNC),
         * not just the calling one. */
        SYSCALL_FILTER_TSYNC = 1u << 0,
        /* Ask the kernel to audit-log every denied syscall (SECCOMP_FILTER_FLAG_LOG);
         * for debugging a program that the filter breaks. */
        SYSCALL_FILTER_LOG = 1u << 1,
};

struct syscall_filter;

/* Compiles the table into a BPF program for the native architecture, with
 * libseccomp (about 1-2 ms, so the daemon does it once and keeps the result).
 * Returns 0 or -errno. */
int syscall_filter_new(struct syscall_filter **ret);
struct syscall_filter *syscall_filter_free(struct syscall_filter *filter);
DEFINE_CLEANUP_FUNC(struct syscall_filter, syscall_filter_free)

/* Installs a compiled filter in the calling thread (every thread with
 * SYSCALL_FILTER_TSYNC), after setting PR_SET_NO_NEW_PRIVS, which seccomp
 * requires without CAP_SYS_ADMIN. Makes two syscalls and nothing else: no
 * allocation, no logging, no locks, so it is async-signal-safe and meant for
 * a freshly cloned child right before execve(). The filter is only read.
 * Returns 0 or -errno (-EINVAL for unknown flags, -EBUSY if TSYNC met a
 * thread it cannot synchronise). */
int syscall_filter_apply(const struct syscall_filter *filter, unsigned flags);

/* syscall_filter_new() + syscall_filter_apply() + free, for one-off callers
 * (a shim, a test). Allocates, so in a child of a multithreaded parent
 * prefer a filter compiled before the fork. Returns 0 or -errno. */
int syscall_filter_load(unsigned flags);

/* Renders the same table as an OCI runtime-spec `linux.seccomp` object for
 * the native architecture: defaultAction SCMP_ACT_ERRNO, defaultErrnoRet 1,
 * architectures, syscalls[{names, action, errnoRet?, args?}]. *ret is a new
 * reference owned by the caller. Returns 0 or -ENOMEM. */
int syscall_filter_to_oci(json_t **ret);

/* Writes the compiled BPF program (struct sock_filter[], as installed by
 * syscall_filter_apply()) to fd, for inspection with e.g. `scmp_bpf_disasm`. Returns 0 or -errno.
 */
int syscall_filter_export_bpf(int fd);
