/* compare: A/B statistics (see compare.h for the formulas and their sources).
 * Scratch arrays are allocated here with xmalloc and freed before returning. */
#include "stats/compare.h"
#include "util/util.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_sf_gamma.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

/* ---- input checks ---- */

static bool valid_sample(const double *x, int n, bool positive)
{
    if (!x || n < 1)
        return false;
    for (int i = 0; i < n; i++) {
        if (!isfinite(x[i]) || (positive && x[i] <= 0))
            return false;
    }
    return true;
}

static bool valid_prob(double p)
{
    return isfinite(p) && p > 0 && p < 1;
}

static const struct stats_opts default_opts = STATS_OPTS_DEFAULT;

static bool valid_opts(const struct stats_opts *o)
{
    return valid_prob(o->alpha) && o->resamples >= 1;
}

static double *copy_sample(const double *x, int n)
{
    double *c = xmalloc((size_t)n * sizeof(*c));
    memcpy(c, x, (size_t)n * sizeof(*c));
    return c;
}

/* ---- 1. summary ---- */

int stats_summarize(const double *x, int n, struct stats_summary *out)
{
    if (!out || !valid_sample(x, n, false))
        return -1;
    double *s = copy_sample(x, n);
    gsl_sort(s, 1, (size_t)n);
    out->n = n;
    out->median = gsl_stats_median_from_sorted_data(s, 1, (size_t)n);
    out->mean = gsl_stats_mean(s, 1, (size_t)n);
    out->stddev = n > 1 ? gsl_stats_sd(s, 1, (size_t)n) : NAN;
    out->min = s[0];
    out->max = s[n - 1];
    free(s);
    return 0;
}

/* ---- 2. Mann-Whitney ---- */

double stats_mw_min_p(int n1, int n2)
{
    if (n1 < 1 || n2 < 1)
        return NAN;
    /* gsl_sf_choose divides exact factorials for small N (so 2/C(6,3) is exactly 0.1 and
     * compares as such with alpha); beyond GSL_SF_FACT_NMAX it would overflow: log space */
    unsigned n = (unsigned)(n1 + n2), k = (unsigned)n1;
    double p = n <= GSL_SF_FACT_NMAX ? 2.0 / gsl_sf_choose(n, k)
                                     : 2.0 * exp(-gsl_sf_lnchoose(n, k));
    return p < 1 ? p : 1;
}

int stats_min_rounds(double alpha)
{
    if (!valid_prob(alpha))
        return -1;
    /* min p(n, n) ~ 2 sqrt(pi n) / 4^n falls fast; 1000 rounds reach far below 1e-300 */
    for (int n = 1; n <= 1000; n++) {
        if (stats_mw_min_p(n, n) < alpha)
            return n;
    }
    return -1;
}

/* Two-sided exact p for U = u (an integer, no ties): counts c(n1, n2, k) of the rank
 * assignments with U = k by the Mann-Whitney recurrence, updated in place over j (the
 * number of b values placed): row i holds c(i, j, .). */
static double mw_exact_p(int n1, int n2, double u)
{
    int umax = n1 * n2;
    size_t w = (size_t)umax + 1;
    double *c = xcalloc((size_t)(n1 + 1) * w, sizeof(*c));
    for (int i = 0; i <= n1; i++)
        c[(size_t)i * w] = 1;  /* j = 0: only U = 0 */
    for (int j = 1; j <= n2; j++) {
        for (int i = 1; i <= n1; i++) {
            double *row = c + (size_t)i * w;          /* c(i, j-1, .) -> c(i, j, .) */
            const double *prev = c + (size_t)(i - 1) * w;  /* c(i-1, j, .) already */
            int top = i * j;
            for (int k = j; k <= top; k++)
                row[k] += prev[k - j];
        }
    }
    const double *dist = c + (size_t)n1 * w;
    int us = (int)llround(fmin(u, umax - u));
    double total = 0, tail = 0;
    for (int k = 0; k <= umax; k++) {
        total += dist[k];
        if (k <= us)
            tail += dist[k];
    }
    free(c);
    double p = 2.0 * tail / total;
    return p < 1 ? p : 1;
}

int stats_mann_whitney(const double *a, int n1, const double *b, int n2, struct stats_mw *out)
{
    if (!out || !valid_sample(a, n1, false) || !valid_sample(b, n2, false))
        return -1;
    int n = n1 + n2;
    double *v = xmalloc((size_t)n * sizeof(*v));
    size_t *idx = xmalloc((size_t)n * sizeof(*idx));
    memcpy(v, a, (size_t)n1 * sizeof(*v));
    memcpy(v + n1, b, (size_t)n2 * sizeof(*v));
    gsl_sort_index(idx, v, 1, (size_t)n);

    /* Average ranks over runs of equal values; rank sum of a and the tie term. */
    double ranksum_a = 0, tie_term = 0;
    bool ties = false;
    for (int i = 0; i < n;) {
        int j = i + 1;
        while (j < n && v[idx[j]] == v[idx[i]])
            j++;
        double t = j - i;
        double rank = (i + 1 + j) / 2.0;  /* mean of ranks i+1 .. j */
        for (int k = i; k < j; k++) {
            if (idx[k] < (size_t)n1)
                ranksum_a += rank;
        }
        if (t > 1) {
            ties = true;
            tie_term += t * t * t - t;
        }
        i = j;
    }
    free(v);
    free(idx);

    double n1n2 = (double)n1 * n2;
    double u = ranksum_a - n1 * (n1 + 1) / 2.0;
    out->u = u;
    out->ties = ties;
    if (!ties && n1 < STATS_MW_EXACT_LIMIT && n2 < STATS_MW_EXACT_LIMIT) {
        out->exact = true;
        out->z = NAN;
        out->p = mw_exact_p(n1, n2, u);
        return 0;
    }
    out->exact = false;
    double mu = n1n2 / 2;
    double var = n1n2 / 12 * ((n + 1) - (n > 1 ? tie_term / ((double)n * (n - 1)) : 0));
    if (!(var > 0)) {  /* every value equal */
        out->z = 0;
        out->p = 1;
        return 0;
    }
    double z = fmax(0, fabs(u - mu) - 0.5) / sqrt(var);
    double p = 2 * gsl_cdf_ugaussian_Q(z);
    double floor_p = stats_mw_min_p(n1, n2);
    out->z = z;
    out->p = fmin(1, fmax(p, floor_p));
    return 0;
}

/* ---- 3. change of b vs a ---- */

/* Median of n values drawn with replacement from x, using scratch (n doubles). */
static double resampled_median(gsl_rng *r, const double *x, int n, double *scratch)
{
    gsl_ran_sample(r, scratch, (size_t)n, (void *)x, (size_t)n, sizeof(*x));
    return gsl_stats_median(scratch, 1, (size_t)n);  /* reorders scratch */
}

static double median_of(const double *x, int n, double *scratch)
{
    memcpy(scratch, x, (size_t)n * sizeof(*x));
    return gsl_stats_median(scratch, 1, (size_t)n);
}

static gsl_rng *rng_new(uint64_t seed)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    if (!r)
        die("out of memory");
    gsl_rng_set(r, (unsigned long)seed);
    return r;
}

/* Sort the replicates and store the central `level` percentile interval in out. */
static void percentile_ci(double *rep, int nrep, double level, struct stats_interval *out)
{
    gsl_sort(rep, 1, (size_t)nrep);
    out->ci_lo = gsl_stats_quantile_from_sorted_data(rep, 1, (size_t)nrep, (1 - level) / 2);
    out->ci_hi = gsl_stats_quantile_from_sorted_data(rep, 1, (size_t)nrep, (1 + level) / 2);
    out->level = level;
}

int stats_ratio_ci(const double *a, int n1, const double *b, int n2, double level,
                   int resamples, uint64_t seed, struct stats_interval *out)
{
    if (!out || !valid_sample(a, n1, true) || !valid_sample(b, n2, true) ||
        !valid_prob(level) || resamples < 1)
        return -1;
    double *scratch = xmalloc((size_t)(n1 > n2 ? n1 : n2) * sizeof(*scratch));
    double *rep = xmalloc((size_t)resamples * sizeof(*rep));
    double ratio = median_of(b, n2, scratch) / median_of(a, n1, scratch);
    gsl_rng *r = rng_new(seed);
    for (int k = 0; k < resamples; k++) {
        double ma = resampled_median(r, a, n1, scratch);
        double mb = resampled_median(r, b, n2, scratch);
        rep[k] = mb / ma;
    }
    gsl_rng_free(r);
    out->ratio = ratio;
    percentile_ci(rep, resamples, level, out);
    free(rep);
    free(scratch);
    return 0;
}

int stats_compare(const double *a, int n1, const double *b, int n2,
                  const struct stats_opts *opts, struct stats_verdict *out)
{
    if (!opts)
        opts = &default_opts;
    if (!out || !valid_opts(opts) || !valid_sample(a, n1, true) || !valid_sample(b, n2, true))
        return -1;
    struct stats_mw mw;
    struct stats_interval iv;
    if (stats_mann_whitney(a, n1, b, n2, &mw) < 0 ||
        stats_ratio_ci(a, n1, b, n2, 1 - opts->alpha, opts->resamples, opts->seed, &iv) < 0)
        return -1;
    out->n1 = n1;
    out->n2 = n2;
    out->ratio = iv.ratio;
    out->ci_lo = iv.ci_lo;
    out->ci_hi = iv.ci_hi;
    out->level = iv.level;
    out->p_value = mw.p;
    out->min_p = stats_mw_min_p(n1, n2);
    out->exact = mw.exact;
    out->enough_data = n1 >= 2 && n2 >= 2 && out->min_p < opts->alpha;
    out->significant = out->enough_data && mw.p < opts->alpha && (iv.ci_lo > 1 || iv.ci_hi < 1);
    return 0;
}

double stats_change_pct(double ratio, bool lower_is_better)
{
    return lower_is_better ? (1 - ratio) * 100 : (ratio - 1) * 100;
}

/* "+12.4%": one decimal, explicit sign, no "-0.0%". */
static void add_pct(struct strbuf *sb, double pct)
{
    if (fabs(pct) < 0.05)
        pct = 0;
    strbuf_addf(sb, "%+.1f%%", pct);
}

static void add_interval(struct strbuf *sb, double ratio, double lo, double hi, double level,
                         bool lower_is_better)
{
    double c = stats_change_pct(ratio, lower_is_better);
    double c1 = stats_change_pct(lo, lower_is_better);
    double c2 = stats_change_pct(hi, lower_is_better);
    add_pct(sb, c);
    strbuf_addf(sb, " (%g%% CI ", level * 100);
    add_pct(sb, fmin(c1, c2));
    strbuf_addstr(sb, " .. ");
    add_pct(sb, fmax(c1, c2));
    strbuf_addch(sb, ')');
}

void stats_format_change(struct strbuf *sb, const struct stats_verdict *v, bool lower_is_better)
{
    if (v->n1 < 2 || v->n2 < 2)
        strbuf_addstr(sb, "no statistics with 1 round");
    else if (!v->significant)
        strbuf_addch(sb, '~');
    else
        add_interval(sb, v->ratio, v->ci_lo, v->ci_hi, v->level, lower_is_better);
}

void stats_format_interval(struct strbuf *sb, const struct stats_interval *iv,
                           bool lower_is_better)
{
    add_interval(sb, iv->ratio, iv->ci_lo, iv->ci_hi, iv->level, lower_is_better);
}

/* ---- 4. geomean over cells ---- */

int stats_geomean_ratio(const struct stats_cell *cells, int ncells,
                        const struct stats_opts *opts, struct stats_interval *out)
{
    if (!opts)
        opts = &default_opts;
    if (!out || !cells || ncells < 1 || !valid_opts(opts))
        return -1;
    int nmax = 1;
    for (int c = 0; c < ncells; c++) {
        if (!valid_sample(cells[c].a, cells[c].n1, true) ||
            !valid_sample(cells[c].b, cells[c].n2, true))
            return -1;
        nmax = cells[c].n1 > nmax ? cells[c].n1 : nmax;
        nmax = cells[c].n2 > nmax ? cells[c].n2 : nmax;
    }
    double *scratch = xmalloc((size_t)nmax * sizeof(*scratch));
    double *logs = xmalloc((size_t)ncells * sizeof(*logs));
    double *rep = xmalloc((size_t)opts->resamples * sizeof(*rep));

    for (int c = 0; c < ncells; c++) {
        const struct stats_cell *e = &cells[c];
        logs[c] = log(median_of(e->b, e->n2, scratch) / median_of(e->a, e->n1, scratch));
    }
    out->ratio = exp(gsl_stats_mean(logs, 1, (size_t)ncells));

    gsl_rng *r = rng_new(opts->seed);
    for (int k = 0; k < opts->resamples; k++) {
        for (int c = 0; c < ncells; c++) {
            const struct stats_cell *e = &cells[c];
            double ma = resampled_median(r, e->a, e->n1, scratch);
            double mb = resampled_median(r, e->b, e->n2, scratch);
            logs[c] = log(mb / ma);
        }
        rep[k] = exp(gsl_stats_mean(logs, 1, (size_t)ncells));
    }
    gsl_rng_free(r);
    percentile_ci(rep, opts->resamples, 1 - opts->alpha, out);
    free(rep);
    free(logs);
    free(scratch);
    return 0;
}

/* ---- 5. calibration and planning ---- */

/* z_{1-alpha/2} + z_{power} */
static double z_sum(double alpha, double power)
{
    return gsl_cdf_ugaussian_Pinv(1 - alpha / 2) + gsl_cdf_ugaussian_Pinv(power);
}

double stats_detectable_change(double cv, int n, double alpha, double power)
{
    if (!isfinite(cv) || cv < 0 || !valid_prob(alpha) || !valid_prob(power))
        return NAN;
    int nmin = stats_min_rounds(alpha);
    if (nmin < 0 || n < nmin || n < 2)
        return INFINITY;
    return z_sum(alpha, power) * cv * sqrt(2.0 / n) / sqrt(STATS_MW_ARE);
}

int stats_rounds_needed(double cv, double change, double alpha, double power)
{
    if (!isfinite(cv) || cv < 0 || !isfinite(change) || change <= 0 || !valid_prob(alpha) ||
        !valid_prob(power))
        return -1;
    int nmin = stats_min_rounds(alpha);
    if (nmin < 0)
        return -1;
    double q = z_sum(alpha, power) * cv / change;
    /* the small slack keeps an exact integer (up to rounding error) from rounding up */
    double n = ceil(2 * q * q / STATS_MW_ARE * (1 - 1e-12));
    if (n > 1000000)
        return -1;
    int rounds = (int)n;
    if (rounds < 2)
        rounds = 2;
    return rounds < nmin ? nmin : rounds;
}

int stats_calibrate(const double *a, int n1, const double *b, int n2, double power,
                    const struct stats_opts *opts, struct stats_calibration *out)
{
    if (!opts)
        opts = &default_opts;
    if (!out || n1 < 2 || n2 < 2 || !valid_prob(power) || !valid_opts(opts) ||
        !valid_sample(a, n1, true) || !valid_sample(b, n2, true))
        return -1;
    struct stats_calibration c;
    if (stats_compare(a, n1, b, n2, opts, &c.aa) < 0)
        return -1;
    double va = gsl_stats_variance(a, 1, (size_t)n1);
    double vb = gsl_stats_variance(b, 1, (size_t)n2);
    double pooled = ((n1 - 1) * va + (n2 - 1) * vb) / (n1 + n2 - 2);
    double mean = (gsl_stats_mean(a, 1, (size_t)n1) * n1 + gsl_stats_mean(b, 1, (size_t)n2) * n2) /
                  (n1 + n2);
    c.n1 = n1;
    c.n2 = n2;
    c.mean = mean;
    c.cv = sqrt(pooled) / mean;
    c.detectable = stats_detectable_change(c.cv, n1 < n2 ? n1 : n2, opts->alpha, power);
    c.rounds_2pct = stats_rounds_needed(c.cv, 0.02, opts->alpha, power);
    c.rounds_5pct = stats_rounds_needed(c.cv, 0.05, opts->alpha, power);
    *out = c;
    return 0;
}
