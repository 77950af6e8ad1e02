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

enum {
        /* Apply the filter to every thread of the process (SECCOMP_FILTER_FLAG_TSYNC),
         * not just the calling one. */
        SYSCALL_FILTER_TSYNC = 1u << 0,
        /* Ask the kernel to audit-log every denied syscall (SECCOMP_FILTER_FLAG_LOG);
         * for debugging a program that the filter breaks. */
        SYSCALL_FILTER_LOG = 1u << 1,
};

/* Builds the filter and loads it into the calling thread (all threads with
 * SYSCALL_FILTER_TSYNC). Sets PR_SET_NO_NEW_PRIVS, which seccomp requires
 * without CAP_SYS_ADMIN. Does not log and touches no global state, so it is
 * safe in a freshly cloned child right before execve(). libseccomp allocates
 * while building. Returns 0 or -errno (-EINVAL for unknown flags). */
int syscall_filter_load(unsigned flags);

/* Renders the same table as an OCI runtime-spec `linux.seccomp` object for
 * the native architecture: defaultAction SCMP_ACT_ERRNO, defaultErrnoRet 1,
 * architectures, syscalls[{names, action, errnoRet?, args?}]. *ret is a new
 * reference owned by the caller. Returns 0 or -ENOMEM. */
int syscall_filter_to_oci(json_t **ret);

/* Writes the compiled BPF program (as loaded by syscall_filter_load(0)) to
 * fd, for inspection with e.g. `scmp_bpf_disasm`. Returns 0 or -errno. */
int syscall_filter_export_bpf(int fd);

/* Number of rules in the table and how many resolve to a syscall on this
 * architecture (the rest, such as `mknod` on aarch64, do not exist here).
 * For tests and `openenv check`. */
void syscall_filter_stats(unsigned *ret_rules, unsigned *ret_native);
