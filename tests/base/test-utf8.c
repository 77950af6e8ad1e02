/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * base/utf8.h: the one UTF-8 rule (RFC 3629, Unicode table 3-7), through
 * both ways in. Every scalar value in every length it could be squeezed
 * into: the shortest form alone is accepted, and never a surrogate or
 * anything above U+10FFFF; then the named hostile forms (overlong '/', CESU
 * surrogate pairs, 5- and 6-byte leads) and every truncation.
 */
#include <stdint.h>
#include <string.h>

#include "base/macro.h"
#include "base/utf8.h"
#include "test-helpers.h"

/* cp in exactly len bytes (1..4), overlong forms included; 0 when cp does
 * not fit in len bytes. */
static size_t encode(uint32_t cp, size_t len, uint8_t out[5])
{
        static const uint8_t lead[] = { 0, 0x00, 0xC0, 0xE0, 0xF0 };

        if (len == 1 ? cp > 0x7F : cp >= 1U << (5 * len + 1))
                return 0;
        for (size_t i = len - 1; i > 0; i--) {
                out[i] = (uint8_t) (0x80 | (cp & 0x3F));
                cp >>= 6;
        }
        out[0] = (uint8_t) (lead[len] | cp);
        out[len] = 0;
        return len;
}

/* What the byte-by-byte way says of buf, fed one byte at a time. */
static bool valid_bytewise(const uint8_t *buf, size_t len)
{
        struct utf8_check c = { 0 };

        for (size_t i = 0; i < len; i++)
                if (!utf8_check_byte(&c, buf[i]))
                        return false;
        return utf8_check_complete(&c);
}

static void assert_refused(const char *bytes, size_t len, const char *what)
{
        cr_assert_not(utf8_valid(bytes, len), "%s accepted", what);
        cr_assert_not(valid_bytewise((const uint8_t *) bytes, len), "%s accepted bytewise", what);
        cr_assert_eq(utf8_seq_len((const unsigned char *) bytes), 0, "%s has a length", what);
}

Test(utf8, every_scalar_value_only_in_its_shortest_form)
{
        uint8_t b[5];

        for (uint32_t cp = 0; cp <= 0x1FFFFF; cp++) {
                bool scalar = cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF);
                size_t shortest = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;

                for (size_t len = shortest; len <= 4; len++) {
                        bool want = scalar && len == shortest;
                        cr_assert_eq(encode(cp, len, b), len);
                        cr_assert_eq(utf8_valid(b, len), want, "U+%04X in %zu bytes", cp, len);
                        cr_assert_eq(valid_bytewise(b, len), want, "U+%04X in %zu bytes", cp, len);
                        /* NUL stands for U+0000 and ends the string alike. */
                        if (cp > 0 || len == 1)
                                cr_assert_eq(utf8_seq_len(b), want ? len : 0, "U+%04X in %zu bytes",
                                             cp, len);
                }
        }
}

Test(utf8, named_hostile_forms)
{
        static const struct {
                const char *bytes, *what;
        } bad[] = {
                { "\xC0\xAF", "overlong '/' (C0 AF)" },
                { "\xC1\xBF", "overlong U+007F (C1 BF)" },
                { "\xE0\x80\xAF", "overlong '/' in 3 bytes" },
                { "\xE0\x9F\xBF", "overlong U+07FF (E0 9F BF)" },
                { "\xF0\x80\x80\xAF", "overlong '/' in 4 bytes" },
                { "\xF0\x8F\xBF\xBF", "overlong U+FFFF (F0 8F BF BF)" },
                { "\xED\xA0\x80", "surrogate U+D800" },
                { "\xED\xBF\xBF", "surrogate U+DFFF" },
                { "\xED\xA0\xBD\xED\xB8\x80", "CESU-8 surrogate pair" },
                { "\xF4\x90\x80\x80", "U+110000" },
                { "\xF5\x80\x80\x80", "lead F5" },
                { "\xF7\xBF\xBF\xBF", "U+1FFFFF" },
                { "\xF8\x88\x80\x80\x80", "5-byte lead" },
                { "\xFC\x84\x80\x80\x80\x80", "6-byte lead" },
                { "\xFE", "FE" },
                { "\xFF", "FF" },
                { "\x80", "a stray continuation byte" },
                { "\xBF", "a stray continuation byte (BF)" },
                { "\xC3\x41", "ASCII where a continuation byte belongs" },
        };
        /* Table 3-7's edges: U+007F, U+0080, U+07FF, U+0800, U+D7FF, U+E000,
         * U+FFFF, U+10000, U+10FFFF. */
        static const char edges[] = "\x7F\xC2\x80\xDF\xBF\xE0\xA0\x80\xED\x9F\xBF\xEE\x80\x80"
                                    "\xEF\xBF\xBF\xF0\x90\x80\x80\xF4\x8F\xBF\xBF";

        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                assert_refused(bad[i].bytes, strlen(bad[i].bytes), bad[i].what);
        /* A stray continuation byte after a whole character: the text is
         * refused, the character at its start is still one. */
        cr_assert_not(utf8_valid("\xC3\xA9\x80", 3));
        cr_assert_eq(utf8_seq_len((const unsigned char *) "\xC3\xA9\x80"), 2);
        cr_assert(utf8_valid(edges, sizeof(edges) - 1));
        cr_assert(utf8_valid("a\0b", 3), "U+0000 is a character");
        cr_assert(utf8_valid("", 0));
}

Test(utf8, truncated_sequences)
{
        static const char *const whole[] = {
                "\xC3\xA9",         /* U+00E9 */
                "\xE2\x82\xAC",     /* U+20AC */
                "\xED\x9F\xBF",     /* U+D7FF */
                "\xF0\x9F\x98\x80", /* U+1F600 */
                "\xF4\x8F\xBF\xBF", /* U+10FFFF */
        };

        for (size_t i = 0; i < ELEMENTSOF(whole); i++) {
                size_t len = strlen(whole[i]);
                for (size_t cut = 1; cut < len; cut++) {
                        char s[8] = { 0 };
                        struct utf8_check c = { 0 };

                        memcpy(s, whole[i], cut);
                        /* At the end of the text, before its NUL, before ASCII. */
                        assert_refused(s, cut, "a truncated sequence");
                        s[cut] = 'a';
                        cr_assert_not(utf8_valid(s, cut + 1), "%zu of %zu, then 'a'", cut, len);
                        cr_assert_eq(utf8_seq_len((const unsigned char *) s), 0);
                        /* Byte by byte, the prefix is not refused: the rest
                         * may be in the next frame. It is only unfinished. */
                        for (size_t k = 0; k < cut; k++)
                                cr_assert(utf8_check_byte(&c, (uint8_t) whole[i][k]));
                        cr_assert_not(utf8_check_complete(&c));
                        for (size_t k = cut; k < len; k++)
                                cr_assert(utf8_check_byte(&c, (uint8_t) whole[i][k]));
                        cr_assert(utf8_check_complete(&c));
                }
                cr_assert_eq(utf8_seq_len((const unsigned char *) whole[i]), len);
        }
}
