/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A unit of lanes (several episodes at once), at its port: each of the
 * orchestrator's MCP sessions takes a lane of its own. HTTP MCP sessions
 * (OpenEnv's production mode: openenv/session/create, then session_id in
 * every request's params) are routed request by request by what the body
 * says, on any connection; their lanes come back on close, at the end of
 * their episode, and after session_idle unused. The body read to route by
 * is bounded as a head is. WebSocket /mcp lanes: test-frontend-ws.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/macro.h"
#include "base/time-util.h"
#include "base/util.h"
#include "relay/frontend.h"
#include "relay-test.h"
#include "test-helpers.h"

static void setup_lanes(void)
{
        setup_frontend_lanes(&(struct frontend_config){ .lanes = 2,
                                                        .session_idle = 400 * USEC_PER_MSEC,
                                                        .head_timeout = 500 * USEC_PER_MSEC });
}

TestSuite(lanes, .init = setup_lanes, .fini = teardown, .timeout = 60);

static int load(const int *p)
{
        return __atomic_load_n(p, __ATOMIC_SEQ_CST);
}

static char *mcp_request(const char *json)
{
        return xasprintf("POST /mcp HTTP/1.1\r\nHost: x\r\n" AUTH
                         "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s",
                         strlen(json), json);
}

/* One JSON-RPC request on connection c (keep-alive): its answer's body. */
static char *mcp_on(struct cl *c, const char *json)
{
        cleanup_free char *req = mcp_request(json);
        struct response r;
        char *body;

        cl_send(c->fd, req);
        cr_assert(cl_response(c, false, &r), "no answer to %s", json);
        cr_assert_eq(r.status, 200, "%s → %u %s", json, r.status, r.body.buf);
        body = xstrdup(r.body.buf ?: "");
        response_release(&r);
        return body;
}

static char *mcp(const char *json)
{
        struct cl c = { .fd = cl_connect() };
        char *body = mcp_on(&c, json);

        close(c.fd);
        strbuf_release(&c.in);
        return body;
}

/* The session id in a create's answer (the upstream's "PID-N"). */
static char *create_session(struct cl *c)
{
        cleanup_free char *body =
                mcp_on(c, "{\"jsonrpc\":\"2.0\",\"method\":\"openenv/session/create\","
                          "\"params\":{},\"id\":1}");
        const char *p = strstr(body, "\"session_id\": \"");
        char id[64];

        cr_assert(p, "no session in %s", body);
        cr_assert(sscanf(p + strlen("\"session_id\": \""), "%63[^\"]", id) == 1);
        return xstrdup(id);
}

/* Which env server answered a tools/call in session id (its pid). */
static long call_in(struct cl *c, const char *id)
{
        cleanup_free char *json = xasprintf("{\"jsonrpc\":\"2.0\",\"method\":\"tools/call\","
                                            "\"params\":{\"name\":\"look\",\"arguments\":{},"
                                            "\"session_id\":\"%s\"},\"id\":7}",
                                            id);
        cleanup_free char *body = mcp_on(c, json);
        const char *p = strstr(body, "\"server\": ");

        cr_assert(p, "%s → %s", id, body);
        return strtol(p + strlen("\"server\": "), NULL, 10);
}

static long pid_of(const char *id)
{
        return strtol(id, NULL, 10);
}

Test(lanes, http_mcp_sessions_take_a_lane_each_and_are_routed_by_their_id)
{
        struct cl a = { .fd = cl_connect() }, b = { .fd = cl_connect() };
        cleanup_free char *s1 = create_session(&a);
        cleanup_free char *s2 = create_session(&b);
        cleanup_free char *full = NULL, *unknown = NULL, *none = NULL, *batch = NULL;
        cleanup_free char *closed = NULL, *after = NULL;

        /* Two sessions, two lanes, two env servers. */
        cr_assert_eq(load(&unit_stub.lanes_held), 3);
        cr_assert_neq(pid_of(s1), pid_of(s2), "%s and %s: one env server", s1, s2);
        /* The third finds every lane held: OpenEnv's own capacity answer. */
        full = mcp("{\"jsonrpc\":\"2.0\",\"method\":\"openenv/session/create\",\"id\":\"c\"}");
        cr_assert(strstr(full, "\"code\":-32000") && strstr(full, "\"id\":\"c\"") &&
                          strstr(full, "Server at capacity: 2/2 sessions active") &&
                          strstr(full, "\"active_sessions\":2,\"max_sessions\":2"),
                  "%s", full);
        /* One keep-alive connection, requests of either session in turn:
         * each reaches its own session's env server, and is its lane's action. */
        cr_assert_eq(call_in(&a, s1), pid_of(s1));
        cr_assert_eq(load(&unit_stub.last_lane), 0);
        cr_assert_eq(call_in(&a, s2), pid_of(s2));
        cr_assert_eq(load(&unit_stub.last_lane), 1);
        cr_assert_eq(call_in(&a, s1), pid_of(s1));
        cr_assert_eq(call_in(&b, s1), pid_of(s1));
        cr_assert_eq(load(&unit_stub.actions), 4);
        /* A session nobody made, none named, a batch: answered here, in JSON-RPC. */
        unknown = mcp("{\"jsonrpc\":\"2.0\",\"method\":\"tools/list\","
                      "\"params\":{\"session_id\":\"nope\"},\"id\":3}");
        cr_assert(strstr(unknown, "\"code\":-32602") && strstr(unknown, "Unknown session_id: nope"),
                  "%s", unknown);
        none = mcp("{\"jsonrpc\":\"2.0\",\"method\":\"tools/list\",\"params\":{},\"id\":4}");
        cr_assert(strstr(none, "openenv/session/create first") && strstr(none, "\"id\":4"), "%s",
                  none);
        batch = mcp("[{\"jsonrpc\":\"2.0\",\"method\":\"tools/list\",\"id\":5}]");
        cr_assert(strstr(batch, "\"code\":-32600"), "%s", batch);
        cr_assert_eq(load(&unit_stub.releases), 0);

        /* Closed: the lane goes back (its episode ends), the id means nothing. */
        {
                cleanup_free char *json =
                        xasprintf("{\"jsonrpc\":\"2.0\",\"method\":\"openenv/session/close\","
                                  "\"params\":{\"session_id\":\"%s\"},\"id\":9}",
                                  s1);
                closed = mcp(json);
                cr_assert(strstr(closed, "\"closed\":true") && strstr(closed, s1), "%s", closed);
                after = mcp(json);
                cr_assert(strstr(after, "Unknown session_id"), "%s", after);
        }
        cr_assert_eq(load(&unit_stub.releases), 1);
        cr_assert_eq(load(&unit_stub.lanes_held), 2);
        /* ... and the next session gets it. */
        {
                cleanup_free char *s3 = create_session(&b);
                cr_assert_eq(pid_of(s3), pid_of(s1));
                cr_assert_eq(load(&unit_stub.lanes_held), 3);
        }
        close(a.fd);
        close(b.fd);
        strbuf_release(&a.in);
        strbuf_release(&b.in);
}

Test(lanes, an_unused_http_mcp_session_gives_its_lane_back)
{
        struct cl c = { .fd = cl_connect() };
        cleanup_free char *s1 = create_session(&c);
        cleanup_free char *json = xasprintf("{\"jsonrpc\":\"2.0\",\"method\":\"tools/list\","
                                            "\"params\":{\"session_id\":\"%s\"},\"id\":2}",
                                            s1);
        cleanup_free char *after = NULL;

        /* Used within session_idle: kept. */
        for (int i = 0; i < 3; i++) {
                usleep(200 * 1000);
                free(mcp_on(&c, json));
        }
        cr_assert_eq(load(&unit_stub.releases), 0);
        /* Then left alone: its lane goes back by itself. */
        for (int i = 0; i < 200 && load(&unit_stub.releases) == 0; i++)
                usleep(10 * 1000);
        cr_assert_eq(load(&unit_stub.releases), 1);
        cr_assert_eq(load(&unit_stub.lanes_held), 0);
        after = mcp_on(&c, json);
        cr_assert(strstr(after, "Unknown session_id"), "%s", after);
        close(c.fd);
        strbuf_release(&c.in);
}

Test(lanes, an_http_mcp_session_ends_with_its_episode)
{
        struct cl c = { .fd = cl_connect() };
        cleanup_free char *s1 = create_session(&c);
        cleanup_free char *s2 = create_session(&c);
        cleanup_free char *after = NULL;

        stub_end_lane(0);
        cr_assert_eq(load(&unit_stub.releases), 1);
        cr_assert_eq(load(&unit_stub.lanes_held), 2, "lane 1's session goes on");
        cr_assert_eq(call_in(&c, s2), pid_of(s2));
        {
                cleanup_free char *json =
                        xasprintf("{\"jsonrpc\":\"2.0\",\"method\":\"tools/call\",\"params\":"
                                  "{\"name\":\"finish\",\"session_id\":\"%s\"},\"id\":2}",
                                  s1);
                after = mcp_on(&c, json);
        }
        cr_assert(strstr(after, "Unknown session_id"), "%s", after);
        close(c.fd);
        strbuf_release(&c.in);
}

Test(lanes, a_body_routed_by_is_bounded_as_a_head_is)
{
        struct response r;
        struct cl c = { .fd = cl_connect() };
        cleanup_free char *big =
                xasprintf("POST /mcp HTTP/1.1\r\nHost: x\r\n" AUTH "Content-Length: %lu\r\n\r\n",
                          64UL * 1024);

        /* More than the connection's buffer holds: 413, never a lane. */
        r = request(big);
        cr_assert_eq(r.status, 413, "%u %s", r.status, r.body.buf);
        response_release(&r);
        r = request("POST /mcp HTTP/1.1\r\nHost: x\r\n" AUTH
                    "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n");
        cr_assert_eq(r.status, 411, "%u %s", r.status, r.body.buf);
        response_release(&r);
        /* A body that never completes: 408 by the head's deadline. */
        cl_send(c.fd, "POST /mcp HTTP/1.1\r\nHost: x\r\n" AUTH "Content-Length: 100\r\n\r\n{\"js");
        cr_assert(cl_response(&c, false, &r));
        cr_assert_eq(r.status, 408, "%u %s", r.status, r.body.buf);
        response_release(&r);
        cr_assert_eq(load(&unit_stub.lanes_held), 0);
        close(c.fd);
        strbuf_release(&c.in);
        /* Everything else of the env's is the sessions' only. */
        r = request("POST /reset HTTP/1.1\r\nHost: x\r\n" AUTH "Content-Length: 0\r\n\r\n");
        cr_assert_eq(r.status, 409);
        cr_assert(strstr(r.body.buf, "concurrent_episodes"), "%s", r.body.buf);
        response_release(&r);
}

Test(lanes, a_client_gone_during_its_create_gives_the_lane_back)
{
        struct cl c = { .fd = cl_connect() };
        cleanup_free char *req = mcp_request("{\"jsonrpc\":\"2.0\",\"method\":"
                                             "\"openenv/session/create\",\"id\":1}");

        /* Held: no episode is live on the lane yet. */
        stub_end_episode();
        cl_send(c.fd, req);
        for (int i = 0; i < 200 && load(&unit_stub.episode_requests) == 0; i++)
                usleep(10 * 1000);
        cr_assert_eq(load(&unit_stub.lanes_held), 1);
        close(c.fd);
        for (int i = 0; i < 200 && load(&unit_stub.releases) == 0; i++)
                usleep(10 * 1000);
        cr_assert_eq(load(&unit_stub.releases), 1);
        cr_assert_eq(load(&unit_stub.lanes_held), 0);
        strbuf_release(&c.in);
}

Test(lanes, a_create_waits_for_its_lanes_episode_and_keeps_its_lane)
{
        struct cl c = { .fd = cl_connect() };
        cleanup_free char *req = mcp_request("{\"jsonrpc\":\"2.0\",\"method\":"
                                             "\"openenv/session/create\",\"id\":1}");
        struct response r;

        stub_end_episode();
        cl_send(c.fd, req);
        for (int i = 0; i < 200 && load(&unit_stub.episode_requests) == 0; i++)
                usleep(10 * 1000);
        cr_assert_eq(load(&unit_stub.lanes_held), 1);
        stub_start_episode();
        cr_assert(cl_response(&c, false, &r));
        cr_assert_eq(r.status, 200);
        cr_assert(strstr(r.body.buf, "\"session_id\""), "%s", r.body.buf);
        cr_assert(head_has(&r, "X-Openenvd-Lane: 0\r\n"), "%s", r.head.buf);
        response_release(&r);
        /* Routed again once live: the same lane, never given back meanwhile. */
        cr_assert_eq(load(&unit_stub.releases), 0);
        cr_assert_eq(load(&unit_stub.lanes_held), 1);
        cr_assert_eq(load(&unit_stub.episode_requests), 2);
        close(c.fd);
        strbuf_release(&c.in);
}

Test(lanes, an_id_two_env_servers_name_ends_both_sessions)
{
        static const char create_x[] = "{\"jsonrpc\":\"2.0\",\"method\":\"openenv/session/create\","
                                       "\"params\":{\"id_as\":\"same\"},\"id\":1}";
        struct cl c = { .fd = cl_connect() };
        cleanup_free char *a = mcp_on(&c, create_x);
        cleanup_free char *b = NULL, *after = NULL;

        cr_assert(strstr(a, "\"session_id\": \"same\""), "%s", a);
        /* Lane 1's env server names lane 0's session: that answer reaches
         * its client, but no request of that id reaches either lane now. */
        b = mcp_on(&c, create_x);
        cr_assert(strstr(b, "\"session_id\": \"same\""), "%s", b);
        cr_assert_eq(load(&unit_stub.releases), 2);
        cr_assert_eq(load(&unit_stub.lanes_held), 0);
        after = mcp_on(&c, "{\"jsonrpc\":\"2.0\",\"method\":\"tools/call\",\"params\":"
                           "{\"name\":\"look\",\"session_id\":\"same\"},\"id\":2}");
        cr_assert(strstr(after, "Unknown session_id: same"), "%s", after);
        cr_assert_eq(load(&unit_stub.actions), 0);
        close(c.fd);
        strbuf_release(&c.in);
}
