/* precision: paired per-round statistics and --target-ci's stopping rule (see precision.h).
 * Owns no state. */
#include "model/precision.h"
#include "model/machine.h"
#include "stats/compare.h"
#include "stats/sequential.h"
#include "util/fmt.h"
#include "util/util.h"

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define ALPHA 0.05

static int max_round(const struct experiment_result *res)
{
    int m = 0;
    for (int i = 0; i < res->nruns; i++)
        m = res->runs[i].round > m ? res->runs[i].round : m;
    return m;
}

/* by_round[r - 1] = metric m of variant v's run of round r in cell (w, threads), NAN if none */
static double *values_by_round(const struct experiment_result *res, enum experiment_metric m,
                               int v, int w, int threads, int rounds)
{
    double *x = xcalloc((size_t)rounds + 1, sizeof(double));
    for (int r = 0; r < rounds; r++)
        x[r] = NAN;
    for (int i = 0; i < res->nruns; i++) {
        const struct run_result *run = &res->runs[i];
        if (run->variant == v && run->workload == w && run->threads == threads &&
            run->round >= 1 && run->round <= rounds)
            x[run->round - 1] = experiment_metric_value(run, m);
    }
    return x;
}

double *experiment_round_log_ratios(const struct experiment_result *res, enum experiment_metric m,
                                    int v, int w, int threads, int *n)
{
    int rounds = max_round(res);
    double *a = values_by_round(res, m, 0, w, threads, rounds);
    double *b = values_by_round(res, m, v, w, threads, rounds);
    double *d = xcalloc((size_t)rounds + 1, sizeof(double));
    *n = 0;
    for (int r = 0; r < rounds; r++)
        if (isfinite(a[r]) && isfinite(b[r]) && a[r] > 0 && b[r] > 0)
            d[(*n)++] = log(b[r] / a[r]);
    free(a);
    free(b);
    return d;
}

static int cs_rounds(const struct experiment_config *cfg)
{
    if (cfg->cs_rounds > 0)
        return cfg->cs_rounds;
    int t = cfg->rounds / 2;
    return t < TARGET_CS_ROUNDS_MIN ? TARGET_CS_ROUNDS_MIN : t;
}

/* CV of one run of variant v in the cell (sd / mean over its runs), NAN with < 2 runs */
static double cell_cv(const struct experiment_result *res, enum experiment_metric m, int v, int w,
                      int threads, double *sd_out, double *mean_out)
{
    int n;
    double *x = experiment_cell_values(res, v, w, threads, m, &n);
    double cv = NAN;
    if (n >= 2) {
        double mean = gsl_stats_mean(x, 1, (size_t)n), sd = gsl_stats_sd_m(x, 1, (size_t)n, mean);
        cv = mean > 0 ? sd / mean : NAN;
        if (sd_out)
            *sd_out = sd;
        if (mean_out)
            *mean_out = mean;
    }
    free(x);
    return cv;
}

/* The CI of the mean of d[0..n-1] into *cs: the sequence or the t interval. */
static int mean_ci(const struct experiment_config *cfg, const double *d, int n, bool sequential,
                   struct stats_cs *cs)
{
    if (sequential)
        return n >= STATS_CS_MIN_ROUNDS ? stats_cs_mean(d, n, ALPHA, cs_rounds(cfg), cs) : -1;
    return n >= 2 ? stats_t_interval(d, n, ALPHA, cs) : -1;
}

double experiment_round_log_sd_max(const struct experiment_config *cfg,
                                   const struct experiment_result *res, enum experiment_metric m,
                                   int v)
{
    double sd = NAN;
    for (int w = 0; w < cfg->nworkloads; w++)
        for (int t = 0; t < cfg->nthreads; t++) {
            int n;
            double *d = experiment_round_log_ratios(res, m, v, w, cfg->threads[t], &n);
            double s = n >= 2 ? gsl_stats_sd(d, 1, (size_t)n) : NAN;
            free(d);
            if (isfinite(s) && !(s <= sd))
                sd = s;
        }
    return sd;
}

void experiment_precision_cell(const struct experiment_config *cfg,
                               const struct experiment_result *res, enum experiment_metric m,
                               int v, int w, int threads, struct experiment_precision *out)
{
    int n;
    double *d = experiment_round_log_ratios(res, m, v, w, threads, &n);
    struct stats_cs cs;

    memset(out, 0, sizeof(*out));
    out->rounds = n;
    out->sequential = cfg->target_ci > 0;
    out->ratio = out->ci_lo = out->ci_hi = out->half_pct = out->p_value = NAN;
    out->detectable_pct = NAN;
    out->cv_base = cell_cv(res, m, 0, w, threads, NULL, NULL);
    out->cv_var = cell_cv(res, m, v, w, threads, NULL, NULL);
    if (n >= 1)
        out->ratio = exp(gsl_stats_mean(d, 1, (size_t)n));
    if (mean_ci(cfg, d, n, out->sequential, &cs) == 0) {
        out->stats = true;
        out->ratio = exp(cs.mean);
        out->ci_lo = exp(cs.lo);
        out->ci_hi = exp(cs.hi);
        out->half_pct = stats_log_half_pct(cs.half);
        out->p_value = cs.p_value;
        out->reached = out->sequential && out->half_pct <= cfg->target_ci;
        if (out->sequential) {
            double z = gsl_cdf_ugaussian_Pinv(STATS_POWER_DEFAULT);
            double f = stats_cs_factor(n, ALPHA, cs_rounds(cfg));
            out->detectable_pct = (exp(cs.sd * (f + z / sqrt(n))) - 1) * 100;
        }
    }
    if (!out->sequential && isfinite(out->cv_base) && isfinite(out->cv_var)) {
        /* the pooled CV of the two groups, as stats_calibrate() pools an A/A pair */
        double cv = sqrt((out->cv_base * out->cv_base + out->cv_var * out->cv_var) / 2);
        int nb, nv;
        free(experiment_cell_values(res, 0, w, threads, m, &nb));
        free(experiment_cell_values(res, v, w, threads, m, &nv));
        double dc = stats_detectable_change(cv, nb < nv ? nb : nv, ALPHA, STATS_POWER_DEFAULT);
        out->detectable_pct = isfinite(dc) ? dc * 100 : INFINITY;
    }
    free(d);
}

int experiment_target_cells(const struct experiment_config *cfg,
                            const struct experiment_result *res, int w, int *reached,
                            double *worst)
{
    int total = 0;
    *reached = 0;
    if (worst)
        *worst = -INFINITY;
    for (int wi = 0; wi < cfg->nworkloads; wi++) {
        if (w >= 0 && wi != w)
            continue;
        for (int v = 1; v < cfg->nvariants; v++)
            for (int t = 0; t < cfg->nthreads; t++) {
                struct experiment_precision p;
                experiment_precision_cell(cfg, res, experiment_target_metric(cfg), v, wi,
                                          cfg->threads[t], &p);
                total++;
                *reached += p.reached;
                if (worst)
                    *worst = !p.stats || isnan(*worst) ? NAN
                             : p.half_pct > *worst     ? p.half_pct
                                                       : *worst;
            }
    }
    return total;
}

const char *experiment_target_stop_reason(const struct experiment_config *cfg,
                                          const struct experiment_result *res)
{
    int reached;
    if (cfg->target_ci <= 0)
        return NULL;
    if (experiment_target_cells(cfg, res, -1, &reached, NULL) == reached)
        return "target reached";
    for (int w = 0; w < cfg->nworkloads; w++) {
        int full = 1;
        for (int v = 0; v < cfg->nvariants && full; v++)
            for (int t = 0; t < cfg->nthreads && full; t++) {
                int n;
                free(experiment_cell_values(res, v, w, cfg->threads[t], METRIC_TPS, &n));
                full = n >= cfg->rounds;
            }
        if (full)
            return "--max-rounds";
    }
    return "--max-time";
}

int experiment_change_cfg(const struct experiment_config *cfg,
                          const struct experiment_result *res, enum experiment_metric m, int v,
                          const int *workloads, const int *threads, int ncells, uint64_t seed,
                          struct experiment_change *out)
{
    return experiment_change_cfg_over(cfg, res, m, 0, v, workloads, threads, ncells, seed, out);
}

int experiment_change_cfg_over(const struct experiment_config *cfg,
                               const struct experiment_result *res, enum experiment_metric m,
                               int base, int v, const int *workloads, const int *threads,
                               int ncells, uint64_t seed, struct experiment_change *out)
{
    if (cfg->target_ci <= 0 || cfg->measure != MEASURE_TIME)
        return experiment_change_over(res, m, base, v, workloads, threads, ncells, seed, out);
    /* per round, the mean over the cells of their log ratios (rounds every cell has) */
    int rounds = max_round(res), nc = 0, n = 0;
    double *sum = xcalloc((size_t)rounds + 1, sizeof(double));
    int *cnt = xcalloc((size_t)rounds + 1, sizeof(int));
    memset(out, 0, sizeof(*out));
    out->lower_is_better = experiment_metric_lower_is_better(m);
    out->level = 1 - ALPHA;
    out->p_value = 1;
    out->sequential = true;
    for (int i = 0; i < ncells; i++) {
        double *a = values_by_round(res, m, base, workloads[i], threads[i], rounds);
        double *b = values_by_round(res, m, v, workloads[i], threads[i], rounds);
        int any = 0;
        for (int r = 0; r < rounds; r++) {
            if (isfinite(a[r]) && isfinite(b[r]) && a[r] > 0 && b[r] > 0) {
                sum[r] += log(b[r] / a[r]);
                cnt[r]++;
                any = 1;
            }
            out->n1 += isfinite(a[r]);
            out->n2 += isfinite(b[r]);
        }
        nc += any;
        free(a);
        free(b);
    }
    for (int r = 0; r < rounds; r++)
        if (nc && cnt[r] == nc)
            sum[n++] = sum[r] / nc;
    out->ncells = nc;
    out->pooled = nc > 1;
    if (n >= 1) {
        struct stats_cs cs;
        out->ratio = exp(gsl_stats_mean(sum, 1, (size_t)n));
        out->ci_lo = out->ci_hi = out->ratio;
        if (n >= STATS_CS_MIN_ROUNDS && stats_cs_mean(sum, n, ALPHA, cs_rounds(cfg), &cs) == 0) {
            out->stats = true;
            out->ratio = exp(cs.mean);
            out->ci_lo = exp(cs.lo);
            out->ci_hi = exp(cs.hi);
            out->p_value = cs.p_value;
            out->significant = cs.lo > 0 || cs.hi < 0;
        }
    }
    (void)seed;
    free(sum);
    free(cnt);
    return 0;
}

static json_t *pct_json(double x)
{
    return isfinite(x) ? jreal(x) : json_null();
}

enum experiment_metric experiment_target_metric(const struct experiment_config *cfg)
{
    return cfg->target_metric == METRIC_CPU_US ? METRIC_CPU_US : METRIC_TPS;
}

const char *experiment_target_metric_name(const struct experiment_config *cfg)
{
    return experiment_target_metric(cfg) == METRIC_CPU_US ? "CPU time per transaction" : "tps";
}

/* The per-cell precision of metric m as a JSON array; with_change: each cell's change too. */
static json_t *cells_json(const struct experiment_config *cfg, const struct experiment_result *res,
                          enum experiment_metric m, bool with_change)
{
    bool tgt = cfg->target_ci > 0 && experiment_target_metric(cfg) == m;
    json_t *cells = json_array();
    for (int w = 0; w < cfg->nworkloads; w++)
        for (int v = 1; v < cfg->nvariants; v++)
            for (int t = 0; t < cfg->nthreads; t++) {
                struct experiment_precision p;
                experiment_precision_cell(cfg, res, m, v, w, cfg->threads[t], &p);
                json_t *o = json_object();
                json_object_set_new(o, "variant", jstr(cfg->variants[v].name));
                json_object_set_new(o, "workload", jstr(cfg->workloads[w]));
                json_object_set_new(o, "threads", json_integer(cfg->threads[t]));
                json_object_set_new(o, "rounds", json_integer(p.rounds));
                json_object_set_new(o, "cv_baseline_pct", pct_json(p.cv_base * 100));
                json_object_set_new(o, "cv_variant_pct", pct_json(p.cv_var * 100));
                json_object_set_new(o, "detectable_change_pct", pct_json(p.detectable_pct));
                json_object_set_new(o, "ratio", pct_json(p.ratio));
                json_object_set_new(o, "ratio_ci", p.stats ? json_pack("[o,o]", jreal(p.ci_lo),
                                                                       jreal(p.ci_hi))
                                                           : json_null());
                json_object_set_new(o, "half_width_pct", pct_json(p.half_pct));
                json_object_set_new(o, "target_reached",
                                    tgt ? json_boolean(p.reached) : json_null());
                if (with_change) {
                    struct experiment_change ch;
                    int thr = cfg->threads[t];
                    double lo = NAN, hi = NAN, pct = NAN;
                    bool ok = experiment_change_cfg(cfg, res, m, v, &w, &thr, 1,
                                                    cfg->seed ^ (uint64_t)(w * 131 + v * 17 + t),
                                                    &ch) == 0 && ch.ncells > 0;
                    if (ok)
                        pct = experiment_change_pct(&ch, &lo, &hi);
                    json_object_set_new(o, "change_pct", pct_json(pct));
                    json_object_set_new(o, "change_ci_pct", ok && ch.stats
                                                                ? json_pack("[o,o]", pct_json(lo),
                                                                            pct_json(hi))
                                                                : json_null());
                    json_object_set_new(o, "significant", ok && ch.stats
                                                              ? json_boolean(ch.significant)
                                                              : json_null());
                }
                json_array_append_new(cells, o);
            }
    return cells;
}

json_t *experiment_precision_json(const struct experiment_config *cfg,
                                  const struct experiment_result *res)
{
    if (cfg->measure != MEASURE_TIME)
        return NULL;
    json_t *root = json_object();
    int reached, total = experiment_target_cells(cfg, res, -1, &reached, NULL);
    bool tgt = cfg->target_ci > 0;
    json_object_set_new(root, "sequential", json_boolean(tgt));
    json_object_set_new(root, "target_ci_pct", tgt ? jreal(cfg->target_ci) : json_null());
    json_object_set_new(root, "stop_reason", jstr(experiment_target_stop_reason(cfg, res)));
    json_object_set_new(root, "cells_reached", tgt ? json_integer(reached) : json_null());
    json_object_set_new(root, "cells", json_integer(total));
    json_object_set_new(root, "target_metric",
                        json_string(experiment_metric_key(experiment_target_metric(cfg))));
    json_object_set_new(root, "per_cell", cells_json(cfg, res, METRIC_TPS, false));
    json_object_set_new(root, "cpu_per_txn", experiment_has_metric(res, -1, METRIC_CPU_US)
                                                 ? cells_json(cfg, res, METRIC_CPU_US, true)
                                                 : json_null());
    char place[2 * PLACEMENT_STR_MAX + 64];
    experiment_placement_describe(cfg, place, sizeof(place));
    json_object_set_new(root, "cpu_placement", json_string(place));
    json_object_set_new(root, "busier_than_calibration",
                        machine_busier_json(cfg->calibration, cfg, res));
    return root;
}
