/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A minimal streaming JSON writer into a strbuf, for the static probe binary
 * (which deliberately links nothing but libc). String values are what the
 * subject made (mount points, file names, comms): they are written escaped
 * by text_escape_exact() (base/text-escape.h), so every value is one safe
 * line and two different byte strings never read the same (byte 0xff reads
 * \xff, U+FFFD stays U+FFFD); keys are ours and go through jstring_append()
 * alone. Nesting is bounded by JWRITER_MAX_DEPTH; misuse (deeper nesting, a
 * key outside an object) sets `failed`, which the caller checks once at the
 * end.
 */
#include <stdbool.h>
#include <stdint.h>

#include "base/jstring.h"
#include "base/strbuf.h"

#define JWRITER_MAX_DEPTH 16

struct jwriter {
        struct strbuf out; /* owned */
        unsigned depth;
        bool first[JWRITER_MAX_DEPTH + 1]; /* no element written yet at this depth */
        bool after_key;
        bool failed;
};

void jwriter_init(struct jwriter *w);
void jwriter_release(struct jwriter *w);
void jwriter_object_begin(struct jwriter *w);
void jwriter_object_end(struct jwriter *w);
void jwriter_array_begin(struct jwriter *w);
void jwriter_array_end(struct jwriter *w);
void jwriter_key(struct jwriter *w, const char *key);
void jwriter_string(struct jwriter *w, const char *s);
void jwriter_uint(struct jwriter *w, uint64_t v);
void jwriter_int(struct jwriter *w, int64_t v);
void jwriter_bool(struct jwriter *w, bool v);
void jwriter_null(struct jwriter *w);
/* Convenience: key + value. */
void jwriter_kv_string(struct jwriter *w, const char *key, const char *s);
void jwriter_kv_uint(struct jwriter *w, const char *key, uint64_t v);
void jwriter_kv_int(struct jwriter *w, const char *key, int64_t v);
void jwriter_kv_bool(struct jwriter *w, const char *key, bool v);
