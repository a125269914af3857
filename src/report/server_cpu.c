/* report/server_cpu: the server's user and system CPU time per transaction (see
 * server_cpu.h). */
#include "report/server_cpu.h"
#include "model/cells.h"
#include "model/model.h"
#include "report/common.h"
#include "report/rep.h"
#include "report/text_table.h"
#include "util/strbuf.h"
#include "util/util.h"

#include <assert.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

/* The two parts, in row order, with their row labels. */
static const struct {
    enum experiment_metric m;
    const char *label;
} parts[] = {
    { METRIC_SERVER_USER_US, "user" },
    { METRIC_SERVER_SYS_US, "system" },
};
enum { NPARTS = 2 };
_Static_assert(sizeof(parts) / sizeof(parts[0]) == NPARTS, "two parts");

/* The rows of one part (pi) of workload w's table: a row per thread count at 2 * ti + pi and
 * the Average row at 2 * nt + pi, each cell and change as the tps table (tables.c,
 * seed000_table) makes it. */
static void part_rows(struct rep *r, struct table *t, int w, int pi)
{
    const struct experiment_config *cfg = r->cfg;
    const struct experiment_result *res = r->res;
    enum experiment_metric m = parts[pi].m;
    int nv = cfg->nvariants, nt = cfg->nthreads;
    struct cell_stats *cs = xcalloc((size_t)(nv * nt), sizeof(*cs));
    double *avg = xcalloc((size_t)nv, sizeof(double));
    int *ws = xcalloc((size_t)nt, sizeof(int));

    assert(pi >= 0 && pi < NPARTS && nv >= 1 && nt >= 1);
    for (int ti = 0; ti < nt; ti++)
        ws[ti] = w;
    int dec = table_decimals(experiment_workload_cells(r->cfg, r->res, w, m, cs, avg));
    for (int ti = 0; ti <= nt; ti++) {
        int row = 2 * ti + pi, threads = ti < nt ? cfg->threads[ti] : 0;
        assert(row < t->nrows);
        table_set(t, row, 0, ti < nt ? xasprintf("%d", threads) : xstrdup("Average"), NULL);
        table_set(t, row, 1, xstrdup(parts[pi].label), NULL);
        double base = ti < nt ? (cs[ti * nv].n ? cs[ti * nv].median : NAN) : avg[0];
        for (int v = 0; v < nv; v++) {
            const struct cell_stats *c = ti < nt ? &cs[ti * nv + v] : NULL;
            double val = c ? (c->n ? c->median : NAN) : avg[v];
            /* % improvement: the change's own estimate (report_improvement_cell()) */
            struct experiment_change ch;
            int tv[1] = { threads };
            uint64_t seed = report_cell_seed(cfg, w, v, ti, m);
            char *verdict = !v ? NULL
                            : ti < nt ? rep_change_cell(cfg, res, m, v, ws, tv, 1, seed, &ch)
                                      : rep_change_cell(cfg, res, m, v, ws, cfg->threads, nt,
                                                        seed, &ch);
            double p = v ? experiment_change_pct(&ch, NULL, NULL) : NAN;
            struct rec *rc = rep_rec_add(r, w, threads, experiment_metric_key(m), v, val, base, p);
            if (c) {
                rep_rec_values(r, rc, m);
                char *spread = NULL;
                if (c->n && cfg->rounds > 1)
                    spread = c->n > 1 ? xasprintf("(%.*f-%.*f)", dec, c->min, dec, c->max)
                                      : xstrdup("(1 run)");
                table_set(t, row, 2 + v, c->n ? xasprintf("%.*f", dec, val) : xstrdup("-"),
                          spread);
            } else {
                table_set(t, row, 2 + v, isnan(val) ? xstrdup("-") : xasprintf("%.*f", dec, val),
                          NULL);
            }
            if (!v)
                continue;
            table_set(t, row, 1 + nv + v, report_improvement_cell(&ch), NULL);
            rep_rec_change(rc, &ch, verdict);
            table_set(t, row, 2 * nv + v, verdict, NULL);
        }
    }
    free(cs);
    free(avg);
    free(ws);
}

/* Workload w's table and the line under it. */
static void server_cpu_table(struct rep *r, int w)
{
    const struct experiment_config *cfg = r->cfg;
    int nv = cfg->nvariants, nt = cfg->nthreads;
    struct table t;
    char *title = xasprintf("Server CPU time per transaction (us), user and system, %s",
                            cfg->workloads[w]);
    rep_table_title(r, title);
    free(title);
    /* threads | CPU | variants | % improvement per variant | change per variant */
    table_init(&t, 2 + nv + 2 * (nv - 1), NPARTS * (nt + 1));
    t.head[0] = xstrdup("threads");
    t.head[1] = xstrdup("CPU");
    for (int v = 0; v < nv; v++)
        t.head[2 + v] = xstrdup(cfg->variants[v].name);
    for (int v = 1; v < nv; v++) {
        t.head[1 + nv + v] = nv == 2 ? xstrdup("% improvement")
                                     : xasprintf("%% improvement %s", cfg->variants[v].name);
        t.head[2 * nv + v] = nv == 2 ? xstrdup("change (95% CI)")
                                     : xasprintf("change %s (95%% CI)", cfg->variants[v].name);
    }
    for (int pi = 0; pi < NPARTS; pi++)
        part_rows(r, &t, w, pi);
    rep_table_emit(r, &t);
    if (r->fmt == REPORT_TEXT || r->fmt == REPORT_MARKDOWN)
        strbuf_addstr(r->out, "\n" REPORT_SERVER_CPU_NOTE "\n");
}

void report_server_cpu(struct rep *r)
{
    assert(r && r->cfg && r->res);
    if (r->cfg->measure != MEASURE_TIME ||
        !experiment_has_metric(r->res, -1, METRIC_SERVER_USER_US))
        return;
    for (int w = 0; w < r->cfg->nworkloads; w++)
        if (experiment_has_metric(r->res, w, METRIC_SERVER_USER_US) ||
            experiment_has_metric(r->res, w, METRIC_SERVER_SYS_US))
            server_cpu_table(r, w);
    if (r->fmt == REPORT_JSON) {
        if (!r->extra)
            r->extra = json_object();
        json_object_set_new(r->extra, "server_cpu_note", json_string(REPORT_SERVER_CPU_NOTE));
    }
}
