/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>
#include <time.h>

typedef uint64_t usec_t;
#define USEC_PER_SEC  ((usec_t) 1000000ULL)
#define USEC_PER_MSEC ((usec_t) 1000ULL)
#define NSEC_PER_USEC ((uint64_t) 1000ULL)
#define USEC_INFINITY ((usec_t) UINT64_MAX)

/* "2026-12-06T19:19:12.123456Z" and its NUL, with room for a year of more
 * digits. */
#define TIMESTAMP_RFC3339_MAX 48

static inline usec_t now_usec(clockid_t clock)
{
        struct timespec ts;
        clock_gettime(clock, &ts);
        return (usec_t) ts.tv_sec * USEC_PER_SEC + (usec_t) ts.tv_nsec / NSEC_PER_USEC;
}

/* t (CLOCK_REALTIME, microseconds since the epoch) as RFC 3339 in UTC with
 * microseconds: sortable as text, and no time zone to guess. The daemon's
 * JSON log and the containers' output (/logs) both say times this way.
 * Returns buf. */
char *format_timestamp_rfc3339(char buf[static TIMESTAMP_RFC3339_MAX], usec_t t);
