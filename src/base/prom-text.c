/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "base/prom-text.h"

#include <inttypes.h>
#include <math.h>
#include <stdbool.h>

#include "base/utf8.h"

/* Copies s with the escapes of `quote` ('"' for label values, 0 for help
 * texts, where only '\\' and newlines are escaped); invalid UTF-8 becomes
 * U+FFFD. */
static void add_escaped(struct strbuf *sb, const char *s, char quote)
{
        const unsigned char *p = (const unsigned char *) s;

        while (*p) {
                size_t n;
                if (*p == '\\' || (quote && *p == (unsigned char) quote)) {
                        strbuf_addch(sb, '\\');
                        strbuf_addch(sb, (char) *p++);
                        continue;
                }
                if (*p == '\n') {
                        strbuf_adds(sb, "\\n");
                        p++;
                        continue;
                }
                n = utf8_seq_len(p);
                if (n == 0) {
                        strbuf_adds(sb, "\xef\xbf\xbd");
                        p++;
                        continue;
                }
                strbuf_add(sb, p, n);
                p += n;
        }
}

static void add_double(struct strbuf *sb, double v)
{
        if (isnan(v))
                strbuf_adds(sb, "NaN");
        else if (isinf(v))
                strbuf_adds(sb, v > 0 ? "+Inf" : "-Inf");
        else
                strbuf_addf(sb, "%.15g", v);
}

void prom_family(struct strbuf *sb, const char *name, const char *type, const char *help)
{
        strbuf_addf(sb, "# HELP %s ", name);
        add_escaped(sb, help, 0);
        strbuf_addf(sb, "\n# TYPE %s %s\n", name, type);
}

/* name<suffix>{a="x",b="y"[,le="..."]} and the space before the value. */
static void add_series(struct strbuf *sb, const char *name, const char *suffix,
                       const struct prom_label *labels, size_t n_labels, const char *le)
{
        bool any = n_labels > 0 || le;

        strbuf_adds(sb, name);
        strbuf_adds(sb, suffix);
        if (!any) {
                strbuf_addch(sb, ' ');
                return;
        }
        strbuf_addch(sb, '{');
        for (size_t i = 0; i < n_labels; i++) {
                if (i > 0)
                        strbuf_addch(sb, ',');
                strbuf_addf(sb, "%s=\"", labels[i].name);
                add_escaped(sb, labels[i].value ? labels[i].value : "", '"');
                strbuf_addch(sb, '"');
        }
        if (le)
                strbuf_addf(sb, "%sle=\"%s\"", n_labels > 0 ? "," : "", le);
        strbuf_adds(sb, "} ");
}

void prom_sample_u64(struct strbuf *sb, const char *name, const struct prom_label *labels,
                     size_t n_labels, uint64_t value)
{
        add_series(sb, name, "", labels, n_labels, NULL);
        strbuf_addf(sb, "%" PRIu64 "\n", value);
}

void prom_sample(struct strbuf *sb, const char *name, const struct prom_label *labels,
                 size_t n_labels, double value)
{
        add_series(sb, name, "", labels, n_labels, NULL);
        add_double(sb, value);
        strbuf_addch(sb, '\n');
}

void prom_histogram(struct strbuf *sb, const char *name, const struct prom_label *labels,
                    size_t n_labels, const struct histogram *h)
{
        for (size_t i = 0; i <= h->n_bounds; i++) {
                struct strbuf le = STRBUF_INIT;
                if (i < h->n_bounds)
                        add_double(&le, h->bounds[i]);
                else
                        strbuf_adds(&le, "+Inf");
                add_series(sb, name, "_bucket", labels, n_labels, le.buf);
                strbuf_addf(sb, "%" PRIu64 "\n", histogram_cumulative(h, i));
                strbuf_release(&le);
        }
        add_series(sb, name, "_sum", labels, n_labels, NULL);
        add_double(sb, h->sum);
        strbuf_addch(sb, '\n');
        add_series(sb, name, "_count", labels, n_labels, NULL);
        strbuf_addf(sb, "%" PRIu64 "\n", h->count);
}
