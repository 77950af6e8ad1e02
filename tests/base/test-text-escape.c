/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * base/text-escape.h: what a container made, on one safe line. Every byte
 * value alone and after every lead byte: the output is valid UTF-8 with no
 * control, separator or bidi character, and escaping it again changes
 * nothing (idempotent: escaped where text enters and where it leaves, it is
 * escaped once).
 */
#include <stdlib.h>
#include <string.h>

#include "base/macro.h"
#include "base/text-escape.h"
#include "base/utf8.h"
#include "test-helpers.h"

static void assert_safe(const char *in)
{
        char *once = text_escape(in);
        char *twice = text_escape(once);
        const unsigned char *p = (const unsigned char *) once;

        cr_assert(text_is_safe(once), "unsafe: %s", once);
        cr_assert_str_eq(once, twice, "not idempotent");
        while (*p) {
                size_t n = utf8_seq_len(p);
                cr_assert_gt(n, 0, "broken UTF-8 in %s", once);
                cr_assert(*p >= 0x20 && *p != 0x7f, "a control byte in %s", once);
                p += n;
        }
        free(once);
        free(twice);
}

Test(text_escape, every_byte_and_pair)
{
        for (unsigned a = 1; a < 256; a++)
                for (unsigned b = 0; b < 256; b++) {
                        char s[4] = { (char) a, (char) b, (char) 0x80, 0 };
                        assert_safe(s);
                }
}

Test(text_escape, shown_as_it_is)
{
        const char *keep = "plain ascii, \\ backslash, caf\xc3\xa9, \xe2\x82\xac, \xf0\x9f\x98\x80";
        char *out = text_escape(keep);

        cr_assert_str_eq(out, keep);
        cr_assert(text_is_safe(keep));
        free(out);
}

Test(text_escape, escaped)
{
        static const struct {
                const char *in, *out;
        } cases[] = {
                { "a\nb", "a\\x0ab" },
                { "\x1b[2K\r", "\\x1b[2K\\x0d" },
                { "\x7f", "\\x7f" },
                { "\xff\xfe", "\\xff\\xfe" },
                { "\xc2\x9b", "\\xc2\\x9b" },          /* C1 CSI */
                { "\xe2\x80\xa8", "\\xe2\\x80\\xa8" }, /* line separator */
                { "\xe2\x80\xae", "\\xe2\\x80\\xae" }, /* right-to-left override */
                { "\xe2\x81\xa6", "\\xe2\\x81\\xa6" }, /* left-to-right isolate */
                { "\xc3", "\\xc3" },                   /* cut sequence */
                { "\xc3"
                  "A",
                  "\\xc3A" },
                { "\xed\xa0\x80", "\\xed\\xa0\\x80" }, /* surrogate */
                { "\xc0\xaf", "\\xc0\\xaf" },          /* overlong "/" */
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                char *out = text_escape(cases[i].in);
                cr_assert_str_eq(out, cases[i].out, "case %zu", i);
                cr_assert_not(text_is_safe(cases[i].in));
                free(out);
        }
}

/* The reader's side of text_escape_exact(): "\\" and "\xNN" back to bytes. */
static char *unescape_exact(const char *s)
{
        char *out = malloc(strlen(s) + 1), *o = out;

        cr_assert_not_null(out);
        while (*s) {
                if (s[0] == '\\' && s[1] == '\\') {
                        *o++ = '\\';
                        s += 2;
                } else if (s[0] == '\\' && s[1] == 'x') {
                        char hex[3] = { s[2], s[3], 0 };
                        *o++ = (char) strtoul(hex, NULL, 16);
                        s += 4;
                } else {
                        cr_assert_neq(*s, '\\', "a lone backslash in exact output");
                        *o++ = *s++;
                }
        }
        *o = '\0';
        return out;
}

Test(text_escape, exact_is_reversible_for_every_byte_pair)
{
        /* Reversible means no two inputs read the same: 0xff, U+FFFD and a
         * name spelled \xff stay three names (issue 30). */
        for (unsigned a = 1; a < 256; a++)
                for (unsigned b = 0; b < 256; b++) {
                        char s[5] = { (char) a, (char) b, '\\', (char) 0x80, 0 };
                        char *e = text_escape_exact(s), *back = unescape_exact(e);

                        cr_assert(text_is_safe(e), "unsafe: %s", e);
                        cr_assert_str_eq(back, s, "%02x %02x: %s does not read back", a, b, e);
                        free(e);
                        free(back);
                }
}

Test(text_escape, exact_tells_0xff_from_u_fffd_and_from_its_spelling)
{
        char *byte = text_escape_exact("a\xff"), *fffd = text_escape_exact("a\xef\xbf\xbd"),
             *spelled = text_escape_exact("a\\xff");

        cr_assert_str_eq(byte, "a\\xff");
        cr_assert_str_eq(fffd, "a\xef\xbf\xbd");
        cr_assert_str_eq(spelled, "a\\\\xff");
        free(byte);
        free(fffd);
        free(spelled);
}

/* A container's output is bytes with a length: a NUL is escaped like any
 * control (never an end of the text), and a sequence cut by the end is
 * never read past it (the buffer here is exactly as long: ASan watches). */
Test(text_escape, mem_with_nul_and_cut_sequence)
{
        static const struct {
                const char *in;
                size_t len;
                const char *out;
        } cases[] = {
                { "a\0b", 3, "a\\x00b" },
                { "\0", 1, "\\x00" },
                { "caf\xc3", 4, "caf\\xc3" },
                { "\xe2\x82", 2, "\\xe2\\x82" },
                { "\xf0\x9f\x98", 3, "\\xf0\\x9f\\x98" },
                { "\xf0\x9f\x98\x80", 4, "\xf0\x9f\x98\x80" },
                { "x\x1b[2J\r\n", 7, "x\\x1b[2J\\x0d\\x0a" },
                { "", 0, "" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                char *in = malloc(cases[i].len ? cases[i].len : 1);
                struct strbuf sb = STRBUF_INIT;

                memcpy(in, cases[i].in, cases[i].len);
                text_escape_mem_append(&sb, in, cases[i].len);
                cr_assert_str_eq(sb.buf, cases[i].out, "case %zu", i);
                cr_assert(text_is_safe(sb.buf));
                strbuf_release(&sb);
                free(in);
        }
}

/* The same bytes without a NUL escape as text_escape() has them. */
Test(text_escape, mem_agrees_with_the_string_form)
{
        for (unsigned a = 1; a < 256; a++)
                for (unsigned b = 1; b < 256; b++) {
                        char s[4] = { (char) a, (char) b, (char) 0x80, 0 };
                        struct strbuf sb = STRBUF_INIT;
                        char *want = text_escape(s);

                        text_escape_mem_append(&sb, s, 3);
                        cr_assert_str_eq(sb.buf, want);
                        strbuf_release(&sb);
                        free(want);
                }
}
