/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "base/jstring.h"

#include "base/utf8.h"

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
