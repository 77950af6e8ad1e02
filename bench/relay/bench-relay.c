/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench-relay: the external relay (src/relay/frontend.c) against the same
 * upstream reached directly, side by side in one run (issue 4 item 6).
 *
 * Three processes: the upstream (upstream.c, one thread per connection) on a
 * unix socket and on TCP 127.0.0.1; the relay (a frontend with trivial ops:
 * env traffic allowed, no-op hooks) on TCP 127.0.0.1 in front of the TCP
 * listener; and this process, the client. "direct" is the client talking TCP
 * to the upstream's TCP listener; "relay" is the client talking TCP to the
 * relay, which talks TCP to the upstream -- the deployed shape (the unit's
 * port reaches the env server over TCP from a socket made in its network
 * namespace), and both legs of the relay's path the transport of the direct
 * one. The latency tests also report "direct-unix" (the client on the
 * upstream's unix socket).
 *
 *   bench-relay [-n REQS] [--ws-n MSGS] [--bulk-mb MB] [--bulk-reps N]
 *               [--wrk-duration S] [--only latency,wrk,bulk,ws]
 *
 * Latency samples are interleaved in blocks of 1000 requests (direct, unix,
 * relay, direct, ...) so that load from other processes on this shared
 * machine hits all paths alike. Timing is CLOCK_MONOTONIC per request. If
 * haproxy is installed, the latency tests add "haproxy" (one thread, HTTP
 * mode, keep-alive) in front of the same TCP listener: the competitor.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/command.h"
#include "base/fd-util.h"
#include "base/parse-util.h"
#include "base/util.h"
#include "base/event-loop.h"
#include "relay/credentials.h"
#include "relay/frontend.h"
#include "relay/listen-socket.h"
#include "upstream.h"

#define TOKEN       "bench-token-0123456789abcdef"
#define CLIENT_BUF  (64UL * 1024)
#define BULK_CHUNK  (1024 * 1024)
#define BLOCK       1000
#define WARMUP      500
#define MAX_TARGETS 4

struct target {
        const char *name;
        uint16_t port;    /* TCP 127.0.0.1, or 0: */
        const char *path; /* unix socket */
};

struct client {
        int fd;
        size_t start, end;
        char buf[CLIENT_BUF];
};

static double now_us(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec * 1e6 + (double) ts.tv_nsec / 1e3;
}

static _Noreturn void die(const char *what)
{
        fprintf(stderr, "bench-relay: %s: %s\n", what, strerror(errno));
        exit(1);
}

static int cmp_double(const void *a, const void *b)
{
        double x = *(const double *) a, y = *(const double *) b;
        return x < y ? -1 : x > y;
}

static double percentile(const double *sorted, size_t n, double p)
{
        size_t i = (size_t) (p * (double) (n - 1) + 0.5);
        return sorted[i < n ? i : n - 1];
}

/* --- client ---------------------------------------------------------------- */

static int target_connect(const struct target *t)
{
        struct timeval tv = { .tv_sec = 60 };
        int fd;

        if (t->port) {
                struct sockaddr_in sa = { .sin_family = AF_INET,
                                          .sin_port = htons(t->port),
                                          .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
                fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
                if (fd < 0 || connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0)
                        die("connect tcp");
                (void) setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &(int){ 1 }, sizeof(int));
        } else {
                struct sockaddr_un sa = { .sun_family = AF_UNIX };
                snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", t->path);
                fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
                if (fd < 0 || connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0)
                        die("connect unix");
        }
        /* A safety net against a hang, never a synchronisation. */
        (void) setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        return fd;
}

static struct client *client_new(const struct target *t)
{
        struct client *c = xmalloc(sizeof(*c));
        c->fd = target_connect(t);
        c->start = c->end = 0;
        return c;
}

static void client_free(struct client *c)
{
        if (c) {
                close(c->fd);
                free(c);
        }
}

static void send_all_or_die(int fd, const void *p, size_t n)
{
        if (write_all(fd, p, n) < 0)
                die("send");
}

static void client_fill(struct client *c)
{
        ssize_t n;

        if (c->start == c->end)
                c->start = c->end = 0;
        else if (c->end == CLIENT_BUF) {
                memmove(c->buf, c->buf + c->start, c->end - c->start);
                c->end -= c->start;
                c->start = 0;
        }
        n = recv(c->fd, c->buf + c->end, CLIENT_BUF - c->end, 0);
        if (n <= 0) {
                if (n == 0)
                        errno = ECONNRESET;
                die("recv");
        }
        c->end += (size_t) n;
}

/* Reads one response head; returns the status, *ret_len the Content-Length. */
static unsigned client_read_head(struct client *c, unsigned long long *ret_len)
{
        char head[4096], *end, *cl;
        size_t hl;
        unsigned status = 0;

        while (!(end = memmem(c->buf + c->start, c->end - c->start, "\r\n\r\n", 4)))
                client_fill(c);
        hl = (size_t) (end + 4 - (c->buf + c->start));
        if (hl >= sizeof(head)) {
                errno = EMSGSIZE;
                die("response head");
        }
        memcpy(head, c->buf + c->start, hl);
        head[hl] = '\0';
        c->start += hl;
        if (sscanf(head, "HTTP/1.%*1[01] %3u", &status) != 1) {
                errno = EPROTO;
                die("response status");
        }
        cl = strcasestr(head, "\r\ncontent-length:");
        *ret_len = cl ? strtoull(cl + 17, NULL, 10) : 0;
        return status;
}

/* Drops len body bytes, reading straight into the buffer. */
static void client_skip(struct client *c, unsigned long long len)
{
        while (len > 0) {
                size_t have = c->end - c->start, k;
                if (have == 0) {
                        client_fill(c);
                        continue;
                }
                k = have < len ? have : (size_t) len;
                c->start += k;
                len -= k;
        }
}

static unsigned client_roundtrip(struct client *c, const char *req, size_t len)
{
        unsigned long long body;
        unsigned status;

        send_all_or_die(c->fd, req, len);
        status = client_read_head(c, &body);
        client_skip(c, body);
        return status;
}

/* --- latency ------------------------------------------------------------------ */

struct stats {
        double p50, p99, mean;
};

static struct stats stats_of(double *v, size_t n)
{
        double sum = 0;
        for (size_t i = 0; i < n; i++)
                sum += v[i];
        qsort(v, n, sizeof(*v), cmp_double);
        return (struct stats){ percentile(v, n, 0.50), percentile(v, n, 0.99), sum / (double) n };
}

static void bench_latency(const char *label, const char *req, const struct target *targets,
                          size_t n_targets, size_t n, struct stats *ret)
{
        struct client *cl[MAX_TARGETS];
        double *v[MAX_TARGETS];
        size_t reqlen = strlen(req);

        for (size_t t = 0; t < n_targets; t++) {
                cl[t] = client_new(&targets[t]);
                v[t] = xcalloc(n, sizeof(double));
                for (size_t i = 0; i < WARMUP; i++)
                        if (client_roundtrip(cl[t], req, reqlen) != 200) {
                                fprintf(stderr, "bench-relay: %s via %s: not 200\n", label,
                                        targets[t].name);
                                exit(1);
                        }
        }
        for (size_t done = 0; done < n; done += BLOCK)
                for (size_t t = 0; t < n_targets; t++)
                        for (size_t i = done; i < n && i < done + BLOCK; i++) {
                                double t0 = now_us();
                                unsigned st = client_roundtrip(cl[t], req, reqlen);
                                v[t][i] = now_us() - t0;
                                if (st != 200) {
                                        fprintf(stderr, "bench-relay: %s via %s: status %u\n",
                                                label, targets[t].name, st);
                                        exit(1);
                                }
                        }
        for (size_t t = 0; t < n_targets; t++) {
                ret[t] = stats_of(v[t], n);
                free(v[t]);
                client_free(cl[t]);
        }
}

/* --- wrk --------------------------------------------------------------------- */

static double run_wrk(const struct target *t, unsigned duration_s, double *ret_avg_latency_us)
{
        char url[64], dur[16], hdr[128], out[8192];
        size_t len = 0;
        int p[2], status;
        pid_t pid;
        const char *rps, *lat;

        snprintf(url, sizeof(url), "http://127.0.0.1:%u/state", (unsigned) t->port);
        snprintf(dur, sizeof(dur), "%us", duration_s);
        snprintf(hdr, sizeof(hdr), "Authorization: Bearer %s", TOKEN);
        if (pipe2(p, O_CLOEXEC) < 0)
                die("pipe");
        pid = fork();
        if (pid < 0)
                die("fork");
        if (pid == 0) {
                char *argv[] = { (char *) "wrk",
                                 (char *) "-t2",
                                 (char *) "-c32",
                                 (char *) "-d",
                                 dur,
                                 (char *) "-H",
                                 hdr,
                                 url,
                                 NULL };
                if (dup2(p[1], STDOUT_FILENO) < 0)
                        _exit(126);
                execvp("wrk", argv);
                _exit(127);
        }
        close(p[1]);
        for (;;) {
                ssize_t k = read(p[0], out + len, sizeof(out) - 1 - len);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        break;
                len += (size_t) k;
        }
        close(p[0]);
        out[len] = '\0';
        if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
                fprintf(stderr, "bench-relay: wrk failed:\n%s\n", out);
                exit(1);
        }
        if (strstr(out, "Non-2xx")) {
                fprintf(stderr, "bench-relay: wrk saw errors:\n%s\n", out);
                exit(1);
        }
        rps = strstr(out, "Requests/sec:");
        lat = strstr(out, "Latency");
        *ret_avg_latency_us = NAN;
        if (lat) {
                char unit[8] = "";
                double x;
                if (sscanf(lat, "Latency %lf%7s", &x, unit) == 2)
                        *ret_avg_latency_us = streq(unit, "us")   ? x
                                              : streq(unit, "ms") ? x * 1e3
                                                                  : x * 1e6;
        }
        return rps ? strtod(rps + 13, NULL) : NAN;
}

/* --- bulk ---------------------------------------------------------------------- */

static char bulk_buf[BULK_CHUNK];

/* Seconds to upload bytes and get the answer. */
static double bulk_upload(const struct target *t, unsigned long long bytes)
{
        struct client *c = client_new(t);
        char head[256];
        int n = snprintf(head, sizeof(head),
                         "POST /upload HTTP/1.1\r\nHost: bench\r\nAuthorization: Bearer " TOKEN
                         "\r\nContent-Length: %llu\r\n\r\n",
                         bytes);
        unsigned long long left = bytes, body;
        double t0 = now_us();

        send_all_or_die(c->fd, head, (size_t) n);
        while (left > 0) {
                size_t k = left < BULK_CHUNK ? (size_t) left : BULK_CHUNK;
                send_all_or_die(c->fd, bulk_buf, k);
                left -= k;
        }
        if (client_read_head(c, &body) != 200) {
                fprintf(stderr, "bench-relay: upload via %s: not 200\n", t->name);
                exit(1);
        }
        client_skip(c, body);
        t0 = (now_us() - t0) / 1e6;
        client_free(c);
        return t0;
}

static double bulk_download(const struct target *t, unsigned long long bytes)
{
        struct client *c = client_new(t);
        char req[256];
        int n = snprintf(req, sizeof(req),
                         "GET /download?bytes=%llu HTTP/1.1\r\nHost: bench\r\n"
                         "Authorization: Bearer " TOKEN "\r\n\r\n",
                         bytes);
        unsigned long long body;
        double t0 = now_us();

        send_all_or_die(c->fd, req, (size_t) n);
        if (client_read_head(c, &body) != 200 || body != bytes) {
                fprintf(stderr, "bench-relay: download via %s: bad answer\n", t->name);
                exit(1);
        }
        body -= c->end - c->start;
        c->start = c->end;
        while (body > 0) {
                ssize_t k =
                        recv(c->fd, bulk_buf, body < BULK_CHUNK ? (size_t) body : BULK_CHUNK, 0);
                if (k <= 0)
                        die("download recv");
                body -= (unsigned long long) k;
        }
        t0 = (now_us() - t0) / 1e6;
        client_free(c);
        return t0;
}

/* --- WebSocket ------------------------------------------------------------------ */

static struct client *ws_open(const struct target *t)
{
        struct client *c = client_new(t);
        char req[512];
        unsigned long long body;
        int n = snprintf(req, sizeof(req),
                         "GET /ws HTTP/1.1\r\nHost: bench\r\nAuthorization: Bearer %s\r\n"
                         "Upgrade: websocket\r\nConnection: Upgrade\r\n"
                         "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                         "Sec-WebSocket-Version: 13\r\n\r\n",
                         TOKEN);

        send_all_or_die(c->fd, req, (size_t) n);
        if (client_read_head(c, &body) != 101) {
                fprintf(stderr, "bench-relay: ws upgrade via %s refused\n", t->name);
                exit(1);
        }
        return c;
}

/* One masked text frame out, its echo back. */
static void ws_roundtrip(struct client *c, const uint8_t *frame, size_t flen, size_t plen)
{
        send_all_or_die(c->fd, frame, flen);
        while (c->end - c->start < 2)
                client_fill(c);
        if ((uint8_t) c->buf[c->start] != 0x81 || (size_t) (c->buf[c->start + 1] & 0x7f) != plen) {
                errno = EPROTO;
                die("ws echo frame");
        }
        while (c->end - c->start < 2 + plen)
                client_fill(c);
        c->start += 2 + plen;
}

static void bench_ws(const struct target *targets, size_t n_targets, size_t n, struct stats *ret)
{
        static const char msg[] = "{\"type\":\"step\",\"action\":{\"message\":\"hello\"}}";
        const uint8_t mask[4] = { 0x12, 0x34, 0x56, 0x78 };
        uint8_t frame[6 + sizeof(msg)];
        size_t plen = sizeof(msg) - 1;
        struct client *cl[MAX_TARGETS];
        double *v[MAX_TARGETS];

        frame[0] = 0x81;
        frame[1] = (uint8_t) (0x80 | plen);
        memcpy(frame + 2, mask, 4);
        for (size_t i = 0; i < plen; i++)
                frame[6 + i] = (uint8_t) msg[i] ^ mask[i & 3];
        for (size_t t = 0; t < n_targets; t++) {
                cl[t] = ws_open(&targets[t]);
                v[t] = xcalloc(n, sizeof(double));
                for (size_t i = 0; i < WARMUP; i++)
                        ws_roundtrip(cl[t], frame, 6 + plen, plen);
        }
        for (size_t done = 0; done < n; done += BLOCK)
                for (size_t t = 0; t < n_targets; t++)
                        for (size_t i = done; i < n && i < done + BLOCK; i++) {
                                double t0 = now_us();
                                ws_roundtrip(cl[t], frame, 6 + plen, plen);
                                v[t][i] = now_us() - t0;
                        }
        for (size_t t = 0; t < n_targets; t++) {
                ret[t] = stats_of(v[t], n);
                free(v[t]);
                client_free(cl[t]);
        }
}

/* --- the relay process -------------------------------------------------------- */

static bool ops_allowed(void *ud, unsigned lane)
{
        (void) ud, (void) lane;
        return true;
}
static void ops_hook(void *ud, unsigned lane)
{
        (void) ud, (void) lane;
}
static void ops_action(void *ud, unsigned lane, const struct openenv_action *a)
{
        (void) ud, (void) lane, (void) a;
}
static const char *ops_phase(void *ud)
{
        (void) ud;
        return "running";
}
static void ops_control(void *ud, const struct frontend_request *req, struct frontend_reply *reply)
{
        (void) ud, (void) req;
        reply->status = 200;
}
static const struct frontend_ops bench_ops = {
        .control = ops_control,
        .env_traffic_allowed = ops_allowed,
        .phase = ops_phase,
        .on_action = ops_action,
        .on_done = ops_hook,
};

/* SIGTERM ends the relay through exit(), so that a profiler running the
 * bench (valgrind --tool=callgrind) writes the relay's counts. */
static int relay_on_term(struct loop_source *s, const struct signalfd_siginfo *si, void *ud)
{
        (void) s, (void) si, (void) ud;
        exit(0);
}

/* The relay's upstream sockets, as the daemon's unit_env_tcp_socket() makes
 * them (there in the env server's network namespace). */
static int bench_tcp_socket(void *ud, unsigned lane, int family)
{
        int fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

        (void) ud, (void) lane;
        return fd < 0 ? -errno : fd;
}

static pid_t spawn_relay(int listen_fd, uint16_t up_port)
{
        pid_t pid = fork();

        if (pid < 0)
                die("fork");
        if (pid == 0) {
                const struct credentials creds = { .orchestrator = (char *) TOKEN };
                struct frontend_config cfg = { .creds = &creds };
                const struct frontend_env env = { .make_socket = bench_tcp_socket,
                                                  .port = up_port };
                struct frontend *f = NULL;
                struct loop *l = NULL;
                struct loop_source *term = NULL;
                (void) prctl(PR_SET_NAME, "bench-relay-fe");
                (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
                if (loop_new(&l) < 0 ||
                    frontend_new(l, listen_fd, &cfg, &bench_ops, NULL, &f) < 0 ||
                    frontend_set_env(f, 0, &env) < 0 ||
                    loop_add_signal(l, SIGTERM, relay_on_term, NULL, &term) < 0)
                        _exit(1);
                (void) loop_run(l);
                _exit(1);
        }
        close(listen_fd);
        return pid;
}

static pid_t spawn_upstream(int unix_fd, int tcp_fd)
{
        pid_t pid = fork();

        if (pid < 0)
                die("fork");
        if (pid == 0) {
                int fds[2] = { unix_fd, tcp_fd };
                (void) prctl(PR_SET_NAME, "bench-upstream");
                (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
                /* socket_listen_*() makes non-blocking sockets; the upstream blocks. */
                for (int i = 0; i < 2; i++)
                        (void) fcntl(fds[i], F_SETFL, 0);
                upstream_serve(&(struct upstream_options){ .listen_fds = fds, .n_listen_fds = 2 });
        }
        close(unix_fd);
        close(tcp_fd);
        return pid;
}

/* HAProxy (if installed) in front of the same TCP listener, as a competitor:
 * an established HTTP proxy, one thread like the relay, keep-alive on both
 * sides, accepting on listen_fd (inherited as fd 3). Its configuration is
 * checked first (haproxy -c): 0 if it is missing or refuses it. */
static pid_t spawn_haproxy(int listen_fd, uint16_t up_port, const char *dir)
{
        char cfg[300], log[300];
        struct command_output out;
        FILE *f;
        pid_t pid;
        int r;

        snprintf(cfg, sizeof(cfg), "%s/haproxy.cfg", dir);
        snprintf(log, sizeof(log), "%s/haproxy.log", dir);
        f = fopen(cfg, "we");
        if (!f)
                die("haproxy.cfg");
        fprintf(f,
                "global\n  nbthread 1\n  maxconn 4096\n"
                "defaults\n  mode http\n  timeout connect 5s\n  timeout client 60s\n"
                "  timeout server 60s\n  http-reuse always\n  option splice-auto\n"
                "frontend fe\n  bind fd@3\n  default_backend be\n"
                "backend be\n  server up 127.0.0.1:%u\n",
                (unsigned) up_port);
        fclose(f);
        char *check[] = {
                (char *) "haproxy", (char *) "-c", (char *) "-q", (char *) "-f", cfg, NULL
        };
        r = command_run(&(const struct command_spec){ .argv = check,
                                                      .stdin_fd = -EBADF,
                                                      .pass_fds = &listen_fd,
                                                      .n_pass = 1,
                                                      .max_out = 4096,
                                                      .cancel_fd = -EBADF },
                        &out);
        if (r < 0 || out.exit_status != 0) {
                printf("# haproxy: unavailable (%s)\n", r == -ENOENT ? "not installed"
                                                        : r < 0      ? strerror(-r)
                                                                     : "refused its configuration");
                if (r >= 0)
                        command_output_done(&out);
                return 0;
        }
        command_output_done(&out);
        pid = fork();
        if (pid < 0)
                die("fork");
        if (pid == 0) {
                int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
                if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0 || dup2(fd, STDERR_FILENO) < 0 ||
                    dup2(listen_fd, 3) < 0)
                        _exit(126);
                (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
                execlp("haproxy", "haproxy", "-db", "-f", cfg, (char *) NULL);
                _exit(127);
        }
        return pid;
}

/* CPU seconds (user + system) a process has used so far, from /proc. */
static double proc_cpu_s(pid_t pid)
{
        char path[64], buf[1024], *p;
        unsigned long long ut = 0, st = 0;
        size_t len;
        FILE *f;

        snprintf(path, sizeof(path), "/proc/%d/stat", (int) pid);
        f = fopen(path, "re");
        if (!f)
                return NAN;
        len = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
        buf[len] = '\0';
        p = strrchr(buf, ')'); /* comm may contain spaces */
        if (!p ||
            sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
                return NAN;
        return (double) (ut + st) / (double) sysconf(_SC_CLK_TCK);
}

/* CPU seconds so far of this process (the client), the relay and the
 * upstream (its exited threads included: /proc/PID/stat sums them). */
static void cpu_of_three(pid_t relay, pid_t up, double ret[3])
{
        struct timespec ts;

        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
        ret[0] = (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
        ret[1] = proc_cpu_s(relay);
        ret[2] = proc_cpu_s(up);
}

/* Context switches (voluntary + involuntary) of the live threads of a
 * process: each voluntary one is a sleep, so a wake-up, of that thread. */
static double proc_switches(pid_t pid)
{
        char path[64];
        double total = 0;
        snprintf(path, sizeof(path), "/proc/%d/task", (int) pid);
        DIR *d = opendir(path);
        struct dirent *de;
        if (!d)
                return NAN;
        while ((de = readdir(d))) {
                char spath[400], line[256];
                if (de->d_name[0] == '.')
                        continue;
                snprintf(spath, sizeof(spath), "%s/%s/status", path, de->d_name);
                FILE *f = fopen(spath, "re");
                if (!f)
                        continue; /* the thread has ended */
                while (fgets(line, sizeof(line), f)) {
                        unsigned long long v;
                        if (sscanf(line, "voluntary_ctxt_switches: %llu", &v) == 1 ||
                            sscanf(line, "nonvoluntary_ctxt_switches: %llu", &v) == 1)
                                total += (double) v;
                }
                fclose(f);
        }
        closedir(d);
        return total;
}

/* --- main ----------------------------------------------------------------------- */

static bool only_has(const char *only, const char *what)
{
        size_t wl = strlen(what);
        if (!only)
                return true;
        for (const char *p = only; (p = strstr(p, what)); p += wl)
                if ((p == only || p[-1] == ',') && (p[wl] == ',' || p[wl] == '\0'))
                        return true;
        return false;
}

static const char *met(bool ok)
{
        return ok ? "met" : "MISSED";
}

int main(int argc, char **argv)
{
        unsigned n = 20000, ws_n = 20000, bulk_mb = 100, bulk_reps = 3, wrk_s = 10;
        const char *only = NULL;
        char tmpdir[] = "/tmp/bench-relay-XXXXXX", sock[256];
        int ufd, tfd, rfd, hfd;
        uint16_t up_port, relay_port, haproxy_port;
        pid_t up_pid, relay_pid, haproxy_pid;

        for (int i = 1; i < argc; i++) {
                unsigned *dst = streq(argv[i], "-n")               ? &n
                                : streq(argv[i], "--ws-n")         ? &ws_n
                                : streq(argv[i], "--bulk-mb")      ? &bulk_mb
                                : streq(argv[i], "--bulk-reps")    ? &bulk_reps
                                : streq(argv[i], "--wrk-duration") ? &wrk_s
                                                                   : NULL;
                if (i + 1 < argc && streq(argv[i], "--only")) {
                        only = argv[++i];
                        continue;
                }
                if (!dst || i + 1 >= argc || parse_uint(argv[++i], 1, 10000000, dst) < 0) {
                        fputs("usage: bench-relay [-n REQS] [--ws-n MSGS] [--bulk-mb MB] "
                              "[--bulk-reps N] [--wrk-duration S] [--only latency,wrk,bulk,ws]\n",
                              stderr);
                        return 2;
                }
        }

        setvbuf(stdout, NULL, _IOLBF, 0); /* pids first: run.sh may profile them */
        signal(SIGPIPE, SIG_IGN);
        if (!mkdtemp(tmpdir))
                die("mkdtemp");
        snprintf(sock, sizeof(sock), "%s/env.sock", tmpdir);
        if (socket_listen_unix(sock, 0600, &ufd) < 0 ||
            socket_listen_tcp("127.0.0.1", 0, &tfd) < 0 || socket_local_port(tfd, &up_port) < 0 ||
            socket_listen_tcp("127.0.0.1", 0, &rfd) < 0 ||
            socket_local_port(rfd, &relay_port) < 0 ||
            socket_listen_tcp("127.0.0.1", 0, &hfd) < 0 ||
            socket_local_port(hfd, &haproxy_port) < 0)
                die("listen");
        /* Connections queue in the backlogs until the children accept: no wait. */
        up_pid = spawn_upstream(ufd, tfd);
        relay_pid = spawn_relay(rfd, up_port);
        haproxy_pid = spawn_haproxy(hfd, up_port, tmpdir);
        close(hfd);
        printf("# upstream pid %d (unix %s, tcp 127.0.0.1:%u), relay pid %d (tcp 127.0.0.1:%u, "
               "to the upstream over tcp)\n",
               (int) up_pid, sock, (unsigned) up_port, (int) relay_pid, (unsigned) relay_port);
        if (haproxy_pid > 0)
                printf("# haproxy pid %d (tcp 127.0.0.1:%u, to the upstream over tcp)\n",
                       (int) haproxy_pid, (unsigned) haproxy_port);

        const struct target direct = { "direct", up_port, NULL };
        const struct target direct_unix = { "direct-unix", 0, sock };
        const struct target relay = { "relay", relay_port, NULL };
        const struct target haproxy = { "haproxy", haproxy_port, NULL };
        const struct target lat_targets[] = { direct, direct_unix, relay, haproxy };
        const size_t n_lat = haproxy_pid > 0 ? 4 : 3;
        bool all_met = true;

        printf("%-34s %12s %12s %12s %14s  %s\n", "metric", "direct", "direct-unix", "relay",
               "relay vs direct", "target");
        if (only_has(only, "latency")) {
                static const char *const reqs[][2] = {
                        { "GET /state", "GET /state HTTP/1.1\r\nHost: bench\r\n"
                                        "Authorization: Bearer " TOKEN "\r\n\r\n" },
                        { "POST /step", "POST /step HTTP/1.1\r\nHost: bench\r\n"
                                        "Authorization: Bearer " TOKEN "\r\n"
                                        "Content-Type: application/json\r\nContent-Length: 32\r\n"
                                        "\r\n{\"action\":{\"message\":\"hello\"}}  " },
                };
                for (size_t r = 0; r < ELEMENTSOF(reqs); r++) {
                        struct stats s[MAX_TARGETS];
                        bool ok;
                        double cpu0 = proc_cpu_s(relay_pid), ucpu0 = proc_cpu_s(up_pid), cpu, ucpu;
                        double sw0 = proc_switches(relay_pid), hcpu0 = 0, hsw0 = 0, hcpu, hsw;
                        if (n_lat > 3) {
                                hcpu0 = proc_cpu_s(haproxy_pid);
                                hsw0 = proc_switches(haproxy_pid);
                        }
                        bench_latency(reqs[r][0], reqs[r][1], lat_targets, n_lat, n, s);
                        cpu = proc_cpu_s(relay_pid) - cpu0;
                        ucpu = proc_cpu_s(up_pid) - ucpu0;
                        double sw = proc_switches(relay_pid) - sw0;
                        hcpu = n_lat > 3 ? proc_cpu_s(haproxy_pid) - hcpu0 : 0;
                        hsw = n_lat > 3 ? proc_switches(haproxy_pid) - hsw0 : 0;
                        ok = s[2].p50 - s[0].p50 <= 25.0;
                        all_met &= ok;
                        printf("%-34s %12.1f %12.1f %12.1f %+12.1fus  <= +25us at p50: %s\n",
                               xasprintf("latency %s p50 (us, n=%u)", reqs[r][0], n), s[0].p50,
                               s[1].p50, s[2].p50, s[2].p50 - s[0].p50, met(ok));
                        printf("%-34s %12.1f %12.1f %12.1f %+12.1fus\n",
                               xasprintf("latency %s p99 (us)", reqs[r][0]), s[0].p99, s[1].p99,
                               s[2].p99, s[2].p99 - s[0].p99);
                        printf("%-34s %12.1f %12.1f %12.1f %+12.1fus\n",
                               xasprintf("latency %s mean (us)", reqs[r][0]), s[0].mean, s[1].mean,
                               s[2].mean, s[2].mean - s[0].mean);
                        /* The relay served n + WARMUP of these; the upstream
                         * one set per target. */
                        double rc = cpu * 1e6 / (n + WARMUP),
                               uc = ucpu * 1e6 / ((double) n_lat * (n + WARMUP));
                        printf("%-34s %12s %12s %12.1f   (upstream: %.1f us/req) <= 2x upstream: "
                               "%s\n",
                               "  relay CPU per request (us)", "-", "-", rc, uc, met(rc <= 2 * uc));
                        all_met &= rc <= 2 * uc;
                        /* The upstream's per-connection threads end with their
                         * connections, and their counts with them: the relay's
                         * only (one thread). */
                        printf("%-34s %12s %12s %12.2f   (2 = one sleep per direction)\n",
                               "  context switches per request", "-", "-", sw / (n + WARMUP));
                        /* The competitor, same requests, same upstream, same
                         * blocks: what any proxy costs on this machine. */
                        if (n_lat > 3) {
                                double hc = hcpu * 1e6 / (n + WARMUP);
                                printf("%-34s %12s %12s %12.1f %+12.1fus  (relay %+.1f us)\n",
                                       "  haproxy p50 (us), added", "-", "-", s[3].p50,
                                       s[3].p50 - s[0].p50, s[2].p50 - s[3].p50);
                                printf("%-34s %12s %12s %12.1f   (relay / haproxy: %.2fx)\n",
                                       "  haproxy CPU per request (us)", "-", "-", hc, rc / hc);
                                printf("%-34s %12s %12s %12.2f\n",
                                       "  haproxy context switches/request", "-", "-",
                                       hsw / (n + WARMUP));
                        }
                        fflush(stdout);
                }
        }
        if (only_has(only, "wrk")) {
                double lat_d, lat_r, rps_d = run_wrk(&direct, wrk_s, &lat_d), rps_r, cpu0, cpu, sw0;
                bool ok;
                cpu0 = proc_cpu_s(relay_pid);
                sw0 = proc_switches(relay_pid);
                rps_r = run_wrk(&relay, wrk_s, &lat_r);
                cpu = proc_cpu_s(relay_pid) - cpu0;
                double sw = proc_switches(relay_pid) - sw0;
                ok = rps_r >= 0.8 * rps_d;
                all_met &= ok;
                printf("%-34s %12.0f %12s %12.0f %13.1f%%  >= 80%%: %s\n",
                       xasprintf("wrk -t2 -c32 -d%us req/s", wrk_s), rps_d, "-", rps_r,
                       100.0 * rps_r / rps_d, met(ok));
                printf("%-34s %12.1f %12s %12.1f %+12.1fus\n", "wrk avg latency (us)", lat_d, "-",
                       lat_r, lat_r - lat_d);
                printf("%-34s %12s %12s %12.1f   (%.0f%% of one CPU)\n",
                       "  relay CPU per request (us)", "-", "-", cpu * 1e6 / (rps_r * wrk_s),
                       100.0 * cpu / wrk_s);
                printf("%-34s %12s %12s %12.2f   (epoll batches requests of 32 connections)\n",
                       "  context switches per request", "-", "-", sw / (rps_r * wrk_s));
                fflush(stdout);
        }
        if (only_has(only, "bulk")) {
                unsigned long long bytes = (unsigned long long) bulk_mb * 1000000ULL;
                double up[3][64], down[3][64];
                /* CPU seconds of [target][upload, download][client, relay, upstream]. */
                double cpu[3][2][3] = {};
                /* HAProxy (splicing where it sees fit) is the floor of a relay
                 * that is a process of its own: same legs, same machine. */
                const struct target *bt[3] = { &direct, &relay, &haproxy };
                const int n_bt = haproxy_pid > 0 ? 3 : 2;
                if (bulk_reps > 64)
                        bulk_reps = 64;
                memset(bulk_buf, 'b', sizeof(bulk_buf));
                for (unsigned r = 0; r < bulk_reps; r++)
                        for (int t = 0; t < n_bt; t++) {
                                double c0[3], c1[3];
                                cpu_of_three(relay_pid, up_pid, c0);
                                up[t][r] = (double) bytes / 1e6 / bulk_upload(bt[t], bytes);
                                cpu_of_three(relay_pid, up_pid, c1);
                                for (int i = 0; i < 3; i++)
                                        cpu[t][0][i] += c1[i] - c0[i];
                                down[t][r] = (double) bytes / 1e6 / bulk_download(bt[t], bytes);
                                cpu_of_three(relay_pid, up_pid, c0);
                                for (int i = 0; i < 3; i++)
                                        cpu[t][1][i] += c0[i] - c1[i];
                        }
                for (int t = 0; t < n_bt; t++) {
                        qsort(up[t], bulk_reps, sizeof(double), cmp_double);
                        qsort(down[t], bulk_reps, sizeof(double), cmp_double);
                }
                double ud = up[0][bulk_reps / 2], ur = up[1][bulk_reps / 2];
                double dd = down[0][bulk_reps / 2], dr = down[1][bulk_reps / 2];
                bool ok_u = ur >= 0.9 * ud, ok_d = dr >= 0.9 * dd;
                all_met &= ok_u && ok_d;
                printf("%-34s %12.0f %12s %12.0f %13.1f%%  >= 90%%: %s\n",
                       xasprintf("upload %u MB, MB/s (median of %u)", bulk_mb, bulk_reps), ud, "-",
                       ur, 100.0 * ur / ud, met(ok_u));
                printf("%-34s %12.0f %12s %12.0f %13.1f%%  >= 90%%: %s\n",
                       xasprintf("download %u MB, MB/s (median of %u)", bulk_mb, bulk_reps), dd,
                       "-", dr, 100.0 * dr / dd, met(ok_d));
                if (n_bt > 2) {
                        double uh = up[2][bulk_reps / 2], dh = down[2][bulk_reps / 2];
                        printf("%-34s %12s %12s %12.0f %13.1f%%  (relay / haproxy: %.2fx)\n",
                               "  haproxy upload, MB/s", "-", "-", uh, 100.0 * uh / ud, ur / uh);
                        printf("%-34s %12s %12s %12.0f %13.1f%%  (relay / haproxy: %.2fx)\n",
                               "  haproxy download, MB/s", "-", "-", dh, 100.0 * dh / dd, dr / dh);
                }
                /* Where the CPU goes (all three processes share the
                 * machine's CPUs): per GB moved, over every repetition;
                 * direct's client and upstream, then the relayed path's. */
                for (int d = 0; d < 2; d++) {
                        double gb = (double) bytes * bulk_reps / 1e9;
                        printf("%-34s %12.2f %12s %12.2f   (client %.2f / %.2f, relay %.2f, "
                               "upstream %.2f / %.2f)\n",
                               d == 0 ? "  upload CPU s per GB, all"
                                      : "  download CPU s per GB, all",
                               (cpu[0][d][0] + cpu[0][d][2]) / gb, "-",
                               (cpu[1][d][0] + cpu[1][d][1] + cpu[1][d][2]) / gb, cpu[0][d][0] / gb,
                               cpu[1][d][0] / gb, cpu[1][d][1] / gb, cpu[0][d][2] / gb,
                               cpu[1][d][2] / gb);
                }
                fflush(stdout);
        }
        if (only_has(only, "ws")) {
                struct stats s[3];
                bench_ws(lat_targets, 3, ws_n, s);
                printf("%-34s %12.1f %12.1f %12.1f %+12.1fus  (no target)\n",
                       xasprintf("ws echo RTT p50 (us, n=%u)", ws_n), s[0].p50, s[1].p50, s[2].p50,
                       s[2].p50 - s[0].p50);
                printf("%-34s %12.1f %12.1f %12.1f %+12.1fus\n", "ws echo RTT p99 (us)", s[0].p99,
                       s[1].p99, s[2].p99, s[2].p99 - s[0].p99);
        }
        printf("# targets: %s\n", all_met ? "all met" : "some MISSED");

        kill(relay_pid, SIGTERM);
        kill(up_pid, SIGKILL);
        if (haproxy_pid > 0) {
                kill(haproxy_pid, SIGTERM);
                (void) waitpid(haproxy_pid, NULL, 0);
        }
        (void) waitpid(relay_pid, NULL, 0);
        (void) waitpid(up_pid, NULL, 0);
        (void) rm_rf_at(AT_FDCWD, tmpdir);
        return 0;
}
