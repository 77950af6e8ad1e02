/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "base/error-detail.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"

int error_detail_set(struct error_detail *e, int r, const char *fmt, ...)
{
        cleanup_strbuf struct strbuf sb = STRBUF_INIT;
        va_list ap;

        if (!e || e->message)
                return r;
        /* Formatted first: %m reads errno, which nothing here may touch before. */
        va_start(ap, fmt);
        strbuf_vaddf(&sb, fmt, ap);
        va_end(ap);
        e->error = r < 0 ? -r : r;
        e->message = strbuf_detach(&sb, NULL);
        return r;
}

const char *error_detail_text(const struct error_detail *e)
{
        if (e && e->message)
                return e->message;
        if (e && e->error > 0)
                return strerror(e->error);
        return "failed";
}

void error_detail_done(struct error_detail *e)
{
        if (!e)
                return;
        free(e->message);
        *e = (struct error_detail){ 0 };
}
