/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "base/log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/parse-util.h"

/* The log configuration is the one mutable global the style allows. */
static int log_max_level = LOG_INFO;
static const char *log_program = "openenvd";

void log_set_level(int level)
{
        log_max_level = level;
}

int log_get_level(void)
{
        return log_max_level;
}

void log_set_program(const char *name)
{
        log_program = name;
}

int log_level_from_string(const char *s)
{
        static const char *const names[] = {
                [LOG_EMERG] = "emerg", [LOG_ALERT] = "alert",     [LOG_CRIT] = "crit",
                [LOG_ERR] = "err",     [LOG_WARNING] = "warning", [LOG_NOTICE] = "notice",
                [LOG_INFO] = "info",   [LOG_DEBUG] = "debug",
        };
        unsigned v;

        for (size_t i = 0; i < ELEMENTSOF(names); i++)
                if (strcasecmp(s, names[i]) == 0)
                        return (int) i;
        if (strcasecmp(s, "error") == 0)
                return LOG_ERR;
        if (parse_uint(s, 0, LOG_DEBUG, &v) >= 0)
                return (int) v;
        return -EINVAL;
}

int log_internal(int level, int error, const char *file, int line, const char *fmt, ...)
{
        int saved = errno;
        char buf[2048];
        va_list ap;

        if (error < 0)
                error = -error;
        if (level > log_max_level)
                goto out;

        /* Make %m print the error we were handed, not whatever errno is. */
        errno = error;
        va_start(ap, fmt);
        (void) vsnprintf(buf, sizeof(buf), fmt, ap);
        va_end(ap);

        if (log_max_level >= LOG_DEBUG)
                (void) fprintf(stderr, "%s: %s (%s:%d)\n", log_program, buf, file, line);
        else
                (void) fprintf(stderr, "%s: %s\n", log_program, buf);
out:
        errno = saved;
        return error > 0 ? -error : -EIO;
}
