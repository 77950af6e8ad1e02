/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fd-util.h"
#include "base/parse-util.h"
#include "base/sibling-binary.h"
#include "base/strbuf.h"
#include "base/util.h"
#include "test-helpers.h"

Test(parse, uint64_accepts_only_plain_decimal)
{
        uint64_t v = 7;
        cr_assert_eq(parse_uint64("42", 0, 100, &v), 0);
        cr_assert_eq(v, 42);
        cr_assert_eq(parse_uint64("-1", 0, 100, &v), -EINVAL);
        cr_assert_eq(parse_uint64(" 1", 0, 100, &v), -EINVAL);
        cr_assert_eq(parse_uint64("1x", 0, 100, &v), -EINVAL);
        cr_assert_eq(parse_uint64("", 0, 100, &v), -EINVAL);
        cr_assert_eq(parse_uint64("101", 0, 100, &v), -ERANGE);
        cr_assert_eq(parse_uint64("99999999999999999999999", 0, UINT64_MAX, &v), -ERANGE);
        cr_assert_eq(v, 42, "ret must be untouched on failure");
}

Test(parse, int_and_double)
{
        int i;
        double d;
        cr_assert_eq(parse_int("-5", -10, 10, &i), 0);
        cr_assert_eq(i, -5);
        cr_assert_eq(parse_int("--5", -10, 10, &i), -EINVAL);
        cr_assert_eq(parse_double("1.5", 0, 2, &d), 0);
        cr_assert_float_eq(d, 1.5, 1e-9);
        cr_assert_eq(parse_double("nan", 0, 2, &d), -EINVAL);
        cr_assert_eq(parse_double("inf", 0, 2, &d), -EINVAL);
        cr_assert_eq(parse_double("0x1p1", 0, 4, &d), -EINVAL);
        cr_assert_eq(parse_double("3", 0, 2, &d), -ERANGE);
}

Test(strbuf, grows_and_detaches)
{
        cleanup_strbuf struct strbuf sb = STRBUF_INIT;
        cr_assert_str_eq(sb.buf, "");
        for (int i = 0; i < 1000; i++)
                strbuf_addf(&sb, "%d,", i);
        cr_assert_eq(sb.len, strlen(sb.buf));
        cr_assert(startswith(sb.buf, "0,1,2,"));
        size_t len;
        char *p = strbuf_detach(&sb, &len);
        cr_assert_eq(len, strlen(p));
        cr_assert_eq(sb.len, 0);
        free(p);
}

Test(util, consttime_compare)
{
        cr_assert(memeq_consttime("abc", 3, "abc", 3));
        cr_assert_not(memeq_consttime("abc", 3, "abd", 3));
        cr_assert_not(memeq_consttime("abc", 3, "ab", 2));
}

Test(fd, read_full_file_is_bounded)
{
        char path[] = "/tmp/openenv-test-XXXXXX";
        int fd = mkstemp(path);
        cr_assert_geq(fd, 0);
        cr_assert_eq(write_all(fd, "0123456789", 10), 0);
        close(fd);
        char *buf = NULL;
        size_t len;
        cr_assert_eq(read_full_file_at(AT_FDCWD, path, 100, &buf, &len), 0);
        cr_assert_eq(len, 10);
        cr_assert_str_eq(buf, "0123456789");
        free(buf);
        cr_assert_eq(read_full_file_at(AT_FDCWD, path, 5, &buf, &len), -EFBIG);
        unlink(path);
}

Test(fd, write_string_file_one_write_truncating_on_request)
{
        char dir[] = "/tmp/openenv-test-XXXXXX";
        cleanup_close int dfd = -EBADF;
        char *buf = NULL;

        cr_assert_not_null(mkdtemp(dir));
        dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        cr_assert_geq(dfd, 0);
        /* Existing files only (no O_CREAT), never through a symlink. */
        cr_assert_eq(write_string_file_at(dfd, "f", "max"), -ENOENT);
        cr_assert_eq(symlinkat("/dev/null", dfd, "link"), 0);
        cr_assert_eq(write_string_file_at(dfd, "link", "1"), -ELOOP);
        cr_assert_eq(write_string_file_full_at(dfd, "link", "1", WRITE_STRING_FILE_TRUNCATE),
                     -ELOOP);
        /* A regular file shows the open flags: written over in place, or
         * truncated first (what a fake cgroup tree needs). */
        cr_assert_eq(close(openat(dfd, "f", O_CREAT | O_WRONLY | O_CLOEXEC, 0644)), 0);
        cr_assert_eq(write_string_file_at(dfd, "f", "100000"), 0);
        cr_assert_eq(write_string_file_at(dfd, "f", "max"), 0);
        cr_assert_eq(read_full_file_at(dfd, "f", 100, &buf, NULL), 0);
        cr_assert_str_eq(buf, "max000");
        buf = mfree(buf);
        cr_assert_eq(write_string_file_full_at(dfd, "f", "max", WRITE_STRING_FILE_TRUNCATE), 0);
        cr_assert_eq(read_full_file_at(dfd, "f", 100, &buf, NULL), 0);
        cr_assert_str_eq(buf, "max");
        buf = mfree(buf);
        cr_assert_eq(rm_rf_at(AT_FDCWD, dir), 0);
}

Test(util, strv_join)
{
        char *v[] = { "uvicorn", "a:b", "--port", "8000", NULL };
        cleanup_free char *a = strv_join(v, " "), *b = strv_join(v + 4, " ");
        cleanup_free char *c = strv_join(NULL, ", ");
        cr_assert_str_eq(a, "uvicorn a:b --port 8000");
        cr_assert_str_eq(b, "");
        cr_assert_str_eq(c, "");
}

Test(util, env_set_replaces_in_place)
{
        cleanup_strv char **v = NULL;

        strv_env_set(&v, xstrdup("PATH=/bin"));
        strv_env_set(&v, xstrdup("PATHX=1"));
        strv_env_set(&v, xstrdup("HOME=/tmp"));
        /* The same key: replaced where it was, so it stays the first one
         * (getenv() and Python take the first of duplicates). */
        strv_env_set(&v, xstrdup("PATH=/app/.venv/bin:/bin"));
        strv_env_set(&v, xstrdup("EMPTY="));
        strv_env_set(&v, xstrdup("EMPTY=x"));
        cr_assert_eq(strv_length(v), 4);
        cr_assert_str_eq(v[0], "PATH=/app/.venv/bin:/bin");
        cr_assert_str_eq(v[1], "PATHX=1");
        cr_assert_str_eq(v[2], "HOME=/tmp");
        cr_assert_str_eq(v[3], "EMPTY=x");
}

Test(fd, path_searchable_by_others_names_the_blocker)
{
        char dir[] = "/tmp/openenv-test-XXXXXX";
        cleanup_free char *sub = NULL, *leaf = NULL, *file = NULL, *blocker = NULL;

        cr_assert_not_null(mkdtemp(dir));
        sub = xasprintf("%s/a", dir);
        leaf = xasprintf("%s/a/b", dir);
        file = xasprintf("%s/f", dir);
        cr_assert_eq(chmod(dir, 0755), 0);
        cr_assert_eq(mkdir(sub, 0755), 0);
        cr_assert_eq(mkdir(leaf, 0700), 0);
        cr_assert_eq(close(open(file, O_CREAT | O_WRONLY | O_CLOEXEC, 0644)), 0);

        cr_assert_eq(path_searchable_by_others(sub, NULL), 0);
        cr_assert_eq(path_searchable_by_others("/", NULL), 0);
        /* The path itself counts, not only its ancestors. */
        cr_assert_eq(path_searchable_by_others(leaf, &blocker), -EACCES);
        cr_assert_str_eq(blocker, leaf);
        blocker = mfree(blocker);
        cr_assert_eq(chmod(sub, 0750), 0);
        cr_assert_eq(path_searchable_by_others(leaf, &blocker), -EACCES);
        cr_assert_str_eq(blocker, sub);
        blocker = mfree(blocker);
        cr_assert_eq(path_searchable_by_others(file, &blocker), -ENOTDIR);
        blocker = mfree(blocker);
        cr_assert_eq(path_searchable_by_others("relative", NULL), -EINVAL);
        cr_assert_eq(rmdir(leaf), 0);
        cr_assert_eq(rmdir(sub), 0);
        cr_assert_eq(unlink(file), 0);
        cr_assert_eq(rmdir(dir), 0);
}

Test(sibling_binary, override_then_beside_us_then_the_install_location)
{
        char self[4096];
        ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
        cleanup_free char *beside = NULL, *missing = NULL, *forced = NULL;

        cr_assert_gt(n, 0);
        self[n] = '\0';
        /* This test binary is beside itself. */
        beside = sibling_binary_find(strrchr(self, '/') + 1, NULL);
        cr_assert_str_eq(beside, self);
        missing = sibling_binary_find("openenvd-no-such-helper", "OPENENVD_TEST_UNSET_VAR");
        cr_assert_str_eq(missing, "/usr/libexec/openenvd/openenvd-no-such-helper");
        cr_assert_eq(setenv("OPENENVD_TEST_HELPER", "/x/y", 1), 0);
        forced = sibling_binary_find("openenvd-no-such-helper", "OPENENVD_TEST_HELPER");
        cr_assert_str_eq(forced, "/x/y");
        cr_assert_eq(unsetenv("OPENENVD_TEST_HELPER"), 0);
}
