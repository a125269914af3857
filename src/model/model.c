/* model: the experiment's data model without running anything: release functions, the runs
 * a config plans, --exclude-distrusted's filter of a result, the --reset and --measure names,
 * and the variants and measurement settings as JSON (see model.h). Owns no state. */
#include "model/model.h"
#include "model/cells.h"
#include "util/fmt.h"
#include "util/util.h"

#include <assert.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

static const char *const reset_names[] = { "run", "round", "variant" };

const char *experiment_reset_name(enum experiment_reset r)
{
    return reset_names[r];
}

int experiment_reset_parse(const char *s, enum experiment_reset *out)
{
    for (size_t i = 0; i < ARRAY_SIZE(reset_names); i++)
        if (!strcmp(s, reset_names[i])) {
            *out = (enum experiment_reset)i;
            return 0;
        }
    return error("invalid --reset=%s (expected run, round or variant)", s);
}

int experiment_measure_parse(const char *s, enum experiment_measure *out)
{
    if (s && !strcmp(s, "time"))
        *out = MEASURE_TIME;
    else if (s && !strcmp(s, "instructions"))
        *out = MEASURE_INSTRUCTIONS;
    else
        return error("invalid --measure=%s (expected time or instructions)", s ? s : "");
    return 0;
}

int experiment_runs_planned(const struct experiment_config *cfg)
{
    return cfg->nworkloads * cfg->rounds * cfg->nthreads * cfg->nvariants;
}

void experiment_variant_release(struct variant *v)
{
    free(v->sha256);
    free(v->version);
    free(v->source_id);
    free(v->loaded_from);
    free(v->build);
    free(v->build_differences);
    v->sha256 = v->version = v->source_id = v->loaded_from = NULL;
    v->build = v->build_differences = NULL;
    for (int i = 0; i < v->nserver_options; i++)
        free(v->server_options[i]);
    free(v->server_options);
    v->server_options = NULL;
    v->nserver_options = 0;
}

void experiment_variant_add_option(struct variant *v, const char *opt)
{
    assert(opt != NULL);
    v->server_options = xrealloc(v->server_options,
                                 (size_t)(v->nserver_options + 2) * sizeof(char *));
    v->server_options[v->nserver_options++] = xstrdup(opt);
    v->server_options[v->nserver_options] = NULL;
}

void experiment_result_release(struct experiment_result *res)
{
    for (int i = 0; i < res->nruns; i++) {
        free(res->runs[i].json);
        metrics_release(&res->runs[i].metrics);
    }
    free(res->runs);
    free(res->env_json);
    free(res->error);
    memset(res, 0, sizeof(*res));
}

int experiment_result_exclude_distrusted(struct experiment_result *res)
{
    int kept = 0, out = 0, resumed = 0;
    assert(res->nruns >= 0 && res->resumed <= res->nruns);
    for (int i = 0; i < res->nruns; i++) {
        struct run_result *r = &res->runs[i];
        if (r->metrics.available && metrics_flags(&r->metrics)) {
            free(r->json);
            metrics_release(&r->metrics);
            out++;
            continue;
        }
        resumed += i < res->resumed;
        if (kept != i)
            res->runs[kept] = *r;
        kept++;
    }
    assert(kept + out == res->nruns);
    res->nruns = kept;
    res->resumed = resumed;
    res->exclude_distrusted = true;
    res->excluded += out;
    return out;
}

int experiment_runs_done(const struct experiment_result *res)
{
    return res->nruns + res->excluded;
}

void experiment_loaded_release(struct experiment_loaded *l)
{
    experiment_result_release(&l->res);
    for (int v = 0; v < l->cfg.nvariants; v++)
        experiment_variant_release(&l->cfg.variants[v]);
    free(l->cfg.variants);
    free(l->cfg.workloads);
    free(l->cfg.threads);
    free(l->cfg.bench_args);
    free(l->cfg.server_options);
    for (int i = 0; i < l->nowned; i++)
        free(l->owned[i]);
    free(l->owned);
    store_experiment_release(&l->exp);
    memset(l, 0, sizeof(*l));
}

json_t *experiment_variants_json(const struct experiment_config *cfg)
{
    json_t *a = json_array();
    for (int v = 0; v < cfg->nvariants; v++) {
        const struct variant *var = &cfg->variants[v];
        json_t *o = json_object();
        json_object_set_new(o, "name", jstr(var->name));
        json_object_set_new(o, "baseline", json_boolean(v == 0));
        json_object_set_new(o, "library", jstr(var->library));
        json_object_set_new(o, "sha256", jstr(var->sha256));
        json_object_set_new(o, "version", jstr(var->version));
        json_object_set_new(o, "source_id", jstr(var->source_id));
        json_object_set_new(o, "loaded_from", jstr(var->loaded_from));
        json_object_set_new(o, "compiler", jstr(var->compiler));
        json_object_set_new(o, "cflags", jstr(var->cflags));
        if (var->provenance) /* only then: the JSON of other experiments unchanged */
            json_object_set_new(o, "provenance", jstr(var->provenance));
        if (var->build) /* the same: compare's managed servers only */
            json_object_set_new(o, "build", jstr(var->build));
        if (var->build_differences)
            json_object_set_new(o, "build_differences", jstr(var->build_differences));
        if (var->nserver_options) { /* only then: the JSON of other variants unchanged */
            json_t *so = json_array();
            for (int i = 0; i < var->nserver_options; i++)
                json_array_append_new(so, jstr(var->server_options[i]));
            json_object_set_new(o, "server_options", so);
        }
        json_array_append_new(a, o);
    }
    return a;
}

/* The grid: "workloads", "threads", "rounds", in that order. */
static void grid_json(json_t *set, const struct experiment_config *cfg)
{
    json_t *a = json_array();
    for (int w = 0; w < cfg->nworkloads; w++)
        json_array_append_new(a, jstr(cfg->workloads[w]));
    json_object_set_new(set, "workloads", a);
    a = json_array();
    for (int t = 0; t < cfg->nthreads; t++)
        json_array_append_new(a, json_integer(cfg->threads[t]));
    json_object_set_new(set, "threads", a);
    json_object_set_new(set, "rounds", json_integer(cfg->rounds));
}

void experiment_measurement_json(json_t *set, const struct experiment_config *cfg)
{
    grid_json(set, cfg);
    if (cfg->reset != RESET_RUN)
        json_object_set_new(set, "reset", json_string(experiment_reset_name(cfg->reset)));
    if (cfg->warmup_runs)
        json_object_set_new(set, "warmup_runs", json_integer(cfg->warmup_runs));
    if (cfg->nserver_options) {
        json_t *a = json_array();
        for (int i = 0; i < cfg->nserver_options; i++)
            json_array_append_new(a, jstr(cfg->server_options[i]));
        json_object_set_new(set, "server_options", a);
    }
    json_object_set_new(set, "time_s", jreal(cfg->time_s));
    json_object_set_new(set, "tables", json_integer(cfg->tables));
    json_object_set_new(set, "table_size", json_integer(cfg->table_size));
    if (cfg->target_ci > 0) {
        json_t *t = json_pack("{s:o,s:o,s:i}", "pct", jreal(cfg->target_ci), "max_time_s",
                              cfg->max_time_s > 0 ? jreal(cfg->max_time_s) : json_null(),
                              "cs_rounds", cfg->cs_rounds);
        if (cfg->target_metric == METRIC_CPU_US)  /* tps: no key, as before --target-metric */
            json_object_set_new(t, "metric", json_string("cpu"));
        json_object_set_new(set, "target_ci", t);
    }
    json_t *pl = cpu_placement_json(&cfg->placement);
    if (pl)
        json_object_set_new(set, "cpu_placement", pl);
    if (cfg->clients_np > 0)
        json_object_set_new(set, "clients", jstr(cfg->clients));
    if (cfg->measure == MEASURE_INSTRUCTIONS) {
        json_object_set_new(set, "measure", json_string("instructions"));
        json_object_set_new(set, "events", json_integer(cfg->events));
    }
}

void experiment_placement_describe(const struct experiment_config *cfg, char *buf, size_t size)
{
    bool server = false;
    for (int v = 0; v < cfg->nvariants; v++)
        server |= cfg->variants[v].kind == VARIANT_SERVER;
    cpu_placement_describe(&cfg->placement, server, buf, size);
}
