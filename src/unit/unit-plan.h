/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The unit planner: the pure function from (manifest, episode) to one
 * container_spec per container. No I/O, no kernel: everything a container
 * will see — its mounts, masks, forwarders, environment and host uid range —
 * is decided here, in one place, so the isolation rules can be read and
 * unit-tested without root.
 *
 * Host layout the plan refers to (created by unit.c before spawning):
 *
 *   <state>/run/sock/<container>/           its /run/openenvd (only way out)
 *   <state>/run/sock/env/hosts              the env's /etc/hosts
 *   <state>/run/empty/                      empty lower layer
 *   <episode>/workspace/{upper,work,merged} /workspace (overlay, per episode)
 *   <episode>/services/<svc>/{upper,work,merged}  service state (overlay)
 *   <episode>/observers/<obs>/out           observer /out (rw)
 *   <episode>/observers/<obs>/inputs/<up>   custody copies of <up>/out
 *
 * Ownership: the context is borrowed; unit_plan_container() fills a spec
 * that owns all its strings (container_spec_done() frees them).
 */
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "manifest/manifest.h"
#include "sandbox/container-spec.h"

/* Principal identity inside every container. */
#define UNIT_PRINCIPAL_UID 1000
#define UNIT_PRINCIPAL_GID 1000
/* Container i gets host uids [UNIT_UID_BASE + i * UNIT_UID_RANGE, +UNIT_UID_RANGE). */
#define UNIT_UID_BASE  200000
#define UNIT_UID_RANGE 65536
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
        enum phase phase;         /* phase the container starts in (observers) */
        char *const *extra_masks; /* more host paths to hide (NULL-terminated, may be NULL) */
        /* Whether an asset path is a directory (a file asset is shown as
         * /assets/<name>/<basename>); NULL means stat(). Tests inject it. */
        bool (*is_dir)(const char *path);
};

/* Index of c among all containers (zone order, then manifest order). */
size_t unit_container_index(const struct manifest *m, const struct manifest_container *c);
/* Principal's host uid (UNIT_UID_BASE + index * range + UNIT_PRINCIPAL_UID). */
uid_t unit_container_host_uid(const struct manifest *m, const struct manifest_container *c);

/* Host paths (newly allocated). */
char *unit_socket_dir(const struct unit_plan_context *ctx, const char *container);
char *unit_observer_dir(const struct unit_plan_context *ctx, const char *observer, const char *sub);

/* The env's /etc/hosts: localhost plus 127.0.0.<10+i> <expose.host> per service. */
char *unit_hosts_file(const struct manifest *m);
/* Loopback address of the i-th exposed service in the env's netns. */
void unit_service_address(size_t i, char buf[static 16]);

/* Every host path no container may see: state dir, /run/secrets, asset sources. */
char **unit_masks(const struct unit_plan_context *ctx);

int unit_plan_container(const struct unit_plan_context *ctx, const struct manifest_container *c,
                        struct container_spec *ret);
