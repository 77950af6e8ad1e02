/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * File-descriptor helpers. Every fd the project opens is O_CLOEXEC from
 * birth; "no fd" is -EBADF. Paths an untrusted party can write are resolved
 * fd-relative (openat2 with RESOLVE_* flags), never by string concatenation.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Reads at most max bytes; a larger file is -EFBIG. Result is NUL-terminated. */
int read_full_fd(int fd, size_t max, char **ret, size_t *ret_len);
int read_full_file_at(int dirfd, const char *path, size_t max, char **ret, size_t *ret_len);
/* A secret (token, key) from a file of at most max bytes, trailing newlines
 * dropped: -EINVAL when empty or holding a NUL. Free with secret_free(). */
int read_secret_file(const char *path, size_t max, char **ret);
/* Writes all of buf, retrying on EINTR and short writes. */
int write_all(int fd, const void *buf, size_t len);
/* The one kernel-file writer: s to an existing file in one write(), as
 * kernel interface files (cgroupfs, procfs, sysctls) take a value. -errno of
 * the open or the write; -EIO when the kernel took only part of it. */
int write_string_file_at(int dirfd, const char *path, const char *s);
enum {
        /* Opened with O_TRUNC too: a no-op on cgroupfs, and a regular file
         * standing in for an interface file (a test's fake tree) then holds
         * exactly the last value written. */
        WRITE_STRING_FILE_TRUNCATE = 1 << 0,
};
int write_string_file_full_at(int dirfd, const char *path, const char *s, unsigned flags);
/* openat2() with RESOLVE_* flags; -ENOSYS if the kernel lacks it. */
int openat2_flags(int dirfd, const char *path, int flags, mode_t mode, unsigned long long resolve);
/* Removes a directory tree below dirfd/name without following symlinks. */
int rm_rf_at(int dirfd, const char *name);
/* Whether every directory from "/" down to path (absolute; itself included)
 * is searchable by others (o+x), as a process of another uid needs to reach
 * it: 0 yes; -EACCES with *ret_blocker (new string) the first that is not;
 * another -errno when one cannot be stat()ed (*ret_blocker names it too). */
int path_searchable_by_others(const char *path, char **ret_blocker);
/* mkdir -p relative to dirfd (absolute paths relative to "/"). */
int mkdir_p_at(int dirfd, const char *path, mode_t mode);
/* Duplicates fds[0..n) to numbers >= floor (O_CLOEXEC) into ret[], so that a
 * child can dup2() them to small fixed numbers (3, 4, ...) without clobbering
 * a source it still needs. On failure nothing stays open. */
int fds_dup_above(const int *fds, size_t n, int floor, int *ret);

/* A non-blocking fd had nothing to give or take right now (not an error). */
static inline bool errno_is_again(int e)
{
        return e == EAGAIN || e == EWOULDBLOCK;
}
