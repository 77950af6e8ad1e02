/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The caller-owned error list the manifest parser fills. Every entry has a
 * 1-based line and column (0 when the error has no position, e.g. "file too
 * large"), a key path relative to the `openenvd:` block
 * ("zones.observers.containers.grader.reads[1]"; top-level keys are spelled as
 * themselves: "app", "port", "openenvd") and a message. The list owns all its
 * strings; it is bounded by MANIFEST_MAX_ERRORS (further errors only set
 * `truncated`).
 *
 * Rendered one per line as "FILE:LINE:COLUMN: PATH: MESSAGE", sorted by
 * position (stable: equal positions keep the order they were found in).
 */
#include <stdbool.h>
#include <stddef.h>

#include "base/macro.h"
#include "base/strbuf.h"

struct manifest_error {
        unsigned line;   /* 1-based; 0 = no position */
        unsigned column; /* 1-based */
        char *path;      /* owned, may be "" */
        char *message;   /* owned */
};

struct manifest_errors {
        char *file;                   /* owned: the name shown in messages */
        struct manifest_error *items; /* owned, n entries */
        size_t n;
        size_t alloc;
        bool truncated; /* more than MANIFEST_MAX_ERRORS were found */
};

/* display_name is copied; NULL means "openenv.yaml". */
void manifest_errors_init(struct manifest_errors *e, const char *display_name);
void manifest_errors_done(struct manifest_errors *e);
void manifest_errors_add(struct manifest_errors *e, unsigned line, unsigned column,
                         const char *path, const char *fmt, ...) printf_fmt(5, 6);
void manifest_errors_sort(struct manifest_errors *e);
/* Appends every error, one per line (each ending in '\n'), to out. */
void manifest_errors_format(const struct manifest_errors *e, struct strbuf *out);

static inline void manifest_errors_donep(struct manifest_errors *e)
{
        manifest_errors_done(e);
}
#define cleanup_manifest_errors cleanup(manifest_errors_donep)
