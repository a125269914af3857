/* Unit tests of the ceiling table of the experiment reports (src/report/ceiling.c): its two
 * formulas, and on synthetic runs of a managed server with known medians the table (the time
 * a transaction holds with min(threads, cores), the server's user share, the ceiling, the
 * expected and the measured tps change), its JSON records, and no table where a variant lacks
 * the user-time split, with one variant, or in instruction mode. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "experiment/experiment.h"
#include "report/ceiling.h"
#include "report/tables.h"
#include "util/strbuf.h"
#include "util/util.h"

#include "experiment_fixtures.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define ROUNDS 5
#define LINE(from, ...) line_with((from), __VA_ARGS__, (const char *)NULL)
/* doubles within eps (cmocka's assert_float_equal works in float) */
#define assert_near(a, b, eps) assert_true(fabs((double)(a) - (double)(b)) <= (eps))

/* base and pgo, threads 1 and 2, 5 rounds, a 1-core machine; per round k (1..5):
 *   tps:              base 1000 t + k, pgo 1100 t + k   (medians at t = 1: 1003, 1103)
 *   server user us:   base 400 + k,    pgo 300 + k      (medians 403, 303)
 * At 1 thread X_b = 1e6 / 1003 = 997 us; u / X = 40%; ceiling 997 / (997 - 403) - 1 = +67.8%;
 * pgo: du = -100, expected 997 / 897 - 1 = +11.1%; measured (1103 / 1003 - 1) = +10.0%. At 2
 * threads on 1 core X = min(2, 1) / tps = 1e6 / 2003 = 499 us. */
static void runs(struct experiment_config *cfg, struct variant *v, struct experiment_result *res,
                 int cores)
{
    synthetic_config(cfg, v, ROUNDS);
    cfg->threads = threads2;
    cfg->nthreads = 2;
    memset(res, 0, sizeof(*res));
    res->env_json = xasprintf("{\"cores\": %d, \"loadavg_1m\": 0.1}", cores);
    for (int k = 1; k <= ROUNDS; k++)
        for (int i = 0; i < 2; i++)
            for (int var = 0; var < 2; var++) {
                int t = threads2[i];
                add_run(res, var, t, k, (var ? 1100.0 : 1000.0) * t + k, 2.0, 4.0);
                struct run_metrics *m = &res->runs[res->nruns - 1].metrics;
                m->available = true;
                m->server_user_us_per_txn = (var ? 300.0 : 400.0) + k;
                m->server_sys_us_per_txn = 100;
                m->server_us_per_txn = m->server_user_us_per_txn + m->server_sys_us_per_txn;
                m->client_us_per_txn = 50;
            }
}

static void test_formulas(void **state)
{
    (void)state;
    assert_near(report_ceiling_gain(1000, 400), 1000.0 / 600 - 1, 1e-12);
    assert_near(report_ceiling_gain(1000, 0), 0, 1e-12);
    assert_true(isnan(report_ceiling_gain(1000, 1000))); /* all of it: no finite ceiling */
    assert_true(isnan(report_ceiling_gain(1000, -1)));
    assert_true(isnan(report_ceiling_gain(0, 0)));
    assert_true(isnan(report_ceiling_gain(NAN, 10)));
    assert_near(report_expected_change(1000, -100), 1000.0 / 900 - 1, 1e-12);
    assert_near(report_expected_change(1000, 100), 1000.0 / 1100 - 1, 1e-12);
    assert_true(report_expected_change(1000, 100) < 0);
    assert_true(isnan(report_expected_change(1000, -1000)));
    assert_true(isnan(report_expected_change(1000, NAN)));
    assert_true(isnan(report_expected_change(-5, 1)));
}

static void test_table(void **state)
{
    (void)state;
    struct experiment_config cfg;
    struct variant v[2];
    struct experiment_result res;
    runs(&cfg, v, &res, 1);
    char *text = report_string(&cfg, &res);
    const char *t = strstr(text, "What the builds could change: the server's user time in a "
                                 "transaction, oltp_read_only");
    assert_non_null(t);
    char *row = LINE(t, "|       1 |", " base |", " 997 |", " 403 |", " 40% |", " +67.8% |",
                     "(baseline)");
    assert_non_null(row);
    free(row);
    row = LINE(t, "|       1 |", " pgo |", " 907 |", " 303 |", " -100 us (-24.8%) |",
               " +11.1% |", "+10.0% (95% CI ");
    assert_non_null(row);
    free(row);
    /* 2 threads on 1 core: X = 1 / tps, not 2 / tps */
    row = LINE(t, "|       2 |", " base |", " 499 |", " 403 |");
    assert_non_null(row);
    free(row);
    assert_non_null(strstr(t, REPORT_CEILING_NOTE));
    free(text);
    experiment_result_release(&res);

    /* 2 cores: at 2 threads X = 2 / tps = 999 us */
    runs(&cfg, v, &res, 2);
    text = report_string(&cfg, &res);
    t = strstr(text, "What the builds could change");
    assert_non_null(t);
    row = LINE(t, "|       2 |", " base |", " 999 |");
    assert_non_null(row);
    free(row);
    free(text);

    /* JSON: the records and the note */
    char *js = shape_string(&cfg, &res, REPORT_SEED000, REPORT_JSON);
    json_t *root = json_loads(js, 0, NULL);
    assert_non_null(root);
    assert_string_equal(json_string_value(json_object_get(root, "ceiling_note")),
                        REPORT_CEILING_NOTE);
    json_t *cells = json_object_get(root, "cells");
    int found = 0;
    for (size_t i = 0; i < json_array_size(cells); i++) {
        json_t *c = json_array_get(cells, i);
        const char *metric = json_string_value(json_object_get(c, "metric"));
        const char *var = json_string_value(json_object_get(c, "variant"));
        if (json_integer_value(json_object_get(c, "threads")) != 1)
            continue;
        double val = json_number_value(json_object_get(c, "value"));
        if (!strcmp(metric, "expected_tps_change_pct") && !strcmp(var, "pgo")) {
            assert_near(val, 100 * (1e6 / 1003 / (1e6 / 1003 - 100) - 1), 1e-9);
            found++;
        } else if (!strcmp(metric, "server_user_share_pct") && !strcmp(var, "base")) {
            assert_near(val, 100 * 403 / (1e6 / 1003), 1e-9);
            found++;
        } else if (!strcmp(metric, "ceiling_tps_pct") && !strcmp(var, "base")) {
            double x = 1e6 / 1003;
            assert_near(val, 100 * (x / (x - 403) - 1), 1e-9);
            found++;
        }
    }
    assert_int_equal(found, 3);
    json_decref(root);
    free(js);
    experiment_result_release(&res);
}

static void test_absent(void **state)
{
    (void)state;
    struct experiment_config cfg;
    struct variant v[2];
    struct experiment_result res;
    /* one variant's runs without the split (recorded before it): no table */
    runs(&cfg, v, &res, 2);
    for (int i = 0; i < res.nruns; i++)
        if (res.runs[i].variant == 1)
            res.runs[i].metrics.server_user_us_per_txn = NAN;
    char *text = report_string(&cfg, &res);
    assert_null(strstr(text, "What the builds could change"));
    assert_null(strstr(text, REPORT_CEILING_NOTE));
    free(text);
    char *js = shape_string(&cfg, &res, REPORT_SEED000, REPORT_JSON);
    assert_null(strstr(js, "ceiling_note"));
    assert_null(strstr(js, "ceiling_tps_pct"));
    free(js);
    experiment_result_release(&res);
    /* instruction mode */
    runs(&cfg, v, &res, 2);
    cfg.measure = MEASURE_INSTRUCTIONS;
    text = report_string(&cfg, &res);
    assert_null(strstr(text, "What the builds could change"));
    free(text);
    experiment_result_release(&res);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_formulas),
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_absent),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
