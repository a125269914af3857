/* record: recording, resuming and reading back an experiment in the results store (see
 * record.h). Owns no state. */
#include "experiment/record.h"
#include "model/precision.h"
#include "experiment/callgrind.h"
#include "model/environment.h"
#include "server/server.h"
#include "store/store.h"
#include "util/fmt.h"
#include "util/progress.h"
#include "util/strbuf.h"
#include "util/subprocess.h"
#include "util/util.h"

#include <assert.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char *experiment_settings_json(const struct experiment_config *cfg, const char *extra_json)
{
    json_t *set = json_object(), *a = json_array();
    for (int v = 0; v < cfg->nvariants; v++)
        json_array_append_new(a, jstr(cfg->variants[v].name));
    json_object_set_new(set, "variants", a);
    for (int v = 0; v < cfg->nvariants; v++) {
        const struct variant *var = &cfg->variants[v];
        json_t *o = json_object();
        char *key = xasprintf("variant.%s", var->name);
        json_object_set_new(o, "library", jstr(var->library));
        json_object_set_new(o, "sha256", jstr(var->sha256));
        if (var->kind != VARIANT_SQLITE) /* only then: SQLite settings unchanged */
            json_object_set_new(o, "driver", json_string(server_kind_name(var->server_kind)));
        if (var->compiler)
            json_object_set_new(o, "compiler", jstr(var->compiler));
        if (var->cflags)
            json_object_set_new(o, "cflags", jstr(var->cflags));
        if (var->nserver_options) { /* only then: the settings of other variants unchanged */
            json_t *so = json_array();
            for (int i = 0; i < var->nserver_options; i++)
                json_array_append_new(so, jstr(var->server_options[i]));
            json_object_set_new(o, "server_options", so);
        }
        json_object_set_new(set, key, o);
        free(key);
    }
    experiment_measurement_json(set, cfg);
    a = json_array();
    for (char **b = cfg->bench_args; b && *b; b++)
        json_array_append_new(a, jstr(*b));
    json_object_set_new(set, "bench_args", a);
    if (extra_json) {
        json_error_t je;
        json_t *extra = json_loads(extra_json, 0, &je);
        if (json_is_object(extra))
            json_object_update(set, extra);
        else
            warning("extra experiment settings are not a JSON object; left out");
        json_decref(extra);
    }
    char *text = json_dumps(set, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(set);
    if (!text)
        die("out of memory");
    return text;
}

/* {"loaded_from": ..., "provenance": ..., "build": ..., "build_differences": ...} of a
 * variant (each only when known), or NULL (caller frees). */
static char *variant_fingerprint_json(const struct variant *v)
{
    if (!v->loaded_from && !v->provenance && !v->build && !v->build_differences)
        return NULL;
    json_t *o = json_object();
    if (v->loaded_from)
        json_object_set_new(o, "loaded_from", jstr(v->loaded_from));
    if (v->provenance)
        json_object_set_new(o, "provenance", jstr(v->provenance));
    if (v->build)
        json_object_set_new(o, "build", jstr(v->build));
    if (v->build_differences)
        json_object_set_new(o, "build_differences", jstr(v->build_differences));
    char *text = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    return text;
}

int experiment_record_begin(struct experiment_config *cfg, struct store *s, const char *kind,
                            const char *extra_json)
{
    char *settings = experiment_settings_json(cfg, extra_json);
    char *env = experiment_environment_json();
    int64_t id = 0, prior = 0, prior_runs = 0;
    /* the same command after an interruption starts a new experiment: said, with the way on */
    int rc = store_experiment_unfinished_like(s, kind, settings, &prior, &prior_runs);
    if (rc == 0)
        rc = store_experiment_begin(s, kind, settings, env, cfg->seed, &id);
    for (int v = 0; rc == 0 && v < cfg->nvariants; v++) {
        const struct variant *var = &cfg->variants[v];
        char *fp = variant_fingerprint_json(var);
        struct store_variant sv = {
            .idx = v, .name = var->name, .library = var->library, .sha256 = var->sha256,
            .version = var->version, .source_id = var->source_id, .compiler = var->compiler,
            .cflags = var->cflags, .fingerprint_json = fp,
        };
        rc = store_variant_add(s, id, &sv);
        free(fp);
    }
    if (rc < 0 && id > 0)
        store_experiment_finish(s, id, "failed");
    if (rc == 0) {
        cfg->experiment_id = id;
        cfg->kind = kind;
        cfg->experiment_new = true;
        progress_done();
        fprintf(stderr, "experiment %lld recorded in %s\n", (long long)id, store_path(s));
        if (prior > 0)
            fprintf(stderr, "note: experiment %lld in %s has these settings and did not finish "
                    "(%lld run%s recorded); this one starts over (--resume=%lld continues "
                    "experiment %lld instead)\n", (long long)prior, store_path(s),
                    (long long)prior_runs, prior_runs == 1 ? "" : "s", (long long)prior,
                    (long long)prior);
        store_remember_path(store_path(s));
    }
    free(settings);
    free(env);
    return rc;
}

struct find_ctx {
    int64_t id;
    int found;
};

static int find_cb(const struct store_experiment *e, void *ctx)
{
    struct find_ctx *fc = ctx;
    if (e->id != fc->id)
        return 0;
    fc->found = 1;
    return 1;
}

/* The ids of a store as "1-3, 5" (runs of consecutive ids folded; listed in id order). */
struct ids_ctx {
    struct strbuf sb;
    int64_t first, last;
    int n;
};

static void ids_flush(struct ids_ctx *ic)
{
    if (!ic->n)
        return;
    strbuf_addf(&ic->sb, "%s%lld", ic->sb.len ? ", " : "", (long long)ic->first);
    if (ic->last > ic->first)
        strbuf_addf(&ic->sb, "%s%lld", ic->last == ic->first + 1 ? ", " : "-",
                    (long long)ic->last);
}

static int ids_cb(const struct store_experiment *e, void *ctx)
{
    struct ids_ctx *ic = ctx;
    if (ic->n && e->id == ic->last + 1) {
        ic->last = e->id;
    } else {
        ids_flush(ic);
        ic->first = ic->last = e->id;
    }
    ic->n++;
    return 0;
}

int experiment_lookup(struct store *s, int64_t id, struct store_experiment *out)
{
    struct find_ctx fc = { id, 0 };
    memset(out, 0, sizeof(*out));
    if (store_experiments_list(s, find_cb, &fc) < 0)
        return -1;
    if (!fc.found) {
        struct ids_ctx ic = { STRBUF_INIT, 0, 0, 0 };
        if (store_experiments_list(s, ids_cb, &ic) < 0)
            return -1;
        ids_flush(&ic);
        if (ic.n)
            error("no experiment %lld in %s; it has experiment%s %s (see pgolab history)",
                  (long long)id, store_path(s), ic.n == 1 ? "" : "s", ic.sb.buf);
        else
            error("no experiment %lld in %s: it has no experiments yet", (long long)id,
                  store_path(s));
        strbuf_release(&ic.sb);
        return -1;
    }
    return store_experiment_get(s, id, out);
}

/* The lines of sb joined with "; " (for one-line messages), in place. */
static void one_line(struct strbuf *sb)
{
    struct strbuf t = STRBUF_INIT;
    strbuf_rtrim(sb);
    for (size_t i = 0; i < sb->len; i++) {
        if (sb->buf[i] == '\n')
            strbuf_addstr(&t, "; ");
        else
            strbuf_addch(&t, sb->buf[i]);
    }
    strbuf_reset(sb);
    strbuf_addstr(sb, t.buf);
    strbuf_release(&t);
}

int experiment_record_resume(struct experiment_config *cfg, struct store *s, int64_t id,
                             const char *kind, const char *extra_json)
{
    struct store_experiment e;
    struct strbuf diff = STRBUF_INIT;
    char *settings = NULL, *env = NULL;
    int rc = -1;

    if (experiment_lookup(s, id, &e) < 0)
        return -1;
    if (strcmp(e.kind, kind)) {
        error("experiment %lld was recorded by `pgolab %s`, not `pgolab %s`; resume it with "
              "`pgolab %s --resume=%lld` and the options it started with",
              (long long)id, e.kind, kind, e.kind, (long long)id);
        goto out;
    }
    if (!strcmp(e.status, "complete")) {
        error("experiment %lld is complete; nothing to resume", (long long)id);
        goto out;
    }
    if (!cfg->placement.given) { /* the placement it started with (none before placement) */
        json_t *set = json_loads(e.settings_json, 0, NULL);
        cpu_placement_from_json(json_object_get(set, "cpu_placement"), &cfg->placement);
        json_decref(set);
    }
    settings = experiment_settings_json(cfg, extra_json);
    if (store_settings_diff(e.settings_json, settings, &diff) < 0)
        goto out;
    if (diff.len) {
        one_line(&diff);
        error("cannot resume experiment %lld: its settings differ (recorded -> now): %s",
              (long long)id, diff.buf);
        goto out;
    }
    env = experiment_environment_json();
    strbuf_reset(&diff);
    if (experiment_env_diff(e.environment_json, env, false, &diff) > 0) {
        one_line(&diff);
        warning("experiment %lld started in another environment; its runs will mix two "
                "machines or systems: %s",
                (long long)id, diff.buf);
    }
    if (!strcmp(e.status, "running"))
        warning("experiment %lld is marked running: stopped by a crash or power cut, or still "
                "running in another pgolab (if so, stop one of them)",
                (long long)id);
    if (store_experiment_finish(s, id, "running") < 0)
        goto out;
    cfg->seed = e.seed;
    cfg->experiment_id = id;
    cfg->kind = kind;
    progress_done();
    fprintf(stderr, "resuming experiment %lld in %s: %lld of %d runs recorded\n", (long long)id,
            store_path(s), (long long)e.nruns, experiment_runs_planned(cfg));
    rc = 0;
out:
    store_experiment_release(&e);
    strbuf_release(&diff);
    free(settings);
    free(env);
    return rc;
}

/* Only compare and pgo take --resume (calibrate starts afresh). */
static bool kind_resumes(const char *kind)
{
    return kind && (!strcmp(kind, "compare") || !strcmp(kind, "pgo"));
}

char *experiment_resume_command(const char *kind, const char *target, int64_t id,
                                const char *results)
{
    assert(kind && id > 0 && results);
    char *resume = xasprintf("--resume=%lld", (long long)id);
    char *res = xasprintf("--results=%s", results);
    const char *argv[] = { "pgolab", kind, resume, res, NULL };
    if (!strcmp(kind, "pgo")) { /* pgolab pgo TARGET --resume=ID --results=PATH */
        argv[2] = target ? target : "TARGET";
        argv[3] = resume;
        argv[4] = res;
    }
    const char *full[6] = { argv[0], argv[1], argv[2], argv[3], argv[4], NULL };
    char *cmd = subprocess_argv_str(full);
    free(resume);
    free(res);
    return cmd;
}

int experiment_record_finish(const struct experiment_config *cfg, struct store *store,
                             const struct experiment_result *res, int run_rc)
{
    if (!store || cfg->experiment_id <= 0)
        return 0;
    const char *status = run_rc == 0 ? "complete" : res->signal ? "interrupted" : "failed";
    long long id = (long long)cfg->experiment_id;
    const char *cmd = cfg->kind && !strcmp(cfg->kind, "pgo") ? "pgo TARGET" : cfg->kind;
    if (run_rc != 0 && !res->signal && res->nruns == 0 && cfg->experiment_new) {
        /* nothing was measured: a junk row in history helps no one */
        if (store_experiment_delete(store, cfg->experiment_id) < 0)
            return -1;
        fprintf(stderr, "experiment %lld removed from %s: it failed before its first run\n", id,
                store_path(store));
        return 0;
    }
    if (run_rc != 0) {
        bool resumable = res->signal || res->transient;
        char *note = xasprintf("%s%s", resumable ? EXPERIMENT_NOTE_RESUMABLE : "",
                               res->error ? res->error : status);
        int nrc = store_experiment_set_note(store, cfg->experiment_id, note);
        free(note);
        if (nrc < 0)
            return -1;
        if (resumable && cfg->resume_hint)
            fprintf(stderr, "experiment %lld %s: %s\n", id, status, cfg->resume_hint);
        else if (resumable && !kind_resumes(cfg->kind))
            fprintf(stderr, "experiment %lld %s: `pgolab %s` with the same options starts it "
                            "again (it has no --resume)\n", id, status, cmd ? cmd : "");
        else if (resumable) {
            char *again = experiment_resume_command(cfg->kind, cfg->target, cfg->experiment_id,
                                                    store_path(store));
            /* pgo's builds are a cache the store does not describe: its options stay */
            if (cfg->resume_options && *cfg->resume_options)
                fprintf(stderr, "experiment %lld %s: `%s %s` continues it (with the settings "
                                "it recorded)\n", id, status, again, cfg->resume_options);
            else
                fprintf(stderr, "experiment %lld %s: `%s`%s continues it (with the settings "
                                "it recorded)\n", id, status, again,
                        strcmp(cfg->kind, "pgo") ? "" : " with the build options it had (--cc, "
                        "--cflags, --source, --variants, --workdir)");
            free(again);
        } else
            fprintf(stderr, "experiment %lld failed: the same options would fail again "
                            "(--resume would too); fix the cause and start a new one\n", id);
    }
    if (run_rc == 0 && cfg->target_ci > 0) {
        /* --target-ci: the verdict on the target, in the experiment's row */
        int reached, cells = experiment_target_cells(cfg, res, -1, &reached, NULL);
        char *note = xasprintf("--target-ci=%g%%: reached in %d of %d %s cells, stopped by %s",
                               cfg->target_ci, reached, cells, experiment_target_metric_name(cfg),
                               experiment_target_stop_reason(cfg, res));
        int nrc = store_experiment_set_note(store, cfg->experiment_id, note);
        free(note);
        if (nrc < 0)
            return -1;
    }
    return store_experiment_finish(store, cfg->experiment_id, status);
}

/* ---- reading an experiment back */

/* Index of name in list[0..n), or -1. */
static int find_name(char *const *list, int n, const char *name)
{
    for (int i = 0; name && i < n; i++)
        if (!strcmp(list[i], name))
            return i;
    return -1;
}

/* Copy a stored run into a run_result (indices from the config); -1 if it does not fit it. */
static int run_from_store(const struct experiment_config *cfg, const struct store_run *sr,
                          struct run_result *r)
{
    memset(r, 0, sizeof(*r));
    r->workload = find_name(cfg->workloads, cfg->nworkloads, sr->workload);
    if (r->workload < 0 || sr->variant_idx < 0 || sr->variant_idx >= cfg->nvariants ||
        sr->round < 1 || sr->round > EXPERIMENT_ROUNDS_MAX)
        return -1;
    r->variant = sr->variant_idx;
    r->threads = sr->threads;
    r->round = sr->round;
    r->tps = sr->tps;
    r->qps = sr->qps;
    r->lat_avg_ms = sr->lat_avg_ms;
    r->lat_p95_ms = sr->lat_p95_ms;
    r->lat_min_ms = sr->lat_min_ms;
    r->lat_max_ms = sr->lat_max_ms;
    r->transactions = sr->transactions;
    r->errors = sr->errors;
    r->json = sr->report_json ? xstrdup(sr->report_json) : NULL;
    r->started_at = sr->started_at;
    r->duration_s = sr->duration_s;
    callgrind_from_json(sr->report_json, r);
    if (sr->metrics_json && metrics_from_json(sr->metrics_json, &r->metrics) < 0)
        r->metrics.note = xstrdup("stored metrics unreadable");
    return 0;
}

struct load_ctx {
    const struct experiment_config *cfg;
    struct experiment_result *res;
    int skipped;
};

static int load_run_cb(const struct store_run *sr, void *ctx)
{
    struct load_ctx *lc = ctx;
    struct run_result r;
    if (run_from_store(lc->cfg, sr, &r) < 0) {
        lc->skipped++;
        return 0;
    }
    lc->res->runs = xrealloc(lc->res->runs, sizeof(*lc->res->runs) * (size_t)(lc->res->nruns + 1));
    lc->res->runs[lc->res->nruns++] = r;
    return 0;
}

int record_load_runs(struct store *s, const struct experiment_config *cfg,
                     struct experiment_result *res)
{
    struct load_ctx lc = { cfg, res, 0 };
    if (store_runs_load(s, cfg->experiment_id, load_run_cb, &lc) < 0)
        return -1;
    if (lc.skipped)
        warning("experiment %lld: %d recorded run%s outside its settings ignored",
                (long long)cfg->experiment_id, lc.skipped, lc.skipped == 1 ? "" : "s");
    return 0;
}

/* Workloads and thread counts of the runs, in order of first appearance (when the settings
 * lack them). */
struct scan_ctx {
    char **workloads;
    int nworkloads;
    int *threads;
    int nthreads;
    int max_round;
};

static int scan_cb(const struct store_run *r, void *ctx)
{
    struct scan_ctx *sc = ctx;
    if (find_name(sc->workloads, sc->nworkloads, r->workload) < 0) {
        sc->workloads = xrealloc(sc->workloads, sizeof(char *) * (size_t)(sc->nworkloads + 2));
        sc->workloads[sc->nworkloads++] = xstrdup(r->workload);
        sc->workloads[sc->nworkloads] = NULL;
    }
    int t;
    for (t = 0; t < sc->nthreads && sc->threads[t] != r->threads; t++)
        ;
    if (t == sc->nthreads) {
        sc->threads = xrealloc(sc->threads, sizeof(int) * (size_t)(sc->nthreads + 1));
        sc->threads[sc->nthreads++] = r->threads;
    }
    if (r->round > sc->max_round && r->round <= EXPERIMENT_ROUNDS_MAX)
        sc->max_round = r->round;
    return 0;
}

static char *own(struct experiment_loaded *l, const char *s)
{
    l->owned = xrealloc(l->owned, sizeof(char *) * (size_t)(l->nowned + 1));
    return l->owned[l->nowned++] = xstrdup(s);
}

/* experiment_load()'s variants from the store's rows and the settings' "variant.NAME" (their
 * kind, server options); -1 with a message when they are damaged or missing. */
static int load_variants(struct experiment_loaded *out, json_t *set, int64_t id)
{
    struct experiment_config *cfg = &out->cfg;
    const struct store_experiment *e = &out->exp;
    size_t i;

    cfg->variants = xcalloc((size_t)e->nvariants + 1, sizeof(struct variant));
    for (int v = 0; v < e->nvariants; v++) {
        const struct store_variant *sv = &e->variants[v];
        struct variant *var = &cfg->variants[v];
        if (sv->idx != v) {
            error("experiment %lld: its variants are not numbered 0..%d", (long long)id,
                  e->nvariants - 1);
            return -1;
        }
        var->name = sv->name;
        var->library = sv->library ? sv->library : "?";
        var->sha256 = sv->sha256 ? xstrdup(sv->sha256) : NULL;
        var->version = sv->version ? xstrdup(sv->version) : NULL;
        var->source_id = sv->source_id ? xstrdup(sv->source_id) : NULL;
        var->compiler = sv->compiler;
        var->cflags = sv->cflags;
        /* the kind: a server variant's settings name its driver; a running one's "library"
         * is its KIND://HOST:PORT */
        char *key = xasprintf("variant.%s", var->name);
        json_t *vset = json_object_get(set, key);
        const char *drv = json_string_value(json_object_get(vset, "driver"));
        free(key);
        json_t *so = json_object_get(vset, "server_options");
        for (i = 0; i < json_array_size(so); i++)
            if (json_string_value(json_array_get(so, i)))
                experiment_variant_add_option(var, json_string_value(json_array_get(so, i)));
        if (drv && server_kind_parse(drv, &var->server_kind) == 0)
            var->kind = strstr(var->library, "://") ? VARIANT_EXTERNAL : VARIANT_SERVER;
        json_t *fp = sv->fingerprint_json ? json_loads(sv->fingerprint_json, 0, NULL) : NULL;
        const char *lf = json_string_value(json_object_get(fp, "loaded_from"));
        var->loaded_from = lf ? xstrdup(lf) : NULL;
        const char *pv = json_string_value(json_object_get(fp, "provenance"));
        var->provenance = pv ? own(out, pv) : NULL;
        const char *bd = json_string_value(json_object_get(fp, "build"));
        var->build = bd ? xstrdup(bd) : NULL;
        bd = json_string_value(json_object_get(fp, "build_differences"));
        var->build_differences = bd ? xstrdup(bd) : NULL;
        json_decref(fp);
        cfg->nvariants++;
    }
    if (cfg->nvariants < 1) {
        error("experiment %lld has no variants recorded", (long long)id);
        return -1;
    }
    return 0;
}

/* experiment_load()'s workloads and thread counts: the settings', else the runs' (sc); -1
 * with a message when there are none or a thread count is below 1. */
static int load_cells(struct experiment_loaded *out, json_t *set, const struct scan_ctx *sc,
                      int64_t id)
{
    struct experiment_config *cfg = &out->cfg;
    json_t *a;
    size_t i;

    a = json_object_get(set, "workloads");
    if (json_is_array(a) && json_array_size(a) > 0) {
        cfg->workloads = xcalloc(json_array_size(a) + 1, sizeof(char *));
        for (i = 0; i < json_array_size(a); i++) {
            const char *w = json_string_value(json_array_get(a, i));
            cfg->workloads[cfg->nworkloads++] = own(out, w ? w : "?");
        }
    } else {
        cfg->workloads = xcalloc((size_t)sc->nworkloads + 1, sizeof(char *));
        for (int w = 0; w < sc->nworkloads; w++)
            cfg->workloads[cfg->nworkloads++] = own(out, sc->workloads[w]);
    }
    a = json_object_get(set, "threads");
    if (json_is_array(a) && json_array_size(a) > 0) {
        cfg->threads = xcalloc(json_array_size(a), sizeof(int));
        for (i = 0; i < json_array_size(a); i++)
            cfg->threads[cfg->nthreads++] = (int)json_integer_value(json_array_get(a, i));
    } else {
        cfg->threads = xcalloc((size_t)sc->nthreads + 1, sizeof(int));
        for (int t = 0; t < sc->nthreads; t++)
            cfg->threads[cfg->nthreads++] = sc->threads[t];
    }
    /* every table and cell below assumes at least one workload and one thread count >= 1 */
    for (int t = 0; t < cfg->nthreads; t++)
        if (cfg->threads[t] < 1) {
            error("experiment %lld records a thread count of %d: the database is damaged "
                  "(thread counts are whole numbers from 1)", (long long)id, cfg->threads[t]);
            return -1;
        }
    if (cfg->nthreads < 1 || cfg->nworkloads < 1) {
        error("experiment %lld records no %s, in its settings or its runs: the database is "
              "damaged", (long long)id, cfg->nthreads < 1 ? "thread counts" : "workloads");
        return -1;
    }
    return 0;
}

/* experiment_load()'s other settings: rounds (the runs' highest, sc, when not recorded),
 * reset, warm-up, clients, server options, CPU placement, --target-ci, time, data, measure and
 * the children's options; -1 with a message when the rounds are out of range. */
static int load_settings(struct experiment_loaded *out, json_t *set, const struct scan_ctx *sc,
                         int64_t id)
{
    struct experiment_config *cfg = &out->cfg;
    json_t *a;
    size_t i;

    json_t *r = json_object_get(set, "rounds");
    json_int_t rounds = json_is_integer(r) ? json_integer_value(r) : sc->max_round;
    if (rounds < 1 || rounds > EXPERIMENT_ROUNDS_MAX) {
        error("experiment %lld records %lld rounds: the database is damaged (an experiment has "
              "1..%d)", (long long)id, (long long)rounds, EXPERIMENT_ROUNDS_MAX);
        return -1;
    }
    cfg->rounds = (int)rounds;
    const char *reset = json_string_value(json_object_get(set, "reset"));
    for (i = 0; reset && i <= RESET_VARIANT; i++)  /* absent: the default, run */
        if (!strcmp(reset, experiment_reset_name((enum experiment_reset)i)))
            cfg->reset = (enum experiment_reset)i;
    cfg->warmup_runs = (int)json_integer_value(json_object_get(set, "warmup_runs"));
    const char *clients = json_string_value(json_object_get(set, "clients"));
    if (clients && !strncmp(clients, "mpirun:", 7)) {  /* --clients: for the report's header */
        cfg->clients = own(out, clients);
        cfg->clients_np = atoi(clients + 7);
    }
    a = json_object_get(set, "server_options");
    cfg->server_options = xcalloc(json_array_size(a) + 1, sizeof(char *));
    for (i = 0; i < json_array_size(a); i++) {
        const char *o = json_string_value(json_array_get(a, i));
        cfg->server_options[cfg->nserver_options++] = own(out, o ? o : "");
    }
    cpu_placement_from_json(json_object_get(set, "cpu_placement"), &cfg->placement);
    json_t *tci = json_object_get(set, "target_ci");
    if (json_is_object(tci)) {
        cfg->target_ci = json_number_value(json_object_get(tci, "pct"));
        cfg->max_time_s = json_number_value(json_object_get(tci, "max_time_s"));
        cfg->cs_rounds = (int)json_integer_value(json_object_get(tci, "cs_rounds"));
        const char *tm = json_string_value(json_object_get(tci, "metric"));
        cfg->target_metric = tm && !strcmp(tm, "cpu") ? METRIC_CPU_US : METRIC_TPS;
    }
    cfg->time_s = json_number_value(json_object_get(set, "time_s"));
    cfg->tables = (int)json_integer_value(json_object_get(set, "tables"));
    cfg->table_size = (int)json_integer_value(json_object_get(set, "table_size"));
    const char *measure = json_string_value(json_object_get(set, "measure"));
    if (measure && !strcmp(measure, "instructions")) {
        cfg->measure = MEASURE_INSTRUCTIONS;
        cfg->events = (int)json_integer_value(json_object_get(set, "events"));
    }
    a = json_object_get(set, "bench_args");
    cfg->bench_args = xcalloc(json_array_size(a) + 1, sizeof(char *));
    for (i = 0; i < json_array_size(a); i++) {
        const char *b = json_string_value(json_array_get(a, i));
        cfg->bench_args[i] = own(out, b ? b : "");
    }
    return 0;
}

/* An experiment that is not complete: why, and the command that continues it when one does,
 * as res->error (the report's INCOMPLETE line). */
static void load_status(struct experiment_loaded *out, json_t *set, struct store *s, int64_t id)
{
    const struct store_experiment *e = &out->exp;
    struct experiment_result *res = &out->res;

    assert(strcmp(e->status, "complete"));
    size_t np = strlen(EXPERIMENT_NOTE_RESUMABLE);
    bool resumable = e->note && !strncmp(e->note, EXPERIMENT_NOTE_RESUMABLE, np);
    const char *why = resumable ? e->note + np : e->note;
    const char *target = json_string_value(json_object_get(json_object_get(set, "pgo"),
                                                           "target"));
    char *again = experiment_resume_command(e->kind, target, id, store_path(s));
    if (!kind_resumes(e->kind))
        res->error = xasprintf("experiment %lld %s%s%s", (long long)id,
                               !strcmp(e->status, "running")
                                   ? "is still running, or was stopped by a crash or power cut"
                                   : e->status,
                               why ? ": " : "", why ? why : "");
    else if (!strcmp(e->status, "running"))
        res->error = xasprintf("experiment %lld is still running, or was stopped by a crash "
                               "or power cut (`%s` continues it)", (long long)id, again);
    else if (!strcmp(e->status, "failed") && e->note && !resumable)
        /* a cause that would fail again: no --resume */
        res->error = xasprintf("experiment %lld failed: %s", (long long)id, why);
    else
        res->error = xasprintf("experiment %lld %s%s%s (`%s` continues it)", (long long)id,
                               e->status, why ? ": " : "", why ? why : "", again);
    free(again);
}

int experiment_load(struct store *s, int64_t id, struct experiment_loaded *out)
{
    struct experiment_config *cfg = &out->cfg;
    struct experiment_result *res = &out->res;
    struct scan_ctx sc;
    json_t *set = NULL;
    int rc = -1;

    memset(out, 0, sizeof(*out));
    memset(&sc, 0, sizeof(sc));
    if (experiment_lookup(s, id, &out->exp) < 0)
        return -1;
    const struct store_experiment *e = &out->exp;
    set = json_loads(e->settings_json ? e->settings_json : "{}", 0, NULL);
    if (!json_is_object(set)) {
        error("experiment %lld: its recorded settings are not a JSON object: the database is "
              "damaged", (long long)id);
        goto out;
    }
    if (store_runs_load(s, id, scan_cb, &sc) < 0)
        goto out;
    if (load_variants(out, set, id) < 0 || load_cells(out, set, &sc, id) < 0 ||
        load_settings(out, set, &sc, id) < 0)
        goto out;
    cfg->seed = e->seed;
    cfg->experiment_id = e->id;
    cfg->kind = e->kind;
    cfg->workdir = "";
    cfg->pgolab = "pgolab";

    res->env_json = xstrdup(e->environment_json ? e->environment_json : "{}");
    res->started_at = e->created_at;
    res->finished_at = e->finished_at;
    if (record_load_runs(s, cfg, res) < 0)
        goto out;
    res->resumed = res->nruns;
    if (strcmp(e->status, "complete"))
        load_status(out, set, s, id);
    rc = 0;
out:
    for (int w = 0; w < sc.nworkloads; w++)
        free(sc.workloads[w]);
    free(sc.workloads);
    free(sc.threads);
    json_decref(set);
    if (rc < 0)
        experiment_loaded_release(out);
    return rc;
}

/* ---- the latest calibration of a host (for model/machine.h's comparisons) */

struct calib_ctx {
    char host[256];
    int64_t best, before;
};

static int calib_cb(const struct store_experiment *e, void *ctx)
{
    struct calib_ctx *f = ctx;
    if (strcmp(e->kind, "calibrate") || strcmp(e->status, "complete") || e->id <= f->best ||
        (f->before > 0 && e->id >= f->before))
        return 0;
    json_t *env = e->environment_json ? json_loads(e->environment_json, 0, NULL) : NULL;
    const char *h = json_string_value(json_object_get(env, "hostname"));
    if (h && !strcmp(h, f->host))
        f->best = e->id;
    json_decref(env);
    return 0;
}

int machine_calibration_find(struct store *s, const char *host, int64_t before_id,
                             struct experiment_loaded *out)
{
    struct calib_ctx f = { .best = 0, .before = before_id };
    if (host)
        snprintf(f.host, sizeof(f.host), "%s", host);
    else if (gethostname(f.host, sizeof(f.host) - 1) < 0)
        return 1;
    if (store_experiments_list(s, calib_cb, &f) < 0)
        return -1;
    if (!f.best)
        return 1;
    return experiment_load(s, f.best, out) < 0 ? -1 : 0;
}
