/* Unit tests of the server's user / system CPU time in the experiment reports
 * (src/report/server_cpu.c, and the two metrics of src/model/cells.c): on synthetic runs of a
 * managed server with known medians, the table per workload (rows, medians, % improvement,
 * the change computed as the tps table's), the line under it, the CSV and JSON records, and
 * no table for runs without the split (SQLite, runs recorded before it, instruction mode). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "experiment/experiment.h"
#include "report/server_cpu.h"
#include "report/step_gains.h"
#include "report/tables.h"
#include "util/strbuf.h"
#include "util/util.h"

#include "experiment_fixtures.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define ROUNDS 5

/* base and pgo, threads 1 and 2, 5 rounds; per round k (1..5) and thread count t:
 *   server user us/txn: base 100 t + k, pgo 80 t + k  (medians 103 / 83 at t = 1)
 *   server sys us/txn:  base 30 + d[k],  pgo 30 + e[k] (both medians 30: no change)
 * and server_us_per_txn their sum, as the sampler makes it. */
static void cpu_runs(struct experiment_config *cfg, struct variant *v,
                     struct experiment_result *res)
{
    /* the system time's deviations per round: [0] base (d), [1] pgo (e) */
    static const double dev[2][ROUNDS] = { { 0, 2, -2, 1, -1 }, { 1, -1, 2, -2, 0 } };
    synthetic_config(cfg, v, ROUNDS);
    cfg->threads = threads2;
    cfg->nthreads = 2;
    memset(res, 0, sizeof(*res));
    for (int k = 1; k <= ROUNDS; k++)
        for (int i = 0; i < 2; i++)
            for (int var = 0; var < 2; var++) {
                int t = threads2[i];
                add_run(res, var, t, k, 100.0 * t, 2.0, 4.0);
                struct run_metrics *m = &res->runs[res->nruns - 1].metrics;
                m->available = true;
                m->server_user_us_per_txn = (var ? 80.0 : 100.0) * t + k;
                m->server_sys_us_per_txn = 30 + dev[var][k - 1];
                m->server_us_per_txn = m->server_user_us_per_txn + m->server_sys_us_per_txn;
                m->client_us_per_txn = 50;
            }
}

/* The line of text (from `from` on) holding every needle (caller frees). */
#define LINE(from, ...) line_with((from), __VA_ARGS__, (const char *)NULL)

static void test_metrics_of_a_run(void **state)
{
    (void)state;
    struct run_result r;
    memset(&r, 0, sizeof(r));
    assert_true(isnan(experiment_metric_value(&r, METRIC_SERVER_USER_US))); /* no metrics */
    r.metrics.available = true;
    r.metrics.server_user_us_per_txn = 12.5;
    r.metrics.server_sys_us_per_txn = 3.5;
    assert_true(experiment_metric_value(&r, METRIC_SERVER_USER_US) == 12.5);
    assert_true(experiment_metric_value(&r, METRIC_SERVER_SYS_US) == 3.5);
    r.metrics.server_user_us_per_txn = NAN; /* recorded before the split */
    assert_true(isnan(experiment_metric_value(&r, METRIC_SERVER_USER_US)));
    assert_string_equal(experiment_metric_key(METRIC_SERVER_USER_US), "server_user_us_per_txn");
    assert_string_equal(experiment_metric_key(METRIC_SERVER_SYS_US), "server_sys_us_per_txn");
    assert_true(experiment_metric_lower_is_better(METRIC_SERVER_USER_US));
    assert_true(experiment_metric_lower_is_better(METRIC_SERVER_SYS_US));
    /* appended at the end: the others keep their numbers */
    assert_int_equal(METRIC_SERVER_USER_US, METRIC_CPU_US + 1);
    assert_int_equal(METRIC_SERVER_SYS_US, METRIC_ALL - 1);
    assert_string_equal(experiment_metric_key(METRIC_CPU_US), "cpu_us_per_txn");
}

static void test_text_table(void **state)
{
    (void)state;
    struct experiment_config cfg;
    struct variant v[2];
    struct experiment_result res;
    cpu_runs(&cfg, v, &res);
    char *text = report_string(&cfg, &res);
    /* after the 3 seed-000 tables */
    const char *t4 = strstr(text, "Table 4. Server CPU time per transaction (us), user and "
                                  "system, oltp_read_only");
    assert_non_null(t4);
    char *head = LINE(t4, "| threads |", " CPU |", " base ", " pgo ", "% improvement",
                      "change (95% CI)");
    assert_non_null(head);
    free(head);
    /* user at 1 thread: 103 (101-105) vs 83 (81-85): (103 - 83) / 103 = +19.42%, significant
     * with 5 rounds each (all of pgo's below all of base's) */
    char *row = LINE(t4, " 1 | ", " user | ", "103.00 (101.00-105.00)", "83.00 (81.00-85.00)",
                     "+19.42");
    assert_non_null(row);
    assert_null(strstr(row, "~"));
    assert_non_null(strstr(row, "+19.4% (95% CI "));
    free(row);
    /* system at 1 thread: medians 30 and 30, no significant change */
    row = LINE(t4, " 1 | ", " system | ", "30.00 (28.00-32.00)", "+0.00", "~");
    assert_non_null(row);
    free(row);
    /* the Average rows: user (103 + 203) / 2 = 153 vs (83 + 163) / 2 = 123 */
    row = LINE(t4, "| Average | ", " user | ", "153.00", "123.00");
    assert_non_null(row);
    free(row);
    row = LINE(t4, "| Average | ", " system | ");
    assert_non_null(row);
    free(row);
    /* 3 rows per part (1, 2, Average) */
    const char *end = strstr(t4, "\nTable 5.");
    assert_non_null(end);
    int rows = 0;
    for (const char *p = strstr(t4, "\n|"); p && p < end; p = strstr(p + 1, "\n|"))
        rows++;
    assert_int_equal(rows, 2 + 6); /* header and separator, 6 rows */
    /* the line under it, before the next table */
    const char *note = strstr(t4, REPORT_SERVER_CPU_NOTE);
    assert_non_null(note);
    assert_true(note < end);
    assert_non_null(strstr(REPORT_SERVER_CPU_NOTE, "only its user time can move"));
    free(text);

    /* the other shapes and markdown have it too */
    text = shape_string(&cfg, &res, REPORT_SEED002, REPORT_TEXT);
    assert_non_null(strstr(text, "Server CPU time per transaction (us), user and system"));
    free(text);
    text = shape_string(&cfg, &res, REPORT_SEED000, REPORT_MARKDOWN);
    assert_non_null(strstr(text, "### Table 4. Server CPU time per transaction (us), user and "
                                 "system, oltp_read_only"));
    assert_non_null(strstr(text, REPORT_SERVER_CPU_NOTE));
    free(text);
    experiment_result_release(&res);
}

/* The JSON cells: the change is experiment_change_cfg()'s with the cell's seed, as the tps
 * table computes its own; the CSV has a row per cell. */
static void test_csv_json(void **state)
{
    (void)state;
    struct experiment_config cfg;
    struct variant v[2];
    struct experiment_result res;
    cpu_runs(&cfg, v, &res);
    cfg.experiment_id = 3;

    char *js = shape_string(&cfg, &res, REPORT_SEED000, REPORT_JSON);
    json_t *root = json_loads(js, 0, NULL);
    assert_non_null(root);
    assert_non_null(strstr(js, "\"metric\": \"server_user_us_per_txn\"")); /* test_absent's */
    assert_string_equal(json_string_value(json_object_get(root, "server_cpu_note")),
                        REPORT_SERVER_CPU_NOTE);
    json_t *cells = json_object_get(root, "cells");
    int nuser = 0, nsys = 0, checked = 0;
    for (size_t i = 0; i < json_array_size(cells); i++) {
        json_t *c = json_array_get(cells, i);
        const char *metric = json_string_value(json_object_get(c, "metric"));
        bool user = !strcmp(metric, "server_user_us_per_txn");
        if (!user && strcmp(metric, "server_sys_us_per_txn"))
            continue;
        user ? nuser++ : nsys++;
        assert_int_equal(json_integer_value(json_object_get(c, "table")), 4);
        json_t *th = json_object_get(c, "threads");
        if (strcmp(json_string_value(json_object_get(c, "variant")), "pgo") || !json_is_integer(th))
            continue;
        /* pgo at one thread count: the change as experiment_change_cfg() gives it */
        enum experiment_metric m = user ? METRIC_SERVER_USER_US : METRIC_SERVER_SYS_US;
        int w = 0, t = (int)json_integer_value(th), ti = t == 1 ? 0 : 1;
        struct experiment_change ch;
        assert_int_equal(experiment_change_cfg(&cfg, &res, m, 1, &w, &t, 1,
                                               report_cell_seed(&cfg, 0, 1, ti, m), &ch), 0);
        json_t *vs = json_object_get(c, "vs_baseline");
        assert_float_equal(json_number_value(json_object_get(vs, "ratio")), ch.ratio, 1e-12);
        json_t *ci = json_object_get(vs, "ratio_ci");
        assert_float_equal(json_number_value(json_array_get(ci, 0)), ch.ci_lo, 1e-12);
        assert_float_equal(json_number_value(json_array_get(ci, 1)), ch.ci_hi, 1e-12);
        assert_true(json_is_true(json_object_get(vs, "significant")) == ch.significant);
        assert_true(ch.significant == user); /* user -19%: significant; system: not */
        json_t *rounds = json_object_get(c, "rounds");
        assert_int_equal(json_integer_value(json_object_get(rounds, "n")), ROUNDS);
        checked++;
    }
    assert_int_equal(nuser, 6); /* 2 variants x (2 thread counts + Average) */
    assert_int_equal(nsys, 6);
    assert_int_equal(checked, 4);
    json_decref(root);
    free(js);

    char *csv = shape_string(&cfg, &res, REPORT_SEED000, REPORT_CSV);
    char *line = line_with(csv, "3,seed000,4,oltp_read_only,1,server_user_us_per_txn,pgo,0,83,103,",
                           (const char *)NULL);
    assert_non_null(line);
    free(line);
    line = line_with(csv, ",all,server_sys_us_per_txn,base,1,", (const char *)NULL);
    assert_non_null(line);
    free(line);
    free(csv);
    experiment_result_release(&res);
}

/* No split in the runs: no table, no line, no records. */
static void test_absent(void **state)
{
    (void)state;
    struct experiment_config cfg;
    struct variant v[2];
    struct experiment_result res;
    cpu_runs(&cfg, v, &res);
    for (int i = 0; i < res.nruns; i++) { /* recorded before the split: NAN, the total kept */
        res.runs[i].metrics.server_user_us_per_txn = NAN;
        res.runs[i].metrics.server_sys_us_per_txn = NAN;
    }
    char *text = report_string(&cfg, &res);
    assert_null(strstr(text, "Server CPU time per transaction"));
    assert_null(strstr(text, REPORT_SERVER_CPU_NOTE));
    free(text);
    char *js = shape_string(&cfg, &res, REPORT_SEED000, REPORT_JSON);
    assert_null(strstr(js, "\"metric\": \"server_user_us_per_txn\""));
    assert_null(strstr(js, "server_cpu_note"));
    free(js);
    experiment_result_release(&res);

    /* SQLite (no metrics at all) and instruction mode */
    struct synth x;
    synth_make(&x, 3, 0);
    text = report_string(&x.cfg, &x.res);
    assert_null(strstr(text, "Server CPU time per transaction"));
    free(text);
    experiment_result_release(&x.res);
    cpu_runs(&cfg, v, &res);
    cfg.measure = MEASURE_INSTRUCTIONS;
    text = report_string(&cfg, &res);
    assert_null(strstr(text, "Server CPU time per transaction"));
    free(text);
    experiment_result_release(&res);
}

/* "what each step added" gets a second block for the server's user time: base, pgo and
 * pgo+bolt with user times 100 + k, 80 + k and 70 + k per round k (tps all alike): medians
 * 103, 83, 73, so pgo over base is 1 - 83 / 103 = +19.4% and bolt over pgo 1 - 73 / 83 =
 * +12.0% (the improvement sign convention); none without the split. */
static void test_steps_user_time(void **state)
{
    (void)state;
    struct experiment_config cfg;
    struct variant v[3];
    struct experiment_result res;
    synthetic_config(&cfg, v, ROUNDS);
    v[2] = v[1];
    v[2].name = "pgo+bolt";
    cfg.nvariants = 3;
    cfg.nthreads = 1;
    memset(&res, 0, sizeof(res));
    for (int k = 1; k <= ROUNDS; k++)
        for (int var = 0; var < 3; var++) {
            add_run(&res, var, 1, k, 100.0 + k, 2.0, 4.0);
            struct run_metrics *m = &res.runs[res.nruns - 1].metrics;
            m->available = true;
            m->server_user_us_per_txn = (var == 0 ? 100.0 : var == 1 ? 80.0 : 70.0) + k;
            m->server_sys_us_per_txn = 30;
        }
    struct strbuf sb = STRBUF_INIT;
    report_steps(&sb, &cfg, &res);
    const char *tps = strstr(sb.buf, "what each step added (tps, ");
    const char *user = strstr(sb.buf, "what each step added (the server's user CPU time per "
                                      "transaction, ");
    assert_non_null(tps);
    assert_non_null(user);
    assert_true(tps < user); /* the tps block first, as before */
    char *line = LINE(user, "pgo+bolt   bolt over pgo: +12.0% (95% CI ");
    assert_non_null(line);
    free(line);
    line = LINE(user, "pgo        pgo over base: +19.4% (95% CI ");
    assert_non_null(line);
    free(line);
    strbuf_release(&sb);
    /* 2 rounds: pgo's user time is below base's in both (a bootstrap CI clear of 0), but
     * Mann-Whitney cannot reach 0.05 with 2 and 2 (p = 0.33): "~", and the test's p said */
    for (int i = 0; i < res.nruns; i++)
        if (res.runs[i].round > 2)
            res.runs[i].variant = 9; /* no such variant: left out */
    sb = (struct strbuf)STRBUF_INIT;
    report_steps(&sb, &cfg, &res);
    line = LINE(strstr(sb.buf, "user CPU time"), "pgo        pgo over base: +",
                ", ~ not significant: the test's p = 0.33");
    assert_non_null(line);
    free(line);
    strbuf_release(&sb);
    experiment_result_release(&res); /* the same runs again, without the split */
    memset(&res, 0, sizeof(res));
    for (int k = 1; k <= ROUNDS; k++)
        for (int var = 0; var < 3; var++) {
            add_run(&res, var, 1, k, 100.0 + k, 2.0, 4.0);
            struct run_metrics *m = &res.runs[res.nruns - 1].metrics;
            m->available = true;
            m->server_user_us_per_txn = NAN; /* recorded before the split */
            m->server_sys_us_per_txn = 30;
        }
    sb = (struct strbuf)STRBUF_INIT;
    report_steps(&sb, &cfg, &res);
    assert_non_null(strstr(sb.buf, "what each step added (tps, "));
    assert_null(strstr(sb.buf, "user CPU time"));
    strbuf_release(&sb);

    /* instruction runs: the instructions block, then the estimated cycles' (a layout step
     * moves the misses, not the count): bolt leaves 1000 instructions, cuts 1500 cycles to
     * 1200 (+20.0%) */
    cfg.measure = MEASURE_INSTRUCTIONS;
    for (int i = 0; i < res.nruns; i++) {
        struct run_result *r = &res.runs[i];
        r->instr_per_txn = (r->variant ? 1000.0 : 1100.0) + r->round;
        r->est_cycles_per_txn = (r->variant == 2 ? 1200.0 : 1500.0) + r->round;
    }
    sb = (struct strbuf)STRBUF_INIT;
    report_steps(&sb, &cfg, &res);
    const char *ins = strstr(sb.buf, "what each step added (instructions per transaction, ");
    const char *cyc = strstr(sb.buf, "what each step added (estimated cycles per transaction, ");
    assert_non_null(ins);
    assert_non_null(cyc);
    assert_true(ins < cyc);
    line = LINE(cyc, "pgo+bolt   bolt over pgo: +20.0% (95% CI ");
    assert_non_null(line);
    free(line);
    strbuf_release(&sb);
    for (int i = 0; i < res.nruns; i++)  /* recorded before the estimate: no second block */
        res.runs[i].est_cycles_per_txn = NAN;
    sb = (struct strbuf)STRBUF_INIT;
    report_steps(&sb, &cfg, &res);
    assert_null(strstr(sb.buf, "estimated cycles"));
    strbuf_release(&sb);
    /* a name longer than the 10-character column widens it for every line: the step text
     * starts one space after the longest name */
    v[2].name = "clang:pgo+lto";
    sb = (struct strbuf)STRBUF_INIT;
    report_steps(&sb, &cfg, &res);
    line = LINE(sb.buf, "  clang:pgo+lto clang:pgo+lto over base: ");
    assert_non_null(line);
    free(line);
    line = LINE(sb.buf, "  pgo           pgo over base: ");
    assert_non_null(line);
    free(line);
    strbuf_release(&sb);
    experiment_result_release(&res);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_metrics_of_a_run),
        cmocka_unit_test(test_text_table),
        cmocka_unit_test(test_csv_json),
        cmocka_unit_test(test_absent),
        cmocka_unit_test(test_steps_user_time),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
