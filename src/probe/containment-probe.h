/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The measurement half of `runtime.host_containment`: run inside a helper
 * that shares ONLY the subject's PID namespace, with the subject's uid/gid
 * and no capabilities, it inventories the subject's processes and mounts and
 * attempts bounded writes through /proc/<anchor>/root, then writes one JSON
 * evidence document (schema in docs/VALIDATE.md). It measures and never
 * judges: the grader (src/validate/) decides.
 *
 * The subject's processes are those sharing the anchor's mount namespace;
 * everything else that is visible (except the helper itself) is counted as
 * foreign, which is itself evidence (a shared host PID namespace shows up as
 * hundreds of foreign processes).
 */
#include <stdbool.h>
#include <sys/types.h>

#include "base/json-writer.h"
#include "probe/write-check.h"

#define CONTAINMENT_PROBE_SCHEMA 2
/* Starts every progress line the helper writes (see progress_fd). */
#define CONTAINMENT_PROBE_PROGRESS "openenvd-probe: progress "

struct containment_probe_options {
        pid_t anchor_pid;      /* the subject's init as seen here; usually 1 */
        const char *proc_path; /* borrowed; "/proc" */
        char *const *allotted; /* borrowed, NULL-terminated: positive-control roots */
        struct write_walk_bounds walk;
        /* PR_GET_DUMPABLE as read by main()'s first statement. The helper
         * binary is execute-only, so the kernel makes us non-dumpable at
         * exec (fs/exec.c would_dump()): no process of the subject's uid can
         * ptrace us, open /proc/<us>/mem or our fds. 1 here means that did
         * not happen and the document cannot be trusted; the grader says so. */
        int dumpable_at_start;
        /* Where to write CONTAINMENT_PROBE_PROGRESS "<phase>" lines (-1: none):
         * the provider ends a helper that stops making progress (stopped by
         * the subject) instead of waiting for it. */
        int progress_fd;
        /* Test-only (`openenvctl validate --fault=slow-helper`): wait this
         * long after the first progress line, so that the tests' attacking
         * subjects never lose the race against a helper that would otherwise
         * be done in milliseconds. 0 in every real run. */
        unsigned test_hold_ms;
};

/* Writes the evidence document into w. Fails (-errno) only if /proc cannot be
 * opened at all; every partial failure is recorded in the document. */
int containment_probe_run(const struct containment_probe_options *o, struct jwriter *w);
/* Reads at most max bytes of dirfd/path; *ret_truncated if there was more. */
int read_bounded_at(int dirfd, const char *path, size_t max, char **ret, size_t *ret_len,
                    bool *ret_truncated);
