/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * WebSockets through the unit's port: credentials on the handshake, frames
 * of any size both ways, protocol errors, every upgraded path, compression
 * declined, and the session a stock OpenEnv client keeps across episodes
 * (detached between them, re-attached by its next reset).
 */
#include <openssl/evp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/fd-util.h"
#include "base/macro.h"
#include "base/util.h"
#include "relay/frontend.h"
#include "relay/ws-frame.h"
#include "relay-test.h"
#include "test-helpers.h"

TestSuite(ws, .init = setup_frontend_default, .fini = teardown, .timeout = 120);

static int load(const int *p)
{
        return __atomic_load_n(p, __ATOMIC_SEQ_CST);
}

static void ws_send(int fd, uint8_t op, const void *data, size_t n)
{
        struct strbuf f = STRBUF_INIT;
        static const uint8_t key[4] = { 0x11, 0x22, 0x33, 0x44 };

        ws_append_frame(&f, op, data, n, key);
        cr_assert(write_all(fd, f.buf, f.len) >= 0);
        strbuf_release(&f);
}

static void ws_send_text(int fd, const char *s)
{
        ws_send(fd, WS_OP_TEXT, s, strlen(s));
}

/* Reads one unmasked server frame of any size. */
static uint8_t ws_read(struct cl *c, struct strbuf *payload)
{
        size_t hdr = 2;
        uint64_t n;

        while (c->in.len < 2)
                cr_assert(cl_fill(c), "websocket frame never arrived");
        n = (uint8_t) c->in.buf[1] & 0x7f;
        cr_assert_eq((uint8_t) c->in.buf[1] & 0x80, 0, "a server frame is never masked");
        hdr += n == 126 ? 2 : n == 127 ? 8 : 0;
        while (c->in.len < hdr)
                cr_assert(cl_fill(c));
        if (n == 126)
                n = (uint64_t) (uint8_t) c->in.buf[2] << 8 | (uint8_t) c->in.buf[3];
        else if (n == 127) {
                n = 0;
                for (int i = 0; i < 8; i++)
                        n = n << 8 | (uint8_t) c->in.buf[2 + i];
        }
        while (c->in.len < hdr + n)
                cr_assert(cl_fill(c), "websocket frame cut short");
        uint8_t op = (uint8_t) c->in.buf[0] & 0x0f;
        strbuf_reset(payload);
        strbuf_add(payload, c->in.buf + hdr, n);
        cl_take(c, hdr + n);
        return op;
}

static void ws_expect_text(struct cl *c, const char *want)
{
        struct strbuf p = STRBUF_INIT;
        cr_assert_eq(ws_read(c, &p), WS_OP_TEXT);
        cr_assert_str_eq(p.buf, want);
        strbuf_release(&p);
}

static void ws_expect_close(struct cl *c, uint16_t code, const char *reason)
{
        struct strbuf p = STRBUF_INIT;
        cr_assert_eq(ws_read(c, &p), WS_OP_CLOSE);
        cr_assert_geq(p.len, 2);
        cr_assert_eq(((uint8_t) p.buf[0] << 8) | (uint8_t) p.buf[1], code);
        if (reason)
                cr_assert_str_eq(p.buf + 2, reason);
        cr_assert(cl_wait_close(c->fd));
        strbuf_release(&p);
}

/* The last 101's head (ws_open_at()). */
static struct strbuf handshake = STRBUF_INIT;

static struct cl ws_handshake_send(const char *target, const char *auth)
{
        struct cl c = { .fd = cl_connect(), .in = STRBUF_INIT };
        char *req = xasprintf(
                "GET %s HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
                "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n%s\r\n",
                target, auth);
        cl_send(c.fd, req);
        free(req);
        return c;
}

static void ws_handshake_read(struct cl *cp, const char *target)
{
        struct cl c = *cp;
        struct response r;

        cr_assert(cl_response(&c, false, &r));
        cr_assert_eq(r.status, 101, "%s: %u %s", target, r.status, r.body.buf);
        cr_assert(head_has(&r, "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo="));
        /* Compression declined: frames stay readable to the validator. */
        cr_assert_not(head_has(&r, "permessage-deflate"));
        strbuf_reset(&handshake);
        strbuf_add(&handshake, r.head.buf, r.head.len);
        response_release(&r);
        *cp = c;
}

static struct cl ws_open_at(const char *target, const char *auth)
{
        struct cl c = ws_handshake_send(target, auth);

        ws_handshake_read(&c, target);
        return c;
}

static struct cl ws_open(void)
{
        return ws_open_at("/ws", AUTH);
}

static void cl_done(struct cl *c)
{
        close(c->fd);
        strbuf_release(&c->in);
}

/* --- frames --- */

Test(ws, frames_both_ways_steps_done_and_close_code)
{
        struct cl c = ws_open();
        struct strbuf p = STRBUF_INIT;

        ws_send_text(c.fd, "{\"type\":\"step\",\"data\":{}}");
        ws_expect_text(&c, "{\"type\":\"step\",\"data\":{}}");
        cr_assert_eq(load(&unit_stub.actions), 1);
        ws_send(c.fd, WS_OP_BINARY, "bin", 3);
        cr_assert_eq(ws_read(&c, &p), WS_OP_BINARY);
        cr_assert_str_eq(p.buf, "bin");
        ws_send_text(c.fd, "{\"type\":\"mcp\",\"data\":{\"jsonrpc\":\"2.0\",\"id\":1,"
                           "\"method\":\"tools/call\",\"params\":{\"name\":\"x\"}}}");
        ws_expect_text(&c, "{\"type\":\"mcp\",\"data\":{\"jsonrpc\":\"2.0\",\"id\":1,"
                           "\"method\":\"tools/call\",\"params\":{\"name\":\"x\"}}}");
        cr_assert_eq(load(&unit_stub.actions), 2);
        cr_assert_eq(load(&unit_stub.dones), 0);
        ws_send_text(c.fd, "close");
        ws_expect_close(&c, 4001, "bye");
        strbuf_release(&p);
        cl_done(&c);
}

Test(ws, handshake_credentials)
{
        char plain[] = "openenv:" TOKEN;
        unsigned char b64[128];
        char *auth;
        struct cl c;

        EVP_EncodeBlock(b64, (unsigned char *) plain, (int) strlen(plain));
        auth = xasprintf("Authorization: Basic %s\r\n", b64);
        c = ws_open_at("/ws", auth);
        cl_done(&c);
        free(auth);
        /* ?token= on a handshake, never forwarded. */
        c = ws_open_at("/ws?token=" TOKEN, "");
        ws_send_text(c.fd, "headers");
        struct strbuf p = STRBUF_INIT;
        cr_assert_eq(ws_read(&c, &p), WS_OP_TEXT);
        cr_assert(startswith(p.buf, "GET /ws HTTP/1.1\r\n"), "%s", p.buf);
        cr_assert_null(strstr(p.buf, TOKEN));
        cr_assert_null(strcasestr(p.buf, "authorization"));
        cr_assert_null(strcasestr(p.buf, "sec-websocket-extensions"));
        strbuf_release(&p);
        cl_done(&c);

        struct response r = request(
                "GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n");
        cr_assert_eq(r.status, 401);
        response_release(&r);
        r = request("GET /ws?token=wrong HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n"
                    "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                    "Sec-WebSocket-Version: 13\r\n" AUTH "\r\n");
        cr_assert_eq(r.status, 401, "a wrong query token beside a right header");
        response_release(&r);
}

Test(ws, frames_of_any_size_stream_through)
{
        struct cl c = ws_open();
        struct strbuf p = STRBUF_INIT;
        size_t big = 17UL * 1024 * 1024; /* over OpenEnv's old 16 MiB wall */
        char *data = xmalloc(big);
        char cmd[32];

        memset(data, 'z', big);
        ws_send(c.fd, WS_OP_BINARY, data, big);
        cr_assert_eq(ws_read(&c, &p), WS_OP_BINARY);
        cr_assert_eq(p.len, big);
        cr_assert(memcmp(p.buf, data, big) == 0);
        snprintf(cmd, sizeof(cmd), "big %zu", big);
        ws_send_text(c.fd, cmd);
        cr_assert_eq(ws_read(&c, &p), WS_OP_BINARY);
        cr_assert_eq(p.len, big);
        /* A text message that big is relayed, not inspected. */
        memset(data, ' ', big);
        memcpy(data, "{\"type\":\"step\"}", 15);
        ws_send(c.fd, WS_OP_TEXT, data, big);
        cr_assert_eq(ws_read(&c, &p), WS_OP_TEXT);
        cr_assert_eq(p.len, big);
        cr_assert_eq(load(&unit_stub.actions), 0);
        free(data);
        strbuf_release(&p);
        cl_done(&c);
}

Test(ws, invalid_client_frame_closes_1002)
{
        struct cl c = ws_open();
        /* Unmasked client frame. */
        cr_assert(write_all(c.fd, "\x81\x02hi", 4) >= 0);
        ws_expect_close(&c, WS_CLOSE_PROTOCOL, NULL);
        cl_done(&c);
        struct response r = request("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
        cr_assert_eq(r.status, 200);
        response_release(&r);
}

Test(ws, invalid_server_frame_closes_1002)
{
        struct cl c = ws_open();
        ws_send_text(c.fd, "bad");
        ws_expect_close(&c, WS_CLOSE_PROTOCOL, NULL);
        cl_done(&c);
}

/* --- every path --- */

Test(ws, mcp_and_other_paths_upgrade)
{
        struct cl c = ws_open_at("/mcp", AGENT_AUTH);

        ws_send_text(c.fd, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
                           "\"params\":{\"name\":\"echo\"}}");
        ws_expect_text(&c, "{\"jsonrpc\": \"2.0\", \"id\": 1, \"result\": {\"content\": "
                           "[{\"type\": \"text\", \"text\": \"ok\"}]}}");
        cr_assert_eq(load(&unit_stub.actions), 1);
        ws_send_text(c.fd, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\","
                           "\"params\":{\"name\":\"finish\"}}");
        ws_expect_text(&c, "{\"jsonrpc\": \"2.0\", \"id\": 2, \"result\": {\"content\": [], "
                           "\"structuredContent\": {\"done\": true, \"reward\": 1.0}}}");
        cr_assert_eq(load(&unit_stub.actions), 2);
        cr_assert_eq(load(&unit_stub.dones), 1);
        cl_done(&c);

        c = ws_open_at("/game/stream", AUTH);
        ws_send_text(c.fd, "ping?");
        ws_expect_text(&c, "ping?");
        cl_done(&c);
}

Test(ws, other_sessions_end_with_the_episode)
{
        struct cl c = ws_open_at("/mcp", AGENT_AUTH);

        ws_send_text(c.fd, "hello");
        ws_expect_text(&c, "hello");
        stub_end_episode();
        ws_expect_close(&c, WS_CLOSE_GOING_AWAY, "episode ended");
        cl_done(&c);
        stub_start_episode();
}

/* --- the orchestrator's session across episodes --- */

static void expect_error(struct cl *c, const char *code)
{
        struct strbuf p = STRBUF_INIT;
        cr_assert_eq(ws_read(c, &p), WS_OP_TEXT);
        cr_assert(strstr(p.buf, "\"type\":\"error\""), "%s", p.buf);
        cr_assert(strstr(p.buf, code), "%s", p.buf);
        strbuf_release(&p);
}

Test(ws, session_outlives_the_episode_and_reset_starts_the_next)
{
        struct cl c = ws_open();

        ws_send_text(c.fd, "done");
        ws_expect_text(&c, "{\"type\": \"observation\", \"data\": {\"done\": true}}");
        cr_assert_eq(load(&unit_stub.dones), 1);
        stub_end_episode(); /* what the unit does on done */
        /* Still connected; steps are refused until the next reset. */
        ws_send_text(c.fd, "{\"type\":\"step\",\"data\":{}}");
        expect_error(&c, "EPISODE_ENDED");
        ws_send_text(c.fd, "{\"type\":\"state\"}");
        expect_error(&c, "EPISODE_ENDED");
        cr_assert_eq(load(&unit_stub.actions), 0);
        /* Pings are answered while no env server is there. */
        ws_send(c.fd, WS_OP_PING, "p", 1);
        struct strbuf p = STRBUF_INIT;
        cr_assert_eq(ws_read(&c, &p), WS_OP_PONG);
        cr_assert_str_eq(p.buf, "p");
        strbuf_release(&p);
        /* reset: a new episode, and the message is its first. */
        ws_send_text(c.fd, "{\"type\":\"reset\",\"data\":{\"seed\":1}}");
        while (load(&unit_stub.episode_requests) == 0)
                usleep(1000);
        stub_start_episode();
        ws_expect_text(&c, "{\"type\":\"reset\",\"data\":{\"seed\":1}}");
        ws_send_text(c.fd, "{\"type\":\"step\",\"data\":{}}");
        ws_expect_text(&c, "{\"type\":\"step\",\"data\":{}}");
        cr_assert_eq(load(&unit_stub.actions), 1);
        ws_send_text(c.fd, "done");
        ws_expect_text(&c, "{\"type\": \"observation\", \"data\": {\"done\": true}}");
        cr_assert_eq(load(&unit_stub.dones), 2);
        cl_done(&c);
        cleanup_free char *log = upstream_log();
        cr_assert_str_eq(log, "[[\"GET\", \"/ws\"], [\"GET\", \"/ws\"]]");
}

static void expect_pong(struct cl *c, const char *payload)
{
        struct strbuf p = STRBUF_INIT;
        cr_assert_eq(ws_read(c, &p), WS_OP_PONG, "a ping unanswered");
        cr_assert_str_eq(p.buf, payload);
        strbuf_release(&p);
}

/* A held reset lasts as long as a provisioning (tens of seconds on a loaded
 * node), and OpenEnv's client gives up on a ping unanswered for 20 s: the
 * session answers pings while the reset waits, and its next data message
 * still waits behind the reset. */
Test(ws, pings_answered_while_a_reset_waits_for_its_episode)
{
        struct cl c;
        struct pollfd pfd;

        stub_end_episode();
        c = ws_open();
        ws_send_text(c.fd, "{\"type\":\"reset\"}");
        while (load(&unit_stub.episode_requests) == 0)
                usleep(1000);
        ws_send(c.fd, WS_OP_PING, "held-1", 6);
        expect_pong(&c, "held-1");
        ws_send(c.fd, WS_OP_PONG, "unsolicited", 11);
        ws_send(c.fd, WS_OP_PING, "held-2", 6);
        expect_pong(&c, "held-2");
        /* A data message behind the reset waits, and so does a ping after it. */
        ws_send_text(c.fd, "{\"type\":\"state\"}");
        ws_send(c.fd, WS_OP_PING, "behind", 6);
        pfd = (struct pollfd){ .fd = c.fd, .events = POLLIN };
        cr_assert_eq(poll(&pfd, 1, 200), 0, "nothing answers the held reset's followers");
        cr_assert_eq(load(&unit_stub.episode_requests), 1);
        stub_start_episode();
        ws_expect_text(&c, "{\"type\":\"reset\"}");
        ws_expect_text(&c, "{\"type\":\"state\"}");
        /* The env server's pong now (the stub upstream answers pings). */
        expect_pong(&c, "behind");
        cl_done(&c);
}

Test(ws, env_gone_without_close_frame_detaches_the_session)
{
        struct cl c = ws_open();

        /* The env's last observation, then its connection ends. */
        ws_send_text(c.fd, "done-exit");
        ws_expect_text(&c, "{\"type\": \"observation\", \"done\": true}");
        /* The episode is still live (the stub did not end it): the next
         * message opens a new session on the env server. */
        ws_send_text(c.fd, "{\"type\":\"state\"}");
        ws_expect_text(&c, "{\"type\":\"state\"}");
        cl_done(&c);
}

/* The env server dies with the client's request unanswered: openenvd's
 * error is the one reply the client waits for; the session stays. */
Test(ws, a_request_the_env_never_answered_gets_episode_ended)
{
        struct cl c = ws_open();

        ws_send_text(c.fd, "{\"type\":\"state\"}");
        ws_expect_text(&c, "{\"type\":\"state\"}");
        ws_send_text(c.fd, "vanish");
        expect_error(&c, "EPISODE_ENDED");
        ws_send_text(c.fd, "{\"type\":\"state\"}");
        ws_expect_text(&c, "{\"type\":\"state\"}");
        cl_done(&c);
}

Test(ws, handshake_without_an_episode_is_accepted_here)
{
        struct cl c;

        stub_end_episode();
        c = ws_open();
        ws_send_text(c.fd, "{\"type\":\"step\"}");
        expect_error(&c, "EPISODE_ENDED");
        ws_send_text(c.fd, "{\"type\":\"reset\"}");
        while (load(&unit_stub.episode_requests) == 0)
                usleep(1000);
        stub_start_episode();
        ws_expect_text(&c, "{\"type\":\"reset\"}");
        cl_done(&c);
}

Test(ws, a_reset_that_cannot_start_says_why)
{
        /* OpenEnv's client shows the message: it names the unit's reason,
         * escaped into the JSON whatever it quotes. */
        struct cl c;
        struct strbuf p = STRBUF_INIT;

        stub_end_episode();
        c = ws_open();
        ws_send_text(c.fd, "{\"type\":\"reset\"}");
        while (load(&unit_stub.episode_requests) == 0)
                usleep(1000);
        stub_fail_episode();
        cr_assert_eq(ws_read(&c, &p), WS_OP_TEXT);
        cr_assert_str_eq(p.buf, "{\"type\":\"error\",\"data\":{\"message\":\"no episode could be "
                                "started: the first episode is still \\\"starting\\\"\\u000a\","
                                "\"code\":\"EPISODE_UNAVAILABLE\"}}");
        strbuf_release(&p);
        __atomic_store_n(&unit_stub.not_ready, 0, __ATOMIC_SEQ_CST);
        cl_done(&c);
}

Test(ws, close_message_while_detached_closes_normally)
{
        struct cl c;

        stub_end_episode();
        c = ws_open();
        ws_send_text(c.fd, "{\"type\":\"close\"}");
        ws_expect_close(&c, WS_CLOSE_NORMAL, NULL);
        cl_done(&c);

        c = ws_open();
        ws_send(c.fd, WS_OP_CLOSE, "\x03\xe8", 2);
        ws_expect_close(&c, WS_CLOSE_NORMAL, NULL);
        cl_done(&c);
        stub_start_episode();
}

/* --- lanes: a WebSocket /mcp session is one episode's, in a lane of its own --- */

static void setup_lanes(void)
{
        setup_frontend_lanes(&(struct frontend_config){ .lanes = 2 });
}

TestSuite(ws_lanes, .init = setup_lanes, .fini = teardown, .timeout = 60);

/* Which env server answered (upstream.py says when the call names a session). */
static long mcp_server(struct cl *c)
{
        struct strbuf p = STRBUF_INIT;
        const char *at;
        long pid;

        ws_send_text(c->fd, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
                            "\"params\":{\"name\":\"look\",\"session_id\":\"-\"}}");
        cr_assert_eq(ws_read(c, &p), WS_OP_TEXT);
        at = strstr(p.buf, "\"server\": ");
        cr_assert(at, "%s", p.buf);
        pid = strtol(at + strlen("\"server\": "), NULL, 10);
        strbuf_release(&p);
        return pid;
}

Test(ws_lanes, mcp_websockets_take_a_lane_each)
{
        struct cl a = ws_open_at("/mcp", AUTH), b, full;

        cr_assert(strstr(handshake.buf, "X-Openenvd-Lane: 0\r\n"), "%s", handshake.buf);
        b = ws_open_at("/mcp", AUTH);
        cr_assert(strstr(handshake.buf, "X-Openenvd-Lane: 1\r\n"), "%s", handshake.buf);
        cr_assert_eq(load(&unit_stub.lanes_held), 3);
        cr_assert_neq(mcp_server(&a), mcp_server(&b), "two sessions, one env server");
        cr_assert_eq(load(&unit_stub.last_lane), 1);
        cr_assert_eq(load(&unit_stub.actions), 2);

        /* Every lane held: accepted, and its first request gets OpenEnv's
         * capacity error (JSON-RPC, its own id), then a normal close. */
        full = ws_open_at("/mcp", AUTH);
        cr_assert_null(strstr(handshake.buf, "X-Openenvd-Lane"));
        ws_send_text(full.fd, "{\"jsonrpc\":\"2.0\",\"id\":\"q\",\"method\":\"tools/list\"}");
        ws_expect_text(&full, "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32000,\"message\":"
                              "\"Server at capacity: 2/2 sessions active. Cannot accept new "
                              "connections.\",\"data\":{\"active_sessions\":2,\"max_sessions\":2}"
                              "},\"id\":\"q\"}");
        ws_expect_close(&full, WS_CLOSE_NORMAL, NULL);
        cl_done(&full);
        cr_assert_eq(load(&unit_stub.releases), 0);

        /* A session that goes gives its lane back (its episode ends). */
        cl_done(&a);
        for (int i = 0; i < 200 && load(&unit_stub.releases) == 0; i++)
                usleep(10 * 1000);
        cr_assert_eq(load(&unit_stub.lanes_held), 2);
        /* Its episode over, the other lane's session is closed with it. */
        stub_end_lane(1);
        ws_expect_close(&b, WS_CLOSE_GOING_AWAY, "episode ended");
        cl_done(&b);
        for (int i = 0; i < 200 && load(&unit_stub.releases) < 2; i++)
                usleep(10 * 1000);
        cr_assert_eq(load(&unit_stub.lanes_held), 0);
}

Test(ws_lanes, an_mcp_websocket_waits_for_its_lanes_episode)
{
        struct cl c;

        stub_end_episode();
        c = ws_handshake_send("/mcp", AUTH);
        for (int i = 0; i < 200 && load(&unit_stub.episode_requests) == 0; i++)
                usleep(10 * 1000);
        cr_assert_eq(load(&unit_stub.lanes_held), 1);
        stub_start_episode();
        ws_handshake_read(&c, "/mcp");
        cr_assert(strstr(handshake.buf, "X-Openenvd-Lane: 0\r\n"), "%s", handshake.buf);
        cr_assert_gt(mcp_server(&c), 0);
        cl_done(&c);
}
