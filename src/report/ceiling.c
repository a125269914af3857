/* report/ceiling: what a build could change, beside what it did (see ceiling.h). */
#include "report/ceiling.h"
#include "model/cells.h"
#include "model/model.h"
#include "report/common.h"
#include "report/rep.h"
#include "report/text_table.h"
#include "util/strbuf.h"
#include "util/util.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>

double report_ceiling_gain(double x, double u)
{
    if (!(x > 0) || !(u >= 0) || !(u < x))
        return NAN;
    return x / (x - u) - 1;
}

double report_expected_change(double x, double du)
{
    if (!(x > 0) || !isfinite(du) || !(x + du > 0))
        return NAN;
    return x / (x + du) - 1;
}

/* Whether every variant has some run of workload w with the server's user time. */
static bool every_variant_has_split(const struct experiment_result *res, int nv, int w)
{
    for (int v = 0; v < nv; v++) {
        bool found = false;
        for (int i = 0; i < res->nruns && !found; i++)
            found = res->runs[i].variant == v && res->runs[i].workload == w &&
                    isfinite(experiment_metric_value(&res->runs[i], METRIC_SERVER_USER_US));
        if (!found)
            return false;
    }
    return true;
}

/* Microseconds: whole ones from 100 on, one decimal below; "-" when unknown. */
static char *us_cell(double us)
{
    return !isfinite(us) ? xstrdup("-") : xasprintf("%.*f", fabs(us) >= 100 ? 0 : 1, us);
}

static char *pct_cell(double frac)
{
    return isfinite(frac) ? xasprintf("%+.1f%%", 100 * frac) : xstrdup("-");
}

/* Workload w's table: a row per thread count and variant. */
static void ceiling_table(struct rep *r, int w, int cores)
{
    const struct experiment_config *cfg = r->cfg;
    int nv = cfg->nvariants, nt = cfg->nthreads;
    struct cell_stats *tps = xcalloc((size_t)(nv * nt), sizeof(*tps));
    struct cell_stats *user = xcalloc((size_t)(nv * nt), sizeof(*user));
    double *avg = xcalloc((size_t)nv, sizeof(double));
    experiment_workload_cells(r->cfg, r->res, w, METRIC_TPS, tps, avg);
    experiment_workload_cells(r->cfg, r->res, w, METRIC_SERVER_USER_US, user, avg);

    char *title = xasprintf("What the builds could change: the server's user time in a "
                            "transaction, %s", cfg->workloads[w]);
    rep_table_title(r, title);
    free(title);
    static const char *const head[] = { "threads", "variant", "X (us)", "server user u (us)",
                                        "u / X", "ceiling", "change of u", "expected tps",
                                        "measured tps" };
    enum { NCOLS = sizeof(head) / sizeof(head[0]) };
    struct table t;
    table_init(&t, NCOLS, nt * nv);
    for (int c = 0; c < NCOLS; c++)
        t.head[c] = xstrdup(head[c]);
    for (int ti = 0; ti < nt; ti++) {
        int threads = cfg->threads[ti];
        int held = cores > 0 && cores < threads ? cores : threads; /* min(threads, cores) */
        double xb = NAN, ub = NAN;
        for (int v = 0; v < nv; v++) {
            const struct cell_stats *ct = &tps[ti * nv + v], *cu = &user[ti * nv + v];
            double x = ct->n && ct->median > 0 ? held * 1e6 / ct->median : NAN;
            double u = cu->n ? cu->median : NAN;
            if (!v) {
                xb = x;
                ub = u;
            }
            int row = ti * nv + v;
            assert(row < t.nrows);
            double share = isfinite(x) && isfinite(u) ? u / x : NAN;
            double ceil = report_ceiling_gain(x, u);
            table_set(&t, row, 0, xasprintf("%d", threads), NULL);
            table_set(&t, row, 1, xstrdup(cfg->variants[v].name), NULL);
            table_set(&t, row, 2, us_cell(x), NULL);
            table_set(&t, row, 3, us_cell(u), NULL);
            table_set(&t, row, 4, isfinite(share) ? xasprintf("%.0f%%", 100 * share)
                                                  : xstrdup("-"), NULL);
            table_set(&t, row, 5, pct_cell(ceil), NULL);
            rep_rec_add(r, w, threads, "server_user_share_pct", v,
                        isfinite(share) ? 100 * share : NAN, NAN, NAN);
            rep_rec_add(r, w, threads, "ceiling_tps_pct", v, isfinite(ceil) ? 100 * ceil : NAN,
                        NAN, NAN);
            if (!v) {
                table_set(&t, row, 6, xstrdup("(baseline)"), NULL);
                continue;
            }
            double du = u - ub;
            double expected = report_expected_change(xb, du);
            table_set(&t, row, 6,
                      isfinite(du) && ub > 0 ? xasprintf("%+.*f us (%+.1f%%)",
                                                         fabs(du) >= 100 ? 0 : 1, du,
                                                         100 * du / ub)
                                             : xstrdup("-"),
                      NULL);
            table_set(&t, row, 7, pct_cell(expected), NULL);
            rep_rec_add(r, w, threads, "expected_tps_change_pct", v,
                        isfinite(expected) ? 100 * expected : NAN, NAN, NAN);
            /* the tps table's own change, with its seed: the same estimate and verdict */
            struct experiment_change ch;
            int ws[1] = { w }, tv[1] = { threads };
            char *verdict = rep_change_cell(cfg, r->res, METRIC_TPS, v, ws, tv, 1,
                                            report_cell_seed(cfg, w, v, ti, METRIC_TPS), &ch);
            double p = experiment_change_pct(&ch, NULL, NULL);
            /* a significant change prints its estimate and CI; "~" gets the estimate in
             * parentheses before it, a change without statistics the estimate first */
            char *cell = ch.significant || !isfinite(p) ? xstrdup(verdict)
                         : ch.stats ? xasprintf("(%+.1f%%) %s", p, verdict)
                                    : xasprintf("%+.1f%% (%s)", p, verdict);
            table_set(&t, row, 8, cell, NULL);
            free(verdict);
        }
    }
    rep_table_emit(r, &t);
    if (r->fmt == REPORT_TEXT || r->fmt == REPORT_MARKDOWN)
        strbuf_addstr(r->out, "\n" REPORT_CEILING_NOTE "\n");
    free(tps);
    free(user);
    free(avg);
}

void report_ceiling(struct rep *r)
{
    assert(r && r->cfg && r->res);
    const struct experiment_config *cfg = r->cfg;
    if (cfg->measure != MEASURE_TIME || cfg->nvariants < 2)
        return;
    double load1;
    int cores;
    rep_env_load(r->res, &load1, &cores);
    bool any = false;
    for (int w = 0; w < cfg->nworkloads; w++) {
        if (!every_variant_has_split(r->res, cfg->nvariants, w))
            continue;
        ceiling_table(r, w, cores);
        any = true;
    }
    if (any && r->fmt == REPORT_JSON) {
        if (!r->extra)
            r->extra = json_object();
        json_object_set_new(r->extra, "ceiling_note", json_string(REPORT_CEILING_NOTE));
    }
}
