/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What an event of an agent-zone container does to the verdict
 * (docs/GRADING.md, "Verdict policy"): the verdict lists it with its time,
 * its container and the policy that applied; the container's
 * verdict_policy (manifest.h) says whether it also voids grading
 * (agent_misbehavior, blamed on its subtree) or grading runs anyway.
 *
 * Also the evidence taken at sealing that the kill would hide: a leaf's
 * OOM kills and refused forks, and detached processes. What no agent code
 * can cause (the host's OOM killer) is the infrastructure's, whatever the
 * policy says.
 */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/fd-util.h"
#include "base/json-util.h"
#include "base/strbuf.h"
#include "base/util.h"
#include "unit/episode-internal.h"

bool episode_agent_event(struct episode *e, const struct ep_member *mb,
                         enum manifest_verdict_event what, const char *cause, json_t *extra,
                         const char *fmt, ...)
{
        /* The zone as a whole (no member owns it): the unit's policy. */
        const struct manifest_verdict_policy *p =
                mb ? &mb->mc->verdict_policy : &e->cfg->manifest->verdict_policy;
        enum manifest_verdict_action a = p->on[what];
        const char *subtree = mb ? mb->subtree : "zones/agent";
        struct strbuf sb = STRBUF_INIT;
        json_t *ev = extra ?: json_object();
        va_list ap;

        va_start(ap, fmt);
        strbuf_vaddf(&sb, fmt, ap);
        va_end(ap);
        json_object_set_new(ev, "what", json_string(manifest_verdict_event_to_string(what)));
        json_object_set_new(ev, "container", mb ? json_string(mb->mc->name) : json_null());
        json_object_set_new(ev, "subtree", json_string(subtree));
        json_object_set_new(ev, "policy", json_string(manifest_verdict_action_to_string(a)));
        /* Agent-made names may be in it: escaped as the verdict's reason. */
        json_object_set_new(ev, "reason", text_to_json(sb.buf));
        if (cause)
                json_object_set_new(ev, "cause", json_string(cause));
        verdict_add_event(&e->verdict, ev);
        if (a == MANIFEST_VERDICT_VOID &&
            verdict_fail(&e->verdict, VERDICT_AGENT_MISBEHAVIOR, subtree, "%s", sb.buf) && cause)
                verdict_set_cause(&e->verdict, cause);
        strbuf_release(&sb);
        return a == MANIFEST_VERDICT_VOID;
}

/*
 * Detached processes: the shim (the container's PID 1) forks exactly one
 * child, the principal; anything else whose parent is the shim is an orphan
 * the kernel reparented to it, i.e. a process the agent detached (double
 * fork, setsid + exit of its parent). They cannot outlive the principal —
 * when it exits the shim exits and takes the pid namespace with it — so the
 * evidence exists only while the container runs: at sealing, before the
 * kill. Returns how many such processes the leaf holds.
 */
static unsigned count_detached(struct episode *e, const struct ep_member *mb)
{
        cleanup_free pid_t *pids = NULL;
        pid_t shim = mb->m ? member_pid(mb->m) : 0;
        unsigned children = 0;
        size_t n = 0;

        if (shim <= 0 || mb->exited || cgroup_list_pids(e->cfg->cgroups, mb->cgroup, &pids, &n) < 0)
                return 0;
        for (size_t i = 0; i < n; i++) {
                cleanup_free char *stat = NULL, *path = NULL;
                int ppid;
                if (pids[i] == shim)
                        continue;
                path = xasprintf("/proc/%d/stat", (int) pids[i]);
                if (read_full_file_at(AT_FDCWD, path, 4096, &stat, NULL) < 0)
                        continue; /* gone meanwhile */
                /* "pid (comm) state ppid ...": comm may hold anything but ")". */
                const char *rp = strrchr(stat, ')');
                if (rp && sscanf(rp + 1, " %*c %d", &ppid) == 1 && ppid == shim)
                        children++;
        }
        /* One of them is the principal. */
        return children > 1 ? children - 1 : 0;
}

/* What a leaf's counters say about an agent-zone member: each kind of
 * event once, with how many times the kernel counted it. */
static void limits_evidence(struct episode *e, const struct ep_member *mb,
                            const struct cgroup_stats *st)
{
        if (st->oom_kills > 0 && st->memory_max_events == 0) {
                /* No limit of its own was reached: the OOM killer came
                 * from above (member-end.h). No agent byte decides that. */
                verdict_add_event(&e->verdict,
                                  json_pack("{s:s,s:s,s:s,s:I}", "what", "host_oom", "container",
                                            mb->mc->name, "subtree", mb->subtree, "count",
                                            (json_int_t) st->oom_kills));
                if (verdict_fail(&e->verdict, VERDICT_INFRASTRUCTURE_ERROR, mb->subtree,
                                 "%s lost a process to the host's OOM killer (its own memory "
                                 "limit was never reached)",
                                 mb->mc->name))
                        verdict_set_cause(&e->verdict, member_end_to_string(MEMBER_END_HOST_OOM));
        } else if (st->oom_kills > 0)
                (void) episode_agent_event(
                        e, mb, MANIFEST_VERDICT_EVENT_OOM_KILL,
                        member_end_to_string(MEMBER_END_MEMORY_LIMIT),
                        json_pack("{s:I}", "count", (json_int_t) st->oom_kills),
                        "%s exhausted its memory (%llu process%s OOM-killed at its own limit)",
                        mb->mc->name, (unsigned long long) st->oom_kills,
                        st->oom_kills == 1 ? "" : "es");
        if (st->pids_max_events > 0)
                (void) episode_agent_event(
                        e, mb, MANIFEST_VERDICT_EVENT_PIDS_LIMIT,
                        member_end_to_string(MEMBER_END_PIDS_LIMIT),
                        json_pack("{s:I}", "count", (json_int_t) st->pids_max_events),
                        "%s hit its pids limit (%llu fork%s refused)", mb->mc->name,
                        (unsigned long long) st->pids_max_events,
                        st->pids_max_events == 1 ? "" : "s");
}

/*
 * Evidence the kill itself would hide, per leaf so that each event names
 * its container: OOM kills (hitting memory.max alone is just reclaim),
 * forks refused by pids.max, detached processes.
 */
void agent_events_at_sealing(struct episode *e)
{
        for (size_t i = 0; i < e->n_members; i++) {
                struct ep_member *mb = &e->members[i];
                struct cgroup_stats st;
                unsigned n;
                if (mb->mc->zone != MANIFEST_ZONE_AGENT || !mb->started)
                        continue;
                if (cgroup_stats(e->cfg->cgroups, mb->cgroup, &st) >= 0)
                        limits_evidence(e, mb, &st);
                n = count_detached(e, mb);
                if (n > 0)
                        (void) episode_agent_event(e, mb, MANIFEST_VERDICT_EVENT_DETACHED, NULL,
                                                   json_pack("{s:i}", "count", (int) n),
                                                   "%s left %u detached process%s behind",
                                                   mb->mc->name, n, n == 1 ? "" : "es");
        }
}
