/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A fixed-bucket histogram of durations or sizes, as Prometheus histograms
 * count them: each observation lands in the first bucket whose upper bound
 * is >= the value (the last, implicit bucket is +Inf), and the sum and count
 * of all observations are kept. No allocation: the bounds are a static
 * array the caller owns, at most HISTOGRAM_MAX_BOUNDS long and strictly
 * ascending.
 */
#include <stddef.h>
#include <stdint.h>

#define HISTOGRAM_MAX_BOUNDS 20

struct histogram {
        const double *bounds; /* borrowed: static, ascending */
        size_t n_bounds;
        uint64_t counts[HISTOGRAM_MAX_BOUNDS + 1]; /* per bucket (not cumulative), +Inf last */
        uint64_t count;
        double sum;
};

/* -EINVAL when bounds are too many or not strictly ascending. */
int histogram_init(struct histogram *h, const double *bounds, size_t n_bounds);
void histogram_observe(struct histogram *h, double value);
/* Observations <= bounds[i] (i == n_bounds: all of them), as the
 * exposition format's cumulative "le" buckets count them. */
uint64_t histogram_cumulative(const struct histogram *h, size_t i);
