/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Who answers for an observer's failure: the one blame rule
 * (docs/GRADING.md, "Blame rule").
 *
 * A runner, an observer that reads the workspace or the output of a runner,
 * interprets agent-made bytes by design: a wrong solution can crash it,
 * balloon its memory, hang it, or make it write a bad verdict.json or junk
 * in /out. Whatever it does is the agent's (agent_misbehavior, blamed on the
 * runner's subtree with the cause). An observer that reads no agent data
 * (assets, a service's state, the daemon's action record, nothing) failing
 * is the unit author's or the daemon's: infrastructure_error. What no code
 * in any container can cause (the host's OOM killer, an outside signal, the
 * observer's init crashing, the daemon failing to start it or to copy its
 * inputs) is infrastructure_error for every observer.
 */
#include <stdarg.h>

#include "base/json-util.h"
#include "base/limits.h"
#include "base/strbuf.h"
#include "base/util.h"
#include "unit/episode-internal.h"

static const struct {
        const char *cause; /* blame.cause and the event's */
        bool agent_can;    /* can agent bytes reaching a runner cause it? */
} observer_faults[_OBSERVER_FAULT_MAX] = {
        [OBSERVER_FAULT_EXIT] = { "exit_status", true },
        [OBSERVER_FAULT_TIMEOUT] = { "timeout", true },
        [OBSERVER_FAULT_MEMORY_LIMIT] = { "memory_limit", true },
        [OBSERVER_FAULT_INVALID_RESULT] = { "invalid_result", true },
        [OBSERVER_FAULT_OUTPUT_REFUSED] = { "output_refused", true },
        [OBSERVER_FAULT_HOST_OOM] = { "host_oom", false },
        [OBSERVER_FAULT_INIT] = { "init_crashed", false },
        [OBSERVER_FAULT_NOT_REAPED] = { "not_reaped", false },
        [OBSERVER_FAULT_NOT_STARTED] = { "not_started", false },
};

/* The manifest's observer order is topological: whatever c reads comes
 * before it, so one pass marks every runner (no recursion). */
bool observer_reads_agent_data(const struct manifest *m, const struct manifest_container *c)
{
        const struct manifest_container *const *order;
        size_t n = manifest_observer_order(m, &order);
        bool runner[MANIFEST_MAX_CONTAINERS] = { false };

        for (size_t i = 0; i < n && i < MANIFEST_MAX_CONTAINERS; i++) {
                const struct manifest_container *o = order[i];
                for (size_t r = 0; r < o->n_reads && !runner[i]; r++) {
                        const struct manifest_read *rd = &o->reads[r];
                        if (rd->kind == MANIFEST_READ_WORKSPACE)
                                runner[i] = true;
                        for (size_t j = 0; rd->kind == MANIFEST_READ_OUTPUT && j < i; j++)
                                if (runner[j] && streq(order[j]->name, rd->target))
                                        runner[i] = true;
                }
                if (o == c)
                        return runner[i];
        }
        return false;
}

void observer_fail(struct episode *e, const struct ep_member *mb, enum observer_fault fault,
                   const char *tail, const char *fmt, ...)
{
        bool runner = observer_reads_agent_data(e->cfg->manifest, mb->mc);
        bool agents = runner && observer_faults[fault].agent_can;
        struct strbuf sb = STRBUF_INIT;
        va_list ap;
        json_t *ev;

        va_start(ap, fmt);
        strbuf_vaddf(&sb, fmt, ap);
        va_end(ap);
        /* A failed observer's own last lines go into the verdict, as an
         * exited member's do: why it failed is most often in what it printed. */
        ev = json_pack("{s:s,s:s,s:s,s:s,s:b}", "what", "observer_failed", "container",
                       mb->mc->name, "subtree", mb->subtree, "cause", observer_faults[fault].cause,
                       "runner", runner);
        json_object_set_new(ev, "reason", text_to_json(sb.buf));
        if (tail && *tail)
                json_object_set_new(ev, "output_tail", text_to_json(tail));
        verdict_add_event(&e->verdict, ev);
        if (verdict_fail(&e->verdict,
                         agents ? VERDICT_AGENT_MISBEHAVIOR : VERDICT_INFRASTRUCTURE_ERROR,
                         mb->subtree, "%s", sb.buf))
                verdict_set_cause(&e->verdict, observer_faults[fault].cause);
        strbuf_release(&sb);
}
