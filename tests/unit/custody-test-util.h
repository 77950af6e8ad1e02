/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Fixture helpers shared by the custody suites: each test gets its own
 * mkdtemp() directory holding "src" (the tree to copy) and receives the copy
 * as "dst" next to it; the fini hook removes the whole directory.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fd-util.h"
#include "base/util.h"
/* test-helpers.h uses cr_fatal(), which Criterion 2.4 declares only in
 * <criterion/new/assert.h>; the classic API spells it cr_assert_fail(). */
#include <criterion/criterion.h>
#ifndef cr_fatal
#define cr_fatal(...) cr_assert_fail(__VA_ARGS__)
#endif
#include "test-helpers.h"
#include "unit/custody.h"

static char tmp_path[] = "/tmp/custody-test-XXXXXX";
static int tmp_fd = -EBADF; /* the test's directory */
static int src_fd = -EBADF; /* tmp/src */

static inline void tree_setup(void)
{
        cr_assert_not_null(mkdtemp(tmp_path));
        tmp_fd = open(tmp_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        cr_assert_geq(tmp_fd, 0);
        cr_assert_eq(mkdirat(tmp_fd, "src", 0755), 0);
        src_fd = openat(tmp_fd, "src", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        cr_assert_geq(src_fd, 0);
}

static inline void tree_teardown(void)
{
        src_fd = safe_close(src_fd);
        tmp_fd = safe_close(tmp_fd);
        (void) rm_rf_at(AT_FDCWD, tmp_path);
}

static inline void put_file(int dirfd, const char *path, const char *content)
{
        int fd = openat(dirfd, path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        cr_assert_geq(fd, 0, "create %s: %s", path, strerror(errno));
        cr_assert_eq(write_all(fd, content, strlen(content)), 0);
        safe_close(fd);
}

static inline void put_dir(int dirfd, const char *path)
{
        cr_assert_eq(mkdirat(dirfd, path, 0755), 0, "mkdir %s: %s", path, strerror(errno));
}

/* Copies tmp/src to tmp/dst with opts; returns custody_copy()'s result. */
static inline int copy_tree(const struct custody_options *opts, struct custody_stats *st,
                            struct custody_error *err)
{
        return custody_copy(tmp_fd, "src", tmp_fd, "dst", opts, st, err);
}

static inline char *slurp(int dirfd, const char *path)
{
        char *buf = NULL;
        int r = read_full_file_at(dirfd, path, 1 << 20, &buf, NULL);
        cr_assert_eq(r, 0, "read %s: %s", path, strerror(-r));
        return buf;
}

static inline bool exists_at(int dirfd, const char *path)
{
        struct stat st;
        return fstatat(dirfd, path, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

/* Asserts a refusal: return code, reason and the exact message. */
#define assert_refused(r, err, code, why, msg)                                                   \
        do {                                                                                     \
                cr_assert_eq((r), (code), "r=%d (%s)", (r), strerror(-(r)));                     \
                cr_assert_eq((err).reason, (why), "reason %d, message '%s'", (int) (err).reason, \
                             (err).detail.message ? (err).detail.message : "");                  \
                cr_assert_str_eq((err).detail.message, (msg));                                   \
        } while (0)
