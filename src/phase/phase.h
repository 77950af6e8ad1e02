/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The unit's phase machine (docs/DESIGN.md §4), as data.
 *
 *   provisioning → ready → running ⇄ frozen → sealed → grading → closed, plus failed.
 *
 * Who may cause which move is one table (phase_allowed_actors()); everything
 * not in it is refused with a message naming actor, from and to. The agent is
 * never an actor. The machine starts in `closed` and keeps a bounded history
 * (oldest entries are dropped first) that /info serves.
 *
 * The machine owns its history strings; it does no I/O and takes the clock
 * from the caller, so tests drive it without a kernel.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/time-util.h"

/* The first PHASE_MANIFEST_MAX phases are also what a manifest names
 * (observers' `phases:`); `failed` is not a phase anything runs in. */
enum phase {
        PHASE_PROVISIONING,
        PHASE_READY,
        PHASE_RUNNING,
        PHASE_FROZEN,
        PHASE_SEALED,
        PHASE_GRADING,
        PHASE_CLOSED,
        PHASE_FAILED,
        PHASE_MAX,
        PHASE_MANIFEST_MAX = PHASE_FAILED,
};
/* A set of phases, as the manifest's `phases:` lists are kept. */
#define PHASE_BIT(p) (1u << (p))

enum phase_actor {
        ACTOR_ORCHESTRATOR,
        ACTOR_ENVIRONMENT,
        ACTOR_SYSTEM,
        ACTOR_MAX,
};

#define PHASE_HISTORY_MAX 256

struct phase_record {
        enum phase from;
        enum phase to;
        enum phase_actor actor;
        char reason[96]; /* truncated copy of the caller's reason */
        usec_t at;       /* CLOCK_REALTIME, µs */
};

struct phase_machine {
        enum phase current;
        struct phase_record history[PHASE_HISTORY_MAX]; /* ring */
        size_t history_start;
        size_t history_len;
        uint64_t moves; /* total accepted moves, including dropped history */
};

const char *phase_to_string(enum phase p);
int phase_from_string(const char *s); /* the phase or -EINVAL */
const char *phase_actor_to_string(enum phase_actor a);
int phase_actor_from_string(const char *s);

/* Bitmask of (1 << actor) allowed to move from → to; 0 if nobody may. */
unsigned phase_allowed_actors(enum phase from, enum phase to);
bool phase_move_allowed(enum phase_actor actor, enum phase from, enum phase to);

void phase_machine_init(struct phase_machine *m);
/*
 * Moves to `to` on behalf of `actor`. Returns 0, or -EPERM when the table
 * refuses; then, if ret_refusal is non-NULL, it receives the message
 * "<actor> cannot move the unit from <from> to <to>" (at most 96 bytes).
 */
int phase_machine_move(struct phase_machine *m, enum phase_actor actor, enum phase to,
                       const char *reason, usec_t now, char *ret_refusal, size_t refusal_size);
/* i-th history record, oldest first; NULL past the end. */
const struct phase_record *phase_machine_history(const struct phase_machine *m, size_t i);
