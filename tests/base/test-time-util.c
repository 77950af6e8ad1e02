/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * base/time-util.h: the one RFC 3339 rendering (the JSON log's "ts" and the
 * containers' output in /logs): UTC, microseconds always six digits, "Z".
 */
#include "base/time-util.h"
#include "test-helpers.h"

static void assert_rfc3339(usec_t t, const char *want)
{
        char buf[TIMESTAMP_RFC3339_MAX];

        cr_assert_str_eq(format_timestamp_rfc3339(buf, t), want, "%llu", (unsigned long long) t);
}

Test(time_util, rfc3339_utc_with_microseconds)
{
        assert_rfc3339(0, "1970-01-01T00:00:00.000000Z");
        assert_rfc3339(1796584752ULL * USEC_PER_SEC + 123456, "2026-12-06T19:19:12.123456Z");
        /* Leading zeros kept: the string sorts as the time does. */
        assert_rfc3339(1796584752ULL * USEC_PER_SEC + 7, "2026-12-06T19:19:12.000007Z");
        assert_rfc3339(951782400ULL * USEC_PER_SEC + 999999, "2000-02-29T00:00:00.999999Z");
}

Test(time_util, rfc3339_sorts_as_time)
{
        char a[TIMESTAMP_RFC3339_MAX], b[TIMESTAMP_RFC3339_MAX];
        usec_t t = 1796584752ULL * USEC_PER_SEC;

        for (usec_t d = 1; d < 10 * USEC_PER_SEC; d = d * 3 + 1) {
                format_timestamp_rfc3339(a, t);
                format_timestamp_rfc3339(b, t + d);
                cr_assert_lt(strcmp(a, b), 0, "%s !< %s", a, b);
        }
}

Test(time_util, rfc3339_out_of_range_stays_in_its_buffer)
{
        char buf[TIMESTAMP_RFC3339_MAX];

        /* No calendar year: the microseconds alone, never an overflow. */
        format_timestamp_rfc3339(buf, USEC_INFINITY);
        cr_assert_lt(strlen(buf), sizeof(buf));
        cr_assert(strstr(buf, "Z"));
}
