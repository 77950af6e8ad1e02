/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * base/error-detail.h: the one shape of a failure's words (the launchers,
 * custody): the first failure wins, %m is the caller's errno, the text falls
 * back to strerror().
 */
#include <errno.h>
#include <string.h>

#include "base/error-detail.h"
#include "test-helpers.h"

Test(error_detail, set_returns_r_and_keeps_the_first)
{
        cleanup_error_detail struct error_detail e = {};

        cr_assert_eq(error_detail_set(&e, -ENOENT, "runc %s: %d", "create", 1), -ENOENT);
        cr_assert_eq(e.error, ENOENT);
        cr_assert_str_eq(e.message, "runc create: 1");
        /* A cleanup path failing afterwards does not hide the cause. */
        cr_assert_eq(error_detail_set(&e, -EIO, "delete"), -EIO);
        cr_assert_eq(e.error, ENOENT);
        cr_assert_str_eq(error_detail_text(&e), "runc create: 1");
        cr_assert_eq(error_detail_set(NULL, -EPERM, "nobody asked"), -EPERM);
}

Test(error_detail, percent_m_is_the_callers_errno)
{
        cleanup_error_detail struct error_detail e = {};

        /* Long enough that the message's buffer grows between measuring and
         * formatting. */
        errno = EACCES;
        error_detail_set(&e, -EACCES, "%0200d: %m", 0);
        cr_assert(strstr(e.message, strerror(EACCES)), "%s", e.message);
        cr_assert_eq(strlen(e.message), 200 + 2 + strlen(strerror(EACCES)));
}

Test(error_detail, text_without_a_message)
{
        struct error_detail e = { .error = EPIPE };

        cr_assert_str_eq(error_detail_text(&e), strerror(EPIPE));
        error_detail_done(&e);
        cr_assert_eq(e.error, 0);
        cr_assert_str_eq(error_detail_text(&e), "failed");
        cr_assert_str_eq(error_detail_text(NULL), "failed");
        error_detail_done(NULL);
}
