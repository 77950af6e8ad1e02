/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The report of `openenvctl validate` (docs/VALIDATE.md "Report"): every
 * outcome — a graded measurement, unusable input, an internal error, an
 * interruption — is one report with a verdict, and the verdict alone decides
 * the exit code (the map in report.c is the only place that links them,
 * in terms of base/exit-code.h).
 * A report borrows everything it points to.
 */
#include <jansson.h>
#include <stdio.h>

#include "validate/check-result.h"

#define VALIDATE_REPORT_SCHEMA_VERSION 1

enum validate_verdict {
        VERDICT_PASS,        /* exit 0 */
        VERDICT_WARN,        /* exit 0: something could not be proven (status skip) */
        VERDICT_FAIL,        /* exit 1: a proven violation, or evidence that cannot be believed */
        VERDICT_UNUSABLE,    /* exit 2: bad usage, not an image reference, no such image,
                              * an image with no command */
        VERDICT_ERROR,       /* exit 3: engine unreachable, cleanup unverified, internal */
        VERDICT_INTERRUPTED, /* exit 128 + signal, after cleanup */
        _VERDICT_MAX,
};

struct validate_report {
        const char *target;                /* borrowed: the image argument, NULL if none */
        const char *image_id;              /* borrowed: what it resolved to, or NULL */
        const char *run_id;                /* borrowed, or NULL */
        enum validate_verdict verdict;     /* see validate_verdict_for() */
        int signal;                        /* VERDICT_INTERRUPTED: SIGINT or SIGTERM */
        const struct check_result *result; /* borrowed, never NULL */
};

const char *validate_verdict_to_string(enum validate_verdict v);
/* The verdict of a graded result: pass, warn (skip), fail, error. */
enum validate_verdict validate_verdict_for(const struct check_result *r);
int validate_report_exit_code(const struct validate_report *r);
/* New reference to the JSON report. */
json_t *validate_report_to_json(const struct validate_report *r);
/* The human-readable table. */
void validate_report_print_table(const struct validate_report *r, FILE *f);
