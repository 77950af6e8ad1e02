/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Fork-speed episodes (docs/DAEMON.md, "Templates"; the mechanism is
 * docs/SANDBOX.md's "Templates"). An env server that uvicorn starts (the
 * manifest's app, `-- uvicorn ...`, `python3 -m uvicorn ...`) is warmed once
 * per unit: python/openenvd_template.py, which the daemon carries, imports
 * the app in a template container and forks each episode's env server into
 * that episode's own container, a landing (nested in the template's user
 * and pid namespaces, otherwise the container the plan says).
 *
 * A generation is one template container. It is discarded when its program
 * ends (EOF on its control socket), refuses or fails a fork, or does not
 * answer within ENV_TEMPLATE_FORK_TIMEOUT. Its copies keep running: its
 * shim lingers, because their pid namespaces are children of its own and
 * would die with it; it goes with the last of them. The next generation
 * starts when an episode asks, at most once per ENV_TEMPLATE_REBUILD_DELAY;
 * a template that cannot warm (the app does not import, uvicorn is not
 * there), or ENV_TEMPLATE_MAX_BARREN discarded in a row without a copy,
 * turn templates off for the unit's life. Meanwhile, and without a
 * template, episodes start cold: the env's own command, as before.
 *
 * A generation's cgroup leaf is zones/agent/template-<n>, under the agent
 * zone's limits, with the env container's own limits as its leaf's.
 *
 * Ownership: the unit owns its env_template; a generation is counted (the
 * template holds one reference while it is current, every copy's member
 * one) and borrows the episode config.
 */
#include <jansson.h>
#include <stdbool.h>

#include "base/limits.h"
#include "sandbox/container-spec.h"
#include "unit/episode.h"
#include "unit/member.h"

/* A fork request's answer and the copy's hello, together. */
#define ENV_TEMPLATE_FORK_TIMEOUT (2 * USEC_PER_SEC)
/* A discarded template's successor starts no sooner than this after it. */
#define ENV_TEMPLATE_REBUILD_DELAY (1 * USEC_PER_SEC)
/* Templates off after this many generations in a row discarded without a
 * single copy. */
#define ENV_TEMPLATE_MAX_BARREN 3

struct env_template;
struct env_template_gen;

/* Why the unit's env cannot come from a template (a static string), or
 * NULL when it can. */
const char *env_template_unsupported(const struct episode_config *cfg);

/* host_uid: the template's own range (UNIT_UID_RANGE uids, apart from every
 * episode's); slot_base: each of the n_slots slots' uid_base (at most
 * UNIT_SLOTS_MAX), whose env ranges it maps. */
int env_template_new(const struct episode_config *cfg, uid_t host_uid, const uid_t *slot_base,
                     unsigned n_slots, struct env_template **ret);
struct env_template *env_template_free(struct env_template *t);
DEFINE_CLEANUP_FUNC(struct env_template, env_template_free);

/* Starts the first generation warming (the unit's start). */
void env_template_start(struct env_template *t);
/* The warm generation, a new reference; NULL when none is (and, when one
 * is due, a new one starts warming): the episode starts cold. t may be
 * NULL. */
struct env_template_gen *env_template_take(struct env_template *t);
struct env_template_gen *env_template_gen_ref(struct env_template_gen *g);
struct env_template_gen *env_template_gen_unref(struct env_template_gen *g);

/* An episode's env container as a landing for a copy of g: start_member()
 * turns the spec into one (env_template_landing_init()) and hands `adopt`
 * to member_start(), which forks the copy once the landing is up. */
struct env_template_landing {
        struct env_template_gen *gen; /* borrowed */
        struct container_nest nest;
        int pass[CONTAINER_MAX_PASS_FDS];
        int adopt_r, adopt_w; /* the pipe the landing's shim reads the copy's pid from */
        struct member_adopt adopt;
        const struct container_spec *spec; /* borrowed, for the copy's identity */
        bool fork_failed; /* the template failed (and is discarded), not the landing */
};
int env_template_landing_init(struct env_template_gen *g, unsigned slot,
                              struct container_spec *spec, struct env_template_landing *ret);
void env_template_landing_done(struct env_template_landing *l);

/* settled(userdata) runs (from the loop) when the current generation stops
 * warming: it is warm, or it was discarded (templates may be off now). A
 * generation not warm within the env's start timeout turns templates off. */
void env_template_set_notify(struct env_template *t, void (*settled)(void *userdata),
                             void *userdata);
/* A generation is warming now (an episode started now would start cold). */
bool env_template_warming(const struct env_template *t);
/* A generation is warm: an episode's env started now is a copy. */
bool env_template_ready(const struct env_template *t);

/* For the daemon's reaper: pid is a generation's container (reaped through
 * its pidfd). */
bool env_template_owns_pid(struct env_template *t, pid_t pid);

struct env_template_stats {
        uint64_t builds;        /* generations started */
        uint64_t discards;      /* generations discarded (died, stale, failed a fork) */
        uint64_t forks;         /* copies forked */
        uint64_t fork_failures; /* requests that failed (the episode started cold) */
        uint64_t warm_failures; /* templates that could not warm */
};
void env_template_stats(const struct env_template *t, struct env_template_stats *ret);
/* {"state": "warming"|"ready"|"rebuilding"|"off", "generation", "reason"
 * (why off, or the last discard), "copies"} for /info; new reference. */
json_t *env_template_info(const struct env_template *t);
