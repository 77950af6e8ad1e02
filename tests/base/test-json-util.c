/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* text_to_json(): any bytes make a JSON string, never NULL (issue 24: one
 * 0xff in a container's output dropped the verdict's reason). */
#include <criterion/criterion.h>
#include <string.h>

#include "base/json-util.h"

static void expect_text(const char *in, const char *want)
{
        json_t *j = text_to_json(in);

        cr_assert_not_null(j, "no string for %s", want);
        cr_assert(json_is_string(j));
        cr_assert_str_eq(json_string_value(j), want);
        json_decref(j);
}

Test(json_util, text_to_json_escapes_what_is_not_utf8)
{
        expect_text("plain", "plain");
        expect_text("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
                    "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
        /* 0xff, a lone continuation, a truncated sequence, an overlong
         * encoding and a surrogate: one \xNN per byte, as text_escape(). */
        expect_text("a\xff"
                    "b",
                    "a\\xff"
                    "b");
        expect_text("\x80", "\\x80");
        expect_text("x\xe2\x82", "x\\xe2\\x82");
        expect_text("\xc0\xaf", "\\xc0\\xaf");
        expect_text("\xed\xa0\x80", "\\xed\\xa0\\x80");
        /* Control bytes stay (jansson escapes them when it dumps). */
        expect_text("line\n\x1b[31m", "line\n\x1b[31m");
        cr_assert(json_is_null(text_to_json(NULL)));
}
