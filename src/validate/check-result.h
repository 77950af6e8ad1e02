/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * One check's result, as reported by `openenvctl validate` (docs/VALIDATE.md):
 * id, status, evidence lines, remediation (FAIL only), a `measured` object
 * and the duration. A result owns everything it points to.
 */
#include <jansson.h>
#include <stdio.h>

#include "base/macro.h"

enum check_status {
        CHECK_PASS,
        CHECK_FAIL,
        CHECK_SKIP,
        CHECK_ERROR,
        _CHECK_STATUS_MAX,
};

struct check_result {
        char *check_id; /* owned */
        enum check_status status;
        char **evidence;   /* owned strv, never NULL after check_result_new() */
        char *remediation; /* owned, NULL unless FAIL */
        json_t *measured;  /* owned reference, an object */
        double duration_s;
};

const char *check_status_to_string(enum check_status s);
struct check_result *check_result_new(const char *check_id, enum check_status status);
struct check_result *check_result_free(struct check_result *r);
DEFINE_CLEANUP_FUNC(struct check_result, check_result_free);
void check_result_add_evidence(struct check_result *r, const char *line);
/* New reference to the JSON object form. */
json_t *check_result_to_json(const struct check_result *r);
/* The human-readable table. */
void check_result_print_table(const struct check_result *r, const char *target, FILE *f);
