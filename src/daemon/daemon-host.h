/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What the daemon checks and changes of its host before it serves. */
#include <stdint.h>

#include "manifest/manifest.h"

/* Its fd limits and each container's, in the log. */
void log_fd_limits(void);
/* Its own mount namespace, a slave of the host's: 0 or -errno. */
int enter_private_mount_ns(void);
/* Every ancestor of the state directory searchable by others (-EACCES, logged, if not). */
int check_traversable(const char *state);
/* Bytes the asset copy needs. */
uint64_t assets_bytes(const struct manifest *m);
