/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * openenvd-shim: PID 1 of every container started by openenvd.
 *
 *   openenvd-shim [--tcp-to-unix HOST:PORT=PATH]... [--unix-to-tcp PATH=HOST:PORT]...
 *                 [--fd-to-tcp FD=HOST:PORT]... [--notify-fd FD] [--gate-fd FD]
 *                 [--pass-fd FD]... [--linger] -- PRINCIPAL [ARGS...]
 *   openenvd-shim [forwarders] [--notify-fd FD] [--linger] --adopt-fd FD
 *
 * It runs as the (unprivileged) principal uid, with no capability, under the
 * container's syscall filter, and:
 *  - makes sure lo is up (the launcher already did; this is a no-op then),
 *  - runs the forwarders (TCP inside the container <-> unix socket, both
 *    directions, half-close preserved): --tcp-to-unix listens on TCP and
 *    connects to a socket in /run/openenvd; --unix-to-tcp listens on a path;
 *    --fd-to-tcp accepts on a listening unix socket it inherited as FD (the
 *    daemon created it: socket activation, so the daemon never has to
 *    connect to a path inside a directory this container can write),
 *  - with --notify-fd, writes "READY=1\n" to FD (a pipe the daemon reads)
 *    once every TCP port it forwards to has a listener (read from
 *    /proc/net/tcp{,6}: no connection is made to the principal), then
 *    closes it; the daemon takes that as "the server is up",
 *  - with --gate-fd, waits until the daemon releases it (a container made
 *    ahead of its turn, gate_wait()),
 *  - starts the principal (clone + execvp) in its own session with exactly our
 *    environment and none of our fds but those named by --pass-fd (at most
 *    SHIM_MAX_PASS_FDS, each at its own number; the shim closes its copies
 *    once the principal started),
 *  - or, with --adopt-fd, starts nothing and adopts a process forked
 *    elsewhere (fork-speed episodes): it reads "PID\n" (decimal, in our pid
 *    namespace) from FD, a pipe, then closes it. That process leads its own
 *    session and becomes our child once its short-lived parent exits: the
 *    kernel reparents an orphan to the init of the DYING PARENT's pid
 *    namespace, so that parent must itself live in ours (setns() + fork()
 *    twice; a parent outside hands it to an init outside). From then on it
 *    is the principal. It may exit before its pid arrives: the children
 *    reaped until then are kept (child_reaped()). EOF first: nothing to
 *    adopt, exit 126. Not with a principal, --gate-fd or --pass-fd.
 *  - passes on no inherited fd that no option names (close_range()),
 *  - forwards SIGTERM/SIGINT/SIGHUP/SIGQUIT/SIGUSR1/SIGUSR2 to the principal's
 *    process group,
 *  - reaps every orphan of the pid namespace,
 *  - exits with the principal's exit status (128+signal if it was killed);
 *    as PID 1 leaving, it takes the whole pid namespace with it. With
 *    --linger it outlives the principal (see principal_exited()) until a
 *    signal it would forward arrives, then exits with that same status.
 * One thread on the base event loop; signals through signalfd, never an
 * asynchronous handler; forwarded bytes are spliced (base/pipe-relay.h).
 * Messages on stderr all start with "openenvd-shim: ".
 */
#include <arpa/inet.h>
#include <linux/close_range.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/event-loop.h"
#include "base/exit-code.h"
#include "base/fd-util.h"
#include "base/limits.h"
#include "base/macro.h"
#include "base/parse-util.h"
#include "base/pipe-relay.h"
#include "base/util.h"
#include "base/version.h"

#define EXIT_SETUP_FAILED 126
#define EXIT_EXEC_FAILED  127

/* Readiness polling: every 1 ms at first, backing off to 50 ms. */
#define READY_FIRST_DELAY (1 * USEC_PER_MSEC)
#define READY_MAX_DELAY   (50 * USEC_PER_MSEC)

struct shim;

struct listener {
        struct shim *shim;
        int fd; /* owned */
        struct loop_source *src;
        struct sockaddr_storage up; /* what each client is connected to */
        socklen_t up_len;
};

/* A forwarded connection whose upstream connect() is still in progress. */
struct pending {
        struct shim *shim;
        int cfd, ufd; /* owned until handed to a pipe_relay */
        struct loop_source *src;
};

/* A child reaped while the pid to adopt was not known yet. */
struct reaped {
        pid_t pid;
        int code;
};

struct shim {
        struct loop *loop;
        sigset_t saved;
        pid_t principal; /* 0 until started or adopted */
        bool principal_done;
        bool linger;
        int code;
        int pass_fds[SHIM_MAX_PASS_FDS]; /* owned until the principal started */
        size_t n_pass_fds;
        int adopt_fd; /* owned until the pid to adopt was read */
        struct loop_source *adopt_src;
        char adopt_buf[SHIM_ADOPT_MAX_BYTES];
        size_t adopt_len;
        struct reaped reaped[SHIM_ADOPT_REAPED]; /* a ring, while adopt_fd is open */
        size_t n_reaped;
        struct listener listeners[CONTAINER_MAX_FORWARDS];
        size_t n_listeners;
        size_t n_conns;
        struct loop_source *signals; /* SIGCHLD and forwarded_signals, one signalfd */
        struct loop_source *start;   /* on_start(), once */
        int notify_fd;               /* owned until READY is written */
        uint16_t ready_ports[CONTAINER_MAX_FORWARDS];
        size_t n_ready_ports;
        struct loop_source *ready_timer;
        usec_t ready_delay;
};

static const int forwarded_signals[] = { SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 };

static void say(const char *fmt, ...) printf_fmt(1, 2);
static void say(const char *fmt, ...)
{
        va_list ap;
        char buf[512];
        int n = snprintf(buf, sizeof(buf), "openenvd-shim: ");
        va_start(ap, fmt);
        (void) vsnprintf(buf + n, sizeof(buf) - (size_t) n, fmt, ap);
        va_end(ap);
        /* One write, so lines of concurrent writers do not interleave. */
        size_t l = strnlen(buf, sizeof(buf) - 2);
        buf[l++] = '\n';
        (void) !write(STDERR_FILENO, buf, l);
}

static void loopback_up(void)
{
        int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        struct ifreq ifr = { .ifr_name = "lo" };

        if (fd < 0)
                return;
        if (ioctl(fd, SIOCGIFFLAGS, &ifr) == 0 && !(ifr.ifr_flags & IFF_UP)) {
                ifr.ifr_flags |= IFF_UP;
                /* Fails without CAP_NET_ADMIN; the launcher normally did it. */
                if (ioctl(fd, SIOCSIFFLAGS, &ifr) < 0)
                        say("could not bring lo up: %m");
        }
        close(fd);
}

/* "HOST:PORT" (numeric IPv4) into a sockaddr_in. */
static int parse_inet(const char *s, struct sockaddr_storage *ret, socklen_t *ret_len)
{
        char host[INET_ADDRSTRLEN];
        struct sockaddr_in *sin = (struct sockaddr_in *) ret;
        const char *colon = strrchr(s, ':');
        unsigned port;

        if (!colon || (size_t) (colon - s) >= sizeof(host))
                return -EINVAL;
        memcpy(host, s, (size_t) (colon - s));
        host[colon - s] = '\0';
        if (parse_uint(colon + 1, 1, 65535, &port) < 0)
                return -EINVAL;
        *ret = (struct sockaddr_storage){};
        sin->sin_family = AF_INET;
        sin->sin_port = htons((uint16_t) port);
        if (inet_pton(AF_INET, host, &sin->sin_addr) != 1)
                return -EINVAL;
        *ret_len = sizeof(*sin);
        return 0;
}

static int parse_unix(const char *s, size_t n, struct sockaddr_storage *ret, socklen_t *ret_len)
{
        struct sockaddr_un *sun = (struct sockaddr_un *) ret;

        if (n == 0 || n >= sizeof(sun->sun_path) || s[0] != '/')
                return -EINVAL;
        *ret = (struct sockaddr_storage){};
        sun->sun_family = AF_UNIX;
        memcpy(sun->sun_path, s, n);
        *ret_len = (socklen_t) (offsetof(struct sockaddr_un, sun_path) + n + 1);
        return 0;
}

static int listen_on(struct sockaddr_storage *addr, socklen_t len)
{
        int family = addr->ss_family;
        cleanup_close int fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        if (family == AF_INET) {
                int one = 1;
                (void) setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        } else {
                /* A stale socket from an earlier run is replaced; anything
                 * else at the path is left alone and bind() fails. */
                const char *path = ((struct sockaddr_un *) addr)->sun_path;
                struct stat st;
                if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode))
                        (void) unlink(path);
        }
        if (bind(fd, (struct sockaddr *) addr, len) < 0)
                return -errno;
        if (family == AF_UNIX && chmod(((struct sockaddr_un *) addr)->sun_path, 0666) < 0)
                return -errno;
        if (listen(fd, 128) < 0)
                return -errno;
        return TAKE_FD(fd);
}

/*
 * Claims an fd the daemon passed (3 and up) for one option. Every fd the
 * shim opens is CLOEXEC from birth, and one inherited across execve()
 * cannot be: an fd already CLOEXEC is ours, or claimed by an earlier option
 * (-EBUSY). Claimed, it becomes CLOEXEC: the principal does not inherit it.
 */
static int fd_claim(int fd)
{
        int flags = fd < 3 ? -1 : fcntl(fd, F_GETFD);

        if (flags < 0)
                return -EBADF;
        if (flags & FD_CLOEXEC)
                return -EBUSY;
        if (fcntl(fd, F_SETFD, flags | FD_CLOEXEC) < 0)
                return -errno;
        return 0;
}

/*
 * An inherited fd must be what the daemon says it is: a listening stream
 * socket. It is claimed (fd_claim()) and made non-blocking here.
 */
static int adopt_listener(int fd)
{
        struct stat st;
        int acc = 0, type = 0, r;
        socklen_t l = sizeof(acc), tl = sizeof(type);

        if (fd < 3 || fstat(fd, &st) < 0 || !S_ISSOCK(st.st_mode))
                return -ENOTSOCK;
        if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &acc, &l) < 0 || !acc ||
            getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl) < 0 || type != SOCK_STREAM)
                return -EINVAL;
        r = fd_claim(fd);
        if (r < 0)
                return r;
        if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0)
                return -errno;
        return fd;
}

static void pending_free(struct pending *p)
{
        p->src = loop_source_free(p->src);
        safe_close(p->cfd);
        safe_close(p->ufd);
        p->shim->n_conns--;
        free(p);
}

static void relay_done(struct pipe_relay *r, int error, void *userdata)
{
        struct shim *s = userdata;
        (void) r;
        (void) error;
        s->n_conns--;
}

/* Both sockets connected: a splice relay takes them over. */
static void pending_relay(struct pending *p)
{
        struct pipe_relay *relay;
        struct shim *s = p->shim;

        p->src = loop_source_free(p->src);
        if (pipe_relay_new(s->loop, p->cfd, p->ufd, USEC_INFINITY, relay_done, s, &relay) < 0) {
                pending_free(p); /* the fds are still ours */
                return;
        }
        p->cfd = p->ufd = -EBADF;
        free(p); /* n_conns now counts the relay */
}

static int on_pending(struct loop_source *src, int fd, uint32_t revents, void *userdata)
{
        struct pending *p = userdata;
        int err = 0;
        socklen_t l = sizeof(err);

        (void) src;
        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &l) < 0)
                err = errno;
        if (err == 0 && !(revents & (EPOLLOUT | EPOLLERR | EPOLLHUP)))
                return 0;
        if (err != 0 || (revents & EPOLLERR))
                pending_free(p); /* the client reads EOF */
        else
                pending_relay(p);
        return 0;
}

/* TCP_NODELAY on a TCP socket; a no-op (ENOTSUP/EOPNOTSUPP) on a unix one. */
static void set_nodelay(int fd)
{
        (void) setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &(int){ 1 }, sizeof(int));
}

static void forward_one(struct listener *l, int cfd)
{
        struct shim *s = l->shim;
        int ufd;

        if (s->n_conns >= SHIM_MAX_CONNECTIONS) {
                close(cfd);
                return;
        }
        ufd = socket(l->up.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (ufd < 0) {
                close(cfd);
                return;
        }
        /* Each relayed write is a message (an HTTP head, a WebSocket
         * frame): send it now. Under Nagle a small write that follows
         * another waits for the peer's ACK, delayed by up to 40 ms. */
        set_nodelay(cfd);
        set_nodelay(ufd);
        struct pending *p = xcalloc(1, sizeof(*p));
        *p = (struct pending){ .shim = s, .cfd = cfd, .ufd = ufd };
        s->n_conns++;
        if (connect(ufd, (struct sockaddr *) &l->up, l->up_len) == 0) {
                pending_relay(p);
                return;
        }
        /* Nobody upstream (ECONNREFUSED, ENOENT): the client reads EOF. */
        if (errno != EINPROGRESS && errno != EAGAIN) {
                pending_free(p);
                return;
        }
        if (loop_add_io(s->loop, ufd, EPOLLOUT, on_pending, p, &p->src) < 0)
                pending_free(p);
}

static int on_accept(struct loop_source *src, int fd, uint32_t revents, void *userdata)
{
        struct listener *l = userdata;

        (void) src;
        (void) revents;
        for (;;) {
                int cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
                if (cfd < 0) {
                        if (errno == EINTR || errno == ECONNABORTED)
                                continue;
                        if (errno != EAGAIN)
                                say("accept: %m");
                        return 0;
                }
                forward_one(l, cfd);
        }
}

static int listener_add(struct shim *s, int fd, const struct sockaddr_storage *up, socklen_t up_len)
{
        struct listener *l = &s->listeners[s->n_listeners];

        *l = (struct listener){ .shim = s, .fd = fd, .up = *up, .up_len = up_len };
        if (loop_add_io(s->loop, fd, EPOLLIN, on_accept, l, &l->src) < 0) {
                safe_close(fd);
                return -errno;
        }
        s->n_listeners++;
        if (up->ss_family == AF_INET && s->n_ready_ports < ELEMENTSOF(s->ready_ports))
                s->ready_ports[s->n_ready_ports++] =
                        ntohs(((const struct sockaddr_in *) up)->sin_port);
        return 0;
}

static int forward_add(struct shim *s, const char *opt, const char *arg)
{
        struct sockaddr_storage local, up;
        socklen_t local_len, up_len;
        int fd, r;

        if (s->n_listeners >= ELEMENTSOF(s->listeners))
                return -E2BIG;
        if (streq(opt, "--tcp-to-unix")) {
                /* HOST:PORT=PATH, split at the first '=' (paths may hold '='). */
                const char *eq = strchr(arg, '=');
                char inet[64];
                if (!eq || (size_t) (eq - arg) >= sizeof(inet))
                        return -EINVAL;
                memcpy(inet, arg, (size_t) (eq - arg));
                inet[eq - arg] = '\0';
                r = parse_inet(inet, &local, &local_len);
                if (r >= 0)
                        r = parse_unix(eq + 1, strlen(eq + 1), &up, &up_len);
                if (r < 0)
                        return r;
                fd = listen_on(&local, local_len);
        } else if (streq(opt, "--unix-to-tcp")) {
                /* PATH=HOST:PORT, split at the last '='. */
                const char *eq = strrchr(arg, '=');
                if (!eq)
                        return -EINVAL;
                r = parse_unix(arg, (size_t) (eq - arg), &local, &local_len);
                if (r >= 0)
                        r = parse_inet(eq + 1, &up, &up_len);
                if (r < 0)
                        return r;
                fd = listen_on(&local, local_len);
        } else {
                /* FD=HOST:PORT */
                const char *eq = strchr(arg, '=');
                char num[16];
                unsigned v;
                if (!eq || (size_t) (eq - arg) >= sizeof(num))
                        return -EINVAL;
                memcpy(num, arg, (size_t) (eq - arg));
                num[eq - arg] = '\0';
                r = parse_uint(num, 3, 1024, &v);
                if (r >= 0)
                        r = parse_inet(eq + 1, &up, &up_len);
                if (r < 0)
                        return r;
                fd = adopt_listener((int) v);
        }
        if (fd < 0)
                return fd;
        return listener_add(s, fd, &up, up_len);
}

/* --- readiness --------------------------------------------------------- */

/* Whether /proc/net/<file> lists a TCP socket in LISTEN on port. */
static bool port_listening(const char *file, uint16_t port)
{
        cleanup_free char *path = xasprintf("/proc/net/%s", file), *data = NULL;
        size_t len;

        /* Bounded: a principal with thousands of sockets makes this long. */
        if (read_full_file_at(AT_FDCWD, path, (size_t) 4 * 1024 * 1024, &data, &len) < 0)
                return false;
        /* "  sl  local_address rem_address   st ...": local is HEXADDR:HEXPORT,
         * st 0A is LISTEN. */
        for (char *line = strchr(data, '\n'); line && *++line; line = strchr(line, '\n')) {
                unsigned lport = 0, st = 0;
                if (sscanf(line, " %*u: %*[0-9A-Fa-f]:%x %*[0-9A-Fa-f]:%*x %x", &lport, &st) == 2 &&
                    lport == port && st == 0x0A)
                        return true;
        }
        return false;
}

static bool all_ports_listening(const struct shim *s)
{
        for (size_t i = 0; i < s->n_ready_ports; i++)
                if (!port_listening("tcp", s->ready_ports[i]) &&
                    !port_listening("tcp6", s->ready_ports[i]))
                        return false;
        return true;
}

static int on_ready_timer(struct loop_source *src, usec_t now, void *userdata)
{
        struct shim *s = userdata;

        if (!all_ports_listening(s)) {
                loop_timer_set(src, now + s->ready_delay);
                s->ready_delay = MIN(s->ready_delay * 2, READY_MAX_DELAY);
                return 0;
        }
        (void) !write(s->notify_fd, "READY=1\n", 8);
        s->notify_fd = safe_close(s->notify_fd);
        s->ready_timer = loop_source_free(s->ready_timer);
        return 0;
}

/* --- the gate ------------------------------------------------------------ */

static bool env_name_ok(const char *s, size_t n)
{
        if (n == 0 || (s[0] >= '0' && s[0] <= '9'))
                return false;
        for (size_t i = 0; i < n; i++)
                if (!(s[i] == '_' || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z') ||
                      (s[i] >= '0' && s[i] <= '9')))
                        return false;
        return true;
}

/*
 * A container made ahead of its turn (an observer, while the episode is
 * still live) starts its principal only once the daemon releases it: the
 * daemon writes zero or more "NAME=VALUE\n" lines, values only it knows at
 * the turn (the final count of actions, the phase), then an empty line,
 * and closes the pipe; the lines join our environment, which the principal
 * gets. End of file before the empty line: the daemon gave the container
 * up, and nothing starts. The wait blocks: nothing else has to run before
 * the principal exists (signals stay queued in the signalfd). 0, or
 * -ECANCELED (given up), -EBADMSG (not that format), -errno.
 */
static int gate_wait(int fd)
{
        cleanup_free char *buf = NULL;
        char *line, *end;
        size_t len;
        int r;

        r = read_full_fd(fd, SHIM_GATE_MAX_BYTES, &buf, &len);
        (void) close(fd);
        if (r < 0)
                return r == -EFBIG ? -EBADMSG : r;
        if (len == 0)
                return -ECANCELED;
        for (line = buf; (end = strchr(line, '\n')); line = end + 1) {
                char *eq = memchr(line, '=', (size_t) (end - line));
                if (end == line)
                        return end + 1 == buf + len ? 0 : -EBADMSG; /* released */
                if (!eq || !env_name_ok(line, (size_t) (eq - line)))
                        return -EBADMSG;
                *eq = *end = '\0';
                if (setenv(line, eq + 1, 1) < 0)
                        return -errno;
        }
        return -ECANCELED; /* no empty line: cut short */
}

/* --- the principal ------------------------------------------------------- */

/* What the principal's child needs until it execs; err is its answer. */
struct principal_start {
        char **argv;
        const sigset_t *mask;
        const int *pass_fds;
        size_t n_pass_fds;
        int err;
};

/* The child's fd table is a copy (no CLONE_FILES): the passed fds lose
 * CLOEXEC there only, and the shim's copies stay CLOEXEC. */
static bool pass_fds_inherit(const struct principal_start *p)
{
        for (size_t i = 0; i < p->n_pass_fds; i++)
                if (fcntl(p->pass_fds[i], F_SETFD, 0) < 0)
                        return false;
        return true;
}

static int principal_exec(void *userdata)
{
        struct principal_start *p = userdata;

        if (pass_fds_inherit(p) && setsid() >= 0 && sigprocmask(SIG_SETMASK, p->mask, NULL) >= 0)
                execvp(p->argv[0], p->argv);
        p->err = errno;
        return EXIT_EXEC_FAILED;
}

/* clone(CLONE_VM | CLONE_VFORK) on a stack of its own, as posix_spawnp()
 * does, without glibc's reset of all 64 signal dispositions in the child
 * (~120 syscalls): the shim installs no handler (signals come through a
 * signalfd), and what it ignores it inherited, for the principal to inherit
 * too. The child only makes syscalls and reports a failure in p.err. The
 * principal gets the mask from before the shim blocked anything and its own
 * session, so forwarded signals reach its whole process group. Every fd of
 * ours is CLOEXEC: it inherits stdio and the --pass-fd fds only. */
static int principal_spawn(struct shim *s, char **argv, pid_t *ret)
{
        struct principal_start p = {
                .argv = argv,
                .mask = &s->saved,
                .pass_fds = s->pass_fds,
                .n_pass_fds = s->n_pass_fds,
        };
        size_t argc = 0, size;
        char *stack;
        pid_t pid;

        while (argv[argc])
                argc++;
        /* Room for execvp()'s copy of argv (glibc runs a script without #!
         * through /bin/sh). */
        size = (size_t) 64 * 1024 + (argc + 2) * sizeof(char *);
        stack = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK,
                     -1, 0);
        if (stack == MAP_FAILED)
                return -errno;
        pid = clone(principal_exec, stack + size, CLONE_VM | CLONE_VFORK | SIGCHLD, &p);
        if (pid < 0)
                p.err = errno;
        (void) munmap(stack, size);
        if (pid < 0)
                return -p.err;
        if (p.err != 0) {
                (void) waitpid(pid, NULL, 0);
                return -p.err;
        }
        *ret = pid;
        return 0;
}

/* --- the end of the principal, reaping ---------------------------------- */

/*
 * Without --linger the shim leaves with the principal. With it, it stays:
 * a template container's pid namespace holds the nested pid namespaces of
 * the containers forked from it, and when the template's PID 1 exits the
 * kernel kills every process in them too. So the shim keeps reaping until
 * it is told to go (a signal it would have forwarded, with nobody left to
 * forward to), then exits with the principal's status.
 */
static void principal_exited(struct shim *s, int code)
{
        s->code = code;
        s->principal_done = true;
        if (!s->linger)
                loop_quit(s->loop, 0);
}

static void adopt_fail(struct shim *s)
{
        s->adopt_src = loop_source_free(s->adopt_src);
        s->adopt_fd = safe_close(s->adopt_fd);
        s->code = EXIT_SETUP_FAILED;
        loop_quit(s->loop, 0);
}

/*
 * The pid to adopt arrived. Its process may have exited and been reaped as
 * an orphan before: then it is in s->reaped. kill(pid, 0) first tells a
 * live process from a pid number reused since an older orphan's reaping.
 */
static void adopt_known(struct shim *s, pid_t pid)
{
        s->adopt_src = loop_source_free(s->adopt_src);
        s->adopt_fd = safe_close(s->adopt_fd);
        s->principal = pid;
        if (kill(pid, 0) == 0 || errno != ESRCH)
                return;
        for (size_t i = 0; i < MIN(s->n_reaped, ELEMENTSOF(s->reaped)); i++)
                if (s->reaped[i].pid == pid) {
                        principal_exited(s, s->reaped[i].code);
                        return;
                }
        say("no process %d to adopt", (int) pid);
        adopt_fail(s);
}

/* "PID\n" and nothing else, a pid of our namespace other than ours. */
static void adopt_parse(struct shim *s, char *nl)
{
        unsigned v;

        *nl = '\0';
        if (nl + 1 != s->adopt_buf + s->adopt_len || parse_uint(s->adopt_buf, 2, INT_MAX, &v) < 0) {
                say("malformed pid to adopt");
                adopt_fail(s);
                return;
        }
        adopt_known(s, (pid_t) v);
}

/* Reads what the pipe holds without blocking, up to the pid's '\n'. */
static void adopt_drain(struct shim *s)
{
        while (s->adopt_fd >= 0) {
                size_t room = sizeof(s->adopt_buf) - s->adopt_len;
                ssize_t n = read(s->adopt_fd, s->adopt_buf + s->adopt_len, room);
                char *nl;

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0 && errno == EAGAIN)
                        return;
                if (n <= 0) {
                        if (n < 0)
                                say("reading the pid to adopt: %m");
                        else
                                say(s->adopt_len ? "malformed pid to adopt"
                                                 : "no process to adopt");
                        adopt_fail(s);
                        return;
                }
                s->adopt_len += (size_t) n;
                nl = memchr(s->adopt_buf, '\n', s->adopt_len);
                if (nl)
                        adopt_parse(s, nl);
                else if (s->adopt_len == sizeof(s->adopt_buf))
                        adopt_parse(s, s->adopt_buf + s->adopt_len - 1); /* refused */
        }
}

static int on_adopt(struct loop_source *src, int fd, uint32_t revents, void *userdata)
{
        (void) src;
        (void) fd;
        (void) revents;
        adopt_drain(userdata);
        return 0;
}

static int adopt_start(struct shim *s)
{
        if (fcntl(s->adopt_fd, F_SETFL, fcntl(s->adopt_fd, F_GETFL) | O_NONBLOCK) < 0)
                return -errno;
        return loop_add_io(s->loop, s->adopt_fd, EPOLLIN, on_adopt, s, &s->adopt_src);
}

/*
 * One child reaped. While the pid to adopt is unknown, the child is
 * remembered (it may be that process, its pid still to come), then the
 * pipe is drained: the adopted process may have written its pid and exited
 * since we last looked, and adopt_known() finds it among the remembered.
 */
static void child_reaped(struct shim *s, pid_t pid, int code)
{
        if (s->adopt_fd >= 0) {
                s->reaped[s->n_reaped++ % ELEMENTSOF(s->reaped)] =
                        (struct reaped){ .pid = pid, .code = code };
                adopt_drain(s);
        } else if (pid == s->principal && !s->principal_done) {
                principal_exited(s, code);
        }
}

/* Reaps one exited child: its pid, or 0 if none is left. */
static pid_t reap_one(siginfo_t *si)
{
        for (;;) {
                *si = (siginfo_t){};
                if (waitid(P_ALL, 0, si, WEXITED | WNOHANG) == 0)
                        return si->si_pid;
                if (errno != EINTR)
                        return 0; /* ECHILD */
        }
}

static void reap_all(struct shim *s)
{
        siginfo_t si;

        while (reap_one(&si) > 0)
                child_reaped(s, si.si_pid, exit_status_from_siginfo(si.si_code, si.si_status));
}

/* A signal for the principal's process group. Nobody left to forward to
 * (it exited under --linger, or it is not adopted yet): the shim exits. */
static void forward(struct shim *s, int signo)
{
        if (s->principal <= 0 && s->adopt_fd >= 0)
                adopt_drain(s);
        if (s->principal <= 0 || s->principal_done) {
                if (!s->principal_done)
                        s->code = 128 + signo;
                loop_quit(s->loop, 0);
                return;
        }
        if (kill(-s->principal, signo) < 0)
                (void) kill(s->principal, signo);
}

/*
 * PID 1 drops a signal it has no handler for unless it is blocked: a child
 * that became ours (an adopted process reparented to us) and exited before
 * setup_signals() sent a SIGCHLD nobody got. Reaped from inside the loop,
 * which may then quit at once.
 */
static int on_start(struct loop_source *src, usec_t now, void *userdata)
{
        struct shim *s = userdata;

        (void) src;
        (void) now;
        s->start = loop_source_free(s->start);
        reap_all(s);
        return 0;
}

static int on_signal(struct loop_source *src, const struct signalfd_siginfo *si, void *userdata)
{
        struct shim *s = userdata;

        (void) src;
        if (si->ssi_signo == SIGCHLD)
                reap_all(s);
        else
                forward(s, (int) si->ssi_signo);
        return 0;
}

static int setup_signals(struct shim *s)
{
        sigset_t blocked;

        /* Blocked signals are queued even for a namespace's init, which
         * otherwise drops every signal it has no handler for. The mask from
         * before is the principal's. */
        sigemptyset(&blocked);
        sigaddset(&blocked, SIGCHLD);
        for (size_t i = 0; i < ELEMENTSOF(forwarded_signals); i++)
                sigaddset(&blocked, forwarded_signals[i]);
        if (sigprocmask(SIG_BLOCK, &blocked, &s->saved) < 0)
                return -errno;
        return loop_add_signals(s->loop, &blocked, on_signal, s, &s->signals);
}

/* --- options ------------------------------------------------------------- */

/* An fd the daemon passed (3 and up), claimed for one option. */
static int inherited_fd(const char *value, int *ret)
{
        unsigned v;
        int r = parse_uint(value, 3, 1024, &v);

        if (r >= 0)
                r = fd_claim((int) v);
        if (r >= 0)
                *ret = (int) v;
        return r;
}

static int pass_fd_add(struct shim *s, const char *value)
{
        if (s->n_pass_fds >= ELEMENTSOF(s->pass_fds))
                return -E2BIG;
        int r = inherited_fd(value, &s->pass_fds[s->n_pass_fds]);
        if (r >= 0)
                s->n_pass_fds++;
        return r;
}

static void usage(const char *opt, const char *value)
{
        say("bad option %s %s: %m; usage: openenvd-shim [--tcp-to-unix HOST:PORT=PATH] "
            "[--unix-to-tcp PATH=HOST:PORT] [--fd-to-tcp FD=HOST:PORT] [--notify-fd FD] "
            "[--gate-fd FD] [--pass-fd FD] [--linger] {--adopt-fd FD | -- PRINCIPAL [ARGS...]}",
            opt, value);
}

/* One option at argv[i]; returns how many arguments it took, or -errno. */
static int option_parse(struct shim *s, char **argv, int i, int argc, int *gate_fd)
{
        const char *opt = argv[i], *value = i + 1 < argc ? argv[i + 1] : NULL;
        int r = -EINVAL;

        if (streq(opt, "--linger")) {
                s->linger = true;
                return 1;
        }
        if (!value)
                ; /* an option without its value */
        else if (streq(opt, "--notify-fd"))
                r = inherited_fd(value, &s->notify_fd);
        else if (streq(opt, "--gate-fd"))
                r = inherited_fd(value, gate_fd);
        else if (streq(opt, "--adopt-fd"))
                r = inherited_fd(value, &s->adopt_fd);
        else if (streq(opt, "--pass-fd"))
                r = pass_fd_add(s, value);
        else if (streq(opt, "--tcp-to-unix") || streq(opt, "--unix-to-tcp") ||
                 streq(opt, "--fd-to-tcp"))
                r = forward_add(s, opt, value);
        return r < 0 ? r : 2;
}

/* Every option; then what to run, which --adopt-fd excludes. 0 or -1. */
static int options_parse(struct shim *s, int argc, char **argv, int *gate_fd, char ***ret_argv)
{
        char **principal_argv = NULL;

        for (int i = 1, r; i < argc; i += r) {
                if (streq(argv[i], "--")) {
                        principal_argv = argv + i + 1;
                        break;
                }
                r = option_parse(s, argv, i, argc, gate_fd);
                if (r < 0) {
                        errno = -r;
                        usage(argv[i], i + 1 < argc ? argv[i + 1] : "");
                        return -1;
                }
        }
        bool has_principal = principal_argv && principal_argv[0];
        if (s->adopt_fd >= 0 && (has_principal || *gate_fd >= 0 || s->n_pass_fds > 0)) {
                say("--adopt-fd starts no principal: not with a principal, --gate-fd or "
                    "--pass-fd");
                return -1;
        }
        if (s->adopt_fd < 0 && !has_principal) {
                say("no principal given");
                return -1;
        }
        /* An fd passed but named by no option is not the principal's either:
         * every fd not CLOEXEC yet becomes so (the --pass-fd ones lose it in
         * the principal only, pass_fds_inherit()). */
        (void) syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC);
        *ret_argv = principal_argv;
        return 0;
}

/* Gate, then the principal; the shim's copies of --pass-fd fds go. */
static int principal_start(struct shim *s, char **argv, int gate_fd)
{
        int r;

        if (gate_fd >= 0) {
                r = gate_wait(gate_fd);
                if (r < 0) {
                        errno = -r;
                        say(r == -ECANCELED ? "not released: the principal never started"
                                            : "bad release message: %m");
                        return EXIT_SETUP_FAILED;
                }
        }
        /* Listeners exist before the principal starts, so it can connect
         * to them (and they to it) from its first instruction. */
        r = principal_spawn(s, argv, &s->principal);
        for (size_t i = 0; i < s->n_pass_fds; i++)
                s->pass_fds[i] = safe_close(s->pass_fds[i]);
        s->n_pass_fds = 0;
        if (r < 0) {
                errno = -r;
                say("failed to start the principal: %s: %m", argv[0]);
                return EXIT_EXEC_FAILED;
        }
        return 0;
}

int main(int argc, char **argv)
{
        struct shim s = { .notify_fd = -EBADF, .adopt_fd = -EBADF, .code = EXIT_SETUP_FAILED };
        char **principal_argv = NULL;
        int gate_fd = -EBADF;
        int r;

        /* Alone: the daemon always passes "--" before a principal. */
        if (argc == 2 && streq(argv[1], "--version")) {
                dprintf(STDOUT_FILENO, "openenvd-shim %s\n", openenvd_version);
                return 0;
        }
        /* PID 1 of a pid namespace reaps orphans anyway; being a subreaper
         * keeps that true when the shim runs elsewhere (tests). */
        (void) prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
        /* The principal has our uid: without this it could open our
         * /proc/1/mem or /proc/1/fd (forwarder sockets) where Yama does not
         * stop it. The principal's exec makes it dumpable again. */
        (void) prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);

        if (loop_new(&s.loop) < 0 || setup_signals(&s) < 0) {
                say("event loop: %m");
                return EXIT_SETUP_FAILED;
        }
        loopback_up();

        if (options_parse(&s, argc, argv, &gate_fd, &principal_argv) < 0)
                return EXIT_SETUP_FAILED;
        if (s.adopt_fd >= 0) {
                r = adopt_start(&s);
                if (r < 0) {
                        errno = -r;
                        say("--adopt-fd: %m");
                        return EXIT_SETUP_FAILED;
                }
        } else {
                r = principal_start(&s, principal_argv, gate_fd);
                if (r != 0)
                        return r;
        }
        (void) loop_add_timer(s.loop, 0, on_start, &s, &s.start);
        if (s.notify_fd >= 0) {
                s.ready_delay = READY_FIRST_DELAY;
                (void) loop_add_timer(s.loop, now_usec(CLOCK_MONOTONIC), on_ready_timer, &s,
                                      &s.ready_timer);
        }

        r = loop_run(s.loop);
        if (r < 0) {
                errno = -r;
                say("event loop: %m");
                if (s.principal > 0)
                        (void) kill(s.principal, SIGKILL);
        }
        /* Orphans that already exited are reaped; the rest die with us (the
         * process exits without freeing: it is PID 1 of its namespace). */
        for (siginfo_t si; reap_one(&si) > 0;)
                ;
        return s.code;
}
