/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * `openenvctl check enforcement`: for every container of the manifest, a
 * throwaway probe container planned exactly like it (unit_plan_container():
 * same mounts, masks, forwarders, uid range, syscall filter; only argv is
 * replaced by `openenvd-probe attack`) tries everything its zone must not do
 * (enforce-plan.c) and reports each attempt; the check evaluates the report
 * fail-closed.
 *
 * The run needs what the daemon needs (root, isolation on) and builds its
 * own world: a private mount namespace for the calling process, a temporary
 * state dir (mode 0711) under state_parent, a cgroup subtree of its own
 * (the calling process is adopted into it for the duration), an episode
 * directory, canary files and listeners. enforce_run() removes all of it
 * before returning, on every path.
 *
 * Ownership: the report owns its plans (enforce_report_free()).
 */
#include <jansson.h>
#include <stdio.h>

#include "base/macro.h"
#include "base/time-util.h"
#include "enforce/enforce-plan.h"
#include "manifest/manifest.h"

struct enforce_options {
        const struct manifest *manifest; /* borrowed */
        const char *shim_path;           /* openenvd-shim */
        const char *probe_path;          /* static openenvd-probe */
        const char *state_parent;        /* NULL: /var/tmp (must not be under /tmp or /run) */
        unsigned weaken;                 /* test-only: enum container_weaken */
        const char *probe_fault;         /* test-only: openenvd-probe --test-fault */
        usec_t probe_timeout;            /* per probe container; 0: 60 s */
};

struct enforce_report {
        struct enforce_plan *plans; /* owned, one per probed container */
        size_t n_plans;
};

/* Runs every probe. Returns 0 with a report (which may contain failures),
 * or -errno if the check itself could not be set up (nothing was probed). */
int enforce_run(const struct enforce_options *o, struct enforce_report **ret);
struct enforce_report *enforce_report_free(struct enforce_report *r);
DEFINE_CLEANUP_FUNC(struct enforce_report, enforce_report_free);

bool enforce_report_held(const struct enforce_report *r);
json_t *enforce_report_to_json(const struct enforce_report *r);
void enforce_report_format(const struct enforce_report *r, FILE *f);
