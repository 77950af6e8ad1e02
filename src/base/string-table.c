/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "base/string-table.h"

#include <errno.h>
#include <string.h>

const char *string_table_lookup_to_string(const char *const *table, size_t n, size_t i)
{
        return i < n ? table[i] : NULL;
}

ssize_t string_table_lookup_from_string(const char *const *table, size_t n, const char *s)
{
        if (!s)
                return -EINVAL;
        for (size_t i = 0; i < n; i++)
                if (table[i] && strcmp(table[i], s) == 0)
                        return (ssize_t) i;
        return -EINVAL;
}
