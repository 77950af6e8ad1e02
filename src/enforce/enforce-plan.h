/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The plan of `openenvctl check enforcement` for one probe container: every
 * attempt the zone must resist, grouped by guarantee, and the evaluation of
 * the probe's report against it. Pure (no I/O): the runner (enforce.c)
 * gathers the targets, runs the probe and feeds its report in here, so the
 * fail-closed rules can be unit-tested without a kernel.
 *
 * Fail closed: an attempt holds only when its result equals its expectation
 * ("denied" for attacks, "complete" for the report itself). A planned probe
 * attempt with no report line is "missing", with two lines "error"
 * (duplicated); a line that does not parse, names an unplanned attempt or
 * contradicts the plan fails the `probe-report` guarantee, and so do a
 * missing end line and a probe that did not exit 0. A guarantee holds only
 * if it has at least one attempt and all of them hold.
 *
 * Ownership: a plan owns its strings and attempts (enforce_plan_done()).
 */
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "base/macro.h"

enum enforce_guarantee {
        G_MASKED_PATHS,
        G_READ_ONLY_ROOT,
        G_NETWORK,
        G_SOCKETS,
        G_PROCESSES,
        G_NON_ROOT,
        G_CAPABILITIES,
        G_PIDS_LIMIT,
        G_MEMORY_LIMIT,
        G_MOUNT,
        G_NAMESPACES,
        G_PTRACE,
        G_BPF,
        G_KERNEL_INTERFACES,
        G_DEVICES,
        G_KERNEL_TUNABLES,
        G_MODEL_KEY,
        G_FD_ESCAPE,
        G_SYMLINK_SOURCES,
        G_PROBE_REPORT,
        _G_MAX,
};

const char *enforce_guarantee_to_string(enum enforce_guarantee g); /* "masked-paths" */
const char *enforce_guarantee_description(enum enforce_guarantee g);
int enforce_guarantee_from_string(const char *s); /* -EINVAL if unknown */

enum enforce_result {
        ENFORCE_PENDING,  /* not evaluated yet */
        ENFORCE_DENIED,   /* the attack was refused */
        ENFORCE_ALLOWED,  /* the attack succeeded */
        ENFORCE_ERROR,    /* unproven: unexpected errno, crash, duplicate report */
        ENFORCE_MISSING,  /* no report for it */
        ENFORCE_COMPLETE, /* probe-report: the probe reported everything and exited 0 */
        _ENFORCE_RESULT_MAX,
};

const char *enforce_result_to_string(enum enforce_result r);

struct enforce_attempt {
        char *name; /* owned, unique in the plan */
        enum enforce_guarantee guarantee;
        char *kind; /* owned: a probe attack kind (probe/attack.h), or "host" */
        char *arg;  /* owned, "-" if none */
        bool on_host;
        enum enforce_result expected; /* DENIED, or COMPLETE for the report */
        enum enforce_result result;
        char *detail; /* owned, may be NULL */
        unsigned n_reports;
};

struct enforce_plan {
        char *zone;      /* owned */
        char *container; /* owned: the manifest container the probe was planned as */
        struct enforce_attempt *attempts; /* owned */
        size_t n_attempts;
};

/* Everything the attempts aim at, gathered by the runner. */
struct enforce_targets {
        const char *state_dir;        /* masked in every container */
        const char *canary_file;      /* world-readable file in the state dir */
        const char *key_file;         /* the fake "real model key" file */
        const char *key_marker_hex;   /* hex of the key's prefix (never in clear in argv) */
        char *const *hidden_paths;    /* asset sources etc.: must read/list as nothing */
        char *const *kernel_masked;   /* /proc and /sys entries the launcher masks */
        char *const *foreign_sockets; /* unix sockets by host path: daemon, other containers */
        char *const *canary_hosts;    /* IPv4 addresses of the canary TCP listener */
        uint16_t canary_port;
        pid_t host_pid;        /* a pid outside the container (the check's own) */
        const char *link_path; /* inside: a symlink in a mount, into the state dir */
        uint64_t fork_count;   /* children to fork: past pids.max */
        uint64_t alloc_bytes;  /* memory to touch: past memory.max */
};

void enforce_plan_init(struct enforce_plan *p, const char *zone, const char *container);
void enforce_plan_done(struct enforce_plan *p);
void enforce_plan_add(struct enforce_plan *p, const char *name, enum enforce_guarantee g,
                      const char *kind, const char *arg, bool on_host);
struct enforce_attempt *enforce_plan_find(struct enforce_plan *p, const char *name);
/* Sets the result of a (host) attempt. */
void enforce_plan_set(struct enforce_plan *p, const char *name, enum enforce_result r,
                      const char *fmt, ...) printf_fmt(4, 5);

/* The full attack plan of one container (docs/DESIGN.md §10 and more). */
void enforce_plan_build(struct enforce_plan *p, const struct enforce_targets *t);

/* argv of the probe inside the container: probe attack --out OUT [--test-fault F]
 * -- NAME GUARANTEE KIND ARG... for every in-probe attempt. */
char **enforce_plan_probe_argv(const struct enforce_plan *p, const char *probe, const char *out,
                               const char *fault);

/* How the probe container ended, as the runner saw it. */
struct enforce_probe_exit {
        bool started;
        bool timed_out;
        int status;              /* shim exit status (128+signal if killed); valid if started */
        const char *start_error; /* borrowed: why it did not start, or NULL */
};

/* Evaluates the report (one JSON object per line) against the plan; every
 * in-probe attempt and `probe-report` get a result. Never fails. */
void enforce_plan_ingest(struct enforce_plan *p, const char *buf, size_t len,
                         const struct enforce_probe_exit *ex);

bool enforce_attempt_held(const struct enforce_attempt *a);
bool enforce_plan_guarantee_held(const struct enforce_plan *p, enum enforce_guarantee g);
bool enforce_plan_held(const struct enforce_plan *p);

/* {"zone","container","held","guarantees":[...],"attempts":[...]} */
json_t *enforce_plan_to_json(const struct enforce_plan *p);
/* Table rows "zone container guarantee held|FAILED failing-attempts". */
void enforce_plans_format(const struct enforce_plan *plans, size_t n, FILE *f);
