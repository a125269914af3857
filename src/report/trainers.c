/* trainers: the trainer x workload table of a PGO experiment (see trainers.h). The changes
 * are experiment_change()'s, as in every other table: per workload the geometric mean of the
 * per-thread-count ratios with its bootstrap CI, overall the same over every cell. */
#include "report/trainers.h"
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
