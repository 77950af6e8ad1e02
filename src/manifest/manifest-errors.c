/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "manifest/manifest-errors.h"

#include <stdarg.h>
#include <stdlib.h>

#include "base/limits.h"
#include "base/util.h"

void manifest_errors_init(struct manifest_errors *e, const char *display_name)
{
        *e = (struct manifest_errors){ .file = xstrdup(display_name ? display_name
                                                                    : "openenv.yaml") };
}

void manifest_errors_done(struct manifest_errors *e)
{
        for (size_t i = 0; i < e->n; i++) {
                free(e->items[i].path);
                free(e->items[i].message);
        }
        free(e->items);
        free(e->file);
        *e = (struct manifest_errors){ 0 };
}

void manifest_errors_add(struct manifest_errors *e, unsigned line, unsigned column,
                         const char *path, const char *fmt, ...)
{
        struct strbuf sb = STRBUF_INIT;
        va_list ap;

        /* A hostile manifest can produce an error per node; stop collecting
         * early so the output (and the memory) stays bounded. */
        if (e->n >= MANIFEST_MAX_ERRORS) {
                e->truncated = true;
                return;
        }
        if (e->n == e->alloc) {
                e->alloc = e->alloc ? e->alloc * 2 : 16;
                e->items = xrealloc(e->items, e->alloc * sizeof(*e->items));
        }
        va_start(ap, fmt);
        strbuf_vaddf(&sb, fmt, ap);
        va_end(ap);
        e->items[e->n++] = (struct manifest_error){
                .line = line,
                .column = column,
                .path = xstrdup(path ? path : ""),
                .message = strbuf_detach(&sb, NULL),
        };
}

/* Insertion sort: stable, and n is at most MANIFEST_MAX_ERRORS. */
void manifest_errors_sort(struct manifest_errors *e)
{
        for (size_t i = 1; i < e->n; i++) {
                struct manifest_error x = e->items[i];
                size_t j = i;
                while (j > 0 &&
                       (e->items[j - 1].line > x.line ||
                        (e->items[j - 1].line == x.line && e->items[j - 1].column > x.column))) {
                        e->items[j] = e->items[j - 1];
                        j--;
                }
                e->items[j] = x;
        }
}

void manifest_errors_format(const struct manifest_errors *e, struct strbuf *out)
{
        for (size_t i = 0; i < e->n; i++) {
                const struct manifest_error *x = &e->items[i];
                strbuf_adds(out, e->file);
                if (x->line > 0)
                        strbuf_addf(out, ":%u:%u", x->line, x->column);
                strbuf_adds(out, ": ");
                if (x->path[0])
                        strbuf_addf(out, "%s: ", x->path);
                strbuf_addf(out, "%s\n", x->message);
        }
        if (e->truncated)
                strbuf_addf(out, "%s: too many errors, stopped after %d\n", e->file,
                            MANIFEST_MAX_ERRORS);
}
