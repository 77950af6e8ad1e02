/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The real episode backend: the kernel's (episode-backend.h). Only the
 * table lives here; each entry is the function production always called.
 */
#include "sandbox/netns-keep.h"
#include "unit/episode-backend.h"
#include "unit/episode.h"

static const struct episode_backend real_backend = {
        .launcher = NULL, /* member.c's own: native or OCI */
        .netns_new = kept_netns_new,
        .storage_setup = episode_fs_setup,
        .storage_teardown = episode_fs_teardown,
        .storage_reset_workspace_copy = episode_fs_reset_workspace_copy,
        .storage_workspace_full = episode_fs_workspace_full,
};

const struct episode_backend *episode_backend_of(const struct episode_config *cfg)
{
        return cfg->backend ?: &real_backend;
}
