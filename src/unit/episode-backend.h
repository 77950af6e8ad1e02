/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What an episode needs root for, behind one seam: starting, signalling and
 * reaping its containers (the launcher), its storage (tmpfs and overlay
 * mounts, episode-fs.h) and the network namespaces the daemon makes for
 * its members (sandbox/netns-keep.h). episode_config.backend NULL is the
 * real one, which production always uses; the engine's tests pass a fake
 * (tests/unit/fake-backend.h) that starts no process and makes storage as
 * plain directories, so provisioning, grading and teardown run in-process
 * without root. Everything else the engine does (cgroups through the
 * cgroup tree it is given, sockets, relays, child jobs, the health probe)
 * stays the same code in both.
 *
 * The storage functions also run in child jobs (fork): they must be safe
 * there (no loop, no state but the files).
 */
#include "unit/episode-fs.h"
#include "unit/member.h"
#include "unit/unit-plan.h"

struct kept_netns;
struct episode_config; /* unit/episode.h */

struct episode_backend {
        /* NULL: the native launcher or the zone's OCI runtime. */
        const struct member_launcher *launcher;
        /* A network namespace for a native member (*ret NULL: none, the
         * container makes its own). */
        int (*netns_new)(struct kept_netns **ret);
        /* episode-fs.h's contracts. */
        int (*storage_setup)(const struct unit_plan_context *ctx);
        int (*storage_teardown)(const struct unit_plan_context *ctx);
        int (*storage_reset_workspace_copy)(const struct unit_plan_context *ctx);
        int (*storage_workspace_full)(const struct unit_plan_context *ctx);
};

/* The backend an episode of cfg uses: cfg's, else the real one. */
const struct episode_backend *episode_backend_of(const struct episode_config *cfg);
