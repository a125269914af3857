/* cells: per-cell statistics of an experiment's results (see cells.h). Owns no state. */
#include "model/cells.h"
#include "stats/compare.h"
#include "stats/sequential.h"
#include "util/strbuf.h"
#include "util/util.h"

#include <assert.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const metric_key[METRIC_ALL] = { "tps",        "lat_avg_ms", "lat_p95_ms",
                                                   "qps",        "lat_min_ms", "lat_max_ms",
                                                   "instr_per_txn", "i1_miss_per_txn",
                                                   "branch_miss_per_txn", "d1_miss_per_txn",
                                                   "ll_miss_per_txn", "est_cycles_per_txn",
                                                   "cpu_us_per_txn", "server_user_us_per_txn",
                                                   "server_sys_us_per_txn" };

_Static_assert(sizeof(metric_key) / sizeof(metric_key[0]) == METRIC_ALL, "a key per metric");

bool experiment_has_metric(const struct experiment_result *res, int w, enum experiment_metric m)
{
    assert(res);
    for (int i = 0; i < res->nruns; i++)
        if ((w < 0 || res->runs[i].workload == w) &&
            isfinite(experiment_metric_value(&res->runs[i], m)))
            return true;
    return false;
}

double experiment_metric_value(const struct run_result *r, enum experiment_metric m)
{
    assert(r);
    switch (m) {
    case METRIC_TPS: return r->tps;
    case METRIC_LAT_AVG_MS: return r->lat_avg_ms;
    case METRIC_LAT_P95_MS: return r->lat_p95_ms;
    case METRIC_QPS: return r->qps;
    case METRIC_LAT_MIN_MS: return r->lat_min_ms;
    case METRIC_LAT_MAX_MS: return r->lat_max_ms;
    case METRIC_INSTR: return r->instr_per_txn;
    case METRIC_I1_MISS: return r->i1_miss_per_txn;
    case METRIC_BRANCH_MISS: return r->branch_miss_per_txn;
    case METRIC_D1_MISS: return r->d1_miss_per_txn;
    case METRIC_LL_MISS: return r->ll_miss_per_txn;
    case METRIC_EST_CYCLES: return r->est_cycles_per_txn;
    case METRIC_CPU_US: {
        const struct run_metrics *x = &r->metrics;
        if (!x->available || !isfinite(x->client_us_per_txn))
            return NAN;
        return x->client_us_per_txn + (isfinite(x->server_us_per_txn) ? x->server_us_per_txn : 0);
    }
    case METRIC_SERVER_USER_US:
        return r->metrics.available ? r->metrics.server_user_us_per_txn : NAN;
    case METRIC_SERVER_SYS_US:
        return r->metrics.available ? r->metrics.server_sys_us_per_txn : NAN;
    }
    return NAN;
}

const char *experiment_metric_key(enum experiment_metric m)
{
    return (int)m >= 0 && (int)m < METRIC_ALL ? metric_key[m] : "?";
}

bool experiment_metric_lower_is_better(enum experiment_metric m)
{
    return m != METRIC_TPS && m != METRIC_QPS;
}

double *experiment_cell_values(const struct experiment_result *res, int variant, int workload,
                               int threads, enum experiment_metric m, int *n)
{
    assert(res->nruns >= 0 && (res->nruns == 0 || res->runs));
    assert(variant >= 0 && workload >= 0 && threads >= 1);  /* indices and a thread count */
    double *x = xcalloc((size_t)res->nruns + 1, sizeof(double));
    *n = 0;
    for (int i = 0; i < res->nruns; i++) {
        const struct run_result *r = &res->runs[i];
        double val;
        if (r->variant == variant && r->workload == workload && r->threads == threads &&
            isfinite(val = experiment_metric_value(r, m))) /* NaN: not in that run's report */
            x[(*n)++] = val;
    }
    return x;
}

struct cell_stats experiment_cell(const struct experiment_result *res, int variant, int workload,
                                  int threads, enum experiment_metric m)
{
    struct cell_stats c = { 0, 0, 0, 0 };
    double *x = experiment_cell_values(res, variant, workload, threads, m, &c.n);
    if (c.n) {
        gsl_sort(x, 1, (size_t)c.n);
        c.median = gsl_stats_median_from_sorted_data(x, 1, (size_t)c.n);
        c.min = x[0];
        c.max = x[c.n - 1];
    }
    free(x);
    return c;
}

double experiment_workload_cells(const struct experiment_config *cfg,
                                 const struct experiment_result *res, int w,
                                 enum experiment_metric m, struct cell_stats *cs, double *avg)
{
    int nv = cfg->nvariants, nt = cfg->nthreads;
    double *col = xcalloc((size_t)nt + 1, sizeof(double));
    double minv = INFINITY;
    assert(nv >= 1 && nt >= 1);
    for (int ti = 0; ti < nt; ti++)
        for (int v = 0; v < nv; v++) {
            struct cell_stats *c = &cs[ti * nv + v];
            *c = experiment_cell(res, v, w, cfg->threads[ti], m);
            if (c->n && c->min < minv)
                minv = c->min;
        }
    /* Average row: thread rows where every variant has data; mean of their medians. */
    for (int v = 0; v < nv; v++) {
        int navg = 0;
        for (int ti = 0; ti < nt; ti++) {
            bool full = true;
            for (int u = 0; u < nv; u++)
                full &= cs[ti * nv + u].n > 0;
            if (full)
                col[navg++] = cs[ti * nv + v].median;
        }
        avg[v] = navg ? gsl_stats_mean(col, 1, (size_t)navg) : NAN;
    }
    free(col);
    return minv;
}

uint64_t experiment_cell_seed(const struct experiment_config *cfg, int w, int v, int row,
                              enum experiment_metric m)
{
    return cfg->seed ^ ((uint64_t)(w * 131 + v * 17 + row) << 20 | (uint64_t)m);
}

double experiment_improvement(enum experiment_metric m, double base, double value)
{
    if (base == 0 || isnan(base) || isnan(value))
        return NAN;
    if (!experiment_metric_lower_is_better(m))
        return (value - base) / base * 100.0;
    return (base - value) / base * 100.0;
}

static double median_of(const double *x, int n)
{
    double *sorted = xmalloc(sizeof(double) * (size_t)n);
    memcpy(sorted, x, sizeof(double) * (size_t)n);
    gsl_sort(sorted, 1, (size_t)n);
    double med = gsl_stats_median_from_sorted_data(sorted, 1, (size_t)n);
    free(sorted);
    return med;
}

int experiment_change(const struct experiment_result *res, enum experiment_metric m, int v,
                      const int *workloads, const int *threads, int ncells, uint64_t seed,
                      struct experiment_change *out)
{
    return experiment_change_over(res, m, 0, v, workloads, threads, ncells, seed, out);
}

int experiment_change_values(const double *a, int n1, const double *b, int n2,
                             enum experiment_metric m, uint64_t seed,
                             struct experiment_change *out)
{
    struct stats_opts so = STATS_OPTS_DEFAULT;
    struct stats_verdict vd;

    memset(out, 0, sizeof(*out));
    so.seed = seed;
    out->lower_is_better = experiment_metric_lower_is_better(m);
    out->level = 1 - so.alpha;
    out->p_value = 1;
    if (n1 < 1 || n2 < 1)
        return 0; /* no data for both: nothing to compare */
    out->ncells = 1;
    out->n1 = n1;
    out->n2 = n2;
    out->stats = n1 >= 2 && n2 >= 2;
    if (stats_compare(a, n1, b, n2, &so, &vd) < 0) {
        memset(out, 0, sizeof(*out));
        return -1;
    }
    out->ratio = vd.ratio;
    out->ci_lo = out->stats ? vd.ci_lo : vd.ratio;
    out->ci_hi = out->stats ? vd.ci_hi : vd.ratio;
    out->p_value = vd.p_value;
    out->significant = out->stats && vd.significant;
    return 0;
}

int experiment_change_over(const struct experiment_result *res, enum experiment_metric m,
                           int base, int v, const int *workloads, const int *threads,
                           int ncells, uint64_t seed, struct experiment_change *out)
{
    struct stats_opts so = STATS_OPTS_DEFAULT;
    struct stats_cell *cells = xcalloc((size_t)ncells + 1, sizeof(*cells));
    double **vals = xcalloc((size_t)ncells * 2 + 1, sizeof(*vals));
    int nc = 0, small = 0, rc = 0;

    assert(ncells >= 0 && (ncells == 0 || (workloads && threads)));
    assert(base >= 0 && v >= 0);
    memset(out, 0, sizeof(*out));
    so.seed = seed;
    out->lower_is_better = experiment_metric_lower_is_better(m);
    out->level = 1 - so.alpha;
    out->p_value = 1;
    for (int i = 0; i < ncells; i++) {
        struct stats_cell *c = &cells[nc];
        vals[2 * i] = experiment_cell_values(res, base, workloads[i], threads[i], m, &c->n1);
        vals[2 * i + 1] = experiment_cell_values(res, v, workloads[i], threads[i], m, &c->n2);
        c->a = vals[2 * i];
        c->b = vals[2 * i + 1];
        if (c->n1 < 1 || c->n2 < 1)
            continue; /* a cell without data for both is left out */
        small |= c->n1 < 2 || c->n2 < 2;
        out->n1 += c->n1;
        out->n2 += c->n2;
        nc++;
    }
    out->ncells = nc;
    out->pooled = nc > 1;
    out->stats = nc > 0 && !small;
    if (!nc)
        goto done;
    if (nc == 1) { /* the cell with data for both, as its values alone give it */
        rc = experiment_change_values(cells[0].a, cells[0].n1, cells[0].b, cells[0].n2, m, seed,
                                      out);
        goto done;
    }
    struct stats_interval iv;
    if (stats_geomean_ratio(cells, nc, &so, &iv) < 0) {
        rc = -1;
        goto done;
    }
    out->ratio = iv.ratio;
    out->ci_lo = out->stats ? iv.ci_lo : iv.ratio;
    out->ci_hi = out->stats ? iv.ci_hi : iv.ratio;
    if (out->stats) {
        /* Every round pooled over the cells, each divided by its cell's baseline median. */
        double *pa = xcalloc((size_t)out->n1, sizeof(double));
        double *pb = xcalloc((size_t)out->n2, sizeof(double));
        int na = 0, nb = 0;
        struct stats_mw mw;
        for (int i = 0; i < nc; i++) {
            double med = median_of(cells[i].a, cells[i].n1);
            for (int k = 0; k < cells[i].n1; k++)
                pa[na++] = cells[i].a[k] / med;
            for (int k = 0; k < cells[i].n2; k++)
                pb[nb++] = cells[i].b[k] / med;
        }
        assert(na == out->n1 && nb == out->n2);  /* every round of every cell, once */
        if (stats_mann_whitney(pa, na, pb, nb, &mw) < 0) {
            rc = -1;
        } else {
            out->p_value = mw.p;
            out->significant = mw.p < so.alpha && !(iv.ci_lo <= 1.0 && iv.ci_hi >= 1.0);
        }
        free(pa);
        free(pb);
    }
done:
    for (int i = 0; i < 2 * ncells; i++)
        free(vals[i]);
    free(vals);
    free(cells);
    if (rc < 0)
        memset(out, 0, sizeof(*out));
    return rc;
}

void experiment_change_format(struct strbuf *sb, const struct experiment_change *c)
{
    if (!c->ncells) {
        strbuf_addstr(sb, "-");
    } else if (!c->stats && c->sequential) {
        strbuf_addf(sb, "no statistics before %d rounds", STATS_CS_MIN_ROUNDS);
    } else if (!c->stats) {
        strbuf_addstr(sb, "no statistics with 1 round");
    } else if (!c->significant) {
        strbuf_addstr(sb, "~");
    } else {
        /* stats_format_change's significant case; the Average rows print the same way */
        struct stats_interval iv = { c->ratio, c->ci_lo, c->ci_hi, c->level };
        stats_format_interval(sb, &iv, c->lower_is_better);
    }
}

double experiment_change_pct(const struct experiment_change *c, double *lo, double *hi)
{
    double a, b;
    if (!c->ncells) {
        if (lo)
            *lo = NAN;
        if (hi)
            *hi = NAN;
        return NAN;
    }
    a = stats_change_pct(c->ci_lo, c->lower_is_better);
    b = stats_change_pct(c->ci_hi, c->lower_is_better);
    if (lo)
        *lo = a < b ? a : b;
    if (hi)
        *hi = a < b ? b : a;
    return stats_change_pct(c->ratio, c->lower_is_better);
}
