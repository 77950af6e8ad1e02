/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * child_job (base/child-job.h): a result comes back; a child that a
 * process-wide reaper took before the job could (PID 1 reaping orphans
 * without asking child_job_pid() first) still ends the job, as a failure,
 * instead of leaving it waiting with its pidfd open for ever.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
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

static size_t die(void *arg, char *out, size_t size)
{
        (void) arg;
        (void) out;
        (void) size;
        (void) raise(SIGKILL);
        return 0;
}

/* Someone else reaps the child before the loop looks: a whole result still
 * counts (it is framed: nothing but the exit followed it), a child that died
 * without one ends the job as a failure. */
static void reaped_elsewhere(child_job_fn fn, int expected)
{
        struct outcome o = {};
        struct child_job *j = NULL;
        int status;

        cr_assert(loop_new(&o.loop) == 0);
        cr_assert(child_job_start(o.loop, fn, NULL, 10 * USEC_PER_SEC, record, &o, &j) == 0);
        cr_assert(waitpid(child_job_pid(j), &status, 0) == child_job_pid(j));
        run_until_done(&o);
        cr_assert(o.done, "the job never ended: its pidfd stays open");
        cr_expect_eq(o.result, expected);
        if (expected == 0)
                cr_expect_str_eq(o.out, "hello");
        child_job_free(j);
        loop_free(o.loop);
}

Test(child_job, reaped_elsewhere_still_ends)
{
        reaped_elsewhere(say_hello, 0);
        reaped_elsewhere(die, -ECHILD);
}

static size_t fill(void *arg, char *out, size_t size)
{
        (void) arg;
        memset(out, 'x', size);
        return size;
}

static void record_len(void *userdata, int result, const char *out, size_t len)
{
        struct outcome *o = userdata;
        (void) out;
        o->done = true;
        o->result = result == 0 ? (int) len : result;
}

static size_t count_run(void *arg, char *out, size_t size)
{
        (*(int *) arg)++;
        return say_hello(NULL, out, size);
}

/* The function runs once in the child, whatever its result. */
Test(child_job, runs_once)
{
        struct outcome o = {};
        struct child_job *j = NULL;
        int *runs =
                mmap(NULL, sizeof(int), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

        cr_assert(runs != MAP_FAILED);
        cr_assert(loop_new(&o.loop) == 0);
        cr_assert(child_job_start(o.loop, count_run, runs, 10 * USEC_PER_SEC, record, &o, &j) == 0);
        run_until_done(&o);
        child_job_free(j); /* reaped: its runs are all counted */
        cr_expect_eq(*runs, 1);
        cr_expect_eq(o.result, 0);
        munmap(runs, sizeof(int));
        loop_free(o.loop);
}

/* The largest result the contract allows comes back whole. */
Test(child_job, a_full_result_comes_back)
{
        struct outcome o = {};
        struct child_job *j = NULL;

        cr_assert(loop_new(&o.loop) == 0);
        cr_assert(child_job_start(o.loop, fill, NULL, 10 * USEC_PER_SEC, record_len, &o, &j) == 0);
        run_until_done(&o);
        cr_expect_eq(o.result, (int) CHILD_JOB_MAX_RESULT);
        child_job_free(j);
        loop_free(o.loop);
}
