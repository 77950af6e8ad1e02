/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * base/json-writer.h: the one JSON writer for documents written as they go
 * (the JSON log line, error answers, the probe's reports): valid JSON for
 * any bytes, appended to what the caller's buffer holds, misuse caught.
 */
#include <jansson.h>
#include <string.h>

#include "base/json-writer.h"
#include "test-helpers.h"

/* Evidence is what the subject made: one safe line, reversible (byte 0xff
 * reads \xff, a backslash \\, a newline \x0a; U+FFFD and é stay). */
Test(json_writer, text_escapes_every_value_exactly)
{
        cleanup_strbuf struct strbuf out = STRBUF_INIT;
        struct jwriter w;
        json_t *v;
        const char *key;

        jwriter_init(&w, &out);
        jwriter_object_begin(&w);
        jwriter_kv_text(&w, "p", "/a\"b\\c\n\x01\xff\xef\xbf\xbd\xc3\xa9");
        jwriter_key(&w, "l");
        jwriter_array_begin(&w);
        jwriter_uint(&w, 4026531841ULL);
        jwriter_int(&w, -5);
        jwriter_bool(&w, true);
        jwriter_null(&w);
        jwriter_array_end(&w);
        jwriter_object_end(&w);
        cr_assert_not(w.failed);
        cr_assert_eq(w.depth, 0);
        v = json_loadb(out.buf, out.len, 0, NULL);
        cr_assert_not_null(v, "%s", out.buf);
        key = json_string_value(json_object_get(v, "p"));
        cr_assert_str_eq(key, "/a\"b\\\\c\\x0a\\x01\\xff\xef\xbf\xbd\xc3\xa9");
        cr_assert_eq(json_array_size(json_object_get(v, "l")), 4);
        json_decref(v);
}

/* A string value is the bytes as JSON (a newline is \u000a, a byte of no
 * UTF-8 sequence U+FFFD), written after what the buffer holds: the writer
 * owns nothing. */
Test(json_writer, string_appends_to_the_callers_buffer)
{
        cleanup_strbuf struct strbuf out = STRBUF_INIT;
        struct jwriter w;

        strbuf_adds(&out, "data: ");
        jwriter_init(&w, &out);
        jwriter_object_begin(&w);
        jwriter_kv_string(&w, "msg", "two\nlines \"quoted\" \xff");
        jwriter_kv_string(&w, "none", NULL);
        jwriter_kv_int(&w, "pid", 42);
        jwriter_key(&w, "o");
        jwriter_object_begin(&w);
        jwriter_kv_bool(&w, "ok", false);
        jwriter_object_end(&w);
        jwriter_object_end(&w);
        cr_assert_str_eq(out.buf, "data: {\"msg\":\"two\\u000alines \\\"quoted\\\" \xef\xbf\xbd\","
                                  "\"none\":\"\",\"pid\":42,\"o\":{\"ok\":false}}");
}

Test(json_writer, misuse_sets_failed)
{
        cleanup_strbuf struct strbuf out = STRBUF_INIT;
        struct jwriter w;

        jwriter_init(&w, &out);
        jwriter_object_end(&w);
        cr_assert(w.failed);
        jwriter_init(&w, &out);
        for (int i = 0; i < JWRITER_MAX_DEPTH + 1; i++)
                jwriter_array_begin(&w);
        cr_assert(w.failed);
}
