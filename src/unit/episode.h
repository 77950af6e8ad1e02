/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * One episode of a unit, from provisioning to teardown: its storage
 * (episode-fs.h), its containers (member.h), its relays (unit-relays.h),
 * its grading (grading.c) and its verdict (verdict.h).
 *
 *   provisioning ──► standby ──► live ⇄ frozen ──► sealing ──► grading ──► closed
 *        │                                                                  │
 *        └─► failed                          teardown (any state) ──► gone ◄┘
 *
 * Provisioning creates everything and starts the services and the env
 * server; the episode is "standby" once every service with a port listens
 * and the env answers /health below 500 — still unexposed: no harness, no
 * observer, no traffic. Activation (standby → live) starts the harness and
 * the observers listing ready/running. Sealing kills the agent zone and
 * waits for the kernel to report it empty, grading runs the observers in
 * `after` order; the verdict is then final.
 *
 * Every wait is an event of the unit's loop (pidfds, the shims' readiness
 * pipes, cgroup.events, timers, child jobs for custody copies): nothing
 * here blocks the daemon. Results come back through struct episode_events.
 *
 * The episode's containers live in cgroup leaves zones/<zone>/s<slot>/<name>
 * (limits per leaf; the zone above holds the zone's ceilings, shared by
 * the two slots) and use host uids from the slot's range, so a standby and
 * a live episode never share a cgroup or a uid. Blame names the logical
 * subtree zones/<zone>/<name>.
 *
 * Ownership: the unit owns its episodes; an episode borrows the config.
 */
#include <jansson.h>
#include <stdbool.h>

#include "base/event-loop.h"
#include "base/macro.h"
#include "cgroup/cgroup.h"
#include "manifest/manifest.h"
#include "phase/phase.h"
#include "relay/openenv-messages.h"
#include "unit/member-end.h"
#include "unit/member-log.h"
#include "unit/unit-relays.h"
#include "unit/verdict.h"

struct host_view; /* sandbox/host-view.h */

struct syscall_filter;
struct kept_netns;
struct unit_container_stats;
struct episode_backend; /* unit/episode-backend.h */
struct env_template;    /* unit/env-template.h */

enum episode_state {
        EPISODE_PROVISIONING,
        EPISODE_STANDBY,    /* provisioned, not live yet */
        EPISODE_READY,      /* live, no action yet */
        EPISODE_RUNNING,    /* live, acted (or resumed) */
        EPISODE_INSPECTING, /* freezing, then frozen observers */
        EPISODE_FROZEN,
        EPISODE_SEALING, /* agent zone killed, waiting for empty */
        EPISODE_SEALED,  /* agent zone empty: the sealed observers */
        EPISODE_GRADING, /* the grading observers */
        EPISODE_CLOSED,  /* verdict final */
        EPISODE_FAILED,  /* provisioning failed */
        EPISODE_TEARDOWN,
        EPISODE_GONE, /* only the record is left: id, verdict, logs */
        _EPISODE_STATE_MAX,
};

/* episode-state.c: the states as data. */
const char *episode_state_to_string(enum episode_state s);
/* Whether the table lists the move. */
bool episode_state_move_allowed(enum episode_state from, enum episode_state to);
/* The unit's phase while the episode in state s is live; PHASE_MAX: none. */
enum phase episode_state_phase(enum episode_state s);

struct episode_config {
        const struct manifest *manifest;
        struct loop *loop;
        struct cgroup_tree *cgroups;
        const char *state_dir;
        const char *rootfs;                /* NULL: the host view, else "/" */
        const struct host_view *host_view; /* borrowed; NULL: none */
        const char *shim_path;
        const struct syscall_filter *filter;
        unsigned weaken;
        char *const *extra_masks;
        const struct env_origin *env_origin; /* borrowed; NULL: none */
        usec_t start_timeout;
        usec_t observer_timeout;
        struct unit_model model;
        /* Native containers run in a network namespace the daemon makes for
         * each (sandbox/netns-keep.h): the env server is then reachable over
         * TCP from the daemon. false: the container's own, made by its
         * clone. */
        bool daemon_netns;
        /* Containers' output in /logs only (--container-output none): not
         * also their first lines in the daemon's log (member.h). */
        bool quiet_containers;
        /* What needs root (episode-backend.h); NULL: the real one. Tests
         * only. */
        const struct episode_backend *backend;
        /* Where the env's server is forked from (env-template.h); NULL:
         * every env starts cold. */
        struct env_template *env_template;
};

struct episode;

struct episode_events {
        /* Its state changed (episode_set_state(), reason in words): the
         * unit's phase follows (episode_state_phase()). */
        void (*state_changed)(struct episode *e, enum episode_state from, const char *reason,
                              void *userdata);
        /* Provisioning ended: 0 (standby) or -errno (failed, verdict says why). */
        void (*provisioned)(struct episode *e, int result, void *userdata);
        /* A member of the env, harness or a service exited while the episode
         * was standby, live or frozen; the episode recorded it in its
         * verdict's events. end: who ended it (member-end.h); how: "env
         * exited with status 3", "harness exhausted its memory (...)"... */
        void (*member_exited)(struct episode *e, const struct manifest_container *c, int status,
                              enum member_end end, const char *how, void *userdata);
        /* Inspection done: agent zone frozen, frozen observers collected. */
        void (*inspected)(struct episode *e, void *userdata);
        /* Sealing: the agent zone is empty (or its deadline passed). */
        void (*sealed)(struct episode *e, void *userdata);
        /* The verdict is final. */
        void (*graded)(struct episode *e, void *userdata);
        /* Everything released: the slot may be used again. */
        void (*torn_down)(struct episode *e, void *userdata);
        /* A harness called n MCP tools (its relay read them), or a tool's
         * result reported done: the agent's actions, as on the unit's port. */
        void (*harness_acted)(struct episode *e, const struct openenv_action *a, void *userdata);
        void (*harness_done)(struct episode *e, void *userdata);
        /* When provisioning may start its next container: 0 now (NULL:
         * always now), else a time (loop clock); held, it goes on then, or
         * at episode_provision_resume(). */
        usec_t (*provision_not_before)(struct episode *e, void *userdata);
};

int episode_new(const struct episode_config *cfg, unsigned slot, uid_t uid_base,
                const struct episode_events *ev, void *userdata, struct episode **ret);
/* Kills whatever still runs, at once (SIGKILL, then reaped), and frees. */
struct episode *episode_free(struct episode *e);
DEFINE_CLEANUP_FUNC(struct episode, episode_free);

/* Starts provisioning (from the next loop round on); provisioned() reports
 * the end, success or failure. */
void episode_provision(struct episode *e);
/* Provisioning held by may_provision() goes on (nothing if not held). */
void episode_provision_resume(struct episode *e);
/* standby → ready (live): the harness and the early observers start;
 * reason: why, for the unit's phase ("healthy", "standby"). */
int episode_activate(struct episode *e, const char *reason);
/* live → frozen: freezes the agent zone and services, runs the frozen
 * observers; inspected() reports the end. */
int episode_inspect(struct episode *e);
/* frozen → running: thaws. */
int episode_resume(struct episode *e);
/* ready/running/inspecting/frozen → sealing → sealed → grading → closed:
 * sealed(), graded(); reason: why it seals, for the unit's phase. */
int episode_seal(struct episode *e, const char *reason);
/* Stops everything and releases storage and cgroups; torn_down() at the
 * end. From any state; idempotent. */
void episode_teardown(struct episode *e);

const char *episode_id(const struct episode *e);
unsigned episode_slot(const struct episode *e);
enum episode_state episode_state(const struct episode *e);
/* The env server's activation socket (what the frontend connects to). */
const char *episode_env_socket(const struct episode *e);
/* A TCP socket (SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC) in the network
 * namespace of the running env server, which listens at 127.0.0.1:*ret_port
 * there: the frontend reaches it without the shim's hop. -ENETUNREACH when
 * the env runs in no namespace the daemon keeps (an OCI runtime, a fresh
 * one) or is not running. family < 0: only whether it could be made (0). */
int episode_env_tcp_socket(const struct episode *e, int family, uint16_t *ret_port);
struct verdict *episode_verdict(struct episode *e);
/* Counts and records a message's actions (action-record.h). */
void episode_record_actions(struct episode *e, const struct openenv_action *a);
uint64_t episode_actions(const struct episode *e);
/* The captured output of a container, still growing while it runs
 * (borrowed: valid until the loop runs again), or NULL when the episode
 * never ran it. */
const struct member_log *episode_member_log(const struct episode *e, const char *name);

/* The containers' output of an episode that is gone, kept by the unit for
 * GET /logs?episode_id= (its members' logs, closed). */
struct episode_logs;
/* Takes every member's output out of e (about to be freed; a member still
 * running is read no more: its output so far). */
struct episode_logs *episode_take_logs(struct episode *e);
struct episode_logs *episode_logs_free(struct episode_logs *k);
const char *episode_logs_id(const struct episode_logs *k);
/* name's output, or NULL when the episode never ran it. */
const struct member_log *episode_logs_find(const struct episode_logs *k, const char *name);
/* {"<name>": {"running", "exit_status", "ready", "cgroup"}} for /info. */
json_t *episode_members_json(const struct episode *e);
/* Adds each member's OOM kills and refused forks (its cgroup's counters,
 * final once the episode is torn down) to acc[i], in member order: the
 * manifest's containers, zone by zone (unit-plan.h). */
void episode_add_limit_events(const struct episode *e, struct unit_container_stats *acc);
/* Whether its env server is a template's copy (env-template.h). */
bool episode_env_forked(const struct episode *e);
/* For the daemon's reaper: pid is one of this episode's children (a
 * container or a custody job): it is reaped through its pidfd. */
bool episode_owns_pid(struct episode *e, pid_t pid);
