/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "base/utf8.h"

bool utf8_check_byte(struct utf8_check *c, uint8_t b)
{
        if (c->need == 0) {
                if (b < 0x80)
                        return true;
                /* The lead byte sets how many continuation bytes follow and,
                 * where table 3-7 narrows it, the range of the first one:
                 * E0 and F0 refuse the overlong forms that C0/C1 refuse
                 * outright, ED the surrogates, F4 what lies above U+10FFFF
                 * (F5..FF never lead). */
                c->lo = 0x80;
                c->hi = 0xBF;
                if (b >= 0xC2 && b <= 0xDF)
                        c->need = 1;
                else if (b == 0xE0) {
                        c->need = 2;
                        c->lo = 0xA0;
                } else if ((b >= 0xE1 && b <= 0xEC) || b == 0xEE || b == 0xEF)
                        c->need = 2;
                else if (b == 0xED) {
                        c->need = 2;
                        c->hi = 0x9F;
                } else if (b == 0xF0) {
                        c->need = 3;
                        c->lo = 0x90;
                } else if (b >= 0xF1 && b <= 0xF3)
                        c->need = 3;
                else if (b == 0xF4) {
                        c->need = 3;
                        c->hi = 0x8F;
                } else
                        return false;
                return true;
        }
        if (b < c->lo || b > c->hi)
                return false;
        c->need--;
        c->lo = 0x80;
        c->hi = 0xBF;
        return true;
}

bool utf8_valid(const void *buf, size_t len)
{
        const uint8_t *p = buf;
        struct utf8_check c = { 0 };

        for (size_t i = 0; i < len; i++)
                if (!utf8_check_byte(&c, p[i]))
                        return false;
        return utf8_check_complete(&c);
}

size_t utf8_seq_len(const unsigned char *s)
{
        struct utf8_check c = { 0 };
        size_t n = 0;

        /* Stops at the first byte that breaks the sequence: NUL is never a
         * continuation byte, so a string's terminator is never read past. */
        do {
                if (!utf8_check_byte(&c, s[n]))
                        return 0;
                n++;
        } while (!utf8_check_complete(&c));
        return n;
}
