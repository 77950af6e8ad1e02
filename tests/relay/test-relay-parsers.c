/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Pure tests of the parsers, the event loop and the splice relay. */
#include <errno.h>
#include <fcntl.h>
#include <http_parser.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "base/fd-util.h"
#include "base/strbuf.h"
#include "base/util.h"
#include "base/event-loop.h"
#include "relay/http-chunked.h"
#include "relay/http-head.h"
#include "base/pipe-relay.h"
#include "relay/model-usage.h"
#include "relay/ws-frame.h"
#include "test-helpers.h"

static int parse_req(const char *s, struct http_head *h)
{
        size_t end = 0;
        int r = http_head_find_end(s, strlen(s), &end);
        if (r <= 0)
                return r == 0 ? -EAGAIN : r;
        return http_head_parse(s, end, false, false, h);
}

Test(http_head, request_fields_borrow_the_buffer)
{
        static struct http_head h;
        const char *s =
                "POST /a%20b?x=1 HTTP/1.1\r\nHost: h\r\nSet-Thing:  v1 \r\nset-thing: v2\r\n"
                "Content-Length: 12\r\n\r\n";
        cr_assert_eq(parse_req(s, &h), 0);
        cr_assert_eq(h.method, HTTP_POST);
        cr_assert_eq(h.target_len, 10);
        cr_assert(strncmp(h.target, "/a%20b?x=1", 10) == 0);
        cr_assert_eq(h.n_headers, 4);
        cr_assert_eq(h.headers[1].value_len, 2);
        cr_assert(strncmp(h.headers[1].value, "v1", 2) == 0);
        cr_assert_eq(h.headers[1].line_start, 35);
        cr_assert_eq(h.body, HTTP_BODY_LENGTH);
        cr_assert_eq(h.content_length, 12);
        cr_assert(h.keep_alive);
        size_t from = 0;
        cr_assert_not_null(http_head_next(&h, "SET-THING", &from));
        cr_assert_not_null(http_head_next(&h, "SET-THING", &from));
        cr_assert_null(http_head_next(&h, "SET-THING", &from));
}

Test(http_head, incomplete_and_limits)
{
        static struct http_head h;
        size_t end;
        cr_assert_eq(http_head_find_end("GET / HTTP/1.1\r\nHost: x\r\n\r", 26, &end), 0);
        char *big = xmalloc(HTTP_MAX_HEAD_BYTES + 10);
        memset(big, 'a', HTTP_MAX_HEAD_BYTES + 10);
        cr_assert_eq(http_head_find_end(big, HTTP_MAX_HEAD_BYTES + 10, &end), -E2BIG);
        free(big);
        cr_assert_eq(parse_req("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", &h), 0);
        cr_assert(!h.keep_alive);
        cr_assert_eq(parse_req("GET / HTTP/1.0\r\n\r\n", &h), 0);
        cr_assert(!h.keep_alive);
        cr_assert_eq(parse_req("GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: "
                               "keep-alive, Upgrade\r\n\r\n",
                               &h),
                     0);
        cr_assert(h.upgrade);
        cr_assert_eq(parse_req("GET / HTTP/1.1\r\nHost: x\r\nA: \x01\r\n\r\n", &h), -EBADMSG);
        cr_assert_eq(parse_req("GET / HTTP/1.1\r\nHost: x\r\nA\r\n\r\n", &h), -EBADMSG);
        cr_assert_eq(parse_req("GET / HTTP/1.1\r\nHost: x\r\n: v\r\n\r\n", &h), -EBADMSG);
}

Test(http_head, response_framing)
{
        static struct http_head h;
        const char *s = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n";
        cr_assert_eq(http_head_parse(s, strlen(s), true, false, &h), 0);
        cr_assert_eq(h.body, HTTP_BODY_LENGTH);
        cr_assert_eq(http_head_parse(s, strlen(s), true, true, &h), 0);
        cr_assert_eq(h.body, HTTP_BODY_NONE, "HEAD responses have no body");
        s = "HTTP/1.1 204 No Content\r\n\r\n";
        cr_assert_eq(http_head_parse(s, strlen(s), true, false, &h), 0);
        cr_assert_eq(h.body, HTTP_BODY_NONE);
        s = "HTTP/1.1 200 OK\r\n\r\n";
        cr_assert_eq(http_head_parse(s, strlen(s), true, false, &h), 0);
        cr_assert_eq(h.body, HTTP_BODY_EOF);
        cr_assert(!h.keep_alive);
        s = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n";
        cr_assert_eq(http_head_parse(s, strlen(s), true, false, &h), 0);
        cr_assert(h.upgrade);
        s = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
        cr_assert_eq(http_head_parse(s, strlen(s), true, false, &h), 0);
        cr_assert_eq(h.body, HTTP_BODY_CHUNKED);
}

static void collect(void *ud, const char *d, size_t n)
{
        strbuf_add(ud, d, n);
}

Test(http_chunked, byte_by_byte_and_bounds)
{
        const char *s =
                "4;x=y\r\nWiki\r\n5\r\npedia\r\nE\r\n in\r\n\r\nchunks.\r\n0\r\nT: 1\r\n\r\nNEXT";
        struct strbuf out = STRBUF_INIT;
        struct http_chunked c;
        size_t used = 0, i;
        int r = 0;

        http_chunked_init(&c);
        for (i = 0; i < strlen(s) && r == 0; i++)
                r = http_chunked_feed(&c, s + i, 1, collect, &out, &used);
        cr_assert_eq(r, 1);
        cr_assert_eq(i, strlen(s) - 4);
        cr_assert_str_eq(out.buf, "Wikipedia in\r\n\r\nchunks.");
        strbuf_release(&out);

        static const char *const bad[] = { "x\r\n",   "4\r\nWikiX\r\n",
                                           "4\nWiki", "1234567890abcdef0\r\n",
                                           "\r\n",    "0\r\n\n" };
        for (i = 0; i < ELEMENTSOF(bad); i++) {
                http_chunked_init(&c);
                cr_assert_eq(http_chunked_feed(&c, bad[i], strlen(bad[i]), NULL, NULL, &used),
                             -EBADMSG, "%s", bad[i]);
        }
}

/* What http-parser as Debian builds it (HTTP_PARSER_STRICT=0) takes as a
 * chunked body: a relay that read these as its upstream may not would be a
 * request smuggler's tool, so the tracker stays the relay's decoder. */
Test(http_chunked, strict_where_the_library_is_not)
{
        static const struct {
                const char *s;
                size_t len;
        } lax[] = {
#define LAX(s) { s, sizeof(s) - 1 }
                LAX("5\r\nhelloXY0\r\n\r\n"),                     /* no CRLF after the data */
                LAX("5\rXhello\r\n0\r\n\r\n"),                    /* a CR without its LF */
                LAX("5;a\nb\r\nhello\r\n0\r\n\r\n"),              /* LF in an extension */
                LAX("5;\0\r\nhello\r\n0\r\n\r\n"),                /* NUL in an extension */
                LAX("0\r\n\rX\n"),                                /* the final CRLF, bare */
                LAX("0\r\nX-T: 1\n\r\n"),                         /* a trailer ending in LF */
                LAX("0\r\n X: 1\r\n\r\n"),                        /* obs-fold in the trailers */
                LAX("0000000000000000005\r\nhello\r\n0\r\n\r\n"), /* 19 digits */
#undef LAX
        };
        struct http_chunked c;
        size_t used;

        for (size_t i = 0; i < ELEMENTSOF(lax); i++) {
                http_chunked_init(&c);
                cr_assert_eq(http_chunked_feed(&c, lax[i].s, lax[i].len, NULL, NULL, &used),
                             -EBADMSG, "case %zu", i);
        }
}

/* A whole answer's body (openenvctl): decoded in place, whatever follows it
 * ignored; cut short or malformed, refused (the client's own scanner took a
 * body without its last chunk, and any two bytes after a chunk's data). */
Test(http_chunked, decode_a_whole_body_in_place)
{
        char ok[] =
                "4;x=y\r\nWiki\r\n5\r\npedia\r\nE\r\n in\r\n\r\nchunks.\r\n0\r\nT: 1\r\n\r\nNEXT";
        static const char *const bad[] = { "", "4\r\nWiki\r\n", "4\r\nWikiX\r\n0\r\n\r\n", "0\r\n",
                                           "x\r\n0\r\n\r\n" };
        size_t len = 0;

        cr_assert_eq(http_chunked_decode(ok, strlen(ok), &len), 0);
        cr_assert_eq(len, strlen("Wikipedia in\r\n\r\nchunks."));
        cr_assert_str_eq(ok, "Wikipedia in\r\n\r\nchunks.");
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                char *b = xstrdup(bad[i]);
                cr_assert_eq(http_chunked_decode(b, strlen(b), &len), -EBADMSG, "%s", bad[i]);
                free(b);
        }
}

/* The health probe's question: the status code, from the first bytes. */
Test(http_head, status_line_from_the_first_bytes)
{
        static const struct {
                const char *s;
                int r;
                unsigned status;
        } cases[] = {
                { "HTTP/1.1 200 OK\r\n", 1, 200 },
                { "HTTP/1.0 503 Service Unavailable\r\nContent-Le", 1, 503 },
                { "HTTP/1.1 204\r\n", 1, 204 },
                { "HTTP/1.1 200 a reason phrase longer than the probe reads", 1, 200 },
                { "", 0, 0 },
                { "HTTP/1.1 2", 0, 0 },
                { "HTTP/1.1 200 ", 0, 0 },
                { "HTTP/2.0 200 OK\r\n", -EBADMSG, 0 },
                { "HTTP/1.1 20x OK\r\n", -EBADMSG, 0 },
                { "HTTP/1.1 099 OK\r\n", -EBADMSG, 0 },
                { "SSH-2.0-OpenSSH_9.2\r\n", -EBADMSG, 0 },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                unsigned status = 0;
                int r = http_status_line_parse(cases[i].s, strlen(cases[i].s), &status);
                cr_assert_eq(r, cases[i].r, "%s: %d", cases[i].s, r);
                if (r > 0)
                        cr_assert_eq(status, cases[i].status, "%s: %u", cases[i].s, status);
        }
}

static void count_text(void *ud, const char *d, size_t n)
{
        (void) d;
        *(size_t *) ud += n;
}

static int ws_feed(bool client, const uint8_t *b, size_t n, uint16_t *code)
{
        struct ws_parser p;
        size_t count = 0;
        ws_parser_init(&p, client, count_text, &count);
        ssize_t r = ws_parser_feed(&p, b, n);
        *code = p.error_code;
        ws_parser_done(&p);
        if (r >= 0)
                cr_assert_eq((size_t) r, n, "nothing asked the parser to stop");
        return r < 0 ? (int) r : 0;
}

/* Usage from body, fed whole and byte by byte (the split must not matter). */
static void usage_of(const char *body, bool sse, uint64_t *ret_in, uint64_t *ret_out)
{
        struct model_usage whole, bytes;
        uint64_t in2, out2;

        model_usage_init(&whole, sse);
        model_usage_feed(&whole, body, strlen(body));
        model_usage_init(&bytes, sse);
        for (size_t i = 0; body[i]; i++)
                model_usage_feed(&bytes, body + i, 1);
        model_usage_tokens(&whole, ret_in, ret_out);
        model_usage_tokens(&bytes, &in2, &out2);
        cr_assert(*ret_in == in2 && *ret_out == out2 && whole.seen == bytes.seen, "%s", body);
}

#define assert_usage(body, sse, in, out)                                        \
        do {                                                                    \
                uint64_t in_, out_;                                             \
                usage_of(body, sse, &in_, &out_);                               \
                cr_assert(in_ == (in) && out_ == (out), "%s: %llu/%llu", body,  \
                          (unsigned long long) in_, (unsigned long long) out_); \
        } while (0)

Test(model_usage, json_bodies_count_only_the_top_level_usage)
{
        /* anthropic: cache reads and writes are input the provider bills */
        assert_usage("{\"type\":\"message\",\"content\":[{\"type\":\"tool_use\",\"input\":"
                     "{\"usage\":{\"input_tokens\":999}}}],\"usage\":{\"input_tokens\":10,"
                     "\"cache_creation_input_tokens\":3,\"cache_read_input_tokens\":2,"
                     "\"output_tokens\":5,\"server_tool_use\":{\"web_search_requests\":9}}}",
                     false, 15, 5);
        /* openai: prompt/completion; nested details ignored */
        assert_usage("{\"choices\":[{\"message\":{\"content\":\"\\\"usage\\\": {}\"}}],"
                     "\"usage\":{\"prompt_tokens\":11,\"completion_tokens\":4,\"total_tokens\":15,"
                     "\"prompt_tokens_details\":{\"cached_tokens\":8}}}",
                     false, 11, 4);
        /* embeddings report prompt and total only */
        assert_usage("{\"data\":[],\"usage\":{\"prompt_tokens\":7,\"total_tokens\":7}}", false, 7,
                     0);
        /* a total the parts do not explain counts as input */
        assert_usage("{\"usage\":{\"output_tokens\":2,\"total_tokens\":9}}", false, 7, 2);
        /* whitespace anywhere JSON allows it */
        assert_usage(" {\n \"usage\" :\t{ \"input_tokens\" : 4 , \"output_tokens\":1 } } ", false,
                     4, 1);
        /* not at the top level, not numbers, or not counts: nothing */
        assert_usage("{\"data\":{\"usage\":{\"input_tokens\":5}}}", false, 0, 0);
        assert_usage("[{\"usage\":{\"input_tokens\":5}}]", false, 0, 0);
        assert_usage("{\"usage\":{\"input_tokens\":\"5\",\"output_tokens\":-3}}", false, 0, 0);
        assert_usage("{\"usage\":{\"input_tokens\":1.5,\"output_tokens\":2e3}}", false, 0, 0);
        assert_usage("{\"usage\":{\"in\\u0070ut_tokens\":5}}", false, 0, 0);
        assert_usage("{\"usage\":null,\"x\":[true,false,null]}", false, 0, 0);
        /* a count beyond 18 digits saturates instead of wrapping */
        assert_usage("{\"usage\":{\"output_tokens\":123456789012345678901234567890}}", false, 0,
                     999999999999999999ULL);
        /* garbage, gzip, truncation: no crash, no count */
        assert_usage("\x1f\x8b\x08\x00garbage", false, 0, 0);
        assert_usage("{\"usage\":{\"input_tokens\":5", false, 0, 0);
        assert_usage("}}}]]]{\"usage\":{\"input_tokens\":5}}", false, 0, 0);
}

Test(model_usage, a_body_deeper_than_tracked_returns_to_the_top)
{
        struct strbuf b = STRBUF_INIT;

        /* 10000 levels of model-written nesting, brackets in strings, then
         * the provider's usage: still found, in constant memory. */
        strbuf_adds(&b, "{\"content\":[");
        for (int i = 0; i < 10000; i++)
                strbuf_adds(&b, "{\"a\":[\"]}\\\"\",");
        strbuf_adds(&b, "1");
        for (int i = 0; i < 10000; i++)
                strbuf_adds(&b, "]}");
        strbuf_adds(&b, "],\"usage\":{\"input_tokens\":3,\"output_tokens\":4}}");
        assert_usage(b.buf, false, 3, 4);
        strbuf_release(&b);
}

Test(model_usage, event_streams)
{
        /* anthropic: message_start then a cumulative message_delta */
        assert_usage("event: message_start\n"
                     "data: {\"type\":\"message_start\",\"message\":{\"content\":[],"
                     "\"usage\":{\"input_tokens\":25,\"output_tokens\":1}}}\n\n"
                     ": a comment\n"
                     "event: content_block_delta\n"
                     "data: {\"type\":\"content_block_delta\",\"delta\":{\"text\":\"usage\"}}\n\n"
                     "event: message_delta\n"
                     "data: {\"type\":\"message_delta\",\"usage\":{\"output_tokens\":15}}\n\n",
                     true, 25, 15);
        /* the same with CRLF and with CR line ends, and no space after ':' */
        assert_usage("data:{\"message\":{\"usage\":{\"input_tokens\":5}}}\r\n\r\n"
                     "data:{\"usage\":{\"output_tokens\":6}}\r\n\r\n",
                     true, 5, 6);
        assert_usage("data: {\"usage\":{\"input_tokens\":5}}\r\rdata: {\"usage\":"
                     "{\"output_tokens\":6}}\r\r",
                     true, 5, 6);
        /* openai chat: usage null until the last chunk, then [DONE] */
        assert_usage("data: {\"choices\":[{\"delta\":{}}],\"usage\":null}\n\n"
                     "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":8,"
                     "\"completion_tokens\":3,\"total_tokens\":11}}\n\n"
                     "data: [DONE]\n\n",
                     true, 8, 3);
        /* openai responses: response.completed carries response.usage */
        assert_usage("event: response.created\ndata: {\"type\":\"response.created\","
                     "\"response\":{\"usage\":null}}\n\n"
                     "event: response.completed\ndata: {\"type\":\"response.completed\","
                     "\"response\":{\"usage\":{\"input_tokens\":9,\"output_tokens\":2,"
                     "\"total_tokens\":11}}}\n\n",
                     true, 9, 2);
        /* one JSON document over several data lines */
        assert_usage("data: {\"usage\":\ndata: {\"input_tokens\":4}}\n\n", true, 4, 0);
        /* other fields, a field named like data, a long field name: ignored */
        assert_usage("id: {\"usage\":{\"input_tokens\":5}}\n"
                     "datax: {\"usage\":{\"input_tokens\":5}}\n"
                     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa: x\n\n",
                     true, 0, 0);
        /* a broken event does not spoil the next one */
        assert_usage("data: {{{{\n\ndata: {\"usage\":{\"output_tokens\":1}}\n\n", true, 0, 1);
}

Test(ws_frame, valid_and_invalid_frames)
{
        uint16_t code;
        /* unmasked server text "Hi", fragmented text "Hel"+"lo" with a ping between */
        const uint8_t ok[] = { 0x81, 0x02, 'H',  'i', 0x01, 0x03, 'H',  'e',  'l', 0x89,
                               0x00, 0x80, 0x02, 'l', 'o',  0x88, 0x02, 0x03, 0xe8 };
        cr_assert_eq(ws_feed(false, ok, sizeof(ok), &code), 0);
        /* A 4 GiB binary frame's header: no size is refused, it streams. */
        const uint8_t huge[] = { 0x82, 0x7f, 0, 0, 0, 1, 0, 0, 0, 0, 'x', 'y' };
        cr_assert_eq(ws_feed(false, huge, sizeof(huge), &code), 0);

        static const struct {
                uint8_t b[16];
                size_t n;
                bool client;
                uint16_t code;
        } bad[] = {
                { { 0x81, 0x02, 'H', 'i' }, 4, true, 1002 },              /* client unmasked */
                { { 0x81, 0x82, 0, 0, 0, 0, 'H', 'i' }, 8, false, 1002 }, /* server masked */
                { { 0xC1, 0x00 }, 2, false, 1002 },                       /* RSV1 */
                { { 0x83, 0x00 }, 2, false, 1002 },                       /* opcode 3 */
                { { 0x09, 0x00 }, 2, false, 1002 },                       /* fragmented ping */
                { { 0x80, 0x00 }, 2, false, 1002 },                       /* stray continuation */
                { { 0x81, 0x7e, 0x00, 0x05 }, 4, false, 1002 },           /* non-minimal 16 */
                { { 0x82, 0x7f, 0, 0, 0, 0, 0, 0, 0x01, 0 }, 10, false, 1002 }, /* non-minimal 64 */
                { { 0x88, 0x01, 0x03 }, 3, false, 1002 },                       /* close len 1 */
                { { 0x88, 0x02, 0x03, 0xed }, 4, false, 1002 },                 /* close 1005 */
                { { 0x81, 0x02, 0xc0, 0x80 }, 4, false, 1007 },                 /* overlong */
                { { 0x81, 0x03, 0xed, 0xa0, 0x80 }, 5, false, 1007 },           /* surrogate */
                { { 0x81, 0x01, 0xe2 }, 3, false, 1007 },                       /* truncated */
                { { 0x88, 0x00, 0x81, 0x00 }, 4, false, 1002 },                 /* after close */
                { { 0x89, 0x7e, 0x00, 0x7e }, 4, false, 1002 },                 /* ping > 125 */
        };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                cr_assert_lt(ws_feed(bad[i].client, bad[i].b, bad[i].n, &code), 0, "case %zu", i);
                cr_assert_eq(code, bad[i].code, "case %zu: %u", i, code);
        }
}

/* --- loop --- */

static int fired[4];

static int on_timer(struct loop_source *s, usec_t now, void *ud)
{
        (void) s;
        (void) now;
        fired[(intptr_t) ud] = ++fired[0];
        return 0;
}

static struct loop *tl;

static int on_last_timer(struct loop_source *s, usec_t now, void *ud)
{
        (void) s;
        (void) now;
        (void) ud;
        loop_quit(tl, 7);
        return 0;
}

Test(loop, timers_fire_in_order_and_can_be_cancelled)
{
        struct loop_source *a, *b, *c, *d;
        usec_t now;

        cr_assert_eq(loop_new(&tl), 0);
        now = loop_now(tl);
        cr_assert_eq(loop_add_timer(tl, now + 3000, (loop_time_fn) on_timer, (void *) 2, &a), 0);
        cr_assert_eq(loop_add_timer(tl, now + 1000, (loop_time_fn) on_timer, (void *) 1, &b), 0);
        cr_assert_eq(loop_add_timer(tl, now + 2000, (loop_time_fn) on_timer, (void *) 3, &c), 0);
        loop_source_free(c);
        cr_assert_eq(loop_add_timer(tl, now + 5000, on_last_timer, NULL, &d), 0);
        cr_assert_eq(loop_run(tl), 7);
        cr_assert_eq(fired[1], 1);
        cr_assert_eq(fired[2], 2);
        cr_assert_eq(fired[3], 0, "cancelled timer fired");
        loop_source_free(a);
        loop_source_free(b);
        loop_source_free(d);
        loop_free(tl);
}

static int child_status = -1;

static int on_child(struct loop_source *s, const siginfo_t *si, void *ud)
{
        (void) s;
        (void) ud;
        child_status = si->si_status;
        loop_quit(tl, 0);
        return 0;
}

static int got_signal;

static int on_signal(struct loop_source *s, const struct signalfd_siginfo *si, void *ud)
{
        (void) s;
        (void) ud;
        got_signal = (int) si->ssi_signo;
        loop_quit(tl, 0);
        return 0;
}

Test(loop, pidfd_and_signalfd_sources)
{
        struct loop_source *cs, *ss;
        pid_t pid;
        int pidfd;

        cr_assert_eq(loop_new(&tl), 0);
        pid = fork();
        if (pid == 0)
                _exit(42);
        pidfd = (int) syscall(SYS_pidfd_open, pid, 0);
        cr_assert_geq(pidfd, 0);
        cr_assert_eq(loop_add_child(tl, pidfd, on_child, NULL, &cs), 0);
        cr_assert_eq(loop_run(tl), 0);
        cr_assert_eq(child_status, 42);
        cr_assert_eq(waitpid(pid, NULL, WNOHANG), -1, "child was not reaped by the loop");

        cr_assert_eq(loop_add_signal(tl, SIGUSR1, on_signal, NULL, &ss), 0);
        kill(getpid(), SIGUSR1);
        cr_assert_eq(loop_run(tl), 0);
        cr_assert_eq(got_signal, SIGUSR1);
        loop_source_free(cs);
        loop_source_free(ss);
        loop_free(tl);
}

/* --- splice relay --- */

static int relay_error = 1;

static void relay_done(struct pipe_relay *r, int error, void *ud)
{
        (void) r;
        (void) ud;
        relay_error = error;
        loop_quit(tl, 0);
}

Test(pipe_relay, bulk_and_half_close)
{
        int a[2], b[2];
        struct pipe_relay *r;
        const size_t total = 4 * 1024 * 1024;
        pid_t pid;

        cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, a), 0);
        cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, b), 0);
        cr_assert_eq(loop_new(&tl), 0);
        cr_assert_eq(pipe_relay_new(tl, a[1], b[1], 30 * USEC_PER_SEC, relay_done, NULL, &r), 0);
        pipe_relay_prime(r, true, "PRIME", 5);
        pid = fork();
        if (pid == 0) {
                /* Client side: send 4 MiB then half-close, then read the echo
                 * of the far side until EOF. */
                char *buf = xcalloc(1, 65536);
                close(b[0]);
                for (size_t sent = 0; sent < total; sent += 65536)
                        if (write_all(a[0], buf, 65536) < 0)
                                _exit(2);
                shutdown(a[0], SHUT_WR);
                size_t got = 0;
                ssize_t n;
                while ((n = read(a[0], buf, 65536)) > 0)
                        got += (size_t) n;
                _exit(got == 3 ? 0 : 3);
        }
        close(a[0]);
        pid_t pid2 = fork();
        if (pid2 == 0) {
                /* Server side: count until EOF (the half-close), then answer. */
                char *buf = xcalloc(1, 65536);
                size_t got = 0;
                ssize_t n;
                while ((n = read(b[0], buf, 65536)) > 0)
                        got += (size_t) n;
                if (got != total + 5)
                        _exit(4);
                if (write_all(b[0], "end", 3) < 0)
                        _exit(5);
                _exit(0);
        }
        close(b[0]);
        cr_assert_eq(loop_run(tl), 0);
        cr_assert_eq(relay_error, 0);
        int st;
        cr_assert_eq(waitpid(pid, &st, 0), pid);
        cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "client status %d", st);
        cr_assert_eq(waitpid(pid2, &st, 0), pid2);
        cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "server status %d", st);
        loop_free(tl);
}

Test(pipe_relay, idle_timeout)
{
        int a[2], b[2];
        struct pipe_relay *r;

        cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, a), 0);
        cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, b), 0);
        cr_assert_eq(loop_new(&tl), 0);
        cr_assert_eq(pipe_relay_new(tl, a[1], b[1], 50 * USEC_PER_MSEC, relay_done, NULL, &r), 0);
        cr_assert_eq(loop_run(tl), 0);
        cr_assert_eq(relay_error, -ETIMEDOUT);
        char c;
        cr_assert_eq(read(a[0], &c, 1), 0, "relay did not close its side");
        close(a[0]);
        close(b[0]);
        loop_free(tl);
}
