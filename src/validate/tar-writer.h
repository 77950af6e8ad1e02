/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Writes a minimal POSIX ustar archive to an fd, enough for `docker import`
 * of a locally built image (the probe helper; test subjects): directories and
 * regular files with explicit owner and mode. Names are at most 99 bytes
 * (no prefix field). No network, no registry, no tar binary.
 */
#include <stddef.h>
#include <sys/types.h>

int tar_add_dir(int fd, const char *name, mode_t mode, uid_t uid, gid_t gid);
int tar_add_file(int fd, const char *name, mode_t mode, uid_t uid, gid_t gid, const void *data,
                 size_t len);
/* Two zero blocks end the archive. */
int tar_finish(int fd);
