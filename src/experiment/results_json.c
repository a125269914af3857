/* results_json: the JSON results file of an experiment (see results_json.h). */
#include "experiment/results_json.h"
#include "model/cells.h"
#include "model/precision.h"
#include "util/fmt.h"
#include "util/strbuf.h"
#include "util/util.h"
#include "version.h"

#include <assert.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The change of variant v in cell (w, thread index t) as the reports compute it
 * (experiment_change_cfg() with the cell's seed: the paired per-round estimate under
 * --target-ci), into cell: "improvement_pct" (its estimate, positive = better), "change_ci_pct"
 * [lo, hi] and "significant" (null without statistics), so that the number carries the
 * verdict of the tables' change column and can never contradict it. */
static void change_json(json_t *cell, const struct experiment_config *cfg,
                        const struct experiment_result *res, enum experiment_metric m, int v,
                        int w, int t)
{
    struct experiment_change ch;
    int thr = cfg->threads[t];
    assert(v >= 1 && t >= 0 && t < cfg->nthreads);
    if (experiment_change_cfg(cfg, res, m, v, &w, &thr, 1, experiment_cell_seed(cfg, w, v, t, m),
                              &ch) < 0)
        ch.ncells = 0;
    double lo, hi, pct = ch.ncells ? experiment_change_pct(&ch, &lo, &hi) : NAN;
    bool st = ch.ncells && ch.stats;
    json_object_set_new(cell, "improvement_pct", isfinite(pct) ? jreal(pct) : json_null());
    json_object_set_new(cell, "change_ci_pct",
                        st ? json_pack("[oo]", jreal(lo), jreal(hi)) : json_null());
    json_object_set_new(cell, "significant", st ? json_boolean(ch.significant) : json_null());
}

static json_t *summary_json(const struct experiment_config *cfg,
                            const struct experiment_result *res)
{
    json_t *arr = json_array();
    for (int w = 0; w < cfg->nworkloads; w++)
        for (int t = 0; t < cfg->nthreads; t++)
            for (int k = 0; k < (cfg->measure == MEASURE_INSTRUCTIONS ? INSTR_METRICS
                                                                     : METRIC_COUNT); k++) {
                /* instruction mode: the metrics it measures */
                int m = cfg->measure == MEASURE_INSTRUCTIONS ? METRIC_INSTR + k : k;
                json_t *row = json_object(), *cells = json_array();
                json_object_set_new(row, "workload", json_string(cfg->workloads[w]));
                json_object_set_new(row, "threads", json_integer(cfg->threads[t]));
                json_object_set_new(row, "metric",
                                    json_string(experiment_metric_key((enum experiment_metric)m)));
                for (int v = 0; v < cfg->nvariants; v++) {
                    struct cell_stats c = experiment_cell(res, v, w, cfg->threads[t],
                                                          (enum experiment_metric)m);
                    json_t *cell = json_object();
                    json_object_set_new(cell, "variant", jstr(cfg->variants[v].name));
                    json_object_set_new(cell, "n", json_integer(c.n));
                    json_object_set_new(cell, "median", c.n ? jreal(c.median) : json_null());
                    json_object_set_new(cell, "min", c.n ? jreal(c.min) : json_null());
                    json_object_set_new(cell, "max", c.n ? jreal(c.max) : json_null());
                    if (v)
                        change_json(cell, cfg, res, (enum experiment_metric)m, v, w, t);
                    json_array_append_new(cells, cell);
                }
                json_object_set_new(row, "cells", cells);
                json_array_append_new(arr, row);
            }
    return arr;
}

static json_t *experiment_json(const struct experiment_config *cfg,
                               const struct experiment_result *res)
{
    json_t *root = json_object();
    struct strbuf sb = STRBUF_INIT;

    json_object_set_new(root, "pgolab_version", json_string(PGOLAB_VERSION));
    json_object_set_new(root, "kind", json_string("experiment"));
    json_object_set_new(root, "complete",
                        json_boolean(!res->error &&
                                     (cfg->target_ci > 0 ||
                                      experiment_runs_done(res) == experiment_runs_planned(cfg))));
    json_object_set_new(root, "error", jstr(res->error));
    if (res->exclude_distrusted)  /* runs and summary are without them */
        json_object_set_new(root, "runs_left_out", json_integer(res->excluded));
    iso_time(&sb, res->started_at);
    json_object_set_new(root, "started_at", json_string(sb.buf));
    strbuf_reset(&sb);
    iso_time(&sb, res->finished_at ? res->finished_at : wall_time());
    json_object_set_new(root, "finished_at", json_string(sb.buf));
    strbuf_release(&sb);

    json_t *set = json_object(), *a;
    experiment_measurement_json(set, cfg);
    /* As a string: a 64-bit seed does not fit a JSON integer (json_int_t is signed). */
    char *seed = xasprintf("%llu", (unsigned long long)cfg->seed);
    json_object_set_new(set, "seed", json_string(seed));
    free(seed);
    a = json_array();
    for (char **b = cfg->bench_args; b && *b; b++)
        json_array_append_new(a, jstr(*b));
    json_object_set_new(set, "bench_args", a);
    json_object_set_new(set, "pgolab", jstr(cfg->pgolab));
    json_object_set_new(set, "workdir", jstr(cfg->workdir));
    json_object_set_new(root, "settings", set);

    json_object_set_new(root, "variants", experiment_variants_json(cfg));

    json_t *env = res->env_json ? json_loads(res->env_json, 0, NULL) : NULL;
    json_object_set_new(root, "environment", env ? env : json_object());

    /* Run order: consecutive runs of the same (workload, round, threads) form one block. */
    json_t *blocks = json_array(), *cur = NULL;
    for (int i = 0; i < res->nruns; i++) {
        const struct run_result *r = &res->runs[i], *p = i ? &res->runs[i - 1] : NULL;
        if (!p || p->workload != r->workload || p->round != r->round || p->threads != r->threads) {
            json_t *b = json_object();
            json_object_set_new(b, "workload", jstr(cfg->workloads[r->workload]));
            json_object_set_new(b, "round", json_integer(r->round));
            json_object_set_new(b, "threads", json_integer(r->threads));
            cur = json_array();
            json_object_set_new(b, "order", cur);
            json_array_append_new(blocks, b);
        }
        json_array_append_new(cur, jstr(cfg->variants[r->variant].name));
    }
    json_object_set_new(root, "run_order", blocks);

    a = json_array();
    for (int i = 0; i < res->nruns; i++) {
        const struct run_result *r = &res->runs[i];
        json_t *o = json_object(), *lat = json_object();
        json_object_set_new(o, "seq", json_integer(i + 1));
        json_object_set_new(o, "round", json_integer(r->round));
        json_object_set_new(o, "workload", jstr(cfg->workloads[r->workload]));
        json_object_set_new(o, "workload_index", json_integer(r->workload));
        json_object_set_new(o, "threads", json_integer(r->threads));
        json_object_set_new(o, "variant", jstr(cfg->variants[r->variant].name));
        json_object_set_new(o, "variant_index", json_integer(r->variant));
        json_object_set_new(o, "tps", jreal(r->tps));
        json_object_set_new(o, "qps", jreal(r->qps));
        json_object_set_new(lat, "avg", jreal(r->lat_avg_ms));
        json_object_set_new(lat, "p95", jreal(r->lat_p95_ms));
        json_object_set_new(lat, "min", jreal(r->lat_min_ms));
        json_object_set_new(lat, "max", jreal(r->lat_max_ms));
        json_object_set_new(o, "latency_ms", lat);
        json_object_set_new(o, "transactions", json_integer((json_int_t)r->transactions));
        json_object_set_new(o, "errors", json_integer((json_int_t)r->errors));
        json_t *rep = r->json ? json_loads(r->json, 0, NULL) : NULL;
        json_object_set_new(o, "report", rep ? rep : json_null());
        json_object_set_new(o, "metrics", metrics_to_json(&r->metrics));
        json_array_append_new(a, o);
    }
    json_object_set_new(root, "runs", a);
    json_object_set_new(root, "summary", summary_json(cfg, res));
    json_t *prec = experiment_precision_json(cfg, res);
    if (prec)
        json_object_set_new(root, "precision", prec);
    return root;
}

int experiment_write_json(const char *path, const struct experiment_config *cfg,
                          const struct experiment_result *res)
{
    json_t *root = experiment_json(cfg, res);
    char *tmp = xasprintf("%s.tmp", path);
    int rc = 0;
    if (json_dump_file(root, tmp, JSON_INDENT(2)) < 0) {
        rc = error("cannot write %s: %s", tmp, strerror(errno));
        unlink(tmp);
    } else if (rename(tmp, path) < 0) {
        rc = error("cannot rename %s to %s: %s", tmp, path, strerror(errno));
        unlink(tmp);
    }
    json_decref(root);
    free(tmp);
    return rc;
}
