/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The cgroup view's mount namespace (sandbox/cgroup-view-ns.h) and the
 * command runner's way into it (COMMAND_ENTER_MOUNT_NS), on the real kernel
 * as root: what a runtime run in it can see and change below /sys/fs/cgroup,
 * and that nothing of it reaches our own namespace.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/command.h"
#include "base/dir-walk.h"
#include "base/fd-util.h"
#include "base/util.h"
#include "sandbox/cgroup-view-ns.h"
#include "test-helpers.h"

static char tmp[64];
static int dir_a = -EBADF, dir_b = -EBADF;

static void setup(void)
{
        cleanup_free char *a = NULL, *b = NULL;

        snprintf(tmp, sizeof(tmp), "/tmp/cgroup-view-XXXXXX");
        cr_assert_not_null(mkdtemp(tmp));
        a = xasprintf("%s/a", tmp);
        b = xasprintf("%s/b", tmp);
        cr_assert_eq(mkdir(a, 0755), 0);
        cr_assert_eq(mkdir(b, 0755), 0);
        dir_a = open(a, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        dir_b = open(b, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        cr_assert(dir_a >= 0 && dir_b >= 0);
        {
                cleanup_close int fd =
                        openat(dir_a, "marker", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
                cr_assert_eq(write(fd, "in a\n", 5), 5);
        }
}

static void teardown(void)
{
        dir_a = safe_close(dir_a);
        dir_b = safe_close(dir_b);
        (void) rm_rf_at(AT_FDCWD, tmp);
}

TestSuite(cgroup_view_ns, .init = setup, .fini = teardown, .timeout = 60);

/* sh -c script, in the namespace; returns its stdout (exit status in *st). */
static char *run_in(int ns, const char *script, int *st)
{
        char *const argv[] = { "/bin/sh", "-c", (char *) script, NULL };
        struct command_output o;
        int r = command_run(&(struct command_spec){ .argv = argv,
                                                    .stdin_fd = -EBADF,
                                                    .flags = COMMAND_ENTER_MOUNT_NS,
                                                    .mount_ns_fd = ns,
                                                    .timeout = 20 * USEC_PER_SEC,
                                                    .max_out = 4096,
                                                    .cancel_fd = -EBADF },
                            &o);
        cr_assert_eq(r, 0, "command_run: %s", strerror(-r));
        *st = o.exit_status;
        free(o.err);
        return o.out;
}

static size_t count_entries(const char *dir)
{
        cleanup_strv char **names = NULL;
        cleanup_close int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        cr_assert_geq(fd, 0);
        cr_assert_eq(dir_list_names(fd, false, &names), 0);
        return strv_length(names);
}

Test(cgroup_view_ns, holds_exactly_the_view_and_no_cgroup_mount)
{
        struct cgroup_view v = { .names = { "memory", "unified" },
                                 .fds = { dir_a, dir_b },
                                 .n = 2 };
        size_t host_before = count_entries(CGROUP_VIEW_NS_ROOT);
        cleanup_close int ns = -EBADF;
        cleanup_free char *out = NULL, *made = NULL;
        int st;

        cr_assert_eq(cgroup_view_ns_create(&v, &ns), 0);
        /* Only the view; a file of dir a; the tmpfs refuses a new entry; and
         * no cgroup file system left in mountinfo, where a runtime looks for
         * controllers (a covered host mount would still be listed there). */
        out = run_in(ns,
                     "ls /sys/fs/cgroup; cat /sys/fs/cgroup/memory/marker; "
                     "mkdir /sys/fs/cgroup/cpuset 2>/dev/null && echo WRITABLE; "
                     "touch /sys/fs/cgroup/unified/made; "
                     "grep -c ' - cgroup2\\? ' /proc/self/mountinfo",
                     &st);
        cr_expect_str_eq(out, "memory\nunified\nin a\n0\n");
        made = xasprintf("%s/b/made", tmp);
        cr_expect_eq(access(made, F_OK), 0, "a write in the view lands in the view's directory");
        /* Our namespace never saw any of it. */
        cr_expect_eq(count_entries(CGROUP_VIEW_NS_ROOT), host_before);
}

Test(cgroup_view_ns, each_run_enters_the_same_namespace)
{
        struct cgroup_view v = { .names = { "pids" }, .fds = { dir_a }, .n = 1 };
        cleanup_close int ns = -EBADF;
        cleanup_free char *one = NULL, *two = NULL;
        char mine[64] = "";
        int st;

        cr_assert_eq(cgroup_view_ns_create(&v, &ns), 0);
        one = run_in(ns, "readlink /proc/self/ns/mnt", &st);
        two = run_in(ns, "readlink /proc/self/ns/mnt", &st);
        cr_assert_gt(readlink("/proc/self/ns/mnt", mine, sizeof(mine) - 1), 0);
        cr_expect_str_eq(one, two);
        cr_expect(strncmp(one, mine, strlen(mine)) != 0, "ran in our own namespace: %s", one);
}

Test(cgroup_view_ns, exec_failure_is_the_errno_and_bad_views_refused)
{
        struct cgroup_view v = { .names = { "memory" }, .fds = { dir_a }, .n = 1 };
        char *const argv[] = { "/nonexistent/runtime", NULL };
        cleanup_close int ns = -EBADF;
        struct command_output o;
        int fd = -EBADF;

        cr_assert_eq(cgroup_view_ns_create(&v, &ns), 0);
        cr_expect_eq(command_run(&(struct command_spec){ .argv = argv,
                                                         .stdin_fd = -EBADF,
                                                         .flags = COMMAND_ENTER_MOUNT_NS,
                                                         .mount_ns_fd = ns,
                                                         .cancel_fd = -EBADF },
                                 &o),
                     -ENOENT);
        v.names[0] = "a/b";
        cr_expect_eq(cgroup_view_ns_create(&v, &fd), -EINVAL);
        v.names[0] = "memory";
        v.n = 0;
        cr_expect_eq(cgroup_view_ns_create(&v, &fd), -EINVAL);
        cr_expect_eq(fd, -EBADF);
}
