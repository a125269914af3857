/* rep: the report being built and its cells (see rep.h): records of the cells a table shows,
 * their rounds and changes, a table's title and its rendering. The experiment report's parts
 * (tables.c and the sub-reports it calls: system_metrics.c, server_cpu.c, ceiling.c, noise.c,
 * trainers.c) call down to here, never the other way. Owns no state: a struct rep's records
 * belong to it until rep_recs_release(). */
#include "report/rep.h"

#include "model/cells.h"
#include "model/precision.h"
#include "report/common.h"
#include "report/text_table.h"
#include "stats/compare.h"
#include "util/strbuf.h"
#include "util/util.h"

#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct rec *rep_rec_add(struct rep *r, int w, int threads, const char *metric, int v,
                           double value, double base_value, double improvement)
{
    assert(v >= 0);
    r->recs = xrealloc(r->recs, sizeof(*r->recs) * (size_t)(r->nrecs + 1));
    struct rec *c = &r->recs[r->nrecs++];
    memset(c, 0, sizeof(*c));
    c->table = r->tableno;
    c->w = w;
    c->threads = threads;
    c->metric = metric;
    c->v = v;
    c->value = value;
    c->base_value = base_value;
    c->improvement_pct = v ? improvement : NAN;
    return c;
}

void rep_rec_values(struct rep *r, struct rec *c, enum experiment_metric m)
{
    c->values = experiment_cell_values(r->res, c->v, c->w, c->threads, m, &c->n);
    if (c->n && stats_summarize(c->values, c->n, &c->sum) < 0)
        c->n = 0;
}

void rep_rec_change(struct rec *c, const struct experiment_change *ch, const char *verdict)
{
    assert(ch && verdict);
    c->has_change = true;
    c->ch = *ch;
    c->verdict = xstrdup(verdict);
}

void rep_recs_release(struct rep *r)
{
    for (int i = 0; i < r->nrecs; i++) {
        free(r->recs[i].values);
        free(r->recs[i].verdict);
    }
    free(r->recs);
    r->recs = NULL;
    r->nrecs = 0;
}

char *rep_change_cell(const struct experiment_config *cfg, const struct experiment_result *res,
                      enum experiment_metric m, int v, const int *ws, const int *ts, int n,
                      uint64_t seed, struct experiment_change *ch)
{
    struct strbuf sb = STRBUF_INIT;
    if (experiment_change_cfg(cfg, res, m, v, ws, ts, n, seed, ch) < 0)
        memset(ch, 0, sizeof(*ch)); /* unusable values: shown as "-" */
    experiment_change_format(&sb, ch);
    return strbuf_detach(&sb);
}

void rep_table_title(struct rep *r, const char *title)
{
    r->tableno++;
    if (r->fmt == REPORT_MARKDOWN)
        strbuf_addf(r->out, "\n### Table %d. %s\n\n", r->tableno, title);
    else if (r->fmt == REPORT_TEXT)
        strbuf_addf(r->out, "\nTable %d. %s\n\n", r->tableno, title);
}

void rep_table_emit(struct rep *r, struct table *t)
{
    if (r->fmt == REPORT_TEXT || r->fmt == REPORT_MARKDOWN)
        table_render(t, r->out);
    table_release(t);
}
