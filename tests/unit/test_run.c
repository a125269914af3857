/* Unit tests of one run (src/experiment/run): reading a child's `bench run --format=json`
 * report (p95 from percentile_value when there is no p95; refusals of what is not a report,
 * or an interrupted run's). Whole runs against a fake pgolab are in test_experiment.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "experiment/run.h"

#include <stdlib.h>
#include <string.h>

static void test_parse_run(void **state)
{
    (void)state;
    struct run_result r;
    memset(&r, 0, sizeof(r));
    const char *ok = "{\"test\":\"oltp_read_only\",\"threads\":2,\"transactions\":12345,"
                     "\"tps\":1234.5,\"qps\":19750.3,\"ignored_errors\":3,"
                     "\"latency_ms\":{\"min\":0.1,\"avg\":1.62,\"max\":9.5,\"p95\":2.5,"
                     "\"percentile\":95,\"percentile_value\":2.5},\"interrupted\":false}";
    assert_int_equal(experiment_parse_run(ok, &r), 0);
    assert_float_equal(r.tps, 1234.5, 1e-9);
    assert_float_equal(r.qps, 19750.3, 1e-9);
    assert_float_equal(r.lat_avg_ms, 1.62, 1e-9);
    assert_float_equal(r.lat_p95_ms, 2.5, 1e-9);
    assert_float_equal(r.lat_min_ms, 0.1, 1e-9);
    assert_float_equal(r.lat_max_ms, 9.5, 1e-9);
    assert_int_equal(r.transactions, 12345);
    assert_int_equal(r.errors, 3);
    assert_string_equal(r.json, ok);
    free(r.json);

    /* p95 from percentile_value when there is no p95 key. */
    memset(&r, 0, sizeof(r));
    assert_int_equal(experiment_parse_run("{\"tps\":1,\"qps\":2,\"latency_ms\":{\"avg\":3,"
                                          "\"percentile_value\":4}}",
                                          &r),
                     0);
    assert_float_equal(r.lat_p95_ms, 4, 1e-9);
    free(r.json);

    memset(&r, 0, sizeof(r));
    assert_int_equal(experiment_parse_run("FATAL: no such table", &r), -1);
    assert_int_equal(experiment_parse_run("{\"tps\":1}", &r), -1);
    assert_int_equal(experiment_parse_run("{\"tps\":1,\"qps\":2,\"latency_ms\":{\"avg\":3}}", &r), -1);
    assert_int_equal(experiment_parse_run("{\"tps\":1,\"qps\":2,\"latency_ms\":{\"avg\":3,\"p95\":4},"
                                          "\"interrupted\":true}",
                                          &r),
                     -1);
    assert_null(r.json);
}

/* Counts beyond uint64_t (found by tests/fuzz/fuzz_child_json.c: converting 1e300 to
 * uint64_t was undefined behaviour) or negative read as 0, like missing ones. */
static void test_parse_run_counts_out_of_range(void **state)
{
    (void)state;
    static const char *const counts[][2] = {
        { "1e300", "-1" }, { "1.8446744073709552e19", "-1e300" }, { "-0.5", "1e19" },
    };
    for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
        char json[256];
        struct run_result r;
        memset(&r, 0, sizeof(r));
        snprintf(json, sizeof(json), "{\"tps\":1,\"qps\":2,\"latency_ms\":{\"avg\":3,\"p95\":4},"
                 "\"transactions\":%s,\"ignored_errors\":%s}", counts[i][0], counts[i][1]);
        assert_int_equal(experiment_parse_run(json, &r), 0);
        assert_int_equal(r.transactions, 0);
        assert_true(r.errors == (i == 2 ? 10000000000000000000ULL : 0));
        free(r.json);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_run),
        cmocka_unit_test(test_parse_run_counts_out_of_range),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
