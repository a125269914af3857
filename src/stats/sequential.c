/* sequential: confidence sequences for --target-ci (see sequential.h for the formulas and
 * their sources). No state. */
#include "stats/sequential.h"

#include <math.h>
#include <stddef.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_statistics_double.h>

static bool valid(const double *x, int n, double alpha)
{
    if (!x || n < 2 || !(alpha > 0 && alpha < 1))
        return false;
    for (int i = 0; i < n; i++)
        if (!isfinite(x[i]))
            return false;
    return true;
}

double stats_cs_rho(double alpha, int rounds_opt)
{
    if (!(alpha > 0 && alpha < 1) || rounds_opt < 1)
        return NAN;
    double l = -2 * log(alpha);
    return sqrt((l + log(l + 1)) / rounds_opt);
}

double stats_cs_factor(int n, double alpha, int rounds_opt)
{
    double rho = stats_cs_rho(alpha, rounds_opt);
    if (n < 1 || isnan(rho))
        return NAN;
    double v = n * rho * rho + 1; /* t rho^2 + 1 */
    return sqrt(2 * v / ((double)n * n * rho * rho) * log(sqrt(v) / alpha));
}

int stats_cs_moments(int n, double mean, double sd, double alpha, int rounds_opt,
                     struct stats_cs *out)
{
    double rho = stats_cs_rho(alpha, rounds_opt);
    if (!out || n < 2 || !isfinite(mean) || !isfinite(sd) || sd < 0 || isnan(rho))
        return -1;
    out->n = n;
    out->mean = mean;
    out->sd = sd;
    out->half = sd * stats_cs_factor(n, alpha, rounds_opt);
    out->lo = mean - out->half;
    out->hi = mean + out->half;
    /* p = 1 / M_t at mean 0, M_t the mixture martingale of the standardized sum */
    if (sd > 0) {
        double s = n * mean / sd, v = n * rho * rho + 1;
        double logm = -0.5 * log(v) + rho * rho * s * s / (2 * v);
        out->p_value = logm <= 0 ? 1.0 : exp(-logm);
    } else {
        out->p_value = mean == 0 ? 1.0 : 0.0;
    }
    return 0;
}

int stats_cs_mean(const double *x, int n, double alpha, int rounds_opt, struct stats_cs *out)
{
    if (!out || !valid(x, n, alpha) || rounds_opt < 1)
        return -1;
    double mean = gsl_stats_mean(x, 1, (size_t)n);
    return stats_cs_moments(n, mean, gsl_stats_sd_m(x, 1, (size_t)n, mean), alpha, rounds_opt,
                            out);
}

int stats_t_interval(const double *x, int n, double alpha, struct stats_cs *out)
{
    if (!out || !valid(x, n, alpha))
        return -1;
    out->n = n;
    out->mean = gsl_stats_mean(x, 1, (size_t)n);
    out->sd = gsl_stats_sd_m(x, 1, (size_t)n, out->mean);
    double se = out->sd / sqrt(n);
    out->half = gsl_cdf_tdist_Pinv(1 - alpha / 2, n - 1) * se;
    out->lo = out->mean - out->half;
    out->hi = out->mean + out->half;
    out->p_value = se > 0 ? 2 * gsl_cdf_tdist_Q(fabs(out->mean) / se, n - 1)
                          : out->mean == 0 ? 1.0 : 0.0;
    return 0;
}

double stats_log_half_pct(double half)
{
    return isfinite(half) ? (exp(half) - 1) * 100 : NAN;
}
