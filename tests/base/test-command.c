/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The one command runner (base/command.h): bounded capture, timeouts that
 * kill the whole group, cancellation, stdin; output to an fd, passed fds and
 * an environment of the caller's choosing (the OCI launcher's runtime
 * calls); PATH lookup.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/command.h"
#include "base/fd-util.h"
#include "base/parse-util.h"
#include "base/util.h"
#include "test-helpers.h"

Test(command, captures_bounded_output_and_status)
{
        struct command_output o;
        char *const argv[] = { "sh", "-c", "head -c 100000 /dev/zero; echo err >&2; exit 3", NULL };

        cr_assert_eq(command_run(&(struct command_spec){ .argv = argv,
                                                         .stdin_fd = -1,
                                                         .timeout = 10 * USEC_PER_SEC,
                                                         .max_out = 1000,
                                                         .cancel_fd = -1 },
                                 &o),
                     0);
        cr_assert_eq(o.exit_status, 3);
        cr_assert_eq(o.out_len, 1000);
        cr_assert(o.out_truncated);
        cr_assert_str_eq(o.err, "err\n");
        cr_assert_not(o.err_truncated);
        command_output_done(&o);
}

Test(command, timeout_kills_the_group)
{
        struct command_output o = {};
        char *const argv[] = { "sh", "-c", "sleep 30 & sleep 30", NULL };

        cr_assert_eq(command_run(&(struct command_spec){ .argv = argv,
                                                         .stdin_fd = -1,
                                                         .timeout = 200 * USEC_PER_MSEC,
                                                         .max_out = 1000,
                                                         .cancel_fd = -1 },
                                 &o),
                     -ETIMEDOUT);
}

Test(command, silence_beyond_the_idle_timeout_ends_it)
{
        struct command_output o = {};
        char *const stalls[] = { "sh", "-c", "echo started; exec sleep 30", NULL };
        char *const talks[] = { "sh", "-c", "for i in 1 2 3 4 5; do echo $i >&2; sleep 0.1; done",
                                NULL };

        /* A child that stops making progress (a stopped helper) ends early... */
        cr_assert_eq(command_run(&(struct command_spec){ .argv = stalls,
                                                         .stdin_fd = -1,
                                                         .timeout = 60 * USEC_PER_SEC,
                                                         .idle_timeout = 300 * USEC_PER_MSEC,
                                                         .max_out = 100,
                                                         .cancel_fd = -1 },
                                 &o),
                     -ETIME);
        /* ...one that keeps talking, on either pipe, does not. */
        cr_assert_eq(command_run(&(struct command_spec){ .argv = talks,
                                                         .stdin_fd = -1,
                                                         .timeout = 60 * USEC_PER_SEC,
                                                         .idle_timeout = 5 * USEC_PER_SEC,
                                                         .max_out = 100,
                                                         .cancel_fd = -1 },
                                 &o),
                     0);
        cr_assert_eq(o.exit_status, 0);
        cr_assert_str_eq(o.err, "1\n2\n3\n4\n5\n");
        command_output_done(&o);
}

Test(command, missing_binary_and_cancel)
{
        struct command_output o = {};
        char *const nope[] = { "/nonexistent/openenv-nope", NULL };
        char *const argv[] = { "sleep", "30", NULL };
        int p[2];

        cr_assert_eq(command_run(&(struct command_spec){ .argv = nope,
                                                         .stdin_fd = -1,
                                                         .timeout = USEC_PER_SEC,
                                                         .max_out = 100,
                                                         .cancel_fd = -1 },
                                 &o),
                     -ENOENT);
        cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
        cr_assert_eq(write(p[1], "x", 1), 1);
        cr_assert_eq(command_run(&(struct command_spec){ .argv = argv,
                                                         .stdin_fd = -1,
                                                         .timeout = 30 * USEC_PER_SEC,
                                                         .max_out = 100,
                                                         .cancel_fd = p[0] },
                                 &o),
                     -ECANCELED);
        close(p[0]);
        close(p[1]);
}

Test(command, stdin_is_passed)
{
        struct command_output o;
        char *const argv[] = { "cat", NULL };
        int fd = memfd_create("t", MFD_CLOEXEC);

        cr_assert_eq(write(fd, "hello", 5), 5);
        cr_assert_eq(lseek(fd, 0, SEEK_SET), 0);
        cr_assert_eq(command_run(&(struct command_spec){ .argv = argv,
                                                         .stdin_fd = fd,
                                                         .timeout = 5 * USEC_PER_SEC,
                                                         .max_out = 100,
                                                         .cancel_fd = -1 },
                                 &o),
                     0);
        cr_assert_str_eq(o.out, "hello");
        command_output_done(&o);
        close(fd);
}

Test(command, output_to_an_fd_with_passed_fds_and_an_environment)
{
        struct command_output o;
        char *const argv[] = { "sh", "-c", "echo \"$ONLY\"; cat <&3; echo err >&2; exit 7", NULL };
        char *const envp[] = { "ONLY=this", "PATH=/usr/bin:/bin", NULL };
        int out = memfd_create("out", MFD_CLOEXEC), in = memfd_create("in", MFD_CLOEXEC);
        cleanup_free char *text = NULL;

        cr_assert_geq(out, 0);
        cr_assert_eq(write(in, "passed\n", 7), 7);
        cr_assert_eq(lseek(in, 0, SEEK_SET), 0);
        cr_assert_eq(command_run(&(struct command_spec){ .argv = argv,
                                                         .envp = envp,
                                                         .stdin_fd = -1,
                                                         .pass_fds = &in,
                                                         .n_pass = 1,
                                                         .flags = COMMAND_OUTPUT_TO_FD,
                                                         .output_fd = out,
                                                         .cancel_fd = -1 },
                                 &o),
                     0);
        cr_assert_eq(o.exit_status, 7);
        cr_assert_eq(o.out_len, 0); /* nothing captured */
        cr_assert_eq(lseek(out, 0, SEEK_SET), 0);
        cr_assert_eq(read_full_fd(out, 4096, &text, NULL), 0);
        cr_assert_str_eq(text, "this\npassed\nerr\n");
        command_output_done(&o);
        close(out);
        close(in);
}

Test(command, timeout_without_pipes_kills_the_child)
{
        struct command_output o = {};
        char *const argv[] = { "sleep", "30", NULL };

        cr_assert_eq(command_run(&(struct command_spec){ .argv = argv,
                                                         .stdin_fd = -1,
                                                         .flags = COMMAND_OUTPUT_TO_FD,
                                                         .output_fd = -1,
                                                         .timeout = 200 * USEC_PER_MSEC,
                                                         .cancel_fd = -1 },
                                 &o),
                     -ETIMEDOUT);
}

Test(command, own_process_group_unless_inherited)
{
        struct command_output o;
        /* Field 5 of /proc/self/stat is the process group (the command
         * name in field 2 is "(cat)": no spaces). */
        char *const argv[] = { "sh", "-c", "cut -d' ' -f5 /proc/self/stat", NULL };
        int mine = (int) getpgrp(), theirs;
        cr_assert_eq(command_run(&(struct command_spec){ .argv = argv,
                                                         .stdin_fd = -1,
                                                         .timeout = 10 * USEC_PER_SEC,
                                                         .max_out = 100,
                                                         .cancel_fd = -1 },
                                 &o),
                     0);
        o.out[strcspn(o.out, "\n")] = '\0';
        cr_assert_eq(parse_int(o.out, 1, INT32_MAX, &theirs), 0, "%s", o.out);
        cr_assert_neq(theirs, mine);
        command_output_done(&o);
        cr_assert_eq(command_run(&(struct command_spec){ .argv = argv,
                                                         .stdin_fd = -1,
                                                         .flags = COMMAND_INHERIT_SIGNALS,
                                                         .timeout = 10 * USEC_PER_SEC,
                                                         .max_out = 100,
                                                         .cancel_fd = -1 },
                                 &o),
                     0);
        o.out[strcspn(o.out, "\n")] = '\0';
        cr_assert_eq(parse_int(o.out, 1, INT32_MAX, &theirs), 0, "%s", o.out);
        cr_assert_eq(theirs, mine);
        command_output_done(&o);
}

Test(command, path_lookup_skips_relative_entries)
{
        cleanup_free char *sh = NULL, *as_is = NULL, *rel = NULL;
        const char *saved = getenv("PATH");
        cleanup_free char *keep = saved ? xstrdup(saved) : NULL;

        cr_assert_eq(command_find_binary("sh", &sh), 0);
        cr_assert_eq(sh[0], '/');
        cr_assert_eq(command_find_binary("./x/y", &as_is), 0);
        cr_assert_str_eq(as_is, "./x/y");
        cr_assert_eq(setenv("PATH", "bin:.", 1), 0);
        cr_assert_eq(command_find_binary("sh", &rel), -ENOENT);
        if (keep)
                cr_assert_eq(setenv("PATH", keep, 1), 0);
        cr_assert_eq(command_find_binary("openenv-no-such-binary", &rel), -ENOENT);
}
