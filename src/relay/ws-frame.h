/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Incremental RFC 6455 frame validator for one direction of a WebSocket
 * connection. The relay forwards the bytes unchanged; this parser only checks
 * them and, if asked, hands complete text messages to a callback (bounded by
 * WS_MAX_INSPECT_BYTES: longer messages are validated but not delivered).
 *
 * Strictness: RSV bits must be 0 (the relay strips extension negotiation:
 * compression is declined), unknown opcodes, unmasked client frames or
 * masked server frames, non-minimal length encodings, fragmented or oversized
 * (> 125) control frames, stray continuations and interleaved messages are
 * protocol errors (1002); invalid UTF-8 in text messages or close reasons is
 * 1007; close codes must be sendable ones (RFC 6455 7.4). Frames of any size
 * stream through: only messages up to WS_MAX_INSPECT_BYTES are collected.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/macro.h"
#include "base/utf8.h"

enum {
        WS_OP_CONT = 0x0,
        WS_OP_TEXT = 0x1,
        WS_OP_BINARY = 0x2,
        WS_OP_CLOSE = 0x8,
        WS_OP_PING = 0x9,
        WS_OP_PONG = 0xA,
};

#define WS_CLOSE_NORMAL       1000
#define WS_CLOSE_GOING_AWAY   1001
#define WS_CLOSE_PROTOCOL     1002
#define WS_CLOSE_INVALID_DATA 1007
#define WS_CLOSE_POLICY       1008
#define WS_CLOSE_TOO_BIG      1009
#define WS_CLOSE_INTERNAL     1011
#define WS_CLOSE_TRY_AGAIN    1013

typedef void (*ws_message_fn)(void *userdata, const char *data, size_t len);
/* A complete control frame (close, ping, pong) and its unmasked payload. */
typedef void (*ws_control_fn)(void *userdata, uint8_t opcode, const uint8_t *payload, size_t len);

struct ws_parser {
        bool from_client;         /* client→server: frames must be masked */
        ws_message_fn on_text;    /* NULL: do not collect messages */
        ws_control_fn on_control; /* optional, set after ws_parser_init() */
        void *userdata;
        bool stop; /* set by a callback: ws_parser_feed() returns after this frame */

        uint8_t hdr[14];
        size_t hdr_len;
        bool in_payload;
        bool fin;
        uint8_t opcode;
        bool masked;
        uint8_t mask[4];
        uint64_t payload_len, payload_pos;

        bool in_message; /* a fragmented data message is open */
        uint8_t msg_opcode;
        struct utf8_check utf8; /* the open text message, across its frames */
        uint8_t ctrl[125];      /* control frame payload (close code check) */
        size_t ctrl_len;
        char *msg; /* owned: collected text message */
        size_t msg_len;
        bool msg_overflow;
        bool closed; /* a close frame was seen */

        uint16_t error_code; /* close code to answer with after an error */
        uint16_t peer_close; /* code of the close frame seen (1005: none given) */
        uint64_t frames;
};

void ws_parser_init(struct ws_parser *p, bool from_client, ws_message_fn on_text, void *userdata);
void ws_parser_done(struct ws_parser *p);
/* Validates buf. Returns the bytes consumed: len, or fewer when a callback
 * set p->stop (the rest is fed again later); -EPROTO/-EILSEQ: invalid, with
 * p->error_code set (1002/1007); the parser is then unusable. */
ssize_t ws_parser_feed(struct ws_parser *p, const uint8_t *buf, size_t len);
/* True between frames (a close frame may be injected here). */
bool ws_parser_at_boundary(const struct ws_parser *p);
/* True if the next bytes fed belong to a control frame (close, ping, pong):
 * the frame the parser is inside, else the one buf starts. */
bool ws_parser_next_is_control(const struct ws_parser *p, const uint8_t *buf, size_t len);

/* Writes an unmasked (server→client) close frame with code into out[4]. */
size_t ws_close_frame(uint16_t code, uint8_t out[4]);

struct strbuf;
/* Appends a close frame with code and a reason (UTF-8, cut at 123 bytes);
 * masked with mask when it is not NULL (client→server). */
void ws_append_close(struct strbuf *out, uint16_t code, const char *reason, const uint8_t *mask);
/* Appends one frame of opcode (text, binary, ping, pong) carrying data;
 * masked with mask when it is not NULL (client→server). */
void ws_append_frame(struct strbuf *out, uint8_t opcode, const void *data, size_t len,
                     const uint8_t *mask);
/* Sec-WebSocket-Accept for a Sec-WebSocket-Key (RFC 6455 4.2.2), into out
 * (29 bytes with the NUL). -EINVAL for a key that is not 16 bytes of base64. */
int ws_accept_key(const char *key, size_t key_len, char out[29]);

struct http_head;
/* Whether a request head is a WebSocket opening handshake (RFC 6455 4.1):
 * GET, "Upgrade: websocket" with "Connection: upgrade", a well-formed
 * Sec-WebSocket-Key and Sec-WebSocket-Version 13. Any other Upgrade (h2c,
 * anything) is not one. */
bool ws_is_handshake(const struct http_head *h);
