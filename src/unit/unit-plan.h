/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The unit planner: the pure function from (manifest, episode) to one
 * container_spec per container. No I/O, no kernel: everything a container
 * will see — its mounts, masks, forwarders, environment and host uid range —
 * is decided here, in one place, so the isolation rules can be read and
 * unit-tested without root.
 *
 * Host layout the plan refers to (episode-fs.c creates it; the whole state
 * directory is a tmpfs in the daemon's private mount namespace):
 *
 *   <episode>/sock/<container>/             its /run/openenvd (only way out; a tmpfs)
 *   <episode>/hosts                         the env's /etc/hosts
 *   <state>/empty/                          empty lower layer
 *   <state>/host-view/                      the host view's skeleton (the root on a
 *                                           host without --rootfs; sandbox/host-view.h)
 *   <episode>/workspace/{upper,work,merged} /workspace (overlay on a tmpfs)
 *   <episode>/workspace-copy/ws             custody copy of the workspace, made
 *                                           once the agent zone is empty; what
 *                                           observers of later phases read
 *   <episode>/services/<svc>/{upper,work,merged}  service state (overlay on a tmpfs)
 *   <episode>/observers/<obs>/out           observer /out (rw)
 *   <episode>/observers/<obs>/inputs/<up>   custody copies of <up>/out
 *
 * Sockets the daemon connects to are never in a container's directory: the
 * env's and each service's inbound socket is a listening socket the daemon
 * made (socket activation), handed to the shim as fd 3 (UNIT_ACTIVATION_FD
 * in pass_fds order); the plan only says which containers get one.
 *
 * Ownership: the context is borrowed; unit_plan_container() fills a spec
 * that owns all its strings (container_spec_done() frees them).
 */
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cgroup/cgroup.h"
#include "manifest/manifest.h"
#include "sandbox/container-spec.h"
#include "unit/env-origin.h"

struct host_view; /* sandbox/host-view.h */

/* Principal identity inside every container. */
#define UNIT_PRINCIPAL_UID 1000
#define UNIT_PRINCIPAL_GID 1000
/* Container i gets host uids [uid_base + i * UNIT_UID_RANGE, +UNIT_UID_RANGE);
 * uid_base is this unit's own block for this episode slot (uid-block.h). */
#define UNIT_UID_RANGE 65536

/* An episode's slot is its cgroup leaves and its block of container ranges.
 * A unit running `concurrent` episodes at once and keeping `standby` ready
 * has that many slots plus one for the episode a reset retires, so the next
 * standby starts without waiting for that teardown. */
#define UNIT_SLOTS_MAX (MANIFEST_CONCURRENT_MAX + MANIFEST_STANDBY_MAX + 1)
static inline unsigned unit_slot_count(unsigned concurrent, unsigned standby)
{
        return concurrent + standby + 1;
}
/* The harness reaches its relays on these loopback ports. */
#define UNIT_HARNESS_MCP_PORT   8000
#define UNIT_HARNESS_MODEL_PORT 8001
/* What the harness presents to the model proxy instead of the real key. */
#define UNIT_MODEL_PLACEHOLDER "openenvd-placeholder"

struct unit_plan_context {
        const struct manifest *manifest; /* borrowed */
        const char *state_dir;           /* absolute; masked in every container */
        const char *episode_dir;         /* absolute: <state>/episodes/<id> */
        const char *episode_id;
        uid_t uid_base; /* first host uid of this episode's containers */
        /* default image root: --rootfs, or "/" (--host-root-unfiltered);
         * NULL: the host view, else "/" */
        const char *rootfs;
        const struct host_view *host_view; /* borrowed: sandbox/host-view.h; NULL: none */
        enum phase phase;                  /* phase the container starts in (observers) */
        uint64_t actions;                  /* the unit's count of actions so far (observers) */
        char *const *extra_masks; /* more host paths to hide (NULL-terminated, may be NULL) */
        /* The env container's working directory (when the manifest sets
         * none and its root is the daemon's) and inherited environment;
         * NULL: "/" and nothing. */
        const struct env_origin *env_origin;
        /* Whether a host path (an argv entry, a workdir) is a directory:
         * the host view binds directories; NULL means stat(). Tests inject it. */
        bool (*is_dir)(const char *path);
        /* Whether every directory down to path is searchable by others (an
         * image directory of the host view); NULL: path_searchable_by_others(). */
        bool (*reachable)(const char *path);
};

/* Index of c among all containers (zone order, then manifest order). */
size_t unit_container_index(const struct manifest *m, const struct manifest_container *c);
size_t unit_container_count(const struct manifest *m);
/* Principal's host uid (uid_base + index * range + UNIT_PRINCIPAL_UID). */
uid_t unit_container_host_uid(const struct unit_plan_context *ctx,
                              const struct manifest_container *c);
/* Whether c is the env server (the agent zone's "env"). */
bool unit_container_is_env(const struct manifest_container *c);
/* Whether c gets a listening socket from the daemon (env, services with a
 * port): it is pass_fds[0] of its spec, forwarded to its TCP port. */
bool unit_container_activated(const struct manifest_container *c);
/* The zone's cgroup below the daemon's subtree: "zones/agent", ... */
const char *unit_zone_cgroup(enum manifest_zone_kind z);
/* The cgroup limits of res, n times over: 1 for one episode's (its slot,
 * a container's leaf), the unit's slots for a zone's ceiling. */
struct cgroup_limits unit_cgroup_limits(const struct manifest_resources *res, unsigned n);

/* Host paths (newly allocated). */
char *unit_socket_dir(const struct unit_plan_context *ctx, const char *container);
char *unit_observer_dir(const struct unit_plan_context *ctx, const char *observer, const char *sub);
/* <episode>/workspace-copy, the copy's tmpfs; the copy itself is its
 * UNIT_WORKSPACE_COPY_NAME, what observers see as /workspace. */
char *unit_workspace_copy_dir(const struct unit_plan_context *ctx);
#define UNIT_WORKSPACE_COPY_NAME "ws"
/* <episode>/actions: the daemon's record of actions (action-record.h), in
 * UNIT_ACTIONS_FILE; observers that read `actions` see it as /actions. */
#define UNIT_ACTIONS_FILE "actions.jsonl"
char *unit_actions_dir(const struct unit_plan_context *ctx);
/* Observers starting in this phase see the workspace as it is (read-only)
 * rather than its custody copy: those alive while agent code runs. */
bool unit_phase_sees_live_workspace(enum phase p);

/* The env's /etc/hosts: localhost plus 127.0.0.<10+i> <expose.host> per service. */
char *unit_hosts_file(const struct manifest *m);
/* Loopback address of the i-th exposed service in the env's netns. */
void unit_service_address(size_t i, char buf[static 16]);

/* Every host path no container may see: state dir, /run/secrets, each asset's
 * source itself (a file or a directory, never a file's parent), or the
 * directory on the way to it that others cannot search (none can pass it). */
char **unit_masks(const struct unit_plan_context *ctx);

/* RLIMIT_NOFILE of every container: 4096, or the daemon's own hard limit if
 * that is lower. */
uint64_t unit_container_nofile(void);
int unit_plan_container(const struct unit_plan_context *ctx, const struct manifest_container *c,
                        struct container_spec *ret);
/* What an observer learns only at its turn (OPENENVD_PHASE from ctx->phase,
 * OPENENVD_ACTIONS from ctx->actions), set in *v; the container's own
 * environment still wins. Part of every observer's planned environment, and
 * the release of one made ahead of its turn. */
void unit_plan_turn_env(const struct unit_plan_context *ctx, const struct manifest_container *c,
                        char ***v);
