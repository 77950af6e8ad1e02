/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Observers made ahead of their turn. Starting a container (its network
 * namespace, the launcher's namespaces and mounts, the shim) costs a few
 * milliseconds, and between done and the verdict that was most of the
 * daemon's share, once per observer. So while the episode provisions, each
 * observer that runs only once the agent zone is stopped (frozen, sealed,
 * grading) is started with its principal held at the shim's gate (the
 * shim's --gate-fd), its views bound to directories that are still empty:
 * the workspace's custody copy (workspace-copy/ws) and each upstream
 * output's (inputs/<name>). At its turn the custody copies fill exactly
 * those directories and the release starts the principal, with what only
 * the turn knows (the phase, the daemon's count of actions) added to its
 * environment.
 *
 * Why this is the same as starting it at its turn: no byte of the
 * observer's program ran before (the gate is before its exec, and the shim
 * reads nothing but the daemon's release); its views are the same mounts;
 * what it reads is copied into them only after the agent zone (or the
 * upstream observer) is empty, as before; and a directory it shows is never
 * replaced under it: a second workspace copy in one episode (an
 * inspection, then sealing) goes to a fresh tmpfs, so the gated observers
 * that read the workspace are discarded first and start at their turn as
 * before. One that dies before its turn, or whose release fails, is
 * discarded the same way. A failure to make one is no failure of the
 * episode: that observer starts at its turn.
 */
#include <errno.h>
#include <sys/stat.h>

#include "base/log.h"
#include "base/util.h"
#include "unit/episode-internal.h"

/* Runs only while the agent zone is stopped (early observers run beside
 * the agent, started when the episode goes live). */
static bool runs_late_only(const struct manifest_container *c)
{
        return c->zone == MANIFEST_ZONE_OBSERVERS && !manifest_container_runs_early(c);
}

static int make_empty_dir(const char *path)
{
        return mkdir(path, 0755) < 0 && errno != EEXIST ? -errno : 0;
}

/* The directories its views bind, made now (owned by root, 0755, as the
 * custody copy would make them), filled at its turn. */
static int make_view_dirs(struct episode *e, const struct manifest_container *c)
{
        int r = 0;

        if (manifest_container_reads(c, MANIFEST_READ_WORKSPACE)) {
                cleanup_free char *copy = unit_workspace_copy_dir(&e->plan);
                cleanup_free char *ws = xasprintf("%s/%s", copy, UNIT_WORKSPACE_COPY_NAME);
                r = make_empty_dir(ws);
        }
        for (size_t i = 0; r >= 0 && i < c->n_reads; i++) {
                if (c->reads[i].kind != MANIFEST_READ_OUTPUT)
                        continue;
                cleanup_free char *in = unit_observer_dir(&e->plan, c->name, "inputs");
                cleanup_free char *d = xasprintf("%s/%s", in, c->reads[i].target);
                r = make_empty_dir(d);
        }
        return r;
}

int observer_gate_prepare_next(struct episode *e)
{
        while (e->gate_next < e->n_members) {
                struct ep_member *mb = &e->members[e->gate_next++];
                const struct manifest_container *c = mb->mc;
                int r;

                if (!runs_late_only(c) || mb->m)
                        continue;
                r = make_view_dirs(e, c);
                /* The phase planned is only the views' (the same for every
                 * late phase): the release says which turn it is. */
                if (r >= 0)
                        r = episode_prepare_member(e, mb, PHASE_GRADING);
                if (r < 0)
                        log_debug_fields(
                                LOG_FIELDS({ "episode_id", e->id }, { "container", c->name }),
                                "episode %s: observer %s not made ahead (%s): it starts "
                                "at its turn",
                                e->id, c->name, mb->start_error ?: strerror(-r));
                return 1;
        }
        return 0;
}

bool observer_gate_pending(const struct episode *e)
{
        return e->gate_next < e->n_members;
}

void observer_gate_discard(struct episode *e, struct ep_member *mb, const char *why)
{
        if (!mb->m || mb->started)
                return;
        log_debug_fields(LOG_FIELDS({ "episode_id", e->id }, { "container", mb->mc->name }),
                         "episode %s: observer %s made ahead discarded (%s): it starts at its turn",
                         e->id, mb->mc->name, why);
        episode_stop_member(mb);
}

void observer_gate_discard_workspace_readers(struct episode *e)
{
        for (size_t i = 0; i < e->n_members; i++)
                if (manifest_container_reads(e->members[i].mc, MANIFEST_READ_WORKSPACE))
                        observer_gate_discard(e, &e->members[i], "a fresh workspace copy");
}
