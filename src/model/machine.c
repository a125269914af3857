/* machine: the machine's state against its calibration, and calibrate's recommendation (see
 * machine.h). Owns no state. */
#include "model/machine.h"
#include "model/cells.h"
#include "stats/sequential.h"
#include "util/fmt.h"
#include "util/util.h"

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ALPHA 0.05

static double median_of(double *x, int n)
{
    if (n < 1)
        return NAN;
    gsl_sort(x, 1, (size_t)n);
    return gsl_stats_median_from_sorted_data(x, 1, (size_t)n);
}

/* the pooled CV of one run's tps over the cells (rms of sd / mean) */
static double pooled_cv(const struct experiment_result *res)
{
    double sum = 0;
    int cells = 0;
    for (int i = 0; i < res->nruns; i++) {
        const struct run_result *r = &res->runs[i];
        bool first = true;  /* each cell once: at its first run */
        for (int j = 0; j < i && first; j++)
            first = !(res->runs[j].variant == r->variant && res->runs[j].workload == r->workload &&
                      res->runs[j].threads == r->threads);
        if (!first)
            continue;
        int n;
        double *x =
            experiment_cell_values(res, r->variant, r->workload, r->threads, METRIC_TPS, &n);
        if (n >= 2) {
            double m = gsl_stats_mean(x, 1, (size_t)n);
            if (m > 0) {
                double cv = gsl_stats_sd_m(x, 1, (size_t)n, m) / m;
                sum += cv * cv;
                cells++;
            }
        }
        free(x);
    }
    return cells ? sqrt(sum / cells) * 100 : NAN;
}

void machine_state_of(const struct experiment_config *cfg, const struct experiment_result *res,
                      struct machine_state *out)
{
    double *sh = xcalloc((size_t)res->nruns + 1, sizeof(double));
    int nsh = 0;
    double *l = xcalloc((size_t)res->nruns + 1, sizeof(double));
    double *s = xcalloc((size_t)res->nruns + 1, sizeof(double));
    double *o = xcalloc((size_t)res->nruns + 1, sizeof(double));
    int n = 0;
    memset(out, 0, sizeof(*out));
    for (int i = 0; i < res->nruns; i++) {
        const struct run_metrics *m = &res->runs[i].metrics;
        if (!m->available)
            continue;
        const struct run_result *r = &res->runs[i];
        if (r->threads == 1 && r->variant >= 0 && r->variant < cfg->nvariants &&
            cfg->variants[r->variant].kind == VARIANT_SQLITE && m->wall_s > 0 &&
            isfinite(m->client_cpu_s))
            sh[nsh++] = m->client_cpu_s / m->wall_s;
        l[n] = m->load1;
        s[n] = m->steal_pct;
        o[n] = m->other_pct;
        n++;
    }
    out->nruns = n;
    out->created_at = res->started_at;
    out->load1 = median_of(l, n);
    out->steal_pct = median_of(s, n);
    out->other_pct = median_of(o, n);
    out->cv_tps_pct = pooled_cv(res);
    out->client_share = median_of(sh, nsh);
    free(sh);
    free(l);
    free(s);
    free(o);
}

int machine_busier(const struct machine_state *cal, const struct machine_state *now,
                   struct strbuf *why)
{
    int k = 0;
#define REASON(...)                                                                               \
    do {                                                                                          \
        if (why)                                                                                  \
            strbuf_addf(why, "%s", k ? "; " : "");                                                \
        if (why)                                                                                  \
            strbuf_addf(why, __VA_ARGS__);                                                        \
        k++;                                                                                      \
    } while (0)
    if (isfinite(cal->load1) && isfinite(now->load1) &&
        now->load1 > cal->load1 + MACHINE_LOAD_MORE && now->load1 > cal->load1 * 1.25)
        REASON("load1 %.2f vs %.2f at calibration", now->load1, cal->load1);
    if (isfinite(cal->steal_pct) && isfinite(now->steal_pct) &&
        now->steal_pct > cal->steal_pct + MACHINE_PCT_MORE)
        REASON("steal %.1f%% vs %.1f%%", now->steal_pct, cal->steal_pct);
    if (isfinite(cal->other_pct) && isfinite(now->other_pct) &&
        now->other_pct > cal->other_pct + MACHINE_PCT_MORE)
        REASON("other work %.1f%% of the CPU vs %.1f%%", now->other_pct, cal->other_pct);
    if (isfinite(cal->cv_tps_pct) && isfinite(now->cv_tps_pct) &&
        now->cv_tps_pct >= cal->cv_tps_pct * 1.5 && now->cv_tps_pct > cal->cv_tps_pct + 1)
        REASON("CV of tps %.1f%% vs %.1f%%", now->cv_tps_pct, cal->cv_tps_pct);
    if (isfinite(cal->client_share) && isfinite(now->client_share) &&
        now->client_share < cal->client_share * MACHINE_SHARE_LESS)
        REASON("the client got %.0f%% of a CPU vs %.0f%%", now->client_share * 100,
               cal->client_share * 100);
#undef REASON
    return k;
}

static json_t *state_json(const struct machine_state *m)
{
    return json_pack("{s:o,s:o,s:o,s:o,s:o,s:i}", "load1", jreal(m->load1), "steal_pct",
                     jreal(m->steal_pct), "other_pct", jreal(m->other_pct), "cv_tps_pct",
                     jreal(m->cv_tps_pct), "client_cpu_share", jreal(m->client_share), "runs",
                     m->nruns);
}

json_t *machine_busier_json(const struct machine_state *cal, const struct experiment_config *cfg,
                            const struct experiment_result *res)
{
    if (!cal)
        return json_null();
    struct machine_state now;
    struct strbuf why = STRBUF_INIT;
    machine_state_of(cfg, res, &now);
    int k = machine_busier(cal, &now, &why);
    json_t *reasons = json_array();
    for (char *p = why.buf; k && p && *p;) {
        char *e = strstr(p, "; ");
        json_array_append_new(reasons, json_stringn(p, e ? (size_t)(e - p) : strlen(p)));
        p = e ? e + 2 : NULL;
    }
    strbuf_release(&why);
    return json_pack("{s:I,s:b,s:o,s:o,s:o}", "calibration_experiment",
                     (json_int_t)cal->experiment_id, "busier", k > 0, "reasons", reasons, "now",
                     state_json(&now), "calibration", state_json(cal));
}

void machine_busier_text(struct strbuf *out, const struct machine_state *cal,
                         const struct experiment_config *cfg, const struct experiment_result *res)
{
    if (!cal)
        return;
    struct machine_state now;
    struct strbuf why = STRBUF_INIT;
    machine_state_of(cfg, res, &now);
    struct strbuf when_sb = STRBUF_INIT;
    iso_time(&when_sb, cal->created_at);
    const char *when = when_sb.buf;
    if (machine_busier(cal, &now, &why))
        strbuf_addf(out, "\nWARNING: the machine was busier than at calibration (experiment %lld, "
                         "%s): %s. The CIs hold but are wider, and fewer changes are detected; "
                         "measure again when it is quieter.\n",
                    (long long)cal->experiment_id, when, why.buf);
    else
        strbuf_addf(out, "\nMachine: no busier than at calibration (experiment %lld, %s): load1 "
                         "%.2f vs %.2f, CV of tps %.1f%% vs %.1f%%.\n",
                    (long long)cal->experiment_id, when, now.load1, cal->load1, now.cv_tps_pct,
                    cal->cv_tps_pct);
    strbuf_release(&when_sb);
    strbuf_release(&why);
}

/* ---------------------------------------------------------------- recommendation */

int machine_rounds_for(double sd_log, double target_pct)
{
    double goal = log1p(target_pct / 100);
    if (!(sd_log >= 0) || !(goal > 0))
        return INT32_MAX;
    /* tuned for t* = n, rho^2 n is a constant, so the factor falls as 1/sqrt(n): the least n
     * is found by bisection */
    int lo = STATS_CS_MIN_ROUNDS, hi = MACHINE_ROUNDS_MAX;
    if (sd_log * stats_cs_factor(hi, ALPHA, hi) > goal)
        return INT32_MAX;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (sd_log * stats_cs_factor(mid, ALPHA, mid) <= goal)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* A run's tps over its first L seconds (the mean of its first L per-second intervals), NAN
 * when it has fewer. */
static double tps_first(const struct run_result *r, int L)
{
    json_t *j = r->json ? json_loads(r->json, 0, NULL) : NULL;
    json_t *iv = json_object_get(j, "intervals");
    double sum = 0, v = NAN;
    if (json_is_array(iv) && (int)json_array_size(iv) >= L) {
        for (int i = 0; i < L; i++)
            sum += json_number_value(json_object_get(json_array_get(iv, (size_t)i), "tps"));
        v = sum / L;
    }
    json_decref(j);
    return v;
}

/* sd of the per-round log ratio of variant v against the baseline in cell (w, threads) with
 * runs cut to L seconds; NAN with < 3 rounds */
static double cell_sd(const struct experiment_result *res, int v, int w, int threads, int L,
                      int rounds)
{
    double *a = xcalloc((size_t)rounds + 1, sizeof(double)),
           *b = xcalloc((size_t)rounds + 1, sizeof(double));
    double *d = xcalloc((size_t)rounds + 1, sizeof(double));
    int n = 0;
    for (int r = 0; r < rounds; r++)
        a[r] = b[r] = NAN;
    for (int i = 0; i < res->nruns; i++) {
        const struct run_result *x = &res->runs[i];
        if (x->workload != w || x->threads != threads || x->round < 1 || x->round > rounds)
            continue;
        if (x->variant == 0)
            a[x->round - 1] = tps_first(x, L);
        else if (x->variant == v)
            b[x->round - 1] = tps_first(x, L);
    }
    for (int r = 0; r < rounds; r++)
        if (a[r] > 0 && b[r] > 0)
            d[n++] = log(b[r] / a[r]);
    double sd = n >= 3 ? gsl_stats_sd(d, 1, (size_t)n) : NAN;
    free(a);
    free(b);
    free(d);
    return sd;
}

void machine_recommend(const struct experiment_config *cfg, const struct experiment_result *res,
                       double target_pct, struct machine_recommendation *out)
{
    static const int lengths[] = { 1, 2, 3, 5, 10, 15, 20, 30, 60, 120, 300 };
    int rounds = 0;
    memset(out, 0, sizeof(*out));
    out->target_pct = target_pct;
    out->placement = cfg->placement.active;
    experiment_placement_describe(cfg, out->placement_desc, sizeof(out->placement_desc));
    for (int i = 0; i < res->nruns; i++)
        rounds = res->runs[i].round > rounds ? res->runs[i].round : rounds;
    /* the time between one run's start and the next's, less --time: copies, server start,
     * the child's start-up (the median over consecutive runs). The gap across a resume (the
     * first run of this process after runs loaded from the store) spans the interruption and
     * is left out; an experiment loaded whole (resumed == nruns, e.g. the calibration that
     * --from-calibration reads back) has no such boundary, so it gives the same overhead, and
     * the same recommendation, as when calibrate computed it live. */
    double *gap = xcalloc((size_t)res->nruns + 1, sizeof(double));
    int ng = 0;
    for (int i = 1; i < res->nruns; i++) {
        if (i == res->resumed)
            continue;
        double g = res->runs[i].started_at - res->runs[i - 1].started_at - cfg->time_s;
        if (isfinite(g) && g >= 0)
            gap[ng++] = g;
    }
    out->overhead_s = ng ? median_of(gap, ng) : 0.5;
    free(gap);
    double best = INFINITY;
    for (size_t k = 0; k < sizeof(lengths) / sizeof(lengths[0]) && lengths[k] <= cfg->time_s; k++) {
        int L = lengths[k];
        double sd = -INFINITY;  /* the worst cell's; NAN when some cell has none */
        for (int w = 0; w < cfg->nworkloads; w++)
            for (int v = 1; v < cfg->nvariants; v++)
                for (int t = 0; t < cfg->nthreads; t++) {
                    double s = cell_sd(res, v, w, cfg->threads[t], L, rounds);
                    sd = isnan(s) || isnan(sd) ? NAN : s > sd ? s : sd;
                }
        if (!isfinite(sd) || out->ncand >= 16)
            continue;
        int n = machine_rounds_for(sd, target_pct);
        double wall = n == INT32_MAX ? INFINITY
                                     : (double)n * cfg->nvariants * cfg->nworkloads *
                                           cfg->nthreads * (L + out->overhead_s);
        out->cand[out->ncand].run_s = L;
        out->cand[out->ncand].sd_log = sd;
        out->cand[out->ncand].rounds = n;
        out->cand[out->ncand].wall_s = wall;
        out->ncand++;
        if (wall < best) {
            best = wall;
            out->ok = true;
            out->run_s = L;
            out->rounds = n;
            out->max_rounds = 2 * n;
            out->sd_log = sd;
            out->wall_s = wall;
        }
    }
    if (!out->ncand)
        snprintf(out->why, sizeof(out->why), "needs at least 3 paired rounds with per-second "
                                             "intervals (time mode, --time >= 1)");
    else if (!out->ok)
        snprintf(out->why, sizeof(out->why),
                 "not reachable within %d rounds at any run length "
                 "(the noise is too large for +/-%g%%)",
                 MACHINE_ROUNDS_MAX, target_pct);
}
