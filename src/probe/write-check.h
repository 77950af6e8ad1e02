/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Bounded, non-destructive "can this process write here?" attempts, shared by
 * `openenvctl validate` (through /proc/<subject>/root) and `openenvctl check
 * enforcement` (inside openenvd's zones).
 *
 * Every attempt runs with the caller's own credentials, so the answer is the
 * kernel's (DAC, mount and superblock flags, LSMs), not a prediction:
 *  - a directory is probed by creating a unique name with
 *    O_CREAT|O_EXCL|O_NOFOLLOW and unlinking it again;
 *  - an existing regular file by opening it for writing WITHOUT O_TRUNC and
 *    closing it (no byte is ever written);
 *  - device nodes, FIFOs, sockets and symlinks are not storage: they are
 *    reported as WRITE_NOT_STORAGE and never opened.
 * Paths under a root that an untrusted party controls are resolved with
 * openat2(RESOLVE_IN_ROOT|RESOLVE_NO_SYMLINKS|RESOLVE_NO_MAGICLINKS), so a
 * planted symlink can neither escape the root nor redirect the attempt.
 */
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "base/macro.h"

enum write_result {
        WRITE_DENIED,       /* EACCES/EPERM/EROFS: the kernel refused */
        WRITE_WRITABLE,     /* created (or opened for write); also ENOSPC/EDQUOT, and
                             * EACCES on something we own with its owner-write bit
                             * off: a chmod away (the errno stays EACCES) */
        WRITE_INCONCLUSIVE, /* any other error: neither proven */
        WRITE_NOT_STORAGE,  /* device node, FIFO, socket, symlink */
        _WRITE_RESULT_MAX,
};

const char *write_result_to_string(enum write_result r);
int write_result_from_string(const char *s);
/* Maps the errno of a failed creation/open to a result. */
enum write_result write_result_from_errno(int err);

/* Opens path (absolute or relative) beneath root_fd without following any
 * symlink; flags as for openat2 (O_CLOEXEC is added). Falls back to a
 * component-wise O_NOFOLLOW walk when openat2 is unavailable (-ENOSYS). */
int path_open_in_root(int root_fd, const char *path, int flags, int *ret_fd);

/* Creates and removes a unique entry in the directory dir_fd (O_PATH is
 * fine). Returns the result; *ret_errno gets the errno behind it (0 on
 * success). If the entry was created but could not be removed, the result is
 * still WRITABLE and *ret_errno is the unlink error. */
enum write_result write_check_dir(int dir_fd, int *ret_errno);
/* Write-opens the regular file name in dir_fd (no O_TRUNC); other file types
 * are WRITE_NOT_STORAGE. *ret_type gets a one-letter type ('f','d','c','b',
 * 'p','s','l','?'). */
enum write_result write_check_file_at(int dir_fd, const char *name, char *ret_type, int *ret_errno);

struct write_walk_bounds {
        unsigned max_depth;    /* directories below the walk root */
        unsigned max_entries;  /* directory entries examined */
        unsigned max_findings; /* writable/inconclusive entries recorded */
};

struct write_finding {
        char *path; /* owned: display path (walk prefix + relative path) */
        char type;  /* 'd' or 'f' */
        enum write_result result;
        int err;
};

/* Which bound cut a walk short. */
enum write_walk_bound {
        WALK_BOUND_NONE,
        WALK_BOUND_DEPTH,
        WALK_BOUND_ENTRIES,
        WALK_BOUND_FINDINGS,
        _WALK_BOUND_MAX,
};

/* The bound's name as in struct write_walk_bounds: "max_depth", ... */
const char *write_walk_bound_to_string(enum write_walk_bound b);

struct write_walk {
        enum write_result result; /* worst over the walk: WRITABLE > INCONCLUSIVE > DENIED */
        unsigned visited;         /* entries examined */
        unsigned not_storage;     /* device nodes, FIFOs, sockets, symlinks seen */
        unsigned nested_mounts;   /* directories on another mount, not entered */
        bool truncated;           /* a bound was hit: the subtree is unproven */
        enum write_walk_bound truncated_by; /* the first bound hit, if truncated */
        int err;                            /* first errno that made an entry inconclusive */
        int denied_err;                     /* errno of the root's refusal (EACCES/EPERM/EROFS):
                                             * a walk is only DENIED if its root was */
        struct write_finding *findings;     /* owned */
        unsigned n_findings;
};

/* Walks the directory tree at dir_fd (which must be an O_RDONLY|O_DIRECTORY
 * or O_PATH directory fd; it is not consumed), staying on the mount the root
 * lies on, and probes the root and every directory (creation) and regular
 * file (write-open). display_prefix names dir_fd in findings. */
int write_walk_run(int dir_fd, const char *display_prefix, const struct write_walk_bounds *b,
                   struct write_walk *ret);
void write_walk_done(struct write_walk *w);

/* One-letter file type: 'f','d','c','b','p','s','l','?'. */
char file_type_char(mode_t m);
/* The mount id of the file at fd (statx STATX_MNT_ID), or -errno. */
int fd_mount_id(int fd, uint64_t *ret);
