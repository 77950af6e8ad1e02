/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "relay/ws-frame.h"

#include <errno.h>
#include <http_parser.h>
#include <openssl/evp.h>
#include <openssl/sha.h>
#include <string.h>

#include "base/limits.h"
#include "base/strbuf.h"
#include "base/utf8.h"
#include "base/util.h"
#include "relay/http-head.h"

void ws_parser_init(struct ws_parser *p, bool from_client, ws_message_fn on_text, void *userdata)
{
        *p = (struct ws_parser){
                .from_client = from_client,
                .on_text = on_text,
                .userdata = userdata,
        };
}

void ws_parser_done(struct ws_parser *p)
{
        p->msg = mfree(p->msg);
}

bool ws_parser_at_boundary(const struct ws_parser *p)
{
        return p->hdr_len == 0 && !p->in_payload;
}

bool ws_parser_next_is_control(const struct ws_parser *p, const uint8_t *buf, size_t len)
{
        /* Control opcodes are 0x8-0xF (RFC 6455 5.2); the opcode is the low
         * nibble of a frame's first byte. */
        if (p->in_payload)
                return p->opcode >= WS_OP_CLOSE;
        if (p->hdr_len > 0)
                return (p->hdr[0] & 0x0f) >= WS_OP_CLOSE;
        return len > 0 && (buf[0] & 0x0f) >= WS_OP_CLOSE;
}

size_t ws_close_frame(uint16_t code, uint8_t out[4])
{
        out[0] = 0x80 | WS_OP_CLOSE;
        out[1] = 2;
        out[2] = (uint8_t) (code >> 8);
        out[3] = (uint8_t) code;
        return 4;
}

static int fail(struct ws_parser *p, uint16_t code)
{
        p->error_code = code;
        return code == WS_CLOSE_TOO_BIG        ? -EMSGSIZE
               : code == WS_CLOSE_INVALID_DATA ? -EILSEQ
                                               : -EPROTO;
}

static bool close_code_valid(uint16_t c)
{
        /* 1004-1006 and 1015 are reserved, never sent on the wire. */
        if (c >= 1000 && c <= 1014)
                return c != 1004 && c != 1005 && c != 1006;
        return c >= 3000 && c <= 4999;
}

static int header_complete(struct ws_parser *p)
{
        uint8_t b0 = p->hdr[0], b1 = p->hdr[1];
        size_t off = 2;
        uint64_t len = b1 & 0x7f;

        p->fin = b0 & 0x80;
        p->opcode = b0 & 0x0f;
        p->masked = b1 & 0x80;
        if (b0 & 0x70)
                return fail(p, WS_CLOSE_PROTOCOL); /* RSV without an extension */
        if (p->closed)
                return fail(p, WS_CLOSE_PROTOCOL); /* data after close */
        if (p->masked != p->from_client)
                return fail(p, WS_CLOSE_PROTOCOL); /* RFC 6455 5.1 */
        if (len == 126) {
                len = (uint64_t) p->hdr[2] << 8 | p->hdr[3];
                off = 4;
                if (len < 126)
                        return fail(p, WS_CLOSE_PROTOCOL);
        } else if (len == 127) {
                len = 0;
                for (int i = 0; i < 8; i++)
                        len = len << 8 | p->hdr[2 + i];
                off = 10;
                if (len >> 63 || len < 65536)
                        return fail(p, WS_CLOSE_PROTOCOL);
        }
        if (p->masked)
                memcpy(p->mask, p->hdr + off, 4);
        switch (p->opcode) {
        case WS_OP_CLOSE:
        case WS_OP_PING:
        case WS_OP_PONG:
                if (!p->fin || len > WS_MAX_CONTROL_PAYLOAD)
                        return fail(p, WS_CLOSE_PROTOCOL);
                if (p->opcode == WS_OP_CLOSE && len == 1)
                        return fail(p, WS_CLOSE_PROTOCOL);
                p->ctrl_len = 0;
                break;
        case WS_OP_CONT:
                if (!p->in_message)
                        return fail(p, WS_CLOSE_PROTOCOL);
                break;
        case WS_OP_TEXT:
        case WS_OP_BINARY:
                if (p->in_message)
                        return fail(p, WS_CLOSE_PROTOCOL);
                p->in_message = true;
                p->msg_opcode = p->opcode;
                p->msg_len = 0;
                p->msg_overflow = false;
                p->utf8 = (struct utf8_check){ 0 };
                break;
        default:
                return fail(p, WS_CLOSE_PROTOCOL);
        }
        p->payload_len = len;
        p->payload_pos = 0;
        p->in_payload = true;
        return 0;
}

static int frame_complete(struct ws_parser *p)
{
        p->in_payload = false;
        p->hdr_len = 0;
        p->frames++;
        if (p->opcode == WS_OP_CLOSE) {
                p->closed = true;
                p->peer_close = 1005;
                if (p->ctrl_len >= 2) {
                        uint16_t code = (uint16_t) (p->ctrl[0] << 8 | p->ctrl[1]);
                        if (!close_code_valid(code))
                                return fail(p, WS_CLOSE_PROTOCOL);
                        if (!utf8_valid(p->ctrl + 2, p->ctrl_len - 2))
                                return fail(p, WS_CLOSE_INVALID_DATA);
                        p->peer_close = code;
                }
        }
        if (p->opcode >= WS_OP_CLOSE) {
                if (p->on_control)
                        p->on_control(p->userdata, p->opcode, p->ctrl, p->ctrl_len);
                return 0;
        }
        if (!p->fin)
                return 0;
        /* The data message is complete. */
        p->in_message = false;
        if (p->msg_opcode == WS_OP_TEXT) {
                if (!utf8_check_complete(&p->utf8))
                        return fail(p, WS_CLOSE_INVALID_DATA);
                if (p->on_text && !p->msg_overflow)
                        p->on_text(p->userdata, p->msg ? p->msg : "", p->msg_len);
        }
        return 0;
}

static size_t header_need(const struct ws_parser *p)
{
        size_t n = 2;
        if (p->hdr_len < 2)
                return 2;
        if ((p->hdr[1] & 0x7f) == 126)
                n += 2;
        else if ((p->hdr[1] & 0x7f) == 127)
                n += 8;
        if (p->hdr[1] & 0x80)
                n += 4;
        return n;
}

ssize_t ws_parser_feed(struct ws_parser *p, const uint8_t *buf, size_t len)
{
        size_t i = 0;
        int r;

        if (p->error_code)
                return -EPROTO;
        while (i < len) {
                if (!p->in_payload) {
                        p->hdr[p->hdr_len++] = buf[i++];
                        if (p->hdr_len < header_need(p))
                                continue;
                        r = header_complete(p);
                        if (r < 0)
                                return r;
                        if (p->payload_len == 0) {
                                r = frame_complete(p);
                                if (r < 0)
                                        return r;
                                if (p->stop)
                                        break;
                        }
                        continue;
                }
                size_t n = (size_t) MIN((uint64_t) (len - i), p->payload_len - p->payload_pos);
                bool control = p->opcode >= WS_OP_CLOSE;
                bool text = !control && p->msg_opcode == WS_OP_TEXT;
                bool collect = text && p->on_text && !p->msg_overflow;

                if (collect && p->msg_len + n > WS_MAX_INSPECT_BYTES) {
                        /* Too long to inspect: still relayed and validated. */
                        p->msg_overflow = true;
                        p->msg = mfree(p->msg);
                        p->msg_len = 0;
                        collect = false;
                }
                if (collect)
                        p->msg = xrealloc(p->msg, p->msg_len + n + 1);
                for (size_t k = 0; k < n; k++) {
                        uint8_t b = buf[i + k];
                        if (p->masked)
                                b ^= p->mask[(p->payload_pos + k) & 3];
                        if (control)
                                p->ctrl[p->ctrl_len++] = b;
                        else if (text) {
                                /* Byte by byte: a character may be split
                                 * over frames and reads; a byte that breaks
                                 * it fails the connection when it arrives
                                 * (RFC 6455 8.1), not at the message's end. */
                                if (!utf8_check_byte(&p->utf8, b))
                                        return fail(p, WS_CLOSE_INVALID_DATA);
                                if (collect)
                                        p->msg[p->msg_len++] = (char) b;
                        }
                }
                if (collect)
                        p->msg[p->msg_len] = 0;
                i += n;
                p->payload_pos += n;
                if (p->payload_pos == p->payload_len) {
                        r = frame_complete(p);
                        if (r < 0)
                                return r;
                        if (p->stop)
                                break;
                }
        }
        p->stop = false;
        return (ssize_t) i;
}

void ws_append_frame(struct strbuf *out, uint8_t opcode, const void *data, size_t len,
                     const uint8_t *mask)
{
        uint8_t hdr[14];
        size_t h = 0;

        hdr[h++] = (uint8_t) (0x80 | (opcode & 0x0f));
        if (len < 126)
                hdr[h++] = (uint8_t) len;
        else if (len <= 0xffff) {
                hdr[h++] = 126;
                hdr[h++] = (uint8_t) (len >> 8);
                hdr[h++] = (uint8_t) len;
        } else {
                hdr[h++] = 127;
                for (int i = 7; i >= 0; i--)
                        hdr[h++] = (uint8_t) ((uint64_t) len >> (8 * i));
        }
        if (mask) {
                hdr[1] |= 0x80;
                memcpy(hdr + h, mask, 4);
                h += 4;
        }
        strbuf_add(out, hdr, h);
        if (!mask) {
                strbuf_add(out, data, len);
                return;
        }
        for (size_t i = 0; i < len; i++) {
                uint8_t b = ((const uint8_t *) data)[i] ^ mask[i & 3];
                strbuf_add(out, &b, 1);
        }
}

void ws_append_close(struct strbuf *out, uint16_t code, const char *reason, const uint8_t *mask)
{
        uint8_t payload[WS_MAX_CONTROL_PAYLOAD];
        size_t n = reason ? strlen(reason) : 0;

        /* Cut at a character boundary: a close reason must be valid UTF-8. */
        if (n > sizeof(payload) - 2) {
                n = sizeof(payload) - 2;
                while (n > 0 && ((unsigned char) reason[n] & 0xc0) == 0x80)
                        n--;
        }
        payload[0] = (uint8_t) (code >> 8);
        payload[1] = (uint8_t) code;
        if (n > 0) /* bytes of a frame, not a C string: no NUL */
                memcpy(&payload[2], reason, n * sizeof(payload[0]));
        ws_append_frame(out, WS_OP_CLOSE, payload, n + 2, mask);
}

int ws_accept_key(const char *key, size_t key_len, char out[29])
{
        static const char guid[] = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
        char buf[24 + sizeof(guid)];
        uint8_t digest[SHA_DIGEST_LENGTH];

        /* 16 random bytes, base64: exactly 24 characters ending "==". */
        if (key_len != 24 || key[22] != '=' || key[23] != '=')
                return -EINVAL;
        for (size_t i = 0; i < 22; i++)
                if (!((key[i] >= 'A' && key[i] <= 'Z') || (key[i] >= 'a' && key[i] <= 'z') ||
                      (key[i] >= '0' && key[i] <= '9') || key[i] == '+' || key[i] == '/'))
                        return -EINVAL;
        memcpy(buf, key, 24);
        memcpy(buf + 24, guid, sizeof(guid) - 1);
        /* SHA-1 protects nothing here: it is a fixed part of the handshake. */
        SHA1((const unsigned char *) buf, 24 + sizeof(guid) - 1, digest);
        EVP_EncodeBlock((unsigned char *) out, digest, sizeof(digest));
        return 0;
}

bool ws_is_handshake(const struct http_head *h)
{
        const struct http_header *upgrade = http_head_get(h, "Upgrade");
        const struct http_header *key = http_head_get(h, "Sec-WebSocket-Key");
        const struct http_header *version = http_head_get(h, "Sec-WebSocket-Version");
        char accept[29];

        return h->upgrade && h->method == HTTP_GET && upgrade &&
               http_value_has_token(upgrade->value, upgrade->value_len, "websocket") && key &&
               version && version->value_len == 2 && memcmp(version->value, "13", 2) == 0 &&
               ws_accept_key(key->value, key->value_len, accept) == 0;
}
