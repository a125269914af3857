/* Unit tests for stats/compare.c: Mann-Whitney vs enumeration, tables, a textbook and hand
 * computations; bootstrap CIs by (small, fast) simulations; formatting; geomean; calibration. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "stats/compare.h"
#include "util/strbuf.h"
#include "util/util.h"

#define NELEM(a) ((int)(sizeof(a) / sizeof((a)[0])))

static void assert_close(double got, double want, double tol)
{
    if (!(fabs(got - want) <= tol))
        fail_msg("got %.10g, want %.10g (tolerance %g)", got, want, tol);
}

/* ---- summary ---- */

static void test_summary(void **state)
{
    (void)state;
    struct stats_summary s;
    const double odd[] = { 3, 1, 2, 5, 4 };
    assert_int_equal(stats_summarize(odd, 5, &s), 0);
    assert_int_equal(s.n, 5);
    assert_close(s.median, 3, 0);
    assert_close(s.mean, 3, 1e-12);
    assert_close(s.stddev, sqrt(2.5), 1e-12); /* (4+1+0+1+4)/(5-1) = 2.5 */
    assert_close(s.min, 1, 0);
    assert_close(s.max, 5, 0);
    assert_close(odd[0], 3, 0); /* input untouched */

    const double even[] = { 4, 1, 3, 2 };
    assert_int_equal(stats_summarize(even, 4, &s), 0);
    assert_close(s.median, 2.5, 0);
    assert_close(s.stddev, sqrt(5.0 / 3), 1e-12); /* (2.25+.25+.25+2.25)/3 */

    const double one[] = { 7 };
    assert_int_equal(stats_summarize(one, 1, &s), 0);
    assert_close(s.median, 7, 0);
    assert_true(isnan(s.stddev));

    const double bad[] = { 1, NAN };
    assert_int_equal(stats_summarize(bad, 2, &s), -1);
    assert_int_equal(stats_summarize(odd, 0, &s), -1);
    assert_int_equal(stats_summarize(NULL, 3, &s), -1);
}

/* ---- Mann-Whitney ---- */

/* U of a by direct pair counting: the definition, independent of ranking. */
static double pairs_u(const double *a, int n1, const double *b, int n2)
{
    double u = 0;
    for (int i = 0; i < n1; i++)
        for (int j = 0; j < n2; j++)
            u += a[i] > b[j] ? 1 : a[i] == b[j] ? 0.5 : 0;
    return u;
}

static void test_mw_u_with_ties(void **state)
{
    (void)state;
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 7);
    static const int sizes[][2] = { { 1, 1 }, { 2, 7 }, { 5, 5 }, { 13, 9 }, { 60, 45 } };
    for (int s = 0; s < NELEM(sizes); s++) {
        int n1 = sizes[s][0], n2 = sizes[s][1];
        double a[60], b[60];
        for (int i = 0; i < n1; i++)
            a[i] = (double)gsl_rng_uniform_int(r, 6); /* few distinct values: many ties */
        for (int j = 0; j < n2; j++)
            b[j] = (double)gsl_rng_uniform_int(r, 6) + 0.5 * (double)gsl_rng_uniform_int(r, 2);
        struct stats_mw mw;
        assert_int_equal(stats_mann_whitney(a, n1, b, n2, &mw), 0);
        assert_close(mw.u, pairs_u(a, n1, b, n2), 1e-9);
        assert_true(mw.p > 0 && mw.p <= 1);
        /* swapping the groups mirrors U and keeps p */
        struct stats_mw sw;
        assert_int_equal(stats_mann_whitney(b, n2, a, n1, &sw), 0);
        assert_close(sw.u, (double)n1 * n2 - mw.u, 1e-9);
        assert_close(sw.p, mw.p, 1e-12);
    }
    gsl_rng_free(r);
}

/* Exact test vs brute force: enumerate every placement of the n1 a-ranks among N = n1 + n2
 * (all C(N, n1) subsets as bitmasks), tabulate U, and compute the two-sided p of each
 * observed U as P(|U - mu| >= |u_obs - mu|). Enumeration, not the recurrence the code uses.
 * Then feed every subset as data (unsorted, scaled) and compare. */
static void check_exact_vs_enumeration(int n1, int n2)
{
    int N = n1 + n2, umax = n1 * n2;
    double mu = umax / 2.0;
    long hist[64] = { 0 }, total = 0;
    for (unsigned m = 0; m < (1u << N); m++) {
        if (__builtin_popcount(m) != n1)
            continue;
        int u = 0, b_below = 0;
        for (int r = 0; r < N; r++) {
            if (m >> r & 1)
                u += b_below;
            else
                b_below++;
        }
        hist[u]++;
        total++;
    }
    for (unsigned m = 0; m < (1u << N); m++) {
        if (__builtin_popcount(m) != n1)
            continue;
        double a[16], b[16];
        int na = 0, nb = 0;
        for (int r = 0; r < N; r++) {
            double v = 1.5 * (r + 1) + 0.25;
            if (m >> r & 1)
                a[na++] = v;
            else
                b[n2 - 1 - nb++] = v; /* descending: input order must not matter */
        }
        struct stats_mw mw;
        assert_int_equal(stats_mann_whitney(a, n1, b, n2, &mw), 0);
        assert_true(mw.exact);
        assert_false(mw.ties);
        long cnt = 0;
        for (int k = 0; k <= umax; k++)
            if (fabs(k - mu) >= fabs(mw.u - mu) - 1e-9)
                cnt += hist[k];
        assert_close(mw.p, (double)cnt / (double)total, 1e-12);
    }
}

static void test_mw_exact_vs_enumeration(void **state)
{
    (void)state;
    static const int sizes[][2] = { { 1, 1 }, { 1, 5 }, { 2, 3 }, { 3, 3 }, { 4, 4 },
                                    { 3, 7 }, { 5, 5 }, { 6, 6 }, { 7, 7 }, { 5, 9 } };
    for (int s = 0; s < NELEM(sizes); s++)
        check_exact_vs_enumeration(sizes[s][0], sizes[s][1]);
}

/* Data with n1 = n2 = n, no ties and U of a equal to u: b = 1..n, each a_i sits above c_i
 * of the b values (sum c_i = u), offset so the a values are distinct. */
static void make_u(int n, int u, double *a, double *b)
{
    for (int j = 0; j < n; j++)
        b[j] = j + 1;
    for (int i = 0; i < n; i++) {
        int c = u > n ? n : u;
        u -= c;
        a[i] = c + 0.1 + 0.001 * i;
    }
}

/* Critical values of U for a two-tailed test at alpha = 0.05, n1 = n2 = n, as printed in the
 * common published Mann-Whitney tables (Mann & Whitney 1947; Auble 1953): U <= crit is
 * significant, crit + 1 is not. (n = 3 has no critical value: min p = 0.1.) The table was
 * re-checked by full enumeration outside this test. */
static void test_mw_critical_values(void **state)
{
    (void)state;
    static const int table[][2] = { { 4, 0 },  { 5, 2 },  { 6, 5 },  { 7, 8 },
                                    { 8, 13 }, { 9, 17 }, { 10, 23 }, { 20, 127 } };
    for (int t = 0; t < NELEM(table); t++) {
        int n = table[t][0], crit = table[t][1];
        double a[20], b[20];
        struct stats_mw mw;
        make_u(n, crit, a, b);
        assert_int_equal(stats_mann_whitney(a, n, b, n, &mw), 0);
        assert_close(mw.u, crit, 0);
        assert_true(mw.exact);
        if (!(mw.p <= 0.05))
            fail_msg("n=%d U=%d: p=%g, table says significant", n, crit, mw.p);
        make_u(n, crit + 1, a, b);
        assert_int_equal(stats_mann_whitney(a, n, b, n, &mw), 0);
        if (!(mw.p > 0.05))
            fail_msg("n=%d U=%d: p=%g, table says not significant", n, crit + 1, mw.p);
    }
}

/* Textbook example: permeability constants of the human chorioamnion, Hollander & Wolfe,
 * Nonparametric Statistical Methods (1973), p. 69 (also the example in R's ?wilcox.test).
 * R: wilcox.test(x, y, alternative = "greater") gives W = 35, p-value = 0.1272 (exact);
 * two-sided = 2 * 0.1272061 = 0.2544122 (382/3003, confirmed by enumeration). */
static void test_mw_textbook(void **state)
{
    (void)state;
    const double x[] = { 0.80, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91, 1.64, 0.73, 1.46 };
    const double y[] = { 1.15, 0.88, 0.90, 0.74, 1.21 };
    struct stats_mw mw;
    assert_int_equal(stats_mann_whitney(x, 10, y, 5, &mw), 0);
    assert_close(mw.u, 35, 0);
    assert_true(mw.exact);
    assert_close(mw.p, 2 * 0.1272, 1e-4);
    assert_close(mw.p, 764.0 / 3003.0, 1e-12);
}

/* Normal approximation with ties, by hand:
 *   a = 10 11 12 12 13 14, b = 12 14 15 16 16 17, N = 12
 *   ranks: 10:1 11:2 12,12,12:4 13:6 14,14:7.5 15:9 16,16:10.5 17:12
 *   R_a = 1+2+4+4+6+7.5 = 24.5, U_a = 24.5 - 6*7/2 = 3.5, mu = 36/2 = 18
 *   ties: t=3,2,2 -> sum(t^3-t) = 24+6+6 = 36
 *   sigma^2 = 36/12 * (13 - 36/(12*11)) = 3 * 12.727273 = 38.181818, sigma = 6.179143
 *   z = (|3.5 - 18| - 0.5) / 6.179143 = 14 / 6.179143 = 2.26569
 *   normal table: Phi(2.26) = 0.98809, Phi(2.27) = 0.98840 -> Phi(2.2657) = 0.98827
 *   p = 2 * (1 - 0.98827) = 0.02346 */
static void test_mw_normal_hand(void **state)
{
    (void)state;
    const double a[] = { 14, 10, 12, 11, 13, 12 };
    const double b[] = { 16, 12, 17, 14, 15, 16 };
    struct stats_mw mw;
    assert_int_equal(stats_mann_whitney(a, 6, b, 6, &mw), 0);
    assert_false(mw.exact);
    assert_true(mw.ties);
    assert_close(mw.u, 3.5, 0);
    assert_close(mw.z, 2.26569, 1e-5);
    assert_close(mw.p, 0.02346, 2e-4);
}

/* Large samples, no ties (beyond the exact limit), by hand:
 *   n1 = n2 = 50, U = 1000 (each a above 20 of the b values), mu = 1250
 *   sigma^2 = 2500/12 * 101 = 21041.667, sigma = 145.0575
 *   z = (250 - 0.5) / 145.0575 = 1.72001; table Phi(1.72) = 0.95728 -> p = 0.08544 */
static void test_mw_normal_large(void **state)
{
    (void)state;
    double a[50], b[50];
    make_u(50, 1000, a, b);
    struct stats_mw mw;
    assert_int_equal(stats_mann_whitney(a, 50, b, 50, &mw), 0);
    assert_false(mw.exact);
    assert_false(mw.ties);
    assert_close(mw.u, 1000, 0);
    assert_close(mw.z, 1.72001, 1e-5);
    assert_close(mw.p, 0.08544, 1e-4);
    /* one below the limit the exact distribution is used and agrees closely */
    make_u(STATS_MW_EXACT_LIMIT - 1, 960, a, b);
    assert_int_equal(stats_mann_whitney(a, 49, b, 49, &mw), 0);
    assert_true(mw.exact);
    /* hand: mu = 1200.5, sigma^2 = 2401/12 * 99 = 19808.25, z = 240/140.7418 = 1.70526,
     * normal p = 0.0881; the exact p must be within 0.002 of it */
    assert_close(mw.p, 0.0881, 2e-3);
}

/* Heavy ties at tiny n: {1,1,1} vs {2,2,2}. Normal approximation alone:
 * sigma^2 = 9/12 * (7 - 48/30) = 4.05, z = (4.5 - 0.5)/2.0125 = 1.988, p = 0.0469 < 0.05;
 * but no rank test on 3 + 3 values can go below 2/C(6,3) = 0.1. */
static void test_mw_floor_with_ties(void **state)
{
    (void)state;
    const double a[] = { 1, 1, 1 }, b[] = { 2, 2, 2 };
    struct stats_mw mw;
    assert_int_equal(stats_mann_whitney(a, 3, b, 3, &mw), 0);
    assert_false(mw.exact);
    assert_close(mw.z, 1.98762, 1e-4);
    assert_close(mw.p, 0.1, 1e-12);
    /* all equal: no evidence at all */
    const double c[] = { 5, 5, 5, 5 };
    assert_int_equal(stats_mann_whitney(c, 2, c + 2, 2, &mw), 0);
    assert_close(mw.p, 1, 0);
    assert_close(mw.u, 2, 0);
    const double bad[] = { 1, INFINITY };
    assert_int_equal(stats_mann_whitney(a, 3, bad, 2, &mw), -1);
    assert_int_equal(stats_mann_whitney(a, 0, b, 3, &mw), -1);
}

static void test_min_p(void **state)
{
    (void)state;
    assert_close(stats_mw_min_p(3, 3), 0.1, 0);           /* 2/20, exactly */
    assert_close(stats_mw_min_p(4, 4), 2.0 / 70, 0);      /* 0.0286 */
    assert_close(stats_mw_min_p(5, 5), 2.0 / 252, 1e-12);
    assert_close(stats_mw_min_p(3, 5), 2.0 / 56, 1e-12);
    assert_close(stats_mw_min_p(1, 1), 1, 0);              /* 2/2 */
    assert_close(stats_mw_min_p(2, 1), 2.0 / 3, 1e-12);
    /* large N: log space (C(400,200) = 1.03e119), and the two branches meet at N = 170 */
    double big = stats_mw_min_p(200, 200);
    assert_true(big > 1e-120 && big < 1e-118);
    /* C(171,85) / C(170,85) = 171/86 */
    assert_close(stats_mw_min_p(85, 86) / stats_mw_min_p(85, 85), 86.0 / 171, 1e-9);
    assert_true(isnan(stats_mw_min_p(0, 3)));
    /* it is the p of the most extreme data, for the exact test */
    for (int n1 = 1; n1 <= 8; n1++)
        for (int n2 = 1; n2 <= 8; n2++) {
            double a[8], b[8];
            for (int i = 0; i < n1; i++)
                a[i] = i;
            for (int j = 0; j < n2; j++)
                b[j] = 100 + j;
            struct stats_mw mw;
            assert_int_equal(stats_mann_whitney(a, n1, b, n2, &mw), 0);
            assert_close(mw.p, stats_mw_min_p(n1, n2), 1e-12);
        }
    assert_int_equal(stats_min_rounds(0.05), 4);
    assert_int_equal(stats_min_rounds(0.1), 4); /* strict: 3 rounds give exactly 0.1 */
    assert_int_equal(stats_min_rounds(0.01), 5);
    assert_int_equal(stats_min_rounds(0), -1);
    assert_int_equal(stats_min_rounds(1), -1);
}

/* ---- ratio, bootstrap, verdict ---- */

static void test_ratio_ci_basics(void **state)
{
    (void)state;
    const double a[] = { 100, 104, 98, 101, 97 };  /* median 100 */
    const double b[] = { 111, 108, 115, 110, 112 }; /* median 111 */
    struct stats_interval x, y, z;
    assert_int_equal(stats_ratio_ci(a, 5, b, 5, 0.95, 2000, 42, &x), 0);
    assert_close(x.ratio, 1.11, 1e-12);
    assert_close(x.level, 0.95, 0);
    assert_true(x.ci_lo <= x.ratio && x.ratio <= x.ci_hi);
    /* the CI can only hold ratios of a data value of b to one of a */
    assert_true(x.ci_lo >= 108.0 / 104 - 1e-12 && x.ci_hi <= 115.0 / 97 + 1e-12);
    assert_true(x.ci_lo > 1);
    /* same seed -> bit-identical; another seed -> (almost surely) different replicates */
    assert_int_equal(stats_ratio_ci(a, 5, b, 5, 0.95, 2000, 42, &y), 0);
    assert_true(x.ci_lo == y.ci_lo && x.ci_hi == y.ci_hi);
    assert_int_equal(stats_ratio_ci(a, 5, b, 5, 0.5, 2000, 43, &z), 0);
    assert_true(z.ci_hi - z.ci_lo < x.ci_hi - x.ci_lo); /* 50% CI narrower than 95% */
    /* n = 1: nothing to resample */
    assert_int_equal(stats_ratio_ci(a, 1, b, 1, 0.95, 100, 1, &z), 0);
    assert_close(z.ratio, 1.11, 1e-12);
    assert_close(z.ci_lo, 1.11, 1e-12);
    assert_close(z.ci_hi, 1.11, 1e-12);
    /* invalid: non-positive values, bad level, no resamples */
    const double zero[] = { 1, 0 };
    assert_int_equal(stats_ratio_ci(zero, 2, b, 5, 0.95, 100, 1, &z), -1);
    assert_int_equal(stats_ratio_ci(a, 5, b, 5, 1.0, 100, 1, &z), -1);
    assert_int_equal(stats_ratio_ci(a, 5, b, 5, 0.95, 0, 1, &z), -1);
}

/* Percentile semantics against a bootstrap distribution known exactly. a = {1} (n1 = 1)
 * never varies; b = {1,2,2,2}: the median of 4 draws is the mean of the 2nd and 3rd smallest,
 * so with k draws of the value 1 (k ~ Binomial(4, 1/4)):
 *   median 1   iff k >= 3: 4(1/4)^3(3/4) + (1/4)^4 = 13/256 = 0.0508
 *   median 1.5 iff k == 2: 6(1/4)^2(3/4)^2      = 54/256 = 0.2109   (cumulative 0.2617)
 *   median 2   otherwise                                 = 0.7383
 * Level 0.6 -> quantiles 0.2 and 0.8 -> ratios 1.5 and 2; level 0.95 -> 0.025 -> 1.
 * Mirrored (a = {1,2,2,2}, b = {2}): ratios 2, 4/3, 1 with the same probabilities. */
static void test_ratio_ci_quantiles(void **state)
{
    (void)state;
    const double one[] = { 1 }, two[] = { 2 }, mix[] = { 1, 2, 2, 2 };
    struct stats_interval x;
    assert_int_equal(stats_ratio_ci(one, 1, mix, 4, 0.6, 2000, 8, &x), 0);
    assert_close(x.ratio, 2, 0);
    assert_close(x.ci_lo, 1.5, 0);
    assert_close(x.ci_hi, 2, 0);
    assert_int_equal(stats_ratio_ci(one, 1, mix, 4, 0.95, 2000, 8, &x), 0);
    assert_close(x.ci_lo, 1, 0);
    assert_close(x.ci_hi, 2, 0);
    assert_int_equal(stats_ratio_ci(mix, 4, two, 1, 0.6, 2000, 9, &x), 0);
    assert_close(x.ratio, 1, 0);
    assert_close(x.ci_lo, 1, 0);
    assert_close(x.ci_hi, 4.0 / 3, 1e-15);
}

/* Significance needs both criteria. Same medians (100 vs 100.05), but b's lower half sits
 * just below the median and its upper half far above, a the other way round: a's 10 upper
 * values beat b's 11 lower ones and a's median beats b's lower 10, so U = 120 of 441
 * (mu = 220.5, sigma = sqrt(441 * 43 / 12) = 39.75, z = (100.5 - 0.5)/39.75 = 2.52,
 * p ~ 0.012; exact 0.0108): Mann-Whitney says "different", while the median ratio's CI
 * (resampled medians jump between the clusters) holds 1. */
static void test_verdict_needs_ci(void **state)
{
    (void)state;
    double a[21], b[21];
    for (int i = 0; i < 10; i++) {
        a[i] = 10 + i;               /* far below */
        a[11 + i] = 100.1 + 0.01 * i; /* just above the median */
        b[i] = 99.5 + 0.01 * i;      /* just below */
        b[11 + i] = 200 + i;         /* far above */
    }
    a[10] = 100;
    b[10] = 100.05;
    assert_close(pairs_u(a, 21, b, 21), 120, 0);
    struct stats_opts o = { 0.05, 2000, 4 };
    struct stats_verdict v;
    assert_int_equal(stats_compare(a, 21, b, 21, &o, &v), 0);
    assert_close(v.p_value, 0.0108, 1e-4);
    assert_true(v.ci_lo < 1 && v.ci_hi > 1);
    assert_close(v.ratio, 1.0005, 1e-12);
    assert_true(v.enough_data);
    assert_false(v.significant);
}

/* 100 simulated experiments, b shifted by +20%, 5% gaussian noise per run, 10 rounds each:
 * the 95% CI must contain the true ratio 1.2 in >= 90 of them (percentile CIs of medians
 * run a little narrow), and the verdict must call nearly all of them significant. */
static void test_bootstrap_coverage(void **state)
{
    (void)state;
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 2024);
    struct stats_opts o = { 0.05, 1000, 0 };
    int covered = 0, significant = 0;
    for (int e = 0; e < 100; e++) {
        double a[10], b[10];
        for (int i = 0; i < 10; i++) {
            a[i] = 1000 * (1 + 0.05 * gsl_ran_gaussian(r, 1));
            b[i] = 1200 * (1 + 0.05 * gsl_ran_gaussian(r, 1));
        }
        struct stats_verdict v;
        o.seed = (uint64_t)e + 1;
        assert_int_equal(stats_compare(a, 10, b, 10, &o, &v), 0);
        covered += v.ci_lo <= 1.2 && 1.2 <= v.ci_hi;
        significant += v.significant;
    }
    gsl_rng_free(r);
    print_message("    CI coverage of the true ratio: %d/100, significant: %d/100\n", covered,
                  significant);
    assert_true(covered >= 90);
    assert_true(significant >= 99);
}

/* A/A: 200 trials, both groups of 5 from the same distribution (5% noise). At most 5% may
 * be called significant (the exact test alone rejects 8/252 = 3.2% of the time). */
static void test_aa_false_positives(void **state)
{
    (void)state;
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 99);
    struct stats_opts o = { 0.05, 1000, 0 };
    int quiet = 0, enough = 0;
    for (int t = 0; t < 200; t++) {
        double a[5], b[5];
        for (int i = 0; i < 5; i++) {
            a[i] = 500 * (1 + 0.05 * gsl_ran_gaussian(r, 1));
            b[i] = 500 * (1 + 0.05 * gsl_ran_gaussian(r, 1));
        }
        struct stats_verdict v;
        o.seed = (uint64_t)t;
        assert_int_equal(stats_compare(a, 5, b, 5, &o, &v), 0);
        quiet += !v.significant;
        enough += v.enough_data;
    }
    gsl_rng_free(r);
    print_message("    A/A trials not significant: %d/200\n", quiet);
    assert_int_equal(enough, 200);
    assert_true(quiet >= 190);
}

static void test_verdict_small_n(void **state)
{
    (void)state;
    const double a[] = { 100, 101, 102, 103 };
    const double b[] = { 120, 121, 122, 123 };
    struct stats_verdict v;
    struct strbuf sb = STRBUF_INIT;

    /* 3 + 3 completely separated: p = 0.1 at best, never significant */
    assert_int_equal(stats_compare(a, 3, b, 3, NULL, &v), 0);
    assert_close(v.p_value, 0.1, 1e-12);
    assert_close(v.min_p, 0.1, 1e-12);
    assert_false(v.enough_data);
    assert_false(v.significant);
    assert_true(v.ci_lo > 1);
    stats_format_change(&sb, &v, false);
    assert_string_equal(sb.buf, "~");

    /* 4 + 4: p = 2/70, every resampled median of b beats every one of a */
    assert_int_equal(stats_compare(a, 4, b, 4, NULL, &v), 0);
    assert_close(v.p_value, 2.0 / 70, 1e-12);
    assert_true(v.exact && v.enough_data && v.significant);
    assert_close(v.ratio, 121.5 / 101.5, 1e-12);
    assert_true(v.ci_lo >= 120.0 / 103 - 1e-12 && v.ci_hi <= 123.0 / 100 + 1e-12);
    assert_close(v.level, 0.95, 1e-12);

    /* 1 round */
    assert_int_equal(stats_compare(a, 1, b, 4, NULL, &v), 0);
    assert_false(v.significant);
    assert_false(v.enough_data);
    strbuf_reset(&sb);
    stats_format_change(&sb, &v, false);
    assert_string_equal(sb.buf, "no statistics with 1 round");

    /* identical samples */
    assert_int_equal(stats_compare(a, 4, a, 4, NULL, &v), 0);
    assert_close(v.ratio, 1, 0);
    assert_close(v.p_value, 1, 0);
    assert_false(v.significant);

    struct stats_opts bad = { 0.05, 0, 1 };
    assert_int_equal(stats_compare(a, 4, b, 4, &bad, &v), -1);
    strbuf_release(&sb);
}

static void test_format(void **state)
{
    (void)state;
    struct strbuf sb = STRBUF_INIT;
    struct stats_verdict v = { .n1 = 10, .n2 = 10, .ratio = 1.124, .ci_lo = 1.101,
                               .ci_hi = 1.146, .level = 0.95, .p_value = 0.001,
                               .significant = true, .enough_data = true };
    stats_format_change(&sb, &v, false);
    assert_string_equal(sb.buf, "+12.4% (95% CI +10.1% .. +14.6%)");

    /* lower is better: latency ratio 0.9 (10 ms -> 9 ms) is a +10% improvement; the CI
     * bounds swap so the low end is printed first */
    struct stats_verdict l = v;
    l.ratio = 0.9, l.ci_lo = 0.85, l.ci_hi = 0.95;
    strbuf_reset(&sb);
    stats_format_change(&sb, &l, true);
    assert_string_equal(sb.buf, "+10.0% (95% CI +5.0% .. +15.0%)");
    strbuf_reset(&sb);
    stats_format_change(&sb, &l, false); /* the same ratio read as tps: a regression */
    assert_string_equal(sb.buf, "-10.0% (95% CI -15.0% .. -5.0%)");
    assert_close(stats_change_pct(0.9, true), 10, 1e-9);
    assert_close(stats_change_pct(1.25, false), 25, 1e-9);

    v.significant = false;
    strbuf_reset(&sb);
    stats_format_change(&sb, &v, false);
    assert_string_equal(sb.buf, "~");
    v.n2 = 1;
    strbuf_reset(&sb);
    stats_format_change(&sb, &v, true);
    assert_string_equal(sb.buf, "no statistics with 1 round");

    struct stats_interval iv = { 1.0004, 0.98, 1.03, 0.9 };
    strbuf_reset(&sb);
    stats_format_interval(&sb, &iv, false);
    assert_string_equal(sb.buf, "+0.0% (90% CI -2.0% .. +3.0%)");
    strbuf_release(&sb);
}

/* ---- geomean ---- */

static void test_geomean(void **state)
{
    (void)state;
    /* noiseless cells with ratios 1.1, 1.2, 0.9: geomean = 1.188^(1/3) = 1.0591045 */
    const double a1[] = { 100, 100, 100 }, b1[] = { 110, 110, 110 };
    const double a2[] = { 50, 50 }, b2[] = { 60, 60, 60, 60 };
    const double a3[] = { 2000, 2000, 2000 }, b3[] = { 1800, 1800, 1800 };
    struct stats_cell cells[] = { { a1, 3, b1, 3 }, { a2, 2, b2, 4 }, { a3, 3, b3, 3 } };
    struct stats_opts o = { 0.05, 500, 3 };
    struct stats_interval g, h;
    assert_int_equal(stats_geomean_ratio(cells, 3, &o, &g), 0);
    assert_close(g.ratio, 1.0591045, 1e-7);
    assert_close(g.ci_lo, g.ratio, 1e-12); /* nothing varies */
    assert_close(g.ci_hi, g.ratio, 1e-12);
    assert_close(g.level, 0.95, 1e-12);
    /* one cell = that cell's median ratio */
    assert_int_equal(stats_geomean_ratio(cells + 1, 1, &o, &g), 0);
    assert_close(g.ratio, 1.2, 1e-12);
    struct stats_cell empty = { a1, 0, b1, 3 };
    assert_int_equal(stats_geomean_ratio(&empty, 1, &o, &g), -1);
    assert_int_equal(stats_geomean_ratio(cells, 0, &o, &g), -1);

    /* simulation: 3 cells (different scales), true ratio 1.1 in each, 5% noise, 8 rounds:
     * the CI covers 1.1 and excludes 1 in >= 45 of 50 experiments; determinism per seed */
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 5);
    int covered = 0, excludes_1 = 0;
    for (int e = 0; e < 50; e++) {
        double a[3][8], b[3][8];
        struct stats_cell c[3];
        for (int k = 0; k < 3; k++) {
            double scale = 100.0 * (k + 1);
            for (int i = 0; i < 8; i++) {
                a[k][i] = scale * (1 + 0.05 * gsl_ran_gaussian(r, 1));
                b[k][i] = 1.1 * scale * (1 + 0.05 * gsl_ran_gaussian(r, 1));
            }
            c[k] = (struct stats_cell){ a[k], 8, b[k], 8 };
        }
        o.seed = (uint64_t)e;
        assert_int_equal(stats_geomean_ratio(c, 3, &o, &g), 0);
        covered += g.ci_lo <= 1.1 && 1.1 <= g.ci_hi;
        excludes_1 += g.ci_lo > 1;
        if (e == 0) {
            assert_int_equal(stats_geomean_ratio(c, 3, &o, &h), 0);
            assert_true(g.ci_lo == h.ci_lo && g.ci_hi == h.ci_hi);
            assert_true(g.ci_lo < g.ratio && g.ratio < g.ci_hi);
        }
    }
    gsl_rng_free(r);
    print_message("    geomean CI coverage: %d/50, excludes 1: %d/50\n", covered, excludes_1);
    assert_true(covered >= 45);
    assert_true(excludes_1 >= 45); /* not trivially wide: a 10% shift is seen */
}

/* ---- calibration ---- */

/* By hand for cv = 5%, n = 5, alpha = 0.05, power = 0.8:
 *   z_0.975 = 1.959964, z_0.8 = 0.841621 (normal table), sum = 2.801585
 *   t-test form: 2.801585 * 0.05 * sqrt(2/5) = 2.801585 * 0.05 * 0.632456 = 0.088594
 *   Mann-Whitney: / sqrt(3/pi) = / 0.977205 -> 0.090661 (a 9.07% change) */
static void test_detectable_change(void **state)
{
    (void)state;
    assert_close(stats_detectable_change(0.05, 5, 0.05, 0.8), 0.090661, 1e-6);
    /* scales with cv and 1/sqrt(n): 20 rounds halve it */
    assert_close(stats_detectable_change(0.05, 20, 0.05, 0.8), 0.090661 / 2, 1e-6);
    assert_close(stats_detectable_change(0.10, 5, 0.05, 0.8), 2 * 0.090661, 2e-6);
    /* below the exact-test floor nothing is detectable */
    assert_true(isinf(stats_detectable_change(0.05, 3, 0.05, 0.8)));
    assert_false(isinf(stats_detectable_change(0.05, 4, 0.05, 0.8)));
    assert_true(isnan(stats_detectable_change(-0.1, 5, 0.05, 0.8)));
    assert_true(isnan(stats_detectable_change(0.05, 5, 0.05, 1.0)));
}

/* By hand, cv = 5%: n = 2 * (2.801585 * cv / change)^2 / 0.954930
 *   change 5%: 2 * 2.801585^2 / 0.954930 = 2 * 7.848880 / 0.954930 = 16.44 -> 17
 *   change 2%: 2 * (2.801585 * 2.5)^2 / 0.954930 = 2 * 49.05550 / 0.954930 = 102.74 -> 103 */
static void test_rounds_needed(void **state)
{
    (void)state;
    assert_int_equal(stats_rounds_needed(0.05, 0.05, 0.05, 0.8), 17);
    assert_int_equal(stats_rounds_needed(0.05, 0.02, 0.05, 0.8), 103);
    assert_int_equal(stats_rounds_needed(0, 0.02, 0.05, 0.8), 4);     /* exact-test floor */
    assert_int_equal(stats_rounds_needed(0.001, 0.05, 0.01, 0.8), 5); /* floor at alpha .01 */
    /* the inverse really is the inverse: n detects the change, n - 1 does not */
    const double cvs[] = { 0.01, 0.03, 0.05, 0.12 };
    const double changes[] = { 0.01, 0.02, 0.05 };
    for (int i = 0; i < NELEM(cvs); i++)
        for (int j = 0; j < NELEM(changes); j++) {
            int n = stats_rounds_needed(cvs[i], changes[j], 0.05, 0.8);
            assert_true(n >= 4);
            assert_true(stats_detectable_change(cvs[i], n, 0.05, 0.8) <= changes[j] + 1e-12);
            if (n > 4)
                assert_true(stats_detectable_change(cvs[i], n - 1, 0.05, 0.8) > changes[j]);
        }
    assert_int_equal(stats_rounds_needed(0.05, 0, 0.05, 0.8), -1);
    assert_int_equal(stats_rounds_needed(0.05, 0.02, 0, 0.8), -1);
    assert_int_equal(stats_rounds_needed(0.5, 1e-6, 0.05, 0.8), -1); /* > 1e6 rounds */
}

/* By hand: a = 98 100 102, b = 99 101 103: s_a^2 = s_b^2 = (4+0+4)/2 = 4, pooled 4,
 * sd 2; grand mean 100.5; cv = 2/100.5 = 0.0199005.
 *   rounds for 5%: 2 * (2.801585 * 0.0199005 / 0.05)^2 / 0.954930 = 2.60 -> 3 -> floor 4
 *   rounds for 2%: 2 * (2.801585 * 0.0199005 / 0.02)^2 / 0.954930 = 16.28 -> 17
 *   3 rounds per group: nothing detectable (INFINITY). */
static void test_calibrate(void **state)
{
    (void)state;
    const double a[] = { 98, 100, 102 }, b[] = { 99, 101, 103 };
    struct stats_opts o = { 0.05, 1000, 1 };
    struct stats_calibration c;
    assert_int_equal(stats_calibrate(a, 3, b, 3, 0.8, &o, &c), 0);
    assert_close(c.mean, 100.5, 1e-12);
    assert_close(c.cv, 0.0199005, 1e-7);
    assert_int_equal(c.rounds_5pct, 4);
    assert_int_equal(c.rounds_2pct, 17);
    assert_true(isinf(c.detectable));
    assert_false(c.aa.significant);
    assert_false(c.aa.enough_data);

    /* a shift between the A/A groups does not inflate the CV (within-group pooling) */
    const double b2[] = { 199, 201, 203 };
    assert_int_equal(stats_calibrate(a, 3, b2, 3, 0.8, &o, &c), 0);
    assert_close(c.cv, 2 / 150.5, 1e-9);

    /* simulated A/A with a known 5% CV, 20 rounds per group: estimate within 30% */
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 11);
    double x[20], y[20];
    for (int i = 0; i < 20; i++) {
        x[i] = 800 * (1 + 0.05 * gsl_ran_gaussian(r, 1));
        y[i] = 800 * (1 + 0.05 * gsl_ran_gaussian(r, 1));
    }
    gsl_rng_free(r);
    assert_int_equal(stats_calibrate(x, 20, y, 20, 0.8, &o, &c), 0);
    print_message("    simulated CV 5%% estimated as %.2f%%\n", c.cv * 100);
    assert_true(c.cv > 0.035 && c.cv < 0.065);
    assert_close(c.detectable, stats_detectable_change(c.cv, 20, 0.05, 0.8), 0);
    assert_false(c.aa.significant);

    assert_int_equal(stats_calibrate(a, 1, b, 3, 0.8, &o, &c), -1);
    assert_int_equal(stats_calibrate(a, 3, b, 3, 0, &o, &c), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_summary),
        cmocka_unit_test(test_mw_u_with_ties),
        cmocka_unit_test(test_mw_exact_vs_enumeration),
        cmocka_unit_test(test_mw_critical_values),
        cmocka_unit_test(test_mw_textbook),
        cmocka_unit_test(test_mw_normal_hand),
        cmocka_unit_test(test_mw_normal_large),
        cmocka_unit_test(test_mw_floor_with_ties),
        cmocka_unit_test(test_min_p),
        cmocka_unit_test(test_ratio_ci_basics),
        cmocka_unit_test(test_ratio_ci_quantiles),
        cmocka_unit_test(test_verdict_needs_ci),
        cmocka_unit_test(test_bootstrap_coverage),
        cmocka_unit_test(test_aa_false_positives),
        cmocka_unit_test(test_verdict_small_n),
        cmocka_unit_test(test_format),
        cmocka_unit_test(test_geomean),
        cmocka_unit_test(test_detectable_change),
        cmocka_unit_test(test_rounds_needed),
        cmocka_unit_test(test_calibrate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
