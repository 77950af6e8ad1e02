/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "phase/phase.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/macro.h"
#include "base/string-table.h"
#include "base/util.h"

#define O (1u << ACTOR_ORCHESTRATOR)
#define E (1u << ACTOR_ENVIRONMENT)
#define S (1u << ACTOR_SYSTEM)

/*
 * allowed[from][to]: the whole truth about legal moves. Read a row as "from
 * this phase, these actors may go there".
 *
 * - Column provisioning is the reset: only the orchestrator, from anywhere.
 * - Column failed: only the system, from anything not already over.
 * - sealed → grading is the system's alone, and the unit makes it only after
 *   the kernel has reported the agent zone empty (the machine cannot know
 *   that; unit/ enforces the order).
 * - The environment may only report that the episode is done (→ sealed).
 */
static const unsigned allowed[PHASE_MAX][PHASE_MAX] = {
        /* from provisioning */
        [PHASE_PROVISIONING] = { [PHASE_PROVISIONING] = O, [PHASE_READY] = S, [PHASE_FAILED] = S },
        [PHASE_READY] = { [PHASE_PROVISIONING] = O,
                          [PHASE_RUNNING] = O | S,
                          [PHASE_SEALED] = O | E | S,
                          [PHASE_FAILED] = S },
        [PHASE_RUNNING] = { [PHASE_PROVISIONING] = O,
                            [PHASE_FROZEN] = O,
                            [PHASE_SEALED] = O | E | S,
                            [PHASE_FAILED] = S },
        [PHASE_FROZEN] = { [PHASE_PROVISIONING] = O,
                           [PHASE_RUNNING] = O,
                           [PHASE_SEALED] = O | S,
                           [PHASE_FAILED] = S },
        [PHASE_SEALED] = { [PHASE_PROVISIONING] = O,
                           [PHASE_GRADING] = S,
                           [PHASE_CLOSED] = O | S,
                           [PHASE_FAILED] = S },
        [PHASE_GRADING] = { [PHASE_PROVISIONING] = O, [PHASE_CLOSED] = O | S, [PHASE_FAILED] = S },
        [PHASE_CLOSED] = { [PHASE_PROVISIONING] = O },
        [PHASE_FAILED] = { [PHASE_PROVISIONING] = O, [PHASE_CLOSED] = O | S },
};

#undef O
#undef E
#undef S

static const char *const phase_table[PHASE_MAX] = {
        [PHASE_PROVISIONING] = "provisioning",
        [PHASE_READY] = "ready",
        [PHASE_RUNNING] = "running",
        [PHASE_FROZEN] = "frozen",
        [PHASE_SEALED] = "sealed",
        [PHASE_GRADING] = "grading",
        [PHASE_CLOSED] = "closed",
        [PHASE_FAILED] = "failed",
};

static const char *const phase_actor_table[ACTOR_MAX] = {
        [ACTOR_ORCHESTRATOR] = "orchestrator",
        [ACTOR_ENVIRONMENT] = "environment",
        [ACTOR_SYSTEM] = "system",
};

DEFINE_STRING_TABLE_LOOKUP(phase, enum phase);
DEFINE_STRING_TABLE_LOOKUP(phase_actor, enum phase_actor);

unsigned phase_allowed_actors(enum phase from, enum phase to)
{
        if ((unsigned) from >= PHASE_MAX || (unsigned) to >= PHASE_MAX)
                return 0;
        return allowed[from][to];
}

bool phase_move_allowed(enum phase_actor actor, enum phase from, enum phase to)
{
        if ((unsigned) actor >= ACTOR_MAX)
                return false;
        return phase_allowed_actors(from, to) & (1u << actor);
}

void phase_machine_init(struct phase_machine *m)
{
        *m = (struct phase_machine){ .current = PHASE_CLOSED };
}

int phase_machine_move(struct phase_machine *m, enum phase_actor actor, enum phase to,
                       const char *reason, usec_t now, char *ret_refusal, size_t refusal_size)
{
        struct phase_record *rec;

        if (!phase_move_allowed(actor, m->current, to)) {
                if (ret_refusal && refusal_size > 0)
                        (void) snprintf(ret_refusal, refusal_size,
                                        "%s cannot move the unit from %s to %s",
                                        phase_actor_to_string(actor) ?: "unknown actor",
                                        phase_to_string(m->current),
                                        phase_to_string(to) ?: "an unknown phase");
                return -EPERM;
        }

        /* Bounded history: a unit that runs 10^6 episodes must not grow. */
        if (m->history_len == PHASE_HISTORY_MAX) {
                m->history_start = (m->history_start + 1) % PHASE_HISTORY_MAX;
                m->history_len--;
        }
        rec = &m->history[(m->history_start + m->history_len) % PHASE_HISTORY_MAX];
        *rec = (struct phase_record){ .from = m->current, .to = to, .actor = actor, .at = now };
        (void) snprintf(rec->reason, sizeof(rec->reason), "%s", reason ?: "");
        m->history_len++;
        m->moves++;
        m->current = to;
        return 0;
}

const struct phase_record *phase_machine_history(const struct phase_machine *m, size_t i)
{
        if (i >= m->history_len)
                return NULL;
        return &m->history[(m->history_start + i) % PHASE_HISTORY_MAX];
}
