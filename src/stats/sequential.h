/* sequential: confidence intervals that stay valid when an experiment looks at its data after
 * every round and stops when it likes (--target-ci). A fixed-sample CI checked after every
 * round and used to decide when to stop covers the truth far less often than its level says
 * (the "peeking" problem); a confidence sequence covers it at every round at once, so any
 * stopping rule, including "stop when the CI is narrow enough" or "stop when it excludes 1",
 * keeps the error rate at alpha.
 *
 * The data: one value per round, the log of the tps ratio variant / baseline of the two runs
 * of that round (paired: every round runs every variant once, in shuffled order), so the
 * round's shared machine state cancels out and the values are independent across rounds.
 * The CI of the mean log ratio gives the CI of the geometric-mean ratio by exp().
 *
 * Pure functions: no state, callers own the arrays. Errors: -1 on invalid input (NULL, n < 2,
 * non-finite values, alpha outside (0,1), rounds_opt < 1), nothing printed. */
#ifndef PGOLAB_STATS_SEQUENTIAL_H
#define PGOLAB_STATS_SEQUENTIAL_H

#include <stdbool.h>

/* Rounds before a confidence sequence may be used to stop (the CS is asymptotic: its sd is
 * estimated; with fewer rounds a heavy-tailed run or two make the estimate too unstable; the
 * A/A simulation of tests/unit/test_sequential.c, stopping at the first significant look within
 * 200 rounds: 4.0% false positives with this floor, 6.8% from round 3, 13.8% from round 2). */
#define STATS_CS_MIN_ROUNDS 5

/* One confidence sequence at one round. */
struct stats_cs {
    int n;             /* rounds (values) */
    double mean, sd;   /* sample mean and sd (denominator n - 1) of the values */
    double half;       /* half-width of the CS of the mean, in the values' units */
    double lo, hi;     /* mean -/+ half */
    double p_value;    /* anytime-valid p of "mean = 0": 1 / the mixture martingale, capped at
                        * 1; p < alpha exactly when the CS excludes 0 */
};

/*
 * The two-sided (1 - alpha) asymptotic confidence sequence for the mean of x[0..n-1] with the
 * Gaussian-mixture boundary of Waudby-Smith, Arnold, Wu and Ramdas, "Time-uniform central
 * limit theory and asymptotic confidence sequences", Annals of Statistics 52(6), 2024
 * (arXiv:2103.06476), their Gaussian-mixture asymptotic CS:
 *     mean_t +/- sd_t * sqrt( 2 (t rho^2 + 1) / (t^2 rho^2) * log( sqrt(t rho^2 + 1) / alpha ) )
 * It is Robbins' normal-mixture boundary (Robbins 1970, "Statistical methods related to the
 * law of the iterated logarithm", Ann. Math. Statist. 41:1397-1409) applied to the
 * standardized sum: Ville's inequality bounds the chance that the mixture martingale
 *     M_t = (t rho^2 + 1)^(-1/2) exp( rho^2 S_t^2 / (2 (t rho^2 + 1)) ),  S_t = t mean_t / sd_t,
 * ever exceeds 1/alpha, which is where the boundary comes from; p_value = min(1, 1/M_t) at
 * mean 0. rho tunes where the sequence is tightest: stats_cs_rho(alpha, rounds_opt) makes it
 * tightest at rounds_opt (their choice of rho for a target time t*). Needs n >= 2 (an sd); sd 0
 * gives half 0.
 */
int stats_cs_mean(const double *x, int n, double alpha, int rounds_opt, struct stats_cs *out);

/* The same from the moments: n >= 2 values of mean `mean` and sd `sd` (denominator n - 1),
 * e.g. kept as running sums. */
int stats_cs_moments(int n, double mean, double sd, double alpha, int rounds_opt,
                     struct stats_cs *out);

/* rho that (approximately) minimizes the boundary's width at t = rounds_opt (Waudby-Smith et
 * al. 2024, the tuning of rho for a target time t*): rho = sqrt( (-2 log alpha + log(-2 log alpha +
 * 1)) / rounds_opt ). */
double stats_cs_rho(double alpha, int rounds_opt);

/* Half-width of the CS as a multiple of sd at n rounds: the factor of stats_cs_mean() (for
 * planning: how many rounds a CV needs). NAN for n < 1 or invalid alpha or rounds_opt. */
double stats_cs_factor(int n, double alpha, int rounds_opt);

/* The fixed-sample t interval of the mean (mean +/- t_{n-1, 1-alpha/2} sd / sqrt(n),
 * gsl_cdf_tdist_Pinv), in the same struct (p_value: the two-sided t-test p). Valid only for a
 * sample size fixed in advance; here to be compared with the sequence (tests, benchmark). */
int stats_t_interval(const double *x, int n, double alpha, struct stats_cs *out);

/* A relative CI half-width in percent from a CI of a log ratio: the larger side of
 * exp(lo)..exp(hi) around exp(mean), i.e. (exp(half) - 1) * 100. */
double stats_log_half_pct(double half);

#endif
