/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "base/command.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/exit-code.h"
#include "base/fd-util.h"
#include "base/strbuf.h"
#include "base/util.h"

extern char **environ;

int command_find_binary(const char *name, char **ret)
{
        const char *path = getenv("PATH");

        if (strchr(name, '/')) {
                *ret = xstrdup(name);
                return 0;
        }
        if (!*name)
                return -ENOENT;
        if (!path || !*path)
                path = COMMAND_DEFAULT_PATH;
        for (const char *p = path; *p;) {
                size_t n = strcspn(p, ":");
                /* A relative entry would depend on our working directory. */
                if (n > 0 && p[0] == '/') {
                        cleanup_free char *cand = xasprintf("%.*s/%s", (int) n, p, name);
                        if (access(cand, X_OK) == 0) {
                                *ret = TAKE_PTR(cand);
                                return 0;
                        }
                }
                p += n;
                if (*p == ':')
                        p++;
        }
        return -ENOENT;
}

static void keep(struct strbuf *sb, bool *truncated, const char *buf, size_t n, size_t max)
{
        size_t room = sb->len < max ? max - sb->len : 0;
        if (n > room) {
                *truncated = true;
                n = room;
        }
        strbuf_add(sb, buf, n);
}

/* The child's fds, in order: stdin, stdout, stderr, then the passed ones. */
struct child_fds {
        int *fds; /* owned: n copies, each above every target number */
        size_t n;
};

static void child_fds_done(struct child_fds *c)
{
        for (size_t i = 0; i < c->n; i++)
                safe_close(c->fds[i]);
        free(c->fds);
        *c = (struct child_fds){};
}

/* Duplicates every source above the highest target first, so that no
 * dup2() below clobbers a source it still needs (a caller's fd 1 as the
 * child's stdin, a pipe end that happens to be fd 0...). */
static int child_fds_init(struct child_fds *ret, int in, int out, int err, const int *pass,
                          size_t n_pass)
{
        size_t n = 3 + n_pass;
        cleanup_free int *src = xcalloc(n, sizeof(int));
        int *dst = xcalloc(n, sizeof(int));
        int r;

        src[0] = in, src[1] = out, src[2] = err;
        for (size_t i = 0; i < n_pass; i++)
                src[3 + i] = pass[i];
        r = fds_dup_above(src, n, (int) n, dst);
        if (r < 0) {
                free(dst);
                return r;
        }
        *ret = (struct child_fds){ .fds = dst, .n = n };
        return 0;
}

static int spawn(const struct command_spec *spec, const char *bin, const struct child_fds *fds,
                 pid_t *ret)
{
        posix_spawn_file_actions_t fa;
        posix_spawnattr_t attr;
        sigset_t none;
        int r;

        r = posix_spawn_file_actions_init(&fa);
        if (r != 0)
                return -r;
        r = posix_spawnattr_init(&attr);
        if (r != 0) {
                posix_spawn_file_actions_destroy(&fa);
                return -r;
        }
        /* dup2 clears O_CLOEXEC on the targets only. */
        for (size_t i = 0; r == 0 && i < fds->n; i++)
                r = posix_spawn_file_actions_adddup2(&fa, fds->fds[i], (int) i);
        if (r == 0 && !(spec->flags & COMMAND_INHERIT_SIGNALS)) {
                sigemptyset(&none);
                r = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK);
                if (r == 0)
                        r = posix_spawnattr_setpgroup(&attr, 0);
                if (r == 0)
                        r = posix_spawnattr_setsigmask(&attr, &none);
        }
        if (r == 0)
                r = posix_spawn(ret, bin, &fa, &attr, spec->argv,
                                spec->envp ? spec->envp : environ);
        posix_spawnattr_destroy(&attr);
        posix_spawn_file_actions_destroy(&fa);
        /* posix_spawn*() return a positive error number. */
        return r > 0 ? -r : r == 0 ? 0 : -EIO;
}

/*
 * posix_spawn() cannot enter a namespace: fork, setns(), then the same fd
 * and signal set-up as above, and the exec. Only system calls run in the
 * child. A failure before or at the exec reaches us through a close-on-exec
 * pipe, as posix_spawn() reports it: the child is reaped and the errno
 * returned.
 */
static int spawn_in_mount_ns(const struct command_spec *spec, const char *bin,
                             const struct child_fds *fds, pid_t *ret)
{
        cleanup_close int rd = -EBADF, wr = -EBADF;
        int p[2], child_errno = 0;
        ssize_t n;
        pid_t pid;

        if (pipe2(p, O_CLOEXEC) < 0)
                return negative_errno();
        rd = p[0], wr = p[1];
        pid = fork();
        if (pid < 0)
                return negative_errno();
        if (pid == 0) {
                sigset_t none;

                if (setns(spec->mount_ns_fd, CLONE_NEWNS) < 0)
                        goto fail;
                for (size_t i = 0; i < fds->n; i++)
                        if (dup2(fds->fds[i], (int) i) < 0)
                                goto fail;
                if (!(spec->flags & COMMAND_INHERIT_SIGNALS)) {
                        sigemptyset(&none);
                        if (setpgid(0, 0) < 0 || sigprocmask(SIG_SETMASK, &none, NULL) < 0)
                                goto fail;
                }
                execve(bin, spec->argv, spec->envp ? spec->envp : environ);
        fail:
                child_errno = errno;
                (void) !write(wr, &child_errno, sizeof(child_errno));
                _exit(127); /* never seen: the pipe carries the errno */
        }
        safe_close(TAKE_FD(wr));
        do
                n = read(rd, &child_errno, sizeof(child_errno));
        while (n < 0 && errno == EINTR);
        if (n == 0) { /* EOF: the exec closed the pipe */
                *ret = pid;
                return 0;
        }
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
                ;
        return n == sizeof(child_errno) && child_errno > 0 ? -child_errno : -EIO;
}

/* ms to wait in poll() until `until` (> now; USEC_INFINITY is fine), capped
 * at a minute so that the deadline is re-read now and then. */
static int poll_ms(usec_t now, usec_t until)
{
        usec_t left = until - now;

        return left >= 60000 * USEC_PER_MSEC ? 60000 : (int) ((left + 999) / 1000);
}

/* Captures both pipes until EOF (the child and everything it forked closed
 * them), bounded in memory and time. */
static int drain(const struct command_spec *spec, int *out_r, int *err_r, usec_t deadline,
                 struct strbuf *out, bool *out_trunc, struct strbuf *err, bool *err_trunc)
{
        usec_t last_output = now_usec(CLOCK_MONOTONIC);

        while (*out_r >= 0 || *err_r >= 0) {
                struct pollfd p[3] = {
                        { .fd = *out_r, .events = POLLIN },
                        { .fd = *err_r, .events = POLLIN },
                        { .fd = spec->cancel_fd, .events = POLLIN },
                };
                usec_t now = now_usec(CLOCK_MONOTONIC), until = deadline;
                int n;

                if (now >= deadline)
                        return -ETIMEDOUT;
                if (spec->idle_timeout > 0) {
                        if (now >= last_output + spec->idle_timeout)
                                return -ETIME;
                        until = MIN(until, last_output + spec->idle_timeout);
                }
                n = poll(p, 3, poll_ms(now, until));
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return negative_errno();
                if (spec->cancel_fd >= 0 && (p[2].revents & POLLIN))
                        return -ECANCELED;
                for (int i = 0; i < 2; i++) {
                        char buf[16384];
                        ssize_t k;
                        int *fd = i == 0 ? out_r : err_r;
                        if (*fd < 0 || !(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
                                continue;
                        k = read(*fd, buf, sizeof(buf));
                        if (k < 0 && (errno == EINTR || errno == EAGAIN))
                                continue;
                        if (k <= 0) {
                                *fd = safe_close(*fd);
                                continue;
                        }
                        last_output = now_usec(CLOCK_MONOTONIC);
                        if (i == 0)
                                keep(out, out_trunc, buf, (size_t) k, spec->max_out);
                        else
                                keep(err, err_trunc, buf, (size_t) k, spec->max_out);
                }
        }
        return 0;
}

/* Output goes elsewhere: the run ends when the child exits (its pidfd
 * turns readable), the deadline passes or cancel_fd is readable. */
static int await_exit(const struct command_spec *spec, pid_t pid, usec_t deadline)
{
        cleanup_close int pidfd = -EBADF;

        if (deadline == USEC_INFINITY && spec->cancel_fd < 0)
                return 0; /* waitpid() below blocks */
        pidfd = pidfd_open(pid, 0);
        if (pidfd < 0)
                return negative_errno();
        for (;;) {
                struct pollfd p[2] = {
                        { .fd = pidfd, .events = POLLIN },
                        { .fd = spec->cancel_fd, .events = POLLIN },
                };
                usec_t now = now_usec(CLOCK_MONOTONIC);
                int n;

                if (now >= deadline)
                        return -ETIMEDOUT;
                n = poll(p, 2, poll_ms(now, deadline));
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return negative_errno();
                if (spec->cancel_fd >= 0 && (p[1].revents & POLLIN))
                        return -ECANCELED;
                if (p[0].revents & POLLIN)
                        return 0;
        }
}

int command_run(const struct command_spec *spec, struct command_output *ret)
{
        bool capture = !(spec->flags & COMMAND_OUTPUT_TO_FD);
        cleanup_free char *bin = NULL;
        cleanup_close int out_r = -EBADF, out_w = -EBADF, err_r = -EBADF, err_w = -EBADF;
        cleanup_close int null_fd = -EBADF;
        cleanup_strbuf struct strbuf out = STRBUF_INIT, err = STRBUF_INIT;
        struct child_fds fds = {};
        bool out_trunc = false, err_trunc = false;
        usec_t deadline =
                spec->timeout > 0 ? now_usec(CLOCK_MONOTONIC) + spec->timeout : USEC_INFINITY;
        int stdin_fd = spec->stdin_fd, output_fd = spec->output_fd, p[2], r, status;
        pid_t pid = 0;

        /* posix_spawn() takes the path as given: look it up first. */
        r = command_find_binary(spec->argv[0], &bin);
        if (r < 0)
                return r;
        if (stdin_fd < 0 || (!capture && output_fd < 0)) {
                null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
                if (null_fd < 0)
                        return negative_errno();
                if (stdin_fd < 0)
                        stdin_fd = null_fd;
                if (output_fd < 0)
                        output_fd = null_fd;
        }
        if (capture) {
                if (pipe2(p, O_CLOEXEC) < 0)
                        return negative_errno();
                out_r = p[0], out_w = p[1];
                if (pipe2(p, O_CLOEXEC) < 0)
                        return negative_errno();
                err_r = p[0], err_w = p[1];
        }
        r = child_fds_init(&fds, stdin_fd, capture ? out_w : output_fd, capture ? err_w : output_fd,
                           spec->pass_fds, spec->n_pass);
        if (r < 0)
                return r;
        r = spec->flags & COMMAND_ENTER_MOUNT_NS ? spawn_in_mount_ns(spec, bin, &fds, &pid)
                                                 : spawn(spec, bin, &fds, &pid);
        child_fds_done(&fds);
        if (r < 0)
                return r;
        if (pid <= 0) /* never: posix_spawn() succeeded; but a kill(-pid) must not be kill(0) */
                return -ECHILD;
        /* Drop our write ends (and disarm their cleanup) so that EOF on
         * each pipe means the child and everything it forked are done. */
        safe_close(TAKE_FD(out_w));
        safe_close(TAKE_FD(err_w));

        r = capture ? drain(spec, &out_r, &err_r, deadline, &out, &out_trunc, &err, &err_trunc)
                    : await_exit(spec, pid, deadline);
        if (r < 0) {
                /* The whole group: docker CLI plugins and helpers too. */
                if (!(spec->flags & COMMAND_INHERIT_SIGNALS))
                        (void) kill(-pid, SIGKILL);
                (void) kill(pid, SIGKILL);
        }
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return r < 0 ? r : negative_errno();
        if (r < 0)
                return r;

        *ret = (struct command_output){
                .out_truncated = out_trunc,
                .err_truncated = err_trunc,
                .exit_status = exit_status_from_wait(status),
        };
        ret->out = strbuf_detach(&out, &ret->out_len);
        ret->err = strbuf_detach(&err, &ret->err_len);
        return 0;
}

void command_output_done(struct command_output *o)
{
        free(o->out);
        free(o->err);
        *o = (struct command_output){};
}
