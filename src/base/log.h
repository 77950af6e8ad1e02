/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Logging. The only mutable global state in the project is the log
 * configuration (level, program name). Library code does not log: the caller
 * that knows the context logs once and returns, typically as
 *
 *         return log_error_errno(r, "container %s: overlay on %s: %m", name, path);
 *
 * log_*_errno() sets errno from the (negative or positive) error so "%m" works
 * and returns -abs(error), so it can be returned directly.
 */
#include <stdarg.h>
#include <syslog.h>

#include "base/macro.h"

void log_set_level(int level);
int log_get_level(void);
void log_set_program(const char *name); /* borrowed: must outlive logging */
/* Parse "debug", "info", "notice", "warning", "err"... or a number; -EINVAL. */
int log_level_from_string(const char *s);

int log_internal(int level, int error, const char *file, int line, const char *fmt, ...)
        printf_fmt(5, 6);

#define log_full_errno(level, error, ...) \
        log_internal(level, error, __FILE__, __LINE__, __VA_ARGS__)
#define log_full(level, ...)      (void) log_full_errno(level, 0, __VA_ARGS__)

#define log_debug(...)            log_full(LOG_DEBUG, __VA_ARGS__)
#define log_info(...)             log_full(LOG_INFO, __VA_ARGS__)
#define log_notice(...)           log_full(LOG_NOTICE, __VA_ARGS__)
#define log_warning(...)          log_full(LOG_WARNING, __VA_ARGS__)
#define log_error(...)            log_full(LOG_ERR, __VA_ARGS__)

#define log_debug_errno(e, ...)   log_full_errno(LOG_DEBUG, e, __VA_ARGS__)
#define log_info_errno(e, ...)    log_full_errno(LOG_INFO, e, __VA_ARGS__)
#define log_warning_errno(e, ...) log_full_errno(LOG_WARNING, e, __VA_ARGS__)
#define log_error_errno(e, ...)   log_full_errno(LOG_ERR, e, __VA_ARGS__)
