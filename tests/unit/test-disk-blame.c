/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Who filled the workspace (src/unit/disk-blame.c): the report's format, and
 * a walk of a real tree whose entries belong to two uid ranges (root: chown).
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fd-util.h"
#include "base/util.h"
#include "test-helpers.h"
#include "unit/disk-blame.h"
#include "unit/unit-plan.h"

Test(disk_blame, parse_reads_each_owner_in_order)
{
        const char out[] = "4096/3 0/40000 ";
        struct disk_blame_owned o[2];

        cr_assert_eq(disk_blame_parse(out, strlen(out), 2, o), 0);
        cr_expect_eq(o[0].bytes, 4096);
        cr_expect_eq(o[0].entries, 3);
        cr_expect_eq(o[1].bytes, 0);
        cr_expect_eq(o[1].entries, 40000);
}

Test(disk_blame, parse_refuses_a_short_or_garbled_report)
{
        struct disk_blame_owned o[2];

        cr_expect_lt(disk_blame_parse("1/1 ", 4, 2, o), 0, "one owner of two");
        cr_expect_lt(disk_blame_parse("x/1 2/2 ", 8, 2, o), 0);
        cr_expect_lt(disk_blame_parse("", 0, 1, o), 0);
}

/* Empty directories and files: no bytes, only entries — what fills inodes. */
Test(disk_blame, walk_counts_bytes_and_entries_per_range)
{
        char dir[] = "/tmp/openenvd-disk-blame.XXXXXX";
        const uid_t a = 1u << 30, b = a + UNIT_UID_RANGE;
        char out[256];

        require_root();
        cr_assert_not_null(mkdtemp(dir));
        cleanup_close int root = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        cr_assert_geq(root, 0);
        /* a: one 64 KiB file; b: a chain of 10 empty dirs and 5 empty files. */
        cleanup_close int f = openat(root, "big", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        char block[65536] = { 1 };
        cr_assert_eq(write(f, block, sizeof(block)), (ssize_t) sizeof(block));
        cr_assert_eq(fsync(f), 0);
        cr_assert_eq(fchownat(root, "big", a + UNIT_PRINCIPAL_UID, a, 0), 0);
        int d = dup(root);
        cr_assert_geq(d, 0);
        for (int i = 0; i < 10; i++) {
                cr_assert_eq(mkdirat(d, "d", 0755), 0);
                cr_assert_eq(fchownat(d, "d", b + UNIT_PRINCIPAL_UID, b, AT_SYMLINK_NOFOLLOW), 0);
                int sub = openat(d, "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                close(d);
                d = sub;
        }
        for (int i = 0; i < 5; i++) {
                char name[8];
                (void) snprintf(name, sizeof(name), "e%d", i);
                int e = openat(d, name, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
                cr_assert_geq(e, 0);
                cr_assert_eq(fchown(e, b + UNIT_PRINCIPAL_UID, b), 0);
                close(e);
        }
        close(d);

        struct disk_blame_args args = { .root_fd = root, .bases = { a, b }, .n = 2 };
        size_t len = disk_blame_walk(&args, out, sizeof(out));
        struct disk_blame_owned o[2];
        cr_assert_eq(disk_blame_parse(out, len, 2, o), 0, "%.*s", (int) len, out);
        cr_expect_geq(o[0].bytes, sizeof(block));
        cr_expect_eq(o[0].entries, 1);
        cr_expect_eq(o[1].entries, 15);
        cr_expect_lt(o[1].bytes, o[0].bytes, "empty entries hold (almost) no blocks");
        (void) rm_rf_at(AT_FDCWD, dir);
}

/* A tree deeper than the bound: counted down to UNIT_DISK_BLAME_MAX_DEPTH
 * (the directory there is an entry, never opened), and the walk ends. */
Test(disk_blame, walk_stops_at_the_depth_bound)
{
        char dir[] = "/tmp/openenvd-disk-blame.XXXXXX";
        const uid_t a = 1u << 30;
        char out[64];

        require_root();
        cr_assert_not_null(mkdtemp(dir));
        cleanup_close int root = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        cr_assert_geq(root, 0);
        int d = dup(root);
        cr_assert_geq(d, 0);
        for (int i = 0; i < UNIT_DISK_BLAME_MAX_DEPTH + 20; i++) {
                cr_assert_eq(mkdirat(d, "d", 0755), 0);
                cr_assert_eq(fchownat(d, "d", a + UNIT_PRINCIPAL_UID, a, AT_SYMLINK_NOFOLLOW), 0);
                int sub = openat(d, "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                cr_assert_geq(sub, 0);
                close(d);
                d = sub;
        }
        close(d);

        struct disk_blame_args args = { .root_fd = root, .bases = { a }, .n = 1 };
        size_t len = disk_blame_walk(&args, out, sizeof(out));
        struct disk_blame_owned o[1];
        cr_assert_eq(disk_blame_parse(out, len, 1, o), 0, "%.*s", (int) len, out);
        cr_expect_eq(o[0].entries, UNIT_DISK_BLAME_MAX_DEPTH);
        (void) rm_rf_at(AT_FDCWD, dir);
}
