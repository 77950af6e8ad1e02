/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/strbuf.h"
#include "base/util.h"
#include "validate/command.h"

extern char **environ;

struct exec_report {
        int step; /* 1 dup2, 2 setpgid, 3 sigmask, 4 execve */
        int err;
};

/* PATH lookup before fork, so the child only calls async-signal-safe code. */
static int resolve_binary(const char *name, char **ret)
{
        const char *path = getenv("PATH");

        if (strchr(name, '/')) {
                *ret = xstrdup(name);
                return 0;
        }
        if (!path)
                path = "/usr/local/bin:/usr/bin:/bin";
        for (const char *p = path; *p;) {
                const char *c = strchr(p, ':');
                size_t n = c ? (size_t) (c - p) : strlen(p);
                if (n > 0) {
                        cleanup_free char *cand = xasprintf("%.*s/%s", (int) n, p, name);
                        if (access(cand, X_OK) == 0) {
                                *ret = TAKE_PTR(cand);
                                return 0;
                        }
                }
                if (!c)
                        break;
                p = c + 1;
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

int command_run(const struct command_spec *spec, struct command_output *ret)
{
        char *const *argv = spec->argv;
        int stdin_fd = spec->stdin_fd, cancel_fd = spec->cancel_fd;
        size_t max_out = spec->max_out;
        cleanup_free char *bin = NULL;
        cleanup_close int out_r = -EBADF, out_w = -EBADF, err_r = -EBADF, err_w = -EBADF;
        cleanup_close int rep_r = -EBADF, rep_w = -EBADF, null_fd = -EBADF;
        cleanup_strbuf struct strbuf out = STRBUF_INIT, err = STRBUF_INIT;
        bool out_trunc = false, err_trunc = false;
        struct exec_report rep;
        usec_t start = now_usec(CLOCK_MONOTONIC), deadline = start + spec->timeout;
        usec_t last_output = start;
        int fds[2], r = 0, status;
        pid_t pid;

        r = resolve_binary(argv[0], &bin);
        if (r < 0)
                return r;
        if (pipe2(fds, O_CLOEXEC) < 0)
                return negative_errno();
        out_r = fds[0], out_w = fds[1];
        if (pipe2(fds, O_CLOEXEC) < 0)
                return negative_errno();
        err_r = fds[0], err_w = fds[1];
        if (pipe2(fds, O_CLOEXEC) < 0)
                return negative_errno();
        rep_r = fds[0], rep_w = fds[1];
        if (stdin_fd < 0) {
                null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
                if (null_fd < 0)
                        return negative_errno();
                stdin_fd = null_fd;
        }

        pid = fork();
        if (pid < 0)
                return negative_errno();
        if (pid == 0) {
                sigset_t none;
                rep = (struct exec_report){ 1, 0 };
                /* dup2 clears O_CLOEXEC on the targets only. */
                if (dup2(stdin_fd, STDIN_FILENO) < 0 || dup2(out_w, STDOUT_FILENO) < 0 ||
                    dup2(err_w, STDERR_FILENO) < 0)
                        goto report;
                rep.step = 2;
                if (setpgid(0, 0) < 0)
                        goto report;
                rep.step = 3;
                sigemptyset(&none);
                if (sigprocmask(SIG_SETMASK, &none, NULL) < 0)
                        goto report;
                rep.step = 4;
                execve(bin, argv, environ);
        report:
                rep.err = errno;
                (void) !write(rep_w, &rep, sizeof(rep));
                _exit(127);
        }
        /* Drop our write ends (and disarm their cleanup) so that EOF on
         * each pipe means the child and everything it forked are done. */
        safe_close(TAKE_FD(out_w));
        safe_close(TAKE_FD(err_w));
        safe_close(TAKE_FD(rep_w));

        /* Drain both pipes until EOF, bounded in memory and time. */
        while (out_r >= 0 || err_r >= 0) {
                struct pollfd p[3] = {
                        { .fd = out_r, .events = POLLIN },
                        { .fd = err_r, .events = POLLIN },
                        { .fd = cancel_fd, .events = POLLIN },
                };
                usec_t now = now_usec(CLOCK_MONOTONIC), until = deadline;
                int ms, n;

                if (now >= deadline) {
                        r = -ETIMEDOUT;
                        break;
                }
                if (spec->idle_timeout > 0) {
                        if (now >= last_output + spec->idle_timeout) {
                                r = -ETIME;
                                break;
                        }
                        until = MIN(until, last_output + spec->idle_timeout);
                }
                ms = (int) MIN((until - now + 999) / 1000, (usec_t) 60000);
                n = poll(p, 3, ms);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0) {
                        r = negative_errno();
                        break;
                }
                if (cancel_fd >= 0 && (p[2].revents & POLLIN)) {
                        r = -ECANCELED;
                        break;
                }
                for (int i = 0; i < 2; i++) {
                        char buf[16384];
                        ssize_t k;
                        int *fd = i == 0 ? &out_r : &err_r;
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
                                keep(&out, &out_trunc, buf, (size_t) k, max_out);
                        else
                                keep(&err, &err_trunc, buf, (size_t) k, max_out);
                }
        }
        if (r < 0)
                /* The whole group: docker CLI plugins and helpers too. */
                (void) kill(-pid, SIGKILL), (void) kill(pid, SIGKILL);
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return r < 0 ? r : negative_errno();
        if (r < 0)
                return r;
        if (read(rep_r, &rep, sizeof(rep)) == (ssize_t) sizeof(rep))
                return rep.err > 0 ? -rep.err : -EIO;

        *ret = (struct command_output){
                .out_truncated = out_trunc,
                .err_truncated = err_trunc,
                .exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status),
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
