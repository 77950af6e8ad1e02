/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Who filled the agent's workspace: a bounded walk of its upper layer
 * (UNIT_DISK_BLAME_MAX_ENTRIES entries, UNIT_DISK_BLAME_MAX_DEPTH deep; the
 * base walker, dir-walk.h: by fd, no link followed) that sums, per
 * container, the bytes and the entries its host uid range owns. Entries count on their own: a
 * workspace runs out of inodes with empty files and directories, whose blocks are zero.
 *
 * The walk runs in a child (child-job.h: disk_blame_walk() is its function)
 * and reports as text, "<bytes>/<entries> " per uid range in the order given;
 * disk_blame_parse() reads that back in the parent. Best effort by design:
 * the bounds make the blame a fair guess among the agent's own containers,
 * never a reason to blame anyone outside the agent zone.
 */
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/limits.h"

/* Owners are the agent zone's containers. */
#define DISK_BLAME_MAX_OWNERS MANIFEST_MAX_CONTAINERS

struct disk_blame_args {
        int root_fd;                        /* the upper layer: not consumed by the walk */
        uid_t bases[DISK_BLAME_MAX_OWNERS]; /* first host uid of each container's range */
        size_t n;
};

struct disk_blame_owned {
        uint64_t bytes;
        uint64_t entries;
};

/* child_job_fn: walks a->root_fd, writes the report into out. */
size_t disk_blame_walk(void *arg, char *out, size_t size);
/* Parses n owners' counts from a report into ret[n]; -EBADMSG when it holds
 * fewer (a walk cut short: its caller blames the zone as a whole). */
int disk_blame_parse(const char *out, size_t len, size_t n, struct disk_blame_owned *ret);
