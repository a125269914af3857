/* Unit tests of the JSON results file (src/experiment/results_json): settings (a 64-bit seed
 * as text), fingerprints, environment, every run with its embedded report, run order, summary
 * cells, an incomplete experiment, and no temporary file left behind. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "model/model.h"
#include "experiment/results_json.h"
#include "util/util.h"

#include "experiment_fixtures.h"

#include <jansson.h>
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_roundtrip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
