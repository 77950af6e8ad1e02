/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "base/time-util.h"

#include <stdio.h>

char *format_timestamp_rfc3339(char buf[static TIMESTAMP_RFC3339_MAX], usec_t t)
{
        time_t sec = (time_t) (t / USEC_PER_SEC);
        struct tm tm;
        char day[40];

        /* A time gmtime() cannot break down (a year past INT_MAX) leaves the
         * date out rather than writing past buf. */
        if (!gmtime_r(&sec, &tm) || strftime(day, sizeof(day), "%Y-%m-%dT%H:%M:%S", &tm) == 0)
                day[0] = '\0';
        (void) snprintf(buf, TIMESTAMP_RFC3339_MAX, "%s.%06lluZ", day,
                        (unsigned long long) (t % USEC_PER_SEC));
        return buf;
}
