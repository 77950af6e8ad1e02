/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "upstream.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "base/util.h"

#define IN_BUF_BYTES     (64 * 1024)
#define HEAD_MAX_BYTES   (16 * 1024)
#define WS_MAX_BYTES     (1024 * 1024)
#define ECHO_MAX_BYTES   (16 * 1024 * 1024)
#define BULK_CHUNK_BYTES (1024 * 1024)

static const char WS_GUID[] = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

static bool step_done;
static char bulk[BULK_CHUNK_BYTES];

struct conn {
        int fd;
        size_t start, end;
        char in[IN_BUF_BYTES];
        uint8_t *ws; /* WS_MAX_BYTES, allocated on upgrade */
};

/* --- SHA-1 and base64, for Sec-WebSocket-Accept only ------------------- */

static uint32_t rol32(uint32_t x, int k)
{
        return x << k | x >> (32 - k);
}

static void sha1_block(uint32_t h[5], const uint8_t *p)
{
        uint32_t w[80], a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];

        for (int i = 0; i < 16; i++)
                w[i] = (uint32_t) p[4 * i] << 24 | (uint32_t) p[4 * i + 1] << 16 |
                       (uint32_t) p[4 * i + 2] << 8 | p[4 * i + 3];
        for (int i = 16; i < 80; i++)
                w[i] = rol32(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
        for (int i = 0; i < 80; i++) {
                uint32_t f, k, t;
                if (i < 20)
                        f = (b & c) | (~b & d), k = 0x5A827999;
                else if (i < 40)
                        f = b ^ c ^ d, k = 0x6ED9EBA1;
                else if (i < 60)
                        f = (b & c) | (b & d) | (c & d), k = 0x8F1BBCDC;
                else
                        f = b ^ c ^ d, k = 0xCA62C1D6;
                t = rol32(a, 5) + f + e + k + w[i];
                e = d;
                d = c;
                c = rol32(b, 30);
                b = a;
                a = t;
        }
        h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e;
}

static void sha1(const uint8_t *data, size_t len, uint8_t out[20])
{
        uint32_t h[5] = { 0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0 };
        uint8_t tail[128] = { 0 };
        size_t full = len / 64 * 64, rest = len - full, tl;
        uint64_t bits = (uint64_t) len * 8;

        for (size_t i = 0; i < full; i += 64)
                sha1_block(h, data + i);
        memcpy(tail, data + full, rest);
        tail[rest] = 0x80;
        tl = rest + 9 <= 64 ? 64 : 128;
        for (int i = 0; i < 8; i++)
                tail[tl - 1 - i] = (uint8_t) (bits >> (8 * i));
        for (size_t i = 0; i < tl; i += 64)
                sha1_block(h, tail + i);
        for (int i = 0; i < 5; i++)
                for (int j = 0; j < 4; j++)
                        out[4 * i + j] = (uint8_t) (h[i] >> (24 - 8 * j));
}

static void base64(const uint8_t *in, size_t len, char *out)
{
        static const char tbl[] =
                "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        size_t i, k = 0;

        for (i = 0; i + 2 < len; i += 3) {
                uint32_t v = (uint32_t) in[i] << 16 | (uint32_t) in[i + 1] << 8 | in[i + 2];
                out[k++] = tbl[v >> 18 & 63], out[k++] = tbl[v >> 12 & 63];
                out[k++] = tbl[v >> 6 & 63], out[k++] = tbl[v & 63];
        }
        if (len - i == 1) {
                uint32_t v = (uint32_t) in[i] << 16;
                out[k++] = tbl[v >> 18 & 63], out[k++] = tbl[v >> 12 & 63];
                out[k++] = '=', out[k++] = '=';
        } else if (len - i == 2) {
                uint32_t v = (uint32_t) in[i] << 16 | (uint32_t) in[i + 1] << 8;
                out[k++] = tbl[v >> 18 & 63], out[k++] = tbl[v >> 12 & 63];
                out[k++] = tbl[v >> 6 & 63], out[k++] = '=';
        }
        out[k] = '\0';
}

/* --- blocking I/O -------------------------------------------------------- */

static int send_all(int fd, const void *p, size_t n)
{
        const char *s = p;

        while (n > 0) {
                ssize_t k = send(fd, s, n, MSG_NOSIGNAL);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        return -1;
                s += k;
                n -= (size_t) k;
        }
        return 0;
}

static ssize_t conn_fill(struct conn *c)
{
        ssize_t n;

        if (c->start == c->end)
                c->start = c->end = 0;
        else if (c->end == IN_BUF_BYTES) {
                memmove(c->in, c->in + c->start, c->end - c->start);
                c->end -= c->start;
                c->start = 0;
        }
        do
                n = recv(c->fd, c->in + c->end, IN_BUF_BYTES - c->end, 0);
        while (n < 0 && errno == EINTR);
        if (n > 0)
                c->end += (size_t) n;
        return n;
}

/* Reads exactly len bytes into dst, or drops them (dst NULL). */
static int conn_read(struct conn *c, void *dst, size_t len)
{
        char *d = dst;

        while (len > 0) {
                size_t have = c->end - c->start, k;
                if (have == 0) {
                        if (conn_fill(c) <= 0)
                                return -1;
                        continue;
                }
                k = have < len ? have : len;
                if (d) {
                        memcpy(d, c->in + c->start, k);
                        d += k;
                }
                c->start += k;
                len -= k;
        }
        return 0;
}

/* --- HTTP ---------------------------------------------------------------- */

struct request {
        char method[16];
        char path[256];
        unsigned long long bytes; /* ?bytes= */
        unsigned long long content_length;
        bool close, upgrade;
        char ws_key[64];
};

static bool header_is(const char *line, size_t len, const char *name, const char **ret_value,
                      size_t *ret_len)
{
        size_t nl = strlen(name);

        if (len <= nl || line[nl] != ':' || strncasecmp(line, name, nl) != 0)
                return false;
        line += nl + 1, len -= nl + 1;
        while (len > 0 && (*line == ' ' || *line == '\t'))
                line++, len--;
        while (len > 0 && (line[len - 1] == ' ' || line[len - 1] == '\t'))
                len--;
        *ret_value = line;
        *ret_len = len;
        return true;
}

static bool has_token(const char *v, size_t len, const char *tok)
{
        size_t tl = strlen(tok);

        for (size_t i = 0; i + tl <= len; i++)
                if (strncasecmp(v + i, tok, tl) == 0)
                        return true;
        return false;
}

/* Parses the head in c->in[start, start+head_len) (ends with CRLFCRLF). */
static int request_parse(const char *h, size_t head_len, struct request *rq)
{
        const char *end = h + head_len, *eol = memmem(h, head_len, "\r\n", 2), *sp1, *sp2, *q;
        size_t n;

        *rq = (struct request){};
        sp1 = memchr(h, ' ', (size_t) (eol - h));
        if (!sp1 || (size_t) (sp1 - h) >= sizeof(rq->method))
                return -1;
        memcpy(rq->method, h, (size_t) (sp1 - h));
        sp2 = memchr(sp1 + 1, ' ', (size_t) (eol - sp1 - 1));
        if (!sp2)
                return -1;
        n = (size_t) (sp2 - sp1 - 1);
        q = memchr(sp1 + 1, '?', n);
        if (q) {
                const char *b = memmem(q, (size_t) (sp2 - q), "bytes=", 6);
                if (b)
                        rq->bytes = strtoull(b + 6, NULL, 10);
                n = (size_t) (q - sp1 - 1);
        }
        if (n >= sizeof(rq->path))
                return -1;
        memcpy(rq->path, sp1 + 1, n);
        rq->close = memmem(sp2, (size_t) (eol - sp2), "HTTP/1.0", 8) != NULL;
        for (const char *l = eol + 2; l < end - 2;) {
                const char *le = memmem(l, (size_t) (end - l), "\r\n", 2), *v;
                size_t ll = (size_t) (le - l), vl;
                if (header_is(l, ll, "content-length", &v, &vl))
                        rq->content_length = strtoull(v, NULL, 10);
                else if (header_is(l, ll, "connection", &v, &vl) && has_token(v, vl, "close"))
                        rq->close = true;
                else if (header_is(l, ll, "upgrade", &v, &vl) && has_token(v, vl, "websocket"))
                        rq->upgrade = true;
                else if (header_is(l, ll, "sec-websocket-key", &v, &vl) && vl < sizeof(rq->ws_key))
                        memcpy(rq->ws_key, v, vl);
                else if (header_is(l, ll, "transfer-encoding", &v, &vl))
                        return -1; /* the benchmark clients never send chunked bodies */
                l = le + 2;
        }
        return 0;
}

static int respond(struct conn *c, const struct request *rq, const char *body, size_t len)
{
        char head[256];
        struct iovec iov[2];
        int n = snprintf(head, sizeof(head),
                         "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                         "Content-Length: %zu\r\n%s\r\n",
                         len, rq->close ? "Connection: close\r\n" : "");
        size_t total = (size_t) n + len, off = 0;

        /* One sendmsg for head and body: no Nagle interplay, one wakeup. */
        iov[0] = (struct iovec){ .iov_base = head, .iov_len = (size_t) n };
        iov[1] = (struct iovec){ .iov_base = (void *) body, .iov_len = len };
        while (off < total) {
                struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2 };
                ssize_t k = sendmsg(c->fd, &mh, MSG_NOSIGNAL);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        return -1;
                off += (size_t) k;
                for (int i = 0; i < 2; i++) {
                        size_t d = (size_t) k < iov[i].iov_len ? (size_t) k : iov[i].iov_len;
                        iov[i].iov_base = (char *) iov[i].iov_base + d;
                        iov[i].iov_len -= d;
                        k -= (ssize_t) d;
                }
        }
        return 0;
}

/* --- WebSocket ------------------------------------------------------------ */

static int ws_send(struct conn *c, uint8_t b0, const uint8_t *p, size_t len)
{
        uint8_t h[10];
        size_t hl = 2;

        h[0] = b0;
        if (len < 126)
                h[1] = (uint8_t) len;
        else if (len <= 0xffff) {
                h[1] = 126, h[2] = (uint8_t) (len >> 8), h[3] = (uint8_t) len;
                hl = 4;
        } else {
                h[1] = 127;
                for (int i = 0; i < 8; i++)
                        h[2 + i] = (uint8_t) ((uint64_t) len >> (56 - 8 * i));
                hl = 10;
        }
        struct iovec iov[2] = { { .iov_base = h, .iov_len = hl },
                                { .iov_base = (void *) p, .iov_len = len } };
        struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2 };
        ssize_t k = sendmsg(c->fd, &mh, MSG_NOSIGNAL);
        if (k < 0)
                return -1;
        if ((size_t) k < hl + len) {
                /* Rare for bench-sized frames; finish with plain sends. */
                size_t done = (size_t) k;
                if (done < hl && send_all(c->fd, h + done, hl - done) < 0)
                        return -1;
                done = done > hl ? done - hl : 0;
                return send_all(c->fd, p + done, len - done);
        }
        return 0;
}

static void ws_echo(struct conn *c)
{
        c->ws = malloc(WS_MAX_BYTES);
        if (!c->ws)
                return;
        for (;;) {
                uint8_t h[2], ext[8], mask[4] = { 0 };
                uint64_t len;
                if (conn_read(c, h, 2) < 0)
                        return;
                len = h[1] & 0x7f;
                if (len == 126) {
                        if (conn_read(c, ext, 2) < 0)
                                return;
                        len = (uint64_t) ext[0] << 8 | ext[1];
                } else if (len == 127) {
                        if (conn_read(c, ext, 8) < 0)
                                return;
                        len = 0;
                        for (int i = 0; i < 8; i++)
                                len = len << 8 | ext[i];
                }
                if (len > WS_MAX_BYTES)
                        return;
                if ((h[1] & 0x80) && conn_read(c, mask, 4) < 0)
                        return;
                if (conn_read(c, c->ws, (size_t) len) < 0)
                        return;
                for (uint64_t i = 0; i < len; i++)
                        c->ws[i] ^= mask[i & 3];
                switch (h[0] & 0x0f) {
                case 0x8: /* close: answer with the same code, then end */
                        (void) ws_send(c, 0x88, c->ws, len < 126 ? (size_t) len : 0);
                        return;
                case 0x9:
                        if (ws_send(c, 0x8A, c->ws, (size_t) len) < 0)
                                return;
                        break;
                case 0xA:
                        break;
                default: /* data frames and continuations, echoed as they came */
                        if (ws_send(c, h[0], c->ws, (size_t) len) < 0)
                                return;
                }
        }
}

static int ws_handshake(struct conn *c, const struct request *rq)
{
        char cat[sizeof(rq->ws_key) + sizeof(WS_GUID)], accept[32], resp[256];
        uint8_t digest[20];
        int n;

        n = snprintf(cat, sizeof(cat), "%s%s", rq->ws_key, WS_GUID);
        sha1((const uint8_t *) cat, (size_t) n, digest);
        base64(digest, sizeof(digest), accept);
        n = snprintf(resp, sizeof(resp),
                     "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                     "Connection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n\r\n",
                     accept);
        return send_all(c->fd, resp, (size_t) n);
}

/* --- one connection --------------------------------------------------------- */

static int serve_request(struct conn *c, const struct request *rq)
{
        char small[256];
        int n;

        if (streq(rq->path, "/ws") && rq->upgrade && rq->ws_key[0]) {
                if (ws_handshake(c, rq) < 0)
                        return -1;
                ws_echo(c);
                return -1; /* the connection ends with the WebSocket */
        }
        if (streq(rq->path, "/echo")) {
                char *body;
                int r;
                if (rq->content_length > ECHO_MAX_BYTES)
                        return -1;
                body = malloc(rq->content_length + 1);
                if (!body || conn_read(c, body, rq->content_length) < 0) {
                        free(body);
                        return -1;
                }
                r = respond(c, rq, body, rq->content_length);
                free(body);
                return r;
        }
        /* Every other body is read and dropped. */
        if (conn_read(c, NULL, rq->content_length) < 0)
                return -1;
        if (streq(rq->path, "/download")) {
                unsigned long long left = rq->bytes;
                n = snprintf(small, sizeof(small),
                             "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n"
                             "Content-Length: %llu\r\n\r\n",
                             left);
                if (send_all(c->fd, small, (size_t) n) < 0)
                        return -1;
                while (left > 0) {
                        size_t k = left < sizeof(bulk) ? (size_t) left : sizeof(bulk);
                        if (send_all(c->fd, bulk, k) < 0)
                                return -1;
                        left -= k;
                }
                return 0;
        }
        if (streq(rq->path, "/health"))
                n = snprintf(small, sizeof(small), "{\"status\":\"ok\"}");
        else if (streq(rq->path, "/step"))
                n = snprintf(small, sizeof(small),
                             "{\"observation\":{\"echoed_message\":\"hello\"},\"reward\":0.0,"
                             "\"done\":%s}",
                             step_done ? "true" : "false");
        else if (streq(rq->path, "/upload"))
                n = snprintf(small, sizeof(small), "{\"bytes\":%llu}", rq->content_length);
        else
                n = snprintf(small, sizeof(small), "{}");
        return respond(c, rq, small, (size_t) n);
}

static void *conn_main(void *arg)
{
        struct conn *c = arg;

        for (;;) {
                struct request rq;
                char *end;
                size_t head_len;

                while (!(end = memmem(c->in + c->start, c->end - c->start, "\r\n\r\n", 4))) {
                        if (c->end - c->start >= HEAD_MAX_BYTES || conn_fill(c) <= 0)
                                goto out;
                }
                head_len = (size_t) (end + 4 - (c->in + c->start));
                if (request_parse(c->in + c->start, head_len, &rq) < 0)
                        break;
                c->start += head_len;
                if (serve_request(c, &rq) < 0 || rq.close)
                        break;
        }
out:
        close(c->fd);
        free(c->ws);
        free(c);
        return NULL;
}

static void *accept_main(void *arg)
{
        int lfd = (int) (intptr_t) arg;
        pthread_attr_t attr;

        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        pthread_attr_setstacksize(&attr, 256 * 1024);
        for (;;) {
                int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
                struct conn *c;
                pthread_t t;

                if (fd < 0) {
                        if (errno == EINTR || errno == ECONNABORTED || errno == EMFILE)
                                continue;
                        _exit(1);
                }
                (void) setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &(int){ 1 }, sizeof(int));
                c = malloc(sizeof(*c));
                if (!c) {
                        close(fd);
                        continue;
                }
                c->fd = fd;
                c->start = c->end = 0;
                c->ws = NULL;
                if (pthread_create(&t, &attr, conn_main, c) != 0) {
                        close(fd);
                        free(c);
                }
        }
        return NULL;
}

_Noreturn void upstream_serve(const struct upstream_options *o)
{
        memset(bulk, 'x', sizeof(bulk));
        step_done = o->step_done;
        for (size_t i = 1; i < o->n_listen_fds; i++) {
                pthread_t t;
                if (pthread_create(&t, NULL, accept_main, (void *) (intptr_t) o->listen_fds[i]) !=
                    0)
                        _exit(1);
        }
        accept_main((void *) (intptr_t) o->listen_fds[0]);
        _exit(1);
}
