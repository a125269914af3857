/* Unit tests of the closing verdict (src/report/verdict.c) and of the one estimator the tables
 * and the verdict share (report_improvement_cell(), report_p_decides() in report/common.c), on
 * hand-made results: a significant gain, a gain too small for the rounds run (the rounds it
 * needs), a busy machine, instruction counts that do not differ, the issue's contradictory
 * rows (a p of 0.004 beside "~"; -117.31 beside "~"), where the verdict and the per-run
 * trust table go in a report, and --exclude-distrusted's runs left out. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "experiment/experiment.h"
#include "report/tables.h"
#include "report/verdict.h"
#include "stats/compare.h"
#include "util/strbuf.h"
#include "util/util.h"

#include "experiment_fixtures.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int threads1[] = { 1 };

/* One workload at 1 thread; round k of the baseline has tps base[k], the variant var[k]
 * (latency: 1000 / tps ms). */
static void one_cell(struct synth *x, const double *base, const double *var, int rounds)
{
    synthetic_config(&x->cfg, x->v, rounds);
    x->cfg.threads = threads1;
    x->cfg.nthreads = 1;
    memset(&x->res, 0, sizeof(x->res));
    x->res.env_json = xstrdup("{\"kernel\":\"6.1.0-test\",\"cores\":2}");
    for (int k = 0; k < rounds; k++) {
        add_run(&x->res, 0, 1, k + 1, base[k], 1000 / base[k], 2000 / base[k]);
        add_run(&x->res, 1, 1, k + 1, var[k], 1000 / var[k], 2000 / var[k]);
    }
}

static char *verdict_text(const struct experiment_config *cfg, const struct verdict *vd)
{
    struct strbuf sb = STRBUF_INIT;
    report_verdict_format(&sb, cfg, vd, REPORT_TEXT);
    return strbuf_detach(&sb);
}

/* 8 rounds, every variant run above every baseline run: +20% resolved, in the cell too. */
static void test_verdict_significant(void **state)
{
    (void)state;
    static const double base[] = { 1000, 1010, 990, 1005, 995, 1002, 998, 1001 };
    static const double var[] = { 1200, 1212, 1188, 1206, 1194, 1202, 1198, 1201 };
    struct synth x;
    struct verdict vd;
    one_cell(&x, base, var, 8);
    report_verdict_compute(&x.cfg, &x.res, &vd);
    assert_int_equal(vd.nvariants, 1);
    const struct verdict_variant *vv = &vd.vars[0];
    assert_int_equal(vv->v, 1);
    assert_int_equal(vv->next, VERDICT_RESOLVED);
    assert_int_equal(vv->cells, 1);
    assert_int_equal(vv->better, 1);
    assert_int_equal(vv->worse, 0);
    assert_int_equal(vv->rounds, 8);
    assert_int_equal(vv->gain[0].m, METRIC_TPS);
    assert_true(vv->gain[0].ch.significant);
    assert_true(fabs(experiment_change_pct(&vv->gain[0].ch, NULL, NULL) - 20) < 0.5);
    /* latency is 1000 / tps: 1/1.2 of the baseline's, (1 - 1/1.2) = +16.7% better */
    assert_int_equal(vv->gain[1].m, METRIC_LAT_AVG_MS);
    assert_true(fabs(experiment_change_pct(&vv->gain[1].ch, NULL, NULL) - 16.67) < 0.5);
    char *text = verdict_text(&x.cfg, &vd);
    assert_non_null(strstr(text, "Verdict against base"));
    assert_non_null(strstr(text, "  pgo: tps +20.0% (95% CI +"));
    assert_non_null(strstr(text, " better; significant in 1 of 1 cell"));
    assert_non_null(strstr(text, "also: avg latency +16.7%"));
    assert_null(strstr(text, "next:"));  /* resolved: no next step */
    free(text);
    json_t *j = report_verdict_json(&x.cfg, &vd);
    json_t *v0 = json_array_get(json_object_get(j, "variants"), 0);
    assert_string_equal(json_string_value(json_object_get(v0, "next")), "resolved");
    assert_int_equal(json_integer_value(json_object_get(v0, "cells_better")), 1);
    json_decref(j);
    report_verdict_release(&vd);
    experiment_result_release(&x.res);
}

/* 4 rounds, +4% under about 4% noise (the rounds overlap: Mann-Whitney cannot reject): not
 * resolved; it says how many rounds would be. */
static void test_verdict_needs_rounds(void **state)
{
    (void)state;
    static const double base[] = { 1000, 1050, 950, 1020 };
    static const double var[] = { 1040, 1090, 1000, 1060 };
    struct synth x;
    struct verdict vd;
    one_cell(&x, base, var, 4);
    report_verdict_compute(&x.cfg, &x.res, &vd);
    const struct verdict_variant *vv = &vd.vars[0];
    assert_false(vv->gain[0].ch.significant);
    assert_int_equal(vv->better + vv->worse, 0);
    assert_int_equal(vv->next, VERDICT_MORE_ROUNDS);
    /* the rounds for a change of the observed size at the pooled CV (Mann-Whitney, 80%) */
    double pct = fabs(experiment_change_pct(&vv->gain[0].ch, NULL, NULL));
    assert_true(isfinite(vv->noise_pct) && vv->noise_pct > 1 && vv->noise_pct < 10);
    int need = stats_rounds_needed(vv->noise_pct / 100, pct / 100, 0.05, 0.8);
    assert_int_equal(vv->rounds_needed, need);
    assert_true(need > 4);
    char *text = verdict_text(&x.cfg, &vd);
    char *want = xasprintf("    next: not resolved: needs about %d more rounds to resolve a "
                           "change of %.1f%% (--rounds=%d)\n", need - 4, pct, need);
    assert_non_null(strstr(text, want));
    assert_non_null(strstr(text, " ~; significant in 0 of 1 cell"));
    free(want);
    free(text);
    report_verdict_release(&vd);
    experiment_result_release(&x.res);
}

/* The same rounds on a busy machine: rerun, not more rounds. Too few rounds for any CI: the
 * rounds statistics need. */
static void test_verdict_busy_and_one_round(void **state)
{
    (void)state;
    static const double base[] = { 1000, 1050, 950, 1020 };
    static const double var[] = { 990, 1050, 1030, 1010 };
    struct synth x;
    struct verdict vd;
    one_cell(&x, base, var, 4);
    free(x.res.env_json);
    x.res.env_json = xstrdup("{\"kernel\":\"6.1.0-test\",\"cores\":2,\"loadavg_1m\":3.8}");
    report_verdict_compute(&x.cfg, &x.res, &vd);
    assert_true(vd.busy);
    assert_int_equal(vd.vars[0].next, VERDICT_BUSY);
    char *text = verdict_text(&x.cfg, &vd);
    assert_non_null(strstr(text, "next: not resolved: the machine was busy (load 3.80 on 2 cores "
                                 "at the start): rerun when it is quiet"));
    free(text);
    report_verdict_release(&vd);
    experiment_result_release(&x.res);

    one_cell(&x, base, var, 1);
    report_verdict_compute(&x.cfg, &x.res, &vd);
    assert_int_equal(vd.vars[0].next, VERDICT_STATISTICS);
    assert_int_equal(vd.vars[0].rounds_needed, stats_min_rounds(0.05));
    text = verdict_text(&x.cfg, &vd);
    assert_non_null(strstr(text, "tps -1.0% (no CI yet)"));
    assert_non_null(strstr(text, "next: no statistics from 1 round: needs at least"));
    free(text);
    report_verdict_release(&vd);
    experiment_result_release(&x.res);
}

/* Instruction counts that do not differ: the primary metric is instructions, and the next
 * step says the builds do the same work (no "more rounds" for a deterministic count). */
static void test_verdict_instructions(void **state)
{
    (void)state;
    static const double base[] = { 1000, 1000, 1000 };
    struct synth x;
    struct verdict vd;
    one_cell(&x, base, base, 3);
    x.cfg.measure = MEASURE_INSTRUCTIONS;
    for (int i = 0; i < x.res.nruns; i++) {
        struct run_result *r = &x.res.runs[i];
        r->instr_per_txn = 50000 + (i % 2 ? 1 : -1) * (double)(i / 2);
        r->est_cycles_per_txn = NAN;
    }
    report_verdict_compute(&x.cfg, &x.res, &vd);
    const struct verdict_variant *vv = &vd.vars[0];
    assert_int_equal(vv->gain[0].m, METRIC_INSTR);
    assert_int_equal(vv->ngain, 1);
    assert_false(vv->gain[0].ch.significant);
    assert_int_equal(vv->next, VERDICT_SAME);
    char *text = verdict_text(&x.cfg, &vd);
    assert_non_null(strstr(text, "pgo: instructions/txn "));
    assert_non_null(strstr(text, "next: no difference in instructions per transaction"));
    free(text);
    report_verdict_release(&vd);
    experiment_result_release(&x.res);

    /* 2 rounds of counts 7% apart: the CI is clear of 0, the rank test cannot reject with 2
     * rounds; the next step is the rounds it needs, never "the same work" */
    one_cell(&x, base, base, 2);
    x.cfg.measure = MEASURE_INSTRUCTIONS;
    for (int i = 0; i < x.res.nruns; i++) {
        struct run_result *r = &x.res.runs[i];
        r->instr_per_txn = (r->variant ? 46500 : 50000) + (double)(i % 2);
        r->est_cycles_per_txn = NAN;
    }
    report_verdict_compute(&x.cfg, &x.res, &vd);
    vv = &vd.vars[0];
    assert_false(vv->gain[0].ch.significant);
    assert_int_equal(vv->next, VERDICT_MORE_ROUNDS);
    assert_int_equal(vv->rounds_needed, stats_min_rounds(0.05));
    text = verdict_text(&x.cfg, &vd);
    assert_null(strstr(text, "same work"));
    assert_non_null(strstr(text, "--rounds="));
    free(text);
    report_verdict_release(&vd);
    experiment_result_release(&x.res);
}

/* The issue's rows: seed 002's "1.157 | 0.973 .. 1.248 | 0.004 | ~" (a Mann-Whitney p below
 * 0.05 where the CI holds 1: the CI decided, so no p), and a p95 Average of -117.31 beside
 * "~" (now in parentheses: the estimate of a change that is not significant). */
static void test_contradictions(void **state)
{
    (void)state;
    struct experiment_change ch = { .ncells = 4, .n1 = 20, .n2 = 20, .stats = true,
                                    .pooled = true, .ratio = 1.157, .ci_lo = 0.973,
                                    .ci_hi = 1.248, .level = 0.95, .p_value = 0.004,
                                    .significant = false };
    assert_false(report_p_decides(&ch));
    char *cell = report_improvement_cell(&ch);
    assert_string_equal(cell, "(+15.70)");
    free(cell);
    /* the CI excludes 1 but p >= 0.05: then the p decided "~", and is printed */
    ch.ci_lo = 1.02;
    ch.p_value = 0.1;
    assert_true(report_p_decides(&ch));
    /* significant: the same estimate, no parentheses */
    ch.p_value = 0.004;
    ch.significant = true;
    cell = report_improvement_cell(&ch);
    assert_string_equal(cell, "+15.70");
    free(cell);
    /* under --target-ci the anytime p is the sequence's own: it always decides */
    ch.sequential = true;
    ch.ci_lo = 0.9;
    ch.significant = false;
    assert_true(report_p_decides(&ch));
    /* latency (lower is better) 2.1731 x the baseline's, not significant */
    struct experiment_change lat = { .ncells = 3, .n1 = 9, .n2 = 9, .stats = true,
                                     .pooled = true, .lower_is_better = true, .ratio = 2.1731,
                                     .ci_lo = 0.6, .ci_hi = 4.0, .level = 0.95, .p_value = 0.3 };
    cell = report_improvement_cell(&lat);
    assert_string_equal(cell, "(-117.31)");
    free(cell);
    /* one round: no statistics, no verdict to contradict: the plain estimate */
    lat.stats = false;
    cell = report_improvement_cell(&lat);
    assert_string_equal(cell, "-117.31");
    free(cell);
    struct experiment_change none = { 0 };
    cell = report_improvement_cell(&none);
    assert_string_equal(cell, "-");
    free(cell);
}

/* In the seed-000 tables the % improvement of every variant row is the change's estimate and
 * agrees in sign with it; the verdict block ends the report; the trust table only on request;
 * compare's text (no_verdict, then experiment_report_verdict()) is the report's. */
static void test_report_layout(void **state)
{
    (void)state;
    struct synth x;
    synth_make(&x, 3, 0);
    /* metrics on every run so that the trust table has rows */
    for (int i = 0; i < x.res.nruns; i++)
        x.res.runs[i].metrics.available = true;
    struct strbuf sb = STRBUF_INIT;
    report_experiment(&sb, &x.cfg, &x.res, REPORT_SEED000, REPORT_TEXT);
    const char *v = strstr(sb.buf, "\nVerdict against base");
    assert_non_null(v);
    assert_null(strstr(v, "Table "));          /* nothing after it but its lines */
    assert_null(strstr(v + 1, "\n\n"));
    assert_null(strstr(sb.buf, "Table 5. Load and trust per run"));
    assert_null(strstr(sb.buf, "| run | variant |"));
    assert_non_null(strstr(sb.buf, "Load and trust per run: 0 of 18 runs with metrics distrusted "
                                    "(--trust-table lists every run)."));
    /* the Average row: +20.00 (every ratio is 1.2), significant pooled, so no parentheses;
     * the thread rows (3 rounds: never significant) in parentheses, the same estimate */
    assert_row(sb.buf, "Table 1.", "Average", "700.00", "840.00", "+20.00");
    assert_row(sb.buf, "Table 1.", "16", "1600.00", "1920.00", "(+20.00)", "~");
    assert_non_null(strstr(v, "pgo: tps +20.0% (95% CI "));
    assert_non_null(strstr(v, "better; significant in 0 of 3 cells"));
    strbuf_release(&sb);

    struct report_options ro = { .trust_table = true };
    strbuf_init(&sb, 0);
    report_experiment_opts(&sb, &x.cfg, &x.res, REPORT_SEED000, REPORT_MARKDOWN, NULL, &ro);
    assert_non_null(strstr(sb.buf, "Load and trust per run (run queue"));
    v = strstr(sb.buf, "\n### Verdict against base\n");
    assert_non_null(v);
    assert_null(strstr(v + 5, "###"));
    assert_non_null(strstr(v, "\n- pgo: tps +20.0%"));
    strbuf_release(&sb);

    /* compare and pgo: the tables without the verdict, then the verdict: the same text */
    struct strbuf whole = STRBUF_INIT;
    report_experiment(&whole, &x.cfg, &x.res, REPORT_SEED000, REPORT_TEXT);
    char *buf;
    size_t len;
    FILE *f = open_memstream(&buf, &len);
    struct report_options nov = { .no_verdict = true };
    experiment_report_text_opts(f, &x.cfg, &x.res, &nov);
    experiment_report_verdict(f, &x.cfg, &x.res);
    fclose(f);
    assert_string_equal(buf, whole.buf);
    free(buf);
    strbuf_release(&whole);

    /* JSON: the verdict and every run's metrics, with or without --trust-table */
    strbuf_init(&sb, 0);
    report_experiment(&sb, &x.cfg, &x.res, REPORT_SEED000, REPORT_JSON);
    json_t *j = json_loads(sb.buf, 0, NULL);
    assert_non_null(j);
    assert_non_null(json_object_get(j, "verdict"));
    assert_int_equal(json_array_size(json_object_get(j, "runs_metrics")), 18);
    /* improvement_pct of every variant cell = the change_pct of its vs_baseline */
    size_t i;
    json_t *c;
    int checked = 0;
    json_array_foreach(json_object_get(j, "cells"), i, c) {
        json_t *vb = json_object_get(c, "vs_baseline");
        if (!json_is_object(vb) || !json_is_number(json_object_get(c, "improvement_pct")))
            continue;
        assert_true(fabs(json_number_value(json_object_get(c, "improvement_pct")) -
                         json_number_value(json_object_get(vb, "change_pct"))) < 1e-9);
        checked++;
    }
    assert_true(checked >= 12);
    json_decref(j);
    strbuf_release(&sb);
    experiment_result_release(&x.res);
}

/* --target-ci: the change is the geometric mean of the per-round ratios (paired), which is
 * not the ratio of the medians; the % improvement is that same estimate (the demo's "+17.11"
 * beside "+15.5%" came from printing the ratio of medians beside it). */
static void test_sequential_same_estimate(void **state)
{
    (void)state;
    static const double base[] = { 1000, 1400, 900, 1200, 1100, 950, 1300, 1000 };
    static const double var[] = { 1250, 1500, 1150, 1300, 1180, 1200, 1350, 1300 };
    struct synth x;
    one_cell(&x, base, var, 8);
    x.cfg.target_ci = 5;
    x.cfg.rounds = 20;
    struct experiment_change ch;
    int w = 0, t = 1;
    assert_int_equal(experiment_change_cfg(&x.cfg, &x.res, METRIC_TPS, 1, &w, &t, 1, 0, &ch), 0);
    assert_true(ch.sequential && ch.stats);
    double pct = experiment_change_pct(&ch, NULL, NULL);
    /* medians: 1050 and 1275 (+21.43%); the per-round ratios' geometric mean differs */
    assert_true(fabs(pct - 21.43) > 0.5);
    char *text = report_string(&x.cfg, &x.res);
    char *want = xasprintf(ch.significant ? "%+.2f" : "(%+.2f)", pct);
    assert_row(text, "Table 1.", "1", want);
    free(want);
    free(text);
    experiment_result_release(&x.res);
}

/* Give every run of x system metrics (trusted: nothing above a threshold), and the runs of
 * variant v in rounds [from, to] 50% steal (distrusted). */
static void set_trust(struct synth *x, int v, int from, int to)
{
    for (int i = 0; i < x->res.nruns; i++) {
        struct run_result *r = &x->res.runs[i];
        r->metrics.available = true;
        r->metrics.cores_used = 1;
        r->metrics.steal_pct = r->variant == v && r->round >= from && r->round <= to ? 50 : 0;
        r->metrics.flags = metrics_flags(&r->metrics);
    }
}

/* --exclude-distrusted: two slow runs of the variant under 50% steal hide a +20% gain; left
 * out (experiment_result_exclude_distrusted()), the gain is significant, and the header, the
 * verdict's text and its JSON say how many runs were left out. On a busy machine whose runs
 * were left out down to too few for statistics, the next step is a rerun, not more rounds. */
static void test_exclude_distrusted(void **state)
{
    (void)state;
    static const double base[] = { 1000, 1010, 990, 1005, 995, 1002, 998, 1001 };
    static const double var[] = { 500, 505, 1188, 1206, 1194, 1202, 1198, 1201 };
    struct synth x;
    struct verdict vd;
    one_cell(&x, base, var, 8);
    set_trust(&x, 1, 1, 2);
    x.res.runs[15].metrics.available = false;  /* no metrics: cannot be judged, stays */
    x.res.resumed = 4;                         /* rounds 1 and 2 came from the store */
    report_verdict_compute(&x.cfg, &x.res, &vd);
    assert_false(vd.vars[0].gain[0].ch.significant);
    assert_int_equal(vd.distrusted, 2);
    char *text = verdict_text(&x.cfg, &vd);
    assert_non_null(strstr(text, "; 2 of 15 runs distrusted\n"));
    assert_null(strstr(text, "left out"));
    free(text);
    json_t *j = report_verdict_json(&x.cfg, &vd);
    assert_null(json_object_get(j, "distrusted_runs_left_out"));  /* as before the option */
    json_decref(j);
    report_verdict_release(&vd);

    assert_int_equal(experiment_result_exclude_distrusted(&x.res), 2);
    assert_true(x.res.exclude_distrusted);
    assert_int_equal(x.res.nruns, 14);
    assert_int_equal(x.res.excluded, 2);
    assert_int_equal(experiment_runs_done(&x.res), 16);
    assert_int_equal(x.res.resumed, 2);
    for (int i = 0; i < x.res.nruns; i++)  /* in order, the flagged ones gone */
        assert_true(!metrics_flags(&x.res.runs[i].metrics) &&
                    (i == 0 || x.res.runs[i - 1].round <= x.res.runs[i].round));
    report_verdict_compute(&x.cfg, &x.res, &vd);
    assert_true(vd.vars[0].gain[0].ch.significant);
    assert_int_equal(vd.vars[0].next, VERDICT_RESOLVED);
    assert_int_equal(vd.excluded, 2);
    text = verdict_text(&x.cfg, &vd);
    assert_non_null(strstr(text, " better; significant in 1 of 1 cell"));
    assert_non_null(strstr(text, "; 2 of 15 runs distrusted, 2 left out (--exclude-distrusted)\n"));
    free(text);
    j = report_verdict_json(&x.cfg, &vd);
    assert_int_equal(json_integer_value(json_object_get(j, "distrusted_runs_left_out")), 2);
    assert_int_equal(json_integer_value(json_object_get(j, "distrusted_runs")), 2);
    json_decref(j);
    report_verdict_release(&vd);
    text = report_string(&x.cfg, &x.res);
    assert_non_null(strstr(text, "  --exclude-distrusted: 2 distrusted runs left out of every "
                                 "number below (14 of 16 runs used)\n"));
    assert_null(strstr(text, "INCOMPLETE"));
    free(text);
    experiment_result_release(&x.res);

    /* a busy machine (3 of 8 runs distrusted) left with 1 run of the variant: rerun */
    one_cell(&x, base, base, 4);
    set_trust(&x, 1, 1, 3);
    experiment_result_exclude_distrusted(&x.res);
    report_verdict_compute(&x.cfg, &x.res, &vd);
    assert_true(vd.busy);
    assert_int_equal(vd.vars[0].next, VERDICT_BUSY);
    text = verdict_text(&x.cfg, &vd);
    assert_non_null(strstr(text, "next: not resolved: the machine was busy (3 of 8 runs "
                                 "distrusted): rerun when it is quiet"));
    free(text);
    report_verdict_release(&vd);
    experiment_result_release(&x.res);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_verdict_significant),
        cmocka_unit_test(test_verdict_needs_rounds),
        cmocka_unit_test(test_verdict_busy_and_one_round),
        cmocka_unit_test(test_verdict_instructions),
        cmocka_unit_test(test_contradictions),
        cmocka_unit_test(test_report_layout),
        cmocka_unit_test(test_sequential_same_estimate),
        cmocka_unit_test(test_exclude_distrusted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
