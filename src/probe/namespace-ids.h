/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Namespace identities of a process: the inode numbers behind
 * /proc/<pid>/ns/<kind> (namespaces(7)). Two processes share a namespace iff
 * the numbers are equal (all ns inodes live on the one nsfs superblock).
 * A link that cannot be read (the process exited, or ptrace access mode
 * checks refused us) leaves its kind unknown (has[] false), never zero.
 */
#include <stdbool.h>
#include <stdint.h>

enum ns_kind {
        NS_CGROUP,
        NS_IPC,
        NS_MNT,
        NS_NET,
        NS_PID,
        NS_TIME,
        NS_USER,
        NS_UTS,
        _NS_KIND_MAX,
};

struct ns_ids {
        uint64_t ino[_NS_KIND_MAX];
        bool has[_NS_KIND_MAX];
        int err[_NS_KIND_MAX]; /* positive errno for kinds not read, 0 if read */
};

const char *ns_kind_to_string(enum ns_kind k);
int ns_kind_from_string(const char *s); /* -EINVAL if unknown */
/* Parses a link target "kind:[123]" for the given kind. */
int ns_link_parse(const char *kind, const char *target, uint64_t *ret);
/* Reads every ns link below a /proc/<pid> directory fd. Never fails: unread
 * kinds are recorded in err[]. */
void ns_ids_read_at(int pid_dirfd, struct ns_ids *ret);
