/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The Prometheus text writer and the histogram it renders. The live
 * /metrics of a daemon is parsed strictly by tests/integration. */
#include <errno.h>
#include <math.h>

#include "base/histogram.h"
#include "base/prom-text.h"
#include "base/strbuf.h"
#include "test-helpers.h"

Test(histogram, buckets_are_upper_bounds_inclusive)
{
        static const double bounds[] = { 0.1, 1, 10 };
        struct histogram h;

        cr_assert_eq(histogram_init(&h, bounds, ELEMENTSOF(bounds)), 0);
        histogram_observe(&h, 0.1); /* on the bound: that bucket */
        histogram_observe(&h, 0.5);
        histogram_observe(&h, 10);
        histogram_observe(&h, 11);
        histogram_observe(&h, 0);
        cr_assert_eq(histogram_cumulative(&h, 0), 2);
        cr_assert_eq(histogram_cumulative(&h, 1), 3);
        cr_assert_eq(histogram_cumulative(&h, 2), 4);
        cr_assert_eq(histogram_cumulative(&h, 3), 5);
        cr_assert_eq(h.count, 5);
        cr_assert_float_eq(h.sum, 21.6, 1e-9);
}

Test(histogram, bounds_must_ascend)
{
        static const double flat[] = { 1, 1 };
        static const double down[] = { 2, 1 };
        static const double many[HISTOGRAM_MAX_BOUNDS + 1] = { 0 };
        struct histogram h;

        cr_assert_eq(histogram_init(&h, flat, 2), -EINVAL);
        cr_assert_eq(histogram_init(&h, down, 2), -EINVAL);
        cr_assert_eq(histogram_init(&h, many, ELEMENTSOF(many)), -EINVAL);
}

Test(prom_text, families_samples_and_escapes)
{
        struct strbuf sb = STRBUF_INIT;
        const struct prom_label l[] = { { "zone", "agent" }, { "container", "a\\b\"c\nd\xff" } };

        prom_family(&sb, "x_total", "counter", "Help with \\ and\nnewline.");
        prom_sample_u64(&sb, "x_total", l, ELEMENTSOF(l), UINT64_MAX);
        prom_sample_u64(&sb, "x_total", NULL, 0, 0);
        prom_family(&sb, "y", "gauge", "G.");
        prom_sample(&sb, "y", NULL, 0, 0.25);
        prom_sample(&sb, "y", l, 1, INFINITY);
        prom_sample(&sb, "y", l, 1, -INFINITY);
        prom_sample(&sb, "y", l, 1, NAN);
        prom_sample(&sb, "y", l, 1, 1796095642.930581);
        cr_assert_str_eq(sb.buf,
                         "# HELP x_total Help with \\\\ and\\nnewline.\n"
                         "# TYPE x_total counter\n"
                         "x_total{zone=\"agent\",container=\"a\\\\b\\\"c\\nd\xef\xbf\xbd\"} "
                         "18446744073709551615\n"
                         "x_total 0\n"
                         "# HELP y G.\n"
                         "# TYPE y gauge\n"
                         "y 0.25\n"
                         "y{zone=\"agent\"} +Inf\n"
                         "y{zone=\"agent\"} -Inf\n"
                         "y{zone=\"agent\"} NaN\n"
                         "y{zone=\"agent\"} 1796095642.93058\n");
        strbuf_release(&sb);
}

Test(prom_text, histogram_cumulative_buckets_sum_count)
{
        static const double bounds[] = { 0.005, 1, 2.5 };
        struct strbuf sb = STRBUF_INIT;
        const struct prom_label l[] = { { "phase", "ready" } };
        struct histogram h;

        cr_assert_eq(histogram_init(&h, bounds, ELEMENTSOF(bounds)), 0);
        histogram_observe(&h, 0.001);
        histogram_observe(&h, 2);
        histogram_observe(&h, 100);
        prom_histogram(&sb, "d_seconds", l, 1, &h);
        prom_histogram(&sb, "e_seconds", NULL, 0, &h);
        cr_assert_str_eq(sb.buf, "d_seconds_bucket{phase=\"ready\",le=\"0.005\"} 1\n"
                                 "d_seconds_bucket{phase=\"ready\",le=\"1\"} 1\n"
                                 "d_seconds_bucket{phase=\"ready\",le=\"2.5\"} 2\n"
                                 "d_seconds_bucket{phase=\"ready\",le=\"+Inf\"} 3\n"
                                 "d_seconds_sum{phase=\"ready\"} 102.001\n"
                                 "d_seconds_count{phase=\"ready\"} 3\n"
                                 "e_seconds_bucket{le=\"0.005\"} 1\n"
                                 "e_seconds_bucket{le=\"1\"} 1\n"
                                 "e_seconds_bucket{le=\"2.5\"} 2\n"
                                 "e_seconds_bucket{le=\"+Inf\"} 3\n"
                                 "e_seconds_sum 102.001\n"
                                 "e_seconds_count 3\n");
        strbuf_release(&sb);
}
