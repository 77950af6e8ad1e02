/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Custody copy (docs/DESIGN.md §7): the only way a grader reads what a less
 * trusted party produced. The source tree is walked by file descriptor, one
 * name at a time relative to its already open parent; no path is ever
 * resolved by string and no link is ever followed. Symlinks, FIFOs, sockets
 * and devices are refused; an entry whose type or identity changes between
 * listing and opening is refused; bytes, entries and depth are bounded, and a
 * file with holes (sparse) is refused.
 *
 * The walk is iterative (an explicit stack of open directories, at most
 * max_depth + 1 deep), so it holds two fds per level.
 *
 * Ownership: the caller owns every fd it passes; custody_copy() closes only
 * what it opened. On failure `err` is filled (custody_error_done() frees it)
 * and a partial copy is left behind under dst_parent_fd/dst_name: the caller
 * removes it (rm_rf_at()) or keeps it for inspection. On success `err` is not
 * touched and *ret_stats (if given) is written.
 */
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/error-detail.h"
#include "base/limits.h"

enum custody_reason {
        CUSTODY_ERR_NONE = 0,
        CUSTODY_ERR_SOURCE,       /* ".: source is not a plain directory" */
        CUSTODY_ERR_DESTINATION,  /* destination exists and is not an empty dir */
        CUSTODY_ERR_SYMLINK,      /* "<rel>: symlink not allowed" */
        CUSTODY_ERR_FIFO,         /* "<rel>: FIFO not allowed" */
        CUSTODY_ERR_SOCKET,       /* "<rel>: socket not allowed" */
        CUSTODY_ERR_BLOCK_DEVICE, /* "<rel>: block device not allowed" */
        CUSTODY_ERR_CHAR_DEVICE,  /* "<rel>: character device not allowed" */
        CUSTODY_ERR_SPECIAL,      /* "<rel>: special file not allowed" */
        CUSTODY_ERR_TYPE_CHANGED, /* "<rel>: changed type while copying" */
        CUSTODY_ERR_VANISHED,     /* "<rel>: disappeared while copying" */
        CUSTODY_ERR_BYTES,        /* "<rel>: copy exceeds N bytes" */
        CUSTODY_ERR_ENTRIES,      /* "<rel>: more than N entries" */
        CUSTODY_ERR_DEPTH,        /* "<rel>: nested deeper than N directories" */
        CUSTODY_ERR_SPARSE,       /* "<rel>: sparse file not allowed" (it has holes) */
        CUSTODY_ERR_IO,           /* "<rel>: <strerror(error)>" (the copier's own failure) */
};

/* True for the reasons that are the source owner's fault (blame), false for
 * CUSTODY_ERR_IO and CUSTODY_ERR_DESTINATION (the daemon's). */
bool custody_reason_is_source_fault(enum custody_reason r);

/* The one error shape (base/error-detail.h) and what blame needs beside it. */
struct custody_error {
        /* error: the errno behind the failure (EPERM for refusals); message:
         * "<rel>: <why>", ready to be blamed on the source owner (a rel longer
         * than CUSTODY_REPORT_MAX_REL is shortened in it: head/.../tail) */
        struct error_detail detail;
        enum custody_reason reason;
        char *rel;     /* owned: path relative to the source, "/"-separated, "." for the root */
        int64_t owner; /* uid owning the entry named (as the copier saw it), -1 unknown: whom to
                        * blame, without resolving rel again (it may exceed PATH_MAX) */
};
void custody_error_done(struct custody_error *e);

/*
 * The copier's outcome as it crosses from the child that ran it to the
 * daemon (child-job.h): "<r> <reason> <owner> <message>". The message is the
 * only free text and goes last, so its bytes (agent-made names) can never
 * shift a field. custody_report_format() fills out (size bytes, NUL
 * included) and returns the length used; a message that does not fit is cut.
 * custody_report_parse() accepts only what the format can produce: -EBADMSG
 * otherwise. ret->message is owned (custody_report_done()).
 */
struct custody_report {
        int r; /* 0 or -errno */
        enum custody_reason reason;
        int64_t owner; /* -1: unknown */
        char *message; /* owned, NUL-terminated ("" on success) */
};
size_t custody_report_format(int r, const struct custody_error *err, char *out, size_t size);
int custody_report_parse(const char *in, size_t len, struct custody_report *ret);
void custody_report_done(struct custody_report *rep);

/* Zero means "the default from base/limits.h" for each field. */
struct custody_limits {
        uint64_t max_bytes;   /* total bytes of all regular files (CUSTODY_MAX_BYTES) */
        uint64_t max_entries; /* files + directories, the root excluded (CUSTODY_MAX_ENTRIES) */
        unsigned max_depth;   /* directories below the root (CUSTODY_MAX_DEPTH) */
};

struct custody_options {
        struct custody_limits limits;
        /* Modes of the copies; 0 means 0644 for files and 0755 for directories.
         * Set-id and sticky bits are never copied. */
        mode_t file_mode;
        mode_t dir_mode;
        /* When set_owner, every created entry (the root too) is chowned to
         * uid:gid, e.g. the host uid of the observer that will read it. */
        bool set_owner;
        uid_t uid;
        gid_t gid;

        /* TEST ONLY. Called for every entry after it was listed and classified
         * and before it is opened, with the source parent fd and the entry's
         * name, so tests can swap the entry (file -> symlink/FIFO, dir ->
         * symlink) and prove the swap is caught. A negative return aborts the
         * copy with CUSTODY_ERR_IO. Production callers leave it NULL. */
        int (*test_before_open)(int parent_fd, const char *name, const char *rel, void *userdata);
        void *test_userdata;
};

struct custody_stats {
        uint64_t files;
        uint64_t dirs; /* the destination root is not counted */
        uint64_t bytes;
};

/*
 * Copies the directory src_path (relative to src_dirfd; NULL or "" means
 * src_dirfd itself, which must then be a directory fd) to the new directory
 * dst_name (a single path component) below dst_parent_fd. The source path is
 * resolved with RESOLVE_NO_SYMLINKS, so no component of it may be a symlink.
 * The destination must not exist, or be an empty real directory.
 *
 * Returns 0, or -errno with `err` filled: -EPERM (refused type), -ESTALE
 * (changed/vanished), -EFBIG (bytes), -E2BIG (entries), -ELOOP (depth),
 * -ENOTDIR (source), -EEXIST (destination), or the copier's own I/O error
 * (-EINVAL for a bad destination name). `err` may be NULL.
 */
int custody_copy(int src_dirfd, const char *src_path, int dst_parent_fd, const char *dst_name,
                 const struct custody_options *opts, struct custody_stats *ret_stats,
                 struct custody_error *err);
