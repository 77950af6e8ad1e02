/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The one JSON writer for documents written as they go, appended to a
 * caller's strbuf without a tree or an allocation of its own: the JSON log
 * line, the relay's error answers, /health and /readyz, a container's
 * output as JSON, the probe's reports (the static probe links nothing but
 * libc). Documents that are built, merged or parsed as trees use jansson
 * (base-json, json-util.h); nothing is written as JSON by hand.
 *
 * Keys are ours. String values go through jstring_append() (base/jstring.h:
 * any bytes give a valid JSON string); text a less trusted party made that is
 * evidence (mount points, file names, comms) goes through jwriter_text():
 * text_escape_exact() first, so every value is one safe line and two
 * different byte strings never read the same (byte 0xff reads \xff, U+FFFD
 * stays U+FFFD). Nesting is bounded by JWRITER_MAX_DEPTH; misuse (deeper
 * nesting, a key outside an object) sets `failed`, which a caller that can
 * misuse it checks once at the end.
 */
#include <stdbool.h>
#include <stdint.h>

#include "base/jstring.h"
#include "base/strbuf.h"

#define JWRITER_MAX_DEPTH 16

struct jwriter {
        struct strbuf *out; /* borrowed: the caller's, appended to */
        unsigned depth;
        bool first[JWRITER_MAX_DEPTH + 1]; /* no element written yet at this depth */
        bool after_key;
        bool failed;
};

/* Writes one JSON value (usually an object) after what out holds. */
void jwriter_init(struct jwriter *w, struct strbuf *out);
void jwriter_object_begin(struct jwriter *w);
void jwriter_object_end(struct jwriter *w);
void jwriter_array_begin(struct jwriter *w);
void jwriter_array_end(struct jwriter *w);
void jwriter_key(struct jwriter *w, const char *key);
/* s as a JSON string (NULL: ""). */
void jwriter_string(struct jwriter *w, const char *s);
/* s escaped with text_escape_exact(), then as a JSON string (NULL: ""). */
void jwriter_text(struct jwriter *w, const char *s);
void jwriter_uint(struct jwriter *w, uint64_t v);
void jwriter_int(struct jwriter *w, int64_t v);
void jwriter_bool(struct jwriter *w, bool v);
void jwriter_null(struct jwriter *w);
/* Convenience: key + value. */
void jwriter_kv_string(struct jwriter *w, const char *key, const char *s);
void jwriter_kv_text(struct jwriter *w, const char *key, const char *s);
void jwriter_kv_uint(struct jwriter *w, const char *key, uint64_t v);
void jwriter_kv_int(struct jwriter *w, const char *key, int64_t v);
void jwriter_kv_bool(struct jwriter *w, const char *key, bool v);
