/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "relay/http-head.h"

#include <errno.h>
#include <http_parser.h>
#include <stddef.h>
#include <string.h>
#include <strings.h>

#include "base/macro.h"
#include "base/parse-util.h"
#include "base/util.h"

/* Bytes http_head_find_end() must look at: CR, LF and the forbidden controls
 * (everything below 0x20 but HTAB, and DEL). */
static const bool head_special[256] = {
        [0x00 ... 0x08] = true,
        [0x0a ... 0x1f] = true,
        [0x7f] = true,
};

int http_head_find_end(const char *buf, size_t len, size_t *ret_end)
{
        size_t n = MIN(len, (size_t) HTTP_MAX_HEAD_BYTES);

        /* No leading empty lines: RFC 9112 2.2 lets servers skip them, but a
         * proxy that skips what its upstream may not is a desync waiting. */
        if (n > 0 && (buf[0] == '\r' || buf[0] == '\n'))
                return -EBADMSG;
        for (size_t i = 0; i < n; i++) {
                unsigned char c;
                /* Skip ordinary bytes in a tight loop: this scan runs over
                 * every head the relay sees. */
                while (i < n && !head_special[(unsigned char) buf[i]])
                        i++;
                if (i == n)
                        break;
                c = (unsigned char) buf[i];
                if (c == '\r') {
                        if (i + 1 == n)
                                break; /* need the next byte */
                        if (buf[i + 1] != '\n')
                                return -EBADMSG; /* bare CR */
                } else if (c == '\n') {
                        if (i == 0 || buf[i - 1] != '\r')
                                return -EBADMSG; /* bare LF */
                        if (i >= 3 && buf[i - 2] == '\n' && buf[i - 3] == '\r') {
                                *ret_end = i + 1;
                                return 1;
                        }
                        /* obs-fold (RFC 9112 5.2): continuation lines are rejected. */
                        if (i + 1 < n && (buf[i + 1] == ' ' || buf[i + 1] == '\t'))
                                return -EBADMSG;
                } else if (c == 0 || c == 0x7f || (c < 0x20 && c != '\t'))
                        return -EBADMSG;
        }
        if (len >= HTTP_MAX_HEAD_BYTES)
                return -E2BIG;
        return 0;
}

struct parse_state {
        struct http_head *h;
        const char *base;
        bool overflow;
        bool keep_alive;
};

static int on_url(http_parser *p, const char *at, size_t len)
{
        struct parse_state *st = p->data;
        if (!st->h->target)
                st->h->target = at;
        st->h->target_len = (size_t) (at + len - st->h->target);
        return 0;
}

static int on_header_field(http_parser *p, const char *at, size_t len)
{
        struct parse_state *st = p->data;
        struct http_head *h = st->h;

        /* The head is parsed in one piece, so a field never arrives split. */
        if (h->n_headers == HTTP_MAX_HEADERS) {
                st->overflow = true;
                return -1;
        }
        h->headers[h->n_headers++] = (struct http_header){
                .name = at,
                .name_len = len,
                .line_start = (size_t) (at - st->base),
        };
        return 0;
}

static int on_header_value(http_parser *p, const char *at, size_t len)
{
        struct parse_state *st = p->data;
        struct http_header *hd = &st->h->headers[st->h->n_headers - 1];

        if (!hd->value)
                hd->value = at;
        hd->value_len = (size_t) (at + len - hd->value);
        return 0;
}

static int on_headers_complete(http_parser *p)
{
        struct parse_state *st = p->data;
        st->keep_alive = http_should_keep_alive(p);
        /* 1: skip the body; this parser only ever sees heads. */
        return 1;
}

static bool is_tchar(unsigned char c)
{
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               (c && strchr("!#$%&'*+-.^_`|~", c));
}

static bool name_is(const struct http_header *hd, const char *name)
{
        size_t n = strlen(name);
        return hd->name_len == n && strncasecmp(hd->name, name, n) == 0;
}

bool http_value_has_token(const char *value, size_t len, const char *token)
{
        size_t tl = strlen(token), i = 0;

        while (i < len) {
                size_t s, e;
                while (i < len && (value[i] == ' ' || value[i] == '\t' || value[i] == ','))
                        i++;
                s = i;
                while (i < len && value[i] != ',')
                        i++;
                e = i;
                while (e > s && (value[e - 1] == ' ' || value[e - 1] == '\t'))
                        e--;
                if (e - s == tl && strncasecmp(value + s, token, tl) == 0)
                        return true;
        }
        return false;
}

const struct http_header *http_head_next(const struct http_head *h, const char *name, size_t *from)
{
        for (size_t i = *from; i < h->n_headers; i++)
                if (name_is(&h->headers[i], name)) {
                        *from = i + 1;
                        return &h->headers[i];
                }
        *from = h->n_headers;
        return NULL;
}

const struct http_header *http_head_get(const struct http_head *h, const char *name)
{
        size_t from = 0;
        return http_head_next(h, name, &from);
}

const char *http_head_method(const struct http_head *h)
{
        return http_method_str((enum http_method) h->method);
}

static int finish_headers(struct http_head *h, const char *buf)
{
        const struct http_header *cl = NULL, *te = NULL;
        bool has_upgrade = false, conn_upgrade = false;
        /* HEAD/1xx/204/304 responses: framing headers describe nothing. */
        bool bodiless = h->response && h->body == HTTP_BODY_NONE;
        unsigned hosts = 0;

        for (size_t i = 0; i < h->n_headers; i++) {
                struct http_header *hd = &h->headers[i];
                const char *eol;

                if (hd->name_len == 0)
                        return -EBADMSG;
                for (size_t k = 0; k < hd->name_len; k++)
                        if (!is_tchar((unsigned char) hd->name[k]))
                                return -EBADMSG;
                if (!hd->value)
                        hd->value = hd->name + hd->name_len; /* empty value */
                while (hd->value_len > 0 && (hd->value[hd->value_len - 1] == ' ' ||
                                             hd->value[hd->value_len - 1] == '\t'))
                        hd->value_len--;
                /* The line ends at the CRLF after the value (find_end made sure
                 * every LF has its CR and there are no folded lines). */
                eol = memchr(hd->value, '\n', (size_t) (buf + h->head_len - hd->value));
                if (!eol)
                        return -EBADMSG;
                hd->line_end = (size_t) (eol + 1 - buf);

                if (name_is(hd, "content-length")) {
                        if (cl)
                                return -EBADMSG;
                        cl = hd;
                } else if (name_is(hd, "transfer-encoding")) {
                        if (te)
                                return -EBADMSG;
                        te = hd;
                } else if (name_is(hd, "host"))
                        hosts++;
                else if (name_is(hd, "upgrade"))
                        has_upgrade = true;
                else if (name_is(hd, "connection") &&
                         http_value_has_token(hd->value, hd->value_len, "upgrade"))
                        conn_upgrade = true;
        }
        if (cl && te)
                return -EBADMSG;
        if (hosts > 1 || (!h->response && h->version_minor == 1 && hosts == 0))
                return -EBADMSG;
        if (te) {
                if (te->value_len != 7 || strncasecmp(te->value, "chunked", 7) != 0)
                        return -EBADMSG;
                if (!bodiless)
                        h->body = HTTP_BODY_CHUNKED;
        } else if (cl) {
                char num[24];
                uint64_t v;
                if (cl->value_len == 0 || cl->value_len >= sizeof(num))
                        return -EBADMSG;
                memcpy(num, cl->value, cl->value_len);
                num[cl->value_len] = 0;
                if (parse_uint64(num, 0, UINT64_MAX, &v) < 0)
                        return -EBADMSG;
                h->content_length = v;
                if (!bodiless)
                        h->body = v > 0 ? HTTP_BODY_LENGTH : HTTP_BODY_NONE;
        } else if (h->response && !bodiless) {
                /* No framing: the body runs until the server closes. */
                h->body = HTTP_BODY_EOF;
                h->keep_alive = false;
        }
        if (!h->response)
                h->upgrade = has_upgrade && conn_upgrade;
        return 0;
}

int http_head_parse(const char *buf, size_t len, bool response, bool request_was_head,
                    struct http_head *ret)
{
        static const http_parser_settings settings = {
                .on_url = on_url,
                .on_header_field = on_header_field,
                .on_header_value = on_header_value,
                .on_headers_complete = on_headers_complete,
        };
        struct http_head *h = ret;
        struct parse_state st = { .h = h, .base = buf };
        http_parser p;
        size_t n;
        int r;

        /* Everything but the header array, which is 100 entries of which
         * only the first n_headers are ever written or read: clearing it
         * all cost more than the rest of the parse. */
        memset(h, 0, offsetof(struct http_head, headers));
        memset(&h->n_headers, 0, sizeof(*h) - offsetof(struct http_head, n_headers));
        h->response = response;
        h->head_len = len;
        http_parser_init(&p, response ? HTTP_RESPONSE : HTTP_REQUEST);
        p.data = &st;
        n = http_parser_execute(&p, &settings, buf, len);
        if (st.overflow)
                return -E2BIG;
        if (HTTP_PARSER_ERRNO(&p) != HPE_OK || (n != len && !p.upgrade))
                return -EBADMSG;
        if (p.http_major != 1 || p.http_minor > 1)
                return -EBADMSG;
        h->version_minor = p.http_minor;
        h->keep_alive = st.keep_alive;
        if (response) {
                h->status = p.status_code;
                if (h->status < 100 || h->status > 999)
                        return -EBADMSG;
                h->upgrade = h->status == 101;
                if (request_was_head || h->status / 100 == 1 || h->status == 204 ||
                    h->status == 304)
                        h->body = HTTP_BODY_NONE;
                else
                        h->body = HTTP_BODY_LENGTH; /* refined by finish_headers() */
        } else {
                h->method = p.method;
                /* origin-form or "*" only: absolute-form and authority-form
                 * targets would make this a forward proxy. */
                if (!h->target || h->target_len == 0)
                        return -EBADMSG;
                if (h->target[0] != '/' && !(h->target_len == 1 && h->target[0] == '*'))
                        return -EBADMSG;
        }
        r = finish_headers(h, buf);
        if (r < 0)
                return r;
        return 0;
}

/* The reason phrase starts once the code is complete: that is all we need. */
static int on_status(http_parser *p, const char *at, size_t len)
{
        (void) at;
        (void) len;
        http_parser_pause(p, 1);
        return 0;
}

int http_status_line_parse(const char *buf, size_t len, unsigned *ret_status)
{
        static const http_parser_settings settings = { .on_status = on_status };
        http_parser p;

        http_parser_init(&p, HTTP_RESPONSE);
        (void) http_parser_execute(&p, &settings, buf, len);
        if (HTTP_PARSER_ERRNO(&p) == HPE_OK)
                return 0;
        if (HTTP_PARSER_ERRNO(&p) != HPE_PAUSED || p.http_major != 1 || p.http_minor > 1 ||
            p.status_code < 100)
                return -EBADMSG;
        *ret_status = p.status_code;
        return 1;
}

static bool name_in(const char *const *list, const struct http_header *hd)
{
        for (const char *const *s = list; *s; s++) {
                size_t n = strlen(*s);
                bool prefix = n > 0 && (*s)[n - 1] == '*';
                if (prefix ? hd->name_len >= n - 1 && strncasecmp(hd->name, *s, n - 1) == 0
                           : hd->name_len == n && strncasecmp(hd->name, *s, n) == 0)
                        return true;
        }
        return false;
}

static bool header_stripped(const struct http_head_edit *edit, const struct http_header *hd)
{
        /* The framing the engine reads the body by must reach the upstream
         * as it was parsed, whatever the policy's allowlist says. */
        static const char *const framing[] = { "content-length", "transfer-encoding", NULL };

        if (edit->strip && name_in(edit->strip, hd))
                return true;
        return edit->keep && !name_in(edit->keep, hd) && !name_in(framing, hd);
}

void http_head_rewrite(struct strbuf *out, const struct http_head *h, const char *raw,
                       const struct http_head_edit *edit)
{
        size_t pos = 0;

        if (edit->target_len > 0) {
                size_t t = (size_t) (h->target - raw);
                strbuf_add(out, raw, t);
                strbuf_add(out, edit->target, edit->target_len);
                pos = t + h->target_len;
        }
        for (size_t i = 0; i < h->n_headers; i++) {
                const struct http_header *hd = &h->headers[i];
                if (!header_stripped(edit, hd))
                        continue;
                strbuf_add(out, raw + pos, hd->line_start - pos);
                pos = hd->line_end;
        }
        /* Everything up to the final CRLF, then the additions, then CRLF. */
        strbuf_add(out, raw + pos, h->head_len - 2 - pos);
        strbuf_add(out, edit->add, edit->add_len);
        strbuf_adds(out, "\r\n");
}
