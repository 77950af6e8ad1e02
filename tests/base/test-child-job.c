/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * child_job (base/child-job.h): a result comes back; a child that a
 * process-wide reaper took before the job could (PID 1 reaping orphans
 * without asking child_job_pid() first) still ends the job, as a failure,
 * instead of leaving it waiting with its pidfd open for ever.
 */
#include <errno.h>
#include <string.h>
#include <sys/wait.h>

#include <criterion/criterion.h>

#include "base/child-job.h"
#include "base/time-util.h"

struct outcome {
        struct loop *loop;
        bool done;
        int result;
        char out[32];
};

static size_t say_hello(void *arg, char *out, size_t size)
{
        (void) arg;
        size_t n = strlen("hello");
        memcpy(out, "hello", n < size ? n : size);
        return n < size ? n : size;
}

static void record(void *userdata, int result, const char *out, size_t len)
{
        struct outcome *o = userdata;
        o->done = true;
        o->result = result;
        memcpy(o->out, out, len < sizeof(o->out) - 1 ? len : sizeof(o->out) - 1);
        loop_quit(o->loop, 0);
}

static void run_until_done(struct outcome *o)
{
        for (int i = 0; i < 100 && !o->done; i++)
                cr_assert(loop_run_once(o->loop, 100 * USEC_PER_MSEC) >= 0);
}

Test(child_job, result_comes_back)
{
        struct outcome o = {};
        struct child_job *j = NULL;

        cr_assert(loop_new(&o.loop) == 0);
        cr_assert(child_job_start(o.loop, say_hello, NULL, 10 * USEC_PER_SEC, record, &o, &j) == 0);
        run_until_done(&o);
        cr_assert(o.done);
        cr_expect_eq(o.result, 0);
        cr_expect_str_eq(o.out, "hello");
        child_job_free(j);
        loop_free(o.loop);
}

Test(child_job, reaped_elsewhere_still_ends)
{
        struct outcome o = {};
        struct child_job *j = NULL;
        int status;

        cr_assert(loop_new(&o.loop) == 0);
        cr_assert(child_job_start(o.loop, say_hello, NULL, 10 * USEC_PER_SEC, record, &o, &j) == 0);
        /* Someone else reaps it before the loop looks. */
        cr_assert(waitpid(child_job_pid(j), &status, 0) == child_job_pid(j));
        run_until_done(&o);
        cr_assert(o.done, "the job never ended: its pidfd stays open");
        cr_expect_eq(o.result, -ECHILD);
        cr_expect_eq(child_job_pid(j), 0);
        child_job_free(j);
        loop_free(o.loop);
}
