/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The pure `runtime.host_containment` grader: evidence JSON in, result out.
 * It never touches Docker or the kernel, so every rule is unit-tested on
 * synthetic evidence (tests/validate/test-grader.c).
 *
 * Precedence (reference/upstream-containment.md 1.3):
 *   1. no evidence                       -> SKIP "containment evidence is unavailable"
 *   2. evidence of the wrong shape       -> FAIL "malformed containment evidence: ..."
 *   3. any proven violation              -> FAIL listing all of them, even when a
 *                                           positive control failed or an inventory
 *                                           is missing (proof of an escape does not
 *                                           depend on the controls)
 *   4. anything unproven                 -> SKIP naming each gap
 *   5. otherwise                         -> PASS
 *
 * The evidence schema is documented in docs/VALIDATE.md.
 */
#include <jansson.h>
#include <stddef.h>

#include "validate/check-result.h"

#define CONTAINMENT_CHECK_ID "runtime.host_containment"
/* The evidence document the provider assembles (docs/VALIDATE.md). */
#define CONTAINMENT_EVIDENCE_SCHEMA 2
/* Bumped whenever a rule changes what verdict some evidence gets; reported. */
#define CONTAINMENT_POLICY_VERSION 3
#define CONTAINMENT_MALFORMED_REMEDIATION                                                   \
        "The helper's evidence cannot be believed. If the subject traced or tampered with " \
        "the helper, treat the image as hostile; otherwise report a helper/grader mismatch."
#define CONTAINMENT_REMEDIATION                                                              \
        "Run the subject with a read-only image root, as a non-root user, with all "         \
        "capabilities dropped, no-new-privileges, a seccomp filter and private namespaces, " \
        "and let it write only under /tmp and /dev/shm (no volumes, binds or extra tmpfs)."

/* evidence may be NULL (no evidence). Never fails: a grader defect would be
 * an ERROR result, which this code does not produce on any input. */
struct check_result *containment_grade(const json_t *evidence);
/* Parses text first; unparsable text is malformed evidence (FAIL). */
struct check_result *containment_grade_text(const char *text, size_t len);
