/* report/precision: the noise and precision table of an experiment report (see precision.h). */
#include "report/precision.h"
#include "experiment/precision.h"
#include "report/rep.h"
#include "report/tables.h"
#include "report/table.h"
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

void report_precision(struct rep *r)
{
    const struct experiment_config *cfg = r->cfg;
    const struct experiment_result *res = r->res;
    bool tgt = cfg->target_ci > 0;
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
    int ncells = cfg->nworkloads * (cfg->nvariants - 1) * cfg->nthreads, row = 0;
    if (ncells < 1)
        return;
    enum { NCOL = 9 };
    struct table t;
    double cv_lo = INFINITY, cv_hi = -INFINITY, det_lo = INFINITY, det_hi = -INFINITY;
    rep_table_title(r, tgt ? "Noise and precision (tps): CV of one run, the change the rounds "
                             "could detect (80% power), and the sequential 95% CI's half-width "
                             "against --target-ci"
                           : "Noise and precision (tps): CV of one run, the change the rounds "
                             "could detect (80% power, Mann-Whitney), and the paired 95% CI's "
                             "half-width (t interval of the per-round log ratios)");
    table_init(&t, NCOL, ncells);
    t.head[0] = xstrdup("variant");
    t.head[1] = xstrdup("workload");
    t.head[2] = xstrdup("threads");
    t.head[3] = xstrdup("rounds");
    t.head[4] = xasprintf("CV %s", cfg->variants[0].name);
    t.head[5] = xstrdup("CV variant");
    t.head[6] = xstrdup("detectable change");
    t.head[7] = xstrdup("CI half-width");
    t.head[8] = tgt ? xasprintf("target +/-%g%%", cfg->target_ci) : xstrdup("target");
    for (int w = 0; w < cfg->nworkloads; w++)
        for (int v = 1; v < cfg->nvariants; v++)
            for (int ti = 0; ti < cfg->nthreads; ti++, row++) {
                struct experiment_precision p;
                experiment_precision_cell(cfg, res, METRIC_TPS, v, w, cfg->threads[ti], &p);
                table_set(&t, row, 0, xstrdup(cfg->variants[v].name), NULL);
                table_set(&t, row, 1, xstrdup(cfg->workloads[w]), NULL);
                table_set(&t, row, 2, xasprintf("%d", cfg->threads[ti]), NULL);
                table_set(&t, row, 3, xasprintf("%d", p.rounds), NULL);
                table_set(&t, row, 4, pct_cell(p.cv_base * 100), NULL);
                table_set(&t, row, 5, pct_cell(p.cv_var * 100), NULL);
                table_set(&t, row, 6, pct_cell(p.detectable_pct), NULL);
                table_set(&t, row, 7, p.stats ? xasprintf("+/-%.1f%%", p.half_pct)
                                              : xstrdup("-"), NULL);
                table_set(&t, row, 8, !tgt ? xstrdup("-")
                                      : xstrdup(p.reached ? "reached" : "NOT reached"), NULL);
                for (int k = 0; k < 2; k++) {
                    double cv = (k ? p.cv_var : p.cv_base) * 100;
                    if (isfinite(cv)) {
                        cv_lo = cv < cv_lo ? cv : cv_lo;
                        cv_hi = cv > cv_hi ? cv : cv_hi;
                    }
                }
                if (isfinite(p.detectable_pct)) {
                    det_lo = p.detectable_pct < det_lo ? p.detectable_pct : det_lo;
                    det_hi = p.detectable_pct > det_hi ? p.detectable_pct : det_hi;
                }
            }
    rep_table_emit(r, &t);
    struct strbuf *out = r->out;
    if (isfinite(cv_lo)) {
        strbuf_addf(out, "\nNoise: one run's tps varied by %.1f%%", cv_lo);
        if (cv_hi - cv_lo >= 0.05)
            strbuf_addf(out, "-%.1f%%", cv_hi);
        strbuf_addstr(out, " (CV)");
        if (isfinite(det_lo)) {
            strbuf_addf(out, "; these rounds could detect a change of about %.1f%%", det_lo);
            if (det_hi - det_lo >= 0.05)
                strbuf_addf(out, "-%.1f%%", det_hi);
            strbuf_addstr(out, " (smaller changes show as \"~\")");
        }
        strbuf_addstr(out, ".\n");
    }
}
