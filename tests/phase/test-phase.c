/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "phase/phase.h"
#include "test-helpers.h"

/*
 * docs/DESIGN.md §4, written out move by move, independently of the table in
 * phase.c: the test fails if either drifts.
 */
static const struct {
        enum phase_actor actor;
        enum phase from, to;
} legal[] = {
        /* reset: only the orchestrator, from any phase */
        { ACTOR_ORCHESTRATOR, PHASE_PROVISIONING, PHASE_PROVISIONING },
        { ACTOR_ORCHESTRATOR, PHASE_READY, PHASE_PROVISIONING },
        { ACTOR_ORCHESTRATOR, PHASE_RUNNING, PHASE_PROVISIONING },
        { ACTOR_ORCHESTRATOR, PHASE_FROZEN, PHASE_PROVISIONING },
        { ACTOR_ORCHESTRATOR, PHASE_SEALED, PHASE_PROVISIONING },
        { ACTOR_ORCHESTRATOR, PHASE_GRADING, PHASE_PROVISIONING },
        { ACTOR_ORCHESTRATOR, PHASE_CLOSED, PHASE_PROVISIONING },
        { ACTOR_ORCHESTRATOR, PHASE_FAILED, PHASE_PROVISIONING },
        /* only the system fails a unit, while it is not over */
        { ACTOR_SYSTEM, PHASE_PROVISIONING, PHASE_FAILED },
        { ACTOR_SYSTEM, PHASE_READY, PHASE_FAILED },
        { ACTOR_SYSTEM, PHASE_RUNNING, PHASE_FAILED },
        { ACTOR_SYSTEM, PHASE_FROZEN, PHASE_FAILED },
        { ACTOR_SYSTEM, PHASE_SEALED, PHASE_FAILED },
        { ACTOR_SYSTEM, PHASE_GRADING, PHASE_FAILED },
        /* provisioning finished */
        { ACTOR_SYSTEM, PHASE_PROVISIONING, PHASE_READY },
        /* first step */
        { ACTOR_ORCHESTRATOR, PHASE_READY, PHASE_RUNNING },
        { ACTOR_SYSTEM, PHASE_READY, PHASE_RUNNING },
        /* inspect / resume */
        { ACTOR_ORCHESTRATOR, PHASE_RUNNING, PHASE_FROZEN },
        { ACTOR_ORCHESTRATOR, PHASE_FROZEN, PHASE_RUNNING },
        /* the episode ends */
        { ACTOR_ORCHESTRATOR, PHASE_READY, PHASE_SEALED },
        { ACTOR_ENVIRONMENT, PHASE_READY, PHASE_SEALED },
        { ACTOR_SYSTEM, PHASE_READY, PHASE_SEALED },
        { ACTOR_ORCHESTRATOR, PHASE_RUNNING, PHASE_SEALED },
        { ACTOR_ENVIRONMENT, PHASE_RUNNING, PHASE_SEALED },
        { ACTOR_SYSTEM, PHASE_RUNNING, PHASE_SEALED },
        { ACTOR_ORCHESTRATOR, PHASE_FROZEN, PHASE_SEALED },
        { ACTOR_SYSTEM, PHASE_FROZEN, PHASE_SEALED },
        /* grading only by the system */
        { ACTOR_SYSTEM, PHASE_SEALED, PHASE_GRADING },
        /* closing */
        { ACTOR_ORCHESTRATOR, PHASE_GRADING, PHASE_CLOSED },
        { ACTOR_SYSTEM, PHASE_GRADING, PHASE_CLOSED },
        { ACTOR_ORCHESTRATOR, PHASE_SEALED, PHASE_CLOSED },
        { ACTOR_SYSTEM, PHASE_SEALED, PHASE_CLOSED },
        { ACTOR_ORCHESTRATOR, PHASE_FAILED, PHASE_CLOSED },
        { ACTOR_SYSTEM, PHASE_FAILED, PHASE_CLOSED },
};

static bool is_legal(enum phase_actor a, enum phase from, enum phase to)
{
        for (size_t i = 0; i < sizeof(legal) / sizeof(legal[0]); i++)
                if (legal[i].actor == a && legal[i].from == from && legal[i].to == to)
                        return true;
        return false;
}

static void machine_at(struct phase_machine *m, enum phase p)
{
        phase_machine_init(m);
        m->current = p; /* tests may place the machine anywhere */
}

Test(phase, every_legal_edge_moves_and_is_recorded)
{
        for (size_t i = 0; i < sizeof(legal) / sizeof(legal[0]); i++) {
                struct phase_machine m;
                machine_at(&m, legal[i].from);
                cr_assert_eq(
                        phase_machine_move(&m, legal[i].actor, legal[i].to, "why", 42, NULL, 0), 0,
                        "legal move %s %s->%s refused", phase_actor_to_string(legal[i].actor),
                        phase_to_string(legal[i].from), phase_to_string(legal[i].to));
                cr_assert_eq(m.current, legal[i].to);
                const struct phase_record *r = phase_machine_history(&m, 0);
                cr_assert_not_null(r);
                cr_assert_eq(r->from, legal[i].from);
                cr_assert_eq(r->to, legal[i].to);
                cr_assert_eq(r->actor, legal[i].actor);
                cr_assert_str_eq(r->reason, "why");
                cr_assert_eq(r->at, 42);
        }
}

Test(phase, every_illegal_triple_is_refused_by_name)
{
        size_t refused = 0;
        for (int a = 0; a < ACTOR_MAX; a++)
                for (int f = 0; f < PHASE_MAX; f++)
                        for (int t = 0; t < PHASE_MAX; t++) {
                                if (is_legal(a, f, t))
                                        continue;
                                struct phase_machine m;
                                char msg[128] = "", want[128];
                                machine_at(&m, f);
                                cr_assert_eq(phase_machine_move(&m, a, t, "x", 1, msg, sizeof(msg)),
                                             -EPERM);
                                snprintf(want, sizeof(want),
                                         "%s cannot move the unit from %s to %s",
                                         phase_actor_to_string(a), phase_to_string(f),
                                         phase_to_string(t));
                                cr_assert_str_eq(msg, want);
                                cr_assert_eq(m.current, (enum phase) f, "refusal must not move");
                                cr_assert_null(phase_machine_history(&m, 0));
                                refused++;
                        }
        /* 3 actors x 8 x 8 = 192 triples, of which 34 are legal. */
        cr_assert_eq(refused, 192 - sizeof(legal) / sizeof(legal[0]));
        cr_assert_eq(refused, 158);
}

Test(phase, the_agent_is_never_an_actor_and_environment_only_ends)
{
        for (int f = 0; f < PHASE_MAX; f++)
                for (int t = 0; t < PHASE_MAX; t++) {
                        cr_assert_not(phase_move_allowed(ACTOR_MAX, f, t));
                        if (phase_move_allowed(ACTOR_ENVIRONMENT, f, t))
                                cr_assert_eq(t, PHASE_SEALED);
                }
}

Test(phase, full_episode_history_in_order)
{
        static const struct {
                enum phase_actor a;
                enum phase to;
                const char *why;
        } path[] = {
                { ACTOR_ORCHESTRATOR, PHASE_PROVISIONING, "reset" },
                { ACTOR_SYSTEM, PHASE_READY, "healthy" },
                { ACTOR_SYSTEM, PHASE_RUNNING, "first step" },
                { ACTOR_ORCHESTRATOR, PHASE_FROZEN, "inspect" },
                { ACTOR_ORCHESTRATOR, PHASE_RUNNING, "resume" },
                { ACTOR_ENVIRONMENT, PHASE_SEALED, "done" },
                { ACTOR_SYSTEM, PHASE_GRADING, "agent zone empty" },
                { ACTOR_SYSTEM, PHASE_CLOSED, "verdict" },
        };
        struct phase_machine m;
        phase_machine_init(&m);
        cr_assert_eq(m.current, PHASE_CLOSED);
        for (size_t i = 0; i < sizeof(path) / sizeof(path[0]); i++)
                cr_assert_eq(phase_machine_move(&m, path[i].a, path[i].to, path[i].why, 100 + i,
                                                NULL, 0),
                             0);
        enum phase prev = PHASE_CLOSED;
        for (size_t i = 0; i < sizeof(path) / sizeof(path[0]); i++) {
                const struct phase_record *r = phase_machine_history(&m, i);
                cr_assert_not_null(r);
                cr_assert_eq(r->from, prev);
                cr_assert_eq(r->to, path[i].to);
                cr_assert_str_eq(r->reason, path[i].why);
                cr_assert_eq(r->at, 100 + i);
                prev = r->to;
        }
        cr_assert_null(phase_machine_history(&m, 8));
}

Test(phase, history_is_bounded_and_keeps_the_newest)
{
        struct phase_machine m;
        phase_machine_init(&m);
        for (unsigned i = 0; i < 1000; i++) {
                cr_assert_eq(phase_machine_move(&m, ACTOR_ORCHESTRATOR, PHASE_PROVISIONING, "reset",
                                                i, NULL, 0),
                             0);
                cr_assert_eq(phase_machine_move(&m, ACTOR_SYSTEM, PHASE_FAILED, "boom", i, NULL, 0),
                             0);
        }
        cr_assert_eq(m.history_len, PHASE_HISTORY_MAX);
        cr_assert_eq(m.moves, 2000);
        cr_assert_eq(phase_machine_history(&m, PHASE_HISTORY_MAX - 1)->to, PHASE_FAILED);
        cr_assert_eq(phase_machine_history(&m, PHASE_HISTORY_MAX - 1)->at, 999);
        cr_assert_eq(phase_machine_history(&m, 0)->at, 1000 - PHASE_HISTORY_MAX / 2);
}

Test(phase, names_round_trip)
{
        for (int p = 0; p < PHASE_MAX; p++)
                cr_assert_eq(phase_from_string(phase_to_string(p)), p);
        for (int a = 0; a < ACTOR_MAX; a++)
                cr_assert_eq(phase_actor_from_string(phase_actor_to_string(a)), a);
        cr_assert_eq(phase_from_string("agent"), -EINVAL);
        cr_assert_eq(phase_from_string(NULL), -EINVAL);
        cr_assert_null(phase_to_string(PHASE_MAX));
}

Test(phase, long_reason_is_truncated_not_overflowed)
{
        struct phase_machine m;
        char reason[500];
        memset(reason, 'r', sizeof(reason) - 1);
        reason[sizeof(reason) - 1] = '\0';
        phase_machine_init(&m);
        cr_assert_eq(
                phase_machine_move(&m, ACTOR_ORCHESTRATOR, PHASE_PROVISIONING, reason, 0, NULL, 0),
                0);
        cr_assert_eq(strlen(phase_machine_history(&m, 0)->reason), 95);
}
