/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "base/jstring.h"

size_t utf8_seq_len(const unsigned char *s)
{
        if (s[0] < 0x80)
                return 1;
        if (s[0] >= 0xc2 && s[0] <= 0xdf)
                return (s[1] & 0xc0) == 0x80 ? 2 : 0;
        if (s[0] >= 0xe0 && s[0] <= 0xef) {
                if ((s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80)
                        return 0;
                if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] >= 0xa0))
                        return 0;
                return 3;
        }
        if (s[0] >= 0xf0 && s[0] <= 0xf4) {
                if ((s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80 || (s[3] & 0xc0) != 0x80)
                        return 0;
                if ((s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] >= 0x90))
                        return 0;
                return 4;
        }
        return 0;
}

void jstring_append(struct strbuf *sb, const char *s)
{
        const unsigned char *p = (const unsigned char *) s;

        strbuf_addch(sb, '"');
        while (*p) {
                size_t n;
                if (*p == '"' || *p == '\\') {
                        strbuf_addch(sb, '\\');
                        strbuf_addch(sb, (char) *p++);
                        continue;
                }
                if (*p < 0x20) {
                        strbuf_addf(sb, "\\u%04x", *p++);
                        continue;
                }
                /* The NUL terminator stops utf8_seq_len's continuation checks
                 * (0x00 is not a continuation byte), so no overread. */
                n = utf8_seq_len(p);
                if (n == 0) {
                        strbuf_adds(sb, "\xef\xbf\xbd");
                        p++;
                        continue;
                }
                strbuf_add(sb, p, n);
                p += n;
        }
        strbuf_addch(sb, '"');
}
