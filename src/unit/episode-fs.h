/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Per-episode storage, in the daemon's own (private) mount namespace:
 *
 *   <episode>/workspace/                       tmpfs of the agent zone's disk_mb
 *   <episode>/workspace/{upper,work,merged}   overlay: lower = seed or empty
 *   <episode>/services/<svc>/{upper,work,merged}
 *   <episode>/observers/<obs>/{out,inputs}
 *   <state>/run/sock/<container>/              recreated empty every episode
 *   <state>/run/sock/env/hosts
 *
 * Everything agent-writable is fresh every episode: the upper layers live in
 * the episode directory, and episode_fs_teardown() unmounts the overlays and
 * removes the whole episode directory, so nothing crosses episodes.
 *
 * Ownership: upper layers, /out and socket dirs belong to the host uid of
 * the principal that writes them (its user namespace maps uid 1000 there).
 */
#include "manifest/manifest.h"
#include "unit/unit-plan.h"

/* Creates every directory and mounts the overlays. On failure everything
 * made so far is undone. */
int episode_fs_setup(const struct unit_plan_context *ctx);
/* 1 if the workspace's bounded upper layer is full (no block or inode
 * left), 0 if not, -errno if it cannot be told. */
int episode_fs_workspace_full(const struct unit_plan_context *ctx);
/* Unmounts the overlays and removes the episode directory; idempotent. */
int episode_fs_teardown(const struct unit_plan_context *ctx);
