/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Parser for the confinement-relevant lines of /proc/<pid>/status (proc(5)).
 *
 * A line that is missing or malformed leaves its field "unknown" (the has_*
 * flag stays false) rather than zero: old kernels lack NoNewPrivs/Seccomp,
 * and an unknown value must never read as "no capabilities" or "confined".
 * Input is bounded by PROC_STATUS_MAX_BYTES (the caller reads at most that
 * much; a longer input is parsed up to the bound and flagged truncated).
 * Groups beyond PROC_STATUS_MAX_GROUPS set groups_truncated.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/limits.h"

enum proc_cap_set {
        PROC_CAP_INH,
        PROC_CAP_PRM,
        PROC_CAP_EFF,
        PROC_CAP_BND,
        PROC_CAP_AMB,
        _PROC_CAP_MAX,
};

struct proc_status {
        char name[64]; /* "Name:" (comm), "" if unknown */
        bool has_name;
        pid_t ppid;
        pid_t tracer_pid; /* "TracerPid:", 0 = not traced */
        bool has_ppid;
        bool has_tracer_pid;
        uint32_t uid[4]; /* real, effective, saved, filesystem */
        bool has_uid;
        uint32_t gid[4];
        bool has_gid;
        uint32_t groups[PROC_STATUS_MAX_GROUPS];
        size_t n_groups;
        bool has_groups;
        bool groups_truncated;
        uint64_t caps[_PROC_CAP_MAX];
        bool has_caps[_PROC_CAP_MAX];
        int no_new_privs; /* 0/1 */
        bool has_no_new_privs;
        int seccomp; /* 0 disabled, 1 strict, 2 filter */
        bool has_seccomp;
        bool truncated; /* input exceeded PROC_STATUS_MAX_BYTES */
};

/* Never fails on content; -EINVAL only for a NULL buffer with len > 0. */
int proc_status_parse(const char *buf, size_t len, struct proc_status *ret);
const char *proc_cap_set_to_string(enum proc_cap_set s); /* "CapInh"... */
