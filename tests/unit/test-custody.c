/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Custody copy without privileges: plain trees, every refused type that an
 * unprivileged user can create, the three limits, and type/identity swaps
 * between listing and opening (driven by the test-only hook).
 */
#include <dirent.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "custody-test-util.h"

TestSuite(custody, .init = tree_setup, .fini = tree_teardown, .timeout = 30);

Test(custody, plain_tree_copied_with_counts_and_modes)
{
        struct custody_error err = { 0 };
        struct custody_stats st = { 0 };
        struct stat s;
        int dst;

        put_file(src_fd, "a.txt", "hello");
        put_dir(src_fd, "sub");
        put_file(src_fd, "sub/b.txt", "abc");
        put_dir(src_fd, "sub/deep");
        put_file(src_fd, "sub/deep/empty", "");
        put_dir(src_fd, "empty-dir");
        cr_assert_eq(fchmodat(src_fd, "a.txt", 04777, 0), 0);

        cr_assert_eq(copy_tree(NULL, &st, &err), 0, "%s", err.detail.message);
        cr_assert_eq(st.files, 3);
        cr_assert_eq(st.dirs, 3);
        cr_assert_eq(st.bytes, 8);

        dst = openat(tmp_fd, "dst", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        cr_assert_geq(dst, 0);
        cr_assert_str_eq(slurp(dst, "a.txt"), "hello");
        cr_assert_str_eq(slurp(dst, "sub/b.txt"), "abc");
        cr_assert_str_eq(slurp(dst, "sub/deep/empty"), "");
        cr_assert(exists_at(dst, "empty-dir"));
        /* Modes are the policy's, never the source's (no setuid copied). */
        cr_assert_eq(fstatat(dst, "a.txt", &s, 0), 0);
        cr_assert_eq(s.st_mode & 07777, 0644);
        cr_assert_eq(fstatat(dst, "sub", &s, 0), 0);
        cr_assert_eq(s.st_mode & 07777, 0755);
        cr_assert_eq(fstat(dst, &s), 0);
        cr_assert_eq(s.st_mode & 07777, 0755);
        safe_close(dst);
        custody_error_done(&err);
}

Test(custody, private_modes_and_setid_bits_masked)
{
        struct custody_options o = { .file_mode = 06640, .dir_mode = 01700 };
        struct custody_error err = { 0 };
        struct stat s;

        put_dir(src_fd, "d");
        put_file(src_fd, "d/f", "x");
        cr_assert_eq(copy_tree(&o, NULL, &err), 0, "%s", err.detail.message);
        cr_assert_eq(fstatat(tmp_fd, "dst/d/f", &s, 0), 0);
        cr_assert_eq(s.st_mode & 07777, 0640);
        cr_assert_eq(fstatat(tmp_fd, "dst/d", &s, 0), 0);
        cr_assert_eq(s.st_mode & 07777, 0700);
        cr_assert_eq(fstatat(tmp_fd, "dst", &s, 0), 0);
        cr_assert_eq(s.st_mode & 07777, 0700);
}

Test(custody, source_given_as_fd)
{
        struct custody_error err = { 0 };
        struct custody_stats st = { 0 };

        put_file(src_fd, "f", "12345");
        cr_assert_eq(custody_copy(src_fd, NULL, tmp_fd, "dst", NULL, &st, &err), 0, "%s",
                     err.detail.message);
        cr_assert_eq(st.files, 1);
        cr_assert_eq(st.bytes, 5);
}

Test(custody, symlink_to_file_refused)
{
        struct custody_error err = { 0 };
        put_file(src_fd, "a", "x");
        cr_assert_eq(symlinkat("a", src_fd, "link"), 0);
        int r = copy_tree(NULL, NULL, &err);
        assert_refused(r, err, -EPERM, CUSTODY_ERR_SYMLINK, "link: symlink not allowed");
        cr_assert_str_eq(err.rel, "link");
        cr_assert(custody_reason_is_source_fault(err.reason));
        custody_error_done(&err);
        cr_assert_null(err.detail.message);
}

Test(custody, symlink_to_dir_refused_and_not_followed)
{
        struct custody_error err = { 0 };
        put_dir(src_fd, "sub");
        cr_assert_eq(symlinkat("/etc", src_fd, "sub/etc"), 0);
        int r = copy_tree(NULL, NULL, &err);
        assert_refused(r, err, -EPERM, CUSTODY_ERR_SYMLINK, "sub/etc: symlink not allowed");
        cr_assert_not(exists_at(tmp_fd, "dst/sub/etc"));
        cr_assert_not(exists_at(tmp_fd, "dst/sub/etc/passwd"));
        custody_error_done(&err);
}

Test(custody, dangling_symlink_refused)
{
        struct custody_error err = { 0 };
        cr_assert_eq(symlinkat("/nonexistent/nowhere", src_fd, "dangling"), 0);
        int r = copy_tree(NULL, NULL, &err);
        assert_refused(r, err, -EPERM, CUSTODY_ERR_SYMLINK, "dangling: symlink not allowed");
        custody_error_done(&err);
}

Test(custody, fifo_refused_without_blocking)
{
        struct custody_error err = { 0 };
        /* Nobody ever opens the write end: an open() for reading would hang
         * until the suite's timeout, so passing proves the FIFO was never
         * opened. */
        cr_assert_eq(mkfifoat(src_fd, "pipe", 0644), 0);
        int r = copy_tree(NULL, NULL, &err);
        assert_refused(r, err, -EPERM, CUSTODY_ERR_FIFO, "pipe: FIFO not allowed");
        custody_error_done(&err);
}

Test(custody, unix_socket_refused)
{
        struct custody_error err = { 0 };
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

        cr_assert_geq(s, 0);
        put_dir(src_fd, "run");
        (void) snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/src/run/sock", tmp_path);
        cr_assert_eq(bind(s, (struct sockaddr *) &sa, sizeof(sa)), 0, "%s", strerror(errno));
        int r = copy_tree(NULL, NULL, &err);
        assert_refused(r, err, -EPERM, CUSTODY_ERR_SOCKET, "run/sock: socket not allowed");
        safe_close(s);
        custody_error_done(&err);
}

Test(custody, byte_limit)
{
        struct custody_options o = { .limits.max_bytes = 10 };
        struct custody_error err = { 0 };
        struct custody_stats st = { 0 };

        put_file(src_fd, "a", "12345");
        put_file(src_fd, "b", "67890");
        cr_assert_eq(copy_tree(&o, &st, &err), 0, "exactly at the limit: %s", err.detail.message);
        cr_assert_eq(st.bytes, 10);
        cr_assert_eq(rm_rf_at(tmp_fd, "dst"), 0);

        o.limits.max_bytes = 9;
        int r = copy_tree(&o, NULL, &err);
        assert_refused(r, err, -EFBIG, CUSTODY_ERR_BYTES, "b: copy exceeds 9 bytes");
        custody_error_done(&err);
}

Test(custody, entry_limit_counts_files_and_dirs)
{
        struct custody_options o = { .limits.max_entries = 4 };
        struct custody_error err = { 0 };
        struct custody_stats st = { 0 };

        put_dir(src_fd, "d");
        put_file(src_fd, "d/1", "");
        put_file(src_fd, "d/2", "");
        put_file(src_fd, "x", "");
        cr_assert_eq(copy_tree(&o, &st, &err), 0, "exactly at the limit: %s", err.detail.message);
        cr_assert_eq(st.files + st.dirs, 4);
        cr_assert_eq(rm_rf_at(tmp_fd, "dst"), 0);

        put_file(src_fd, "d/3", "");
        int r = copy_tree(&o, NULL, &err);
        cr_assert_eq(r, -E2BIG);
        cr_assert_eq(err.reason, CUSTODY_ERR_ENTRIES);
        cr_assert(endswith(err.detail.message, ": more than 4 entries"), "%s", err.detail.message);
}

Test(custody, entry_limit_on_one_huge_directory_stops_listing)
{
        struct custody_options o = { .limits.max_entries = 50 };
        struct custody_error err = { 0 };
        char name[32];

        for (int i = 0; i < 200; i++) {
                (void) snprintf(name, sizeof(name), "f%03d", i);
                put_file(src_fd, name, "");
        }
        int r = copy_tree(&o, NULL, &err);
        cr_assert_eq(r, -E2BIG);
        cr_assert(endswith(err.detail.message, ": more than 50 entries"), "%s", err.detail.message);
        cr_assert(startswith(err.detail.message, "f"), "%s", err.detail.message);
}

Test(custody, depth_limit)
{
        struct custody_options o = { .limits.max_depth = 3 };
        struct custody_error err = { 0 };

        put_dir(src_fd, "a");
        put_dir(src_fd, "a/b");
        put_dir(src_fd, "a/b/c");
        put_file(src_fd, "a/b/c/f", "deep");
        cr_assert_eq(copy_tree(&o, NULL, &err), 0, "exactly at the limit: %s", err.detail.message);
        cr_assert_eq(rm_rf_at(tmp_fd, "dst"), 0);

        o.limits.max_depth = 2;
        int r = copy_tree(&o, NULL, &err);
        assert_refused(r, err, -ELOOP, CUSTODY_ERR_DEPTH,
                       "a/b/c: nested deeper than 2 directories");
        custody_error_done(&err);
}

Test(custody, default_depth_limit_from_limits_h)
{
        struct custody_error err = { 0 };
        int fd = fcntl(src_fd, F_DUPFD_CLOEXEC, 3);

        /* CUSTODY_MAX_DEPTH + 1 nested directories, built fd-relative. */
        for (int i = 0; i <= CUSTODY_MAX_DEPTH; i++) {
                cr_assert_eq(mkdirat(fd, "d", 0755), 0);
                int next = openat(fd, "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                cr_assert_geq(next, 0);
                safe_close(fd);
                fd = next;
        }
        safe_close(fd);
        int r = copy_tree(NULL, NULL, &err);
        cr_assert_eq(r, -ELOOP);
        cr_assert(endswith(err.detail.message, ": nested deeper than 128 directories"), "%s",
                  err.detail.message);
        cr_assert(startswith(err.detail.message, "d/d/d/"));
}

/* ---- swaps between listing and opening (the test-only hook) ---- */

enum swap_kind {
        SWAP_FILE_TO_SYMLINK,
        SWAP_FILE_TO_FIFO,
        SWAP_FILE_TO_OTHER_FILE,
        SWAP_DIR_TO_SYMLINK,
        SWAP_DIR_TO_FILE,
        SWAP_GROW,
        SWAP_REMOVE,
        SWAP_FAIL,
};

struct swap {
        const char *rel;
        enum swap_kind kind;
        int fired;
};

static int swap_hook(int parent_fd, const char *name, const char *rel, void *userdata)
{
        struct swap *s = userdata;
        int fd;

        if (!streq(rel, s->rel))
                return 0;
        s->fired++;
        switch (s->kind) {
        case SWAP_FILE_TO_SYMLINK:
                cr_assert_eq(unlinkat(parent_fd, name, 0), 0);
                cr_assert_eq(symlinkat("/etc/passwd", parent_fd, name), 0);
                break;
        case SWAP_FILE_TO_FIFO:
                cr_assert_eq(unlinkat(parent_fd, name, 0), 0);
                cr_assert_eq(mkfifoat(parent_fd, name, 0644), 0);
                break;
        case SWAP_FILE_TO_OTHER_FILE:
                /* Same type, another inode: a hard link to a file that
                 * stays alive (a fresh file could reuse the freed inode
                 * number, which is indistinguishable and harmless). */
                cr_assert_eq(unlinkat(parent_fd, name, 0), 0);
                cr_assert_eq(linkat(parent_fd, "other", parent_fd, name, 0), 0);
                break;
        case SWAP_DIR_TO_SYMLINK:
                cr_assert_eq(rm_rf_at(parent_fd, name), 0);
                cr_assert_eq(symlinkat("/etc", parent_fd, name), 0);
                break;
        case SWAP_DIR_TO_FILE:
                cr_assert_eq(rm_rf_at(parent_fd, name), 0);
                fd = openat(parent_fd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
                cr_assert_geq(fd, 0);
                safe_close(fd);
                break;
        case SWAP_GROW:
                fd = openat(parent_fd, name, O_WRONLY | O_APPEND | O_CLOEXEC);
                cr_assert_geq(fd, 0);
                for (int i = 0; i < 10; i++)
                        cr_assert_eq(write_all(fd, "0123456789", 10), 0);
                safe_close(fd);
                break;
        case SWAP_REMOVE:
                cr_assert_eq(unlinkat(parent_fd, name, 0), 0);
                break;
        case SWAP_FAIL:
                return -EIO;
        }
        return 0;
}

static int run_swap(struct swap *s, struct custody_options *o, struct custody_error *err)
{
        o->test_before_open = swap_hook;
        o->test_userdata = s;
        int r = copy_tree(o, NULL, err);
        cr_assert_eq(s->fired, 1, "hook fired %d times", s->fired);
        return r;
}

Test(custody, swap_file_for_symlink)
{
        struct swap s = { .rel = "sub/victim", .kind = SWAP_FILE_TO_SYMLINK };
        struct custody_options o = { 0 };
        struct custody_error err = { 0 };

        put_dir(src_fd, "sub");
        put_file(src_fd, "sub/victim", "mine");
        int r = run_swap(&s, &o, &err);
        assert_refused(r, err, -ESTALE, CUSTODY_ERR_TYPE_CHANGED,
                       "sub/victim: changed type while copying");
        cr_assert_not(exists_at(tmp_fd, "dst/sub/victim"), "nothing read through the link");
        custody_error_done(&err);
}

Test(custody, swap_file_for_fifo_does_not_block)
{
        struct swap s = { .rel = "victim", .kind = SWAP_FILE_TO_FIFO };
        struct custody_options o = { 0 };
        struct custody_error err = { 0 };

        put_file(src_fd, "victim", "mine");
        int r = run_swap(&s, &o, &err);
        assert_refused(r, err, -ESTALE, CUSTODY_ERR_TYPE_CHANGED,
                       "victim: changed type while copying");
        custody_error_done(&err);
}

Test(custody, swap_file_for_other_inode)
{
        struct swap s = { .rel = "victim", .kind = SWAP_FILE_TO_OTHER_FILE };
        struct custody_options o = { 0 };
        struct custody_error err = { 0 };

        put_file(src_fd, "other", "theirs");
        put_file(src_fd, "victim", "mine");
        int r = run_swap(&s, &o, &err);
        assert_refused(r, err, -ESTALE, CUSTODY_ERR_TYPE_CHANGED,
                       "victim: changed type while copying");
        custody_error_done(&err);
}

Test(custody, swap_dir_for_symlink)
{
        struct swap s = { .rel = "d", .kind = SWAP_DIR_TO_SYMLINK };
        struct custody_options o = { 0 };
        struct custody_error err = { 0 };

        put_dir(src_fd, "d");
        put_file(src_fd, "d/f", "x");
        int r = run_swap(&s, &o, &err);
        assert_refused(r, err, -ESTALE, CUSTODY_ERR_TYPE_CHANGED, "d: changed type while copying");
        cr_assert_not(exists_at(tmp_fd, "dst/d/passwd"));
        cr_assert_not(exists_at(tmp_fd, "dst/d"));
        custody_error_done(&err);
}

Test(custody, swap_dir_for_file)
{
        struct swap s = { .rel = "d", .kind = SWAP_DIR_TO_FILE };
        struct custody_options o = { 0 };
        struct custody_error err = { 0 };

        put_dir(src_fd, "d");
        int r = run_swap(&s, &o, &err);
        assert_refused(r, err, -ESTALE, CUSTODY_ERR_TYPE_CHANGED, "d: changed type while copying");
        custody_error_done(&err);
}

Test(custody, file_growing_during_copy_counts_real_bytes)
{
        struct swap s = { .rel = "grows", .kind = SWAP_GROW };
        struct custody_options o = { .limits.max_bytes = 50 };
        struct custody_error err = { 0 };

        put_file(src_fd, "grows", "tiny"); /* listed at 4 bytes, read at 104 */
        int r = run_swap(&s, &o, &err);
        assert_refused(r, err, -EFBIG, CUSTODY_ERR_BYTES, "grows: copy exceeds 50 bytes");
        custody_error_done(&err);
}

Test(custody, file_removed_during_copy)
{
        struct swap s = { .rel = "gone", .kind = SWAP_REMOVE };
        struct custody_options o = { 0 };
        struct custody_error err = { 0 };

        put_file(src_fd, "gone", "x");
        int r = run_swap(&s, &o, &err);
        assert_refused(r, err, -ESTALE, CUSTODY_ERR_VANISHED, "gone: disappeared while copying");
        custody_error_done(&err);
}

Test(custody, hook_failure_is_the_copiers_error)
{
        struct swap s = { .rel = "f", .kind = SWAP_FAIL };
        struct custody_options o = { 0 };
        struct custody_error err = { 0 };

        put_file(src_fd, "f", "x");
        int r = run_swap(&s, &o, &err);
        cr_assert_eq(r, -EIO);
        cr_assert_eq(err.reason, CUSTODY_ERR_IO);
        cr_assert_not(custody_reason_is_source_fault(err.reason));
}

/* ---- source and destination ---- */

Test(custody, source_symlink_refused)
{
        struct custody_error err = { 0 };

        put_dir(tmp_fd, "real");
        put_file(tmp_fd, "real/f", "x");
        cr_assert_eq(symlinkat("real", tmp_fd, "alias"), 0);
        int r = custody_copy(tmp_fd, "alias", tmp_fd, "dst", NULL, NULL, &err);
        assert_refused(r, err, -ENOTDIR, CUSTODY_ERR_SOURCE, ".: source is not a plain directory");
        cr_assert_not(exists_at(tmp_fd, "dst"));
        custody_error_done(&err);
}

Test(custody, source_path_through_symlink_refused)
{
        struct custody_error err = { 0 };

        put_dir(tmp_fd, "real");
        put_dir(tmp_fd, "real/inner");
        cr_assert_eq(symlinkat("real", tmp_fd, "alias"), 0);
        int r = custody_copy(tmp_fd, "alias/inner", tmp_fd, "dst", NULL, NULL, &err);
        assert_refused(r, err, -ENOTDIR, CUSTODY_ERR_SOURCE, ".: source is not a plain directory");
        custody_error_done(&err);
}

Test(custody, source_regular_file_refused)
{
        struct custody_error err = { 0 };

        put_file(tmp_fd, "file", "x");
        int r = custody_copy(tmp_fd, "file", tmp_fd, "dst", NULL, NULL, &err);
        assert_refused(r, err, -ENOTDIR, CUSTODY_ERR_SOURCE, ".: source is not a plain directory");
        int fd = openat(tmp_fd, "file", O_RDONLY | O_CLOEXEC);
        r = custody_copy(fd, NULL, tmp_fd, "dst2", NULL, NULL, &err);
        cr_assert_eq(r, -ENOTDIR);
        safe_close(fd);
        custody_error_done(&err);
}

Test(custody, destination_empty_dir_accepted)
{
        struct custody_error err = { 0 };

        put_file(src_fd, "f", "x");
        put_dir(tmp_fd, "dst");
        cr_assert_eq(copy_tree(NULL, NULL, &err), 0, "%s", err.detail.message);
        cr_assert_str_eq(slurp(tmp_fd, "dst/f"), "x");
}

Test(custody, destination_not_empty_refused)
{
        struct custody_error err = { 0 };

        put_file(src_fd, "f", "x");
        put_dir(tmp_fd, "dst");
        put_file(tmp_fd, "dst/old", "old");
        int r = copy_tree(NULL, NULL, &err);
        assert_refused(r, err, -EEXIST, CUSTODY_ERR_DESTINATION,
                       ".: custody destination dst must not exist or be empty");
        cr_assert_not(custody_reason_is_source_fault(err.reason));
        cr_assert_not(exists_at(tmp_fd, "dst/f"));
        custody_error_done(&err);
}

Test(custody, destination_symlink_or_file_refused)
{
        struct custody_error err = { 0 };

        put_dir(tmp_fd, "elsewhere");
        put_file(src_fd, "f", "x");
        cr_assert_eq(symlinkat("elsewhere", tmp_fd, "dst"), 0);
        int r = copy_tree(NULL, NULL, &err);
        cr_assert_eq(r, -EEXIST);
        cr_assert_eq(err.reason, CUSTODY_ERR_DESTINATION);
        cr_assert_not(exists_at(tmp_fd, "elsewhere/f"), "wrote through the destination link");
        custody_error_done(&err);

        put_file(tmp_fd, "dst-file", "");
        r = custody_copy(tmp_fd, "src", tmp_fd, "dst-file", NULL, NULL, &err);
        cr_assert_eq(r, -EEXIST);
}

Test(custody, destination_name_must_be_one_component)
{
        struct custody_error err = { 0 };
        const char *bad[] = { "", ".", "..", "../x", "a/b" };

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                int r = custody_copy(tmp_fd, "src", src_fd, bad[i], NULL, NULL, &err);
                cr_assert_eq(r, -EINVAL, "'%s' accepted", bad[i]);
                custody_error_done(&err);
        }
        cr_assert_eq(custody_copy(tmp_fd, "src", tmp_fd, NULL, NULL, NULL, NULL), -EINVAL);
}

Test(custody, destination_inside_source_refused)
{
        struct custody_error err = { 0 };

        put_dir(src_fd, "sub");
        put_file(src_fd, "sub/f", "x");
        int sub = openat(src_fd, "sub", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        /* dst/ appears inside the tree being copied: it must not copy itself. */
        int r = custody_copy(tmp_fd, "src", sub, "copy", NULL, NULL, &err);
        cr_assert_lt(r, 0);
        cr_assert_eq(err.reason, CUSTODY_ERR_IO, "%s", err.detail.message);
        custody_error_done(&err);
        r = custody_copy(tmp_fd, "src", src_fd, "copy2", NULL, NULL, &err);
        cr_assert_lt(r, 0, "copied into itself");
        safe_close(sub);
}

Test(custody, never_writes_outside_destination)
{
        struct custody_error err = { 0 };
        struct custody_stats st = { 0 };

        /* Names that look like path tricks are ordinary names to readdir. */
        put_file(src_fd, "...", "dots");
        put_file(src_fd, "..x", "dotx");
        put_dir(src_fd, "sub");
        put_file(src_fd, "sub/.. ", "space");
        cr_assert_eq(copy_tree(NULL, &st, &err), 0, "%s", err.detail.message);
        cr_assert_eq(st.files, 3);
        cr_assert_str_eq(slurp(tmp_fd, "dst/..."), "dots");
        cr_assert_str_eq(slurp(tmp_fd, "dst/sub/.. "), "space");
        cr_assert_eq(rm_rf_at(tmp_fd, "dst"), 0);

        /* A link aiming out of the destination is refused, not followed. */
        cr_assert_eq(symlinkat("../../escaped", src_fd, "sub/zz-escape"), 0);
        int r = copy_tree(NULL, NULL, &err);
        assert_refused(r, err, -EPERM, CUSTODY_ERR_SYMLINK, "sub/zz-escape: symlink not allowed");
        cr_assert_not(exists_at(tmp_fd, "escaped"));
        cr_assert_not(exists_at(AT_FDCWD, "/tmp/escaped"));

        /* Only src/ and the (partial) dst/ exist in the test directory. */
        int fd = fcntl(tmp_fd, F_DUPFD_CLOEXEC, 3);
        DIR *d = fdopendir(fd);
        struct dirent *de;
        int n = 0;
        cr_assert_not_null(d);
        rewinddir(d);
        while ((de = readdir(d))) {
                if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                cr_assert(streq(de->d_name, "src") || streq(de->d_name, "dst"), "stray %s",
                          de->d_name);
                n++;
        }
        closedir(d);
        cr_assert_eq(n, 2);
        custody_error_done(&err);
}

/* ---- the report a copier hands back, whatever the agent named ---- */

/* A FIFO below 20 directories of 250-byte names (past PATH_MAX): the
 * message keeps the head and the entry's own name, bounded; the owner is
 * the one the copier saw; the report round-trips through its parser. */
Test(custody, long_path_refusal_is_bounded_and_reported)
{
        struct custody_error err = { 0 };
        struct custody_report rep;
        char name[251], out[4096];
        int fd = fcntl(src_fd, F_DUPFD_CLOEXEC, 3);

        memset(name, 'n', 250);
        name[250] = '\0';
        for (int i = 0; i < 20; i++) {
                cr_assert_eq(mkdirat(fd, name, 0755), 0);
                int next = openat(fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                cr_assert_geq(next, 0);
                safe_close(fd);
                fd = next;
        }
        cr_assert_eq(mkfifoat(fd, "the-fifo", 0644), 0);
        safe_close(fd);

        cr_assert_eq(copy_tree(NULL, NULL, &err), -EPERM);
        cr_assert_eq(err.reason, CUSTODY_ERR_FIFO);
        cr_assert_eq(strlen(err.rel), 20 * 251 + strlen("the-fifo"));
        cr_assert(startswith(err.detail.message, "nnnn"), "%s", err.detail.message);
        cr_assert(endswith(err.detail.message, "/the-fifo: FIFO not allowed"), "%s",
                  err.detail.message);
        cr_assert(strstr(err.detail.message, "/.../"), "%s", err.detail.message);
        cr_assert_leq(strlen(err.detail.message),
                      CUSTODY_REPORT_MAX_REL + strlen(": FIFO not allowed"));
        cr_assert_eq(err.owner, (int64_t) getuid());

        size_t n = custody_report_format(-EPERM, &err, out, sizeof(out));
        cr_assert_eq(custody_report_parse(out, n, &rep), 0);
        cr_assert_eq(rep.r, -EPERM);
        cr_assert_eq(rep.reason, CUSTODY_ERR_FIFO);
        cr_assert_eq(rep.owner, (int64_t) getuid());
        cr_assert_str_eq(rep.message, err.detail.message);
        custody_report_done(&rep);
        custody_error_done(&err);
}

/* A name can hold anything but "/" and NUL, ": " and digits included: the
 * fields come first, so it can shift none of them. */
Test(custody, report_fields_survive_any_name)
{
        struct custody_error err = { .reason = CUSTODY_ERR_SOCKET,
                                     .owner = 1234,
                                     .detail.message =
                                             (char *) "7 0 -1 : x\n1 2 3: socket not allowed" };
        struct custody_report rep;
        char out[256];
        size_t n = custody_report_format(-EPERM, &err, out, sizeof(out));

        cr_assert_eq(custody_report_parse(out, n, &rep), 0);
        cr_assert_eq(rep.reason, CUSTODY_ERR_SOCKET);
        cr_assert_eq(rep.owner, 1234);
        cr_assert_str_eq(rep.message, err.detail.message);
        custody_report_done(&rep);

        n = custody_report_format(0, NULL, out, sizeof(out));
        cr_assert_eq(custody_report_parse(out, n, &rep), 0);
        cr_assert_eq(rep.r, 0);
        cr_assert_eq(rep.reason, CUSTODY_ERR_NONE);
        cr_assert_str_eq(rep.message, "");
        custody_report_done(&rep);
}

Test(custody, report_parser_refuses_what_the_format_cannot_produce)
{
        static const char *const bad[] = {
                "",
                "0",
                "0 0",
                "0 0 -1",
                "x 0 -1 m",
                "0 1 -1 m" /* success with a reason */,
                "-1 0 -1 m" /* failure without one */,
                "-1 99 -1 m" /* no such reason */,
                "-4096 1 -1 m",
                "1 1 -1 m",
                "-1 1 -2 m",
                "-1 1 4294967295 m",
                "-1  1 -1 m",
                "-1 1 -1",
                "-0000000000000000001 1 -1 m",
                "-01 1 -1 m",
                "-0 1 -1 m",
                "0 00 -1 m",
                "+1 1 -1 m",
        };
        struct custody_report rep;

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                cr_assert_eq(custody_report_parse(bad[i], strlen(bad[i]), &rep), -EBADMSG, "%s",
                             bad[i]);
                cr_assert_null(rep.message);
        }
}
