/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Shared by the parts of the enforcement check (enforce.h), in dependency
 * order:
 *   enforce-world.c  the check's own world: state dir, cgroups, episode,
 *                    canaries, listeners, hidden paths; removed on every path
 *   enforce-probe.c  one probe container per manifest container, its report
 *                    and the host-side checks
 *   enforce.c        the entry points and the report
 */
#include <stdbool.h>
#include <stdint.h>

#include "base/limits.h"
#include "cgroup/cgroup.h"
#include "enforce/enforce.h"
#include "unit/uid-block.h"
#include "unit/unit-plan.h"

/* Where the probe binary and the check's own mounts appear inside. /run is
 * a fresh tmpfs in every container, so these names shadow nothing. */
#define PROBE_INSIDE   "/run/openenvd-probe"
#define LINKS_INSIDE   "/run/openenv-links"
#define SYMLINK_INSIDE "/run/openenv-symlink"
#define REPORT_MAIN    "enforce-report.jsonl"
#define REPORT_LINK    "enforce-link-report.jsonl"

/* The probe leaf's own limits: small, so exceeding them is cheap. The
 * zone's cgroup above it keeps the manifest's limits. */
#define PROBE_PIDS         32ULL
#define PROBE_MEMORY_BYTES (64ULL * 1024 * 1024)

#define DEFAULT_TIMEOUT    (60 * USEC_PER_SEC)
#define KEY_PREFIX         "sk-openenv-canary-"
#define KEY_ENV            "OPENENVD_MODEL_KEY"
#define MAX_CANARY_HOSTS   4

/* Everything the check made; all of it goes in enforce_world_teardown(). */
struct enforce_world {
        const struct enforce_options *o;
        const struct manifest *m;
        char *state;      /* owned: temporary state dir */
        char *episode;    /* owned */
        char *canary;     /* owned: <state>/canary */
        char *key_file;   /* owned */
        char *marker_hex; /* owned */
        char *links;      /* owned: <state>/links (bound at LINKS_INSIDE) */
        char *symlink;    /* owned: <state>/symlink-src -> <state> */
        struct unit_plan_context ctx;
        struct uid_block uids; /* this check's own host uid range */
        struct cgroup_layout layout;
        struct cgroup_tree *cg;
        bool adopted;
        bool episode_made;
        int log_fd;
        int tcp_fd;
        uint16_t tcp_port;
        int unix_fds[MANIFEST_MAX_CONTAINERS * MANIFEST_ZONE_MAX + 1];
        size_t n_unix;
        char **unix_paths;    /* owned */
        char **canary_hosts;  /* owned */
        char **hidden;        /* owned */
        char **kernel_masked; /* owned */
        bool key_env_set;
};

/* enforce-world.c */
int enforce_world_setup(struct enforce_world *R);
void enforce_world_teardown(struct enforce_world *R);

/* enforce-probe.c */
/* Probes c in a container planned like it; fills p with every attempt. */
void enforce_probe_container(struct enforce_world *R, const struct manifest_container *c,
                             struct enforce_plan *p);
