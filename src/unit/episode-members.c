/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * An episode's containers: each started (or made ahead of its turn and
 * released at it) from its plan, in a network namespace the daemon made
 * for it, and stopped with its output kept. What their exits mean is
 * episode.c's table (episode_member_ops).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fd-util.h"
#include "base/json-util.h"
#include "base/log.h"
#include "base/util.h"
#include "sandbox/netns-keep.h"
#include "unit/env-template.h"
#include "unit/episode-backend.h"
#include "unit/episode-internal.h"

/* For an observer that reads them: the record as it stands, as its
 * OPENENVD_ACTIONS does. */
static int write_actions(struct episode *e)
{
        cleanup_free char *dir = unit_actions_dir(&e->plan);
        cleanup_close int fd = open(dir, O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

        if (fd < 0)
                return -errno;
        return action_record_write(&e->actions, fd, UNIT_ACTIONS_FILE);
}

/* What the turn of phase gives mb: the plan's phase and count of actions
 * (OPENENVD_PHASE, OPENENVD_ACTIONS) and, for a reader of it, the record
 * of actions as it stands. */
static int plan_turn(struct episode *e, struct ep_member *mb, enum phase phase)
{
        int r;

        e->plan.phase = phase;
        e->plan.actions = episode_actions(e);
        if (!manifest_container_reads(mb->mc, MANIFEST_READ_ACTIONS) || (r = write_actions(e)) >= 0)
                return 0;
        free(mb->start_error);
        mb->start_error = xasprintf("the record of actions: %s", strerror(-r));
        return r;
}

/* A new network namespace made by the daemon for a native member (never
 * one an earlier container used: sandbox/netns-keep.h), or NULL: the
 * container makes its own. */
static struct kept_netns *member_netns_new(const struct episode *e, const struct ep_member *mb)
{
        const struct manifest *m = e->cfg->manifest;
        struct kept_netns *k = NULL;

        if (!e->cfg->daemon_netns || manifest_zone(m, mb->mc->zone)->oci != MANIFEST_OCI_NATIVE)
                return NULL;
        static bool warned = false;
        int r = episode_backend_of(e->cfg)->netns_new(&k);
        if (r < 0) {
                /* Said once: a host that refuses it refuses it every time. */
                log_full(warned ? LOG_DEBUG : LOG_WARNING,
                         "episode %s: container %s: cannot make a network namespace for it (%s), "
                         "it makes its own",
                         e->id, mb->mc->name, strerror(-r));
                warned = true;
                return NULL;
        }
        return k;
}

/* Starts mb's container, planned for phase; gated: made ahead of its turn,
 * the principal held at the shim's gate until episode_release_member().
 * With gen (borrowed), the env's server is a copy of that template's,
 * forked into the container (unit/env-template.h), and the member holds a
 * reference to gen; *ret_fork_failed then says whether the template (not
 * the container) failed. */
static int start_member_from(struct episode *e, struct ep_member *mb, enum phase phase, bool gated,
                             struct env_template_gen *gen, bool *ret_fork_failed)
{
        const struct manifest_zone *z = manifest_zone(e->cfg->manifest, mb->mc->zone);
        struct container_spec spec = { .stdio_fd = -EBADF };
        struct env_template_landing landing = { .adopt_r = -EBADF, .adopt_w = -EBADF };
        /* The episode's dir (0711), not its private one (0700): an OCI
         * runtime's container root, mapped into a user namespace, must
         * traverse to its bundle (launcher-oci keeps its runtime root 0700
         * inside). */
        cleanup_free char *oci_dir = xasprintf("%s/oci", e->dir);
        cleanup_error_detail struct error_detail error = {};
        cleanup(kept_netns_freep) struct kept_netns *netns = NULL;
        int r;

        /* (Made ahead, it gets its turn's again at the release.) */
        r = plan_turn(e, mb, phase);
        if (r < 0)
                return r;
        r = unit_plan_container(&e->plan, mb->mc, &spec);
        if (r < 0) {
                free(mb->start_error);
                mb->start_error = xasprintf("plan: %s", strerror(-r));
                return r;
        }
        spec.shim_path = xstrdup(e->cfg->shim_path);
        spec.weaken = e->cfg->weaken;
        spec.filter = e->cfg->filter;
        if (unit_container_activated(mb->mc))
                spec.pass_fds = &mb->activation_fd;
        /* A landing's network namespace is its own (one the daemon made
         * belongs to the daemon's user namespace: no copy may join it). */
        if (gen)
                r = env_template_landing_init(gen, e->slot, &spec, &landing);
        else
                spec.netns = netns = member_netns_new(e, mb);
        if (r < 0) {
                container_spec_done(&spec);
                free(mb->start_error);
                mb->start_error = xasprintf("landing: %s", strerror(-r));
                return r;
        }
        if (z->oci != MANIFEST_OCI_NATIVE)
                (void) mkdir(oci_dir, 0711);
        r = member_start(
                e->cfg->loop, mb->mc->name,
                &(struct member_start){
                        .spec = &spec,
                        .launcher = episode_backend_of(e->cfg)->launcher,
                        .runtime = z->oci,
                        .cgroups = e->cfg->cgroups,
                        .cgroup = mb->cgroup,
                        .oci_state_dir = oci_dir,
                        .notify = unit_container_activated(mb->mc),
                        .gated = gated,
                        .forward_episode_id = e->cfg->quiet_containers ? NULL : episode_id(e),
                        .adopt = gen ? &landing.adopt : NULL,
                },
                &episode_member_ops, mb, &mb->m, &error);
        env_template_landing_done(&landing);
        *ret_fork_failed = landing.fork_failed;
        if (r >= 0) {
                kept_netns_free(mb->netns);
                mb->netns = TAKE_PTR(netns);
                env_template_gen_unref(mb->template);
                mb->template = gen ? env_template_gen_ref(gen) : NULL;
                mb->forked = gen != NULL;
        }
        container_spec_done(&spec);
        if (r < 0) {
                free(mb->start_error);
                mb->start_error = xstrdup(error.message ?: strerror(-r));
                /* The template's failure is not the episode's: it starts
                 * cold instead (start_member()). */
                if (landing.fork_failed)
                        return r;
                /* Made ahead, it is started at its turn instead: only that
                 * start's failure is the episode's (observer-gate.c logs). */
                if (gated)
                        return r;
                log_error_fields(LOG_FIELDS({ "episode_id", e->id }, { "container", mb->mc->name }),
                                 "episode %s: container %s: %s", e->id, mb->mc->name,
                                 error.message ?: "failed");
                verdict_add_event(&e->verdict,
                                  json_pack("{s:s,s:s,s:o}", "what", "start_failed", "container",
                                            mb->mc->name, "error", text_to_json(mb->start_error)));
                return r;
        }
        /* A gated one is not started yet: nothing counts or shows it. */
        mb->started = !gated;
        mb->exited = false;
        mb->killed = false;
        mb->status = -1;
        log_debug_fields(LOG_FIELDS({ "episode_id", e->id }, { "container", mb->mc->name }),
                         "episode %s: container %s %s as pid %d%s", e->id, mb->mc->name,
                         gated ? "made ahead of its turn" : "started", (int) member_pid(mb->m),
                         mb->template ? ", its server a template's copy" : "");
        return 0;
}

/* The env from its template when one is warm, else (and when the template
 * fails it) cold; every other container cold. */
static int start_member(struct episode *e, struct ep_member *mb, enum phase phase, bool gated)
{
        struct env_template_gen *gen = unit_container_is_env(mb->mc) && !gated
                                               ? env_template_take(e->cfg->env_template)
                                               : NULL;
        bool fork_failed = false;
        int r;

        if (gen) {
                r = start_member_from(e, mb, phase, gated, gen, &fork_failed);
                env_template_gen_unref(gen);
                if (r >= 0 || !fork_failed)
                        return r;
                log_info_fields(LOG_FIELDS({ "episode_id", e->id }, { "container", mb->mc->name }),
                                "episode %s: container %s starts cold: %s", e->id, mb->mc->name,
                                mb->start_error);
        }
        return start_member_from(e, mb, phase, gated, NULL, &fork_failed);
}

int episode_start_member(struct episode *e, struct ep_member *mb, enum phase phase)
{
        return start_member(e, mb, phase, false);
}

int episode_prepare_member(struct episode *e, struct ep_member *mb, enum phase phase)
{
        return start_member(e, mb, phase, true);
}

bool episode_member_gated(const struct ep_member *mb)
{
        return mb->m && member_is_gated(mb->m);
}

int episode_release_member(struct episode *e, struct ep_member *mb, enum phase phase)
{
        char **env = NULL;
        int r = plan_turn(e, mb, phase);

        if (r < 0)
                return r;
        unit_plan_turn_env(&e->plan, mb->mc, &env);
        r = member_release(mb->m, env);
        strv_free(env);
        if (r < 0) {
                free(mb->start_error);
                mb->start_error = xasprintf("release: %s", strerror(-r));
                return r;
        }
        mb->started = true;
        log_debug_fields(LOG_FIELDS({ "episode_id", e->id }, { "container", mb->mc->name }),
                         "episode %s: container %s released", e->id, mb->mc->name);
        return 0;
}

/* Reaps a member (SIGKILL if it still runs) and keeps its output. */
void episode_stop_member(struct ep_member *mb)
{
        if (!mb->m)
                return;
        /* Exited already (its cgroup is empty, say) but not seen yet: the
         * status is still there to collect. */
        if (!mb->exited && !member_poll_exit(mb->m)) {
                mb->killed = true;
                (void) member_kill(mb->m, SIGKILL);
        }
        member_log_free(mb->log);
        mb->log = member_take_output(mb->m);
        mb->m = member_free(mb->m); /* reaps it */
        /* Reaped: only the daemon's own sockets keep the namespace alive now,
         * until they close; no other container ever gets it. */
        mb->netns = kept_netns_free(mb->netns);
        /* After the landing: a template goes with its last copy. */
        mb->template = env_template_gen_unref(mb->template);
        if (!mb->exited) {
                mb->exited = true;
                mb->status = 128 + SIGKILL;
        }
}
