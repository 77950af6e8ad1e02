/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Prometheus' text exposition format (version 0.0.4), written into a
 * strbuf: a family is its "# HELP" and "# TYPE" lines followed by its
 * samples, `name{label="value",...} value`, one per line.
 *
 * Metric and label names come from the program (static, valid by
 * construction: [a-zA-Z_:][a-zA-Z0-9_:]*); label values and help texts may
 * hold any byte and are escaped as the format requires ('\\', '"' in label
 * values, newlines), and made valid UTF-8 (base/utf8.h's rule: a byte
 * outside a well-formed sequence becomes U+FFFD). Counters are written as
 * exact integers, other values with 15 significant digits, infinities as
 * "+Inf"/"-Inf", NaN as "NaN".
 */
#include <stddef.h>
#include <stdint.h>

#include "base/histogram.h"
#include "base/strbuf.h"

/* The Content-Type of a scrape's answer. */
#define PROM_TEXT_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

struct prom_label {
        const char *name;  /* static */
        const char *value; /* any bytes, NUL-terminated */
};

/* type: "counter", "gauge", "histogram" or "untyped". */
void prom_family(struct strbuf *sb, const char *name, const char *type, const char *help);
void prom_sample_u64(struct strbuf *sb, const char *name, const struct prom_label *labels,
                     size_t n_labels, uint64_t value);
void prom_sample(struct strbuf *sb, const char *name, const struct prom_label *labels,
                 size_t n_labels, double value);
/* name_bucket{...,le="..."} (cumulative, +Inf last), name_sum, name_count. */
void prom_histogram(struct strbuf *sb, const char *name, const struct prom_label *labels,
                    size_t n_labels, const struct histogram *h);
