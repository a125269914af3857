/* report/system_metrics: the system metrics tables of an experiment report (see system_metrics.h).
 * */
#include "report/system_metrics.h"
#include "model/cells.h"
#include "metrics/metrics.h"
#include "report/rep.h"
#include "report/text_table.h"
#include "util/fmt.h"
#include "util/strbuf.h"
#include "util/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The values of field f over the runs of one cell with metrics, in run order (caller frees);
 * *flagged = how many of those runs are flagged. */
static double *cell_values(const struct experiment_result *res, int v, int w, int threads,
                           enum metrics_field f, int *n, int *flagged)
{
    double *x = xcalloc((size_t)res->nruns + 1, sizeof(double));
    *n = 0;
    if (flagged)
        *flagged = 0;
    for (int i = 0; i < res->nruns; i++) {
        const struct run_result *r = &res->runs[i];
        if (r->variant != v || r->workload != w || r->threads != threads || !r->metrics.available)
            continue;
        double val = metrics_field_value(&r->metrics, f);
        if (flagged && r->metrics.flags)
            (*flagged)++;
        if (isfinite(val))
            x[(*n)++] = val;
    }
    return x;
}

/* Decimals of field f: rates 0, percentages 1, per-transaction figures by size. */
static int field_decimals(enum metrics_field f, double x)
{
    if (f == MF_INTR_S || f == MF_CTXSW_S || f == MF_PGFAULT_S)
        return 0;
    if (f >= MF_US && f <= MF_STEAL)
        return 1;
    double a = fabs(x);
    return a >= 100 ? 0 : a >= 10 ? 1 : a >= 1 ? 2 : 3;
}

static char *median_str(enum metrics_field f, const struct stats_summary *s)
{
    return xasprintf("%.*f", field_decimals(f, s->median), s->median);
}

static char *spread_str(enum metrics_field f, const struct stats_summary *s, int n)
{
    if (n < 2)
        return NULL;
    return xasprintf("±%.*f", field_decimals(f, s->median), (s->max - s->min) / 2);
}

static void runs_table(struct rep *r)
{
    const struct experiment_config *cfg = r->cfg;
    const struct experiment_result *res = r->res;
    static const char *const head[] = { "run", "variant", "workload", "threads", "round",
                                        "run queue avg/max", "other CPU%", "load1", "steal%",
                                        "iowait%", "distrust" };
    enum { NCOL = 11 };
    struct table t;
    rep_table_title(r, "Load and trust per run (run queue: runnable tasks besides the "
                       "sampler; other CPU: the machine's busy time minus client and server)");
    table_init(&t, NCOL, res->nruns);
    for (int c = 0; c < NCOL; c++)
        t.head[c] = xstrdup(head[c]);
    for (int i = 0; i < res->nruns; i++) {
        const struct run_result *run = &res->runs[i];
        const struct run_metrics *m = &run->metrics;
        table_set(&t, i, 0, xasprintf("%d", i + 1), NULL);
        table_set(&t, i, 1, xstrdup(cfg->variants[run->variant].name), NULL);
        table_set(&t, i, 2, xstrdup(cfg->workloads[run->workload]), NULL);
        table_set(&t, i, 3, xasprintf("%d", run->threads), NULL);
        table_set(&t, i, 4, xasprintf("%d", run->round), NULL);
        if (!m->available) {
            table_set(&t, i, 10, xasprintf("metrics unavailable: %s",
                                           m->note ? m->note : "not sampled"), NULL);
            continue;
        }
        table_set(&t, i, 5, xasprintf("%.1f / %.0f", m->runq_avg, m->runq_max), NULL);
        table_set(&t, i, 6, xasprintf("%.1f", m->other_pct), NULL);
        table_set(&t, i, 7, xasprintf("%.2f", m->load1), NULL);
        table_set(&t, i, 8, xasprintf("%.1f", m->steal_pct), NULL);
        table_set(&t, i, 9, xasprintf("%.1f", m->iowait_pct), NULL);
        struct strbuf sb = STRBUF_INIT;
        metrics_flags_format(&sb, m);
        table_set(&t, i, 10, strbuf_detach(&sb), NULL);
    }
    rep_table_emit(r, &t);
}

static json_t *runs_json(const struct rep *r)
{
    json_t *a = json_array();
    for (int i = 0; i < r->res->nruns; i++) {
        const struct run_result *run = &r->res->runs[i];
        json_t *o = json_object();
        json_object_set_new(o, "seq", json_integer(i + 1));
        json_object_set_new(o, "variant", jstr(r->cfg->variants[run->variant].name));
        json_object_set_new(o, "workload", jstr(r->cfg->workloads[run->workload]));
        json_object_set_new(o, "threads", json_integer(run->threads));
        json_object_set_new(o, "round", json_integer(run->round));
        json_object_set_new(o, "metrics", metrics_to_json(&run->metrics));
        json_array_append_new(a, o);
    }
    return a;
}

void report_metrics(struct rep *r)
{
    const struct experiment_config *cfg = r->cfg;
    const struct experiment_result *res = r->res;
    int with = 0;
    const char *note = NULL;
    for (int i = 0; i < res->nruns; i++) {
        if (res->runs[i].metrics.available)
            with++;
        else if (!note)
            note = res->runs[i].metrics.note;
    }
    if (!with) {
        if (r->fmt == REPORT_TEXT || r->fmt == REPORT_MARKDOWN)
            strbuf_addf(r->out, "\nSystem metrics: unavailable (%s)\n",
                        note ? note : "not sampled: --metrics=off, or recorded without them");
        return;
    }

    int ncells = cfg->nvariants * cfg->nworkloads * cfg->nthreads, row = 0;
    enum { FIRST = 4, NCOL = FIRST + MF_SUMMARY + 1 };
    struct table t;
    char *title = xasprintf("System metrics per cell (median over its runs ± half the min-max "
                            "range), seed 002's summary line; speedup (x) vs %s = the tps "
                            "change's ratio, as in the tps tables", cfg->variants[0].name);
    rep_table_title(r, title);
    free(title);
    table_init(&t, NCOL, ncells);
    t.head[0] = xstrdup("variant");
    t.head[1] = xstrdup("workload");
    t.head[2] = xstrdup("threads");
    t.head[3] = xstrdup("speedup (x)");
    for (int f = 0; f < MF_SUMMARY; f++)
        t.head[FIRST + f] = xstrdup(metrics_field_title((enum metrics_field)f));
    t.head[NCOL - 1] = xstrdup("distrusted runs");
    for (int w = 0; w < cfg->nworkloads; w++)
        for (int k = 0; k < cfg->nthreads; k++)
            for (int v = 0; v < cfg->nvariants; v++, row++) {
                int th = cfg->threads[k];
                table_set(&t, row, 0, xstrdup(cfg->variants[v].name), NULL);
                table_set(&t, row, 1, xstrdup(cfg->workloads[w]), NULL);
                table_set(&t, row, 2, xasprintf("%d", th), NULL);
                /* the tps tables' own estimate (the paired one under --target-ci), with
                 * their seed: the same ratio as every other place that states the gain */
                double sp = 1;
                if (v) {
                    struct experiment_change ch;
                    int wv[1] = { w }, tv[1] = { th };
                    free(rep_change_cell(cfg, res, METRIC_TPS, v, wv, tv, 1,
                                         report_cell_seed(cfg, w, v, k, METRIC_TPS), &ch));
                    sp = ch.ncells ? ch.ratio : NAN;
                } else if (!experiment_cell(res, 0, w, th, METRIC_TPS).n) {
                    sp = NAN;
                }
                table_set(&t, row, 3, isfinite(sp) ? xasprintf("%.3f", sp) : xstrdup("-"), NULL);
                int flagged = 0, nmet = 0;
                for (int i = 0; i < res->nruns; i++) /* the cell's runs with metrics */
                    nmet += res->runs[i].variant == v && res->runs[i].workload == w &&
                            res->runs[i].threads == th && res->runs[i].metrics.available;
                for (int f = 0; f < MF_COUNT; f++) {
                    int n;
                    double *x = cell_values(res, v, w, th, (enum metrics_field)f, &n,
                                            f == 0 ? &flagged : NULL);
                    double *bx = NULL;
                    int bn = 0;
                    struct stats_summary s, bs;
                    if (n && stats_summarize(x, n, &s) < 0)
                        n = 0;
                    bx = cell_values(res, 0, w, th, (enum metrics_field)f, &bn, NULL);
                    if (bn && stats_summarize(bx, bn, &bs) < 0)
                        bn = 0;
                    free(bx);
                    struct rec *rc = rep_rec_add(r, w, th, metrics_field_key((enum metrics_field)f),
                                                 v, n ? s.median : NAN, bn ? bs.median : NAN, NAN);
                    rc->values = x;
                    rc->n = n;
                    if (n)
                        rc->sum = s;
                    if (f < MF_SUMMARY)
                        table_set(&t, row, FIRST + f,
                                  n ? median_str((enum metrics_field)f, &s) : xstrdup("-"),
                                  n ? spread_str((enum metrics_field)f, &s, n) : NULL);
                }
                table_set(&t, row, NCOL - 1,
                          nmet ? xasprintf("%d of %d", flagged, nmet) : xstrdup("-"), NULL);
                rep_rec_add(r, w, th, "distrusted_runs", v, flagged, NAN, NAN);
            }
    rep_table_emit(r, &t);
    if (r->fmt == REPORT_TEXT || r->fmt == REPORT_MARKDOWN)
        strbuf_addf(r->out, "\nA run is distrusted when steal%% > %g, iowait%% > %g, its run "
                            "queue averages above the cores it uses, or other work took more "
                            "than %g%% of the machine's CPU.\n",
                    METRICS_STEAL_PCT_MAX, METRICS_IOWAIT_PCT_MAX, METRICS_OTHER_PCT_MAX);
    if (r->trust_table) {
        runs_table(r);
    } else if (r->fmt == REPORT_TEXT || r->fmt == REPORT_MARKDOWN) {
        /* the per-run table is long (a row per run): behind --trust-table */
        int distrusted = 0;
        for (int i = 0; i < res->nruns; i++)
            distrusted += res->runs[i].metrics.available && metrics_flags(&res->runs[i].metrics);
        if (res->exclude_distrusted)
            strbuf_addf(r->out, "Load and trust per run: %d of %d run%s with metrics distrusted "
                                "after --exclude-distrusted left out %d (--trust-table lists "
                                "every run kept).\n",
                        distrusted, with, with == 1 ? "" : "s", res->excluded);
        else
            strbuf_addf(r->out, "Load and trust per run: %d of %d run%s with metrics distrusted "
                                "(--trust-table lists every run).\n",
                        distrusted, with, with == 1 ? "" : "s");
    }
    if (r->fmt == REPORT_JSON) {
        if (!r->extra)
            r->extra = json_object();
        json_object_set_new(r->extra, "runs_metrics", runs_json(r));
    }
}
