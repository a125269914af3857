/* Unit tests of the seed-shaped reports of an experiment (src/report/tables): the seed-000
 * text tables (rows, Average, improvement, alignment, INCOMPLETE, one round), the seed-003 and
 * seed-002 shapes in text and markdown, and the CSV and JSON formats, on synthetic runs with
 * known medians. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "experiment/experiment.h"
#include "report/tables.h"
#include "util/strbuf.h"
#include "util/util.h"

#include "experiment_fixtures.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static void test_report_rows(void **state)
{
    (void)state;
    struct synth x;
    synth_make(&x, 3, 0);
    char *text = report_string(&x.cfg, &x.res);

    /* Every table (3 metrics x 1 workload) has a row per thread count and an Average row. */
    assert_int_equal(count_rows(text, "1"), 3);
    assert_int_equal(count_rows(text, "4"), 3);
    assert_int_equal(count_rows(text, "16"), 3);
    assert_int_equal(count_rows(text, "Average"), 3);
    assert_non_null(strstr(text, "Table 1. Transactions per second, oltp_read_only"));
    assert_non_null(strstr(text, "Table 2. Average response time (ms), oltp_read_only"));
    assert_non_null(strstr(text, "Table 3. 95th percentile response time (ms), oltp_read_only"));
    assert_non_null(strstr(text, "% improvement"));
    assert_non_null(strstr(text, "base"));
    assert_null(strstr(text, "INCOMPLETE"));
    /* 3 rounds per variant: the smallest possible Mann-Whitney p is 2/C(6,3) = 0.1, so even a
     * clean +20% is "~" and the report warns (stats_min_rounds(0.05) = 4). */
    assert_non_null(strstr(text, "change (95% CI)"));
    assert_non_null(strstr(text, "WARNING: with 3 rounds per variant no difference can ever be significant"));

    /* TPS, 16 threads: base 1600 (1590-1610), pgo 1920 (1915-1925); (1920-1600)/1600 = +20%. */
    assert_row(text, "Table 1.", "16", "1600.00 (1590.00-1610.00)", "1920.00 (1915.00-1925.00)",
               "+20.00");
    /* TPS Average: base (100 + 400 + 1600) / 3 = 700, pgo (120 + 480 + 1920) / 3 = 840;
     * improvement of the averages (840 - 700) / 700 * 100 = +20.00. */
    assert_row(text, "Table 1.", "Average", "700.00", "840.00", "+20.00");
    /* Average latency, every thread count: base 2.2 (2.0-2.4), pgo 1.6 (1.5-1.7):
     * (2.2 - 1.6) / 2.2 * 100 = 27.2727 -> "+27.27"; 3 decimals for values >= 1. */
    assert_row(text, "Table 2.", "Average", "2.200", "1.600", "+27.27");
    assert_row(text, "Table 2.", "4", "2.200 (2.000-2.400)");

    /* Columns line up: every line of a table has the same length. */
    const char *t1 = strstr(text, "Table 1."), *first = strchr(t1, '|');
    size_t width = strcspn(first, "\n");
    for (const char *line = first; *line == '|';) {
        assert_int_equal(strcspn(line, "\n"), width);
        line += strcspn(line, "\n") + 1;
    }
    free(text);

    /* Runs missing (the experiment stopped): the report says so and shows "-" cells. */
    x.res.nruns = 4; /* only round 1, threads 1 and 4 */
    text = report_string(&x.cfg, &x.res);
    assert_non_null(strstr(text, "INCOMPLETE: 4 of 18 runs finished"));
    assert_row(text, "Table 1.", "16", "-");
    free(text);
    x.res.nruns = 18;
    experiment_result_release(&x.res);

    /* One round: values without a spread. */
    synth_make(&x, 1, 0);
    text = report_string(&x.cfg, &x.res);
    assert_int_equal(count_rows(text, "Average"), 3);
    for (const char *line = strstr(text, "Table 1."); line && *line;) {
        if (*line == '|' && strncmp(line, "| threads", 9)) /* the header names "(95% CI)" */
            assert_true(memchr(line, '(', strcspn(line, "\n")) == NULL);
        line = strchr(line, '\n');
        line = line ? line + 1 : NULL;
    }
    /* Round 1: base 100, pgo 115 -> +15.00 */
    assert_row(text, "Table 1.", "1", "no statistics with 1 round", "100.00", "115.00", "+15.00");
    free(text);
    experiment_result_release(&x.res);
}

/* ---------------------------------------------------------------- report shapes */

static void test_report_seed003(void **state)
{
    (void)state;
    struct synth x;
    synth_make(&x, 3, 12);
    x.cfg.kind = "compare";
    char *text = shape_string(&x.cfg, &x.res, REPORT_SEED003, REPORT_TEXT);

    /* The header names the experiment. */
    assert_true(!strncmp(text, "pgolab experiment 12 (compare): 2 variants", 42));
    /* One table per workload and thread count. */
    assert_non_null(strstr(text, "Table 1. oltp_read_only, 1 thread: latency (ms) and QPS, "
                                 "median of 3 rounds"));
    assert_non_null(strstr(text, "Table 2. oltp_read_only, 4 threads:"));
    assert_non_null(strstr(text, "Table 3. oltp_read_only, 16 threads:"));
    assert_null(strstr(text, "Table 4."));
    /* 4 threads, medians over rounds: min = avg/2: base 2.2/2 = 1.1, pgo 1.6/2 = 0.8 (four
     * decimals: the row's smallest value is below 1); avg 2.2 / 1.6; max = 2 p95 = 4 avg:
     * 8.8 / 6.4; p95 4.4 / 3.2; QPS = 16 tps: 6400 / 7680. */
    assert_row(text, "Table 2.", "min (ms)", "1.1000", "0.8000");
    assert_row(text, "Table 2.", "avg (ms)", "2.200", "1.600");
    assert_row(text, "Table 2.", "max (ms)", "8.800", "6.400");
    assert_row(text, "Table 2.", "95%ile (ms)", "4.400", "3.200");
    /* 3 rounds can never be significant (smallest p 0.1): "~" (the last column). */
    assert_row(text, "Table 2.", "QPS", "6400.00", "7680.00", " ~ |");
    assert_non_null(strstr(text, "| change (95% CI) |"));
    free(text);

    /* Markdown: headings and a list instead of the indented header. */
    text = shape_string(&x.cfg, &x.res, REPORT_SEED003, REPORT_MARKDOWN);
    assert_true(!strncmp(text, "## pgolab experiment 12", 23));
    assert_non_null(strstr(text, "\n- baseline base"));
    assert_non_null(strstr(text, "\n### Table 1. oltp_read_only, 1 thread"));
    assert_non_null(strstr(text, "\n|------"));
    free(text);
    experiment_result_release(&x.res);

    /* One round: no statistics. */
    synth_make(&x, 1, 0);
    text = shape_string(&x.cfg, &x.res, REPORT_SEED003, REPORT_TEXT);
    assert_row(text, "Table 1.", "QPS", "no statistics with 1 round");
    free(text);
    experiment_result_release(&x.res);
}

static void test_report_seed002(void **state)
{
    (void)state;
    struct synth x;
    synth_make(&x, 3, 0);
    char *text = shape_string(&x.cfg, &x.res, REPORT_SEED002, REPORT_TEXT);

    assert_non_null(strstr(text, "Table 1. Speedup (x) vs base (ratio of median tps)"));
    assert_non_null(strstr(text, "speedup (x) = base's median time per transaction"));
    /* A row per variant over all cells, then per thread count: 2 x (1 + 3) rows. */
    assert_int_equal(count_rows(text, "base"), 4);
    assert_int_equal(count_rows(text, "pgo"), 4);
    assert_line(text, " base | ", " 16 | ", "1600.00", "1.000", "baseline");
    /* 16 threads: 1920 / 1600 = 1.200, not significant with 3 rounds. */
    assert_line(text, " pgo | ", " 16 | ", "1920.00", "1.200", " ~ |");
    /* Over all cells: every ratio is 1.2, so the geometric mean is 1.200; the 9 pooled pgo
     * rounds (each over its cell's baseline median: 1.15..1.25) all lie above the 9 baseline
     * ones (0.9..1.1), so the pooled test is significant: "faster". */
    assert_line(text, " pgo | ", " all | ", "1.200", "faster");
    free(text);
    experiment_result_release(&x.res);

    synth_make(&x, 1, 0);
    text = shape_string(&x.cfg, &x.res, REPORT_SEED002, REPORT_TEXT);
    assert_line(text, " pgo | ", " 1 | ", "1.150" /* 115 / 100 */, "no statistics with 1 round");
    free(text);
    experiment_result_release(&x.res);
}

/* ---------------------------------------------------------------- CSV and JSON */

/* Number of comma-separated fields of a CSV line without quotes. */
static int csv_fields(const char *line)
{
    int n = 1;
    for (; *line && *line != '\n'; line++)
        n += *line == ',';
    return n;
}

static void test_report_csv_json(void **state)
{
    (void)state;
    struct synth x;
    synth_make(&x, 3, 7);

    /* seed000 CSV: a header, then 3 metrics x (3 thread rows + Average) x 2 variants, then
     * the noise and precision rows: pgo x 3 thread counts x (CV, detectable change, CI
     * half-width). */
    char *csv = shape_string(&x.cfg, &x.res, REPORT_SEED000, REPORT_CSV);
    assert_int_equal(count_lines(csv), 1 + 24 + 9);
    assert_true(!strncmp(csv, "experiment,shape,table,workload,threads,metric,variant,", 55));
    int fields = csv_fields(csv);
    assert_int_equal(fields, 26);
    for (const char *line = csv; *line; line = strchr(line, '\n') + 1)
        assert_int_equal(csv_fields(line), fields);
    /* tps at 16 threads for pgo: value 1920, baseline 1600, +20%, 3 rounds 1915..1925,
     * ratio 1.2, p >= 0.1 so not significant ("~"). */
    assert_line(csv, "7,seed000,1,oltp_read_only,16,tps,pgo,0,1920,1600,20,3,1920,", NULL,
                ",1915,1925,1.2,", ",0,~");
    /* The Average row has threads "all" and the geometric-mean change. */
    char *line = line_with(csv, ",all,tps,pgo,0,840,700,20,", NULL);
    assert_non_null(line);
    free(line);
    /* a precision row: the CV of one run of pgo (value) and of the baseline (baseline_value) */
    line = line_with(csv, "7,seed000,4,oltp_read_only,16,tps_cv_pct,pgo,0,", NULL);
    assert_non_null(line);
    free(line);
    free(csv);

    /* seed002 JSON: every cell with its statistics. */
    char *js = shape_string(&x.cfg, &x.res, REPORT_SEED002, REPORT_JSON);
    json_error_t je;
    json_t *root = json_loads(js, 0, &je);
    assert_non_null(root);
    assert_string_equal(json_string_value(json_object_get(root, "shape")), "seed002");
    json_t *exp = json_object_get(root, "experiment");
    assert_int_equal(json_integer_value(json_object_get(exp, "id")), 7);
    assert_true(json_is_true(json_object_get(exp, "complete")));
    json_t *cells = json_object_get(root, "cells");
    assert_int_equal(json_array_size(cells), 8); /* 2 variants x (all + 3 thread counts) */
    int seen_all = 0, seen_16 = 0;
    for (size_t i = 0; i < json_array_size(cells); i++) {
        json_t *c = json_array_get(cells, i);
        const char *var = json_string_value(json_object_get(c, "variant"));
        json_t *vs = json_object_get(c, "vs_baseline");
        assert_string_equal(json_string_value(json_object_get(c, "metric")), "speedup");
        if (!strcmp(var, "base")) {
            assert_true(json_is_null(vs));
            assert_float_equal(json_number_value(json_object_get(c, "value")), 1.0, 1e-12);
            continue;
        }
        assert_float_equal(json_number_value(json_object_get(vs, "ratio")), 1.2, 1e-9);
        if (json_is_null(json_object_get(c, "threads"))) {
            seen_all++;
            assert_true(json_is_true(json_object_get(vs, "significant")));
            assert_true(json_is_true(json_object_get(vs, "pooled")));
            json_t *ci = json_object_get(vs, "ratio_ci");
            assert_true(json_number_value(json_array_get(ci, 0)) > 1.0);
            assert_true(json_number_value(json_array_get(ci, 1)) >= 1.2);
        } else if (json_integer_value(json_object_get(c, "threads")) == 16) {
            seen_16++;
            assert_true(json_is_false(json_object_get(vs, "significant")));
            assert_string_equal(json_string_value(json_object_get(vs, "verdict")), "~");
            json_t *rounds = json_object_get(c, "rounds");
            assert_int_equal(json_integer_value(json_object_get(rounds, "n")), 3);
            assert_int_equal(json_array_size(json_object_get(rounds, "values")), 3);
            assert_float_equal(json_number_value(json_object_get(rounds, "median")), 1920, 1e-9);
        }
    }
    assert_int_equal(seen_all, 1);
    assert_int_equal(seen_16, 1);
    json_decref(root);
    free(js);
    experiment_result_release(&x.res);
}

/* Instruction mode: a synthetic A/B on a server, 2 rounds, 1 thread, every counter moved
 * between rounds. The repeatability line names what moved and ends there (an empty list was
 * printed as "(null)"); a marginal count below zero (one run's LL misses, a background) is
 * never printed as a negative number: "-" or "below zero (noise)" in its cell and a line that
 * says how many runs; the background's share of the server is between 0 and 100. */
static void test_report_instructions(void **state)
{
    (void)state;
    struct synth x;
    static int one[] = { 1 };
    synth_make(&x, 2, 0);
    x.cfg.measure = MEASURE_INSTRUCTIONS;
    x.cfg.events = 100;
    x.cfg.threads = one;
    x.cfg.nthreads = 1;
    for (int i = 0; i < x.res.nruns; i++)
        free(x.res.runs[i].json);
    free(x.res.runs);
    x.res.runs = NULL;
    x.res.nruns = 0;
    for (int k = 1; k <= 2; k++)
        for (int v = 0; v < 2; v++) {
            add_run(&x.res, v, 1, k, NAN, NAN, NAN);
            struct run_result *r = &x.res.runs[x.res.nruns - 1];
            double d = k + v;  /* every counter moves between rounds */
            r->instr_per_txn = 40000 + d;
            r->i1_miss_per_txn = 100 + d;
            r->branch_miss_per_txn = 50 + d;
            r->d1_miss_per_txn = 300 + d;
            r->ll_miss_per_txn = 2 + d;
            r->est_cycles_per_txn = 60000 + d;
            r->bg_instr_per_txn = 900 + d;
            r->bg_est_cycles_per_txn = 1200 + d;
            if (k == 2 && v == 1) {  /* noise took these below zero (callgrind_marginal) */
                r->ll_miss_per_txn = NAN;
                r->bg_instr_per_txn = r->bg_est_cycles_per_txn = NAN;
                r->below_zero = (1u << (METRIC_LL_MISS - METRIC_INSTR)) |
                                RUN_BELOW_ZERO_BG_INSTR | RUN_BELOW_ZERO_BG_CYCLES;
            }
        }
    char *text = report_string(&x.cfg, &x.res);
    assert_null(strstr(text, "(null)"));
    const char *rep = strstr(text, "repeatability: between the rounds of one variant moved: ");
    assert_non_null(rep);
    assert_true(rep[strcspn(rep, "\n") - 1] == '%');  /* the line ends in the last value */
    assert_non_null(strstr(text, "Below zero in 1 run: the marginal ll_miss_per_txn"));
    assert_non_null(strstr(text, "Below zero in 1 run: the background's marginal"));
    /* no negative count anywhere in the tables: no "| -<digit>" cell */
    for (const char *p = text; (p = strstr(p, "| -")); p++)
        assert_false(p[3] >= '0' && p[3] <= '9');
    /* the background table: the noisy variant's medians from its one usable run */
    assert_non_null(strstr(text, "Server background per transaction"));
    const char *bg = strstr(text, "Server background per transaction");
    const char *pgo = strstr(bg, "|     pgo |");
    assert_non_null(pgo);
    assert_non_null(strstr(bg, "902"));   /* base: median of 901 and 902 = 901.5 -> "902" */
    free(text);
    experiment_result_release(&x.res);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_report_rows),
        cmocka_unit_test(test_report_seed003),
        cmocka_unit_test(test_report_seed002),
        cmocka_unit_test(test_report_csv_json),
        cmocka_unit_test(test_report_instructions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
