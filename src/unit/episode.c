/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One episode's lifecycle: provisioning to standby, activation, member
 * deaths, teardown. Sealing, grading and inspection are in grading.c.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fd-util.h"
#include "base/json-util.h"
#include "base/log.h"
#include "base/string-table.h"
#include "base/util.h"
#include "relay/listen-socket.h"
#include "relay/service-relay.h"
#include "unit/episode-backend.h"
#include "unit/episode-internal.h"

void episode_record_actions(struct episode *e, const struct openenv_action *a)
{
        action_record_add(&e->actions, a->n, a->via, a->data, a->len, now_usec(CLOCK_REALTIME));
        if (e->state == EPISODE_READY && a->n > 0)
                (void) episode_set_state(e, EPISODE_RUNNING, "first action");
}

char *episode_zone_cgroup(const struct episode *e, enum manifest_zone_kind z)
{
        return xasprintf("%s/s%u", unit_zone_cgroup(z), e->slot);
}

struct ep_member *episode_find_member(struct episode *e, const struct manifest_container *c)
{
        for (size_t i = 0; i < e->n_members; i++)
                if (e->members[i].mc == c)
                        return &e->members[i];
        return NULL;
}

/* --- waits ------------------------------------------------------------------ */

static void watch_done(void *userdata, int result)
{
        struct episode *e = userdata;
        void (*then)(struct episode *, int) = e->after_watch;

        e->watch = cgroup_watch_free(e->watch);
        e->after_watch = NULL;
        if (then)
                then(e, result);
}

int episode_watch(struct episode *e, const char *const *rels, size_t n, enum cgroup_watch_goal goal,
                  usec_t timeout, void (*then)(struct episode *e, int result))
{
        e->watch = cgroup_watch_free(e->watch);
        e->after_watch = then;
        return cgroup_watch_start(e->cfg->loop, e->cfg->cgroups, rels, n, goal, timeout, watch_done,
                                  e, &e->watch);
}

static void job_done(void *userdata, int result, const char *out, size_t len)
{
        struct episode *e = userdata;
        void (*then)(struct episode *, int, const char *, size_t) = e->after_job;
        /* The job owns out: keep it alive through then(). */
        struct child_job *job = TAKE_PTR(e->job);

        e->after_job = NULL;
        if (then)
                then(e, result, out, len);
        child_job_free(job);
}

int episode_job(struct episode *e, child_job_fn fn, void *arg, usec_t timeout,
                void (*then)(struct episode *e, int result, const char *out, size_t len))
{
        e->job = child_job_free(e->job);
        e->after_job = then;
        return child_job_start(e->cfg->loop, fn, arg, timeout, job_done, e, &e->job);
}

void episode_cancel_waits(struct episode *e)
{
        e->health = health_probe_free(e->health);
        e->watch = cgroup_watch_free(e->watch);
        e->job = child_job_free(e->job);
        e->after_watch = NULL;
        e->after_job = NULL;
        loop_timer_set(e->step, USEC_INFINITY);
        loop_timer_set(e->deadline, USEC_INFINITY);
        free(e->run.why);
        e->run = (struct observer_run){};
}

/* --- members ---------------------------------------------------------------- */

/* end: who ended it, when known (member-end.h), else NULL. Returns the
 * event (borrowed; NULL: the list was full). */
static json_t *record_exit(struct episode *e, struct ep_member *mb, const char *end)
{
        cleanup_free char *tail = mb->m ? member_output_tail(mb->m, LOG_TAIL_LINES) : xstrdup("");
        json_t *ev = json_pack("{s:s,s:s,s:s}", "what", "exited", "container", mb->mc->name,
                               "subtree", mb->subtree);

        if (member_status_signal(mb->status))
                json_object_set_new(ev, "signal", json_integer(member_status_signal(mb->status)));
        else
                json_object_set_new(ev, "exit_status", json_integer(mb->status));
        if (end)
                json_object_set_new(ev, "end", json_string(end));
        if (*tail)
                json_object_set_new(ev, "output_tail", text_to_json(tail));
        return verdict_add_event(&e->verdict, ev);
}

/* What ended a member and who did (member-end.h), in words, from what its
 * init's status and its cgroup say. */
static char *member_exit_text(struct episode *e, const struct ep_member *mb, int status,
                              enum member_end *ret_end)
{
        struct cgroup_stats st;
        bool have = cgroup_stats(e->cfg->cgroups, mb->cgroup, &st) >= 0;
        cleanup_free char *how = member_status_text(status);
        cleanup_free char *text = NULL;

        *ret_end = member_end_of(have ? &st : NULL, member_init_signal(mb->m));
        text = member_end_text(*ret_end, how);
        return xasprintf("%s %s", mb->mc->name, text);
}

static void fail_provisioning(struct episode *e, int error, const char *blame, const char *fmt, ...)
        printf_fmt(4, 5);

/* --- what each loop event does in each state -------------------------------- */

/* A member exited while its episode was still starting: the start failed. */
static void provisioning_member_exited(struct episode *e, struct ep_member *mb, int status)
{
        cleanup_free char *how = member_status_text(status);
        cleanup_free char *tail = member_output_tail(mb->m, LOG_TAIL_LINES);
        cleanup_free char *last = member_output_tail(mb->m, 1);
        /* "env| ModuleNotFoundError: ...\n": the last line says why,
         * most of the time; the verdict's event has the tail. */
        const char *why = startswith(last, mb->mc->name) ?: last;

        record_exit(e, mb, NULL);
        if (*tail)
                log_info_fields(LOG_FIELDS({ "episode_id", e->id }, { "container", mb->mc->name }),
                                "episode %s: last output of %s:\n%s", e->id, mb->mc->name, tail);
        why = startswith(why, "| ") ?: why;
        last[strcspn(last, "\n")] = '\0';
        fail_provisioning(e, -ECHILD, mb->subtree, "%s %s while starting%s%s", mb->mc->name, how,
                          *why ? ": " : "", why);
}

/* A member exited while the episode stood by or was live: the unit decides
 * (unit.c: discard a standby, seal a live one). */
static void live_member_exited(struct episode *e, struct ep_member *mb, int status)
{
        enum member_end end;
        cleanup_free char *how = NULL;
        json_t *ev;

        /* The inspection's observer goes on; an early observer is
         * collected at sealing. */
        if (mb->mc->zone == MANIFEST_ZONE_OBSERVERS) {
                grading_observer_exited(e, mb);
                return;
        }
        how = member_exit_text(e, mb, status, &end);
        ev = record_exit(e, mb, member_end_to_string(end));
        /* An agent container's own end (a harness's exit 0 is none): its
         * verdict_policy's `exit` decides (unit.c), the event says which. */
        if (ev && mb->mc->zone == MANIFEST_ZONE_AGENT && member_end_is_its_own(end) &&
            (status != 0 || unit_container_is_env(mb->mc)))
                json_object_set_new(
                        ev, "policy",
                        json_string(manifest_verdict_action_to_string(
                                mb->mc->verdict_policy.on[MANIFEST_VERDICT_EVENT_EXIT])));
        if (e->ev->member_exited)
                e->ev->member_exited(e, mb->mc, status, end, how, e->userdata);
}

/* A member exited while the episode was sealed or graded: an observer's
 * turn ends; a service the daemon did not kill failed the grading. */
static void grading_member_exited(struct episode *e, struct ep_member *mb, int status)
{
        if (mb->mc->zone == MANIFEST_ZONE_OBSERVERS) {
                grading_observer_exited(e, mb);
                return;
        }
        if (mb->mc->zone == MANIFEST_ZONE_SERVICES && !mb->killed) {
                cleanup_free char *how = member_status_text(status);
                record_exit(e, mb, NULL);
                verdict_fail(&e->verdict, VERDICT_INFRASTRUCTURE_ERROR, mb->subtree,
                             "service %s %s during grading", mb->mc->name, how);
        }
}

static void provisioning_deadline(struct episode *e);

/* The engine's rows: what a member's exit and the episode's deadline mean
 * in each state (as s6's supervisor action table). NULL: nothing there.
 * The cgroup watch and the child job end in the continuation their
 * starter named (episode_watch(), episode_job()). */
static const struct {
        void (*member_exited)(struct episode *e, struct ep_member *mb, int status);
        void (*deadline)(struct episode *e);
} episode_events_table[_EPISODE_STATE_MAX] = {
        [EPISODE_PROVISIONING] = { provisioning_member_exited, provisioning_deadline },
        [EPISODE_STANDBY] = { live_member_exited, NULL },
        [EPISODE_READY] = { live_member_exited, NULL },
        [EPISODE_RUNNING] = { live_member_exited, NULL },
        [EPISODE_INSPECTING] = { live_member_exited, grading_deadline },
        [EPISODE_FROZEN] = { live_member_exited, NULL },
        [EPISODE_SEALING] = { grading_member_exited, NULL },
        [EPISODE_SEALED] = { grading_member_exited, grading_deadline },
        [EPISODE_GRADING] = { grading_member_exited, grading_deadline },
        /* closed, failed, teardown, gone: nothing reports back any more */
};

static void member_on_exited(struct member *m, int status, void *userdata)
{
        struct ep_member *mb = userdata;
        struct episode *e = mb->episode;

        (void) m;
        mb->exited = true;
        mb->status = status;
        /* Made ahead and never released: nothing of the episode ran in it;
         * it is started anew at its turn (observer-gate.c). Killed with its
         * episode (closed, failed, torn down) it is no news. */
        if (episode_member_gated(mb)) {
                if (e->state >= EPISODE_CLOSED)
                        return;
                log_info_fields(LOG_FIELDS({ "episode_id", e->id }, { "container", mb->mc->name }),
                                "episode %s: observer %s exited before its turn", e->id,
                                mb->mc->name);
                return;
        }
        if (episode_events_table[e->state].member_exited)
                episode_events_table[e->state].member_exited(e, mb, status);
}

static void member_on_ready(struct member *m, void *userdata);

const struct member_ops episode_member_ops = {
        .exited = member_on_exited,
        .ready = member_on_ready,
};

/* --- provisioning ----------------------------------------------------------- */

static void fail_provisioning(struct episode *e, int error, const char *blame, const char *fmt, ...)
{
        struct strbuf sb = STRBUF_INIT;
        va_list ap;

        if (e->state != EPISODE_PROVISIONING)
                return;
        va_start(ap, fmt);
        strbuf_vaddf(&sb, fmt, ap);
        va_end(ap);
        log_error_fields(LOG_FIELDS({ "episode_id", e->id }), "episode %s: provisioning failed: %s",
                         e->id, sb.buf);
        verdict_fail(&e->verdict, VERDICT_INFRASTRUCTURE_ERROR, blame, "provisioning failed: %s",
                     sb.buf);
        strbuf_release(&sb);
        episode_cancel_waits(e);
        (void) episode_set_state(e, EPISODE_FAILED, "provisioning failed");
        e->ev->provisioned(e, error, e->userdata);
}

static bool all_ready(const struct episode *e)
{
        for (size_t i = 0; i < e->n_members; i++) {
                const struct ep_member *mb = &e->members[i];
                if (unit_container_activated(mb->mc) && (!mb->m || !member_is_ready(mb->m)))
                        return false;
        }
        return true;
}

static void on_healthy(void *userdata, int result)
{
        struct episode *e = userdata;

        e->health = health_probe_free(e->health);
        if (result < 0) {
                fail_provisioning(e, result, "zones/agent/env",
                                  "env server did not answer /health below 500 within %gs",
                                  (double) e->cfg->start_timeout / USEC_PER_SEC);
                return;
        }
        loop_timer_set(e->deadline, USEC_INFINITY);
        (void) episode_set_state(e, EPISODE_STANDBY, "healthy");
        e->ev->provisioned(e, 0, e->userdata);
}

static void member_on_ready(struct member *m, void *userdata)
{
        struct ep_member *mb = userdata;
        struct episode *e = mb->episode;

        (void) m;
        if (e->state != EPISODE_PROVISIONING || e->health || !all_ready(e) ||
            e->spawn_next < e->n_members || observer_gate_pending(e))
                return;
        /* Every forwarded port listens: one HTTP exchange to be sure the
         * env server serves, within what is left of start_timeout. */
        usec_t now = loop_now(e->cfg->loop);
        usec_t left = e->provision_deadline > now ? e->provision_deadline - now : 0;
        if (health_probe_start(e->cfg->loop, e->env_socket, left, on_healthy, e, &e->health) < 0)
                fail_provisioning(e, -ENOMEM, "daemon", "health probe");
}

static int prepare(struct episode *e);

/* Spawns the services and the env, one per loop round (an OCI runtime takes
 * tens of milliseconds per container: the loop keeps serving meanwhile). */
static int on_step(struct loop_source *s, usec_t now, void *userdata)
{
        struct episode *e = userdata;

        (void) s;
        if (e->state != EPISODE_PROVISIONING)
                return 0;
        usec_t not_before =
                e->ev->provision_not_before ? e->ev->provision_not_before(e, e->userdata) : 0;
        if (not_before > now) {
                loop_timer_set(e->step, not_before); /* or episode_provision_resume() */
                /* Not started yet: its start timeout is armed when it is. */
                if (!e->prepared)
                        loop_timer_set(e->deadline, USEC_INFINITY);
                return 0;
        }
        if (!e->prepared) {
                /* The start timeout counts from here: an episode held back
                 * (a warming template, the live episode first) had not
                 * started. */
                e->provision_deadline = now + e->cfg->start_timeout;
                loop_timer_set(e->deadline, e->provision_deadline);
                if (prepare(e) >= 0)
                        loop_timer_set(e->step, loop_now(e->cfg->loop));
                return 0;
        }
        while (e->spawn_next < e->n_members) {
                struct ep_member *mb = &e->members[e->spawn_next++];
                if (mb->mc->zone != MANIFEST_ZONE_SERVICES && !unit_container_is_env(mb->mc))
                        continue;
                int r = episode_start_member(e, mb, PHASE_PROVISIONING);
                if (r < 0) {
                        fail_provisioning(e, r, mb->subtree, "%s did not start: %s", mb->mc->name,
                                          mb->start_error);
                        return 0;
                }
                loop_timer_set(e->step, loop_now(e->cfg->loop));
                return 0;
        }
        /* Then the observers that run only once the agent zone stops, made
         * ahead of their turn while the env starts. */
        if (observer_gate_prepare_next(e) > 0) {
                loop_timer_set(e->step, loop_now(e->cfg->loop));
                return 0;
        }
        /* All spawned: readiness may already be complete. */
        if (e->n_members > 0)
                member_on_ready(NULL, &e->members[0]);
        return 0;
}

void episode_provision_resume(struct episode *e)
{
        if (e->state == EPISODE_PROVISIONING)
                loop_timer_set(e->step, loop_now(e->cfg->loop));
}

/* The start timeout: the first member that is not listening is late. */
static void provisioning_deadline(struct episode *e)
{
        struct ep_member *late = NULL;

        for (size_t i = 0; i < e->n_members && !late; i++)
                if (unit_container_activated(e->members[i].mc) &&
                    (!e->members[i].m || !member_is_ready(e->members[i].m)))
                        late = &e->members[i];
        fail_provisioning(e, -ETIMEDOUT, late ? late->subtree : "zones/agent/env",
                          "%s did not listen on its port within %gs", late ? late->mc->name : "env",
                          (double) e->cfg->start_timeout / USEC_PER_SEC);
}

static int on_deadline(struct loop_source *s, usec_t now, void *userdata)
{
        struct episode *e = userdata;

        (void) s;
        (void) now;
        if (episode_events_table[e->state].deadline)
                episode_events_table[e->state].deadline(e);
        return 0;
}

/* The zone's resources are each episode's: its slot's cgroup holds them,
 * so no episode (of several at once, or a standby) takes a sibling's
 * memory, pids or CPU; the zone's own cgroup holds them times the slots
 * (unit.c, create_zones()). */
static int make_slot_cgroups(struct episode *e)
{
        const struct manifest *m = e->cfg->manifest;

        for (int z = 0; z < MANIFEST_ZONE_MAX; z++) {
                const struct cgroup_limits lim = unit_cgroup_limits(&m->zones[z].resources, 1);
                cleanup_free char *slot = episode_zone_cgroup(e, z);
                int r;

                if (m->zones[z].n_containers == 0)
                        continue;
                r = cgroup_create(e->cfg->cgroups, slot, &lim);
                if (r < 0)
                        return log_error_errno(r, "cgroup %s: %m", slot);
        }
        return 0;
}

static int make_cgroups(struct episode *e)
{
        int r = make_slot_cgroups(e);

        if (r < 0)
                return r;
        for (size_t i = 0; i < e->n_members; i++) {
                const struct cgroup_limits lim =
                        unit_cgroup_limits(&e->members[i].mc->effective, 1);
                r = cgroup_create(e->cfg->cgroups, e->members[i].cgroup, &lim);
                if (r < 0)
                        return log_error_errno(r, "cgroup %s: %m", e->members[i].cgroup);
        }
        e->cgroups = true;
        return 0;
}

/* The daemon's side of socket activation: a listening socket per env and
 * service, in the private dir, handed to the container's shim. */
static int make_activation_sockets(struct episode *e)
{
        for (size_t i = 0; i < e->n_members; i++) {
                struct ep_member *mb = &e->members[i];
                cleanup_free char *path = NULL;
                if (!unit_container_activated(mb->mc))
                        continue;
                path = xasprintf("%s/%s.sock", e->private_dir, mb->mc->name);
                int r = socket_listen_unix(path, 0600, &mb->activation_fd);
                if (r < 0)
                        return log_error_errno(r, "activation socket %s: %m", path);
        }
        return 0;
}

static void on_harness_action(void *userdata, const struct openenv_action *a)
{
        struct episode *e = userdata;
        if (e->ev->harness_acted)
                e->ev->harness_acted(e, a, e->userdata);
}

static void on_harness_done(void *userdata)
{
        struct episode *e = userdata;
        if (e->ev->harness_done)
                e->ev->harness_done(e, e->userdata);
}

/* Storage, cgroups, activation sockets and relays: everything the first
 * container needs. */
static int prepare(struct episode *e)
{
        int r;

        if (mkdir(e->private_dir, 0700) < 0) {
                r = -errno;
                fail_provisioning(e, r, "daemon", "%s: %s", e->private_dir, strerror(-r));
                return r;
        }
        e->storage = true;
        r = episode_backend_of(e->cfg)->storage_setup(&e->plan);
        if (r < 0) {
                fail_provisioning(e, r, "daemon", "storage: %s", strerror(-r));
                return r;
        }
        if ((r = make_cgroups(e)) < 0 || (r = make_activation_sockets(e)) < 0) {
                fail_provisioning(e, r, "daemon", "cgroups and sockets: %s", strerror(-r));
                return r;
        }
        r = unit_relays_new(e->cfg->loop, &e->plan, e->private_dir, &e->cfg->model,
                            &(struct service_relay_hooks){ .on_action = on_harness_action,
                                                           .on_done = on_harness_done,
                                                           .userdata = e },
                            &e->relays);
        if (r < 0) {
                fail_provisioning(e, r, "daemon", "relays: %s", strerror(-r));
                return r;
        }
        e->prepared = true;
        return 0;
}

void episode_provision(struct episode *e)
{
        /* All of it from the loop, one step per round: the caller never sees
         * a callback from in here. */
        e->spawn_next = 0;
        e->provision_deadline = loop_now(e->cfg->loop) + e->cfg->start_timeout;
        loop_timer_set(e->step, loop_now(e->cfg->loop));
        loop_timer_set(e->deadline, e->provision_deadline);
}

int episode_activate(struct episode *e, const char *reason)
{
        if (episode_set_state(e, EPISODE_READY, reason) < 0)
                return -EBUSY;
        for (size_t i = 0; i < e->n_members; i++) {
                struct ep_member *mb = &e->members[i];
                if (mb->mc->zone != MANIFEST_ZONE_AGENT || unit_container_is_env(mb->mc))
                        continue;
                int r = episode_start_member(e, mb, PHASE_READY);
                if (r < 0) {
                        verdict_fail(&e->verdict, VERDICT_INFRASTRUCTURE_ERROR, mb->subtree,
                                     "%s did not start: %s", mb->mc->name, mb->start_error);
                        return r;
                }
        }
        grading_start_early_observers(e);
        return 0;
}

int episode_resume(struct episode *e)
{
        cleanup_free char *agent = episode_zone_cgroup(e, MANIFEST_ZONE_AGENT);
        cleanup_free char *svc = episode_zone_cgroup(e, MANIFEST_ZONE_SERVICES);

        if (e->state != EPISODE_FROZEN)
                return -EBUSY;
        (void) episode_set_state(e, EPISODE_RUNNING, "resume");
        (void) cgroup_thaw(e->cfg->cgroups, svc);
        return cgroup_thaw(e->cfg->cgroups, agent);
}

/* --- new / free -------------------------------------------------------------- */

int episode_new(const struct episode_config *cfg, unsigned slot, uid_t uid_base,
                const struct episode_events *ev, void *userdata, struct episode **ret)
{
        const struct manifest *m = cfg->manifest;
        struct episode *e = xcalloc(1, sizeof(*e));
        char *id = NULL;
        int r;

        e->cfg = cfg;
        e->ev = ev;
        e->userdata = userdata;
        e->slot = slot;
        e->uid_base = uid_base;
        r = random_hex(6, &id);
        if (r < 0) {
                free(e);
                return r;
        }
        (void) snprintf(e->id, sizeof(e->id), "%s", id);
        free(id);
        e->dir = xasprintf("%s/episodes/%s", cfg->state_dir, e->id);
        e->private_dir = xasprintf("%s/private/%s", cfg->state_dir, e->id);
        e->env_socket = xasprintf("%s/env.sock", e->private_dir);
        e->plan = (struct unit_plan_context){
                .manifest = m,
                .state_dir = cfg->state_dir,
                .episode_dir = e->dir,
                .episode_id = e->id,
                .uid_base = uid_base,
                .rootfs = cfg->rootfs,
                .host_view = cfg->host_view,
                .extra_masks = cfg->extra_masks,
                .env_origin = cfg->env_origin,
        };
        verdict_init(&e->verdict);
        e->members = xcalloc(unit_container_count(m), sizeof(*e->members));
        for (int z = 0; z < MANIFEST_ZONE_MAX; z++)
                for (size_t k = 0; k < m->zones[z].n_containers; k++) {
                        const struct manifest_container *c = &m->zones[z].containers[k];
                        e->members[e->n_members++] = (struct ep_member){
                                .episode = e,
                                .mc = c,
                                .cgroup =
                                        xasprintf("%s/s%u/%s", unit_zone_cgroup(z), slot, c->name),
                                .subtree = xasprintf("%s/%s", unit_zone_cgroup(z), c->name),
                                .activation_fd = -EBADF,
                                .status = -1,
                        };
                }
        (void) loop_add_timer(cfg->loop, USEC_INFINITY, on_step, e, &e->step);
        (void) loop_add_timer(cfg->loop, USEC_INFINITY, on_deadline, e, &e->deadline);
        e->state = EPISODE_PROVISIONING; /* where every episode starts */
        *ret = e;
        return 0;
}

struct episode *episode_free(struct episode *e)
{
        char *rels[MANIFEST_ZONE_MAX] = {};

        if (!e)
                return NULL;
        episode_cancel_waits(e);
        /* Nothing reports back from here on (member exits included). */
        if (e->state != EPISODE_TEARDOWN && e->state != EPISODE_GONE)
                (void) episode_set_state(e, EPISODE_TEARDOWN, "freed");
        e->relays = unit_relays_free(e->relays);
        if (e->cgroups) {
                /* Synchronous on purpose (daemon shutdown): the kernel empties
                 * a killed cgroup within a millisecond or so. */
                episode_kill_all(e, rels);
                for (int z = 0; z < MANIFEST_ZONE_MAX; z++) {
                        (void) cgroup_wait_empty(e->cfg->cgroups, rels[z], USEC_PER_SEC);
                        free(rels[z]);
                }
        }
        episode_release(e);
        e->step = loop_source_free(e->step);
        e->deadline = loop_source_free(e->deadline);
        for (size_t i = 0; i < e->n_members; i++) {
                free(e->members[i].cgroup);
                free(e->members[i].subtree);
                member_log_free(e->members[i].log);
                free(e->members[i].start_error);
        }
        free(e->members);
        verdict_done(&e->verdict);
        action_record_done(&e->actions);
        free(e->dir);
        free(e->private_dir);
        free(e->env_socket);
        return mfree(e);
}

int episode_seal(struct episode *e, const char *reason)
{
        return grading_seal(e, reason);
}

int episode_inspect(struct episode *e)
{
        return grading_inspect(e);
}
