/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The relay tests' shared harness (defined in test-relay.c): a temp dir, the
 * loop in its own thread, an upstream process, and a raw HTTP client with
 * per-connection buffering. Each Criterion test runs in its own process, so
 * these globals belong to one test at a time.
 */
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/strbuf.h"

struct loop;

extern char tmpdir[];      /* mkdtemp() template; removed by teardown() */
extern pid_t upstream_pid; /* killed by teardown() if > 0 */
extern struct loop *loop;

/* The child gets listen_fd as fd 3 (closed here) and execs argv. */
pid_t spawn_upstream(char *const argv[], int listen_fd);
/* loop_new() plus the eventfd stop_loop() uses to end loop_run(). */
void test_loop_new(void);
void start_loop(void);
/* Ends loop_run() and joins its thread (nothing runs on the loop after). */
void stop_loop(void);
/* stop_loop(), then frees the loop and what test-relay.c set up. */
void teardown(void);

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
int cl_connect_unix(const char *path);
void cl_send(int fd, const char *s);
/* One read into c->in; false on EOF or timeout. */
bool cl_fill(struct cl *c);
/* Drops the first n bytes of c->in. */
void cl_take(struct cl *c, size_t n);
/* Reads one response; returns false on EOF before a complete head. */
bool cl_response(struct cl *c, bool req_was_head, struct response *ret);
void response_release(struct response *r);
/* An http_chunked_data_fn appending to the struct strbuf ud. */
void chunk_data(void *ud, const char *d, size_t n);
bool head_has(const struct response *r, const char *s);
