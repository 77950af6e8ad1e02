/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "relay/request-target.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"
#include "base/util.h"
#include "relay/http-chunked.h"

static bool is_unreserved(unsigned char c)
{
        return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
               c == '-' || c == '.' || c == '_' || c == '~';
}

/* pchar minus pct-encoded (RFC 3986 3.3): unreserved, sub-delims, ':', '@'. */
static bool is_pchar(unsigned char c)
{
        /* c != 0: strchr() finds the terminating NUL too. */
        return is_unreserved(c) || (c != 0 && strchr("!$&'()*+,;=:@", c) != NULL);
}

/* The byte an escape at s stands for, or -1 if s does not hold one. */
static int escape_at(const char *s, size_t left)
{
        int hi, lo;

        if (left < 3 || s[0] != '%')
                return -1;
        hi = http_hexval(s[1]);
        lo = http_hexval(s[2]);
        return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

static int normalize_path(const char *p, size_t n, struct strbuf *out)
{
        size_t seg_start;

        if (n == 0 || p[0] != '/')
                return -EBADMSG;
        for (size_t i = 0; i < n; i++) {
                unsigned char c = (unsigned char) p[i];
                int v;

                if (c == '/') {
                        strbuf_addch(out, '/');
                        continue;
                }
                if (c != '%') {
                        if (!is_pchar(c))
                                return -EBADMSG;
                        strbuf_addch(out, (char) c);
                        continue;
                }
                v = escape_at(p + i, n - i);
                if (v < 0 || v < 0x20 || v == 0x7f || v == '/' || v == '\\')
                        return -EBADMSG;
                if (is_unreserved((unsigned char) v))
                        strbuf_addch(out, (char) v);
                else
                        strbuf_addf(out, "%%%02X", (unsigned) v);
                i += 2;
        }
        /* Segments: none empty (but a final one after a trailing slash), none
         * "." or "..". */
        seg_start = 1;
        for (size_t i = 1; i <= out->len; i++) {
                if (i < out->len && out->buf[i] != '/')
                        continue;
                size_t seg = i - seg_start;
                const char *s = out->buf + seg_start;
                if ((seg == 0 && i < out->len) || (seg == 1 && s[0] == '.') ||
                    (seg == 2 && s[0] == '.' && s[1] == '.'))
                        return -EBADMSG;
                seg_start = i + 1;
        }
        return 0;
}

/* Decodes an escaped query component into a new string (NULL: malformed or
 * a NUL in it). '+' stays '+': only the name "token" is compared. */
static char *query_decode(const char *s, size_t n)
{
        struct strbuf b = STRBUF_INIT;

        for (size_t i = 0; i < n; i++) {
                int v = s[i] == '%' ? escape_at(s + i, n - i) : (unsigned char) s[i];
                if (v <= 0) {
                        strbuf_release(&b);
                        return NULL;
                }
                if (s[i] == '%')
                        i += 2;
                strbuf_addch(&b, (char) v);
        }
        return strbuf_detach(&b, NULL);
}

/* Checks the query, keeps all its parameters but "token" (whose value is
 * returned). */
static int normalize_query(const char *q, size_t n, struct strbuf *out, struct request_target *t)
{
        size_t kept = 0;

        for (size_t i = 0; i < n; i++) {
                unsigned char c = (unsigned char) q[i];
                if (c == '%') {
                        if (escape_at(q + i, n - i) < 0)
                                return -EBADMSG;
                        i += 2;
                } else if (!is_pchar(c) && c != '/' && c != '?')
                        return -EBADMSG;
        }
        for (size_t start = 0; start <= n;) {
                const char *amp = memchr(q + start, '&', n - start);
                size_t end = amp ? (size_t) (amp - q) : n;
                const char *eq = memchr(q + start, '=', end - start);
                size_t name_end = eq ? (size_t) (eq - q) : end;
                cleanup_free char *name = query_decode(q + start, name_end - start);

                if (name && streq(name, "token")) {
                        t->n_tokens++;
                        free(t->token);
                        t->token = eq ? query_decode(eq + 1, end - name_end - 1) : NULL;
                        if (!t->token)
                                t->token = xstrdup("");
                } else if (end > start) {
                        strbuf_addch(out, kept++ ? '&' : '?');
                        strbuf_add(out, q + start, end - start);
                }
                start = end + 1;
        }
        return 0;
}

int request_target_parse(const char *raw, size_t len, struct request_target *ret)
{
        struct request_target t = {};
        struct strbuf out = STRBUF_INIT;
        const char *q = memchr(raw, '?', len);
        size_t path_len = q ? (size_t) (q - raw) : len;
        size_t route_len;
        int r;

        if (memchr(raw, '#', len))
                return -EBADMSG; /* a fragment never belongs in a request */
        r = normalize_path(raw, path_len, &out);
        if (r >= 0) {
                route_len = out.len > 1 && out.buf[out.len - 1] == '/' ? out.len - 1 : out.len;
                t.route = xstrndup(out.buf, route_len);
                if (q)
                        r = normalize_query(q + 1, len - path_len - 1, &out, &t);
        }
        if (r < 0) {
                strbuf_release(&out);
                request_target_done(&t);
                return r;
        }
        t.target = strbuf_detach(&out, NULL);
        *ret = t;
        return 0;
}

void request_target_done(struct request_target *t)
{
        free(t->target);
        free(t->route);
        if (t->token) {
                explicit_bzero(t->token, strlen(t->token));
                free(t->token);
        }
        *t = (struct request_target){};
}
