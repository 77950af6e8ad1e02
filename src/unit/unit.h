/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The unit: one environment split into zones, run episode after episode
 * (docs/DESIGN.md §4 and §9). The episode's rules live here, in one place
 * that the daemon (control routes) and the frontend (agent traffic) call:
 *
 *   unit_reset()            any phase → provisioning → ready (or failed)
 *   unit_note_actions()     ready → running (a step, a /ws step, an MCP tool call)
 *   unit_inspect()          running → frozen, observers listing `frozen` run
 *   unit_resume()           frozen → running
 *   unit_end()              → sealed → grading → closed, with a verdict
 *   unit_note_done()        the environment reported done: as unit_end(), its actor,
 *                           once the current dispatch round delivered that message
 *   unit_request_episode()  a client (orchestrator) resets while no episode is
 *                           live: a new one starts, after any grading finishes
 *
 * The phase machine follows the live episode. Beside it the unit keeps a
 * pool of standby episodes (the manifest's `standby: K`, default 1, none
 * with `standby: false`): provisioned in the background as soon as one is
 * taken (and at start), never exposed, so a reset only has to make the
 * oldest ready one live. Each episode has a slot of its own (cgroup leaves
 * and host uid range, unit_slot_count()): no two episodes share either. A member that dies during
 * the episode is a fact of it: the env or a service ends the episode (the system seals it), a
 * harness is recorded; each lands in the verdict with its status and blame.
 *
 * Nothing blocks: operations that wait (provisioning, freezing, grading)
 * return 1 ("pending") and call their unit_done_fn later from the loop; 0
 * means done now; -EPERM a refusal by the phase machine (with the text);
 * other -errno a failure. Ownership: the unit borrows the manifest, cgroup
 * tree and loop, and owns its episodes.
 */
#include <jansson.h>
#include <stdbool.h>

#include "base/event-loop.h"
#include "base/macro.h"
#include "base/time-util.h"
#include "cgroup/cgroup.h"
#include "manifest/manifest.h"
#include "phase/phase.h"
#include "relay/openenv-messages.h"
#include "unit/env-origin.h"
#include "unit/member-log.h"
#include "unit/unit-relays.h"
#include "unit/unit-stats.h"

struct host_view; /* sandbox/host-view.h */

struct model_upstream;
struct episode_backend;

/* Ended episodes whose verdict GET /verdict?episode_id= still serves:
 * unit_config.verdict_history, 0 meaning the default (openenvd's
 * --verdict-history; docs/DAEMON.md, "Verdict history", has the memory
 * each costs). */
#define UNIT_VERDICT_HISTORY_DEFAULT 16
#define UNIT_VERDICT_HISTORY_MAX     4096

struct unit_config {
        const struct manifest *manifest;     /* borrowed */
        const char *state_dir;               /* absolute: the daemon's private tmpfs */
        struct cgroup_tree *cgroups;         /* borrowed, the daemon already adopted itself */
        struct loop *loop;                   /* borrowed */
        const char *shim_path;               /* absolute path of openenvd-shim */
        const char *rootfs;                  /* containers' default root; NULL: the view */
        const struct host_view *host_view;   /* borrowed: the host view; NULL: "/" */
        usec_t start_timeout;                /* services and env must be ready within this */
        usec_t observer_timeout;             /* one observer's run */
        char *const *extra_masks;            /* more host paths to hide in every container */
        const struct env_origin *env_origin; /* the env's start directory and environment */
        unsigned weaken;                     /* test-only: enum container_weaken */
        struct unit_model model;             /* model proxy for the harness (upstream NULL: none) */
        unsigned concurrent;      /* episodes live at once: 1..MANIFEST_CONCURRENT_MAX (0: 1) */
        unsigned standby;         /* standby episodes kept ready: 0..MANIFEST_STANDBY_MAX */
        bool quiet_containers;    /* their output in /logs only, not the log */
        uid_t uid_base;           /* the unit's uid block (uid-block.h) ... */
        uint32_t uid_slot_size;   /* ... in unit_slot_count() slots of this size */
        uid_t template_uid;       /* the env template's own range (unit-plan.h's size); 0: none */
        unsigned verdict_history; /* 1..UNIT_VERDICT_HISTORY_MAX; 0: the default */
        /* Tests only: the episodes' backend (episode-backend.h); NULL: the
         * real one, root's. */
        const struct episode_backend *backend;
};

/* Completion of a pending operation: 0, or -errno (-ECANCELED: superseded
 * by a reset; -EIO: it failed, the verdict says why). */
typedef void (*unit_done_fn)(void *userdata, int result);

struct unit_ops {
        /* A lane's live env server's socket changed (NULL: none is live). */
        void (*env_changed)(void *userdata, unsigned lane, const char *env_socket);
        /* unit_ready() became true for the first time (NULL: not told). */
        void (*ready)(void *userdata);
};

struct unit;

int unit_new(const struct unit_config *cfg, const struct unit_ops *ops, void *userdata,
             struct unit **ret);
struct unit *unit_free(struct unit *u);
DEFINE_CLEANUP_FUNC(struct unit, unit_free);

/* Provisions the first episode (made live with initial_episode, as if the
 * orchestrator had reset) or only a standby. */
int unit_start(struct unit *u, bool initial_episode);

/*
 * Lanes: a unit runs `episodes.concurrent` episodes at once, each in a lane
 * with a phase machine of its own (numbered from 0). With one, every
 * client shares lane 0, as it always did. With more, a client session
 * takes a lane of its own (unit_lane_acquire(); -EBUSY when every lane is
 * held) and gives it back when it goes (unit_lane_release(): its live
 * episode ends and is graded). The operations below act on one lane.
 */
unsigned unit_lanes(const struct unit *u);
unsigned unit_lanes_held(const struct unit *u);
int unit_lane_acquire(struct unit *u);
void unit_lane_release(struct unit *u, unsigned lane);
/* The lane whose live episode is episode_id; -ENOENT: none. */
int unit_lane_of(const struct unit *u, const char *episode_id);

/* The first lane's phase (the unit's, with one lane). */
enum phase unit_phase(const struct unit *u);
/* The lane's live episode's id; NULL before its first episode. */
const char *unit_episode_id(const struct unit *u, unsigned lane);
/*
 * Readiness (docs/DAEMON.md "Health"): false until what unit_start()
 * started is up (the first episode live, or the first standby ready), and
 * while the last episode failed to provision; true otherwise, between
 * episodes too (a reset is served: held until the next one is up). When
 * false, *ret_reason (a new string; NULL: not wanted) says why.
 */
bool unit_ready(const struct unit *u, char **ret_reason);
/* Env traffic is served while the unit is ready or running. */
bool unit_env_traffic_allowed(const struct unit *u, unsigned lane);
/* A TCP socket in the live env server's network namespace, where it
 * listens at 127.0.0.1:*ret_port (episode_env_tcp_socket()); -ENETUNREACH
 * when no env server is live or the daemon keeps no namespace for it. */
int unit_env_tcp_socket(const struct unit *u, unsigned lane, int family, uint16_t *ret_port);

int unit_reset(struct unit *u, unsigned lane, const char *reason, unit_done_fn done, void *userdata,
               char *ret_refusal, size_t refusal_size);
int unit_inspect(struct unit *u, unsigned lane, unit_done_fn done, void *userdata,
                 char *ret_refusal, size_t refusal_size);
int unit_resume(struct unit *u, unsigned lane, char *ret_refusal, size_t refusal_size);
int unit_end(struct unit *u, unsigned lane, enum phase_actor actor, const char *reason,
             unit_done_fn done, void *userdata, char *ret_refusal, size_t refusal_size);
int unit_request_episode(struct unit *u, unsigned lane, unit_done_fn done, void *userdata);
/* Whether the live episode's verdict is still to come: it is being sealed
 * or graded, or an env's done is about to end it. */
bool unit_verdict_pending(const struct unit *u, unsigned lane);
/* done() once that verdict is final: 1. 0: nothing pending. -EBUSY past
 * UNIT_MAX_WAITERS; done() gets -ECANCELED when a reset supersedes it. */
int unit_wait_verdict(struct unit *u, unsigned lane, unit_done_fn done, void *userdata);
/* A message's actions: counted and recorded for the lane's live episode. */
void unit_note_actions(struct unit *u, unsigned lane, const struct openenv_action *a);
void unit_note_done(struct unit *u, unsigned lane);
/* Forgets every pending completion registered with userdata (its
 * connection went away). */
void unit_forget(struct unit *u, void *userdata);

/* {"phase", "episode_id", "isolation", "verdict", "history", "standby",
 *  "members", "actions"} of the first lane, and "episodes": {"concurrent",
 *  "sessions", "live"}; new reference. */
json_t *unit_info(const struct unit *u);
/* The first lane's live (or last) episode's verdict; with episode_id, a
 * live or recent episode's (NULL when unknown). New reference. */
json_t *unit_verdict(const struct unit *u, const char *episode_id);
/* How many ended episodes' verdicts are kept (unit_config.verdict_history). */
unsigned unit_verdict_history(const struct unit *u);
/* GET /episodes: {"live": {episode_id, phase} | null (the first lane's),
 * "live_episodes": [{lane, episode_id, phase, session}] (every lane's),
 * "standby": {episode_id, state} | null, "standby_pool", "recent":
 * [{episode_id, verdict, reason, blame, actions, ended_at}] newest first,
 * the last verdict_history, "kept", "concurrent"}. */
json_t *unit_episodes(const struct unit *u);
/* The captured output of a container (unit/member-log.h) in the episode
 * episode_id, or without one the live (else the last) episode: one live,
 * retiring, or among the last UNIT_LOG_HISTORY freed. Borrowed, valid until
 * the loop runs again; *ret_episode_id says whose. NULL when unknown. */
const struct member_log *unit_container_log(const struct unit *u, const char *container,
                                            const char *episode_id, const char **ret_episode_id);
/* Observers' results of the lane's last inspection; new reference. */
json_t *unit_inspection(const struct unit *u, unsigned lane);

/* What the unit has done since it started (unit-stats.h), with the limit
 * events of the episodes still running; ret is a copy to unit_stats_done(). */
void unit_stats(const struct unit *u, struct unit_stats *ret);

/* For the daemon's reaper: pid is one of the unit's children (a container
 * or a job); it is reaped through its pidfd. */
bool unit_owns_pid(struct unit *u, pid_t pid);
