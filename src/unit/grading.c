/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Sealing, grading and inspection of one episode (docs/DESIGN.md §9), as a
 * chain of event-loop steps: nothing here waits in a blocking call.
 *
 * Sealing: the agent's relays close; evidence the kill would hide is taken
 * (pids/memory limits hit, detached processes); the agent zone is killed and
 * the kernel must report it empty within kill_deadline_s (else
 * agent_misbehavior); a full workspace is blamed on whoever owns its bytes.
 * Then early observers are stopped and collected, and the observers listing
 * sealed, then grading, run one at a time in `after` order, each only after
 * the previous one's cgroup is empty. An observer reads the workspace only
 * as a custody copy made after the agent zone was empty, and another
 * observer's output only as a custody copy made after that one's cgroup was
 * empty; custody copies and tree walks run in a child process
 * (child-job.h). A refusal of agent-made data (FIFO, device, socket, link,
 * sparse or oversized file, too many or too deep entries) is
 * agent_misbehavior with the reason.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fd-util.h"
#include "base/json-util.h"
#include "base/limits.h"
#include "base/log.h"
#include "base/util.h"
#include "unit/custody.h"
#include "unit/disk-blame.h"
#include "unit/episode-backend.h"
#include "unit/episode-internal.h"

/* An observer's leaf must be empty this long after its kill. */
#define OBSERVER_REAP_TIMEOUT (5 * USEC_PER_SEC)
/* Freezing for inspection. */
#define FREEZE_TIMEOUT (5 * USEC_PER_SEC)

static void run_step(struct episode *e);
static void run_observers(struct episode *e, enum phase phase, bool stop_only,
                          void (*then)(struct episode *e));

static bool reads(const struct manifest_container *c, enum manifest_read_kind k)
{
        return manifest_container_reads(c, k);
}

/* --- observers ----------------------------------------------------------------- */

/* An observer's result: its /out/verdict.json, a bounded JSON object. The
 * observer wrote it: no link, no FIFO, no device (O_NONBLOCK, then S_ISREG). */
static json_t *read_result(struct episode *e, const struct ep_member *mb, int *ret_error)
{
        cleanup_free char *out = unit_observer_dir(&e->plan, mb->mc->name, "out");
        cleanup_close int dfd = open(out, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        cleanup_close int fd = -EBADF;
        cleanup_free char *data = NULL;
        struct stat st;
        json_t *j;
        size_t len;
        int r;

        *ret_error = 0;
        if (dfd < 0)
                return json_null();
        fd = openat(dfd, "verdict.json", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (fd < 0) {
                if (errno != ENOENT)
                        *ret_error = -errno;
                return json_null();
        }
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
                *ret_error = -EBADMSG;
                return json_null();
        }
        r = read_full_fd(fd, (size_t) VERDICT_MAX_BYTES, &data, &len);
        if (r < 0) {
                *ret_error = r;
                return json_null();
        }
        j = json_loadb(data, len, JSON_REJECT_DUPLICATES, NULL);
        if (!j || !json_is_object(j)) {
                json_decref(j);
                *ret_error = -EBADMSG;
                return json_null();
        }
        return j;
}

/* The current observer's leaf is empty (or its deadline passed): reap it,
 * record its result and whatever went wrong, blamed by the one rule
 * (observer-blame.c); the run moves to the next. */
static void reaped(struct episode *e, int result)
{
        struct ep_member *mb = e->run.current;
        cleanup_free char *why = TAKE_PTR(e->run.why);
        enum observer_fault fault = why ? OBSERVER_FAULT_TIMEOUT : _OBSERVER_FAULT_MAX;
        /* Read before the member goes with its output. */
        cleanup_free char *tail = mb->m ? member_output_tail(mb->m, LOG_TAIL_LINES) : NULL;
        int init_signal = mb->m && mb->exited ? member_init_signal(mb->m) : 0;
        bool killed = mb->killed;
        struct cgroup_stats stats = {};
        json_t *res;
        int rerr;

        episode_stop_member(mb);
        if (result < 0 && !why) {
                fault = OBSERVER_FAULT_NOT_REAPED;
                why = xasprintf("observer %s did not exit", mb->mc->name);
        }
        if (!why && cgroup_stats(e->cfg->cgroups, mb->cgroup, &stats) >= 0) {
                enum member_end end = member_end_of_limits(&stats);
                if (end == MEMBER_END_MEMORY_LIMIT || end == MEMBER_END_HOST_OOM) {
                        fault = end == MEMBER_END_HOST_OOM ? OBSERVER_FAULT_HOST_OOM
                                                           : OBSERVER_FAULT_MEMORY_LIMIT;
                        why = xasprintf("observer %s ran out of memory (%s)", mb->mc->name,
                                        end == MEMBER_END_HOST_OOM ? "the host's OOM killer"
                                                                   : "its own limit");
                }
        }
        /* Its init (the shim) died of a signal the daemon did not send:
         * nothing inside can do that (member-end.h). */
        if (!why && init_signal && !killed) {
                fault = OBSERVER_FAULT_INIT;
                why = xasprintf("observer %s: its init died of signal %d", mb->mc->name,
                                init_signal);
        }
        /* Killed on purpose (an early observer at sealing): death by
         * signal is no failure then. */
        if (!why && mb->status != 0 && !(killed && mb->status > 128)) {
                fault = OBSERVER_FAULT_EXIT;
                why = xasprintf("observer %s exited with status %d", mb->mc->name, mb->status);
        }
        res = read_result(e, mb, &rerr);
        if (!why && rerr < 0) {
                fault = OBSERVER_FAULT_INVALID_RESULT;
                why = xasprintf("observer %s wrote an invalid verdict.json", mb->mc->name);
        }
        verdict_set_observer(&e->verdict, mb->mc->name, res);
        /* An early observer ended at sealing without its turn graded nothing. */
        if (e->run.phase != PHASE_FROZEN && !e->run.stop_only)
                e->verdict.graders_ran = true;
        if (why)
                observer_fail(e, mb, fault, tail, "%s", why);
        e->run.current = NULL;
        e->run.index++;
        e->run.stage = RUN_NEXT;
}

static void on_reaped(struct episode *e, int result)
{
        reaped(e, result);
        run_step(e);
}

/* Ends the current observer: anything it left behind dies before the next
 * one starts. True when it is reaped already (run_advance()'s contract). */
static bool collect(struct episode *e)
{
        struct ep_member *mb = e->run.current;
        const char *rel = mb->cgroup;

        loop_timer_set(e->deadline, USEC_INFINITY);
        e->run.stage = RUN_REAP;
        (void) cgroup_kill(e->cfg->cgroups, mb->cgroup);
        if (episode_watch(e, &rel, 1, CGROUP_WATCH_EMPTY, OBSERVER_REAP_TIMEOUT, on_reaped) >= 0)
                return false;
        reaped(e, -ENOMEM);
        return true;
}

void grading_observer_exited(struct episode *e, struct ep_member *mb)
{
        if (e->run.stage == RUN_WAIT && e->run.current == mb && collect(e))
                run_step(e);
}

void grading_deadline(struct episode *e)
{
        struct ep_member *mb = e->run.current;

        if (e->run.stage != RUN_WAIT || !mb)
                return;
        free(e->run.why);
        e->run.why = xasprintf("observer %s timed out", mb->mc->name);
        if (collect(e))
                run_step(e);
}

static void after_input(struct episode *e, int result, const char *out, size_t len)
{
        struct ep_member *mb = e->run.current;
        const struct manifest_read *rd = &mb->mc->reads[e->run.input];
        struct custody_report o = custody_outcome(result, out, len);

        if (o.r < 0) {
                const struct ep_member *up = episode_find_member(
                        e, manifest_find_container(e->cfg->manifest, rd->target));
                /* What the upstream observer left in its /out: the agent's
                 * when that one is a runner, else its author's (the rule). */
                if (custody_reason_is_source_fault(o.reason))
                        observer_fail(e, up, OBSERVER_FAULT_OUTPUT_REFUSED, NULL, "%s output: %s",
                                      rd->target, o.message);
                else
                        verdict_fail(&e->verdict, VERDICT_INFRASTRUCTURE_ERROR, "daemon",
                                     "%s output: %s", rd->target, o.message);
                custody_report_done(&o);
                e->run.stage = RUN_NEXT; /* the verdict stops the run */
                run_step(e);
                return;
        }
        custody_report_done(&o);
        e->run.input++;
        run_step(e);
}

/* Whose entry was it? Its owner's host uid (as the copier saw it) says;
 * an entry of no agent member's (the seed's) is the agent zone's. */
static const char *owner_subtree(struct episode *e, int64_t owner)
{
        const char *blame = "zones/agent";

        for (size_t i = 0; owner >= 0 && i < e->n_members; i++) {
                const struct ep_member *a = &e->members[i];
                uid_t base = unit_container_host_uid(&e->plan, a->mc) - UNIT_PRINCIPAL_UID;
                if (a->mc->zone == MANIFEST_ZONE_AGENT && (uid_t) owner >= base &&
                    (uid_t) owner - base < UNIT_UID_RANGE)
                        blame = a->subtree;
        }
        return blame;
}

static void after_workspace_copy(struct episode *e, int result, const char *out, size_t len)
{
        struct custody_report o = custody_outcome(result, out, len);

        e->workspace_copied = true;
        if (o.r < 0) {
                const char *blame = owner_subtree(e, o.owner);
                if (custody_reason_is_source_fault(o.reason))
                        verdict_fail(&e->verdict, VERDICT_AGENT_MISBEHAVIOR, blame,
                                     "workspace refused by custody: %s", o.message);
                else
                        verdict_fail(&e->verdict, VERDICT_INFRASTRUCTURE_ERROR, "daemon",
                                     "workspace custody copy: %s", o.message);
                e->run.stage = RUN_NEXT;
        } else
                e->run.stage = RUN_INPUTS;
        custody_report_done(&o);
        run_step(e);
}

/* Stages the current observer's inputs one custody copy at a time, then
 * starts it (run_advance()'s contract). */
static bool stage_inputs(struct episode *e)
{
        struct ep_member *mb = e->run.current;
        const struct manifest_container *c = mb->mc;

        for (; e->run.input < c->n_reads; e->run.input++) {
                const struct manifest_read *rd = &c->reads[e->run.input];
                if (rd->kind != MANIFEST_READ_OUTPUT)
                        continue;
                cleanup_free char *src = unit_observer_dir(&e->plan, rd->target, "out");
                cleanup_free char *dst = unit_observer_dir(&e->plan, c->name, "inputs");
                /* A copy from an earlier run of the same phase list goes first:
                 * it is ours (custody-made, bounded). */
                cleanup_close int dfd = open(dst, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                /* (Made ahead, its view is bound to the empty one there.) */
                if (dfd >= 0 && !episode_member_gated(mb))
                        (void) rm_rf_at(dfd, rd->target);
                uint64_t max = (c->effective.disk_mb ?: 256) * 1024 * 1024;
                if (start_custody(e, src, dst, rd->target, max, false, after_input) < 0) {
                        verdict_fail(&e->verdict, VERDICT_INFRASTRUCTURE_ERROR, "daemon",
                                     "%s inputs: cannot copy %s", c->name, rd->target);
                        e->run.stage = RUN_NEXT;
                        return true;
                }
                return false; /* after_input() goes on */
        }
        bool released = false;
        if (episode_member_gated(mb)) {
                released = episode_release_member(e, mb, e->run.phase) >= 0;
                if (!released)
                        observer_gate_discard(e, mb, mb->start_error);
        }
        if (!released && episode_start_member(e, mb, e->run.phase) < 0) {
                observer_fail(e, mb, OBSERVER_FAULT_NOT_STARTED, NULL, "observer %s did not start",
                              c->name);
                e->run.stage = RUN_NEXT;
                e->run.index++;
                return true;
        }
        e->run.stage = RUN_WAIT;
        loop_timer_set(e->deadline, loop_now(e->cfg->loop) + e->cfg->observer_timeout);
        return false;
}

/* One step of the run: picks the next observer and takes it as far as it
 * can go now. True when another step can follow at once; false when the
 * run waits for an event (a custody copy, an observer, its reaping, whose
 * callbacks call run_step()) or is over. A loop, not recursion: a run of
 * failures never deepens the stack. */
static bool run_advance(struct episode *e)
{
        const struct manifest_container *const *order;
        size_t n = manifest_observer_order(e->cfg->manifest, &order);

        switch (e->run.stage) {
        case RUN_IDLE:
        case RUN_WAIT:
        case RUN_REAP:
                return false;
        case RUN_WORKSPACE: {
                cleanup_free char *src = xasprintf("%s/workspace/merged", e->dir);
                cleanup_free char *dst = unit_workspace_copy_dir(&e->plan);
                uint64_t mb =
                        manifest_zone(e->cfg->manifest, MANIFEST_ZONE_AGENT)->resources.disk_mb
                                ?: 256;
                /* The episode's first copy goes to the tmpfs made with it;
                 * a later one to a fresh tmpfs, which no view made ahead
                 * shows. */
                bool fresh = e->workspace_copies++ > 0;
                if (fresh)
                        observer_gate_discard_workspace_readers(e);
                if (start_custody(e, src, dst, UNIT_WORKSPACE_COPY_NAME, mb * 1024 * 1024, fresh,
                                  after_workspace_copy) < 0) {
                        verdict_fail(&e->verdict, VERDICT_INFRASTRUCTURE_ERROR, "daemon",
                                     "workspace custody copy could not start");
                        e->run.stage = RUN_NEXT;
                        return true;
                }
                return false;
        }
        case RUN_INPUTS:
                return stage_inputs(e);
        case RUN_NEXT:
                break;
        }

        for (; e->run.index < n; e->run.index++) {
                const struct manifest_container *c = order[e->run.index];
                struct ep_member *mb = episode_find_member(e, c);

                if (e->run.stop_only) {
                        /* Early observers not listed later: end them now. */
                        if (!manifest_container_runs_early(c) || !mb->m ||
                            manifest_container_lists(c, PHASE_SEALED) ||
                            manifest_container_lists(c, PHASE_GRADING))
                                continue;
                        e->run.current = mb;
                        mb->killed = !mb->exited;
                        return collect(e);
                }
                if (!manifest_container_lists(c, e->run.phase))
                        continue;
                /* The first failure ends sealing and grading: what follows
                 * would grade a broken episode. (An inspection shows what
                 * is there, whatever the verdict so far.) */
                if (verdict_failed(&e->verdict) && e->run.phase != PHASE_FROZEN)
                        break;
                e->run.current = mb;
                /* Made ahead but dead at its gate: started anew. */
                if (mb->m && !mb->started && mb->exited)
                        observer_gate_discard(e, mb, "exited before its turn");
                if (mb->m && mb->started) {
                        /* Started early: never twice. Inspection leaves it
                         * running; at sealing or grading its turn is to
                         * finish and be collected, in `after` order. */
                        if (e->run.phase == PHASE_FROZEN) {
                                e->run.current = NULL;
                                continue;
                        }
                        e->run.stage = RUN_WAIT;
                        if (mb->exited)
                                return collect(e);
                        loop_timer_set(e->deadline,
                                       loop_now(e->cfg->loop) + e->cfg->observer_timeout);
                        return false;
                }
                e->run.input = 0;
                e->run.stage = reads(c, MANIFEST_READ_WORKSPACE) && !e->workspace_copied
                                       ? RUN_WORKSPACE
                                       : RUN_INPUTS;
                return true;
        }
        /* Done with this phase's observers. */
        void (*then)(struct episode *) = e->run.then;
        e->run = (struct observer_run){};
        if (then)
                then(e);
        return false;
}

static void run_step(struct episode *e)
{
        while (run_advance(e))
                ;
}

static void run_observers(struct episode *e, enum phase phase, bool stop_only,
                          void (*then)(struct episode *e))
{
        free(e->run.why);
        e->run = (struct observer_run){
                .phase = phase,
                .stage = RUN_NEXT,
                .stop_only = stop_only,
                .then = then,
        };
        run_step(e);
}

/*
 * Observers listing ready or running start when the episode goes live and
 * run in the background beside the agent zone: nothing waits for them. They
 * see the live workspace (read-only) and no staged inputs. A failure to
 * start is the infrastructure's.
 */
void grading_start_early_observers(struct episode *e)
{
        const struct manifest_container *const *order;
        size_t n = manifest_observer_order(e->cfg->manifest, &order);

        for (size_t i = 0; i < n; i++) {
                struct ep_member *mb = episode_find_member(e, order[i]);
                if (!manifest_container_runs_early(order[i]))
                        continue;
                if (episode_start_member(e, mb, PHASE_READY) < 0) {
                        observer_fail(e, mb, OBSERVER_FAULT_NOT_STARTED, NULL,
                                      "observer %s did not start", mb->mc->name);
                        return;
                }
        }
}

/* --- sealing ----------------------------------------------------------------- */

static void graded(struct episode *e)
{
        const char *kind;

        verdict_graded(&e->verdict);
        kind = verdict_kind_to_string(e->verdict.kind);
        (void) episode_set_state(e, EPISODE_CLOSED, kind ?: "graded");
        e->ev->graded(e, e->userdata);
}

static void grading_phase(struct episode *e)
{
        if (!verdict_failed(&e->verdict)) {
                e->workspace_copied = false;
                (void) episode_set_state(e, EPISODE_GRADING, "agent zone empty");
                run_observers(e, PHASE_GRADING, false, graded);
                return;
        }
        graded(e);
}

static void sealed_observers(struct episode *e)
{
        e->workspace_copied = false;
        run_observers(e, PHASE_SEALED, false, grading_phase);
}

static void sealed(struct episode *e)
{
        (void) episode_set_state(e, EPISODE_SEALED, "agent zone empty");
        if (e->ev->sealed)
                e->ev->sealed(e, e->userdata);
        /* Early observers not listed later stop first, then the rest. */
        run_observers(e, PHASE_SEALED, true, sealed_observers);
}

static void after_disk_walk(struct episode *e, int result, const char *out, size_t len)
{
        const struct manifest_zone *z = manifest_zone(e->cfg->manifest, MANIFEST_ZONE_AGENT);
        const struct ep_member *blamed = NULL; /* NULL: the zone as a whole */
        bool inodes = e->disk_full == EPISODE_FS_FULL_INODES;
        uint64_t disk_mb = z->resources.disk_mb ?: 256;
        struct disk_blame_owned owned[DISK_BLAME_MAX_OWNERS];
        size_t n = 0, k = 0;
        uint64_t most = 0;

        for (size_t i = 0; i < e->n_members; i++)
                n += e->members[i].mc->zone == MANIFEST_ZONE_AGENT;
        /* Blame whoever owns most of what ran out (agent members, in order). */
        if (result == 0 && n <= DISK_BLAME_MAX_OWNERS && disk_blame_parse(out, len, n, owned) >= 0)
                for (size_t i = 0; i < e->n_members; i++) {
                        const struct ep_member *mb = &e->members[i];
                        if (mb->mc->zone != MANIFEST_ZONE_AGENT)
                                continue;
                        uint64_t v = inodes ? owned[k].entries : owned[k].bytes;
                        k++;
                        if (v > most) {
                                most = v;
                                blamed = mb;
                        }
                }
        /* Its policy says whether grading runs on the full workspace (the
         * custody copy is bounded by the same size). */
        const char *who = blamed ? blamed->mc->name : "the agent zone";
        if (inodes)
                (void) episode_agent_event(
                        e, blamed, MANIFEST_VERDICT_EVENT_DISK_FULL, NULL, NULL,
                        "%s filled its disk (workspace out of inodes: %llu entries at %llu MB)",
                        who, (unsigned long long) episode_fs_inodes_for(disk_mb),
                        (unsigned long long) disk_mb);
        else
                (void) episode_agent_event(e, blamed, MANIFEST_VERDICT_EVENT_DISK_FULL, NULL, NULL,
                                           "%s filled its disk (workspace full at %llu MB)", who,
                                           (unsigned long long) disk_mb);
        sealed(e);
}

static void after_agent_empty(struct episode *e, int result)
{
        if (result < 0) {
                const char *subtree = "zones/agent";
                for (size_t i = 0; i < e->n_members; i++)
                        if (e->members[i].mc->zone == MANIFEST_ZONE_AGENT &&
                            cgroup_is_populated(e->cfg->cgroups, e->members[i].cgroup) > 0) {
                                subtree = e->members[i].subtree;
                                break;
                        }
                verdict_fail(&e->verdict, VERDICT_AGENT_MISBEHAVIOR, subtree,
                             "agent zone did not empty within %gs",
                             e->cfg->manifest->kill_deadline_s);
        }
        for (size_t i = 0; i < e->n_members; i++)
                if (e->members[i].mc->zone == MANIFEST_ZONE_AGENT)
                        episode_stop_member(&e->members[i]);

        /* A full workspace is the fault of whoever owns the bytes (or the
         * entries): each container writes as its own host uid range. */
        e->disk_full = episode_backend_of(e->cfg)->storage_workspace_full(&e->plan);
        if (e->disk_full > 0) {
                cleanup_free char *upper = xasprintf("%s/workspace/upper", e->dir);
                struct disk_blame_args a = {
                        .root_fd = open(upper, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC),
                };
                for (size_t i = 0; i < e->n_members && a.n < DISK_BLAME_MAX_OWNERS; i++)
                        if (e->members[i].mc->zone == MANIFEST_ZONE_AGENT)
                                a.bases[a.n++] =
                                        unit_container_host_uid(&e->plan, e->members[i].mc) -
                                        UNIT_PRINCIPAL_UID;
                int r = a.root_fd >= 0 ? episode_job(e, disk_blame_walk, &a, EPISODE_JOB_TIMEOUT,
                                                     after_disk_walk)
                                       : -errno;
                safe_close(a.root_fd);
                if (r >= 0)
                        return;
                after_disk_walk(e, r, NULL, 0);
                return;
        }
        sealed(e);
}

int grading_seal(struct episode *e, const char *reason)
{
        const struct manifest *m = e->cfg->manifest;
        cleanup_free char *agent = episode_zone_cgroup(e, MANIFEST_ZONE_AGENT);
        cleanup_free char *svc = episode_zone_cgroup(e, MANIFEST_ZONE_SERVICES);
        const char *rel = agent;

        if (!episode_state_move_allowed(e->state, EPISODE_SEALING))
                return -EBUSY;
        episode_cancel_waits(e);
        (void) episode_set_state(e, EPISODE_SEALING, reason);
        if (manifest_zone(m, MANIFEST_ZONE_SERVICES)->during_grading ==
            MANIFEST_DURING_GRADING_FROZEN)
                (void) cgroup_freeze(e->cfg->cgroups, svc);
        /* No agent byte reaches anything once sealing starts; what the
         * model proxies did is final now (budgets, usage: the verdict's). */
        unit_relays_stop_agent(e->relays);
        json_decref(e->verdict.model);
        e->verdict.model = unit_relays_model_json(e->relays);
        e->verdict.actions = episode_actions(e);
        agent_events_at_sealing(e);
        for (size_t i = 0; i < e->n_members; i++)
                if (e->members[i].mc->zone == MANIFEST_ZONE_AGENT)
                        e->members[i].killed = true;
        (void) cgroup_thaw(e->cfg->cgroups, agent);
        int r = cgroup_kill(e->cfg->cgroups, agent);
        if (r < 0)
                log_full_fields_errno(LOG_WARNING, r, LOG_FIELDS({ "episode_id", e->id }),
                                      "episode %s: killing the agent zone: %m", e->id);
        r = episode_watch(e, &rel, 1, CGROUP_WATCH_EMPTY,
                          (usec_t) (m->kill_deadline_s * (double) USEC_PER_SEC), after_agent_empty);
        if (r < 0)
                after_agent_empty(e, r);
        return 0;
}

/* --- inspection ------------------------------------------------------------- */

static void inspected(struct episode *e)
{
        (void) episode_set_state(e, EPISODE_FROZEN, "inspected");
        e->ev->inspected(e, e->userdata);
}

static void after_frozen(struct episode *e, int result)
{
        if (result < 0)
                log_warning_fields(LOG_FIELDS({ "episode_id", e->id }),
                                   "episode %s: the agent zone did not freeze within %gs", e->id,
                                   (double) FREEZE_TIMEOUT / USEC_PER_SEC);
        e->workspace_copied = false;
        run_observers(e, PHASE_FROZEN, false, inspected);
}

int grading_inspect(struct episode *e)
{
        cleanup_free char *agent = episode_zone_cgroup(e, MANIFEST_ZONE_AGENT);
        cleanup_free char *svc = episode_zone_cgroup(e, MANIFEST_ZONE_SERVICES);
        const char *rel = agent;

        if (episode_set_state(e, EPISODE_INSPECTING, "inspect") < 0)
                return -EBUSY;
        (void) cgroup_freeze(e->cfg->cgroups, svc);
        int r = cgroup_freeze(e->cfg->cgroups, agent);
        if (r >= 0)
                r = episode_watch(e, &rel, 1, CGROUP_WATCH_FROZEN, FREEZE_TIMEOUT, after_frozen);
        if (r < 0)
                after_frozen(e, r);
        return 0;
}
