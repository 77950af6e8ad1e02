/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Preflight: would isolation be on here? Every check runs for real (the
 * namespace, overlayfs and nosymfollow checks in forked children that report
 * {step, errno} over a pipe, bounded by a timeout and SIGKILLed if they hang;
 * the cgroup check creates and removes a probe subtree in every hierarchy we
 * would use). Nothing is left behind: children's mounts live in their private
 * mount namespaces, probe cgroups are removed.
 *
 * The report owns all its strings. Checks come in a fixed order (see
 * docs/CGROUPS.md); isolation is on iff every required check is ok, and each
 * failed required check contributes one reason "<what>: <detail>".
 */
#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "base/macro.h"
#include "base/time-util.h"
#include "cgroup/cgroup.h"

struct preflight_options {
        const struct cgroup_layout *layout; /* borrowed; NULL: detect */
        usec_t child_timeout;               /* per forked check; 0: 5 s */
};

struct preflight_check {
        const char *name; /* static */
        bool ok;
        bool required; /* a failure turns isolation off */
        char *detail;  /* owned */
};

struct preflight_report {
        bool isolation;
        char **reasons;                 /* owned, NULL-terminated */
        struct preflight_check *checks; /* owned */
        size_t n_checks;
        bool cgroup_detected;
        enum cgroup_mode cgroup_mode;
        char *cgroup_v2_mount; /* owned, NULL if not detected */
        char *cgroup_v1_mount; /* owned, NULL on pure v2 */
        char *cgroup_own;      /* owned: our cgroup in the cgroup2 tree */
        bool cgroup_kill;
        bool cgroup_freeze;
};

/* Runs every check; fails only on programming errors (-EINVAL): a host that
 * cannot isolate is a successful run with isolation == false. */
int preflight_run(const struct preflight_options *opts, struct preflight_report **ret);
struct preflight_report *preflight_report_free(struct preflight_report *r);
DEFINE_CLEANUP_FUNC(struct preflight_report, preflight_report_free);

/* Reasons joined with "; " (for "isolation disabled: <reasons>"); "" if on. */
char *preflight_report_reasons(const struct preflight_report *r);
const struct preflight_check *preflight_report_find(const struct preflight_report *r,
                                                    const char *name);
/* {"isolation","reasons","checks":[{name,ok,required,detail}],"cgroup":{...}} */
json_t *preflight_report_to_json(const struct preflight_report *r);
/* Human-readable table, one check per line, then the verdict. */
char *preflight_report_format(const struct preflight_report *r);
