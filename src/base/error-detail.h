/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Why something failed, in words for whoever tells a person: an errno and,
 * when the code that failed knows more than strerror() says, a message of
 * its own ("runc create <id> failed (exit 1): <log tail>", "mount-source
 * (index 1): No such file or directory", "<rel>: FIFO not allowed"). The
 * callee fills it, the caller owns it (error_detail_done()). A domain that
 * knows more than the words (a launcher's setup step, a custody refusal's
 * reason and the uid to blame) embeds one in its own struct.
 *
 * A function that fills one still returns -errno: the return value is for
 * the decision, the detail for the words. The first failure is the one that
 * counts: error_detail_set() keeps a message already there, so a cleanup
 * path failing after it cannot hide the cause.
 */
#include "base/macro.h"

struct error_detail {
        int error;     /* positive errno of the failure; 0: none yet */
        char *message; /* owned; NULL: strerror(error) says it all */
};

/* Unless e is NULL or holds a message already: e->error = -r and the
 * message from fmt (%m is the caller's errno). Returns r, so a failure
 * reads `return error_detail_set(e, -ENOENT, "...", ...);`. */
int error_detail_set(struct error_detail *e, int r, const char *fmt, ...) printf_fmt(3, 4);
/* The words: the message, else strerror(error), else "failed". Borrowed from e
 * (or static). */
const char *error_detail_text(const struct error_detail *e);
/* Frees the message and empties e; accepts NULL. */
void error_detail_done(struct error_detail *e);
#define cleanup_error_detail cleanup(error_detail_done)
