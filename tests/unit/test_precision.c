/* Unit tests for model/precision.c: the paired per-round log ratios, one cell's precision
 * (fixed and sequential), --target-ci's cell count and stop reason, and the change the
 * reports show under --target-ci, on synthetic runs with hand-computed values. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>

#include "experiment_fixtures.h"
#include "model/precision.h"
#include "report/step_gains.h"
#include "stats/compare.h"
#include "stats/sequential.h"

static void assert_close(double got, double want, double tol)
{
    if (!(fabs(got - want) <= tol))
        fail_msg("got %.10g, want %.10g (tolerance %g)", got, want, tol);
}

/* threads 1 only: base 100 every round, pgo 100 * f[k] in round k */
static void pair_runs(struct experiment_result *res, const double *f, int rounds)
{
    memset(res, 0, sizeof(*res));
    for (int k = 1; k <= rounds; k++) {
        add_run(res, 1, 1, k, 100 * f[k - 1], 2, 4); /* the variant first: order must not matter */
        add_run(res, 0, 1, k, 100, 2, 4);
    }
}

static void test_log_ratios_paired_by_round(void **state)
{
    (void)state;
    struct experiment_result res;
    const double f[] = { 1.1, 0.9, 1.2 };
    pair_runs(&res, f, 3);
    add_run(&res, 0, 1, 4, 100, 2, 4); /* round 4: baseline only, not paired */
    int n;
    double *d = experiment_round_log_ratios(&res, METRIC_TPS, 1, 0, 1, &n);
    assert_int_equal(n, 3);
    assert_close(d[0], log(1.1), 1e-12);
    assert_close(d[1], log(0.9), 1e-12);
    assert_close(d[2], log(1.2), 1e-12);
    free(d);
    d = experiment_round_log_ratios(&res, METRIC_TPS, 1, 0, 4, &n); /* no such cell */
    assert_int_equal(n, 0);
    free(d);
    experiment_result_release(&res);
}

static void test_cell_fixed_and_sequential(void **state)
{
    (void)state;
    struct synth x;
    const double f[] = { 1.10, 1.12, 1.08, 1.11, 1.09, 1.10 };
    synthetic_config(&x.cfg, x.v, 6);
    x.cfg.nthreads = 1;
    pair_runs(&x.res, f, 6);

    double d[6];
    for (int i = 0; i < 6; i++)
        d[i] = log(f[i]);
    struct stats_cs t, cs;
    assert_int_equal(stats_t_interval(d, 6, 0.05, &t), 0);

    /* fixed --rounds: the paired t interval, the Mann-Whitney detectable change */
    struct experiment_precision p;
    experiment_precision_cell(&x.cfg, &x.res, METRIC_TPS, 1, 0, 1, &p);
    assert_int_equal(p.rounds, 6);
    assert_true(p.stats);
    assert_false(p.sequential);
    assert_false(p.reached);
    assert_close(p.ratio, exp(t.mean), 1e-12);
    assert_close(p.ci_lo, exp(t.lo), 1e-12);
    assert_close(p.half_pct, (exp(t.half) - 1) * 100, 1e-9);
    assert_close(p.cv_base, 0, 1e-12); /* the baseline is 100 in every round */
    double mean = 0, ss = 0;
    for (int i = 0; i < 6; i++)
        mean += 100 * f[i] / 6;
    for (int i = 0; i < 6; i++)
        ss += (100 * f[i] - mean) * (100 * f[i] - mean);
    assert_close(p.cv_var, sqrt(ss / 5) / mean, 1e-12);
    double cv = sqrt(p.cv_var * p.cv_var / 2);
    assert_close(p.detectable_pct, stats_detectable_change(cv, 6, 0.05, 0.8) * 100, 1e-9);

    /* --target-ci=5 (cs_rounds 10): the sequence; reached when its half-width is <= 5% */
    x.cfg.target_ci = 5;
    x.cfg.cs_rounds = 10;
    assert_int_equal(stats_cs_mean(d, 6, 0.05, 10, &cs), 0);
    experiment_precision_cell(&x.cfg, &x.res, METRIC_TPS, 1, 0, 1, &p);
    assert_true(p.sequential);
    assert_close(p.ci_hi, exp(cs.hi), 1e-12);
    assert_close(p.half_pct, (exp(cs.half) - 1) * 100, 1e-9);
    assert_true(p.half_pct > (exp(t.half) - 1) * 100); /* wider than the fixed interval */
    assert_true(p.reached == (p.half_pct <= 5));
    assert_true(p.reached); /* +-1% around 10%: a narrow sequence */
    int reached;
    assert_int_equal(experiment_target_cells(&x.cfg, &x.res, -1, &reached, NULL), 1);
    assert_int_equal(reached, 1);
    assert_string_equal(experiment_target_stop_reason(&x.cfg, &x.res), "target reached");

    /* a target it misses: with 6 of 6 rounds it is the cap; with a cap of 50 the time */
    x.cfg.target_ci = 0.5;
    experiment_precision_cell(&x.cfg, &x.res, METRIC_TPS, 1, 0, 1, &p);
    assert_false(p.reached);
    assert_string_equal(experiment_target_stop_reason(&x.cfg, &x.res), "--max-rounds");
    x.cfg.rounds = 50;
    assert_string_equal(experiment_target_stop_reason(&x.cfg, &x.res), "--max-time");

    /* the change the reports show: the same sequence, significant (it excludes 1) */
    struct experiment_change ch;
    int ws[1] = { 0 }, ts[1] = { 1 };
    assert_int_equal(experiment_change_cfg(&x.cfg, &x.res, METRIC_TPS, 1, ws, ts, 1, 1, &ch), 0);
    assert_true(ch.sequential);
    assert_true(ch.stats);
    assert_true(ch.significant);
    assert_close(ch.ratio, exp(cs.mean), 1e-12);
    assert_close(ch.ci_lo, exp(cs.lo), 1e-12);
    assert_close(ch.p_value, cs.p_value, 1e-12);
    /* without --target-ci it is experiment_change()'s (ratio of medians) */
    x.cfg.target_ci = 0;
    assert_int_equal(experiment_change_cfg(&x.cfg, &x.res, METRIC_TPS, 1, ws, ts, 1, 1, &ch), 0);
    assert_false(ch.sequential);
    assert_close(ch.ratio, 1.10, 1e-12);
    experiment_result_release(&x.res);
}

/* Under --target-ci, fewer than STATS_CS_MIN_ROUNDS rounds give no CI, and the Average row is
 * the sequence of the per-round mean over the cells. */
static void test_change_few_rounds_and_pooled(void **state)
{
    (void)state;
    struct synth x;
    synthetic_config(&x.cfg, x.v, 20);
    x.cfg.target_ci = 2;
    x.cfg.cs_rounds = 10;
    slow_runs(&x.res, 4, 0.8);
    struct experiment_change ch;
    int ws[3] = { 0, 0, 0 };
    assert_int_equal(experiment_change_cfg(&x.cfg, &x.res, METRIC_TPS, 1, ws, threads3, 1, 1, &ch), 0);
    assert_false(ch.stats);
    struct strbuf sb = STRBUF_INIT;
    experiment_change_format(&sb, &ch);
    assert_string_equal(sb.buf, "no statistics before 5 rounds");
    strbuf_release(&sb);
    experiment_result_release(&x.res);

    slow_runs(&x.res, 6, 0.8);
    assert_int_equal(experiment_change_cfg(&x.cfg, &x.res, METRIC_TPS, 1, ws, threads3, 3, 1, &ch), 0);
    assert_true(ch.pooled);
    assert_int_equal(ch.ncells, 3);
    /* per round the mean over the three cells of log(pgo / base): the same in every cell
     * (the noise of slow_runs depends on the round only) */
    static const double nb[] = { 0, .02, -.02, .01, -.01, .015 }, nv[] = { .01, -.02, 0, .02, -.01, .005 };
    double d[6];
    for (int k = 0; k < 6; k++)
        d[k] = log(0.8 * (1 + nv[k]) / (1 + nb[k]));
    struct stats_cs cs;
    assert_int_equal(stats_cs_mean(d, 6, 0.05, 10, &cs), 0);
    assert_close(ch.ratio, exp(cs.mean), 1e-12);
    assert_close(ch.ci_hi, exp(cs.hi), 1e-12);
    assert_true(ch.significant);
    assert_true(ch.ci_hi < 1);
    experiment_result_release(&x.res);
}

/* "what each step added" under --target-ci: pgo+bolt over pgo is the sequence of the per-round
 * log ratios pgo+bolt / pgo (the runs of a round paired), not a comparison of medians. The
 * rounds are built so that the two disagree: pgo+bolt is 2% above pgo in every round, while
 * the rounds' shared noise (+-10%) swamps that for an unpaired test. */
static void test_step_over_paired(void **state)
{
    (void)state;
    struct experiment_config cfg;
    struct variant v[3];
    struct experiment_result res;
    static const double noise[] = { 1.00, 1.10, 0.90, 1.05, 0.95, 1.08, 0.92, 1.02, 0.98, 1.06 };
    static const double wig[] = { 0.001, -0.002, 0.0015, 0.0, -0.001, 0.002, -0.0005, 0.001,
                                  -0.0015, 0.0005 };
    enum { R = 10 };
    synthetic_config(&cfg, v, R);
    v[2] = v[1];
    v[2].name = "pgo+bolt";
    cfg.nvariants = 3;
    cfg.nthreads = 1;
    memset(&res, 0, sizeof(res));
    for (int k = 1; k <= R; k++) {
        add_run(&res, 0, 1, k, 100 * noise[k - 1], 2, 4);
        add_run(&res, 1, 1, k, 110 * noise[k - 1], 2, 4);
        add_run(&res, 2, 1, k, 110 * 1.02 * (1 + wig[k - 1]) * noise[k - 1], 2, 4);
    }
    int ws[1] = { 0 }, ts[1] = { 1 };
    struct experiment_change ch, fixed;

    /* fixed rounds: experiment_change_over()'s ratio of medians, not significant */
    assert_int_equal(experiment_change_cfg_over(&cfg, &res, METRIC_TPS, 1, 2, ws, ts, 1, 1, &fixed), 0);
    assert_false(fixed.sequential);
    assert_false(fixed.significant);

    cfg.target_ci = 2;
    cfg.cs_rounds = 10;
    double d[R];
    for (int k = 0; k < R; k++)
        d[k] = log(1.02 * (1 + wig[k]));
    struct stats_cs cs;
    assert_int_equal(stats_cs_mean(d, R, 0.05, 10, &cs), 0);
    assert_int_equal(experiment_change_cfg_over(&cfg, &res, METRIC_TPS, 1, 2, ws, ts, 1, 1, &ch), 0);
    assert_true(ch.sequential);
    assert_true(ch.stats);
    assert_true(ch.significant);
    assert_close(ch.ratio, exp(cs.mean), 1e-12);
    assert_close(ch.ci_lo, exp(cs.lo), 1e-12);
    assert_close(ch.ci_hi, exp(cs.hi), 1e-12);
    /* base 0 is experiment_change_cfg() */
    struct experiment_change c0, c1;
    assert_int_equal(experiment_change_cfg_over(&cfg, &res, METRIC_TPS, 0, 1, ws, ts, 1, 1, &c0), 0);
    assert_int_equal(experiment_change_cfg(&cfg, &res, METRIC_TPS, 1, ws, ts, 1, 1, &c1), 0);
    assert_close(c0.ratio, c1.ratio, 0);
    assert_close(c0.ratio, 1.10, 1e-12);

    /* the report line shows the sequence's numbers */
    struct strbuf sb = STRBUF_INIT;
    report_steps(&sb, &cfg, &res);
    char want[160];
    snprintf(want, sizeof(want), "pgo+bolt   bolt over pgo: %+.1f%% (95%% CI %+.1f%% .. %+.1f%%)\n",
             (exp(cs.mean) - 1) * 100, (exp(cs.lo) - 1) * 100, (exp(cs.hi) - 1) * 100);
    if (!strstr(sb.buf, want))
        fail_msg("no line '%s' in:\n%s", want, sb.buf);
    strbuf_release(&sb);

    /* before STATS_CS_MIN_ROUNDS paired rounds: the point estimate, no statistics */
    for (int i = 0; i < res.nruns; i++)
        if (res.runs[i].round > 3)
            res.runs[i].variant = 9; /* no such variant: rounds 4.. are not pgo+bolt's */
    sb = (struct strbuf)STRBUF_INIT;
    report_steps(&sb, &cfg, &res);
    if (!strstr(sb.buf, "(no statistics before 5 rounds)"))
        fail_msg("no 'no statistics before 5 rounds' in:\n%s", sb.buf);
    strbuf_release(&sb);
    experiment_result_release(&res);
}

/* The widest sd of the per-round log ratios over the cells: one cell with data here (threads
 * 1), the others (4, 16) none; with a single paired round there is none. */
static void test_round_log_sd_max(void **state)
{
    (void)state;
    struct synth x;
    const double f[] = { 1.1, 0.9, 1.2 };
    synthetic_config(&x.cfg, x.v, 3);
    pair_runs(&x.res, f, 3);
    double d[3] = { log(1.1), log(0.9), log(1.2) }, mean = (d[0] + d[1] + d[2]) / 3, ss = 0;
    for (int i = 0; i < 3; i++)
        ss += (d[i] - mean) * (d[i] - mean);
    assert_close(experiment_round_log_sd_max(&x.cfg, &x.res, METRIC_TPS, 1), sqrt(ss / 2), 1e-12);
    experiment_result_release(&x.res);
    pair_runs(&x.res, f, 1);
    assert_true(isnan(experiment_round_log_sd_max(&x.cfg, &x.res, METRIC_TPS, 1)));
    experiment_result_release(&x.res);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_log_ratios_paired_by_round),
        cmocka_unit_test(test_round_log_sd_max),
        cmocka_unit_test(test_cell_fixed_and_sequential),
        cmocka_unit_test(test_change_few_rounds_and_pooled),
        cmocka_unit_test(test_step_over_paired),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
