/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "base/child-job.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/util.h"

struct child_job {
        struct loop *loop;
        pid_t pid;
        int pidfd, out_fd; /* owned */
        struct loop_source *pid_src, *out_src, *timer;
        char *out;  /* owned: the frame's length, then CHILD_JOB_MAX_RESULT */
        size_t len; /* bytes read, the length included */
        bool out_eof, exited, killed, done;
        child_job_done_fn done_cb;
        void *userdata;
};

pid_t child_job_pid(const struct child_job *j)
{
        return j->exited ? 0 : j->pid;
}

/* The result's length as the child framed it, once read. */
static bool frame_length(const struct child_job *j, uint32_t *ret)
{
        if (j->len < sizeof(uint32_t))
                return false;
        memcpy(ret, j->out, sizeof(*ret));
        return true;
}

/* The whole frame is here: the child wrote all of its result, and nothing
 * but its _exit(0) follows. Done at once, not after its exit: tearing down
 * a copy of the daemon's address space takes the child longer than most
 * jobs (the reaping waits in child_job_free() or the pidfd's event). */
static bool result_whole(const struct child_job *j)
{
        uint32_t n;
        return frame_length(j, &n) && n <= CHILD_JOB_MAX_RESULT && j->len == sizeof(n) + n;
}

static void finish_if_complete(struct child_job *j)
{
        int result;

        if (j->done)
                return;
        if (result_whole(j))
                result = 0;
        else if (!j->exited || !j->out_eof)
                return;
        else if (j->killed)
                result = -ETIMEDOUT;
        else
                result = -ECHILD; /* died, or exited without its whole result */
        j->done = true;
        j->timer = loop_source_free(j->timer);
        j->done_cb(j->userdata, result, j->out + sizeof(uint32_t),
                   result == 0 ? j->len - sizeof(uint32_t) : 0);
}

static void reap(struct child_job *j)
{
        siginfo_t si = {};

        if (j->exited)
                return;
        if (waitid(P_PIDFD, (id_t) j->pidfd, &si, WEXITED | WNOHANG) < 0) {
                /* ECHILD: reaped by someone else (PID 1's reaper of
                 * orphans). It is over all the same: what it wrote says
                 * how it went (finish_if_complete()), and the job ends
                 * (and frees its pidfd) instead of waiting forever. */
                if (errno != ECHILD)
                        return;
        } else if (si.si_pid == 0) {
                return;
        }
        /* Its status adds nothing: only a whole result counts, and a child
         * that wrote one only _exit(0)s after. */
        j->exited = true;
        j->pid_src = loop_source_free(j->pid_src);
}

void child_job_poll(struct child_job *j)
{
        reap(j);
}

static int on_pid(struct loop_source *s, int fd, uint32_t revents, void *userdata)
{
        struct child_job *j = userdata;
        (void) s;
        (void) fd;
        (void) revents;
        reap(j);
        finish_if_complete(j);
        return 0;
}

static int on_out(struct loop_source *s, int fd, uint32_t revents, void *userdata)
{
        struct child_job *j = userdata;
        ssize_t n;

        (void) s;
        (void) revents;
        if (j->len >= sizeof(uint32_t) + CHILD_JOB_MAX_RESULT) {
                /* More than the contract allows: not a result (read as an
                 * end, never whole). */
                n = 0;
        } else
                n = read(fd, j->out + j->len, sizeof(uint32_t) + CHILD_JOB_MAX_RESULT - j->len);
        if (n > 0) {
                j->len += (size_t) n;
                finish_if_complete(j);
                return 0;
        }
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
                return 0;
        j->out_eof = true;
        j->out_src = loop_source_free(j->out_src);
        j->out_fd = safe_close(j->out_fd);
        finish_if_complete(j);
        return 0;
}

static int on_timeout(struct loop_source *s, usec_t now, void *userdata)
{
        struct child_job *j = userdata;
        (void) s;
        (void) now;
        if (!j->exited) {
                j->killed = true;
                (void) syscall(SYS_pidfd_send_signal, j->pidfd, SIGKILL, NULL, 0);
        }
        return 0;
}

static noreturn_fn void child_main(int out_fd, child_job_fn fn, void *arg)
{
        char *buf = malloc(sizeof(uint32_t) + CHILD_JOB_MAX_RESULT);
        uint32_t len;
        size_t n;

        /* A job never outlives the daemon that waits for it. */
        (void) prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
        if (!buf)
                _exit(1);
        /* Framed: its length first, so the parent knows it whole. */
        n = fn(arg, buf + sizeof(len), CHILD_JOB_MAX_RESULT);
        len = (uint32_t) MIN(n, (size_t) CHILD_JOB_MAX_RESULT);
        memcpy(buf, &len, sizeof(len));
        n = sizeof(len) + len;
        for (size_t off = 0; off < n;) {
                ssize_t w = write(out_fd, buf + off, n - off);
                if (w < 0) {
                        if (errno == EINTR)
                                continue;
                        _exit(1);
                }
                off += (size_t) w;
        }
        _exit(0);
}

int child_job_start(struct loop *l, child_job_fn fn, void *arg, usec_t timeout,
                    child_job_done_fn done, void *userdata, struct child_job **ret)
{
        cleanup(child_job_freep) struct child_job *j = xcalloc(1, sizeof(*j));
        int p[2], r;

        j->loop = l;
        j->pidfd = j->out_fd = -EBADF;
        j->done_cb = done;
        j->userdata = userdata;
        j->out = xmalloc(sizeof(uint32_t) + CHILD_JOB_MAX_RESULT);
        if (pipe2(p, O_CLOEXEC) < 0)
                return -errno;
        j->pid = fork();
        if (j->pid < 0) {
                r = -errno;
                safe_close(p[0]);
                safe_close(p[1]);
                return r;
        }
        if (j->pid == 0) {
                safe_close(p[0]);
                child_main(p[1], fn, arg);
        }
        safe_close(p[1]);
        j->out_fd = p[0];
        (void) fcntl(j->out_fd, F_SETFL, O_NONBLOCK);
        j->pidfd = pidfd_open(j->pid, 0);
        if (j->pidfd < 0) {
                r = -errno;
                (void) kill(j->pid, SIGKILL);
                (void) waitpid(j->pid, NULL, 0);
                j->exited = true;
                return r;
        }
        if ((r = loop_add_io(l, j->pidfd, EPOLLIN, on_pid, j, &j->pid_src)) < 0 ||
            (r = loop_add_io(l, j->out_fd, EPOLLIN, on_out, j, &j->out_src)) < 0)
                return r;
        (void) loop_add_timer(l, loop_now(l) + timeout, on_timeout, j, &j->timer);
        *ret = TAKE_PTR(j);
        return 0;
}

struct child_job *child_job_free(struct child_job *j)
{
        if (!j)
                return NULL;
        j->pid_src = loop_source_free(j->pid_src);
        j->out_src = loop_source_free(j->out_src);
        j->timer = loop_source_free(j->timer);
        if (j->pid > 0 && !j->exited && j->pidfd >= 0) {
                siginfo_t si;
                (void) syscall(SYS_pidfd_send_signal, j->pidfd, SIGKILL, NULL, 0);
                (void) waitid(P_PIDFD, (id_t) j->pidfd, &si, WEXITED);
        }
        safe_close(j->pidfd);
        safe_close(j->out_fd);
        free(j->out);
        return mfree(j);
}
