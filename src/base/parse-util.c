/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "base/parse-util.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int parse_uint64(const char *s, uint64_t min, uint64_t max, uint64_t *ret)
{
        unsigned long long v;
        char *end;

        /* strtoull accepts leading space and a minus sign (and wraps); refuse. */
        if (!s || !isdigit((unsigned char) s[0]))
                return -EINVAL;
        errno = 0;
        v = strtoull(s, &end, 10);
        if (errno == ERANGE)
                return -ERANGE;
        if (errno != 0 || *end != '\0')
                return -EINVAL;
        if (v < min || v > max)
                return -ERANGE;
        *ret = v;
        return 0;
}

int parse_int64(const char *s, int64_t min, int64_t max, int64_t *ret)
{
        long long v;
        char *end;

        if (!s ||
            !(isdigit((unsigned char) s[0]) || (s[0] == '-' && isdigit((unsigned char) s[1]))))
                return -EINVAL;
        errno = 0;
        v = strtoll(s, &end, 10);
        if (errno == ERANGE)
                return -ERANGE;
        if (errno != 0 || *end != '\0')
                return -EINVAL;
        if (v < min || v > max)
                return -ERANGE;
        *ret = v;
        return 0;
}

int parse_uint(const char *s, unsigned min, unsigned max, unsigned *ret)
{
        uint64_t v;
        int r = parse_uint64(s, min, max, &v);
        if (r < 0)
                return r;
        *ret = (unsigned) v;
        return 0;
}

int parse_int(const char *s, int min, int max, int *ret)
{
        int64_t v;
        int r = parse_int64(s, min, max, &v);
        if (r < 0)
                return r;
        *ret = (int) v;
        return 0;
}

int parse_double(const char *s, double min, double max, double *ret)
{
        double v;
        char *end;

        if (!s || s[0] == '\0' || isspace((unsigned char) s[0]))
                return -EINVAL;
        /* Only plain decimal notation: digits, one '.', optional exponent. */
        for (const char *p = s; *p; p++)
                if (!strchr("0123456789.eE+-", *p))
                        return -EINVAL;
        errno = 0;
        v = strtod(s, &end);
        if (errno == ERANGE)
                return -ERANGE;
        if (errno != 0 || *end != '\0' || end == s || !isfinite(v))
                return -EINVAL;
        if (v < min || v > max)
                return -ERANGE;
        *ret = v;
        return 0;
}
