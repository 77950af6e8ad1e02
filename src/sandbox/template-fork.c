/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <jansson.h>

#include "base/fd-util.h"
#include "base/util.h"
#include "sandbox/template-fork.h"

/* One datagram, NUL-terminated, and the credentials if asked for. */
static ssize_t recv_word(int fd, char buf[static TEMPLATE_MSG_MAX + 1], struct ucred *ret_cred)
{
        char control[CMSG_SPACE(sizeof(struct ucred))] = {};
        struct iovec iov = { buf, TEMPLATE_MSG_MAX };
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
        if (ret_cred) {
                mh.msg_control = control;
                mh.msg_controllen = sizeof(control);
        }
        ssize_t n;
        do
                n = recvmsg(fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return errno == EWOULDBLOCK ? -EAGAIN : -errno;
        if (n == 0)
                return -ECONNRESET;
        /* No fd ever comes this way: the control buffer holds the
         * credentials and nothing more, so fds sent along are never
         * installed (the kernel sets MSG_CTRUNC), and the datagram is
         * refused. */
        if (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC))
                return -EPROTO;
        buf[n] = '\0';
        if (ret_cred) {
                struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
                if (!c || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_CREDENTIALS ||
                    c->cmsg_len != CMSG_LEN(sizeof(struct ucred)))
                        return -EPROTO;
                memcpy(ret_cred, CMSG_DATA(c), sizeof(*ret_cred));
        }
        return n;
}

/* A word that is not the one hoped for: -EPROTO, and what it says (after
 * prefix, else the whole word) in *ret_reason when given. */
static int refusal(const char *word, const char *prefix, char **ret_reason)
{
        if (ret_reason)
                *ret_reason = xstrdup(startswith(word, prefix) ?: word);
        return -EPROTO;
}

int template_read_warm(int ctl_fd, char **ret_reason)
{
        char buf[TEMPLATE_MSG_MAX + 1];
        ssize_t n = recv_word(ctl_fd, buf, NULL);
        if (n < 0)
                return (int) n;
        return streq(buf, "warm") ? 0 : refusal(buf, "fail ", ret_reason);
}

int template_fork_send(int ctl_fd, const struct template_fork_request *q, int *ret_go)
{
        int pair[2];
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) < 0)
                return -errno;
        cleanup_close int ours = pair[0], theirs = pair[1];
        int one = 1;
        if (setsockopt(ours, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) < 0)
                return -errno;
        json_t *j = json_pack("{s:s,s:I,s:I,s:s,s:I,s:I}", "op", "fork", "uid", (json_int_t) q->uid,
                              "gid", (json_int_t) q->gid, "cwd", q->cwd ? q->cwd : "/", "nofile",
                              (json_int_t) q->nofile, "nproc", (json_int_t) q->nproc);
        if (!j)
                return -ENOMEM;
        if (q->env) {
                json_t *env = json_array();
                for (char *const *e = q->env; *e; e++)
                        json_array_append_new(env, json_string(*e));
                json_object_set_new(j, "env", env);
        }
        cleanup_free char *text = json_dumps(j, JSON_COMPACT);
        json_decref(j);
        if (!text || strlen(text) > TEMPLATE_REQUEST_MAX)
                return -E2BIG;

        int fds[4] = { q->landing_pidfd, q->adopt_w, q->stdio_fd, theirs };
        char control[CMSG_SPACE(sizeof(fds))] = {};
        struct iovec iov = { text, strlen(text) };
        struct msghdr mh = { .msg_iov = &iov,
                             .msg_iovlen = 1,
                             .msg_control = control,
                             .msg_controllen = sizeof(control) };
        struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(fds));
        memcpy(CMSG_DATA(c), fds, sizeof(fds));
        ssize_t n;
        do
                n = sendmsg(ctl_fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return -errno;
        /* Ours only: the copy blocks on its end until "go". */
        int fl = fcntl(ours, F_GETFL);
        if (fl < 0 || fcntl(ours, F_SETFL, fl | O_NONBLOCK) < 0)
                return -errno;
        *ret_go = TAKE_FD(ours);
        return 0;
}

int template_read_reply(int ctl_fd, char **ret_reason)
{
        char buf[TEMPLATE_MSG_MAX + 1];
        ssize_t n = recv_word(ctl_fd, buf, NULL);
        if (n < 0)
                return (int) n;
        return startswith(buf, "forked ") ? 0 : refusal(buf, "error ", ret_reason);
}

int template_copy_hello(int go_fd, pid_t *ret_pid, char **ret_reason)
{
        char buf[TEMPLATE_MSG_MAX + 1];
        struct ucred cred = {};
        ssize_t n = recv_word(go_fd, buf, &cred);
        if (n < 0)
                return (int) n;
        if (!streq(buf, "hello") || cred.pid <= 0) {
                if (ret_reason && startswith(buf, "fail "))
                        *ret_reason = xstrdup(buf + 5);
                return -EPROTO;
        }
        *ret_pid = cred.pid;
        return 0;
}

int template_copy_go(int go_fd)
{
        ssize_t n = send(go_fd, "go", 2, MSG_NOSIGNAL | MSG_DONTWAIT);
        return n == 2 ? 0 : n < 0 ? -errno : -EIO;
}
