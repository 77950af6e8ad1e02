/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "relay/model-usage.h"

#include <string.h>

#include "base/macro.h"

/*
 * The JSON scanner is a byte-at-a-time tokenizer that keeps the container
 * kind and the current key for the first MODEL_USAGE_TRACK_DEPTH levels
 * only. Below that it just counts brackets outside strings until the
 * tracked level is back: whatever a model writes (tool inputs, text) sits
 * in strings or below that depth, so it can neither fake nor hide the
 * provider's usage fields. Syntax errors stop the document (JS_BROKEN);
 * nothing is ever rejected or rewritten, the scanner only reads.
 */

enum js_state {
        JS_VALUE,        /* a value must follow */
        JS_VALUE_OR_END, /* after '[' */
        JS_KEY_OR_END,   /* after '{' */
        JS_KEY,          /* after ',' in an object */
        JS_IN_KEY,
        JS_IN_KEY_ESC,
        JS_COLON,
        JS_IN_STRING,
        JS_IN_STRING_ESC,
        JS_IN_NUMBER,
        JS_IN_LITERAL,
        JS_AFTER_VALUE,
        JS_DEEP, /* below the tracked depth: brackets and strings only */
        JS_DEEP_STRING,
        JS_DEEP_STRING_ESC,
        JS_DONE,   /* the document ended */
        JS_BROKEN, /* not JSON: ignore the rest of the document */
};

enum sse_state {
        SSE_LINE_START,
        SSE_FIELD, /* reading a field name */
        SSE_SPACE, /* after "data:": one optional space */
        SSE_DATA,  /* a data line's value: JSON */
        SSE_SKIP,  /* a comment or another field: up to the end of the line */
};

enum key_id {
        KEY_NONE, /* array level, or no key read yet */
        KEY_OTHER,
        KEY_USAGE,
        KEY_MESSAGE,
        KEY_RESPONSE,
        KEY_FIELD, /* KEY_FIELD + enum model_usage_field */
};

static const struct {
        const char *name;
        uint8_t id;
} known_keys[] = {
        { "usage", KEY_USAGE },
        { "message", KEY_MESSAGE },
        { "response", KEY_RESPONSE },
        { "input_tokens", KEY_FIELD + MODEL_USAGE_INPUT },
        { "prompt_tokens", KEY_FIELD + MODEL_USAGE_INPUT },
        { "output_tokens", KEY_FIELD + MODEL_USAGE_OUTPUT },
        { "completion_tokens", KEY_FIELD + MODEL_USAGE_OUTPUT },
        { "cache_creation_input_tokens", KEY_FIELD + MODEL_USAGE_CACHE_CREATION },
        { "cache_read_input_tokens", KEY_FIELD + MODEL_USAGE_CACHE_READ },
        { "total_tokens", KEY_FIELD + MODEL_USAGE_TOTAL },
};

/* The largest count kept: MODEL_USAGE_MAX_DIGITS nines. */
static uint64_t max_count(void)
{
        uint64_t v = 0;

        for (unsigned i = 0; i < MODEL_USAGE_MAX_DIGITS; i++)
                v = v * 10 + 9;
        return v;
}

static bool is_ws(char c)
{
        return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static void js_reset(struct model_usage *u)
{
        u->js = JS_VALUE;
        u->depth = 0;
        u->deep = 0;
        memset(u->key, KEY_NONE, sizeof(u->key));
}

void model_usage_init(struct model_usage *u, bool sse)
{
        *u = (struct model_usage){ .sse = sse, .sse_state = SSE_LINE_START };
        js_reset(u);
}

static uint8_t key_lookup(const struct model_usage *u)
{
        if (u->key_unusable)
                return KEY_OTHER;
        for (size_t i = 0; i < ELEMENTSOF(known_keys); i++)
                if (strlen(known_keys[i].name) == u->key_len &&
                    memcmp(known_keys[i].name, u->key_buf, u->key_len) == 0)
                        return known_keys[i].id;
        return KEY_OTHER;
}

/* The usage field a number at the current position is, or -1. */
static int field_here(const struct model_usage *u)
{
        uint8_t k = u->key[u->depth];

        if (u->depth < 2 || !u->is_object[u->depth] || k < KEY_FIELD)
                return -1;
        if (u->depth == 2 && u->key[1] == KEY_USAGE)
                return k - KEY_FIELD;
        if (u->depth == 3 && (u->key[1] == KEY_MESSAGE || u->key[1] == KEY_RESPONSE) &&
            u->key[2] == KEY_USAGE)
                return k - KEY_FIELD;
        return -1;
}

static void value_end(struct model_usage *u)
{
        u->js = u->depth == 0 ? JS_DONE : JS_AFTER_VALUE;
}

static void number_end(struct model_usage *u)
{
        int f = field_here(u);

        if (f >= 0 && u->num_ok && u->num_digits > 0) {
                u->seen = true;
                if (u->num > u->max[f])
                        u->max[f] = u->num;
        }
        value_end(u);
}

static void container_open(struct model_usage *u, bool object)
{
        if (u->depth == MODEL_USAGE_TRACK_DEPTH) {
                u->js = JS_DEEP;
                u->deep = 1;
                return;
        }
        u->depth++;
        u->is_object[u->depth] = object;
        u->key[u->depth] = KEY_NONE;
        u->js = object ? JS_KEY_OR_END : JS_VALUE_OR_END;
}

static void container_close(struct model_usage *u, bool object)
{
        if (u->depth == 0 || u->is_object[u->depth] != object) {
                u->js = JS_BROKEN;
                return;
        }
        u->depth--;
        value_end(u);
}

/* A value starts with c (states JS_VALUE and JS_VALUE_OR_END). */
static void value_start(struct model_usage *u, char c)
{
        if (c == '{' || c == '[')
                container_open(u, c == '{');
        else if (c == '"')
                u->js = JS_IN_STRING;
        else if (c == '-' || (c >= '0' && c <= '9')) {
                u->js = JS_IN_NUMBER;
                u->num = 0;
                u->num_digits = 0;
                u->num_ok = c != '-'; /* a negative count is no count */
                if (c != '-') {
                        u->num = (uint64_t) (c - '0');
                        u->num_digits = 1;
                }
        } else if (c >= 'a' && c <= 'z')
                u->js = JS_IN_LITERAL;
        else
                u->js = JS_BROKEN;
}

static void number_digit(struct model_usage *u, char c)
{
        if (c < '0' || c > '9') {
                u->num_ok = false; /* fraction or exponent: not a count */
                return;
        }
        if (u->num_digits >= MODEL_USAGE_MAX_DIGITS) {
                u->num = max_count();
                return;
        }
        u->num = u->num * 10 + (uint64_t) (c - '0');
        u->num_digits++;
}

static void js_byte(struct model_usage *u, char c)
{
        for (;;) {
                switch (u->js) {
                case JS_VALUE:
                        if (!is_ws(c))
                                value_start(u, c);
                        return;
                case JS_VALUE_OR_END:
                        if (c == ']')
                                container_close(u, false);
                        else if (!is_ws(c))
                                value_start(u, c);
                        return;
                case JS_KEY_OR_END:
                case JS_KEY:
                        if (c == '"') {
                                u->js = JS_IN_KEY;
                                u->key_len = 0;
                                u->key_unusable = false;
                        } else if (c == '}' && u->js == JS_KEY_OR_END)
                                container_close(u, true);
                        else if (!is_ws(c))
                                u->js = JS_BROKEN;
                        return;
                case JS_IN_KEY:
                        if (c == '"') {
                                u->key[u->depth] = key_lookup(u);
                                u->js = JS_COLON;
                        } else if (c == '\\') {
                                /* No known key is spelled with escapes. */
                                u->key_unusable = true;
                                u->js = JS_IN_KEY_ESC;
                        } else if (u->key_len < sizeof(u->key_buf))
                                u->key_buf[u->key_len++] = c;
                        else
                                u->key_unusable = true;
                        return;
                case JS_IN_KEY_ESC:
                        u->js = JS_IN_KEY;
                        return;
                case JS_COLON:
                        if (c == ':')
                                u->js = JS_VALUE;
                        else if (!is_ws(c))
                                u->js = JS_BROKEN;
                        return;
                case JS_IN_STRING:
                        if (c == '"')
                                value_end(u);
                        else if (c == '\\')
                                u->js = JS_IN_STRING_ESC;
                        return;
                case JS_IN_STRING_ESC:
                        u->js = JS_IN_STRING;
                        return;
                case JS_IN_NUMBER:
                        if ((c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' ||
                            c == '+' || c == '-') {
                                number_digit(u, c);
                                return;
                        }
                        number_end(u);
                        continue; /* c ends the number and is read again */
                case JS_IN_LITERAL:
                        if (c >= 'a' && c <= 'z')
                                return;
                        value_end(u);
                        continue;
                case JS_AFTER_VALUE:
                        if (c == ',')
                                u->js = u->is_object[u->depth] ? JS_KEY : JS_VALUE;
                        else if (c == '}' || c == ']')
                                container_close(u, c == '}');
                        else if (!is_ws(c))
                                u->js = JS_BROKEN;
                        return;
                case JS_DEEP:
                        if (c == '"')
                                u->js = JS_DEEP_STRING;
                        else if (c == '{' || c == '[')
                                u->deep++;
                        else if ((c == '}' || c == ']') && --u->deep == 0)
                                u->js = JS_AFTER_VALUE; /* back at the tracked depth */
                        return;
                case JS_DEEP_STRING:
                        if (c == '"')
                                u->js = JS_DEEP;
                        else if (c == '\\')
                                u->js = JS_DEEP_STRING_ESC;
                        return;
                case JS_DEEP_STRING_ESC:
                        u->js = JS_DEEP_STRING;
                        return;
                case JS_DONE:
                        if (!is_ws(c))
                                u->js = JS_BROKEN;
                        return;
                default: /* JS_BROKEN */
                        return;
                }
        }
}

/* One byte of a field name; the field's value follows its ':'. */
static void sse_field_byte(struct model_usage *u, char c)
{
        if (c == ':')
                u->sse_state = u->field_len == 4 && memcmp(u->field, "data", 4) == 0 ? SSE_SPACE
                                                                                     : SSE_SKIP;
        else if (u->field_len < sizeof(u->field))
                u->field[u->field_len++] = c;
        else
                u->sse_state = SSE_SKIP; /* too long to be "data" */
}

/* SSE (WHATWG HTML, "Parsing an event stream"): lines end in CR, LF or
 * CRLF; a blank line ends an event; only `data` fields are read, their
 * lines joined by LF into the event's one JSON document. */
static void sse_byte(struct model_usage *u, char c)
{
        if (u->after_cr) {
                u->after_cr = false;
                if (c == '\n')
                        return;
        }
        if (c == '\r' || c == '\n') {
                u->after_cr = c == '\r';
                /* A blank line completes the event: the next one is a new
                 * document (a top-level number, the only thing a document
                 * can end in without a delimiter, never counts). */
                if (u->sse_state == SSE_LINE_START)
                        js_reset(u);
                else if (u->sse_state == SSE_SPACE || u->sse_state == SSE_DATA)
                        js_byte(u, '\n');
                u->sse_state = SSE_LINE_START;
                return;
        }
        switch (u->sse_state) {
        case SSE_LINE_START:
                if (c == ':') {
                        u->sse_state = SSE_SKIP; /* a comment */
                        return;
                }
                u->field_len = 0;
                u->sse_state = SSE_FIELD;
                sse_field_byte(u, c);
                return;
        case SSE_FIELD:
                sse_field_byte(u, c);
                return;
        case SSE_SPACE:
                u->sse_state = SSE_DATA;
                if (c == ' ')
                        return;
                js_byte(u, c);
                return;
        case SSE_DATA:
                js_byte(u, c);
                return;
        default: /* SSE_SKIP */
                return;
        }
}

void model_usage_feed(struct model_usage *u, const char *data, size_t len)
{
        if (u->sse) {
                for (size_t i = 0; i < len; i++)
                        sse_byte(u, data[i]);
                return;
        }
        for (size_t i = 0; i < len && u->js != JS_BROKEN; i++)
                js_byte(u, data[i]);
}

void model_usage_tokens(const struct model_usage *u, uint64_t *ret_in, uint64_t *ret_out)
{
        uint64_t in = u->max[MODEL_USAGE_INPUT] + u->max[MODEL_USAGE_CACHE_CREATION] +
                      u->max[MODEL_USAGE_CACHE_READ];
        uint64_t out = u->max[MODEL_USAGE_OUTPUT];

        /* Never count less than the provider's own total. */
        if (u->max[MODEL_USAGE_TOTAL] > in + out)
                in = u->max[MODEL_USAGE_TOTAL] - out;
        *ret_in = in;
        *ret_out = out;
}
