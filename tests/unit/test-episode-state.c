/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The episode's states as data (src/unit/episode-state.c), checked against
 * the contract written out again here, and against the unit's own phase
 * machine (src/phase/phase.c): every move the episode makes while live must
 * be one the unit's table lets someone make, or the unit would refuse to
 * follow it.
 */
#include <string.h>

#include "phase/phase.h"
#include "test-helpers.h"
#include "unit/episode-internal.h"

#define S(x) EPISODE_##x

/* The contract: every move an episode makes, and only these. */
static const struct {
        enum episode_state from, to;
} contract[] = {
        { S(PROVISIONING), S(STANDBY) }, { S(PROVISIONING), S(FAILED) },
        { S(STANDBY), S(READY) },        { S(READY), S(RUNNING) },
        { S(RUNNING), S(INSPECTING) },   { S(INSPECTING), S(FROZEN) },
        { S(FROZEN), S(RUNNING) },       { S(READY), S(SEALING) },
        { S(RUNNING), S(SEALING) },      { S(INSPECTING), S(SEALING) },
        { S(FROZEN), S(SEALING) },       { S(SEALING), S(SEALED) },
        { S(SEALED), S(GRADING) },       { S(SEALED), S(CLOSED) },
        { S(GRADING), S(CLOSED) },       { S(TEARDOWN), S(GONE) },
};

static bool in_contract(enum episode_state from, enum episode_state to)
{
        /* Teardown from every state before it: reset, discard, exit. */
        if (to == S(TEARDOWN))
                return from != S(TEARDOWN) && from != S(GONE);
        for (size_t i = 0; i < ELEMENTSOF(contract); i++)
                if (contract[i].from == from && contract[i].to == to)
                        return true;
        return false;
}

Test(episode_state, the_table_is_the_contract)
{
        for (int a = 0; a < _EPISODE_STATE_MAX; a++)
                for (int b = 0; b < _EPISODE_STATE_MAX; b++)
                        cr_expect_eq(episode_state_move_allowed(a, b), in_contract(a, b),
                                     "%s -> %s", episode_state_to_string(a),
                                     episode_state_to_string(b));
        cr_expect(!episode_state_move_allowed(_EPISODE_STATE_MAX, S(GONE)));
}

Test(episode_state, each_state_means_one_phase)
{
        static const enum phase want[_EPISODE_STATE_MAX] = {
                [S(PROVISIONING)] = PHASE_PROVISIONING,
                [S(STANDBY)] = PHASE_MAX,
                [S(READY)] = PHASE_READY,
                [S(RUNNING)] = PHASE_RUNNING,
                [S(INSPECTING)] = PHASE_FROZEN,
                [S(FROZEN)] = PHASE_FROZEN,
                [S(SEALING)] = PHASE_SEALED,
                [S(SEALED)] = PHASE_SEALED,
                [S(GRADING)] = PHASE_GRADING,
                [S(CLOSED)] = PHASE_CLOSED,
                [S(FAILED)] = PHASE_FAILED,
                [S(TEARDOWN)] = PHASE_MAX,
                [S(GONE)] = PHASE_MAX,
        };
        for (int s = 0; s < _EPISODE_STATE_MAX; s++) {
                cr_expect(episode_state_to_string(s), "state %d has a name", s);
                cr_expect_eq(episode_state_phase(s), want[s], "%s", episode_state_to_string(s));
        }
}

/* What the unit follows is a move its own table allows (the system's, or
 * one the orchestrator or the environment made first). */
Test(episode_state, the_unit_can_follow_every_live_move)
{
        for (int a = 0; a < _EPISODE_STATE_MAX; a++)
                for (int b = 0; b < _EPISODE_STATE_MAX; b++) {
                        enum phase pa = episode_state_phase(a), pb = episode_state_phase(b);
                        bool someone = false;
                        if (!episode_state_move_allowed(a, b) || pa == PHASE_MAX ||
                            pb == PHASE_MAX || pa == pb)
                                continue;
                        for (int who = 0; who < ACTOR_MAX; who++)
                                someone |= phase_move_allowed(who, pa, pb);
                        cr_expect(someone, "%s -> %s: the unit cannot move %s -> %s",
                                  episode_state_to_string(a), episode_state_to_string(b),
                                  phase_to_string(pa), phase_to_string(pb));
                }
}

static int changes;
static enum episode_state seen_from;

static void on_changed(struct episode *e, enum episode_state from, const char *reason,
                       void *userdata)
{
        (void) e, (void) reason, (void) userdata;
        changes++;
        seen_from = from;
}

Test(episode_state, a_move_outside_the_table_is_refused_and_changes_nothing)
{
        static const struct episode_events ev = { .state_changed = on_changed };
        struct episode e = { .ev = &ev, .state = S(PROVISIONING), .id = "t" };

        cr_expect_eq(episode_set_state(&e, S(GRADING), "skip ahead"), -EINVAL);
        cr_expect_eq(e.state, S(PROVISIONING));
        cr_expect_eq(changes, 0, "nobody told of a move not made");
        cr_expect_eq(episode_set_state(&e, S(STANDBY), "healthy"), 0);
        cr_expect_eq(e.state, S(STANDBY));
        cr_expect_eq(changes, 1);
        cr_expect_eq(seen_from, S(PROVISIONING));
        cr_expect_eq(episode_set_state(&e, S(RUNNING), "an action before activation"), -EINVAL);
        cr_expect_eq(e.state, S(STANDBY));
}
