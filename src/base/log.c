/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "base/log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "base/json-writer.h"
#include "base/parse-util.h"
#include "base/strbuf.h"
#include "base/string-table.h"
#include "base/text-escape.h"
#include "base/time-util.h"
#include "base/util.h"

/* The log configuration is the one mutable global the style allows. */
static int log_max_level = LOG_INFO;
static enum log_format log_format = LOG_FORMAT_TEXT;
static const char *log_program = "openenvd";

static const char *const log_level_table[] = {
        [LOG_EMERG] = "emerg", [LOG_ALERT] = "alert",     [LOG_CRIT] = "crit",
        [LOG_ERR] = "err",     [LOG_WARNING] = "warning", [LOG_NOTICE] = "notice",
        [LOG_INFO] = "info",   [LOG_DEBUG] = "debug",
};

static const char *const log_format_table[_LOG_FORMAT_MAX] = {
        [LOG_FORMAT_TEXT] = "text",
        [LOG_FORMAT_JSON] = "json",
};

static DEFINE_STRING_TABLE_LOOKUP_TO_STRING_FALLBACK(log_level, int, "debug");
DEFINE_STRING_TABLE_LOOKUP_FROM_STRING(log_format);

void log_set_level(int level)
{
        log_max_level = level;
}

int log_get_level(void)
{
        return log_max_level;
}

void log_set_format(enum log_format format)
{
        log_format = format;
}

enum log_format log_get_format(void)
{
        return log_format;
}

void log_set_program(const char *name)
{
        log_program = name;
}

int log_level_from_string(const char *s)
{
        unsigned v;

        for (size_t i = 0; i < ELEMENTSOF(log_level_table); i++)
                if (strcasecmp(s, log_level_table[i]) == 0)
                        return (int) i;
        if (strcasecmp(s, "error") == 0)
                return LOG_ERR;
        if (parse_uint(s, 0, LOG_DEBUG, &v) >= 0)
                return (int) v;
        return -EINVAL;
}

/* Whole entries or nothing visible torn: one write(2), retried only for
 * what a signal or a full pipe left unwritten. */
static void write_all(int fd, const char *p, size_t n)
{
        while (n > 0) {
                ssize_t k = write(fd, p, n);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        return;
                p += k;
                n -= (size_t) k;
        }
}

static void format_json(struct strbuf *sb, int level, int error, const char *file, int line,
                        const struct log_field *fields, const char *msg)
{
        char ts[TIMESTAMP_RFC3339_MAX];
        struct jwriter w;

        jwriter_init(&w, sb);
        jwriter_object_begin(&w);
        jwriter_kv_string(&w, "ts", format_timestamp_rfc3339(ts, now_usec(CLOCK_REALTIME)));
        jwriter_kv_string(&w, "level", log_level_to_string(level));
        jwriter_kv_string(&w, "program", log_program);
        jwriter_kv_int(&w, "pid", (int64_t) getpid());
        jwriter_kv_string(&w, "msg", msg);
        if (error > 0) {
                const char *name = strerrorname_np(error);
                char unnamed[16];

                if (!name) {
                        (void) snprintf(unnamed, sizeof(unnamed), "E%d", error);
                        name = unnamed;
                }
                jwriter_kv_string(&w, "errno", name);
        }
        if (log_max_level >= LOG_DEBUG) {
                jwriter_kv_string(&w, "code_file", file);
                jwriter_kv_int(&w, "code_line", line);
        }
        for (const struct log_field *f = fields; f && f->key; f++)
                if (f->value)
                        jwriter_kv_string(&w, f->key, f->value);
        jwriter_object_end(&w);
        strbuf_addch(sb, '\n');
}

/* One line whatever the message holds: the bytes a container made (a file
 * name, its output) are escaped, so none of them can end the entry and start
 * a line that reads as the daemon's. */
static void format_text(struct strbuf *sb, const char *file, int line,
                        const struct log_field *fields, const char *msg)
{
        strbuf_addf(sb, "%s: ", log_program);
        text_escape_append(sb, msg);
        /* Which episode and container a line is about, on every line that
         * is about one (as the JSON format's fields say), unless the message
         * named them already. */
        for (const struct log_field *f = fields; f && f->key; f++)
                if ((streq(f->key, "episode_id") || streq(f->key, "container")) && f->value &&
                    !strstr(msg, f->value)) {
                        strbuf_addf(sb, " [%s ",
                                    streq(f->key, "container") ? "container" : "episode");
                        text_escape_append(sb, f->value);
                        strbuf_addch(sb, ']');
                }
        if (log_max_level >= LOG_DEBUG)
                strbuf_addf(sb, " (%s:%d)", file, line);
        strbuf_addch(sb, '\n');
}

int log_internal(int level, int error, const char *file, int line, const struct log_field *fields,
                 const char *fmt, ...)
{
        int saved = errno;
        char buf[2048];
        struct strbuf sb = STRBUF_INIT;
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

        if (log_format == LOG_FORMAT_JSON)
                format_json(&sb, level, error, file, line, fields, buf);
        else
                format_text(&sb, file, line, fields, buf);
        write_all(STDERR_FILENO, sb.buf, sb.len);
        strbuf_release(&sb);
out:
        errno = saved;
        return error > 0 ? -error : -EIO;
}
