/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The relay tests' shared harness (harness.c): a temp dir, the loop in its
 * own thread, an upstream process, a frontend with a stub unit behind it,
 * and a raw HTTP client with per-connection buffering. Each Criterion test
 * runs in its own process, so these globals belong to one test at a time.
 */
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/strbuf.h"

struct loop;
struct frontend;
struct frontend_config;
struct service_relay;

#define TOKEN         "orchestrator-secret-token"
#define AGENT_TOKEN   "agent-secret-token"
#define AUTH          "Authorization: Bearer " TOKEN "\r\n"
#define AGENT_AUTH    "Authorization: Bearer " AGENT_TOKEN "\r\n"
#define METRICS_TOKEN "metrics-secret-token"
#define METRICS_AUTH  "Authorization: Bearer " METRICS_TOKEN "\r\n"

extern char tmpdir[];      /* mkdtemp() template; removed by teardown() */
extern pid_t upstream_pid; /* killed by teardown() if > 0 */
extern struct loop *loop;
extern char env_sock[256]; /* the upstream's socket (the env server's) */
extern struct frontend *fe;
extern struct service_relay *sr; /* freed by teardown() if set */
extern uint16_t fe_port;

/* What the frontend told the unit (read with __atomic_load_n). */
struct stub_unit {
        int env_allowed; /* an episode is live */
        int not_ready;   /* ops->ready says no, with a reason with bytes to escape */
        int actions, dones, controls, episode_requests, commands_done;
        char last_control_body[256];
        /* The last message with actions: written before actions is bumped. */
        char last_action_via[16], last_action[256];
        int last_action_whole; /* its bytes were seen whole */
        int last_lane;         /* of the last action or done */
        int lanes_held;        /* lanes: a bit per lane taken */
        int releases;          /* lanes given back */
};
extern struct stub_unit unit_stub;

/* The child gets listen_fd as fd 3 (closed here) and execs argv. */
pid_t spawn_upstream(char *const argv[], int listen_fd);
/* upstream.py on a new unix socket at path. */
pid_t spawn_unix_upstream(const char *path);
/* loop_new() plus the eventfds stop_loop() and the stub's commands use. */
void test_loop_new(void);
void start_loop(void);
/* Ends loop_run() and joins its thread (nothing runs on the loop after). */
void stop_loop(void);
/* stop_loop(), then frees the loop and what the harness set up. */
void teardown(void);

/* A frontend on 127.0.0.1:fe_port in front of upstream.py (extra's
 * timeouts and limits; tokens TOKEN and AGENT_TOKEN, agent path
 * /tools/run); the _default variant also starts the loop. */
void setup_frontend_with(const struct frontend_config *extra);
void setup_frontend_default(void);
/* The same with extra->lanes (2..9) lanes, each its own upstream.py (lane
 * 0's at env_sock); starts the loop. */
void setup_frontend_lanes(const struct frontend_config *extra);
/* The episode ends (no env traffic, sessions detach or close) / a new one
 * is live (waiting clients continue). Return once the loop did it. */
void stub_end_episode(void);
void stub_start_episode(void);
void stub_fail_episode(void);      /* the waiting fail; ready() says no until cleared */
void stub_end_lane(unsigned lane); /* lanes: that lane's env goes */

struct response {
        unsigned status;
        struct strbuf head, body;
        bool closed; /* EOF seen after the response */
};

/* Per-connection read buffer so pipelined responses are not lost. */
struct cl {
        int fd;
        struct strbuf in;
};

/* Blocking client sockets with a 20 s receive timeout (a safety net only). */
int cl_connect_port(uint16_t port);
int cl_connect(void); /* the frontend */
int cl_connect_unix(const char *path);
void cl_send(int fd, const char *s);
/* One read into c->in; false on EOF or timeout. */
bool cl_fill(struct cl *c);
/* Drops the first n bytes of c->in. */
void cl_take(struct cl *c, size_t n);
/* Reads one response; returns false on EOF before a complete head. */
bool cl_response(struct cl *c, bool req_was_head, struct response *ret);
void response_release(struct response *r);
/* One request on a new connection to the frontend, its response. */
struct response request(const char *req);
/* An http_chunked_data_fn appending to the struct strbuf ud. */
void chunk_data(void *ud, const char *d, size_t n);
bool head_has(const struct response *r, const char *s);
/* Reads until EOF; true if the peer closed (not a timeout). */
bool cl_wait_close(int fd);
/* The (method, path) pairs the upstream saw, as its JSON list. */
char *upstream_log(void);
