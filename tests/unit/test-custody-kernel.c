/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Custody copy cases that need root: device nodes (only CAP_MKNOD can make
 * them), a device planted between listing and opening, and handing the copy
 * to another principal's uid/gid.
 */
#include <sys/sysmacros.h>

#include "custody-test-util.h"

TestSuite(custody_kernel, .init = tree_setup, .fini = tree_teardown, .timeout = 30);

Test(custody_kernel, char_device_refused)
{
        struct custody_error err = { 0 };

        require_root();
        put_dir(src_fd, "dev");
        cr_assert_eq(mknodat(src_fd, "dev/null", S_IFCHR | 0666, makedev(1, 3)), 0, "%s",
                     strerror(errno));
        int r = copy_tree(NULL, NULL, &err);
        cr_assert_eq(r, -EPERM);
        cr_assert_eq(err.reason, CUSTODY_ERR_CHAR_DEVICE);
        cr_assert_str_eq(err.detail.message, "dev/null: character device not allowed");
}

Test(custody_kernel, block_device_refused)
{
        struct custody_error err = { 0 };

        require_root();
        /* loop0's numbers; the node is never opened, so no loop device need exist. */
        cr_assert_eq(mknodat(src_fd, "disk", S_IFBLK | 0600, makedev(7, 0)), 0, "%s",
                     strerror(errno));
        int r = copy_tree(NULL, NULL, &err);
        cr_assert_eq(r, -EPERM);
        cr_assert_eq(err.reason, CUSTODY_ERR_BLOCK_DEVICE);
        cr_assert_str_eq(err.detail.message, "disk: block device not allowed");
}

static int plant_device(int parent_fd, const char *name, const char *rel, void *userdata)
{
        int *fired = userdata;

        if (!streq(rel, "victim"))
                return 0;
        (*fired)++;
        cr_assert_eq(unlinkat(parent_fd, name, 0), 0);
        /* /dev/zero: had it been opened and read, the copy would have hit the
         * byte limit instead of reporting the swap. */
        cr_assert_eq(mknodat(parent_fd, name, S_IFCHR | 0666, makedev(1, 5)), 0);
        return 0;
}

Test(custody_kernel, swap_file_for_device_never_opens_it)
{
        struct custody_options o = { .test_before_open = plant_device, .limits.max_bytes = 1024 };
        struct custody_error err = { 0 };
        int fired = 0;

        require_root();
        o.test_userdata = &fired;
        put_file(src_fd, "victim", "x");
        int r = copy_tree(&o, NULL, &err);
        cr_assert_eq(fired, 1);
        cr_assert_eq(r, -ESTALE);
        cr_assert_str_eq(err.detail.message, "victim: changed type while copying");
}

Test(custody_kernel, copy_handed_to_principal)
{
        struct custody_options o = {
                .set_owner = true, .uid = 201000, .gid = 201001, .file_mode = 0600, .dir_mode = 0700
        };
        struct custody_error err = { 0 };
        const char *paths[] = { "dst", "dst/d", "dst/d/f", "dst/g" };
        struct stat s;

        require_root();
        put_dir(src_fd, "d");
        put_file(src_fd, "d/f", "x");
        put_file(src_fd, "g", "y");
        cr_assert_eq(copy_tree(&o, NULL, &err), 0, "%s", err.detail.message);
        for (size_t i = 0; i < ELEMENTSOF(paths); i++) {
                cr_assert_eq(fstatat(tmp_fd, paths[i], &s, AT_SYMLINK_NOFOLLOW), 0);
                cr_assert_eq(s.st_uid, 201000, "%s", paths[i]);
                cr_assert_eq(s.st_gid, 201001, "%s", paths[i]);
                cr_assert_eq(s.st_mode & 07777, S_ISDIR(s.st_mode) ? 0700 : 0600, "%s", paths[i]);
        }
}
