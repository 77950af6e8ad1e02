/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * HTTP/1.1 message heads (request or status line + header fields), parsed
 * with http-parser from one complete, contiguous head. The parsed head only
 * borrows the caller's buffer: every pointer in struct http_head points into
 * it, so the raw bytes can be forwarded unchanged (or with whole header lines
 * removed) and nothing is re-serialised.
 *
 * Stricter than RFC 9112 where a proxy must be (request smuggling, see RFC
 * 9112 section 11.2): bare CR or LF, obs-fold, NUL and other controls, both
 * Content-Length and Transfer-Encoding, duplicate Content-Length or
 * Transfer-Encoding, any Transfer-Encoding but exactly "chunked", duplicate
 * Host, absolute-form targets: all -EBADMSG.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/limits.h"
#include "base/strbuf.h"

enum http_body_kind {
        HTTP_BODY_NONE,
        HTTP_BODY_LENGTH,  /* content_length bytes */
        HTTP_BODY_CHUNKED, /* chunked framing (see http-chunked.h) */
        HTTP_BODY_EOF,     /* responses only: until the server closes */
};

struct http_header {
        const char *name, *value; /* borrowed: the head buffer; not NUL-terminated */
        size_t name_len, value_len;
        size_t line_start, line_end; /* offsets of the whole line incl. CRLF */
};

struct http_head {
        bool response;
        unsigned method;        /* enum http_method (requests) */
        unsigned status;        /* responses */
        unsigned version_minor; /* HTTP/1.x */
        const char *target;     /* borrowed: raw request target, byte for byte */
        size_t target_len;
        struct http_header headers[HTTP_MAX_HEADERS];
        size_t n_headers;
        size_t head_len;
        enum http_body_kind body;
        uint64_t content_length;
        bool keep_alive;
        bool upgrade; /* request: Upgrade + Connection: upgrade; response: 101 */
};

/* Looks for the end of a head at the start of buf. Returns 1 and the length
 * through the final CRLFCRLF, 0 if more bytes are needed, -EBADMSG for a
 * malformed line ending/control byte, -E2BIG when HTTP_MAX_HEAD_BYTES pass
 * without an end. */
int http_head_find_end(const char *buf, size_t len, size_t *ret_end);

/* Parses exactly one complete head (len from http_head_find_end()).
 * request_was_head: responses to HEAD have no body. -EBADMSG when malformed
 * or ambiguous, -E2BIG for more than HTTP_MAX_HEADERS fields. */
int http_head_parse(const char *buf, size_t len, bool response, bool request_was_head,
                    struct http_head *ret);

/* The status code of a response from its first bytes (a client that only
 * asks whether the answer is healthy: the health probe), parsed by
 * http-parser: 1 and *ret_status once the status line's code is complete, 0
 * if more bytes are needed, -EBADMSG when the bytes are no HTTP/1.0 or 1.1
 * status line. */
int http_status_line_parse(const char *buf, size_t len, unsigned *ret_status);

/* First header with that (case-insensitive) name, or NULL; *from lets callers
 * iterate duplicates (start with 0). */
const struct http_header *http_head_next(const struct http_head *h, const char *name, size_t *from);
const struct http_header *http_head_get(const struct http_head *h, const char *name);
/* Method name ("GET") of a request. */
const char *http_head_method(const struct http_head *h);
/* True if the comma-separated header value contains token (case-insensitive). */
bool http_value_has_token(const char *value, size_t len, const char *token);

/* What a proxy changes in a request head: whole header lines out, lines in,
 * another target; everything else stays the client's bytes. */
struct http_head_edit {
        const char *target; /* if target_len > 0: the request target instead */
        size_t target_len;
        const char *const *strip; /* header names to remove (NULL-terminated; "x-*" a prefix) */
        /* If set, the only header names kept (as strip), besides the body's
         * framing (Content-Length, Transfer-Encoding), which always stays. */
        const char *const *keep;
        const char *add; /* raw "Name: value\r\n" lines, added before the final CRLF */
        size_t add_len;
};

/* Appends request head h (parsed from raw) to out as edit says. */
void http_head_rewrite(struct strbuf *out, const struct http_head *h, const char *raw,
                       const struct http_head_edit *edit);
