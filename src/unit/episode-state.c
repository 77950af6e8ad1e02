/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The episode's states as data: their names, the moves between them and
 * what each means to the unit's phase. Every change of an episode's state
 * is episode_set_state(), which refuses a move the table does not list and
 * tells the unit (ev->state_changed), which follows with its phase
 * (unit.c): the unit never re-decides a move the episode made.
 */
#include "base/log.h"
#include "base/string-table.h"
#include "unit/episode-internal.h"

static const char *const episode_state_table[_EPISODE_STATE_MAX] = {
        [EPISODE_PROVISIONING] = "provisioning",
        [EPISODE_STANDBY] = "standby",
        [EPISODE_READY] = "ready",
        [EPISODE_RUNNING] = "running",
        [EPISODE_INSPECTING] = "inspecting",
        [EPISODE_FROZEN] = "frozen",
        [EPISODE_SEALING] = "sealing",
        [EPISODE_SEALED] = "sealed",
        [EPISODE_GRADING] = "grading",
        [EPISODE_CLOSED] = "closed",
        [EPISODE_FAILED] = "failed",
        [EPISODE_TEARDOWN] = "teardown",
        [EPISODE_GONE] = "gone",
};

DEFINE_STRING_TABLE_LOOKUP_TO_STRING(episode_state, enum episode_state);

#define TO(s) (1u << EPISODE_##s)

/* From each state, where it may go. Teardown is open from every state
 * before it: a reset, a discarded standby or the daemon leaving ends an
 * episode wherever it is. */
static const unsigned episode_moves[_EPISODE_STATE_MAX] = {
        [EPISODE_PROVISIONING] = TO(STANDBY) | TO(FAILED) | TO(TEARDOWN),
        [EPISODE_STANDBY] = TO(READY) | TO(TEARDOWN),
        /* Inspection needs an action first: the unit's table has no ready -> frozen. */
        [EPISODE_READY] = TO(RUNNING) | TO(SEALING) | TO(TEARDOWN),
        [EPISODE_RUNNING] = TO(INSPECTING) | TO(SEALING) | TO(TEARDOWN),
        [EPISODE_INSPECTING] = TO(FROZEN) | TO(SEALING) | TO(TEARDOWN),
        [EPISODE_FROZEN] = TO(RUNNING) | TO(SEALING) | TO(TEARDOWN),
        [EPISODE_SEALING] = TO(SEALED) | TO(TEARDOWN),
        /* A failure before grading closes it without the grading observers. */
        [EPISODE_SEALED] = TO(GRADING) | TO(CLOSED) | TO(TEARDOWN),
        [EPISODE_GRADING] = TO(CLOSED) | TO(TEARDOWN),
        [EPISODE_CLOSED] = TO(TEARDOWN),
        [EPISODE_FAILED] = TO(TEARDOWN),
        [EPISODE_TEARDOWN] = TO(GONE),
        [EPISODE_GONE] = 0,
};

/* The unit's phase while the episode is its live one; PHASE_MAX: none (a
 * standby is built beside the live episode; one torn down is a record).
 * Total: every state has its line, checked by test-episode-state.c. */
static const enum phase episode_phases[_EPISODE_STATE_MAX] = {
        [EPISODE_PROVISIONING] = PHASE_PROVISIONING,
        [EPISODE_STANDBY] = PHASE_MAX,
        [EPISODE_READY] = PHASE_READY,
        [EPISODE_RUNNING] = PHASE_RUNNING,
        [EPISODE_INSPECTING] = PHASE_FROZEN,
        [EPISODE_FROZEN] = PHASE_FROZEN,
        [EPISODE_SEALING] = PHASE_SEALED,
        [EPISODE_SEALED] = PHASE_SEALED,
        [EPISODE_GRADING] = PHASE_GRADING,
        [EPISODE_CLOSED] = PHASE_CLOSED,
        [EPISODE_FAILED] = PHASE_FAILED,
        [EPISODE_TEARDOWN] = PHASE_MAX,
        [EPISODE_GONE] = PHASE_MAX,
};

bool episode_state_move_allowed(enum episode_state from, enum episode_state to)
{
        if (from >= _EPISODE_STATE_MAX || to >= _EPISODE_STATE_MAX)
                return false;
        return episode_moves[from] & (1u << to);
}

enum phase episode_state_phase(enum episode_state s)
{
        return s < _EPISODE_STATE_MAX ? episode_phases[s] : PHASE_MAX;
}

int episode_set_state(struct episode *e, enum episode_state to, const char *reason)
{
        enum episode_state from = e->state;

        if (!episode_state_move_allowed(from, to)) {
                /* A move the table lacks is a bug: said, never made. */
                log_error_fields(LOG_FIELDS({ "episode_id", e->id }),
                                 "episode %s: internal error: no move from %s to %s (%s)", e->id,
                                 episode_state_to_string(from), episode_state_to_string(to),
                                 reason);
                return -EINVAL;
        }
        e->state = to;
        log_debug_fields(LOG_FIELDS({ "episode_id", e->id }), "episode %s: %s -> %s (%s)", e->id,
                         episode_state_to_string(from), episode_state_to_string(to), reason);
        if (e->ev && e->ev->state_changed)
                e->ev->state_changed(e, from, reason, e->userdata);
        return 0;
}
