/* Unit tests of the cell statistics (src/model/cells): a cell's median, min and max over
 * the rounds (odd and even counts), a workload's cells with their Average row, the % improvement in both directions, and the change of
 * one cell from its values (experiment_change_values) as experiment_change() gives it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "model/cells.h"
#include "util/util.h"

#include "experiment_fixtures.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void test_cell_median_min_max(void **state)
{
    (void)state;
    struct experiment_result res;
    synthetic_runs(&res, 3);

    /* base, 4 threads, tps: 400+0, 400+10, 400-10 -> sorted 390, 400, 410:
     * median 400 (the middle one), min 390, max 410. */
    struct cell_stats c = experiment_cell(&res, 0, 0, 4, METRIC_TPS);
    assert_int_equal(c.n, 3);
    assert_float_equal(c.median, 400.0, 1e-9);
    assert_float_equal(c.min, 390.0, 1e-9);
    assert_float_equal(c.max, 410.0, 1e-9);

    /* pgo, 4 threads, tps: 480-5, 480+5, 480+0 -> 475, 480, 485: median 480. */
    c = experiment_cell(&res, 1, 0, 4, METRIC_TPS);
    assert_float_equal(c.median, 480.0, 1e-9);
    assert_float_equal(c.min, 475.0, 1e-9);
    assert_float_equal(c.max, 485.0, 1e-9);

    /* % improvement in TPS = (480 - 400) / 400 * 100 = 20. */
    assert_float_equal(experiment_improvement(METRIC_TPS, 400.0, 480.0), 20.0, 1e-9);

    /* base avg latency: 2.0, 2.2, 2.4 -> median 2.2; pgo: 1.6, 1.5, 1.7 -> median 1.6.
     * Lower is better: (2.2 - 1.6) / 2.2 * 100 = 27.2727...% */
    struct cell_stats b = experiment_cell(&res, 0, 0, 1, METRIC_LAT_AVG_MS);
    struct cell_stats p = experiment_cell(&res, 1, 0, 1, METRIC_LAT_AVG_MS);
    assert_float_equal(b.median, 2.2, 1e-9);
    assert_float_equal(p.median, 1.6, 1e-9);
    assert_float_equal(p.min, 1.5, 1e-9);
    assert_float_equal(p.max, 1.7, 1e-9);
    assert_float_equal(experiment_improvement(METRIC_LAT_AVG_MS, b.median, p.median),
                       0.6 / 2.2 * 100.0, 1e-9);
    /* p95 is 2 x avg: 4.4 vs 3.2 -> (4.4 - 3.2) / 4.4 * 100 = 27.27...% as well. */
    b = experiment_cell(&res, 0, 0, 1, METRIC_LAT_P95_MS);
    p = experiment_cell(&res, 1, 0, 1, METRIC_LAT_P95_MS);
    assert_float_equal(experiment_improvement(METRIC_LAT_P95_MS, b.median, p.median),
                       1.2 / 4.4 * 100.0, 1e-9);

    /* A slower variant is a negative improvement: tps 90 vs 100 -> -10%;
     * latency 2.5 vs 2.0 -> (2.0 - 2.5) / 2.0 * 100 = -25%. */
    assert_float_equal(experiment_improvement(METRIC_TPS, 100, 90), -10.0, 1e-9);
    assert_float_equal(experiment_improvement(METRIC_LAT_AVG_MS, 2.0, 2.5), -25.0, 1e-9);
    /* No baseline, no percentage. */
    assert_true(isnan(experiment_improvement(METRIC_TPS, 0, 5)));
    assert_true(isnan(experiment_improvement(METRIC_TPS, NAN, 5)));

    /* Unknown thread count: no data. */
    c = experiment_cell(&res, 0, 0, 8, METRIC_TPS);
    assert_int_equal(c.n, 0);
    experiment_result_release(&res);

    /* Even count: 4 rounds of 1, 10, 2, 3 -> sorted 1, 2, 3, 10: median (2 + 3) / 2 = 2.5. */
    static const double v[] = { 1, 10, 2, 3 };
    memset(&res, 0, sizeof(res));
    for (int k = 0; k < 4; k++)
        add_run(&res, 0, 1, k + 1, v[k], 1, 1);
    c = experiment_cell(&res, 0, 0, 1, METRIC_TPS);
    assert_int_equal(c.n, 4);
    assert_float_equal(c.median, 2.5, 1e-9);
    assert_float_equal(c.min, 1, 1e-9);
    assert_float_equal(c.max, 10, 1e-9);
    experiment_result_release(&res);
}

static void test_change_values(void **state)
{
    (void)state;
    struct experiment_result res;
    synthetic_runs(&res, 3);
    int w = 0, t = 4, n1, n2;
    struct experiment_change c, d;

    /* one cell of one experiment: the same struct, field by field */
    assert_int_equal(experiment_change(&res, METRIC_TPS, 1, &w, &t, 1, 42, &c), 0);
    double *a = experiment_cell_values(&res, 0, 0, 4, METRIC_TPS, &n1);
    double *b = experiment_cell_values(&res, 1, 0, 4, METRIC_TPS, &n2);
    assert_int_equal(experiment_change_values(a, n1, b, n2, METRIC_TPS, 42, &d), 0);
    assert_int_equal(c.ncells, 1);
    assert_int_equal(d.ncells, c.ncells);
    assert_int_equal(d.n1, c.n1);
    assert_int_equal(d.n2, c.n2);
    assert_int_equal(d.stats, c.stats);
    assert_int_equal(d.pooled, c.pooled);
    assert_int_equal(d.lower_is_better, c.lower_is_better);
    assert_int_equal(d.significant, c.significant);
    assert_true(d.ratio == c.ratio && d.ci_lo == c.ci_lo && d.ci_hi == c.ci_hi);
    assert_true(d.level == c.level && d.p_value == c.p_value);

    /* no values on one side: nothing to compare, p 1 */
    assert_int_equal(experiment_change_values(a, n1, b, 0, METRIC_LAT_AVG_MS, 42, &d), 0);
    assert_int_equal(d.ncells, 0);
    assert_int_equal(d.n1, 0);
    assert_true(d.lower_is_better);
    assert_float_equal(d.p_value, 1, 0);
    assert_float_equal(d.level, 0.95, 1e-12);

    /* one round each: the point estimate, no statistics */
    assert_int_equal(experiment_change_values(a, 1, b, 1, METRIC_TPS, 42, &d), 0);
    assert_int_equal(d.ncells, 1);
    assert_false(d.stats);
    assert_false(d.significant);
    assert_true(d.ci_lo == d.ratio && d.ci_hi == d.ratio);
    free(a);
    free(b);
    experiment_result_release(&res);
}

/* A workload's table cells: per thread count and variant the median, the Average row the
 * mean of the medians over the rows where every variant has data, and the smallest value. */
static void test_workload_cells(void **state)
{
    (void)state;
    struct synth x;
    struct cell_stats cs[3 * 2];
    double avg[2];
    synth_make(&x, 3, 0);
    /* base tps medians 100, 400, 1600; pgo 120, 480, 1920; the smallest run 90 */
    assert_float_equal(experiment_workload_cells(&x.cfg, &x.res, 0, METRIC_TPS, cs, avg), 90.0,
                       1e-9);
    assert_float_equal(cs[1 * 2 + 0].median, 400.0, 1e-9);
    assert_float_equal(cs[2 * 2 + 1].median, 1920.0, 1e-9);
    assert_float_equal(avg[0], 700.0, 1e-9);
    assert_float_equal(avg[1], 840.0, 1e-9);
    /* without pgo's 16-thread runs that row leaves the Average of both */
    int keep = 0;
    for (int i = 0; i < x.res.nruns; i++)
        if (!(x.res.runs[i].variant == 1 && x.res.runs[i].threads == 16))
            x.res.runs[keep++] = x.res.runs[i];
        else
            free(x.res.runs[i].json);
    x.res.nruns = keep;
    experiment_workload_cells(&x.cfg, &x.res, 0, METRIC_TPS, cs, avg);
    assert_int_equal(cs[2 * 2 + 1].n, 0);
    assert_float_equal(avg[0], 250.0, 1e-9);
    assert_float_equal(avg[1], 300.0, 1e-9);
    /* no runs at all */
    x.res.nruns = 0;
    assert_true(isinf(experiment_workload_cells(&x.cfg, &x.res, 0, METRIC_TPS, cs, avg)));
    assert_true(isnan(avg[0]));
    x.res.nruns = keep;
    experiment_result_release(&x.res);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cell_median_min_max),
        cmocka_unit_test(test_workload_cells),
        cmocka_unit_test(test_change_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
