/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "base/json-writer.h"

#include <inttypes.h>
#include <string.h>

#include "base/text-escape.h"

void jwriter_init(struct jwriter *w, struct strbuf *out)
{
        *w = (struct jwriter){ .out = out };
        w->first[0] = true;
}

static void before_value(struct jwriter *w)
{
        if (w->after_key) {
                w->after_key = false;
                return;
        }
        if (!w->first[w->depth])
                strbuf_addch(w->out, ',');
        w->first[w->depth] = false;
}

static void open_scope(struct jwriter *w, char c)
{
        before_value(w);
        if (w->depth >= JWRITER_MAX_DEPTH) {
                w->failed = true;
                return;
        }
        strbuf_addch(w->out, c);
        w->depth++;
        w->first[w->depth] = true;
}

static void close_scope(struct jwriter *w, char c)
{
        if (w->depth == 0 || w->after_key) {
                w->failed = true;
                return;
        }
        strbuf_addch(w->out, c);
        w->depth--;
}

void jwriter_object_begin(struct jwriter *w)
{
        open_scope(w, '{');
}
void jwriter_object_end(struct jwriter *w)
{
        close_scope(w, '}');
}
void jwriter_array_begin(struct jwriter *w)
{
        open_scope(w, '[');
}
void jwriter_array_end(struct jwriter *w)
{
        close_scope(w, ']');
}

void jwriter_key(struct jwriter *w, const char *key)
{
        if (w->after_key) {
                w->failed = true;
                return;
        }
        before_value(w);
        jstring_append(w->out, key);
        strbuf_addch(w->out, ':');
        w->after_key = true;
}

void jwriter_string(struct jwriter *w, const char *s)
{
        before_value(w);
        jstring_append(w->out, s ? s : "");
}

void jwriter_text(struct jwriter *w, const char *s)
{
        cleanup_strbuf struct strbuf e = STRBUF_INIT;

        text_escape_exact_append(&e, s ? s : "");
        jwriter_string(w, e.buf);
}

void jwriter_uint(struct jwriter *w, uint64_t v)
{
        before_value(w);
        strbuf_addf(w->out, "%" PRIu64, v);
}

void jwriter_int(struct jwriter *w, int64_t v)
{
        before_value(w);
        strbuf_addf(w->out, "%" PRId64, v);
}

void jwriter_bool(struct jwriter *w, bool v)
{
        before_value(w);
        strbuf_adds(w->out, v ? "true" : "false");
}

void jwriter_null(struct jwriter *w)
{
        before_value(w);
        strbuf_adds(w->out, "null");
}

void jwriter_kv_string(struct jwriter *w, const char *key, const char *s)
{
        jwriter_key(w, key);
        jwriter_string(w, s);
}
void jwriter_kv_text(struct jwriter *w, const char *key, const char *s)
{
        jwriter_key(w, key);
        jwriter_text(w, s);
}
void jwriter_kv_uint(struct jwriter *w, const char *key, uint64_t v)
{
        jwriter_key(w, key);
        jwriter_uint(w, v);
}
void jwriter_kv_int(struct jwriter *w, const char *key, int64_t v)
{
        jwriter_key(w, key);
        jwriter_int(w, v);
}
void jwriter_kv_bool(struct jwriter *w, const char *key, bool v)
{
        jwriter_key(w, key);
        jwriter_bool(w, v);
}
