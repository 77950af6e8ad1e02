/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Tracks the boundaries of a chunked body (RFC 9112 7.1) while the bytes are
 * relayed unchanged: the relay learns where the message ends (keep-alive
 * needs it) and, optionally, sees the decoded data. Chunk-size lines and
 * trailer sections are bounded (HTTP_MAX_CHUNK_LINE, HTTP_MAX_HEAD_BYTES);
 * chunk extensions are accepted and ignored. The one chunked decoder: the
 * relay's engine, and through http_chunked_decode() the clients that read a
 * whole answer (openenvctl).
 *
 * Not http-parser's: the library as Debian builds it (HTTP_PARSER_STRICT=0)
 * accepts any two bytes after a chunk's data, a bare LF or any byte after
 * the CR of a size line or of the final CRLF, NUL and LF in extensions, a
 * trailer section ending in a bare LF and leading zeros without bound. A
 * proxy that relays the bytes unchanged must not read them more loosely
 * than its upstream may (request smuggling, RFC 9112 11.2), so the framing
 * is checked here, byte by byte.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Value of one hex digit, -1 if c is none (shared by the chunk-size and
 * percent-decoding parsers). */
static inline int http_hexval(char c)
{
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -1;
}

typedef void (*http_chunked_data_fn)(void *userdata, const char *data, size_t len);

struct http_chunked {
        int state;
        uint64_t remaining; /* bytes left in the current chunk */
        unsigned digits;
        size_t line_len;      /* size line or trailer section so far */
        bool stop_at_trailer; /* feed returns HTTP_CHUNKED_TRAILER before each trailer line */
};

/* http_chunked_feed(): a trailer line starts at buf + *ret_used (only with
 * stop_at_trailer); see http_chunked_trailer_line(). */
#define HTTP_CHUNKED_TRAILER 2

void http_chunked_init(struct http_chunked *c);
/* Consumes bytes of buf up to the end of the body. Returns 1 when the body
 * ended (*ret_used = bytes of buf that belong to it), 0 when all of buf was
 * consumed and more is needed, -EBADMSG on malformed framing,
 * HTTP_CHUNKED_TRAILER as said above. */
int http_chunked_feed(struct http_chunked *c, const char *buf, size_t len,
                      http_chunked_data_fn on_data, void *userdata, size_t *ret_used);
/* After HTTP_CHUNKED_TRAILER: the length of the whole trailer line at buf
 * (CRLF included) in *ret_len and 1, which the caller drops (the tracker
 * then waits for the next trailer line or the final CRLF); 0 when the line
 * is not complete in buf; -EBADMSG when it is malformed (bare CR or LF, NUL,
 * a leading space) or the trailer section passes HTTP_MAX_HEAD_BYTES. */
int http_chunked_trailer_line(struct http_chunked *c, const char *buf, size_t len, size_t *ret_len);

/* A whole chunked body in buf (len bytes, from its first size line),
 * decoded in place: *ret_len data bytes at buf, NUL-terminated (buf has room:
 * the framing is longer than the data). Bytes after the body are ignored.
 * -EBADMSG when the framing is malformed or the body does not end in len. */
int http_chunked_decode(char *buf, size_t len, size_t *ret_len);
