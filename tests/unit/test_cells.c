/* Unit tests of the cell statistics (src/model/cells): a cell's median, min and max over
 * the rounds (odd and even counts), and the % improvement in both directions. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "model/cells.h"
#include "util/util.h"

#include "experiment_fixtures.h"

#include <math.h>
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cell_median_min_max),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
