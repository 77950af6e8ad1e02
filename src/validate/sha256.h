/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * SHA-256 (FIPS 180-4), used to name the locally built helper image after
 * the exact probe binary it contains, so a cached image is reused only when
 * it holds the same bytes.
 */
#include <stddef.h>
#include <stdint.h>

/* Writes 64 lowercase hex digits and a NUL into hex. */
void sha256_hex(const void *data, size_t len, char hex[65]);
