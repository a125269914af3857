/* trainers: the trainer x workload table of a PGO experiment (see trainers.h). The changes
 * are experiment_change()'s, as in every other table: per workload the geometric mean of the
 * per-thread-count ratios with its bootstrap CI, overall the same over every cell. */
#include "report/trainers.h"
#include "report/rep.h"
#include "report/tables.h"
#include "util/util.h"

#include <jansson.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

bool trainer_includes(const char *trainer, const char *workload)
{
    size_t n = strlen(workload);
    for (const char *p = trainer; p && *p;) {
        const char *plus = strchr(p, '+');
        size_t len = plus ? (size_t)(plus - p) : strlen(p);
        if (len == n && !strncmp(p, workload, n))
            return true;
        p = plus ? plus + 1 : NULL;
    }
    return false;
}

int report_trainer_change(const struct experiment_config *cfg, const struct experiment_result *res,
                          int v, int w, struct experiment_change *ch)
{
    int max = cfg->nworkloads * cfg->nthreads, n = 0;
    int *ws = xcalloc((size_t)max, sizeof(int)), *ts = xcalloc((size_t)max, sizeof(int));
    for (int i = 0; i < cfg->nworkloads; i++)
        for (int t = 0; t < cfg->nthreads; t++)
            if (w < 0 || i == w) {
                ws[n] = i;
                ts[n] = cfg->threads[t];
                n++;
            }
    /* the bootstrap seed: the experiment's, moved per cell, so the table is reproducible */
    uint64_t seed = cfg->seed ^ (0x9e3779b97f4a7c15ULL * (uint64_t)(v * 131 + w + 7));
    int rc = experiment_change_cfg(cfg, res, METRIC_TPS, v, ws, ts, n, seed, ch);
    free(ws);
    free(ts);
    return rc;
}

void report_trainers(struct strbuf *out, const struct experiment_config *cfg,
                     const struct experiment_result *res, const char *const *trainer_of)
{
    int ntr = 0;
    for (int v = 1; v < cfg->nvariants; v++)
        ntr += trainer_of[v] != NULL;
    if (ntr < 2)
        return;
    int ncols = cfg->nworkloads + 2;
    struct table t;
    table_init(&t, ncols, ntr); /* a row per trainer, nothing else */
    t.head[0] = xstrdup("trainer");
    for (int w = 0; w < cfg->nworkloads; w++)
        t.head[1 + w] = xstrdup(cfg->workloads[w]);
    t.head[ncols - 1] = xstrdup("overall");
    double *best = xcalloc((size_t)ncols, sizeof(double));
    int *best_row = xcalloc((size_t)ncols, sizeof(int));
    for (int c = 0; c < ncols; c++) {
        best[c] = -INFINITY;
        best_row[c] = -1;
    }
    bool exam = false;
    int row = 0;
    for (int v = 1; v < cfg->nvariants; v++) {
        if (!trainer_of[v])
            continue;
        table_set(&t, row, 0, xstrdup(trainer_of[v]), NULL);
        for (int c = 1; c < ncols; c++) {
            int w = c - 1 < cfg->nworkloads ? c - 1 : -1;
            struct experiment_change ch;
            struct strbuf cell = STRBUF_INIT;
            strbuf_init(&cell, 0);
            if (report_trainer_change(cfg, res, v, w, &ch) == 0 && ch.ncells > 0) {
                experiment_change_format(&cell, &ch);
                double lo, hi, pct = experiment_change_pct(&ch, &lo, &hi);
                if (!isnan(pct) && pct > best[c]) {
                    best[c] = pct;
                    best_row[c] = row;
                }
                /* "~" or "no statistics" alone hides the estimate the best trainer is
                 * chosen by */
                if (!ch.significant && ch.stats) {
                    strbuf_reset(&cell);
                    strbuf_addf(&cell, "~ (%+.1f%%)", pct);
                } else if (!ch.stats && !isnan(pct)) {
                    strbuf_reset(&cell);
                    strbuf_addf(&cell, "%+.1f%% (1 round: no CI)", pct);
                }
            } else {
                strbuf_addstr(&cell, "-");
            }
            if (w >= 0 && trainer_includes(trainer_of[v], cfg->workloads[w])) {
                strbuf_addstr(&cell, " *");
                exam = true;
            }
            table_set(&t, row, c, strbuf_detach(&cell), NULL);
        }
        row++;
    }
    strbuf_addstr(out, "\nTrainer matrix: tps change of each trainer's pgo build against baseline "
                       "(95% CI; per workload the geometric mean over thread counts)\n\n");
    table_render(&t, out);
    strbuf_addstr(out, "\nBest trainer (highest estimate):");
    for (int c = 1; c < ncols; c++) {
        const char *name = NULL;
        for (int v = 1, r = 0; v < cfg->nvariants; v++)
            if (trainer_of[v] && r++ == best_row[c])
                name = trainer_of[v];
        strbuf_addf(out, "%s %s: %s", c > 1 ? ";" : "", t.head[c], name ? name : "-");
    }
    strbuf_addstr(out, "\n");
    if (exam)
        strbuf_addstr(out, "* the trainer is (or includes) the measured workload: a profile "
                           "trained on the exam flatters the result\n");
    table_release(&t);
    free(best);
    free(best_row);
}

json_t *report_trainers_json(const struct experiment_config *cfg,
                             const struct experiment_result *res, const char *const *of)
{
    json_t *rows = json_array(), *ws = json_array();
    for (int w = 0; w < cfg->nworkloads; w++)
        json_array_append_new(ws, json_string(cfg->workloads[w]));
    json_array_append_new(ws, json_string("overall"));
    for (int v = 1; v < cfg->nvariants; v++) {
        if (!of[v])
            continue;
        json_t *cells = json_array();
        for (int w = 0; w <= cfg->nworkloads; w++) {
            int wi = w < cfg->nworkloads ? w : -1;
            struct experiment_change ch;
            struct strbuf sb = STRBUF_INIT;
            if (report_trainer_change(cfg, res, v, wi, &ch) < 0 || !ch.ncells) {
                json_array_append_new(cells, json_null());
                continue;
            }
            experiment_change_format(&sb, &ch);
            json_t *c = report_change_json(&ch, sb.buf);
            json_object_set_new(
                c, "exam", json_boolean(wi >= 0 && trainer_includes(of[v], cfg->workloads[wi])));
            json_array_append_new(cells, c);
            strbuf_release(&sb);
        }
        json_array_append_new(rows, json_pack("{s:s,s:s,s:o}", "trainer", of[v], "variant",
                                              cfg->variants[v].name, "cells", cells));
    }
    if (json_array_size(rows) < 2) {
        json_decref(rows);
        json_decref(ws);
        return json_null();
    }
    return json_pack("{s:o,s:o}", "workloads", ws, "rows", rows);
}

void report_trainers_rep(struct rep *r, const char *const *trainer_of)
{
    const struct experiment_config *cfg = r->cfg;
    if (r->fmt == REPORT_TEXT || r->fmt == REPORT_MARKDOWN) {
        report_trainers(r->out, cfg, r->res, trainer_of);
        return;
    }
    if (r->fmt != REPORT_CSV && r->fmt != REPORT_JSON)
        return;
    int ntr = 0;
    for (int v = 1; v < cfg->nvariants; v++)
        ntr += trainer_of[v] != NULL;
    if (ntr < 2)
        return;
    /* a table of its own: a cell per (trainer's variant, workload or "all" = overall) */
    r->tableno++;
    for (int v = 1; v < cfg->nvariants; v++) {
        if (!trainer_of[v])
            continue;
        for (int w = 0; w <= cfg->nworkloads; w++) {
            int wi = w < cfg->nworkloads ? w : -1;
            struct experiment_change ch;
            struct rec *c = rep_rec_add(r, wi, 0, "tps", v, NAN, NAN, NAN);
            if (report_trainer_change(cfg, r->res, v, wi, &ch) < 0 || !ch.ncells)
                continue;
            struct strbuf sb = STRBUF_INIT;
            experiment_change_format(&sb, &ch);
            c->has_change = true;
            c->ch = ch;
            c->verdict = strbuf_detach(&sb);
        }
    }
    if (r->fmt == REPORT_JSON) {
        if (!r->extra)
            r->extra = json_object();
        json_object_set_new(r->extra, "trainers", report_trainers_json(cfg, r->res, trainer_of));
    }
}

const char **report_trainers_of(const struct experiment_loaded *l)
{
    const struct experiment_config *cfg = &l->cfg;
    json_t *set = l->exp.settings_json ? json_loads(l->exp.settings_json, 0, NULL) : NULL;
    json_t *train = json_object_get(json_object_get(set, "pgo"), "train");
    const char **of = xcalloc((size_t)cfg->nvariants, sizeof(*of));
    bool plain = false;
    for (int v = 0; v < cfg->nvariants; v++)
        plain = plain || !strncmp(cfg->variants[v].name, "pgo-", 4);
    const char *prefix = plain ? "pgo-" : "pgo+lto-";
    for (int v = 1; json_array_size(train) > 1 && v < cfg->nvariants; v++) {
        const char *name = cfg->variants[v].name;
        if (strncmp(name, prefix, strlen(prefix)))
            continue;
        for (size_t i = 0; i < json_array_size(train); i++) {
            const char *t = json_string_value(json_array_get(train, i));
            if (t && !strcmp(name + strlen(prefix), t))
                of[v] = name + strlen(prefix); /* the variant's name outlives the array */
        }
    }
    json_decref(set);
    return of;
}

void report_exam_warnings(struct strbuf *out, const struct experiment_loaded *l)
{
    json_t *set = l->exp.settings_json ? json_loads(l->exp.settings_json, 0, NULL) : NULL;
    json_t *exam = json_object_get(json_object_get(set, "pgo"), "exam");
    for (size_t i = 0; i < json_array_size(exam); i++) {
        const char *w = json_string_value(json_object_get(json_array_get(exam, i), "warning"));
        if (w)
            strbuf_addf(out, "  %s\n", w);
    }
    json_decref(set);
}
