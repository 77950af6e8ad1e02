/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Shared by the Criterion suites. Kernel tests need root and real kernel
 * features; outside CI a missing feature skips with its name, in CI (CI=true)
 * it fails, because a skipped kernel test proves nothing.
 */
#include <criterion/criterion.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static inline bool test_in_ci(void)
{
        const char *ci = getenv("CI");
        return ci && (strcmp(ci, "true") == 0 || strcmp(ci, "1") == 0);
}

#define require_feature(ok, name)                                                             \
        do {                                                                                  \
                if (!(ok)) {                                                                  \
                        if (test_in_ci())                                                     \
                                cr_assert_fail("kernel feature unavailable in CI: %s", name); \
                        cr_skip_test("kernel feature unavailable: %s", name);                 \
                }                                                                             \
        } while (0)

#define require_root() require_feature(geteuid() == 0, "root")

/* Path of a file shipped under tests/, from the build's -DTEST_SRCDIR. */
#ifndef TEST_SRCDIR
#define TEST_SRCDIR "."
#endif
