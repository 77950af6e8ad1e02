/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The daemon's side of a template's control socket (fork-speed episodes,
 * docs/SANDBOX.md, "Templates"). The template (python/openenvd_template.py)
 * runs as the principal of a template container (container_spec
 * template_root) with one end of a SOCK_SEQPACKET socket pair; it says
 * "warm" once the app is imported, then forks one copy per request into a
 * container nested in it (container_spec nest + adopt). Each copy gets a
 * socket pair of its own: it says "hello" there (its host pid comes from
 * the kernel's credentials, not from its words), the daemon puts it in the
 * container's cgroups and says "go"; only then does it drop to the
 * principal's uid, load the syscall filter and fork the server the
 * container's shim adopts.
 *
 * Every message is one datagram of at most TEMPLATE_MSG_MAX bytes; what
 * the template or a copy says is never trusted beyond its shape.
 */
#include <stdint.h>
#include <sys/types.h>

#define TEMPLATE_MSG_MAX 512
/* A fork request (it carries the copy's environment): the template reads
 * up to this much. */
#define TEMPLATE_REQUEST_MAX 65536

struct template_fork_request {
        int landing_pidfd; /* the nested container's PID 1 (its shim) */
        int adopt_w;       /* write end of the pipe its shim reads the pid from */
        int stdio_fd;      /* the copy's stdout and stderr */
        uid_t uid;         /* the principal, inside the nested container */
        gid_t gid;
        const char *cwd;
        uint64_t nofile, nproc; /* 0: left alone */
        /* The server's whole environment ("K=V", NULL-terminated); NULL:
         * the template's. */
        char *const *env;
};

/* The template's first word: 0 for "warm", -EPROTO with its reason (a
 * copy, to free) for "fail ...", -EAGAIN when nothing arrived yet
 * (ctl_fd is non-blocking), -ECONNRESET on EOF. */
int template_read_warm(int ctl_fd, char **ret_reason);
/* Sends one fork request; *ret_go is our end of the copy's socket
 * (SO_PASSCRED set, non-blocking, CLOEXEC). */
int template_fork_send(int ctl_fd, const struct template_fork_request *q, int *ret_go);
/* The template's answer to a request: 0 ("forked N"), -EPROTO ("error
 * ...", the reason a copy in *ret_reason when given), -EAGAIN,
 * -ECONNRESET. */
int template_read_reply(int ctl_fd, char **ret_reason);
/* The copy's "hello": its pid in our pid namespace. -EAGAIN until it
 * arrives, -EPROTO for anything else (a copy that failed says "fail
 * <step>: <error>" instead: the reason, a copy, in *ret_reason when
 * given). */
int template_copy_hello(int go_fd, pid_t *ret_pid, char **ret_reason);
int template_copy_go(int go_fd);
