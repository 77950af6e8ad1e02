/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Range-checked number parsing. The whole string must be a number (no
 * trailing garbage, no leading whitespace, no sign on unsigned values);
 * out-of-range values are -ERANGE, malformed ones -EINVAL. ret_* is written
 * only on success.
 */
#include <stdint.h>

int parse_uint64(const char *s, uint64_t min, uint64_t max, uint64_t *ret);
int parse_int64(const char *s, int64_t min, int64_t max, int64_t *ret);
int parse_uint(const char *s, unsigned min, unsigned max, unsigned *ret);
int parse_int(const char *s, int min, int max, int *ret);
/* Finite decimal only: "inf", "nan" and hex floats are -EINVAL. */
int parse_double(const char *s, double min, double max, double *ret);
