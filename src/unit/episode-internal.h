/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Shared by episode.c (lifecycle, members) and grading.c (sealing,
 * observers, inspection). Nothing else includes this. */
#include "base/child-job.h"
#include "cgroup/cgroup-watch.h"
#include "unit/action-record.h"
#include "unit/custody.h"
#include "unit/episode.h"
#include "unit/health-probe.h"
#include "unit/member.h"
#include "unit/unit-plan.h"

struct episode;
struct env_template_gen;

/* A custody copy or disk walk (both bounded) must finish within this. */
#define EPISODE_JOB_TIMEOUT (120 * USEC_PER_SEC)

/* A member's last output lines quoted in a failure (the verdict's events). */
#define LOG_TAIL_LINES 20

/* One container of the episode. */
struct ep_member {
        struct episode *episode;             /* borrowed: owner */
        const struct manifest_container *mc; /* borrowed: the manifest */
        char *cgroup;                        /* owned: zones/<zone>/s<slot>/<name> */
        char *subtree;                       /* owned: zones/<zone>/<name>, for blame */
        struct member *m;                    /* owned while started */
        int activation_fd;                   /* owned: listening socket (env, services) */
        struct kept_netns *netns;            /* owned: made for its container, freed at its reap */
        /* A reference to the template its server was forked from (the env,
         * unit/env-template.h), dropped at its reap; NULL: started cold. */
        struct env_template_gen *template;
        bool forked; /* its last start was a template's copy (kept after the reap) */
        bool started, exited;
        int status;             /* once exited */
        bool killed;            /* the daemon ended it on purpose (no failure) */
        struct member_log *log; /* owned: its output, kept after the member is freed */
        char *start_error;      /* owned: why the last start failed ("chdir: Permission denied") */
        /* Its cgroup's limit events, read once before the cgroup goes. */
        uint64_t oom_kills, pids_limit_events;
        bool limits_final;
};

/* The observers of one phase, one after the other, in `after` order. */
enum run_stage {
        RUN_IDLE,
        RUN_NEXT,      /* pick the next observer listing the phase */
        RUN_WORKSPACE, /* custody copy of the workspace (job) */
        RUN_INPUTS,    /* custody copies of upstream outputs (jobs) */
        RUN_WAIT,      /* running; until it exits or times out */
        RUN_REAP,      /* killed; until its leaf is empty */
};

struct observer_run {
        enum phase phase;
        enum run_stage stage;
        size_t index; /* in the manifest's observer order */
        size_t input; /* next read to stage */
        struct ep_member *current;
        char *why;      /* owned: the current observer's failure, if any */
        bool stop_only; /* early observers at sealing: stop, collect, never start */
        void (*then)(struct episode *e);
};

struct episode {
        const struct episode_config *cfg; /* borrowed */
        const struct episode_events *ev;
        void *userdata;
        char id[13];
        unsigned slot;
        uid_t uid_base;
        char *dir;         /* owned: <state>/episodes/<id> */
        char *private_dir; /* owned: <state>/private/<id> (0700) */
        char *env_socket;  /* owned: <private>/env.sock */
        struct unit_plan_context plan;
        enum episode_state state;
        struct ep_member *members; /* owned, one per manifest container */
        size_t n_members;
        struct unit_relays *relays; /* owned */
        bool prepared, storage, cgroups;
        struct verdict verdict;
        struct action_record actions; /* its .actions: the daemon's count */
        bool workspace_copied;        /* for the current run of observers */
        unsigned workspace_copies;    /* made in this episode: the first needs no fresh tmpfs */
        size_t gate_next;             /* the next member observer-gate.c looks at */
        int disk_full;                /* at sealing: EPISODE_FS_FULL_* or 0 */

        /* Waits of the operation in progress (at most one of each). */
        struct loop_source *step;     /* zero-delay steps (spawns one per round) */
        struct loop_source *deadline; /* start_timeout, observer_timeout */
        struct health_probe *health;
        struct cgroup_watch *watch;
        struct child_job *job;
        size_t spawn_next;
        usec_t provision_deadline;
        struct observer_run run;
        void (*after_watch)(struct episode *e, int result);
        void (*after_job)(struct episode *e, int result, const char *out, size_t len);
};

/* episode.c: what a member's exit and readiness mean (its table) */
extern const struct member_ops episode_member_ops;

/* episode-members.c */
struct ep_member *episode_find_member(struct episode *e, const struct manifest_container *c);
int episode_start_member(struct episode *e, struct ep_member *mb, enum phase phase);
/* Observers made ahead of their turn (observer-gate.c): started with the
 * principal held at the shim's gate, not counted as started until
 * released with the turn's values (unit_plan_turn_env()). */
int episode_prepare_member(struct episode *e, struct ep_member *mb, enum phase phase);
int episode_release_member(struct episode *e, struct ep_member *mb, enum phase phase);
bool episode_member_gated(const struct ep_member *mb);
void episode_stop_member(struct ep_member *mb);
int episode_watch(struct episode *e, const char *const *rels, size_t n, enum cgroup_watch_goal goal,
                  usec_t timeout, void (*then)(struct episode *e, int result));
int episode_job(struct episode *e, child_job_fn fn, void *arg, usec_t timeout,
                void (*then)(struct episode *e, int result, const char *out, size_t len));
void episode_cancel_waits(struct episode *e);

/* episode-teardown.c: processes, relays, cgroups and storage released at
 * once (episode_free()); every zone thawed and killed, rels[] filled with
 * the zones' cgroups (owned by the caller). */
void episode_release(struct episode *e);
void episode_kill_all(struct episode *e, char *rels[MANIFEST_ZONE_MAX]);
char *episode_zone_cgroup(const struct episode *e, enum manifest_zone_kind z);

/* observer-gate.c: observers made ahead of their turn. One per call
 * (a loop round each): 1 when it looked at one, 0 when none is left. */
int observer_gate_prepare_next(struct episode *e);
bool observer_gate_pending(const struct episode *e);
/* A member made ahead and not released (gated, or died at its gate) is
 * stopped: it starts at its turn as any other. */
void observer_gate_discard(struct episode *e, struct ep_member *mb, const char *why);
void observer_gate_discard_workspace_readers(struct episode *e);

/* custody-job.c: a custody copy of src to dst_parent/dst_name in a child
 * job, then then(); fresh_copy: the workspace copy's tmpfs is made anew
 * first. The copier's outcome from the job's result: */
int start_custody(struct episode *e, const char *src, const char *dst_parent, const char *dst_name,
                  uint64_t max_bytes, bool fresh_copy,
                  void (*then)(struct episode *e, int result, const char *out, size_t len));
struct custody_report custody_outcome(int result, const char *out, size_t len);

/* agent-events.c: an event of an agent-zone container (mb NULL: of the
 * zone as a whole): listed in the verdict with the policy that applied
 * (extra: more of the event's fields, stolen, may be NULL); when its
 * verdict_policy says void, also the verdict's failure, agent_misbehavior
 * with the reason and cause. True when it voided grading. */
bool episode_agent_event(struct episode *e, const struct ep_member *mb,
                         enum manifest_verdict_event what, const char *cause, json_t *extra,
                         const char *fmt, ...) printf_fmt(6, 7);
/* The evidence at sealing, before the kill: OOM kills, refused forks and
 * detached processes of each started agent container, as events. */
void agent_events_at_sealing(struct episode *e);

/* observer-blame.c: the one blame rule for observers (docs/GRADING.md).
 * A runner reads the workspace or a runner's output: what agent bytes can
 * make it do is the agent's; the rest is the infrastructure's. */
enum observer_fault {
        OBSERVER_FAULT_EXIT,           /* non-zero exit, or killed from inside */
        OBSERVER_FAULT_TIMEOUT,        /* past --observer-timeout */
        OBSERVER_FAULT_MEMORY_LIMIT,   /* OOM-killed at its own limit */
        OBSERVER_FAULT_INVALID_RESULT, /* /out/verdict.json not a bounded JSON object in a file */
        OBSERVER_FAULT_OUTPUT_REFUSED, /* its /out refused by custody for a later observer */
        OBSERVER_FAULT_HOST_OOM,       /* the host's OOM killer */
        OBSERVER_FAULT_INIT,           /* its init (the shim) died of a signal not ours */
        OBSERVER_FAULT_NOT_REAPED,     /* its leaf did not empty after the kill */
        OBSERVER_FAULT_NOT_STARTED,    /* the daemon could not start it */
        _OBSERVER_FAULT_MAX,
};
bool observer_reads_agent_data(const struct manifest *m, const struct manifest_container *c);
/* Lists the failure (observer_failed: reason, cause, runner, its output's
 * tail) and fails the verdict by the rule, blamed on mb's subtree. */
void observer_fail(struct episode *e, const struct ep_member *mb, enum observer_fault fault,
                   const char *tail, const char *fmt, ...) printf_fmt(5, 6);

/* grading.c */
void grading_start_early_observers(struct episode *e);
int grading_seal(struct episode *e, const char *reason);

/* episode-state.c: the one way a state changes (refused, -EINVAL, when
 * the table lacks the move). */
int episode_set_state(struct episode *e, enum episode_state to, const char *reason);
int grading_inspect(struct episode *e);
void grading_observer_exited(struct episode *e, struct ep_member *mb);
void grading_deadline(struct episode *e);
