/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Token usage as a model provider reports it, read from a response body as
 * it streams past, in O(1) memory (nothing is buffered: the body may be
 * megabytes, an SSE stream may last minutes).
 *
 * A JSON body is one document; an SSE body (text/event-stream) is a series
 * of events whose `data:` lines each carry one. In every document the
 * scanner reads integers at exactly these paths:
 *
 *   usage.F            anthropic and openai responses, openai's last stream chunk
 *   message.usage.F    anthropic `message_start`
 *   response.usage.F   openai Responses API stream events (`response.completed`)
 *
 * with F one of input_tokens, prompt_tokens (→ input), output_tokens,
 * completion_tokens (→ output), cache_creation_input_tokens,
 * cache_read_input_tokens (→ input: anthropic bills them and excludes them
 * from input_tokens) and total_tokens. Keys deeper in a document (tool
 * inputs, message content: what a harness can steer the model to write) are
 * never mistaken for these. Streams report cumulative counts
 * (message_start, then message_delta's running output_tokens), so each
 * field keeps the largest value seen: repeated reports are not added up.
 *
 * Input the scanner does not understand (not JSON, gzip) reports nothing.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/limits.h"

enum model_usage_field {
        MODEL_USAGE_INPUT,
        MODEL_USAGE_OUTPUT,
        MODEL_USAGE_CACHE_CREATION,
        MODEL_USAGE_CACHE_READ,
        MODEL_USAGE_TOTAL,
        MODEL_USAGE_FIELD_MAX,
};

/* Nesting depth whose keys are remembered: `message.usage.F` is 3 deep. */
#define MODEL_USAGE_TRACK_DEPTH 3

struct model_usage {
        bool sse;
        bool seen;                           /* some usage field was read */
        uint64_t max[MODEL_USAGE_FIELD_MAX]; /* largest value per field */

        /* JSON scanner (one document). */
        uint8_t js;    /* enum in model-usage.c */
        uint8_t depth; /* open containers, <= TRACK_DEPTH */
        size_t deep;   /* open containers below TRACK_DEPTH */
        bool is_object[MODEL_USAGE_TRACK_DEPTH + 1];
        uint8_t key[MODEL_USAGE_TRACK_DEPTH + 1]; /* key id per depth (objects) */
        char key_buf[MODEL_USAGE_MAX_KEY];
        size_t key_len;
        bool key_unusable; /* too long or escaped */
        uint64_t num;
        unsigned num_digits;
        bool num_ok;

        /* SSE framing. */
        uint8_t sse_state;
        bool after_cr;
        char field[MODEL_SSE_MAX_FIELD];
        size_t field_len;
};

void model_usage_init(struct model_usage *u, bool sse);
void model_usage_feed(struct model_usage *u, const char *data, size_t len);
/* What the response reported so far: input (input + cache fields; plus any
 * part of total_tokens the others do not explain) and output. */
void model_usage_tokens(const struct model_usage *u, uint64_t *ret_in, uint64_t *ret_out);
