/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The unit's state, shared by its parts:
 *   unit.c        the rules: phases, live and standby episodes, resets, ends,
 *                 member deaths, the completions the daemon waits for
 *   unit-views.c  what the control routes read of it (/info, /episodes,
 *                 /verdict, /logs, /readyz, /metrics): never a change
 */
#include <assert.h>

#include "phase/phase.h"
#include "sandbox/syscall-filter.h"
#include "unit/episode.h"
#include "unit/unit-plan.h"
#include "unit/unit-stats.h"
#include "unit/unit.h"

/* ... and whose containers' output /logs?episode_id= still serves once
 * they are freed (each container's capped at MEMBER_LOG_MAX_BYTES). */
#define UNIT_LOG_HISTORY 4
/* Standby provisioning failures in a row before the unit stops trying
 * (until the next reset). */
#define UNIT_STANDBY_MAX_FAILURES 3
/* After the n-th standby failure in a row the next one waits
 * UNIT_STANDBY_BACKOFF << (n - 1): a failure that repeats itself (a missing
 * module) is not retried back to back. */
#define UNIT_STANDBY_BACKOFF (1 * USEC_PER_SEC)
/* How long a standby's preparation and container starts wait while the live
 * episode is sealed and graded, and after it went live (its first exchange
 * is relayed then): unit.c, on_provision_not_before(). */
#define UNIT_STANDBY_YIELD (50 * USEC_PER_MSEC)
#define UNIT_MAX_WAITERS   64

/* The standby a reset takes: the oldest ready one, else the oldest still
 * provisioning; NULL when the pool is empty (unit.c). */
struct episode *unit_next_standby(const struct unit *u);

enum waiter_kind {
        WAIT_READY,   /* a reset: the lane's episode ready (or failed) */
        WAIT_GRADED,  /* an end: the verdict final */
        WAIT_INSPECT, /* an inspection done */
        WAIT_EPISODE, /* a client reset: an episode live again */
};

struct lane;

struct waiter {
        enum waiter_kind kind;
        struct lane *lane;
        unit_done_fn fn;
        void *userdata;
};

/*
 * One live episode at a time, with a phase machine of its own. A unit has
 * `episodes.concurrent` lanes (1 unless the manifest says more); with more
 * than one, each is held by the client session that took it
 * (unit_lane_acquire()) and its episodes are that session's.
 */
struct lane {
        struct unit *u; /* borrowed: the unit it is part of */
        unsigned index;
        struct phase_machine phase;
        struct episode *live;   /* owned: the episode the phase machine follows */
        json_t *inspection;     /* owned: observers' results of its last inspection */
        bool held;              /* a session holds it */
        bool episode_requested; /* a client reset waits for the grading to end */
        bool done_pending;      /* unit_note_done() ends the episode next round */
        bool cold_pending;      /* a reset waits for a free slot */
        bool live_counted;      /* the live episode is in stats.episodes */
        usec_t live_sealed_at;  /* when the live episode began sealing (loop clock) */
        usec_t live_exposed_at; /* when the live episode went live (loop clock) */
        usec_t phase_since;     /* CLOCK_MONOTONIC: entered the current phase */
        usec_t reset_at; /* CLOCK_MONOTONIC (the loop's clock): the reset in progress began */
        enum unit_reset_source reset_source; /* ... and where its episode comes from */
        enum unit_end live_end;              /* how the live episode is ending */
};

struct unit {
        struct unit_config cfg;
        const struct unit_ops *ops;
        void *userdata;
        struct episode_config ecfg;
        struct syscall_filter *filter;     /* owned: compiled once, used by every native spawn */
        struct env_template *env_template; /* owned; NULL: off */
        const char *template_off;          /* static: why it is off */
        struct lane lanes[MANIFEST_CONCURRENT_MAX]; /* the first cfg.concurrent */
        /* owned: provisioning or standby, never exposed; oldest first */
        struct episode *pool[MANIFEST_STANDBY_MAX];
        size_t n_pool;
        struct episode *retiring[UNIT_SLOTS_MAX]; /* owned: tearing down, then freed */
        size_t n_retiring;
        /* borrowed: who holds each slot, the first unit_slot_count() */
        struct episode *slots[UNIT_SLOTS_MAX];
        struct waiter waiters[UNIT_MAX_WAITERS];
        size_t n_waiters;
        json_t *recent; /* owned: [{episode_id, verdict...}], newest last */
        struct episode_logs *kept_logs[UNIT_LOG_HISTORY]; /* owned: freed episodes', newest last */
        size_t n_kept_logs;
        char *failed_start; /* owned: why the last episode to start failed; NULL: it did not */
        bool zones_created;
        unsigned standby_failures;
        usec_t standby_yield;              /* UNIT_STANDBY_YIELD (tests change it) */
        char *standby_error;               /* owned: why the last standby failed */
        struct loop_source *standby_timer; /* owned: the backoff's end */
        usec_t standby_not_before;         /* CLOCK_MONOTONIC */
        bool freeing;
        bool sweep_scheduled;

        /* For /metrics (unit-stats.h). */
        struct unit_stats stats;
        bool told_ready;    /* ops->ready was called */
        bool first_pending; /* unit_start()'s episode is not up yet */
};

/* Lane `lane` of u, for reading: one of its cfg.concurrent (asserted). */
static inline const struct lane *unit_lane(const struct unit *u, unsigned lane)
{
        assert(lane < u->cfg.concurrent);
        return &u->lanes[lane];
}

static inline unsigned unit_slots(const struct unit *u)
{
        return unit_slot_count(u->cfg.concurrent, u->cfg.standby);
}
