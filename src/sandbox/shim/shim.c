/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * openenvd-shim: PID 1 of every container started by openenvd.
 *
 *   openenvd-shim [--tcp-to-unix HOST:PORT=PATH]... [--unix-to-tcp PATH=HOST:PORT]...
 *                 -- PRINCIPAL [ARGS...]
 *
 * It runs as the (unprivileged) principal uid, with no capability, under the
 * container's syscall filter, and:
 *  - makes sure lo is up (the launcher already did; this is a no-op then),
 *  - opens the forwarders' listeners (TCP inside the container <-> unix socket
 *    in /run/openenvd, both directions, half-close preserved),
 *  - starts the principal (posix_spawnp) in its own session with exactly our
 *    environment,
 *  - forwards SIGTERM/SIGINT/SIGHUP/SIGQUIT/SIGUSR1/SIGUSR2 to the principal's
 *    process group,
 *  - reaps every orphan of the pid namespace,
 *  - exits with the principal's exit status (128+signal if it was killed);
 *    as PID 1 leaving, it takes the whole pid namespace with it.
 * One thread; signals through signalfd, never an asynchronous handler; all
 * sockets non-blocking on one edge-triggered epoll. Messages on stderr all
 * start with "openenvd-shim: ".
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/limits.h"
#include "base/macro.h"
#include "base/parse-util.h"
#include "base/util.h"

#define EXIT_SETUP_FAILED 126
#define EXIT_EXEC_FAILED  127

enum tag {
        TAG_SIGNAL,
        TAG_LISTENER,
        TAG_END,
};

struct listener {
        enum tag tag; /* TAG_LISTENER */
        int fd;
        int up_family; /* AF_UNIX or AF_INET: what each client is connected to */
        struct sockaddr_storage up;
        socklen_t up_len;
};

struct pump {
        char *buf; /* owned, SHIM_BUFFER_BYTES */
        size_t off, len;
        bool eof;  /* source said EOF */
        bool shut; /* EOF passed on as shutdown(SHUT_WR) */
};

struct conn;
struct end {
        enum tag tag; /* TAG_END */
        struct conn *conn;
        int fd;
};

struct conn {
        struct end client, upstream;
        struct pump to_up, to_client;
        bool connecting;
        bool dead;              /* closed; freed after the current epoll batch */
        struct conn *next_dead; /* graveyard link */
};

struct shim {
        int epoll_fd;
        int signal_fd;
        sigset_t blocked, saved;
        pid_t principal;
        struct listener listeners[CONTAINER_MAX_FORWARDS];
        size_t n_listeners;
        size_t n_conns;
        struct conn *graveyard;
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

static int epoll_add(struct shim *s, int fd, uint32_t events, void *ptr)
{
        struct epoll_event ev = { .events = events, .data.ptr = ptr };
        return epoll_ctl(s->epoll_fd, EPOLL_CTL_ADD, fd, &ev) < 0 ? -errno : 0;
}

static int forward_add(struct shim *s, bool tcp_listen, const char *arg)
{
        struct sockaddr_storage local;
        socklen_t local_len;
        struct listener *l;
        int r;

        if (s->n_listeners >= ELEMENTSOF(s->listeners))
                return -E2BIG;
        l = &s->listeners[s->n_listeners];
        *l = (struct listener){ .tag = TAG_LISTENER, .fd = -EBADF };
        if (tcp_listen) {
                /* HOST:PORT=PATH, split at the first '=' (paths may hold '='). */
                const char *eq = strchr(arg, '=');
                char inet[64];
                if (!eq || (size_t) (eq - arg) >= sizeof(inet))
                        return -EINVAL;
                memcpy(inet, arg, (size_t) (eq - arg));
                inet[eq - arg] = '\0';
                r = parse_inet(inet, &local, &local_len);
                if (r >= 0)
                        r = parse_unix(eq + 1, strlen(eq + 1), &l->up, &l->up_len);
        } else {
                /* PATH=HOST:PORT, split at the last '='. */
                const char *eq = strrchr(arg, '=');
                if (!eq)
                        return -EINVAL;
                r = parse_unix(arg, (size_t) (eq - arg), &local, &local_len);
                if (r >= 0)
                        r = parse_inet(eq + 1, &l->up, &l->up_len);
        }
        if (r < 0)
                return r;
        l->up_family = l->up.ss_family;
        l->fd = listen_on(&local, local_len);
        if (l->fd < 0)
                return l->fd;
        r = epoll_add(s, l->fd, EPOLLIN, l);
        if (r < 0)
                return r;
        s->n_listeners++;
        return 0;
}

static void conn_close(struct shim *s, struct conn *c)
{
        /* Closing an fd removes it from the epoll set; events already
         * returned for it in this batch see c->dead and are skipped. */
        c->client.fd = safe_close(c->client.fd);
        c->upstream.fd = safe_close(c->upstream.fd);
        c->to_up.buf = mfree(c->to_up.buf);
        c->to_client.buf = mfree(c->to_client.buf);
        c->dead = true;
        c->next_dead = s->graveyard;
        s->graveyard = c;
        s->n_conns--;
}

static void conns_bury(struct shim *s)
{
        while (s->graveyard) {
                struct conn *c = s->graveyard;
                s->graveyard = c->next_dead;
                free(c);
        }
}

/* Moves bytes from -> to until neither side can make progress; passes EOF on
 * as a half-close. 0, or -errno when the connection is broken. */
static int pump_run(struct pump *p, int from, int to)
{
        for (;;) {
                bool progress = false;
                if (!p->eof && p->len == 0) {
                        ssize_t n = read(from, p->buf, SHIM_BUFFER_BYTES);
                        if (n > 0) {
                                p->off = 0;
                                p->len = (size_t) n;
                                progress = true;
                        } else if (n == 0) {
                                p->eof = true;
                                progress = true;
                        } else if (errno != EAGAIN && errno != EINTR) {
                                return -errno;
                        }
                }
                if (p->len > 0) {
                        ssize_t n = send(to, p->buf + p->off, p->len, MSG_NOSIGNAL);
                        if (n > 0) {
                                p->off += (size_t) n;
                                p->len -= (size_t) n;
                                progress = true;
                        } else if (n < 0 && errno != EAGAIN && errno != EINTR) {
                                return -errno;
                        }
                }
                if (p->eof && p->len == 0 && !p->shut) {
                        if (shutdown(to, SHUT_WR) < 0 && errno != ENOTCONN)
                                return -errno;
                        p->shut = true;
                }
                if (!progress)
                        return 0;
        }
}

static void conn_event(struct shim *s, struct end *e, uint32_t events)
{
        struct conn *c = e->conn;

        if (c->connecting) {
                if (e != &c->upstream)
                        return; /* client data waits in its socket */
                int err = 0;
                socklen_t l = sizeof(err);
                if (getsockopt(c->upstream.fd, SOL_SOCKET, SO_ERROR, &err, &l) < 0)
                        err = errno;
                if (err == 0 && !(events & (EPOLLOUT | EPOLLERR | EPOLLHUP)))
                        return;
                if (err != 0 || (events & EPOLLERR)) {
                        conn_close(s, c); /* the client reads EOF */
                        return;
                }
                c->connecting = false;
        }
        if (pump_run(&c->to_up, c->client.fd, c->upstream.fd) < 0 ||
            pump_run(&c->to_client, c->upstream.fd, c->client.fd) < 0 ||
            (c->to_up.shut && c->to_client.shut))
                conn_close(s, c);
}

static void listener_event(struct shim *s, struct listener *l)
{
        for (;;) {
                int cfd = accept4(l->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
                if (cfd < 0) {
                        if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
                                say("accept: %m");
                        if (errno == EINTR || errno == ECONNABORTED)
                                continue;
                        return;
                }
                if (s->n_conns >= SHIM_MAX_CONNECTIONS) {
                        close(cfd);
                        continue;
                }
                int ufd = socket(l->up_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
                if (ufd < 0) {
                        close(cfd);
                        continue;
                }
                bool connecting = false;
                if (connect(ufd, (struct sockaddr *) &l->up, l->up_len) < 0) {
                        if (errno != EINPROGRESS) {
                                /* Nobody upstream: the client reads EOF. */
                                close(ufd);
                                close(cfd);
                                continue;
                        }
                        connecting = true;
                }
                struct conn *c = xcalloc(1, sizeof(*c));
                c->client = (struct end){ TAG_END, c, cfd };
                c->upstream = (struct end){ TAG_END, c, ufd };
                c->to_up.buf = xmalloc(SHIM_BUFFER_BYTES);
                c->to_client.buf = xmalloc(SHIM_BUFFER_BYTES);
                c->connecting = connecting;
                s->n_conns++;
                uint32_t ev = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
                if (epoll_add(s, cfd, ev, &c->client) < 0 ||
                    epoll_add(s, ufd, ev, &c->upstream) < 0) {
                        conn_close(s, c);
                        continue;
                }
                /* Edge-triggered: data that arrived before registration
                 * produces no edge, so pump once now. */
                conn_event(s, &c->upstream, connecting ? 0 : EPOLLOUT);
        }
}

/* posix_spawn() (vfork-like, CLONE_VM) rather than fork(): nothing to copy,
 * and glibc reports a failed exec back to us. The principal gets a clean
 * signal mask and its own session, so forwarded signals reach its whole
 * process group. */
static int principal_spawn(struct shim *s, char **argv, pid_t *ret)
{
        posix_spawnattr_t attr;
        int r = posix_spawnattr_init(&attr);
        if (r != 0)
                return -r;
        r = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK);
        if (r == 0)
                r = posix_spawnattr_setsigmask(&attr, &s->saved);
        if (r == 0)
                r = posix_spawnp(ret, argv[0], NULL, &attr, argv, environ);
        posix_spawnattr_destroy(&attr);
        return -r;
}

static int exit_code(const siginfo_t *si)
{
        return si->si_code == CLD_EXITED ? si->si_status : 128 + si->si_status;
}

/* Reaps every exited child; returns true once the principal is among them. */
static bool reap_all(struct shim *s, int *code)
{
        bool principal_done = false;
        for (;;) {
                siginfo_t si = {};
                if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG) < 0) {
                        if (errno == EINTR)
                                continue;
                        break; /* ECHILD */
                }
                if (si.si_pid == 0)
                        break;
                if (si.si_pid == s->principal) {
                        *code = exit_code(&si);
                        principal_done = true;
                }
        }
        return principal_done;
}

static void signal_event(struct shim *s, int *code, bool *done)
{
        struct signalfd_siginfo ssi;

        for (;;) {
                ssize_t n = read(s->signal_fd, &ssi, sizeof(ssi));
                if (n != (ssize_t) sizeof(ssi))
                        return;
                if (ssi.ssi_signo == SIGCHLD) {
                        if (reap_all(s, code))
                                *done = true;
                        continue;
                }
                if (kill(-s->principal, (int) ssi.ssi_signo) < 0)
                        (void) kill(s->principal, (int) ssi.ssi_signo);
        }
}

int main(int argc, char **argv)
{
        struct shim s = { .epoll_fd = -EBADF, .signal_fd = -EBADF };
        char **principal_argv = NULL;
        int r;

        /* PID 1 of a pid namespace reaps orphans anyway; being a subreaper
         * keeps that true when the shim runs elsewhere (tests). */
        (void) prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
        /* The principal has our uid: without this it could open our
         * /proc/1/mem or /proc/1/fd (forwarder sockets) where Yama does not
         * stop it. The principal's exec makes it dumpable again. */
        (void) prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);

        /* Blocked signals are queued even for a namespace's init, which
         * otherwise drops every signal it has no handler for. */
        sigemptyset(&s.blocked);
        sigaddset(&s.blocked, SIGCHLD);
        for (size_t i = 0; i < ELEMENTSOF(forwarded_signals); i++)
                sigaddset(&s.blocked, forwarded_signals[i]);
        if (sigprocmask(SIG_BLOCK, &s.blocked, &s.saved) < 0) {
                say("sigprocmask: %m");
                return EXIT_SETUP_FAILED;
        }
        s.signal_fd = signalfd(-1, &s.blocked, SFD_NONBLOCK | SFD_CLOEXEC);
        s.epoll_fd = epoll_create1(EPOLL_CLOEXEC);
        if (s.signal_fd < 0 || s.epoll_fd < 0) {
                say("signalfd/epoll: %m");
                return EXIT_SETUP_FAILED;
        }
        enum tag signal_tag = TAG_SIGNAL;
        if (epoll_add(&s, s.signal_fd, EPOLLIN, &signal_tag) < 0) {
                say("epoll: %m");
                return EXIT_SETUP_FAILED;
        }

        loopback_up();

        /* Options come in pairs: --tcp-to-unix VALUE / --unix-to-tcp VALUE. */
        for (int i = 1; i < argc; i += 2) {
                if (streq(argv[i], "--")) {
                        principal_argv = argv + i + 1;
                        break;
                }
                bool tcp = streq(argv[i], "--tcp-to-unix");
                if ((!tcp && !streq(argv[i], "--unix-to-tcp")) || i + 1 >= argc) {
                        say("usage: openenvd-shim [--tcp-to-unix HOST:PORT=PATH] "
                            "[--unix-to-tcp PATH=HOST:PORT] -- PRINCIPAL [ARGS...]");
                        return EXIT_SETUP_FAILED;
                }
                r = forward_add(&s, tcp, argv[i + 1]);
                if (r < 0) {
                        errno = -r;
                        say("failed to start forwarders: %s: %m", argv[i + 1]);
                        return EXIT_SETUP_FAILED;
                }
        }
        if (!principal_argv || !principal_argv[0]) {
                say("no principal given");
                return EXIT_SETUP_FAILED;
        }

        /* Listeners exist before the principal starts, so it can connect
         * to them (and they to it) from its first instruction. */
        r = principal_spawn(&s, principal_argv, &s.principal);
        if (r < 0) {
                errno = -r;
                say("failed to start the principal: %s: %m", principal_argv[0]);
                return EXIT_EXEC_FAILED;
        }

        int code = EXIT_SETUP_FAILED;
        bool done = false;
        while (!done) {
                struct epoll_event evs[64];
                int n = epoll_wait(s.epoll_fd, evs, (int) ELEMENTSOF(evs), -1);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        say("epoll_wait: %m");
                        (void) kill(s.principal, SIGKILL);
                        break;
                }
                /* Signals first, so the principal's exit is seen even when
                 * connections are busy. A connection closed while handling
                 * one event may still have events later in this batch: it is
                 * only marked dead then, and freed after the batch. */
                for (int i = 0; i < n; i++)
                        if (*(enum tag *) evs[i].data.ptr == TAG_SIGNAL)
                                signal_event(&s, &code, &done);
                for (int i = 0; i < n && !done; i++) {
                        enum tag t = *(enum tag *) evs[i].data.ptr;
                        if (t == TAG_LISTENER) {
                                listener_event(&s, evs[i].data.ptr);
                        } else if (t == TAG_END) {
                                struct end *e = evs[i].data.ptr;
                                if (!e->conn->dead)
                                        conn_event(&s, e, evs[i].events);
                        }
                }
                conns_bury(&s);
        }

        /* Orphans that already exited are reaped; the rest die with us. */
        (void) reap_all(&s, &(int){ 0 });
        return code;
}
