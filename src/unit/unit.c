/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The episode's rules: the phase machine, the live and standby episodes,
 * resets, ends, member deaths, and the completions the daemon waits for.
 */
#include "unit/unit.h"

#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/json-util.h"
#include "base/log.h"
#include "base/util.h"
#include "sandbox/syscall-filter.h"
#include "unit/episode-fs.h"
#include "unit/episode.h"
#include "unit/env-template.h"
#include "unit/unit-internal.h"
#include "unit/unit-stats.h"

static int move(struct lane *l, enum phase_actor actor, enum phase to, const char *reason,
                char *ret_refusal, size_t refusal_size)
{
        struct unit *u = l->u;
        enum phase from = l->phase.current;
        int r = phase_machine_move(&l->phase, actor, to, reason, now_usec(CLOCK_REALTIME),
                                   ret_refusal, refusal_size);
        usec_t now = now_usec(CLOCK_MONOTONIC);

        if (r < 0)
                return r;
        histogram_observe(&u->stats.phase_seconds[from],
                          (double) (now - l->phase_since) / (double) USEC_PER_SEC);
        l->phase_since = now;
        log_info_fields(LOG_FIELDS({ "episode_id", l->live ? episode_id(l->live) : NULL },
                                   { "from", phase_to_string(from) }, { "to", phase_to_string(to) },
                                   { "actor", phase_actor_to_string(actor) }, { "reason", reason }),
                        "phase %s -> %s (%s: %s)", phase_to_string(from), phase_to_string(to),
                        phase_actor_to_string(actor), reason);
        return r;
}

/* --- waiters ------------------------------------------------------------------ */

static int wait_add(struct lane *l, enum waiter_kind kind, unit_done_fn fn, void *userdata)
{
        struct unit *u = l->u;

        if (!fn)
                return 1;
        if (u->n_waiters >= UNIT_MAX_WAITERS)
                return -EBUSY;
        u->waiters[u->n_waiters++] = (struct waiter){ kind, l, fn, userdata };
        return 1;
}

/* Completes every waiter of kind on lane l, NULL: on every lane (each
 * once; a callback may add more). */
static void wait_complete(struct unit *u, struct lane *l, enum waiter_kind kind, int result)
{
        for (size_t i = 0; i < u->n_waiters;) {
                struct waiter w = u->waiters[i];
                if (w.kind != kind || (l && w.lane != l)) {
                        i++;
                        continue;
                }
                memmove(&u->waiters[i], &u->waiters[i + 1],
                        (u->n_waiters - i - 1) * sizeof(u->waiters[0]));
                u->n_waiters--;
                w.fn(w.userdata, result);
        }
}

void unit_forget(struct unit *u, void *userdata)
{
        size_t k = 0;
        for (size_t i = 0; i < u->n_waiters; i++)
                if (u->waiters[i].userdata != userdata)
                        u->waiters[k++] = u->waiters[i];
        u->n_waiters = k;
}

/* --- episodes ------------------------------------------------------------------- */

/* The lane's live episode's outcome, once: by its verdict and how it ended. */
static void count_episode(struct lane *l, enum unit_end end)
{
        if (!l->live || l->live_counted)
                return;
        l->live_counted = true;
        l->u->stats.episodes[episode_verdict(l->live)->kind][end]++;
}

/* Lane `lane` of u, to change it: one of its cfg.concurrent (asserted). */
static struct lane *lane_at(struct unit *u, unsigned lane)
{
        assert(lane < u->cfg.concurrent);
        return &u->lanes[lane];
}

/* The lane whose live episode e is; NULL: none (a standby, a retired one). */
static struct lane *lane_of(struct unit *u, const struct episode *e)
{
        for (unsigned i = 0; i < u->cfg.concurrent; i++)
                if (u->lanes[i].live == e)
                        return &u->lanes[i];
        return NULL;
}

static const struct episode_events episode_events;

static int free_slot(const struct unit *u)
{
        for (int s = 0; s < (int) unit_slots(u); s++)
                if (!u->slots[s])
                        return s;
        return -EBUSY;
}

static int new_episode(struct unit *u, struct episode **ret)
{
        int s = free_slot(u), r;

        if (s < 0)
                return s;
        r = episode_new(&u->ecfg, (unsigned) s, u->cfg.uid_base + (uid_t) s * u->cfg.uid_slot_size,
                        &episode_events, u, ret);
        if (r < 0)
                return r;
        u->slots[s] = *ret;
        /* Never a callback from in here: a failure comes through
         * provisioned(), from the loop. */
        episode_provision(*ret);
        return 0;
}

/* --- the standby pool ----------------------------------------------------------------- */

static bool in_pool(const struct unit *u, const struct episode *e)
{
        for (size_t i = 0; i < u->n_pool; i++)
                if (u->pool[i] == e)
                        return true;
        return false;
}

static void pool_remove(struct unit *u, const struct episode *e)
{
        size_t k = 0;
        for (size_t i = 0; i < u->n_pool; i++)
                if (u->pool[i] != e)
                        u->pool[k++] = u->pool[i];
        u->n_pool = k;
}

struct episode *unit_next_standby(const struct unit *u)
{
        for (size_t i = 0; i < u->n_pool; i++)
                if (episode_state(u->pool[i]) == EPISODE_STANDBY)
                        return u->pool[i];
        return u->n_pool ? u->pool[0] : NULL;
}

/* What held the pool's provisioning back is over (on_provision_not_before()). */
static void pool_resume(struct unit *u)
{
        for (size_t i = 0; i < u->n_pool; i++)
                episode_provision_resume(u->pool[i]);
}

/* A retired episode goes: its containers' output stays, for the last
 * UNIT_LOG_HISTORY of them. Taken now, not when it retired, so the kept
 * output is all its containers wrote until they were stopped. */
static void forget_episode(struct unit *u, struct episode *e)
{
        if (u->n_kept_logs == UNIT_LOG_HISTORY) {
                episode_logs_free(u->kept_logs[0]);
                for (size_t i = 1; i < UNIT_LOG_HISTORY; i++)
                        u->kept_logs[i - 1] = u->kept_logs[i];
                u->n_kept_logs--;
        }
        u->kept_logs[u->n_kept_logs++] = episode_take_logs(e);
        episode_free(e);
}

/* Frees the retired episodes that are gone, at the end of a loop round
 * (never from inside one of their own callbacks). */
static void sweep(void *userdata)
{
        struct unit *u = userdata;
        size_t k = 0;

        u->sweep_scheduled = false;
        for (size_t i = 0; i < u->n_retiring; i++) {
                if (episode_state(u->retiring[i]) == EPISODE_GONE)
                        forget_episode(u, u->retiring[i]);
                else
                        u->retiring[k++] = u->retiring[i];
        }
        u->n_retiring = k;
}

static void schedule_sweep(struct unit *u)
{
        if (u->sweep_scheduled || u->freeing)
                return;
        u->sweep_scheduled = true;
        loop_defer(u->cfg.loop, sweep, u);
}

/* Sealed or graded: its verdict is still to come. */
static bool live_grading(const struct lane *l)
{
        enum episode_state s = l->live ? episode_state(l->live) : EPISODE_GONE;
        return s == EPISODE_SEALING || s == EPISODE_SEALED || s == EPISODE_GRADING;
}

static bool any_grading(const struct unit *u)
{
        for (unsigned i = 0; i < u->cfg.concurrent; i++)
                if (live_grading(&u->lanes[i]))
                        return true;
        return false;
}

/* A lane's reset waits for a free slot. */
static bool any_cold_pending(const struct unit *u)
{
        for (unsigned i = 0; i < u->cfg.concurrent; i++)
                if (u->lanes[i].cold_pending)
                        return true;
        return false;
}

static void remember(struct unit *u, struct episode *e)
{
        json_t *v = verdict_to_json(episode_verdict(e), episode_id(e));

        json_object_set_new(v, "ended_at",
                            json_real((double) now_usec(CLOCK_REALTIME) / USEC_PER_SEC));
        json_array_append_new(u->recent, v);
        while (json_array_size(u->recent) > u->cfg.verdict_history)
                json_array_remove(u->recent, 0);
}

/* The episode leaves the stage: torn down in the background, its verdict
 * remembered (with record), freed once its slot is free again. */
static void retire_as(struct unit *u, struct episode *e, bool record)
{
        struct lane *l;

        if (!e)
                return;
        l = lane_of(u, e);
        if (l)
                l->live = NULL;
        if (in_pool(u, e))
                pool_remove(u, e);
        else
                pool_resume(u); /* one live one fewer grading now */
        if (record)
                remember(u, e);
        if (u->n_retiring >= ELEMENTSOF(u->retiring)) {
                /* Too many at once: the oldest goes synchronously. */
                struct episode *old = u->retiring[0];
                if (u->slots[episode_slot(old)] == old)
                        u->slots[episode_slot(old)] = NULL;
                forget_episode(u, old);
                for (size_t i = 1; i < u->n_retiring; i++)
                        u->retiring[i - 1] = u->retiring[i];
                u->n_retiring--;
        }
        u->retiring[u->n_retiring++] = e;
        if (episode_state(e) == EPISODE_GONE)
                schedule_sweep(u); /* torn down already (a failed or closed record) */
        else
                episode_teardown(e);
}

static void retire(struct unit *u, struct episode *e)
{
        retire_as(u, e, true);
}

static void tell_if_ready(struct unit *u)
{
        if (u->told_ready || !unit_ready(u, NULL))
                return;
        u->told_ready = true;
        if (u->ops->ready)
                u->ops->ready(u->userdata);
}

static void maybe_start_standby(struct unit *u);

static int on_standby_backoff(struct loop_source *s, usec_t now, void *userdata)
{
        (void) s;
        (void) now;
        maybe_start_standby(userdata);
        return 0;
}

/* Fills the pool up to cfg.standby, as far as free slots allow (a retiring
 * episode's frees one when it is torn down: on_torn_down()). */
static void maybe_start_standby(struct unit *u)
{
        usec_t now = loop_now(u->cfg.loop);
        struct episode *e;

        if (u->n_pool >= u->cfg.standby || u->freeing || any_cold_pending(u) ||
            u->standby_failures >= UNIT_STANDBY_MAX_FAILURES || free_slot(u) < 0)
                return;
        if (now < u->standby_not_before) {
                if (!u->standby_timer &&
                    loop_add_timer(u->cfg.loop, USEC_INFINITY, on_standby_backoff, u,
                                   &u->standby_timer) < 0)
                        return;
                loop_timer_set(u->standby_timer, u->standby_not_before);
                return;
        }
        while (u->n_pool < u->cfg.standby && free_slot(u) >= 0 && new_episode(u, &e) >= 0)
                u->pool[u->n_pool++] = e;
}

/* A standby failed (to provision, or a member exited before use): counted,
 * retried after a backoff, given up after UNIT_STANDBY_MAX_FAILURES in a
 * row until the next reset, which is said once. */
static void standby_failed(struct unit *u, struct episode *e, const char *what)
{
        const struct verdict *v = episode_verdict(e);

        u->standby_failures++;
        u->stats.standby_failures++;
        free(u->standby_error);
        u->standby_error = v && v->reason ? xstrdup(v->reason) : xstrdup(what);
        log_warning_fields(LOG_FIELDS({ "episode_id", episode_id(e) }),
                           "standby episode %s failed (%u in a row): %s", episode_id(e),
                           u->standby_failures, u->standby_error);
        if (u->standby_failures >= UNIT_STANDBY_MAX_FAILURES)
                log_warning("standby episodes off after %u failures in a row; the next reset "
                            "tries again",
                            u->standby_failures);
        u->standby_not_before =
                loop_now(u->cfg.loop) + (UNIT_STANDBY_BACKOFF << MIN(u->standby_failures - 1, 6u));
        retire(u, e);
}

static void env_changed(struct lane *l, const char *env_socket)
{
        if (l->u->ops->env_changed)
                l->u->ops->env_changed(l->u->userdata, l->index, env_socket);
}

/* The lane's live episode is ready: exposed from now on. */
static void go_live(struct lane *l, const char *why)
{
        struct unit *u = l->u;
        int r = episode_activate(l->live, why);

        l->live_exposed_at = loop_now(u->cfg.loop);

        histogram_observe(&u->stats.reset_seconds[l->reset_source],
                          (double) (now_usec(CLOCK_MONOTONIC) - l->reset_at) /
                                  (double) USEC_PER_SEC);
        u->first_pending = false;
        tell_if_ready(u);
        env_changed(l, episode_env_socket(l->live));
        wait_complete(u, l, WAIT_READY, 0);
        wait_complete(u, l, WAIT_EPISODE, 0);
        if (r < 0)
                log_full_fields_errno(LOG_WARNING, r,
                                      LOG_FIELDS({ "episode_id", episode_id(l->live) }),
                                      "episode %s: activation: %m", episode_id(l->live));
        maybe_start_standby(u);
}

/* A ready standby whose env started cold (made while no template was
 * warm) gives way to a template's copy once one is: the cold server holds a
 * whole interpreter's private memory, a copy a few MiB. A reset meanwhile
 * takes the copy being made (or makes one: every env is a copy now). */
static void maybe_replace_cold_standby(struct unit *u)
{
        struct episode *cold[MANIFEST_STANDBY_MAX];
        size_t n = 0;

        if (!env_template_ready(u->env_template))
                return;
        for (size_t i = 0; i < u->n_pool; i++)
                if (episode_state(u->pool[i]) == EPISODE_STANDBY && !episode_env_forked(u->pool[i]))
                        cold[n++] = u->pool[i];
        for (size_t i = 0; i < n; i++) {
                log_info_fields(LOG_FIELDS({ "episode_id", episode_id(cold[i]) }),
                                "standby episode %s: its env started cold; a template's copy "
                                "replaces it",
                                episode_id(cold[i]));
                u->stats.standby_replaced++;
                retire_as(u, cold[i], false);
        }
        if (n)
                maybe_start_standby(u);
}

/* The template is warm or gone: what waited for it goes on. */
static void on_template_settled(void *userdata)
{
        struct unit *u = userdata;

        if (u->freeing)
                return;
        for (unsigned i = 0; i < u->cfg.concurrent; i++)
                if (u->lanes[i].live)
                        episode_provision_resume(u->lanes[i].live);
        pool_resume(u);
        maybe_replace_cold_standby(u);
        maybe_start_standby(u);
}

static void cold_provision(struct lane *l)
{
        l->cold_pending = false;
        if (new_episode(l->u, &l->live) < 0) {
                /* No slot: a retiring episode frees one soon. */
                l->live = NULL;
                l->cold_pending = true;
        }
}

static int do_reset(struct lane *l, const char *reason, char *ret_refusal, size_t refusal_size)
{
        struct unit *u = l->u;
        int r;

        if (!phase_move_allowed(ACTOR_ORCHESTRATOR, l->phase.current, PHASE_PROVISIONING))
                return move(l, ACTOR_ORCHESTRATOR, PHASE_PROVISIONING, reason, ret_refusal,
                            refusal_size);
        /* Whatever the previous episode was doing is superseded. */
        wait_complete(u, l, WAIT_GRADED, -ECANCELED);
        wait_complete(u, l, WAIT_INSPECT, -ECANCELED);
        l->episode_requested = false;
        env_changed(l, NULL);
        count_episode(l, UNIT_END_SUPERSEDED);
        retire(u, l->live);
        r = move(l, ACTOR_ORCHESTRATOR, PHASE_PROVISIONING, reason, ret_refusal, refusal_size);
        if (r < 0)
                return r;
        u->failed_start = mfree(u->failed_start);
        u->standby_failures = 0;
        u->standby_not_before = 0;
        l->reset_at = now_usec(CLOCK_MONOTONIC);
        l->live_counted = false;
        l->live = unit_next_standby(u);
        if (l->live) {
                pool_remove(u, l->live);
                if (episode_state(l->live) == EPISODE_STANDBY) {
                        l->reset_source = UNIT_RESET_STANDBY;
                        go_live(l, "standby");
                        return 0;
                }
                l->reset_source = UNIT_RESET_STANDBY_PROVISIONING;
                /* The pool may have held it back (on_provision_not_before());
                 * a lane's episode is held by nothing but a warming template. */
                episode_provision_resume(l->live);
                return 1; /* still provisioning: provisioned() goes on */
        }
        l->reset_source = UNIT_RESET_COLD;
        cold_provision(l);
        return 1;
}

int unit_reset(struct unit *u, unsigned lane, const char *reason, unit_done_fn done, void *userdata,
               char *ret_refusal, size_t refusal_size)
{
        struct lane *l = lane_at(u, lane);
        int r = do_reset(l, reason, ret_refusal, refusal_size);

        if (r == 1)
                return wait_add(l, WAIT_READY, done, userdata);
        return r;
}

/* --- episode events ----------------------------------------------------------------- */

static void on_provisioned(struct episode *e, int result, void *userdata)
{
        struct unit *u = userdata;
        struct lane *l;

        if (u->freeing)
                return;
        if (result >= 0)
                u->stats.env_starts[episode_env_forked(e) ? UNIT_ENV_TEMPLATE : UNIT_ENV_COLD]++;

        if (in_pool(u, e)) {
                if (result < 0) {
                        standby_failed(u, e, "provisioning failed");
                        return;
                }
                u->standby_failures = 0;
                log_info_fields(LOG_FIELDS({ "episode_id", episode_id(e) }),
                                "standby episode %s ready", episode_id(e));
                u->first_pending = false;
                tell_if_ready(u);
                maybe_replace_cold_standby(u);
                return;
        }
        l = lane_of(u, e);
        if (!l)
                return;
        if (result < 0) {
                const struct verdict *v = episode_verdict(e);
                count_episode(l, UNIT_END_PROVISIONING_FAILED);
                free(u->failed_start);
                u->failed_start = xstrdup(v->reason ?: "provisioning failed");
                wait_complete(u, l, WAIT_READY, -EIO);
                wait_complete(u, l, WAIT_EPISODE, -EIO);
                /* Its record stays (the verdict says why); its resources go. */
                episode_teardown(e);
                return;
        }
        go_live(l, "healthy");
}

/* The live episode's state changed: the unit's phase follows it, by the
 * episode's table (episode_state_phase()); a move the orchestrator or the
 * environment already made is not made twice. */
static void on_state_changed(struct episode *e, enum episode_state from, const char *reason,
                             void *userdata)
{
        struct unit *u = userdata;
        struct lane *l = lane_of(u, e);
        enum phase p = episode_state_phase(episode_state(e));

        (void) from;
        if (u->freeing || !l)
                return;
        if (episode_state(e) == EPISODE_SEALING)
                l->live_sealed_at = loop_now(u->cfg.loop);
        if (!any_grading(u))
                pool_resume(u);
        if (p == PHASE_MAX || p == l->phase.current)
                return;
        (void) move(l, ACTOR_SYSTEM, p, reason, NULL, 0);
}

/* The live episode goes first: a standby's preparation and container starts
 * hold the loop for milliseconds each.
 * - Its verdict: custody copies and observer releases are the critical path
 *   of done -> verdict, so a standby starts nothing while the live episode
 *   is sealed and graded, for at most standby_yield: past that, slow
 *   graders leave the loop idle, and the next episode's env, whose start
 *   takes longest, must not wait for them (on_state_changed() lets it go as
 *   soon as the verdict is final).
 * - Its readiness, when it is a template's copy: a reset that took a
 *   standby still provisioning waits for it, and the next standby's starts
 *   (a landing and a template's fork hold the loop ~20 ms) sat in front of
 *   its health check: nothing starts until it is ready (on_state_changed()
 *   lets it go), or for standby_yield after it began. Back to back with no
 *   agent time, this took the reset p50 from 28 ms to 2 (bench/openenv).
 *   Unbounded, with several lanes some lane was almost always provisioning
 *   and the pool never filled (bench/README.md, "Issue 28: 16 sessions on
 *   one unit vs 16 units"). Cold starts are not held: two imports
 *   of a second each run side by side on two CPUs (held, the standby loop
 *   fell from 2.0 to 1.25 episodes/s).
 * - Its first exchange: the client's reset that made it live is relayed
 *   next (an upstream connect, a WebSocket handshake, the env's answer),
 *   and the next standby made at once sat in front of it: a stock client's
 *   reset of a ready standby took 59 ms instead of 7 (bench/coding). So
 *   nothing starts until its first action (that exchange is over) or for
 *   standby_yield after it went live, whichever comes first. */
static usec_t on_provision_not_before(struct episode *e, void *userdata)
{
        struct unit *u = userdata;
        usec_t not_before = 0;

        /* Every episode waits for a warming template (bounded by the env's
         * start timeout, past which templates are off): started now, its env
         * would be a second whole interpreter beside the template, its import
         * competing with the warm-up for the CPU and taking about as long
         * (bench/openenv: 0.94 s cold, 1.0 s warm-up); made from the
         * template, it is a few MiB and ready ~30 ms after. */
        if (env_template_warming(u->env_template))
                return USEC_INFINITY;
        if (!in_pool(u, e))
                return 0;
        /* With several lanes, each rule for each; the latest bound holds. */
        for (unsigned i = 0; i < u->cfg.concurrent; i++) {
                const struct lane *l = &u->lanes[i];
                enum episode_state live = l->live ? episode_state(l->live) : EPISODE_GONE;

                if (live_grading(l))
                        not_before = MAX(not_before, l->live_sealed_at + u->standby_yield);
                else if (live == EPISODE_PROVISIONING && env_template_ready(u->env_template))
                        not_before = MAX(not_before, l->reset_at + u->standby_yield);
                else if (live == EPISODE_READY)
                        not_before = MAX(not_before, l->live_exposed_at + u->standby_yield);
        }
        return not_before;
}

static void on_member_exited(struct episode *e, const struct manifest_container *c, int status,
                             enum member_end end, const char *how, void *userdata)
{
        struct unit *u = userdata;
        struct verdict *v = episode_verdict(e);
        cleanup_free char *subtree = NULL;
        struct lane *l;

        if (u->freeing)
                return;
        if (in_pool(u, e)) {
                /* A standby must be pristine and whole: start over. */
                cleanup_free char *what =
                        xasprintf("%s exited (status %d) before use: discarded", c->name, status);
                standby_failed(u, e, what);
                maybe_start_standby(u);
                return;
        }
        l = lane_of(u, e);
        if (!l)
                return;
        subtree = xasprintf("zones/%s/%s", manifest_zone_kind_to_string(c->zone), c->name);
        log_warning_fields(LOG_FIELDS({ "episode_id", episode_id(e) }, { "container", c->name }),
                           "episode %s: %s", episode_id(e), how);
        /* A harness may finish its work; only a failure is one. */
        if (c->zone == MANIFEST_ZONE_AGENT && !unit_container_is_env(c) && status == 0)
                return;
        /* The agent zone answers for what its own code can have done, never
         * for an operator's signal or the host's OOM killer; its container's
         * verdict_policy says whether that voids grading (the episode's
         * event says which: docs/GRADING.md). */
        if (c->zone == MANIFEST_ZONE_AGENT && member_end_is_its_own(end)) {
                if (c->verdict_policy.on[MANIFEST_VERDICT_EVENT_EXIT] == MANIFEST_VERDICT_VOID &&
                    verdict_fail(v, VERDICT_AGENT_MISBEHAVIOR, subtree, "%s", how))
                        verdict_set_cause(v, member_end_to_string(end));
        } else if (verdict_fail(v, VERDICT_INFRASTRUCTURE_ERROR, subtree, "%s", how))
                verdict_set_cause(v, member_end_to_string(end));
        if (c->zone == MANIFEST_ZONE_AGENT && !unit_container_is_env(c))
                return;
        /* The env server or a hidden service: the episode cannot go on. */
        if (phase_move_allowed(ACTOR_SYSTEM, l->phase.current, PHASE_SEALED)) {
                wait_complete(u, l, WAIT_INSPECT, -ECANCELED);
                env_changed(l, NULL);
                l->live_end = UNIT_END_MEMBER_EXITED;
                (void) episode_seal(e, how);
                maybe_start_standby(u);
        }
}

static void on_inspected(struct episode *e, void *userdata)
{
        struct unit *u = userdata;
        struct lane *l = lane_of(u, e);

        if (u->freeing || !l)
                return;
        json_decref(l->inspection);
        l->inspection = json_deep_copy(episode_verdict(e)->observers);
        wait_complete(u, l, WAIT_INSPECT, 0);
}

static void on_graded(struct episode *e, void *userdata)
{
        struct unit *u = userdata;
        struct lane *l = lane_of(u, e);
        const char *kind;

        if (u->freeing || !l)
                return;
        kind = verdict_kind_to_string(episode_verdict(e)->kind);
        count_episode(l, l->live_end);
        log_info_fields(LOG_FIELDS({ "episode_id", episode_id(e) }, { "verdict", kind ?: "graded" },
                                   { "reason", episode_verdict(e)->reason }),
                        "episode %s: %s%s%s", episode_id(e), kind ?: "graded",
                        episode_verdict(e)->reason ? ": " : "", episode_verdict(e)->reason ?: "");
        wait_complete(u, l, WAIT_GRADED, 0);
        /* Its services and observers go; the record stays until the next
         * reset. */
        episode_teardown(e);
        if (l->episode_requested) {
                l->episode_requested = false;
                if (do_reset(l, "client reset", NULL, 0) < 0)
                        wait_complete(u, l, WAIT_EPISODE, -EIO);
        }
}

static void on_torn_down(struct episode *e, void *userdata)
{
        struct unit *u = userdata;

        if (u->slots[episode_slot(e)] == e)
                u->slots[episode_slot(e)] = NULL;
        /* Its cgroups are gone: their counters are final now. */
        episode_add_limit_events(e, u->stats.containers);
        for (size_t i = 0; i < u->n_retiring; i++)
                if (u->retiring[i] == e)
                        schedule_sweep(u);
        if (u->freeing)
                return;
        for (unsigned i = 0; i < u->cfg.concurrent; i++)
                if (u->lanes[i].cold_pending)
                        cold_provision(&u->lanes[i]);
        maybe_start_standby(u);
}

static void on_harness_acted(struct episode *e, const struct openenv_action *a, void *userdata)
{
        struct unit *u = userdata;
        struct lane *l = lane_of(u, e);

        if (l)
                unit_note_actions(u, l->index, a);
}

static void on_harness_done(struct episode *e, void *userdata)
{
        struct unit *u = userdata;
        struct lane *l = lane_of(u, e);

        if (l)
                unit_note_done(u, l->index);
}

static const struct episode_events episode_events = {
        .state_changed = on_state_changed,
        .provision_not_before = on_provision_not_before,
        .provisioned = on_provisioned,
        .member_exited = on_member_exited,
        .inspected = on_inspected,
        .graded = on_graded,
        .torn_down = on_torn_down,
        .harness_acted = on_harness_acted,
        .harness_done = on_harness_done,
};

/* --- control ------------------------------------------------------------------- */

int unit_inspect(struct unit *u, unsigned lane, unit_done_fn done, void *userdata,
                 char *ret_refusal, size_t refusal_size)
{
        struct lane *l = lane_at(u, lane);
        int r = move(l, ACTOR_ORCHESTRATOR, PHASE_FROZEN, "inspect", ret_refusal, refusal_size);
        if (r < 0)
                return r;
        r = episode_inspect(l->live);
        if (r < 0)
                return r;
        return wait_add(l, WAIT_INSPECT, done, userdata);
}

int unit_resume(struct unit *u, unsigned lane, char *ret_refusal, size_t refusal_size)
{
        struct lane *l = lane_at(u, lane);
        int r;

        /* Only a frozen lane resumes (the table also lets the orchestrator
         * move ready -> running, which is not a resume), and only once the
         * inspection is done. */
        if (l->phase.current != PHASE_FROZEN || !l->live ||
            episode_state(l->live) != EPISODE_FROZEN) {
                if (ret_refusal)
                        (void) snprintf(ret_refusal, refusal_size,
                                        "orchestrator cannot resume the unit from %s",
                                        phase_to_string(l->phase.current));
                return -EPERM;
        }
        r = move(l, ACTOR_ORCHESTRATOR, PHASE_RUNNING, "resume", ret_refusal, refusal_size);
        if (r < 0)
                return r;
        return episode_resume(l->live);
}

int unit_end(struct unit *u, unsigned lane, enum phase_actor actor, const char *reason,
             unit_done_fn done, void *userdata, char *ret_refusal, size_t refusal_size)
{
        struct lane *l = lane_at(u, lane);
        int r;

        if (!l->live)
                return move(l, actor, PHASE_SEALED, reason, ret_refusal, refusal_size);
        r = move(l, actor, PHASE_SEALED, reason, ret_refusal, refusal_size);
        if (r < 0)
                return r;
        l->live_end = actor == ACTOR_ENVIRONMENT    ? UNIT_END_DONE
                      : actor == ACTOR_ORCHESTRATOR ? UNIT_END_ORCHESTRATOR
                                                    : UNIT_END_MEMBER_EXITED;
        wait_complete(u, l, WAIT_INSPECT, -ECANCELED);
        env_changed(l, NULL);
        r = episode_seal(l->live, reason);
        if (r < 0)
                return r;
        /* The next episode is built while this one is graded (its
         * containers after the quick graders: on_provision_not_before()). */
        maybe_start_standby(u);
        return wait_add(l, WAIT_GRADED, done, userdata);
}

void unit_note_actions(struct unit *u, unsigned lane, const struct openenv_action *a)
{
        struct lane *l = lane_at(u, lane);

        if (!l->live || a->n == 0)
                return;
        u->stats.actions += a->n;
        episode_record_actions(l->live, a);
}

static void end_done(void *userdata)
{
        struct lane *l = userdata;
        char refusal[128];

        l->done_pending = false;
        if (unit_end(l->u, l->index, ACTOR_ENVIRONMENT, "done", NULL, NULL, refusal,
                     sizeof(refusal)) == -EPERM)
                log_info("environment reported done: %s", refusal);
        /* Waiters for a verdict that is not coming (unit_wait_verdict()). */
        if (!live_grading(l))
                wait_complete(l->u, l, WAIT_GRADED, -ECANCELED);
}

bool unit_verdict_pending(const struct unit *u, unsigned lane)
{
        const struct lane *l = unit_lane(u, lane);

        /* A done seen but not acted on yet (unit_note_done()) counts: the
         * client that got the step answer asks at once. */
        return live_grading(l) || l->done_pending;
}

int unit_wait_verdict(struct unit *u, unsigned lane, unit_done_fn done, void *userdata)
{
        return unit_verdict_pending(u, lane)
                       ? wait_add(lane_at(u, lane), WAIT_GRADED, done, userdata)
                       : 0;
}

void unit_note_done(struct unit *u, unsigned lane)
{
        struct lane *l = lane_at(u, lane);

        /* After this dispatch round, so the message that carried done is
         * delivered before the env server is frozen and killed. */
        if (l->done_pending)
                return;
        l->done_pending = true;
        loop_defer(u->cfg.loop, end_done, l);
}

int unit_request_episode(struct unit *u, unsigned lane, unit_done_fn done, void *userdata)
{
        struct lane *l = lane_at(u, lane);

        switch (l->phase.current) {
        case PHASE_READY:
        case PHASE_RUNNING:
                return 0; /* live already */
        case PHASE_PROVISIONING:
                return wait_add(l, WAIT_EPISODE, done, userdata);
        case PHASE_SEALED:
        case PHASE_GRADING:
        case PHASE_FROZEN:
                /* The verdict first: the next episode starts once it is final. */
                if (l->phase.current == PHASE_FROZEN)
                        return -EPERM;
                l->episode_requested = true;
                return wait_add(l, WAIT_EPISODE, done, userdata);
        default: {
                int r = do_reset(l, "client reset", NULL, 0);
                if (r == 1)
                        return wait_add(l, WAIT_EPISODE, done, userdata);
                return r;
        }
        }
}

/* --- lanes ----------------------------------------------------------------------- */

/* A free lane, the one a new session is served soonest by: its episode
 * live and untouched (made for a session that left before it was up),
 * else one whose verdict is not still to come. */
int unit_lane_acquire(struct unit *u)
{
        int best = -EBUSY, best_rank = -1;

        for (unsigned i = 0; i < u->cfg.concurrent; i++) {
                const struct lane *l = &u->lanes[i];
                int rank = l->phase.current == PHASE_READY ? 2 : live_grading(l) ? 0 : 1;
                if (!l->held && rank > best_rank) {
                        best = (int) i;
                        best_rank = rank;
                }
        }
        if (best >= 0)
                u->lanes[best].held = true;
        return best;
}

/* The session went: an episode it was shown ends and is graded (its
 * verdict stays among the recent ones), touched or not; one still
 * provisioning comes up unseen, for the lane's next session. */
void unit_lane_release(struct unit *u, unsigned lane)
{
        struct lane *l = lane_at(u, lane);
        char refusal[128];

        l->held = false;
        l->episode_requested = false;
        if (!l->live || !phase_move_allowed(ACTOR_ORCHESTRATOR, l->phase.current, PHASE_SEALED))
                return;
        if (unit_end(u, lane, ACTOR_ORCHESTRATOR, "session closed", NULL, NULL, refusal,
                     sizeof(refusal)) < 0)
                log_info_fields(LOG_FIELDS({ "episode_id", episode_id(l->live) }),
                                "session closed: %s", refusal);
}

unsigned unit_lanes(const struct unit *u)
{
        return u->cfg.concurrent;
}

unsigned unit_lanes_held(const struct unit *u)
{
        unsigned n = 0;
        for (unsigned i = 0; i < u->cfg.concurrent; i++)
                n += u->lanes[i].held;
        return n;
}

int unit_lane_of(const struct unit *u, const char *id)
{
        for (unsigned i = 0; i < u->cfg.concurrent; i++)
                if (u->lanes[i].live && streq(episode_id(u->lanes[i].live), id))
                        return (int) i;
        return -ENOENT;
}

/* --- lifecycle --------------------------------------------------------------------- */

static int create_zones(struct unit *u)
{
        const struct manifest *m = u->cfg.manifest;

        /* The zones' ceilings: each episode's resources (its slot's cgroup,
         * episode.c make_slot_cgroups()) times the slots; they never change. */
        for (int z = 0; z < MANIFEST_ZONE_MAX; z++) {
                const struct cgroup_limits lim =
                        unit_cgroup_limits(&m->zones[z].resources, unit_slots(u));
                int r = cgroup_create(u->cfg.cgroups, unit_zone_cgroup(z), &lim);
                if (r < 0)
                        return log_error_errno(r, "cgroup %s: %m", unit_zone_cgroup(z));
        }
        u->zones_created = true;
        return 0;
}

int unit_start(struct unit *u, bool initial_episode)
{
        int r = create_zones(u);
        if (r < 0)
                return r;
        r = episode_fs_init(u->cfg.state_dir);
        if (r < 0)
                return log_error_errno(r, "%s: %m", u->cfg.state_dir);
        /* Warming first: every episode waits for it (on_provision_not_before()). */
        env_template_start(u->env_template);
        /* Not ready until what starts here is up; ready at once if
         * nothing does (the orchestrator's reset provisions). */
        u->first_pending = initial_episode || u->cfg.standby;
        if (initial_episode) {
                r = do_reset(&u->lanes[0], "initial episode", NULL, 0);
                if (r < 0)
                        return r;
        } else
                maybe_start_standby(u);
        tell_if_ready(u);
        return 0;
}

int unit_new(const struct unit_config *cfg, const struct unit_ops *ops, void *userdata,
             struct unit **ret)
{
        cleanup(syscall_filter_freep) struct syscall_filter *filter = NULL;
        struct unit *u;
        int r;

        /* Compiled once here rather than by libseccomp in every child. */
        r = syscall_filter_new(&filter);
        if (r < 0)
                return r;
        u = xcalloc(1, sizeof(*u));
        u->cfg = *cfg;
        u->cfg.standby = MIN(u->cfg.standby, (unsigned) MANIFEST_STANDBY_MAX);
        u->cfg.concurrent = MAX(MIN(u->cfg.concurrent, (unsigned) MANIFEST_CONCURRENT_MAX), 1u);
        if (!u->cfg.verdict_history)
                u->cfg.verdict_history = UNIT_VERDICT_HISTORY_DEFAULT;
        u->cfg.verdict_history = MIN(u->cfg.verdict_history, (unsigned) UNIT_VERDICT_HISTORY_MAX);
        u->ops = ops;
        u->userdata = userdata;
        u->filter = TAKE_PTR(filter);
        u->standby_yield = UNIT_STANDBY_YIELD;
        u->ecfg = (struct episode_config){
                .manifest = cfg->manifest,
                .loop = cfg->loop,
                .cgroups = cfg->cgroups,
                .state_dir = cfg->state_dir,
                .rootfs = cfg->rootfs,
                .host_view = cfg->host_view,
                .shim_path = cfg->shim_path,
                .filter = u->filter,
                .weaken = cfg->weaken,
                .extra_masks = cfg->extra_masks,
                .env_origin = cfg->env_origin,
                .start_timeout = cfg->start_timeout,
                .observer_timeout = cfg->observer_timeout,
                .model = cfg->model,
                .daemon_netns = true,
                .quiet_containers = cfg->quiet_containers,
                .backend = cfg->backend,
        };
        /* Without a range of its own (tests), no template. */
        const char *why = cfg->template_uid ? env_template_unsupported(&u->ecfg)
                                            : "no uid range for a template";
        if (!why) {
                unsigned n = unit_slots(u);
                uid_t slots[UNIT_SLOTS_MAX];
                for (unsigned i = 0; i < n; i++)
                        slots[i] = cfg->uid_base + i * cfg->uid_slot_size;
                r = env_template_new(&u->ecfg, cfg->template_uid, slots, n, &u->env_template);
                if (r < 0)
                        why = "its state could not be made";
        }
        u->template_off = why;
        u->ecfg.env_template = u->env_template;
        if (u->env_template)
                env_template_set_notify(u->env_template, on_template_settled, u);
        if (why)
                log_info("env template: off (%s); every episode's env starts cold", why);
        u->recent = json_array();
        for (unsigned i = 0; i < u->cfg.concurrent; i++) {
                struct lane *l = &u->lanes[i];
                l->u = u;
                l->index = i;
                phase_machine_init(&l->phase);
                l->phase_since = now_usec(CLOCK_MONOTONIC);
        }
        unit_stats_init(&u->stats, cfg->manifest);
        *ret = u;
        return 0;
}

struct unit *unit_free(struct unit *u)
{
        if (!u)
                return NULL;
        u->freeing = true;
        wait_complete(u, NULL, WAIT_READY, -ECANCELED);
        wait_complete(u, NULL, WAIT_GRADED, -ECANCELED);
        wait_complete(u, NULL, WAIT_INSPECT, -ECANCELED);
        wait_complete(u, NULL, WAIT_EPISODE, -ECANCELED);
        for (unsigned i = 0; i < u->cfg.concurrent; i++) {
                episode_free(u->lanes[i].live);
                json_decref(u->lanes[i].inspection);
        }
        for (size_t i = 0; i < u->n_pool; i++)
                episode_free(u->pool[i]);
        for (size_t i = 0; i < u->n_retiring; i++)
                episode_free(u->retiring[i]);
        /* After the episodes: the template goes with its last copy. */
        env_template_free(u->env_template);
        if (u->zones_created)
                (void) cgroup_remove(u->cfg.cgroups, "zones");
        syscall_filter_free(u->filter);
        loop_source_free(u->standby_timer);
        free(u->standby_error);
        json_decref(u->recent);
        for (size_t i = 0; i < u->n_kept_logs; i++)
                episode_logs_free(u->kept_logs[i]);
        free(u->failed_start);
        unit_stats_done(&u->stats);
        return mfree(u);
}
