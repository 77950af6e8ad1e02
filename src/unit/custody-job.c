/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * An episode's custody copies (custody.h), each in a child job
 * (child-job.h): the copier walks what a less trusted party made, so it
 * never runs in the daemon's loop. Used by grading.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "base/fd-util.h"
#include "base/util.h"
#include "unit/custody.h"
#include "unit/episode-backend.h"
#include "unit/episode-internal.h"

struct custody_job_args {
        int src_fd, dst_fd; /* the parent closes its copies once the child runs */
        const char *dst_name;
        struct custody_options opts;
        /* The workspace copy: its tmpfs is replaced by a fresh one first, in
         * the child (freeing an earlier copy's pages takes the unmounting
         * task hundreds of milliseconds), and dst_path opened after. */
        const struct unit_plan_context *fresh_copy;
        int (*reset_copy)(const struct unit_plan_context *ctx); /* the backend's */
        const char *dst_path;
};

/* In the child. Result: custody_report_format()'s. */
static size_t custody_job_run(void *arg, char *out, size_t size)
{
        struct custody_job_args *a = arg;
        struct custody_error err = { .owner = -1 };
        int r = 0;

        if (a->fresh_copy) {
                r = a->reset_copy(a->fresh_copy);
                if (r >= 0) {
                        a->dst_fd =
                                open(a->dst_path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                        r = a->dst_fd < 0 ? -errno : 0;
                }
                if (r < 0) {
                        err.reason = CUSTODY_ERR_IO;
                        error_detail_set(&err.detail, r, ".: the copy's storage: %s", strerror(-r));
                        size_t n = custody_report_format(r, &err, out, size);
                        custody_error_done(&err);
                        return n;
                }
        }
        r = custody_copy(a->src_fd, NULL, a->dst_fd, a->dst_name, &a->opts, NULL, &err);
        size_t n = custody_report_format(r, &err, out, size);
        custody_error_done(&err);
        return n;
}

/* The copier's outcome: its report, or the daemon's failure to get one (a
 * dead or timed-out copier, a report that does not parse). Whatever the
 * agent named or nested, the report fits (CUSTODY_REPORT_MAX_REL is far
 * below CHILD_JOB_MAX_RESULT): a garbled one is the daemon's own bug. */
struct custody_report custody_outcome(int result, const char *out, size_t len)
{
        struct custody_report o;

        if (result >= 0 && custody_report_parse(out, len, &o) >= 0)
                return o;
        o = (struct custody_report){ .r = result < 0 ? result : -EBADMSG,
                                     .reason = CUSTODY_ERR_IO,
                                     .owner = -1 };
        o.message = xstrdup(result == -ETIMEDOUT ? "the copier timed out"
                            : result < 0         ? "the copier failed"
                                                 : "the copier's result is garbled");
        return o;
}

/* Opens the two dirs (the destination in the child, for a fresh
 * workspace copy), forks the copier, closes our copies of the fds. */
int start_custody(struct episode *e, const char *src, const char *dst_parent, const char *dst_name,
                  uint64_t max_bytes, bool fresh_copy,
                  void (*then)(struct episode *e, int result, const char *out, size_t len))
{
        struct custody_job_args a = {
                .src_fd = open(src, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC),
                .dst_fd = fresh_copy ? -EBADF
                                     : open(dst_parent,
                                            O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC),
                .dst_name = dst_name,
                .opts = { .limits = { .max_bytes = max_bytes } },
                .fresh_copy = fresh_copy ? &e->plan : NULL,
                .reset_copy = episode_backend_of(e->cfg)->storage_reset_workspace_copy,
                .dst_path = dst_parent,
        };
        int r = a.src_fd < 0 || (!fresh_copy && a.dst_fd < 0) ? -errno : 0;

        /* The child gets a copy of a (fork): it need not outlive this call. */
        if (r >= 0)
                r = episode_job(e, custody_job_run, &a, EPISODE_JOB_TIMEOUT, then);
        safe_close(a.src_fd);
        safe_close(a.dst_fd);
        return r;
}
