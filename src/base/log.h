/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Logging. The only mutable global state in the project is the log
 * configuration (level, format, program name). Library code does not log:
 * the caller that knows the context logs once and returns, typically as
 *
 *         return log_error_errno(r, "container %s: overlay on %s: %m", name, path);
 *
 * log_*_errno() sets errno from the (negative or positive) error so "%m" works
 * and returns -abs(error), so it can be returned directly.
 *
 * Two formats, on stderr, one write(2) per entry:
 *   text  "openenvd: <message>" (+ " (file:line)" at debug level), the message
 *         escaped (base/text-escape.h): one line, whatever a container wrote
 *   json  one object per line (docs/DAEMON.md, "Log"):
 *         {"ts", "level", "program", "pid", "msg"[, "errno"][, "code_file",
 *          "code_line"], <fields>...}
 * Structured fields are what a message is about (an episode, a container),
 * given as key/value strings next to the text that already names them:
 *
 *         log_info_fields(LOG_FIELDS({ "episode_id", id }, { "container", name }),
 *                         "episode %s: %s started", id, name);
 *
 * Text output ignores them; JSON output adds each field whose value is not
 * NULL. Keys are static identifiers and never one of the keys above. Every
 * string is escaped (base/jstring.h): any byte a container wrote into a
 * message yields valid JSON on one line.
 */
#include <stdarg.h>
#include <syslog.h>

#include "base/macro.h"

enum log_format {
        LOG_FORMAT_TEXT,
        LOG_FORMAT_JSON,
        _LOG_FORMAT_MAX,
};

struct log_field {
        const char *key;   /* static */
        const char *value; /* NULL: left out */
};

/* A NULL-terminated array of fields, as a compound literal. */
#define LOG_FIELDS(...) ((const struct log_field[]){ __VA_ARGS__, { NULL, NULL } })

void log_set_level(int level);
int log_get_level(void);
void log_set_format(enum log_format format);
enum log_format log_get_format(void);
void log_set_program(const char *name); /* borrowed: must outlive logging */
/* Parse "debug", "info", "notice", "warning", "err"... or a number; -EINVAL. */
int log_level_from_string(const char *s);
/* "text" or "json"; -EINVAL. */
int log_format_from_string(const char *s);

int log_internal(int level, int error, const char *file, int line, const struct log_field *fields,
                 const char *fmt, ...) printf_fmt(6, 7);

#define log_full_fields_errno(level, error, fields, ...) \
        log_internal(level, error, __FILE__, __LINE__, fields, __VA_ARGS__)
#define log_full_errno(level, error, ...) log_full_fields_errno(level, error, NULL, __VA_ARGS__)
#define log_full(level, ...)              (void) log_full_errno(level, 0, __VA_ARGS__)

#define log_debug(...)                    log_full(LOG_DEBUG, __VA_ARGS__)
#define log_info(...)                     log_full(LOG_INFO, __VA_ARGS__)
#define log_notice(...)                   log_full(LOG_NOTICE, __VA_ARGS__)
#define log_warning(...)                  log_full(LOG_WARNING, __VA_ARGS__)
#define log_error(...)                    log_full(LOG_ERR, __VA_ARGS__)

#define log_debug_errno(e, ...)           log_full_errno(LOG_DEBUG, e, __VA_ARGS__)
#define log_info_errno(e, ...)            log_full_errno(LOG_INFO, e, __VA_ARGS__)
#define log_warning_errno(e, ...)         log_full_errno(LOG_WARNING, e, __VA_ARGS__)
#define log_error_errno(e, ...)           log_full_errno(LOG_ERR, e, __VA_ARGS__)

#define log_debug_fields(f, ...)          (void) log_full_fields_errno(LOG_DEBUG, 0, f, __VA_ARGS__)
#define log_info_fields(f, ...)           (void) log_full_fields_errno(LOG_INFO, 0, f, __VA_ARGS__)
#define log_warning_fields(f, ...)        (void) log_full_fields_errno(LOG_WARNING, 0, f, __VA_ARGS__)
#define log_error_fields(f, ...)          (void) log_full_fields_errno(LOG_ERR, 0, f, __VA_ARGS__)
