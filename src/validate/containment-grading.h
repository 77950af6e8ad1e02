/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Shared by the parts of the containment grader (containment-grader.h), in
 * dependency order:
 *   containment-grading.c  the grading state: violations, gaps, malformed
 *                          evidence, per-item verdicts, typed accessors
 *   grade-launch.c         what the engine was told; the image; the helper
 *   grade-processes.c      every process of the subject: identity,
 *                          capabilities, namespaces, seccomp
 *   grade-mounts.c         every mount and its write check; the controls
 *   containment-grader.c   the sections in order and the result
 *
 * Pure: evidence JSON in, problems out; nothing here touches the system.
 */
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/macro.h"

struct grading {
        char **violations;                 /* proven: FAIL */
        char **unproven;                   /* gaps: SKIP */
        char **notes;                      /* PASS-side evidence */
        char **malformed;                  /* shape errors and impossible results: FAIL */
        unsigned n_violations, n_unproven; /* every report, even a repeated line */
        json_t *item; /* borrowed: problems[] of the process/mount being graded */
        uint64_t uid, gid;
        json_t *allotted;         /* borrowed */
        json_t *writable_outside; /* owned array */
        json_t *controls;         /* owned object */
        json_t *processes;        /* owned array: measured processes with verdicts */
        json_t *mounts;           /* owned array: measured mounts with verdicts */
};

void grading_add(char ***v, const char *fmt, ...) printf_fmt(2, 3);
/* A proven violation (FAIL) or a gap (SKIP); either is also recorded on the
 * item being graded, so the report shows each mount's and process's verdict
 * with its reasons. */
void grading_violation(struct grading *g, const char *fmt, ...) printf_fmt(2, 3);
void grading_gap(struct grading *g, const char *fmt, ...) printf_fmt(2, 3);
/* Evidence of the wrong shape, or a result the helper cannot honestly
 * report: FAIL, whatever else holds. */
void grading_malformed(struct grading *g, const char *fmt, ...) printf_fmt(2, 3);

/* Grading one process or mount: its problems go to obj.problems, and its
 * verdict is "violation", "unproven" or ok_verdict. */
struct item_mark {
        unsigned violations, unproven;
};

struct item_mark grading_item_begin(struct grading *g, json_t *obj);
void grading_item_end(struct grading *g, json_t *obj, struct item_mark m, const char *ok_verdict);

/* Typed accessors: a present value of the wrong type is malformed; absent or
 * null is "not there" (false / NULL). */
bool grading_get_bool(struct grading *g, const json_t *o, const char *k, bool *ret);
bool grading_get_int(struct grading *g, const json_t *o, const char *k, json_int_t *ret);
const char *grading_get_str(struct grading *g, const json_t *o, const char *k);
json_t *grading_get_array(struct grading *g, const json_t *o, const char *k);
json_t *grading_get_object(struct grading *g, const json_t *o, const char *k);

bool grading_str_in(const char *s, const char *const *list, size_t n);
bool grading_strings_contain(const json_t *arr, const char *s);
/* One of the writable roots the subject was given. */
bool grading_is_allotted(const struct grading *g, const char *path);

/* The sections. */
void grade_launch(struct grading *g, const json_t *launch);
void grade_image(struct grading *g, const json_t *image);
void grade_helper(struct grading *g, const json_t *probe);
void grade_processes(struct grading *g, const json_t *probe, const json_t *host_ns);
/* host_mounts: the host's mount table (docs/VALIDATE.md), NULL if unknown. */
void grade_mounts(struct grading *g, const json_t *probe, const json_t *host_mounts);
void grade_controls(struct grading *g, const json_t *probe);
