/* compare: "real difference or noise" for A/B rounds: summary, Mann-Whitney U, bootstrap CI
 * of median ratios, geomean, A/A calibration. Callers own the inputs; nothing is kept. */
#ifndef PGOLAB_COMPARE_H
#define PGOLAB_COMPARE_H

#include <stdbool.h>
#include <stdint.h>

#include "util/strbuf.h"

/*
 * Conventions for the whole module
 * - A sample is an array of doubles, one value per round (e.g. tps of each run of one
 *   variant in one cell). Group a is the baseline, group b the candidate. Units are the
 *   caller's; everything returned is unitless (ratios, p-values, fractions) except summaries.
 * - Errors: functions returning int give 0 on success and -1 on invalid input, *without*
 *   printing anything (a missing report cell is not fatal; the caller decides what to say).
 *   Invalid always includes NULL arrays, n < 1 and non-finite values; ratio functions also
 *   need every value > 0 (tps and latencies are). On -1 *out is left untouched.
 * - Randomness (bootstrap) uses GSL's MT19937 (gsl_rng_mt19937) seeded with the given seed,
 *   so results are reproducible bit for bit for the same inputs, seed and resample count.
 * - Quantiles of bootstrap distributions: gsl_stats_quantile_from_sorted_data (linear
 *   interpolation between order statistics). Medians: GSL, the mean of the two middle
 *   values for even n (the same as experiment_cell()).
 * - No global state: every function is reentrant and may run in several threads at once.
 */

/* Defaults; STATS_OPTS_DEFAULT fills a struct stats_opts with them. */
#define STATS_ALPHA_DEFAULT 0.05     /* benchstat's default significance level */
#define STATS_RESAMPLES_DEFAULT 10000
#define STATS_POWER_DEFAULT 0.8      /* the conventional power for planning (Cohen 1988) */
/* Asymptotic relative efficiency of the Mann-Whitney test to the t-test for normal data,
 * 3/pi ~= 0.955 (Hodges & Lehmann 1956, Ann. Math. Statist. 27:324-335; for any continuous
 * distribution it is at least 108/125 = 0.864, same paper). */
#define STATS_MW_ARE (3.0 / 3.14159265358979323846)
/* The exact Mann-Whitney distribution is used when there are no ties and both groups
 * have fewer than this many values (R's wilcox.test uses the same bound). */
#define STATS_MW_EXACT_LIMIT 50

struct stats_opts {
    double alpha;   /* significance level in (0,1); CIs are at level 1 - alpha */
    int resamples;  /* bootstrap resamples, >= 1 (10000 default; 1000 is fine for tests) */
    uint64_t seed;  /* bootstrap seed */
};
#define STATS_OPTS_DEFAULT { STATS_ALPHA_DEFAULT, STATS_RESAMPLES_DEFAULT, 1 }

/* ---- 1. Sample summary ---- */

struct stats_summary {
    int n;
    double median;  /* GSL median (mean of the two middle values for even n) */
    double mean;
    double stddev;  /* sample standard deviation, denominator n - 1; NAN when n == 1 */
    double min, max;
};

/* Summarize x[0..n-1], n >= 1, all finite. x is not modified. */
int stats_summarize(const double *x, int n, struct stats_summary *out);

/* ---- 2. Mann-Whitney U test (two-sided) ---- */

struct stats_mw {
    double u;      /* U of group a: #{(i,j): a_i > b_j} + 0.5 #{a_i == b_j}, in [0, n1*n2];
                    * U of b is n1*n2 - u. Equals rank sum of a - n1(n1+1)/2 (average ranks). */
    double p;      /* two-sided p-value in (0, 1] */
    double z;      /* normal-approximation z (>= 0, after continuity correction); NAN if exact */
    bool exact;    /* p from the exact null distribution (no ties, n1, n2 < STATS_MW_EXACT_LIMIT) */
    bool ties;     /* the pooled sample has tied values */
};

/*
 * Mann-Whitney U test of a[0..n1-1] against b[0..n2-1] (Mann & Whitney 1947, Ann. Math.
 * Statist. 18:50-60), n1, n2 >= 1, all finite. Ties get average ranks.
 * - Exact (no ties, n1 and n2 < STATS_MW_EXACT_LIMIT): the number of the C(n1+n2, n1)
 *   equally likely rank assignments giving each U is counted by dynamic programming with
 *   Mann & Whitney's recurrence  c(i,j,u) = c(i-1,j,u-j) + c(i,j-1,u)  (the largest value
 *   belongs to a, beating all j values of b, or to b). p = 2 P(U <= min(u, n1*n2 - u)),
 *   capped at 1 (the null distribution is symmetric about n1*n2/2). Cost at 49 + 49:
 *   about 3 M additions and a 1 MB scratch table (a few ms).
 * - Otherwise the normal approximation with tie and continuity corrections:
 *     mu = n1 n2 / 2,  sigma^2 = n1 n2 / 12 * ((N + 1) - sum(t^3 - t) / (N (N - 1))),
 *     z = max(0, |u - mu| - 1/2) / sigma,  p = 2 Q(z)  (gsl_cdf_ugaussian_Q),
 *   N = n1 + n2, t = size of each group of tied values (Hollander & Wolfe, Nonparametric
 *   Statistical Methods, Wilcoxon rank-sum test, large-sample approximation with ties).
 *   If every value is equal (sigma = 0), p = 1. The result is then raised to at least
 *   stats_mw_min_p(n1, n2): no rank test can be surer than its most extreme of the
 *   C(N, n1) assignments, and without this floor heavy ties would let 3 + 3 rounds
 *   "reach" p = 0.047 ({1,1,1} vs {2,2,2}; the exact floor is 0.1).
 */
int stats_mann_whitney(const double *a, int n1, const double *b, int n2, struct stats_mw *out);

/* Smallest two-sided p-value the test can return for group sizes n1, n2 >= 1:
 * 2 / C(n1 + n2, n1), capped at 1 (the two extreme rank assignments; gsl_sf_choose, or
 * gsl_sf_lnchoose in log space for n1 + n2 > 170). (3,3) -> 0.1, (4,4) -> 2/70 = 0.0286,
 * (5,5) -> 2/252 = 0.0079. NAN if n1 < 1 or n2 < 1. */
double stats_mw_min_p(int n1, int n2);

/* Smallest n such that n rounds per variant (n1 = n2 = n) can reach p < alpha, i.e.
 * stats_mw_min_p(n, n) < alpha: 4 for alpha = 0.05 (and 0.1: the inequality is strict),
 * 5 for 0.01. -1 if alpha is not in (0,1). */
int stats_min_rounds(double alpha);

/* ---- 3. Change of b vs a ---- */

struct stats_interval {
    double ratio;          /* point estimate (b over a) */
    double ci_lo, ci_hi;   /* percentile-bootstrap CI of the ratio */
    double level;          /* its confidence level, e.g. 0.95 */
};

/*
 * Ratio of medians median(b) / median(a) with a percentile-bootstrap CI at level `level`
 * in (0,1) (Efron & Tibshirani, An Introduction to the Bootstrap, 1993, ch. 13): each of
 * `resamples` replicates draws n1 values from a and n2 from b with replacement, independently
 * (gsl_ran_sample), and takes the ratio of their medians; the CI is the (1-level)/2 and
 * (1+level)/2 quantiles of the replicates. Values must be > 0. With n = 1 in both groups
 * the CI collapses to the point estimate. The percentile CI of a median is known to be
 * somewhat narrow for very small n (<= 5); the verdict therefore also requires the U test.
 */
int stats_ratio_ci(const double *a, int n1, const double *b, int n2, double level,
                   int resamples, uint64_t seed, struct stats_interval *out);

struct stats_verdict {
    int n1, n2;             /* rounds in a (baseline) and b */
    double ratio;           /* median(b) / median(a): the raw ratio, whatever the metric's
                             * direction */
    double ci_lo, ci_hi;    /* bootstrap CI of ratio at level 1 - alpha */
    double level;           /* 1 - alpha */
    double p_value;         /* two-sided Mann-Whitney p */
    double min_p;           /* stats_mw_min_p(n1, n2) */
    bool exact;             /* p_value from the exact distribution */
    bool significant;       /* n1, n2 >= 2 AND p_value < alpha AND the CI excludes 1 */
    bool enough_data;       /* n1, n2 >= 2 AND min_p < alpha: a difference is detectable
                             * at all (false: warn "n rounds can never reach alpha") */
};

/* Compare b against a: stats_mann_whitney + stats_ratio_ci (level 1 - alpha) with opts
 * (NULL = STATS_OPTS_DEFAULT). Values must be > 0. With n1 or n2 == 1 it still fills every
 * field (p = 1 for 1 + 1), but `significant` and `enough_data` are false. */
int stats_compare(const double *a, int n1, const double *b, int n2,
                  const struct stats_opts *opts, struct stats_verdict *out);

/* Sign convention: the change is reported as an improvement in percent, positive = better.
 *   higher is better (tps):     (ratio - 1) * 100
 *   lower is better (latency):  (1 - ratio) * 100
 * The latter is (base - value) / base * 100, the same as experiment_improvement(), so the
 * seed-000 tables and these verdicts agree; a latency going from 10 to 9 ms is +10%.
 * The raw ratio stays available in the structs. */
double stats_change_pct(double ratio, bool lower_is_better);

/* Append the verdict to sb, in the sign convention above:
 *   n1 < 2 or n2 < 2:  "no statistics with 1 round"
 *   not significant:   "~"   (benchstat's mark; print p_value and n next to it if wanted)
 *   significant:       "+12.4% (95% CI +10.1% .. +14.6%)"  (one decimal, explicit sign;
 *                      the CI is ordered low .. high after the sign convention is applied) */
void stats_format_change(struct strbuf *sb, const struct stats_verdict *v, bool lower_is_better);

/* Append an interval unconditionally: "+3.1% (95% CI +1.0% .. +5.2%)" (for the geomean
 * row, which has no p-value; the caller may show "~" when the CI contains 0%). */
void stats_format_interval(struct strbuf *sb, const struct stats_interval *iv,
                           bool lower_is_better);

/* ---- 4. Geometric mean over cells ---- */

/* One cell (e.g. one thread count): the baseline's and the candidate's rounds. */
struct stats_cell {
    const double *a;
    int n1;
    const double *b;
    int n2;
};

/* Geometric mean over ncells >= 1 cells of each cell's median(b) / median(a) (the
 * "Average" row; a geomean of ratios is independent of each cell's scale, unlike the mean
 * of medians). CI: percentile bootstrap at level 1 - opts->alpha where every replicate
 * resamples the rounds within each cell (a and b independently), recomputes each cell's
 * median ratio and takes their geomean. opts NULL = defaults. Values must be > 0. */
int stats_geomean_ratio(const struct stats_cell *cells, int ncells,
                        const struct stats_opts *opts, struct stats_interval *out);

/* ---- 5. Noise calibration (A/A) and planning ---- */

/* Smallest relative change (fraction: 0.05 = 5%) that n rounds per variant detect with the
 * given power at two-sided level alpha, when one run has coefficient of variation cv
 * (fraction):
 *     delta = (z_{1-alpha/2} + z_{power}) * cv * sqrt(2/n) / sqrt(STATS_MW_ARE)
 * The first factor is the two-sample z-test formula (e.g. Chow, Shao & Wang, Sample Size
 * Calculations in Clinical Research, two-sample means); dividing by sqrt(ARE) converts it to
 * the Mann-Whitney test we actually use: it needs 1/ARE times the rounds of a t-test for
 * normal noise, so the detectable change grows by 1/sqrt(ARE) (x1.023). z from
 * gsl_cdf_ugaussian_Pinv. For cv = 0.05, n = 5, alpha = 0.05, power = 0.8: 0.0907.
 * INFINITY when n < stats_min_rounds(alpha) (the exact test can never reject);
 * NAN on invalid input (cv < 0 or non-finite, alpha or power outside (0,1)). */
double stats_detectable_change(double cv, int n, double alpha, double power);

/* Inverse: rounds per variant to detect a relative change `change` (fraction > 0):
 *     n = ceil(2 * ((z_{1-alpha/2} + z_{power}) * cv / change)^2 / STATS_MW_ARE),
 * raised to at least max(2, stats_min_rounds(alpha)). cv = 0.05: 17 rounds for 5%, 103 for
 * 2%. -1 on invalid input (as above, or change <= 0) or if n would exceed 1000000. */
int stats_rounds_needed(double cv, double change, double alpha, double power);

struct stats_calibration {
    int n1, n2;
    double mean;           /* grand mean of all values */
    double cv;             /* pooled within-group stddev / grand mean (fraction) */
    double detectable;     /* stats_detectable_change(cv, min(n1, n2), alpha, power) */
    int rounds_2pct;       /* stats_rounds_needed(cv, 0.02, alpha, power) */
    int rounds_5pct;       /* stats_rounds_needed(cv, 0.05, alpha, power) */
    struct stats_verdict aa;  /* b vs a: should not be significant; if it is, the setup
                               * has a systematic bias (order, drift, state) */
};

/*
 * Calibrate from an A/A experiment: a and b are two groups of runs of the same variant,
 * n1, n2 >= 2, values > 0. The CV of a single run uses the pooled within-group variance
 *     s_p^2 = ((n1 - 1) s_a^2 + (n2 - 1) s_b^2) / (n1 + n2 - 2)
 * over the grand mean, so a (spurious) shift between the groups does not inflate it; the
 * shift is what aa reports. With few rounds the CV is itself uncertain (its relative
 * standard error is roughly 1/sqrt(2 (N - 2))): plan with margin. power in (0,1), usually
 * STATS_POWER_DEFAULT; opts NULL = defaults.
 */
int stats_calibrate(const double *a, int n1, const double *b, int n2, double power,
                    const struct stats_opts *opts, struct stats_calibration *out);

#endif
