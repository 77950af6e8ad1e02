/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The outcome of one episode (docs/DESIGN.md §9): graded, agent_misbehavior
 * or infrastructure_error, the reason, the cgroup subtree blamed, each
 * observer's result, and the facts recorded on the way (a member that died,
 * a custody refusal...).
 *
 * Blame is by subtree: whatever happened under zones/agent is the agent's
 * misbehaviour; services, observers and the daemon are the infrastructure's.
 * The first failure recorded wins: later ones are its consequences.
 *
 * Ownership: a verdict owns its strings and JSON; verdict_done() frees them.
 */
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/macro.h"

enum verdict_kind {
        VERDICT_NONE,
        VERDICT_GRADED,
        VERDICT_AGENT_MISBEHAVIOR,
        VERDICT_INFRASTRUCTURE_ERROR,
        _VERDICT_KIND_MAX,
};

struct verdict {
        enum verdict_kind kind;
        char *reason;      /* owned */
        char *blame;       /* owned: "zones/agent/harness", "daemon"... */
        const char *cause; /* static: who ended the blamed member (member-end.h), or NULL */
        bool graders_ran;  /* an observer ran at sealing or grading */
        json_t *observers; /* owned: name -> result object (or null) */
        json_t *events;    /* owned: [{"at", "what", ...}], bounded */
        json_t *model;     /* owned: what each harness's model proxy did (null: none) */
        uint64_t actions;  /* the unit's count of actions, final at sealing */
};

const char *verdict_kind_to_string(enum verdict_kind k); /* NULL for VERDICT_NONE */

void verdict_init(struct verdict *v);
void verdict_done(struct verdict *v);
/* A failure, unless one was recorded already (returns false then). */
bool verdict_fail(struct verdict *v, enum verdict_kind kind, const char *blame, const char *fmt,
                  ...) printf_fmt(4, 5);
/* Says who ended the member a failure just recorded blames ("host_oom"...). */
void verdict_set_cause(struct verdict *v, const char *cause /* static */);
/* Graded, unless a failure was recorded. */
void verdict_graded(struct verdict *v);
bool verdict_failed(const struct verdict *v);
void verdict_set_observer(struct verdict *v, const char *name, json_t *result /* stolen */);
/* Appends an event object (stolen), stamped with "at" (CLOCK_REALTIME);
 * returns it (borrowed), or NULL when the list is full and it was dropped. */
json_t *verdict_add_event(struct verdict *v, json_t *event);

/* {"episode_id", "verdict", "reason", "blame": {"subtree", "cause"?} | null,
 *  "graders_ran", "observers", "events", "model", "actions"}; new reference. */
json_t *verdict_to_json(const struct verdict *v, const char *episode_id);
