/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The unit's port, request by request: who may reach what (principals and
 * their credentials), the one normalisation of the target, control routes,
 * byte-faithful relaying, the episode's hooks (steps, MCP tool calls, done)
 * and requests that wait for an episode. WebSockets: test-frontend-ws.c;
 * hostile connections: test-http-proxy.c.
 */
#include <errno.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/macro.h"
#include "base/util.h"
#include "base/event-loop.h"
#include "relay/credentials.h"
#include "relay/frontend.h"
#include "relay/listen-socket.h"
#include "relay-test.h"
#include "test-helpers.h"

TestSuite(frontend, .init = setup_frontend_default, .fini = teardown, .timeout = 60);

static int load(const int *p)
{
        return __atomic_load_n(p, __ATOMIC_SEQ_CST);
}

static void expect(const char *req, unsigned status, const char *body)
{
        struct response r = request(req);
        cr_assert_eq(r.status, status, "%s\n→ %u %s", req, r.status, r.body.buf);
        if (body)
                cr_assert_str_eq(r.body.buf, body, "%s", req);
        response_release(&r);
}

static void expect_log(const char *want)
{
        cleanup_free char *log = upstream_log();
        cr_assert_str_eq(log, want);
}

/* "Authorization: Basic base64(user:password)\r\n" */
static char *basic(const char *user, const char *password)
{
        char *plain = xasprintf("%s:%s", user, password);
        unsigned char b64[512];

        EVP_EncodeBlock(b64, (const unsigned char *) plain, (int) strlen(plain));
        free(plain);
        return xasprintf("Authorization: Basic %s\r\n", b64);
}

/* --- who may reach what --- */

Test(frontend, health_routes_need_no_credentials)
{
        expect("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", 200, "{\"status\":\"ok\"}");
        /* OpenEnv's /health, from the daemon: its providers and validator
         * see a server before any episode is live. */
        expect("GET /health HTTP/1.1\r\nHost: x\r\n\r\n", 200,
               "{\"status\":\"healthy\",\"phase\":\"ready\"}");
        stub_end_episode();
        expect("GET /health/ HTTP/1.1\r\nHost: x\r\n\r\n", 200,
               "{\"status\":\"healthy\",\"phase\":\"closed\"}");
        stub_start_episode();
        expect_log("[]");
}

Test(frontend, health_says_not_ready_with_the_reason)
{
        /* Until an episode can serve, /health is OpenEnv's "unhealthy"
         * with a 503 (its provider and validator poll for a 200), /readyz
         * says the same for a load balancer; /healthz is liveness only. */
        __atomic_store_n(&unit_stub.not_ready, 1, __ATOMIC_SEQ_CST);
        expect("GET /health HTTP/1.1\r\nHost: x\r\n\r\n", 503,
               "{\"status\":\"unhealthy\",\"phase\":\"ready\",\"reason\":"
               "\"the first episode is still \\\"starting\\\"\\u000a\"}");
        expect("GET /readyz HTTP/1.1\r\nHost: x\r\n\r\n", 503,
               "{\"ready\":false,\"phase\":\"ready\",\"reason\":"
               "\"the first episode is still \\\"starting\\\"\\u000a\"}");
        expect("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", 200, "{\"status\":\"ok\"}");
        expect("POST /readyz HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n", 405, NULL);
        __atomic_store_n(&unit_stub.not_ready, 0, __ATOMIC_SEQ_CST);
        expect("GET /readyz HTTP/1.1\r\nHost: x\r\n\r\n", 200,
               "{\"ready\":true,\"phase\":\"ready\"}");
        expect_log("[]");
}

Test(frontend, everything_else_needs_credentials)
{
        static const char *const reqs[] = {
                "GET /info HTTP/1.1\r\nHost: x\r\n\r\n",
                "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n",
                "GET /schema HTTP/1.1\r\nHost: x\r\n\r\n",
                "GET /metadata HTTP/1.1\r\nHost: x\r\n\r\n",
                "POST /step HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}",
                "GET /anything HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer wrong\r\n\r\n",
                "GET /info HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " TOKEN "x\r\n\r\n",
                "GET /info HTTP/1.1\r\nHost: x\r\nAuthorization: Token " TOKEN "\r\n\r\n",
                /* A query token counts on WebSocket handshakes only. */
                "GET /info?token=" TOKEN " HTTP/1.1\r\nHost: x\r\n\r\n",
                /* Two credentials are ambiguous even if both are right. */
                "GET /info HTTP/1.1\r\nHost: x\r\n" AUTH AUTH "\r\n",
                /* A wrong one is never ignored beside a right one. */
                "GET /info HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer no\r\n" AUTH "\r\n",
        };
        for (size_t i = 0; i < ELEMENTSOF(reqs); i++) {
                struct cl c = { .fd = cl_connect(), .in = STRBUF_INIT };
                struct response r;
                cl_send(c.fd, reqs[i]);
                cr_assert(cl_response(&c, false, &r));
                cr_assert_eq(r.status, 401, "%s → %u", reqs[i], r.status);
                cr_assert_str_eq(r.body.buf,
                                 "{\"error\":{\"code\":\"not_permitted\",\"message\":\"credentials "
                                 "missing or wrong: send the unit's token as Authorization: Bearer "
                                 "TOKEN, or in the URL (http://openenv:TOKEN@host:port)\"}}");
                cr_assert(head_has(&r, "WWW-Authenticate: Basic realm=\"openenvd\""));
                /* Refused before anyone proved who they are: closed. */
                cr_assert(head_has(&r, "Connection: close"));
                cr_assert(cl_wait_close(c.fd), "%s: not closed", reqs[i]);
                response_release(&r);
                strbuf_release(&c.in);
                close(c.fd);
        }
        expect_log("[]");
        cr_assert_eq(load(&unit_stub.controls), 0);
        cr_assert_eq(load(&unit_stub.actions), 0);
}

Test(frontend, basic_credentials_carry_the_token)
{
        cleanup_free char *good = basic("openenv", TOKEN);
        cleanup_free char *other_user = basic("anyone", TOKEN);
        cleanup_free char *wrong = basic("openenv", "guess");
        cleanup_free char *no_colon = xstrdup("Authorization: Basic b3BlbmVudg==\r\n");
        cleanup_free char *agent = basic("openenv", AGENT_TOKEN);
        const char *bad[] = { wrong, no_colon, "Authorization: Basic !!!!\r\n",
                              "Authorization: Basic abc\r\n" };
        char *req;

        req = xasprintf("GET /info HTTP/1.1\r\nHost: x\r\n%s\r\n", good);
        expect(req, 200, "{\"method\":\"GET\",\"path\":\"/info\"}");
        free(req);
        req = xasprintf("GET /info HTTP/1.1\r\nHost: x\r\n%s\r\n", other_user);
        expect(req, 200, NULL);
        free(req);
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                req = xasprintf("GET /info HTTP/1.1\r\nHost: x\r\n%s\r\n", bad[i]);
                expect(req, 401, NULL);
                free(req);
        }
        /* The env never sees the credentials. */
        req = xasprintf("GET /echo-head HTTP/1.1\r\nHost: x\r\n%sX-After: 1\r\n\r\n", good);
        expect(req, 200, "GET /echo-head HTTP/1.1\r\nHost: x\r\nX-After: 1\r\n\r\n");
        free(req);
        req = xasprintf("POST /mcp HTTP/1.1\r\nHost: x\r\n%sContent-Length: 2\r\n\r\n{}", agent);
        expect(req, 200, NULL);
        free(req);
}

/* A Prometheus server holds a token that reads metrics and does nothing
 * else: it can neither end an episode nor reach the env. */
Test(frontend, metrics_token_reaches_metrics_only)
{
        static const char *const refused[] = {
                "GET /info HTTP/1.1\r\nHost: x\r\n" METRICS_AUTH "\r\n",
                "GET /verdict HTTP/1.1\r\nHost: x\r\n" METRICS_AUTH "\r\n",
                "GET /logs?container=env HTTP/1.1\r\nHost: x\r\n" METRICS_AUTH "\r\n",
                "POST /reset_unit HTTP/1.1\r\nHost: x\r\n" METRICS_AUTH "Content-Length: 0\r\n\r\n",
                "POST /end_episode HTTP/1.1\r\nHost: x\r\n" METRICS_AUTH
                "Content-Length: 0\r\n\r\n",
                "POST /step HTTP/1.1\r\nHost: x\r\n" METRICS_AUTH "Content-Length: 2\r\n\r\n{}",
                "POST /mcp HTTP/1.1\r\nHost: x\r\n" METRICS_AUTH "Content-Length: 2\r\n\r\n{}",
                "GET /metricsx HTTP/1.1\r\nHost: x\r\n" METRICS_AUTH "\r\n",
        };
        struct response r;

        for (size_t i = 0; i < ELEMENTSOF(refused); i++)
                expect(refused[i], 403, NULL);
        cr_assert_eq(load(&unit_stub.controls), 0, "no control reached the unit");
        r = request("GET /metrics HTTP/1.1\r\nHost: x\r\n" METRICS_AUTH "\r\n");
        cr_expect_neq(r.status, 403);
        cr_expect_neq(r.status, 401);
        response_release(&r);
        cr_assert_eq(load(&unit_stub.controls), 1, "/metrics reached the unit");
        expect_log("[]");
}

Test(frontend, agent_reaches_its_paths_only)
{
        static const char *const allowed[] = {
                "POST /mcp HTTP/1.1\r\nHost: x\r\n" AGENT_AUTH "Content-Length: 2\r\n\r\n{}",
                "POST /mcp/ HTTP/1.1\r\nHost: x\r\n" AGENT_AUTH "Content-Length: 2\r\n\r\n{}",
                "GET /mcp/sub HTTP/1.1\r\nHost: x\r\n" AGENT_AUTH "\r\n",
                "GET /tools/run HTTP/1.1\r\nHost: x\r\n" AGENT_AUTH "\r\n",
        };
        static const char *const refused[] = {
                "POST /step HTTP/1.1\r\nHost: x\r\n" AGENT_AUTH "Content-Length: 2\r\n\r\n{}",
                "POST /reset HTTP/1.1\r\nHost: x\r\n" AGENT_AUTH "Content-Length: 2\r\n\r\n{}",
                "GET /state HTTP/1.1\r\nHost: x\r\n" AGENT_AUTH "\r\n",
                "GET /st%61te HTTP/1.1\r\nHost: x\r\n" AGENT_AUTH "\r\n",
                "GET /info HTTP/1.1\r\nHost: x\r\n" AGENT_AUTH "\r\n",
                "GET /metrics HTTP/1.1\r\nHost: x\r\n" AGENT_AUTH "\r\n",
                "POST /end_episode HTTP/1.1\r\nHost: x\r\n" AGENT_AUTH "Content-Length: 0\r\n\r\n",
                "GET /schema HTTP/1.1\r\nHost: x\r\n" AGENT_AUTH "\r\n",
                "GET /tools/run/more HTTP/1.1\r\nHost: x\r\n" AGENT_AUTH "\r\n",
                "GET /mcpx HTTP/1.1\r\nHost: x\r\n" AGENT_AUTH "\r\n",
                "GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: "
                "13\r\n" AGENT_AUTH "\r\n",
        };
        for (size_t i = 0; i < ELEMENTSOF(allowed); i++) {
                struct response r = request(allowed[i]);
                cr_assert_neq(r.status, 403, "%s", allowed[i]);
                cr_assert_neq(r.status, 401, "%s", allowed[i]);
                response_release(&r);
        }
        for (size_t i = 0; i < ELEMENTSOF(refused); i++)
                expect(refused[i], 403,
                       "{\"error\":{\"code\":\"not_permitted\",\"message\":\"these credentials may "
                       "not use this route\"}}");
        expect_log("[[\"POST\", \"/mcp\"], [\"POST\", \"/mcp/\"], [\"GET\", \"/mcp/sub\"], "
                   "[\"GET\", \"/tools/run\"]]");
        cr_assert_eq(load(&unit_stub.controls), 0);
}

Test(frontend_config, agent_paths_never_include_the_orchestrators)
{
        static char *paths[] = { (char *) "/tools", (char *) "/st%61te", (char *) "/state", NULL };
        const struct credentials creds = { .orchestrator = (char *) TOKEN };
        struct frontend *f = NULL;
        struct loop *l;
        int lfd;

        cr_assert(loop_new(&l) == 0);
        cr_assert(socket_listen_tcp("127.0.0.1", 0, &lfd) == 0);
        cr_assert_eq(
                frontend_new(l, lfd,
                             &(struct frontend_config){ .creds = &creds, .agent_paths = paths },
                             &(struct frontend_ops){}, NULL, &f),
                -EPERM);
        cr_assert_null(f);
        loop_free(l);
}

/* --- one normalisation --- */

Test(frontend, targets_are_normalised_once_for_both_checks_and_forwarding)
{
        static const struct {
                const char *target;
                const char *forwarded; /* NULL: 400 */
        } cases[] = {
                { "/%73tep", "/step" },
                { "/st%61te/", "/state/" },
                { "/x?a=1&token=" TOKEN "&b=%2F", "/x?a=1&b=%2F" },
                { "/x?token=abc", "/x" },
                { "/a%3fb", "/a%3Fb" },
                { "/%7euser", "/~user" },
                { "/caf%c3%a9", "/caf%C3%A9" },
                { "/step#frag", NULL },
                { "/step%23x", "/step%23x" },
                { "/a%2fb", NULL },
                { "/a%5cb", NULL },
                { "/a%00b", NULL },
                { "/a%0ab", NULL },
                { "/a%zz", NULL },
                { "/a%2", NULL },
                { "//step", NULL },
                { "/./step", NULL },
                { "/a/../step", NULL },
                { "/%2e%2e/step", NULL },
                { "/step/.", NULL },
                { "/a\"b", NULL },
                { "/a\\b", NULL },
                { "/a{b", NULL },
                { "/\xc3\xa9", NULL },
                { "*", NULL },
                { "/x?q=%zz", NULL },
                { "/x?q=a#b", NULL },
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                char *req =
                        xasprintf("GET %s HTTP/1.1\r\nHost: x\r\n" AUTH "\r\n", cases[i].target);
                struct cl c = { .fd = cl_connect(), .in = STRBUF_INIT };
                struct response r;
                cl_send(c.fd, req);
                cr_assert(cl_response(&c, false, &r), "%s: no answer", cases[i].target);
                if (!cases[i].forwarded) {
                        cr_assert_eq(r.status, 400, "%s → %u", cases[i].target, r.status);
                        cr_assert(cl_wait_close(c.fd), "%s: not closed", cases[i].target);
                } else {
                        cleanup_free char *want =
                                xasprintf("[[\"GET\", \"%s\"]]", cases[i].forwarded);
                        cleanup_free char *log = upstream_log();
                        cr_assert_str_eq(log, want, "%s", cases[i].target);
                        /* Forget it: one entry per case. */
                        expect("GET /log?clear=1 HTTP/1.1\r\nHost: x\r\n" AUTH "\r\n", 200, NULL);
                }
                response_release(&r);
                strbuf_release(&c.in);
                close(c.fd);
                free(req);
        }
}

Test(frontend, a_spelling_of_step_is_a_step)
{
        expect("POST /%73tep HTTP/1.1\r\nHost: x\r\n" AUTH "Content-Length: 13\r\n\r\n"
               "{\"done\":true}",
               200, "{\"observation\": {}, \"done\": true}");
        expect("POST /step/ HTTP/1.1\r\nHost: x\r\n" AUTH "Content-Length: 2\r\n\r\n{}", 200, NULL);
        cr_assert_eq(load(&unit_stub.actions), 2);
        cr_assert_eq(load(&unit_stub.dones), 1);
        /* "#" never reaches the env, with or without the token. */
        expect("POST /step#x HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}", 400, NULL);
        expect("POST /step#x HTTP/1.1\r\nHost: x\r\n" AUTH "Content-Length: 2\r\n\r\n{}", 400,
               NULL);
        cr_assert_eq(load(&unit_stub.actions), 2);
}

/* The episode records what a step sent (unit/action-record.h): the body,
 * whole, once it has all arrived, and a chunked one without its framing. */
Test(frontend, a_step_hands_its_body_to_the_record)
{
        expect("POST /step HTTP/1.1\r\nHost: x\r\n" AUTH "Content-Length: 23\r\n\r\n"
               "{\"action\":{\"column\":3}}",
               200, NULL);
        cr_assert_eq(load(&unit_stub.actions), 1);
        cr_expect_str_eq(unit_stub.last_action_via, "step");
        cr_expect_str_eq(unit_stub.last_action, "{\"action\":{\"column\":3}}");
        cr_expect(unit_stub.last_action_whole);
        expect("POST /step HTTP/1.1\r\nHost: x\r\n" AUTH "Transfer-Encoding: chunked\r\n\r\n"
               "c\r\n{\"action\":{\"\r\nb\r\ncolumn\":4}}\r\n0\r\n\r\n",
               200, NULL);
        cr_assert_eq(load(&unit_stub.actions), 2);
        cr_expect_str_eq(unit_stub.last_action, "{\"action\":{\"column\":4}}");
}

/* --- control routes --- */

Test(frontend, control_routes_answered_locally)
{
        expect("GET /info HTTP/1.1\r\nHost: x\r\n" AUTH "\r\n", 200,
               "{\"method\":\"GET\",\"path\":\"/info\"}");
        expect("POST /reset_unit HTTP/1.1\r\nHost: x\r\n" AUTH "Content-Length: 11\r\n\r\n"
               "{\"seed\":42}",
               200, NULL);
        cr_assert_str_eq(unit_stub.last_control_body, "{\"seed\":42}");
        expect("POST /resume HTTP/1.1\r\nHost: x\r\n" AUTH "Content-Length: 0\r\n\r\n", 409,
               "{\"error\":{\"code\":\"conflict\",\"message\":\"the unit's phase does not allow "
               "this now\"}}");
        expect_log("[]");
}

Test(frontend, metrics_is_the_orchestrators_and_keeps_its_content_type)
{
        struct response r = request("GET /metrics HTTP/1.1\r\nHost: x\r\n" AUTH "\r\n");

        cr_assert_eq(r.status, 200);
        cr_assert(strstr(r.head.buf, "\r\nContent-Type: text/plain; version=0.0.4; "
                                     "charset=utf-8\r\n"),
                  "%s", r.head.buf);
        cr_assert_str_eq(r.body.buf, "# TYPE m gauge\nm 1\n");
        response_release(&r);
        expect("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", 401,
               "{\"error\":{\"code\":\"not_permitted\",\"message\":\"credentials missing or wrong: "
               "send the unit's token as Authorization: Bearer TOKEN, or in the URL "
               "(http://openenv:TOKEN@host:port)\"}}");
        expect("POST /metrics HTTP/1.1\r\nHost: x\r\n" AUTH "Content-Length: 0\r\n\r\n", 405,
               "{\"error\":{\"code\":\"method_not_allowed\",\"message\":\"this method is not "
               "allowed here (Allow says which is)\"}}");
        cr_assert(frontend_route_is_orchestrators("/metrics"));
        cr_assert_eq(load(&unit_stub.controls), 1);
        expect_log("[]");
}

Test(frontend, wrong_method_is_405_never_relayed)
{
        static const char *const reqs[] = {
                "POST /info HTTP/1.1\r\nHost: x\r\n" AUTH "Content-Length: 2\r\n\r\n{}",
                "GET /reset_unit HTTP/1.1\r\nHost: x\r\n" AUTH "\r\n",
                "DELETE /verdict/ HTTP/1.1\r\nHost: x\r\n" AUTH "\r\n",
                "POST /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n",
                "POST /health HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n",
                "CONNECT /x HTTP/1.1\r\nHost: x\r\n" AUTH "\r\n",
        };
        for (size_t i = 0; i < ELEMENTSOF(reqs); i++)
                expect(reqs[i], 405,
                       "{\"error\":{\"code\":\"method_not_allowed\",\"message\":\"this method is "
                       "not allowed here (Allow says which is)\"}}");
        expect_log("[]");
        cr_assert_eq(load(&unit_stub.controls), 0);
}

/* --- env relay --- */

Test(frontend, relays_byte_faithfully)
{
        struct response r = request("GET /cookies?a=%20b HTTP/1.1\r\nHost: x\r\n" AUTH "\r\n");
        cr_assert_eq(r.status, 200);
        cr_assert_str_eq(r.head.buf,
                         "HTTP/1.1 200 X\r\nContent-Type: text/plain\r\nContent-Length: 7\r\n"
                         "Set-Cookie: a=1\r\nSet-Cookie: b=2\r\nX-Odd:  spaced \r\n\r\n");
        cr_assert_str_eq(r.body.buf, "cookies");
        response_release(&r);
        expect("GET /echo-head?q=1&q=2 HTTP/1.1\r\nHost: x\r\n" AUTH "X-Dup: 1\r\nX-Dup: 2\r\n\r\n",
               200, "GET /echo-head?q=1&q=2 HTTP/1.1\r\nHost: x\r\nX-Dup: 1\r\nX-Dup: 2\r\n\r\n");
        /* An unframed response runs until the server closes. */
        expect("GET /close HTTP/1.1\r\nHost: x\r\n" AUTH "\r\n", 200, "until-eof");
}

Test(frontend, keep_alive_authorizes_every_request)
{
        struct cl c = { .fd = cl_connect(), .in = STRBUF_INIT };
        struct response r;

        /* Pipelined on purpose: each request is routed on its own. */
        cl_send(c.fd, "POST /step HTTP/1.1\r\nHost: x\r\n" AUTH "Content-Length: 2\r\n\r\n{}"
                      "GET /info HTTP/1.1\r\nHost: x\r\n" AUTH "\r\n"
                      "POST /step HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}"
                      "POST /echo HTTP/1.1\r\nHost: x\r\n" AUTH "Content-Length: 3\r\n\r\nabc");
        cr_assert(cl_response(&c, false, &r));
        cr_assert_eq(r.status, 200);
        cr_assert_str_eq(r.body.buf, "{\"observation\": {}, \"done\": false}");
        response_release(&r);
        cr_assert(cl_response(&c, false, &r));
        cr_assert_str_eq(r.body.buf, "{\"method\":\"GET\",\"path\":\"/info\"}");
        response_release(&r);
        /* The third has no token: 401, and the connection ends there. */
        cr_assert(cl_response(&c, false, &r));
        cr_assert_eq(r.status, 401);
        cr_assert(head_has(&r, "Connection: close"));
        response_release(&r);
        cr_assert(cl_wait_close(c.fd));
        close(c.fd);
        strbuf_release(&c.in);
        expect_log("[[\"POST\", \"/step\"]]");
        cr_assert_eq(load(&unit_stub.actions), 1);
}

/* Issue 24: a "?token=" proved who a client is as soon as any Upgrade
 * header came with it (h2c, anything), on any route, any method. */
Test(frontend, query_token_only_on_a_websocket_handshake)
{
#define KEY "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
#define V13 "Sec-WebSocket-Version: 13\r\n"
        static const char *const reqs[] = {
                "GET /info?token=" TOKEN " HTTP/1.1\r\nHost: x\r\nUpgrade: h2c\r\n"
                "Connection: Upgrade, HTTP2-Settings\r\nHTTP2-Settings: AAMAAABkAAQAAP__\r\n\r\n",
                "GET /info?token=" TOKEN " HTTP/1.1\r\nHost: x\r\nUpgrade: foo\r\n"
                "Connection: upgrade\r\n\r\n",
                "GET /verdict?token=" TOKEN " HTTP/1.1\r\nHost: x\r\nUpgrade: foo\r\n"
                "Connection: upgrade\r\n" KEY V13 "\r\n",
                /* websocket, but not a handshake: no key, a bad key, no
                 * version, another version, another method */
                "GET /info?token=" TOKEN " HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n"
                "Connection: upgrade\r\n" V13 "\r\n",
                "GET /info?token=" TOKEN " HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n"
                "Connection: upgrade\r\nSec-WebSocket-Key: short\r\n" V13 "\r\n",
                "GET /info?token=" TOKEN " HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n"
                "Connection: upgrade\r\n" KEY "\r\n",
                "GET /info?token=" TOKEN " HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n"
                "Connection: upgrade\r\n" KEY "Sec-WebSocket-Version: 8\r\n\r\n",
                "POST /reset_unit?token=" TOKEN " HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n"
                "Connection: upgrade\r\n" KEY V13 "Content-Length: 0\r\n\r\n",
                /* Upgrade without Connection: upgrade is no upgrade at all */
                "GET /info?token=" TOKEN " HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n" KEY V13
                "\r\n",
        };
#undef KEY
#undef V13
        for (size_t i = 0; i < ELEMENTSOF(reqs); i++) {
                struct response r = request(reqs[i]);
                cr_assert_eq(r.status, 401, "%s -> %u %s", reqs[i], r.status, r.body.buf);
                response_release(&r);
        }
        expect_log("[]");
        cr_assert_eq(load(&unit_stub.controls), 0);
}

Test(frontend, chunked_request_and_response)
{
        struct response r = request("POST /echo HTTP/1.1\r\nHost: x\r\n" AUTH
                                    "Transfer-Encoding: chunked\r\n\r\n"
                                    "3;ext=1\r\nabc\r\n4\r\ndefg\r\n0\r\nX-Trailer: t\r\n\r\n");
        cr_assert_eq(r.status, 200, "%u %s", r.status, r.body.buf);
        cr_assert_str_eq(r.body.buf, "abcdefg");
        response_release(&r);
        r = request("GET /chunked HTTP/1.1\r\nHost: x\r\n" AUTH "\r\n");
        cr_assert(head_has(&r, "Transfer-Encoding: chunked"));
        cr_assert_str_eq(r.body.buf, "hello world");
        response_release(&r);
}

/* Issue 24: an env server answering a plain request with a 101 left the
 * client with no answer at all (the connection was cut). */
Test(frontend, unasked_101_is_a_502_and_the_connection_goes_on)
{
        struct cl c = { .fd = cl_connect(), .in = STRBUF_INIT };
        struct response r;

        cl_send(c.fd, "GET /unasked-101 HTTP/1.1\r\nHost: x\r\n" AUTH "\r\n");
        cr_assert(cl_response(&c, false, &r), "no answer to an unasked 101");
        cr_assert_eq(r.status, 502, "%u %s", r.status, r.body.buf);
        cr_assert_str_eq(r.body.buf,
                         "{\"error\":{\"code\":\"upstream_unavailable\",\"message\":\"the upstream "
                         "(the env server, or the model provider) could not be reached or broke "
                         "its response\"}}");
        /* Nothing of the switched protocol reached the client. */
        cr_assert_null(strstr(r.head.buf, "101"));
        cr_assert_null(strstr(c.in.buf, "hello"));
        response_release(&r);
        close(c.fd);
        strbuf_release(&c.in);
        /* The env server is still reachable over a fresh upstream. */
        expect("GET /reset HTTP/1.1\r\nHost: x\r\n" AUTH "\r\n", 200, NULL);
}

Test(frontend, sse_streams_before_the_end)
{
        struct cl c = { .fd = cl_connect(), .in = STRBUF_INIT };

        cl_send(c.fd, "GET /sse HTTP/1.1\r\nHost: x\r\n" AUTH "\r\n");
        /* The first event must arrive while the upstream still holds the
         * stream open (it ends only after /release below). */
        while (!strstr(c.in.buf, "data: first"))
                cr_assert(cl_fill(&c), "first event never arrived");
        cr_assert_null(strstr(c.in.buf, "second"));
        expect("GET /release HTTP/1.1\r\nHost: x\r\n" AUTH "\r\n", 200, NULL);
        while (!strstr(c.in.buf, "0\r\n\r\n"))
                cr_assert(cl_fill(&c));
        cr_assert_not_null(strstr(c.in.buf, "data: second"));
        close(c.fd);
        strbuf_release(&c.in);
}

/* --- the episode's hooks --- */

Test(frontend, done_detected_on_step)
{
        expect("POST /step HTTP/1.1\r\nHost: x\r\n" AUTH
               "Content-Length: 13\r\n\r\n{\"done\":true}",
               200, "{\"observation\": {}, \"done\": true}");
        cr_assert_eq(load(&unit_stub.actions), 1);
        cr_assert_eq(load(&unit_stub.dones), 1);
}

Test(frontend, mcp_tool_calls_are_actions)
{
        static const char list[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}";
        static const char call[] = "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\","
                                   "\"params\":{\"name\":\"echo\",\"arguments\":{}}}";
        static const char escaped[] = "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools\\/call\","
                                      "\"params\":{\"name\":\"echo\"}}";
        static const char batch[] = "[{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\","
                                    "\"params\":{\"name\":\"a\"}},{\"jsonrpc\":\"2.0\",\"id\":5,"
                                    "\"method\":\"tools/list\"},{\"jsonrpc\":\"2.0\",\"id\":6,"
                                    "\"method\":\"tools/call\",\"params\":{\"name\":\"b\"}}]";
        static const char finish[] = "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\","
                                     "\"params\":{\"name\":\"finish\"}}";
        const struct {
                const char *body;
                const char *auth;
                int actions, dones;
        } steps[] = {
                { list, AUTH, 0, 0 },  { call, AGENT_AUTH, 1, 0 },   { escaped, AUTH, 2, 0 },
                { batch, AUTH, 4, 0 }, { finish, AGENT_AUTH, 5, 1 },
        };
        for (size_t i = 0; i < ELEMENTSOF(steps); i++) {
                char *req = xasprintf(
                        "POST /mcp HTTP/1.1\r\nHost: x\r\n%sContent-Length: %zu\r\n\r\n%s",
                        steps[i].auth, strlen(steps[i].body), steps[i].body);
                expect(req, 200, NULL);
                free(req);
                cr_assert_eq(load(&unit_stub.actions), steps[i].actions, "after %zu", i);
                cr_assert_eq(load(&unit_stub.dones), steps[i].dones, "after %zu", i);
        }
}

Test(frontend, env_unavailable_is_503)
{
        stub_end_episode();
        expect("POST /mcp HTTP/1.1\r\nHost: x\r\n" AUTH "Content-Length: 0\r\n\r\n", 503,
               "{\"error\":{\"code\":\"episode_unavailable\",\"message\":\"no episode is "
               "live (POST /reset starts one)\"}}");
        /* The agent is told no more than that. */
        expect("POST /mcp HTTP/1.1\r\nHost: x\r\n" AGENT_AUTH "Content-Length: 0\r\n\r\n", 503,
               "{\"error\":{\"code\":\"episode_unavailable\",\"message\":\"no episode is "
               "live\"}}");
        /* Not ready: the unit's reason comes with it, escaped. */
        __atomic_store_n(&unit_stub.not_ready, 1, __ATOMIC_SEQ_CST);
        expect("POST /step HTTP/1.1\r\nHost: x\r\n" AUTH "Content-Length: 2\r\n\r\n{}", 503,
               "{\"error\":{\"code\":\"episode_unavailable\",\"message\":\"no episode is "
               "live (POST /reset starts one): the first episode is still \\\"starting\\\""
               "\\u000a\"}}");
        __atomic_store_n(&unit_stub.not_ready, 0, __ATOMIC_SEQ_CST);
        /* Only the orchestrator's reset starts an episode. */
        expect("POST /reset HTTP/1.1\r\nHost: x\r\n" AGENT_AUTH "Content-Length: 2\r\n\r\n{}", 403,
               NULL);
        expect("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", 200, NULL);
        cr_assert_eq(load(&unit_stub.episode_requests), 0);
        stub_start_episode();
        expect_log("[]");
}

Test(frontend, reset_without_an_episode_waits_for_one)
{
        struct cl c = { .fd = cl_connect(), .in = STRBUF_INIT };
        struct response r;

        stub_end_episode();
        cl_send(c.fd, "POST /reset HTTP/1.1\r\nHost: x\r\n" AUTH "Content-Length: 2\r\n\r\n{}");
        while (load(&unit_stub.episode_requests) == 0)
                usleep(1000);
        stub_start_episode();
        cr_assert(cl_response(&c, false, &r));
        cr_assert_eq(r.status, 200, "%u %s", r.status, r.body.buf);
        cr_assert_str_eq(r.body.buf, "{\"observation\": {}, \"done\": false}");
        response_release(&r);
        /* The connection carries on. */
        cl_send(c.fd, "POST /step HTTP/1.1\r\nHost: x\r\n" AUTH "Content-Length: 2\r\n\r\n{}");
        cr_assert(cl_response(&c, false, &r));
        cr_assert_eq(r.status, 200);
        response_release(&r);
        close(c.fd);
        strbuf_release(&c.in);
        cr_assert_eq(load(&unit_stub.episode_requests), 1);
        expect_log("[[\"POST\", \"/reset\"], [\"POST\", \"/step\"]]");
}

Test(frontend, a_waiting_client_that_leaves_is_forgotten)
{
        int fd = cl_connect();

        stub_end_episode();
        cl_send(fd, "POST /reset HTTP/1.1\r\nHost: x\r\n" AUTH "Content-Length: 2\r\n\r\n{}");
        while (load(&unit_stub.episode_requests) == 0)
                usleep(1000);
        close(fd);
        /* The stub calls back only who is still waiting; nothing is sent
         * to the env for the client that left. */
        while (frontend_connections(fe) > 0)
                usleep(1000);
        stub_start_episode();
        expect_log("[]");
}
