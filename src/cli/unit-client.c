/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "cli/unit-client.h"

#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <jansson.h>

#include "base/exit-code.h"
#include "base/fd-util.h"
#include "base/log.h"
#include "base/parse-util.h"
#include "base/strbuf.h"
#include "base/text-escape.h"
#include "base/util.h"
#include "relay/http-chunked.h"
#include "relay/http-head.h"

int unit_client_init(struct unit_client *c, const char *url, const char *token_file,
                     struct error_detail *ret_err)
{
        const char *rest = startswith(url, "http://"), *at, *slash, *hostport, *colon;
        cleanup_free char *authority = NULL;
        const char *env;
        unsigned port;
        int r;

        *c = (struct unit_client){ .cancel_fd = -EBADF };
        if (!rest)
                return error_detail_set(ret_err, -EINVAL,
                                        "the URL must be http://[openenv:TOKEN@]HOST[:PORT]");
        slash = strchr(rest, '/');
        if (slash && slash[strspn(slash, "/")])
                return error_detail_set(ret_err, -EINVAL,
                                        "the URL takes no path: the unit's routes are its own");
        authority = slash ? xstrndup(rest, (size_t) (slash - rest)) : xstrdup(rest);
        at = strrchr(authority, '@');
        if (at) {
                const char *pw = memchr(authority, ':', (size_t) (at - authority));
                if (pw && pw + 1 < at)
                        c->token = xstrndup(pw + 1, (size_t) (at - pw - 1));
        }
        hostport = at ? at + 1 : authority;
        if (hostport[0] == '[') {
                const char *close = strchr(hostport, ']');
                if (!close) {
                        (void) error_detail_set(ret_err, -EINVAL,
                                                "an IPv6 address in the URL needs its ']'");
                        goto fail;
                }
                c->host = xstrndup(hostport + 1, (size_t) (close - hostport - 1));
                colon = close[1] == ':' ? close + 1 : NULL;
                if (close[1] && !colon) {
                        (void) error_detail_set(ret_err, -EINVAL,
                                                "after ']' only ':PORT' may follow");
                        goto fail;
                }
        } else {
                colon = strchr(hostport, ':');
                c->host =
                        colon ? xstrndup(hostport, (size_t) (colon - hostport)) : xstrdup(hostport);
        }
        if (!*c->host) {
                (void) error_detail_set(ret_err, -EINVAL, "the URL names no host");
                goto fail;
        }
        if (colon && parse_uint(colon + 1, 1, 65535, &port) < 0) {
                (void) error_detail_set(ret_err, -EINVAL, "'%s' is not a port (1-65535)",
                                        colon + 1);
                goto fail;
        }
        c->port = colon ? xstrdup(colon + 1) : xstrdup("8000");
        if (!c->token && token_file) {
                r = read_secret_file(token_file, 4096, &c->token);
                if (r < 0) {
                        (void) error_detail_set(ret_err, -EINVAL, "--token-file %s: %s", token_file,
                                                r == -EINVAL ? "empty, or holds a NUL byte"
                                                             : strerror(-r));
                        goto fail;
                }
        }
        env = getenv("OPENENVD_TOKEN");
        if (!c->token && env && *env)
                c->token = xstrdup(env);
        return 0;
fail:
        unit_client_done(c);
        return -EINVAL;
}

void unit_client_done(struct unit_client *c)
{
        free(c->host);
        free(c->port);
        c->token = secret_free(c->token);
        *c = (struct unit_client){ .cancel_fd = -EBADF };
}

static int connect_to(const struct unit_client *c)
{
        struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai = NULL;
        struct timeval tv = { .tv_sec = UNIT_CLIENT_TIMEOUT_S };
        int fd = -1, r = -EHOSTUNREACH;

        if (getaddrinfo(c->host, c->port, &hints, &ai) != 0)
                return -EHOSTUNREACH;
        for (struct addrinfo *a = ai; a; a = a->ai_next) {
                fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
                if (fd < 0)
                        continue;
                /* A blocking connect honours SO_SNDTIMEO (socket(7)). */
                (void) setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
                (void) setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
                if (connect(fd, a->ai_addr, a->ai_addrlen) == 0)
                        break;
                r = errno == EINPROGRESS ? -ETIMEDOUT : -errno;
                fd = safe_close(fd);
        }
        freeaddrinfo(ai);
        return fd >= 0 ? fd : r;
}

/* The whole answer (the unit closes after it: Connection: close), bounded
 * by UNIT_CLIENT_MAX_BYTES and UNIT_CLIENT_TIMEOUT_S of silence; given up
 * as soon as cancel_fd is readable (poll() skips a negative fd). */
static int read_answer(int fd, int cancel_fd, struct strbuf *ret)
{
        char buf[16384];

        for (;;) {
                struct pollfd p[2] = { { .fd = fd, .events = POLLIN },
                                       { .fd = cancel_fd, .events = POLLIN } };
                int n = poll(p, 2, UNIT_CLIENT_TIMEOUT_S * 1000);
                ssize_t k;

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                if (n == 0)
                        return -ETIMEDOUT;
                if (p[1].revents)
                        return -ECANCELED;
                k = read(fd, buf, sizeof(buf));
                if (k < 0 && (errno == EINTR || errno == EAGAIN))
                        continue;
                if (k < 0)
                        return -errno;
                if (k == 0)
                        return 0;
                if (ret->len + (size_t) k > UNIT_CLIENT_MAX_BYTES)
                        return -EFBIG;
                strbuf_add(ret, buf, (size_t) k);
        }
}

/* The answer's body as its head frames it, in place at *body (the relay's
 * parsers: the head with http-parser, a chunked body with the one chunked
 * decoder); -EBADMSG for an answer that is not HTTP/1.x or is cut short. */
static int answer_body(struct strbuf *answer, unsigned *ret_status, char **ret_body,
                       size_t *ret_len)
{
        struct http_head h;
        size_t head_len, len;
        char *body;

        if (http_head_find_end(answer->buf, answer->len, &head_len) <= 0 ||
            http_head_parse(answer->buf, head_len, true, false, &h) < 0)
                return -EBADMSG;
        body = answer->buf + head_len;
        len = answer->len - head_len;
        switch (h.body) {
        case HTTP_BODY_NONE:
                len = 0;
                break;
        case HTTP_BODY_LENGTH:
                if (len < h.content_length)
                        return -EBADMSG;
                len = (size_t) h.content_length;
                break;
        case HTTP_BODY_CHUNKED:
                if (http_chunked_decode(body, len, &len) < 0)
                        return -EBADMSG;
                break;
        case HTTP_BODY_EOF:
                break;
        }
        *ret_status = h.status;
        *ret_body = body;
        *ret_len = len;
        return 0;
}

int unit_client_get(const struct unit_client *c, const char *target, struct unit_answer *ret)
{
        cleanup_close int fd = connect_to(c);
        cleanup_strbuf struct strbuf req = STRBUF_INIT, answer = STRBUF_INIT;
        unsigned status;
        char *body;
        size_t len;
        int r;

        *ret = (struct unit_answer){};
        if (fd < 0)
                return fd;
        strbuf_addf(&req, "GET %s HTTP/1.1\r\nHost: %s:%s\r\nConnection: close\r\n", target,
                    c->host, c->port);
        if (c->token)
                strbuf_addf(&req, "Authorization: Bearer %s\r\n", c->token);
        strbuf_adds(&req, "\r\n");
        r = write_all(fd, req.buf, req.len);
        explicit_bzero(req.buf, req.len); /* it held the token */
        if (r < 0)
                return r;
        r = read_answer(fd, c->cancel_fd, &answer);
        if (r < 0)
                return r;
        r = answer_body(&answer, &status, &body, &len);
        if (r < 0)
                return r;
        ret->status = status;
        ret->body = xmalloc(len + 1);
        memcpy(ret->body, body, len);
        ret->body[len] = '\0';
        ret->len = len;
        return 0;
}

void unit_answer_done(struct unit_answer *a)
{
        free(a->body);
        *a = (struct unit_answer){};
}

/* The unit's error answer in words: its message, else its code. */
static int answered_error(const struct unit_answer *a)
{
        json_t *j = json_loads(a->body, 0, NULL), *err = json_object_get(j, "error");
        const char *msg = json_string_value(json_object_get(err, "message"));
        const char *code = json_string_value(json_object_get(err, "code"));
        cleanup_free char *m = text_escape(msg ?: code ?: a->body);

        log_error("the unit answered %u: %s", a->status, m);
        json_decref(j);
        return EXIT_CODE_FAILED;
}

int unit_client_fetch(const struct unit_client *c, const char *target, struct unit_answer *ret)
{
        int r = unit_client_get(c, target, ret);

        if (r == -ECANCELED)
                return r;
        if (r < 0) {
                log_error("http://%s:%s%s: %s", c->host, c->port, target,
                          r == -EBADMSG ? "the answer is not HTTP" : strerror(-r));
                return EXIT_CODE_UNAVAILABLE;
        }
        return ret->status == 200 ? EXIT_CODE_OK : answered_error(ret);
}
