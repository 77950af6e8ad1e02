/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The relay tests' harness (relay-test.h): a byte-exact Python upstream
 * (upstream.py) on a unix socket in a temp dir, the relay's loop in a
 * thread, raw C clients on 127.0.0.1, and a stub of the unit behind the
 * frontend. Synchronisation is by I/O only: the upstream's socket exists
 * before it starts, hooks run before the bytes that trigger them are
 * forwarded, and reads have a generous SO_RCVTIMEO only as a safety net.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>

#include "base/event-loop.h"
#include "base/fd-util.h"
#include "base/macro.h"
#include "base/util.h"
#include "relay/credentials.h"
#include "relay/frontend.h"
#include "relay/http-chunked.h"
#include "relay/http-head.h"
#include "relay/listen-socket.h"
#include "relay/service-relay.h"
#include "relay-test.h"
#include "test-helpers.h"

char tmpdir[] = "/tmp/relay-test-XXXXXX";
pid_t upstream_pid = -1;
struct loop *loop;
char env_sock[256];
struct frontend *fe;
struct service_relay *sr;
uint16_t fe_port;
struct stub_unit unit_stub = { .env_allowed = 1 };

static struct credentials creds;
static char *agent_paths[] = { (char *) "/tools/run", NULL };
static int quit_efd = -EBADF, cmd_efd = -EBADF;
static struct loop_source *quit_src, *cmd_src;
static pthread_t loop_thread;
static bool loop_started;
static struct {
        frontend_done_fn done;
        void *cookie;
} waiting[64];
static size_t n_waiting;
static unsigned n_lanes;
static pid_t lane_pids[8];

/* --- the unit stub (runs on the loop thread) --- */

static void stub_control(void *ud, const struct frontend_request *req, struct frontend_reply *reply)
{
        const char *path = req->route;
        const char *method = streq(path, "/info") || streq(path, "/verdict") ||
                                             streq(path, "/logs") || streq(path, "/metrics")
                                     ? "GET"
                                     : "POST";
        (void) ud;
        __atomic_add_fetch(&unit_stub.controls, 1, __ATOMIC_SEQ_CST);
        snprintf(unit_stub.last_control_body, sizeof(unit_stub.last_control_body), "%.*s",
                 (int) req->body_len, req->body);
        if (streq(path, "/resume")) {
                reply->status = 409;
                reply->error_code = "conflict";
                return;
        }
        reply->status = 200;
        if (streq(path, "/metrics")) {
                /* A text answer with the unit's own content type. */
                reply->text = xstrdup("# TYPE m gauge\nm 1\n");
                reply->text_len = strlen(reply->text);
                reply->content_type = "text/plain; version=0.0.4; charset=utf-8";
                return;
        }
        reply->json = xasprintf("{\"method\":\"%s\",\"path\":\"%s\"}", method, path);
}

static bool stub_allowed(void *ud, unsigned lane)
{
        (void) ud;
        (void) lane;
        return __atomic_load_n(&unit_stub.env_allowed, __ATOMIC_SEQ_CST);
}

static const char *stub_phase(void *ud)
{
        (void) ud;
        return stub_allowed(NULL, 0) ? "ready" : "closed";
}

static bool stub_ready(void *ud, char **ret_reason)
{
        (void) ud;
        if (!__atomic_load_n(&unit_stub.not_ready, __ATOMIC_SEQ_CST))
                return true;
        *ret_reason = xstrdup("the first episode is still \"starting\"\n");
        return false;
}

static int stub_request_episode(void *ud, unsigned lane, frontend_done_fn done, void *cookie)
{
        (void) ud;
        (void) lane;
        __atomic_add_fetch(&unit_stub.episode_requests, 1, __ATOMIC_SEQ_CST);
        if (stub_allowed(NULL, 0))
                return 0;
        cr_assert_lt(n_waiting, ELEMENTSOF(waiting));
        waiting[n_waiting].done = done;
        waiting[n_waiting++].cookie = cookie;
        return 1;
}

static void stub_forget(void *ud, void *cookie)
{
        (void) ud;
        for (size_t i = 0; i < n_waiting; i++)
                if (waiting[i].cookie == cookie)
                        waiting[i] = waiting[--n_waiting];
}

static void stub_action(void *ud, unsigned lane, const struct openenv_action *a)
{
        (void) ud;
        __atomic_store_n(&unit_stub.last_lane, (int) lane, __ATOMIC_SEQ_CST);
        (void) snprintf(unit_stub.last_action_via, sizeof(unit_stub.last_action_via), "%s", a->via);
        (void) snprintf(unit_stub.last_action, sizeof(unit_stub.last_action), "%.*s",
                        a->data ? (int) MIN(a->len, (size_t) 255) : 0, a->data ?: "");
        unit_stub.last_action_whole = a->data != NULL;
        __atomic_add_fetch(&unit_stub.actions, a->n, __ATOMIC_SEQ_CST);
}

static void stub_done(void *ud, unsigned lane)
{
        (void) ud;
        __atomic_store_n(&unit_stub.last_lane, (int) lane, __ATOMIC_SEQ_CST);
        __atomic_add_fetch(&unit_stub.dones, 1, __ATOMIC_SEQ_CST);
}

/* Lanes: the lowest free one, as the unit gives them. */
static int stub_acquire(void *ud)
{
        (void) ud;
        for (unsigned i = 0; i < n_lanes; i++)
                if (!(unit_stub.lanes_held & (1 << i))) {
                        __atomic_or_fetch(&unit_stub.lanes_held, 1 << i, __ATOMIC_SEQ_CST);
                        return (int) i;
                }
        return -EBUSY;
}

static void stub_release(void *ud, unsigned lane)
{
        (void) ud;
        cr_assert(unit_stub.lanes_held & (1 << lane), "lane %u given back twice", lane);
        __atomic_and_fetch(&unit_stub.lanes_held, ~(1 << lane), __ATOMIC_SEQ_CST);
        __atomic_add_fetch(&unit_stub.releases, 1, __ATOMIC_SEQ_CST);
}

static const struct frontend_ops stub_ops = {
        .control = stub_control,
        .env_traffic_allowed = stub_allowed,
        .phase = stub_phase,
        .ready = stub_ready,
        .request_episode = stub_request_episode,
        .forget = stub_forget,
        .on_action = stub_action,
        .on_done = stub_done,
        .acquire = stub_acquire,
        .release = stub_release,
};

/* Commands from the test thread, carried out on the loop thread (the
 * frontend is not thread-safe): the episode starts or ends. */
static int on_cmd(struct loop_source *s, int fd, uint32_t ev, void *ud)
{
        uint64_t v;

        (void) s;
        (void) ev;
        (void) ud;
        if (read(fd, &v, sizeof(v)) != sizeof(v))
                return 0;
        if (v >= 16) { /* lane v - 16's episode ends */
                (void) frontend_set_env(fe, (unsigned) v - 16, NULL);
        } else if (v == 1) { /* the episode ends */
                __atomic_store_n(&unit_stub.env_allowed, 0, __ATOMIC_SEQ_CST);
                (void) frontend_set_env(fe, 0, NULL);
        } else if (v == 3) { /* the next one fails to start */
                __atomic_store_n(&unit_stub.not_ready, 1, __ATOMIC_SEQ_CST);
                while (n_waiting > 0) {
                        n_waiting--;
                        waiting[n_waiting].done(waiting[n_waiting].cookie, -EIO);
                }
        } else { /* a new episode is live: the waiting clients first */
                __atomic_store_n(&unit_stub.env_allowed, 1, __ATOMIC_SEQ_CST);
                (void) frontend_set_env(fe, 0, &(struct frontend_env){ .socket = env_sock });
                while (n_waiting > 0) {
                        n_waiting--;
                        waiting[n_waiting].done(waiting[n_waiting].cookie, 0);
                }
        }
        __atomic_add_fetch(&unit_stub.commands_done, 1, __ATOMIC_SEQ_CST);
        return 0;
}

static void stub_command(uint64_t v)
{
        int before = __atomic_load_n(&unit_stub.commands_done, __ATOMIC_SEQ_CST);

        cr_assert(write(cmd_efd, &v, sizeof(v)) == sizeof(v));
        /* eventfd adds up values: one command at a time. */
        while (__atomic_load_n(&unit_stub.commands_done, __ATOMIC_SEQ_CST) == before)
                usleep(1000);
}

void stub_end_episode(void)
{
        stub_command(1);
}

void stub_start_episode(void)
{
        stub_command(2);
}

void stub_fail_episode(void)
{
        stub_command(3);
}

void stub_end_lane(unsigned lane)
{
        stub_command(16 + lane);
}

/* --- processes and the loop thread --- */

/* The test creates the upstream's listening socket and hands it over as
 * fd 3: connections queue in the backlog until the script accepts them, so
 * there is nothing to wait for. */
pid_t spawn_upstream(char *const argv[], int listen_fd)
{
        pid_t pid = fork();

        cr_assert(pid >= 0);
        if (pid == 0) {
                if (dup2(listen_fd, 3) < 0)
                        _exit(126);
                /* dup2() onto itself keeps CLOEXEC: clear it explicitly. */
                (void) fcntl(3, F_SETFD, 0);
                (void) fcntl(3, F_SETFL, 0);
                execv(argv[0], argv);
                _exit(127);
        }
        close(listen_fd);
        return pid;
}

pid_t spawn_unix_upstream(const char *path)
{
        char *argv[] = { (char *) "/usr/bin/python3", (char *) TEST_SRCDIR "/relay/upstream.py",
                         (char *) "unix", NULL };
        int fd;
        cr_assert(socket_listen_unix(path, 0600, &fd) == 0);
        return spawn_upstream(argv, fd);
}

static int on_quit(struct loop_source *s, int fd, uint32_t ev, void *ud)
{
        (void) s;
        (void) fd;
        (void) ev;
        (void) ud;
        loop_quit(loop, 0);
        return 0;
}

static void *loop_main(void *arg)
{
        (void) arg;
        loop_run(loop);
        return NULL;
}

void test_loop_new(void)
{
        cr_assert(loop_new(&loop) == 0);
        quit_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        cmd_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        cr_assert(loop_add_io(loop, quit_efd, EPOLLIN, on_quit, NULL, &quit_src) == 0);
        cr_assert(loop_add_io(loop, cmd_efd, EPOLLIN, on_cmd, NULL, &cmd_src) == 0);
}

void start_loop(void)
{
        cr_assert(pthread_create(&loop_thread, NULL, loop_main, NULL) == 0);
        loop_started = true;
}

void stop_loop(void)
{
        if (loop_started) {
                (void) !write(quit_efd, &(uint64_t){ 1 }, 8);
                pthread_join(loop_thread, NULL);
                loop_started = false;
        }
}

void setup_frontend_with(const struct frontend_config *extra)
{
        struct frontend_config cfg = *extra;
        int lfd;

        signal(SIGPIPE, SIG_IGN);
        setenv("OPENENVD_TOKEN", TOKEN, 1);
        setenv("OPENENVD_AGENT_TOKEN", AGENT_TOKEN, 1);
        setenv("OPENENVD_METRICS_TOKEN", METRICS_TOKEN, 1);
        bool generated;
        cr_assert(credentials_load(&creds, NULL, &generated, NULL) == 0);
        cr_assert(mkdtemp(tmpdir));
        snprintf(env_sock, sizeof(env_sock), "%s/env.sock", tmpdir);
        upstream_pid = spawn_unix_upstream(env_sock);
        test_loop_new();
        cr_assert(socket_listen_tcp("127.0.0.1", 0, &lfd) == 0);
        cr_assert(socket_local_port(lfd, &fe_port) == 0);
        cfg.env_socket = env_sock;
        cfg.creds = &creds;
        if (!cfg.agent_paths)
                cfg.agent_paths = agent_paths;
        cr_assert(frontend_new(loop, lfd, &cfg, &stub_ops, NULL, &fe) == 0);
}

void setup_frontend_lanes(const struct frontend_config *extra)
{
        char path[300];

        cr_assert(extra->lanes >= 2 && extra->lanes <= ELEMENTSOF(lane_pids) + 1);
        n_lanes = extra->lanes;
        setup_frontend_with(extra);
        /* Lane 0's env server is env_sock's; every other lane has its own. */
        for (unsigned i = 1; i < n_lanes; i++) {
                snprintf(path, sizeof(path), "%s/env-%u.sock", tmpdir, i);
                lane_pids[i - 1] = spawn_unix_upstream(path);
                cr_assert(frontend_set_env(fe, i, &(struct frontend_env){ .socket = path }) == 0);
        }
        start_loop();
}

void setup_frontend_default(void)
{
        setup_frontend_with(&(struct frontend_config){});
        start_loop();
}

void teardown(void)
{
        stop_loop();
        frontend_free(fe);
        service_relay_free(sr);
        loop_source_free(quit_src);
        loop_source_free(cmd_src);
        loop_free(loop);
        safe_close(quit_efd);
        safe_close(cmd_efd);
        credentials_done(&creds);
        if (upstream_pid > 0) {
                kill(upstream_pid, SIGKILL);
                waitpid(upstream_pid, NULL, 0);
        }
        for (unsigned i = 0; i + 1 < n_lanes; i++) {
                kill(lane_pids[i], SIGKILL);
                waitpid(lane_pids[i], NULL, 0);
        }
        (void) rm_rf_at(AT_FDCWD, tmpdir);
}

/* --- a raw client --- */

static int cl_connect_sa(const struct sockaddr *sa, socklen_t len, int family)
{
        struct timeval tv = { .tv_sec = 20 };
        int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);

        cr_assert(fd >= 0);
        cr_assert(connect(fd, sa, len) == 0, "connect: %m");
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        return fd;
}

int cl_connect_port(uint16_t port)
{
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };

        inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
        return cl_connect_sa((struct sockaddr *) &sa, sizeof(sa), AF_INET);
}

int cl_connect(void)
{
        return cl_connect_port(fe_port);
}

int cl_connect_unix(const char *path)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };

        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
        return cl_connect_sa((struct sockaddr *) &sa, sizeof(sa), AF_UNIX);
}

void cl_send(int fd, const char *s)
{
        cr_assert(write_all(fd, s, strlen(s)) >= 0);
}

void response_release(struct response *r)
{
        strbuf_release(&r->head);
        strbuf_release(&r->body);
}

bool cl_fill(struct cl *c)
{
        char buf[65536];
        ssize_t n = read(c->fd, buf, sizeof(buf));
        if (n <= 0)
                return false;
        strbuf_add(&c->in, buf, (size_t) n);
        return true;
}

void cl_take(struct cl *c, size_t n)
{
        memmove(c->in.buf, c->in.buf + n, c->in.len - n);
        c->in.len -= n;
        c->in.buf[c->in.len] = 0;
}

void chunk_data(void *ud, const char *d, size_t n)
{
        strbuf_add(ud, d, n);
}

bool cl_response(struct cl *c, bool req_was_head, struct response *ret)
{
        struct http_head h;
        size_t end = 0;

        *ret = (struct response){ .head = STRBUF_INIT, .body = STRBUF_INIT };
        while (http_head_find_end(c->in.buf, c->in.len, &end) <= 0)
                if (!cl_fill(c))
                        return false;
        cr_assert(http_head_parse(c->in.buf, end, true, req_was_head, &h) == 0,
                  "bad response head");
        ret->status = h.status;
        strbuf_add(&ret->head, c->in.buf, end);
        cl_take(c, end);
        if (h.body == HTTP_BODY_LENGTH) {
                while (c->in.len < h.content_length)
                        cr_assert(cl_fill(c), "short body");
                strbuf_add(&ret->body, c->in.buf, h.content_length);
                cl_take(c, h.content_length);
        } else if (h.body == HTTP_BODY_CHUNKED) {
                struct http_chunked ch;
                http_chunked_init(&ch);
                for (;;) {
                        size_t used = 0;
                        int r = http_chunked_feed(&ch, c->in.buf, c->in.len, chunk_data, &ret->body,
                                                  &used);
                        cr_assert(r >= 0);
                        cl_take(c, used);
                        if (r > 0)
                                break;
                        cr_assert(cl_fill(c), "short chunked body");
                }
        } else if (h.body == HTTP_BODY_EOF) {
                while (cl_fill(c))
                        ;
                strbuf_add(&ret->body, c->in.buf, c->in.len);
                cl_take(c, c->in.len);
                ret->closed = true;
        }
        return true;
}

struct response request(const char *req)
{
        struct cl c = { .fd = cl_connect(), .in = STRBUF_INIT };
        struct response r;

        cl_send(c.fd, req);
        cr_assert(cl_response(&c, startswith(req, "HEAD ") != NULL, &r), "no response to %s", req);
        close(c.fd);
        strbuf_release(&c.in);
        return r;
}

bool head_has(const struct response *r, const char *s)
{
        return strcasestr(r->head.buf, s) != NULL;
}

bool cl_wait_close(int fd)
{
        char buf[4096];
        for (;;) {
                ssize_t n = read(fd, buf, sizeof(buf));
                if (n == 0)
                        return true;
                if (n < 0)
                        return errno == ECONNRESET;
        }
}

char *upstream_log(void)
{
        struct response r =
                request("GET /log HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " TOKEN "\r\n\r\n");
        cr_assert_eq(r.status, 200, "log: %u %s", r.status, r.body.buf);
        char *s = xstrdup(r.body.buf);
        response_release(&r);
        return s;
}
