/* report/noise: the noise and precision tables of an experiment report (see noise.h). */
#include "report/noise.h"
#include "model/machine.h"
#include "model/precision.h"
#include "report/rep.h"
#include "report/tables.h"
#include "report/text_table.h"
#include "util/strbuf.h"
#include "util/util.h"

#include <math.h>
#include <stdlib.h>

static char *pct_cell(double x)
{
    if (isnan(x))
        return xstrdup("-");
    if (isinf(x))
        return xstrdup("none");
    return xasprintf("%.1f%%", x);
}

/* The range lo..hi of x over the cells (NAN and infinities left out). */
static void widen(double x, double *lo, double *hi)
{
    if (!isfinite(x))
        return;
    *lo = x < *lo ? x : *lo;
    *hi = x > *hi ? x : *hi;
}

static void add_range(struct strbuf *out, double lo, double hi)
{
    strbuf_addf(out, "%.1f%%", lo);
    if (hi - lo >= 0.05)
        strbuf_addf(out, "-%.1f%%", hi);
}

/* The noise and precision table of metric m (METRIC_TPS or METRIC_CPU_US: the latter with
 * each cell's change and its CI), then the sentence on its noise. */
static void precision_table(struct rep *r, enum experiment_metric m, const char *name)
{
    const struct experiment_config *cfg = r->cfg;
    const struct experiment_result *res = r->res;
    bool tgt = cfg->target_ci > 0 && experiment_target_metric(cfg) == m;
    bool change = m != METRIC_TPS;  /* tps's change is in the shape's own tables */
    int ncells = cfg->nworkloads * (cfg->nvariants - 1) * cfg->nthreads, row = 0;
    enum { NCOL = 10 };
    struct table t;
    double cv_lo = INFINITY, cv_hi = -INFINITY, det_lo = INFINITY, det_hi = -INFINITY;
    char *title;
    if (cfg->target_ci > 0)
        title = xasprintf("Noise and precision (%s): CV of one run, the change the rounds could "
                          "detect (80%% power), the sequential 95%% CI's half-width%s%s", name,
                          tgt ? " against --target-ci" : "", change ? ", and the change" : "");
    else
        title = xasprintf("Noise and precision (%s): CV of one run, the change the rounds could "
                          "detect (80%% power, Mann-Whitney), the paired 95%% CI's half-width "
                          "(t interval of the per-round log ratios)%s", name,
                          change ? ", and the change" : "");
    rep_table_title(r, title);
    free(title);
    table_init(&t, NCOL - !change, ncells);
    int c = 0;
    t.head[c++] = xstrdup("variant");
    t.head[c++] = xstrdup("workload");
    t.head[c++] = xstrdup("threads");
    t.head[c++] = xstrdup("rounds");
    t.head[c++] = xasprintf("CV %s", cfg->variants[0].name);
    t.head[c++] = xstrdup("CV variant");
    t.head[c++] = xstrdup("detectable change");
    t.head[c++] = xstrdup("CI half-width");
    t.head[c++] = tgt ? xasprintf("target +/-%g%%", cfg->target_ci) : xstrdup("target");
    if (change)  /* last, as the change column of the other tables */
        t.head[c++] = xstrdup("change (95% CI)");
    for (int w = 0; w < cfg->nworkloads; w++)
        for (int v = 1; v < cfg->nvariants; v++)
            for (int ti = 0; ti < cfg->nthreads; ti++, row++) {
                struct experiment_precision p;
                int thr = cfg->threads[ti];
                experiment_precision_cell(cfg, res, m, v, w, thr, &p);
                c = 0;
                table_set(&t, row, c++, xstrdup(cfg->variants[v].name), NULL);
                table_set(&t, row, c++, xstrdup(cfg->workloads[w]), NULL);
                table_set(&t, row, c++, xasprintf("%d", thr), NULL);
                table_set(&t, row, c++, xasprintf("%d", p.rounds), NULL);
                table_set(&t, row, c++, pct_cell(p.cv_base * 100), NULL);
                table_set(&t, row, c++, pct_cell(p.cv_var * 100), NULL);
                table_set(&t, row, c++, pct_cell(p.detectable_pct), NULL);
                table_set(&t, row, c++, p.stats ? xasprintf("+/-%.1f%%", p.half_pct)
                                                : xstrdup("-"), NULL);
                table_set(&t, row, c++, !tgt ? xstrdup("-")
                                        : xstrdup(p.reached ? "reached" : "NOT reached"), NULL);
                if (change) {
                    struct experiment_change ch;
                    struct strbuf sb = STRBUF_INIT;
                    if (experiment_change_cfg(cfg, res, m, v, &w, &thr, 1,
                                              report_cell_seed(cfg, w, v, ti, m), &ch) == 0)
                        experiment_change_format(&sb, &ch);
                    else
                        strbuf_addstr(&sb, "-");
                    table_set(&t, row, c++, strbuf_detach(&sb), NULL);
                }
                widen(p.cv_base * 100, &cv_lo, &cv_hi);
                widen(p.cv_var * 100, &cv_lo, &cv_hi);
                widen(p.detectable_pct, &det_lo, &det_hi);
            }
    rep_table_emit(r, &t);
    struct strbuf *out = r->out;
    if (isfinite(cv_lo)) {
        strbuf_addf(out, "\nNoise: one run's %s varied by ", name);
        add_range(out, cv_lo, cv_hi);
        strbuf_addstr(out, " (CV)");
        if (isfinite(det_lo)) {
            strbuf_addstr(out, "; these rounds could detect a change of about ");
            add_range(out, det_lo, det_hi);
            strbuf_addstr(out, " (smaller changes show as \"~\")");
        }
        strbuf_addstr(out, ".\n");
    }
}

/* The CSV rows of the precision table of metric m (a table of its own): per (variant,
 * workload, threads) the CV of one run (value: the variant's, baseline_value: the
 * baseline's), the detectable change and the CI half-width, as "<metric>_cv_pct",
 * "<metric>_detectable_change_pct" and "<metric>_ci_half_width_pct" (percent; NAN: none). */
static void precision_csv(struct rep *r, enum experiment_metric m)
{
    static const char *const keys[][3] = {
        { "tps_cv_pct", "tps_detectable_change_pct", "tps_ci_half_width_pct" },
        { "cpu_us_per_txn_cv_pct", "cpu_us_per_txn_detectable_change_pct",
          "cpu_us_per_txn_ci_half_width_pct" },
    };
    const struct experiment_config *cfg = r->cfg;
    const char *const *k = keys[m == METRIC_TPS ? 0 : 1];
    r->tableno++;
    for (int w = 0; w < cfg->nworkloads; w++)
        for (int v = 1; v < cfg->nvariants; v++)
            for (int ti = 0; ti < cfg->nthreads; ti++) {
                struct experiment_precision p;
                experiment_precision_cell(cfg, r->res, m, v, w, cfg->threads[ti], &p);
                double half = p.stats ? p.half_pct : NAN;
                double det = isfinite(p.detectable_pct) ? p.detectable_pct : NAN;
                rep_rec_add(r, w, cfg->threads[ti], k[0], v, p.cv_var * 100, p.cv_base * 100, NAN);
                rep_rec_add(r, w, cfg->threads[ti], k[1], v, det, NAN, NAN);
                rep_rec_add(r, w, cfg->threads[ti], k[2], v, half, NAN, NAN);
            }
}

void report_precision(struct rep *r)
{
    const struct experiment_config *cfg = r->cfg;
    const struct experiment_result *res = r->res;
    if (r->fmt == REPORT_CSV) {
        if (cfg->nworkloads * (cfg->nvariants - 1) * cfg->nthreads < 1)
            return;
        precision_csv(r, METRIC_TPS);
        if (experiment_has_metric(res, -1, METRIC_CPU_US))
            precision_csv(r, METRIC_CPU_US);
        return;
    }
    if (r->fmt == REPORT_JSON) {
        json_t *j = experiment_precision_json(cfg, res);
        if (!j)
            return;
        if (!r->extra)
            r->extra = json_object();
        json_object_set_new(r->extra, "precision", j);
        return;
    }
    /* the text table in the default shape (the one compare and pgo print) only: the seed
     * shapes keep their published layout */
    if ((r->fmt != REPORT_TEXT && r->fmt != REPORT_MARKDOWN) || r->shape != REPORT_SEED000)
        return;
    if (cfg->nworkloads * (cfg->nvariants - 1) * cfg->nthreads < 1)
        return;
    precision_table(r, METRIC_TPS, "tps");
    if (experiment_has_metric(res, -1, METRIC_CPU_US))
        precision_table(r, METRIC_CPU_US, "CPU time per transaction, client + server");
    machine_busier_text(r->out, cfg->calibration, cfg, res);
}
