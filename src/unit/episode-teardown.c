/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The end of an episode: every process killed (thawed first), the kernel's
 * word that its cgroups are empty awaited without blocking the loop, then
 * relays, members and cgroups released (their limit counters kept for
 * /metrics) and the storage unmounted in a child job, never walked.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>

#include "base/fd-util.h"
#include "base/log.h"
#include "base/util.h"
#include "unit/episode-backend.h"
#include "unit/episode-internal.h"

/* Teardown waits this long for the kernel to empty the episode's cgroups. */
#define TEARDOWN_TIMEOUT (5 * USEC_PER_SEC)
/* Unmounting an episode's storage (in a child) takes at most this. */
#define STORAGE_TIMEOUT (60 * USEC_PER_SEC)

/* Processes, relays and cgroups: quick, and first (nothing may still write
 * the storage while it goes). */
static void release_processes(struct episode *e)
{
        e->relays = unit_relays_free(e->relays);
        for (size_t i = 0; i < e->n_members; i++) {
                episode_stop_member(&e->members[i]);
                e->members[i].activation_fd = safe_close(e->members[i].activation_fd);
        }
        if (e->cgroups) {
                for (size_t i = 0; i < e->n_members; i++) {
                        struct ep_member *mb = &e->members[i];
                        struct cgroup_stats st;
                        /* The counters die with the cgroup: kept for /metrics. */
                        if (cgroup_stats(e->cfg->cgroups, mb->cgroup, &st) >= 0) {
                                mb->oom_kills = st.oom_kills;
                                mb->pids_limit_events = st.pids_max_events;
                        }
                        mb->limits_final = true;
                        int r = cgroup_remove(e->cfg->cgroups, mb->cgroup);
                        if (r < 0 && r != -ENOENT)
                                log_warning_errno(r, "removing %s: %m", mb->cgroup);
                }
                for (int z = 0; z < MANIFEST_ZONE_MAX; z++) {
                        cleanup_free char *slot = episode_zone_cgroup(e, z);
                        (void) cgroup_remove(e->cfg->cgroups, slot);
                }
                e->cgroups = false;
        }
}

/* The storage: unmounted (idempotent: a storage job may have done it). */
static void release_storage(struct episode *e)
{
        if (!e->storage)
                return;
        int r = episode_backend_of(e->cfg)->storage_teardown(&e->plan);
        if (r < 0)
                log_full_fields_errno(LOG_WARNING, r, LOG_FIELDS({ "episode_id", e->id }),
                                      "episode %s: storage teardown: %m", e->id);
        /* Only the daemon's own files: activation sockets, the OCI
         * runtime's state, the key hand-over file. */
        (void) rm_rf_at(AT_FDCWD, e->private_dir);
        e->storage = false;
}

void episode_release(struct episode *e)
{
        release_processes(e);
        release_storage(e);
}

/* In a child (child-job.h): the episode's tmpfs unmounted. The kernel
 * frees a tmpfs's pages when its last mount goes, in the unmounting task:
 * hundreds of milliseconds for a full workspace, which the loop must not
 * wait out. The child shares our mount namespace. */
static size_t storage_job_run(void *arg, char *out, size_t size)
{
        struct episode *e = arg; /* the child's copy of it */
        int r = episode_backend_of(e->cfg)->storage_teardown(&e->plan);
        int n = snprintf(out, size, "%d", r);
        return n < 0 ? 0 : MIN((size_t) n, size - 1);
}

static void gone(struct episode *e)
{
        (void) episode_set_state(e, EPISODE_GONE, "torn down");
        if (e->ev->torn_down)
                e->ev->torn_down(e, e->userdata);
}

static void storage_released(struct episode *e, int result, const char *out, size_t len)
{
        (void) out;
        (void) len;
        if (result < 0)
                log_warning_errno(result, "episode %s: storage teardown job: %m", e->id);
        release_storage(e); /* what the job left, and our own files */
        gone(e);
}

static void torn_down(struct episode *e, int result)
{
        if (result < 0)
                log_warning_fields(LOG_FIELDS({ "episode_id", e->id }),
                                   "episode %s: cgroups did not empty within %gs", e->id,
                                   (double) TEARDOWN_TIMEOUT / USEC_PER_SEC);
        release_processes(e);
        if (e->storage &&
            episode_job(e, storage_job_run, e, STORAGE_TIMEOUT, storage_released) >= 0)
                return;
        release_storage(e);
        gone(e);
}

void episode_kill_all(struct episode *e, char *rels[MANIFEST_ZONE_MAX])
{
        for (int z = 0; z < MANIFEST_ZONE_MAX; z++) {
                rels[z] = episode_zone_cgroup(e, z);
                (void) cgroup_thaw(e->cfg->cgroups, rels[z]);
                (void) cgroup_kill(e->cfg->cgroups, rels[z]);
        }
}

void episode_teardown(struct episode *e)
{
        char *rels[MANIFEST_ZONE_MAX] = {};

        if (e->state == EPISODE_TEARDOWN || e->state == EPISODE_GONE)
                return;
        episode_cancel_waits(e);
        (void) episode_set_state(e, EPISODE_TEARDOWN, "teardown");
        /* Relays first: nothing new reaches a container being stopped. */
        e->relays = unit_relays_free(e->relays);
        for (size_t i = 0; i < e->n_members; i++)
                e->members[i].killed = true;
        if (!e->cgroups) {
                torn_down(e, 0);
                return;
        }
        episode_kill_all(e, rels);
        if (episode_watch(e, (const char *const *) rels, MANIFEST_ZONE_MAX, CGROUP_WATCH_EMPTY,
                          TEARDOWN_TIMEOUT, torn_down) < 0)
                torn_down(e, -ENOMEM);
        for (int z = 0; z < MANIFEST_ZONE_MAX; z++)
                free(rels[z]);
}
