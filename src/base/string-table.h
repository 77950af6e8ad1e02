/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Enum <-> string, written once (systemd's string-table.h). A module keeps
 * one `static const char *const <name>_table[]` indexed by the enum and
 * derives both directions from it:
 *
 *   static const char *const phase_table[PHASE_MAX] = { [PHASE_READY] = "ready", ... };
 *   DEFINE_STRING_TABLE_LOOKUP(phase, enum phase);
 *
 * which defines
 *
 *   const char *phase_to_string(enum phase p);   NULL when out of range
 *   int phase_from_string(const char *s);        the value, or -EINVAL
 *
 * Holes in the table (NULL entries) are never matched and map to NULL.
 */
#include <stddef.h>
#include <sys/types.h>

#include "base/macro.h"

const char *string_table_lookup_to_string(const char *const *table, size_t n, size_t i);
ssize_t string_table_lookup_from_string(const char *const *table, size_t n, const char *s);

#define DEFINE_STRING_TABLE_LOOKUP_TO_STRING(name, type)                                     \
        const char *name##_to_string(type i)                                                 \
        {                                                                                    \
                return string_table_lookup_to_string(name##_table, ELEMENTSOF(name##_table), \
                                                     (size_t) i);                            \
        }

/* For names that end up in messages: out of range (or a hole) is `fallback`. */
#define DEFINE_STRING_TABLE_LOOKUP_TO_STRING_FALLBACK(name, type, fallback)  \
        const char *name##_to_string(type i)                                 \
        {                                                                    \
                const char *s_ = string_table_lookup_to_string(              \
                        name##_table, ELEMENTSOF(name##_table), (size_t) i); \
                return s_ ? s_ : (fallback);                                 \
        }

#define DEFINE_STRING_TABLE_LOOKUP_FROM_STRING(name)                                       \
        int name##_from_string(const char *s)                                              \
        {                                                                                  \
                return (int) string_table_lookup_from_string(name##_table,                 \
                                                             ELEMENTSOF(name##_table), s); \
        }

#define DEFINE_STRING_TABLE_LOOKUP(name, type)           \
        DEFINE_STRING_TABLE_LOOKUP_TO_STRING(name, type) \
        DEFINE_STRING_TABLE_LOOKUP_FROM_STRING(name)
