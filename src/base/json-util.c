/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "base/json-util.h"

#include <string.h>

#include "base/strbuf.h"
#include "base/utf8.h"
#include "base/util.h"

static json_t *checked(json_t *j)
{
        if (!j)
                oom();
        return j;
}

json_t *strv_to_json(char *const *v)
{
        json_t *a = checked(json_array());

        for (; v && *v; v++)
                json_array_append_new(a, json_string(*v));
        return a;
}

json_t *strn_to_json(const char *const *v, size_t n)
{
        json_t *a = checked(json_array());

        for (size_t i = 0; i < n; i++)
                json_array_append_new(a, json_string(v[i]));
        return a;
}

json_t *str_or_null_to_json(const char *s)
{
        return s ? json_string(s) : json_null();
}

const char *object_string(const json_t *o, const char *key, const char *fallback)
{
        json_t *v = json_object_get(o, key);
        return json_is_string(v) ? json_string_value(v) : fallback;
}

json_t *text_to_json(const char *s)
{
        const unsigned char *p = (const unsigned char *) s;
        struct strbuf sb = STRBUF_INIT;
        json_t *j;

        if (!s)
                return json_null();
        j = json_string(s);
        if (j)
                return j;
        /* json_string() refuses what is not UTF-8: one byte of the agent's
         * (0xff in a last output line) would drop the whole field. Written
         * as text_escape() writes it (base/text-escape.h), so a verdict
         * shows such a byte one way in its reason and its events. The NUL
         * terminator stops utf8_seq_len's continuation checks. */
        while (*p) {
                size_t n = utf8_seq_len(p);
                if (n == 0) {
                        strbuf_addf(&sb, "\\x%02x", *p++);
                        continue;
                }
                strbuf_add(&sb, p, n);
                p += n;
        }
        j = checked(json_stringn(sb.buf ?: "", sb.len));
        strbuf_release(&sb);
        return j;
}
