/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Per-episode storage, in the daemon's own (private) mount namespace, below
 * the state directory (itself a tmpfs there, see daemon.c):
 *
 *   <episode>/sock/<container>/        tmpfs: its /run/openenvd
 *   <episode>/hosts                    the env's /etc/hosts
 *   <episode>/workspace/               tmpfs of the agent zone's disk_mb
 *   <episode>/workspace/{upper,work,merged}  overlay: lower = seed or empty
 *   <episode>/workspace-copy/          tmpfs: the workspace's custody copy (ws/)
 *   <episode>/services/<svc>/          tmpfs + overlay {upper,work,merged}
 *   <episode>/observers/<obs>/         tmpfs: out/, inputs/
 *
 * Every directory a container can write is its own tmpfs, capped in bytes
 * (disk_mb) and in inodes: a writer that does not stop gets ENOSPC, and
 * nothing a container made (however deep, however many entries) is ever
 * walked by the daemon as root. Teardown unmounts them and removes the
 * known, daemon-made mount points one by one.
 *
 * Ownership: upper layers, /out and socket dirs belong to the host uid of
 * the principal that writes them (its user namespace maps uid 1000 there).
 */
#include "manifest/manifest.h"
#include "unit/unit-plan.h"

/* Inodes per MiB of a container-writable tmpfs (a 256 MiB workspace holds
 * 65536 entries), and the floor. */
#define EPISODE_FS_INODES_PER_MB 256
#define EPISODE_FS_MIN_INODES    1024
/* The inode cap of a tmpfs of disk_mb MiB. */
uint64_t episode_fs_inodes_for(uint64_t disk_mb);
/* A socket dir holds sockets and little else. */
#define EPISODE_FS_SOCK_BYTES  (UINT64_C(1024) * 1024)
#define EPISODE_FS_SOCK_INODES 256

/* <episode>/hosts, the env's /etc/hosts (unit_hosts_file()); a new file. */
int episode_fs_write_hosts(const struct unit_plan_context *ctx);
/* Creates <state>/empty, the lower layer of empty overlays (once). */
int episode_fs_init(const char *state_dir);
/* Creates every directory and mounts the tmpfs and overlays. On failure
 * everything made so far is undone. */
int episode_fs_setup(const struct unit_plan_context *ctx);
/* Whether the workspace's bounded upper layer is full: EPISODE_FS_FULL_BYTES
 * (no block left), EPISODE_FS_FULL_INODES (no inode left: many entries,
 * even empty ones), 0 if not full, -errno if it cannot be told. */
enum {
        EPISODE_FS_FULL_BYTES = 1,
        EPISODE_FS_FULL_INODES = 2,
};
int episode_fs_workspace_full(const struct unit_plan_context *ctx);
/* A fresh, empty workspace-copy tmpfs (an earlier inspection's copy is
 * discarded by unmounting, never by walking it). */
int episode_fs_reset_workspace_copy(const struct unit_plan_context *ctx);
/* Unmounts everything and removes the episode directory; idempotent. */
int episode_fs_teardown(const struct unit_plan_context *ctx);
