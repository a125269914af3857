/* Unit tests of the JSON results file (src/experiment/results_json): settings (a 64-bit seed
 * as text), fingerprints, environment, every run with its embedded report, run order, summary
 * cells (their improvement_pct the reports' estimate, the paired one under --target-ci), an
 * incomplete experiment, and no temporary file left behind. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "model/model.h"
#include "model/precision.h"
#include "experiment/results_json.h"
#include "util/util.h"

#include "experiment_fixtures.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void test_json_roundtrip(void **state)
{
    (void)state;
    struct experiment_config cfg;
    struct variant v[2];
    struct experiment_result res;
    char *args[] = { "--rand-seed=5", NULL };
    char dir[] = "/tmp/pgolab-test-XXXXXX";
    assert_non_null(mkdtemp(dir));
    synthetic_config(&cfg, v, 3);
    cfg.bench_args = args;
    cfg.seed = 18446744073709551615ull; /* 2^64 - 1: must survive as text */
    v[1].sha256 = xstrdup("00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff");
    v[1].version = xstrdup("3.46.0");
    v[1].compiler = "gcc 12.2.0";
    v[1].cflags = "-O2 -fprofile-use";
    synthetic_runs(&res, 3);
    char *path = xasprintf("%s/out.json", dir);
    assert_int_equal(experiment_write_json(path, &cfg, &res), 0);

    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    assert_non_null(root);
    assert_true(json_is_true(json_object_get(root, "complete")));
    assert_true(json_is_null(json_object_get(root, "error")));
    json_t *set = json_object_get(root, "settings");
    assert_int_equal(json_integer_value(json_object_get(set, "rounds")), 3);
    assert_string_equal(json_string_value(json_object_get(set, "seed")), "18446744073709551615");
    assert_int_equal(json_array_size(json_object_get(set, "threads")), 3);
    assert_string_equal(json_string_value(json_array_get(json_object_get(set, "bench_args"), 0)),
                        "--rand-seed=5");

    json_t *vars = json_object_get(root, "variants");
    assert_int_equal(json_array_size(vars), 2);
    json_t *v1 = json_array_get(vars, 1);
    assert_string_equal(json_string_value(json_object_get(v1, "name")), "pgo");
    assert_string_equal(json_string_value(json_object_get(v1, "sha256")), v[1].sha256);
    assert_string_equal(json_string_value(json_object_get(v1, "cflags")), "-O2 -fprofile-use");
    assert_true(json_is_true(json_object_get(json_array_get(vars, 0), "baseline")));
    assert_true(json_is_null(json_object_get(json_array_get(vars, 0), "sha256")));

    json_t *env = json_object_get(root, "environment");
    assert_string_equal(json_string_value(json_object_get(env, "kernel")), "6.1.0-test");

    json_t *runs = json_object_get(root, "runs");
    assert_int_equal(json_array_size(runs), 18);
    for (size_t i = 0; i < json_array_size(runs); i++) {
        json_t *r = json_array_get(runs, i);
        const struct run_result *rr = &res.runs[i];
        assert_int_equal(json_integer_value(json_object_get(r, "seq")), (json_int_t)i + 1);
        assert_int_equal(json_integer_value(json_object_get(r, "threads")), rr->threads);
        assert_int_equal(json_integer_value(json_object_get(r, "round")), rr->round);
        assert_float_equal(json_real_value(json_object_get(r, "tps")), rr->tps, 1e-9);
        assert_float_equal(json_real_value(json_object_get(json_object_get(r, "latency_ms"), "p95")),
                           rr->lat_p95_ms, 1e-9);
        /* The child's report is embedded as an object, not as a string. */
        json_t *rep = json_object_get(r, "report");
        assert_true(json_is_object(rep));
        assert_float_equal(json_number_value(json_object_get(rep, "tps")), rr->tps, 1e-9);
    }
    /* Run order: 9 blocks (3 rounds x 3 thread counts) of 2 variants each. */
    json_t *order = json_object_get(root, "run_order");
    assert_int_equal(json_array_size(order), 9);
    assert_int_equal(json_array_size(json_object_get(json_array_get(order, 0), "order")), 2);
    /* Summary: 3 thread counts x 3 metrics; tps at 4 threads: base median 400, pgo +20%. */
    json_t *summary = json_object_get(root, "summary");
    assert_int_equal(json_array_size(summary), 9);
    json_t *s = json_array_get(summary, 3); /* threads index 1 (4), metric tps */
    assert_int_equal(json_integer_value(json_object_get(s, "threads")), 4);
    assert_string_equal(json_string_value(json_object_get(s, "metric")), "tps");
    json_t *cells = json_object_get(s, "cells");
    assert_float_equal(json_real_value(json_object_get(json_array_get(cells, 0), "median")), 400, 1e-9);
    assert_float_equal(json_real_value(json_object_get(json_array_get(cells, 1), "improvement_pct")),
                       20, 1e-9);
    json_decref(root);

    /* An incomplete experiment is written too, marked as such. */
    res.nruns = 5;
    res.error = xstrdup("run failed: variant pgo");
    assert_int_equal(experiment_write_json(path, &cfg, &res), 0);
    root = json_load_file(path, 0, &je);
    assert_non_null(root);
    assert_true(json_is_false(json_object_get(root, "complete")));
    assert_string_equal(json_string_value(json_object_get(root, "error")), "run failed: variant pgo");
    assert_int_equal(json_array_size(json_object_get(root, "runs")), 5);
    json_decref(root);
    res.nruns = 18;

    /* No temporary file is left behind. */
    char *tmp = xasprintf("%s.tmp", path);
    assert_int_equal(access(tmp, F_OK), -1);
    free(tmp);
    unlink(path);
    rmdir(dir);
    free(path);
    experiment_variant_release(&v[1]);
    experiment_result_release(&res);
}

/* Under --target-ci the tables' change is the geometric mean of the per-round ratios, not
 * the ratio of the medians: the summary's improvement_pct is that same estimate, with its CI
 * and significance (it was the ratio of the medians, +21.43% here, beside a table and a
 * verdict that said otherwise). */
static void test_summary_same_estimate(void **state)
{
    (void)state;
    static const double base[] = { 1000, 1400, 900, 1200, 1100, 950, 1300, 1000 };
    static const double var[] = { 1250, 1500, 1150, 1300, 1180, 1200, 1350, 1300 };
    static int one[] = { 1 };
    struct experiment_config cfg;
    struct variant v[2];
    struct experiment_result res;
    char dir[] = "/tmp/pgolab-test-XXXXXX";
    assert_non_null(mkdtemp(dir));
    synthetic_config(&cfg, v, 20);
    cfg.threads = one;
    cfg.nthreads = 1;
    cfg.target_ci = 5;
    memset(&res, 0, sizeof(res));
    for (int k = 0; k < 8; k++) {
        add_run(&res, 0, 1, k + 1, base[k], 1000 / base[k], 2000 / base[k]);
        add_run(&res, 1, 1, k + 1, var[k], 1000 / var[k], 2000 / var[k]);
    }
    struct experiment_change ch;
    int w = 0, t = 1;
    assert_int_equal(experiment_change_cfg(&cfg, &res, METRIC_TPS, 1, &w, &t, 1,
                                           experiment_cell_seed(&cfg, 0, 1, 0, METRIC_TPS), &ch),
                     0);
    assert_true(ch.sequential && ch.stats);
    double lo, hi, pct = experiment_change_pct(&ch, &lo, &hi);
    assert_true(fabs(pct - 21.43) > 0.5);  /* not the ratio of the medians 1275 / 1050 */

    char *path = xasprintf("%s/out.json", dir);
    assert_int_equal(experiment_write_json(path, &cfg, &res), 0);
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    assert_non_null(root);
    json_t *tps = NULL, *summary = json_object_get(root, "summary");
    for (size_t i = 0; i < json_array_size(summary); i++)
        if (!strcmp(json_string_value(json_object_get(json_array_get(summary, i), "metric")),
                    "tps"))
            tps = json_array_get(summary, i);
    assert_non_null(tps);
    json_t *cell = json_array_get(json_object_get(tps, "cells"), 1);
    assert_float_equal(json_real_value(json_object_get(cell, "improvement_pct")), pct, 1e-9);
    json_t *ci = json_object_get(cell, "change_ci_pct");
    assert_int_equal(json_array_size(ci), 2);
    assert_float_equal(json_real_value(json_array_get(ci, 0)), lo, 1e-9);
    assert_float_equal(json_real_value(json_array_get(ci, 1)), hi, 1e-9);
    assert_true(json_is_boolean(json_object_get(cell, "significant")));
    assert_int_equal(json_is_true(json_object_get(cell, "significant")), ch.significant);
    /* the baseline's cell has no change */
    assert_null(json_object_get(json_array_get(json_object_get(tps, "cells"), 0),
                                "improvement_pct"));
    json_decref(root);
    unlink(path);
    rmdir(dir);
    free(path);
    experiment_result_release(&res);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_roundtrip),
        cmocka_unit_test(test_summary_same_estimate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
