/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What the unit has done since it started, for the daemon's /metrics
 * (docs/DAEMON.md, "Metrics"): episodes by verdict and by how they ended,
 * time spent in each phase, reset latency by where the episode came from,
 * agent actions, standby failures, and each container's resource-limit
 * events (OOM kills, forks refused by pids.max).
 *
 * Every label a renderer makes from these is bounded: verdict kinds,
 * episode ends, phases and reset sources are fixed enums, containers are
 * the manifest's. Free text (a verdict's reason) never becomes a label.
 *
 * Ownership: a unit_stats owns its container array; the manifest
 * containers it points at are borrowed from the unit's manifest.
 */
#include <stddef.h>
#include <stdint.h>

#include "base/histogram.h"
#include "manifest/manifest.h"
#include "phase/phase.h"
#include "unit/env-template.h"
#include "unit/verdict.h"

/* How an episode ended. */
enum unit_end {
        UNIT_END_DONE,                /* the environment reported done */
        UNIT_END_ORCHESTRATOR,        /* POST /end_episode */
        UNIT_END_MEMBER_EXITED,       /* the env or a service died: the system sealed it */
        UNIT_END_PROVISIONING_FAILED, /* it never became ready */
        UNIT_END_SUPERSEDED,          /* a reset replaced it before its verdict */
        _UNIT_END_MAX,
};

/* Where a reset's episode came from. */
enum unit_reset_source {
        UNIT_RESET_STANDBY,              /* a standby episode, ready: made live at once */
        UNIT_RESET_STANDBY_PROVISIONING, /* a standby still provisioning: waited for */
        UNIT_RESET_COLD,                 /* provisioned for this reset */
        _UNIT_RESET_SOURCE_MAX,
};

/* How an episode's env server started. */
enum unit_env_start {
        UNIT_ENV_TEMPLATE, /* forked from the unit's warm template (env-template.h) */
        UNIT_ENV_COLD,     /* its own command */
        _UNIT_ENV_START_MAX,
};

const char *unit_end_to_string(enum unit_end e);
const char *unit_env_start_to_string(enum unit_env_start s);
const char *unit_reset_source_to_string(enum unit_reset_source s);

struct unit_container_stats {
        const struct manifest_container *mc; /* borrowed: the manifest */
        uint64_t oom_kills;                  /* the OOM killer, in the container's cgroup */
        uint64_t pids_limit_events;          /* forks refused by pids.max */
};

struct unit_stats {
        /* Indexed by verdict kind (VERDICT_NONE: the episode had none). */
        uint64_t episodes[_VERDICT_KIND_MAX][_UNIT_END_MAX];
        struct histogram phase_seconds[PHASE_MAX];              /* observed on leaving */
        struct histogram reset_seconds[_UNIT_RESET_SOURCE_MAX]; /* reset → ready */
        uint64_t actions;
        uint64_t standby_failures;
        uint64_t standby_replaced;                /* cold standbys given up for a template's copy */
        unsigned standby_ready, standby_target;   /* the pool now: unit_stats() fills them */
        uint64_t env_starts[_UNIT_ENV_START_MAX]; /* episodes provisioned, by their env's start */
        struct env_template_stats templates;      /* unit_stats() fills it */
        struct unit_container_stats *containers;  /* owned: manifest order (unit-plan.h) */
        size_t n_containers;
};

void unit_stats_init(struct unit_stats *s, const struct manifest *m);
void unit_stats_done(struct unit_stats *s);
/* A deep copy (ret is initialised here; unit_stats_done() it). */
void unit_stats_copy(const struct unit_stats *s, struct unit_stats *ret);
