/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "base/histogram.h"

#include <errno.h>

int histogram_init(struct histogram *h, const double *bounds, size_t n_bounds)
{
        if (n_bounds > HISTOGRAM_MAX_BOUNDS)
                return -EINVAL;
        for (size_t i = 1; i < n_bounds; i++)
                if (!(bounds[i] > bounds[i - 1]))
                        return -EINVAL;
        *h = (struct histogram){ .bounds = bounds, .n_bounds = n_bounds };
        return 0;
}

void histogram_observe(struct histogram *h, double value)
{
        size_t i = 0;

        /* A handful of bounds: a linear scan beats a search here. */
        while (i < h->n_bounds && value > h->bounds[i])
                i++;
        h->counts[i]++;
        h->count++;
        h->sum += value;
}

uint64_t histogram_cumulative(const struct histogram *h, size_t i)
{
        uint64_t n = 0;

        for (size_t k = 0; k <= i && k <= h->n_bounds; k++)
                n += h->counts[k];
        return n;
}
