/* experiment: runs variants x workloads x thread counts x rounds as child processes and
 * reports them (see experiment.h). Owned by the experiment engine; used by pgo and compare. */
#include "util/argvec.h"
#include "util/fmt.h"
#include "util/fs.h"
#include "experiment/experiment.h"
#include "experiment/callgrind.h"
#include "experiment/plan.h"
#include "experiment/run.h"
#include "util/progress.h"
#include "util/signals.h"
#include "util/strbuf.h"
#include "util/subprocess.h"
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "server/server.h"
#include "stats/compare.h"
#include "store/store.h"
#include "version.h"

/* ---------------------------------------------------------------- small helpers */

/* "45s", "3m10s", "1h02m". */
static void add_duration(struct strbuf *sb, double s)
{
    long t = s > 0 ? (long)(s + 0.5) : 0;
    if (t >= 3600)
        strbuf_addf(sb, "%ldh%02ldm", t / 3600, t / 60 % 60);
    else if (t >= 60)
        strbuf_addf(sb, "%ldm%02lds", t / 60, t % 60);
    else
        strbuf_addf(sb, "%lds", t);
}

/* --warmup-runs: before round 1 of workload w, every variant runs each thread count
 * cfg->warmup_runs times (in a shuffled order of its own); the results are discarded, only a
 * failure counts. Like measured runs they start from a copy of the template under
 * --reset=run; otherwise they run on (and warm) the variant's working copy. 0, or -1 after
 * run_fail(). */
static int warmup(const struct experiment_config *cfg, struct experiment_result *res, int w,
                  char **template, char **rundb, bool *fresh, int *order)
{
    struct strbuf out = STRBUF_INIT;
    int rc = 0;
    for (int k = 1; k <= cfg->warmup_runs && rc == 0; k++)
        for (int t = 0; t < cfg->nthreads && rc == 0; t++) {
            experiment_order(cfg->seed, -k, w * cfg->nthreads + t, cfg->nvariants, order);
            for (int i = 0; i < cfg->nvariants && rc == 0; i++) {
                const struct variant *var = &cfg->variants[order[i]];
                char *log = xasprintf("%s/warmup-%d-%d-%d-%s.log", cfg->workdir, w, t, k, var->name);
                if (cfg->progress)
                    progress("warm-up %d/%d  %s  threads=%d  %s (discarded)", k, cfg->warmup_runs,
                             cfg->workloads[w], cfg->threads[t], var->name);
                int v = order[i];
                int st = run_child(cfg, res, var, cfg->workloads[w], cfg->threads[t],
                                   (cfg->reset == RESET_RUN || fresh[v]) && var->kind != VARIANT_EXTERNAL
                                       ? template[v] : NULL,
                                   rundb[v], log, NULL, 0, &out);
                fresh[v] = false;
                if (run_signal()) {
                    res->signal = run_signal();
                    rc = run_fail(res, "interrupted by %s during a warm-up run",
                                  run_signal_name(run_signal()));
                } else if (st == -2) {
                    rc = -1;
                } else if (st != 0) {
                    char *tail = run_log_tail(log, 3);
                    rc = run_fail(res, "warm-up run failed: variant %s, %s, threads=%d: exit "
                                       "%d: %s", var->name, cfg->workloads[w], cfg->threads[t],
                                  st, tail);
                    free(tail);
                }
                if (cfg->reset == RESET_RUN && var->kind != VARIANT_EXTERNAL)
                    run_remove_data(var, rundb[v]);
                free(log);
            }
        }
    strbuf_release(&out);
    return rc;
}

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
    if (r->workload < 0 || sr->variant_idx < 0 || sr->variant_idx >= cfg->nvariants)
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

/* Append the runs recorded in s for cfg->experiment_id to res (in the order they ran). */
static int load_recorded_runs(struct store *s, const struct experiment_config *cfg,
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

/* *done = 1 when run (variant v, workload w, thread count, round) is recorded already. */
static int run_recorded(const struct experiment_config *cfg, int v, int w, int threads,
                        int round, int *done)
{
    *done = 0;
    if (!cfg->store || cfg->experiment_id <= 0)
        return 0;
    return store_run_exists(cfg->store, cfg->experiment_id, v, cfg->workloads[w], threads,
                            round, done);
}

/* *pending = 1 when some run of workload w is not recorded yet. */
static int workload_pending(const struct experiment_config *cfg, int w, int *pending)
{
    *pending = 1;
    if (!cfg->store || cfg->experiment_id <= 0)
        return 0;
    for (int round = 1; round <= cfg->rounds; round++)
        for (int t = 0; t < cfg->nthreads; t++)
            for (int v = 0; v < cfg->nvariants; v++) {
                int done;
                if (run_recorded(cfg, v, w, cfg->threads[t], round, &done) < 0)
                    return -1;
                if (!done)
                    return 0;
            }
    *pending = 0;
    return 0;
}

int experiment_run(const struct experiment_config *cfg, struct experiment_result *res)
{
    struct sig_saved saved;
    int total = experiment_runs_planned(cfg);
    int *order = xcalloc((size_t)cfg->nvariants + 1, sizeof(int));
    char **rundb = xcalloc((size_t)cfg->nvariants, sizeof(char *));
    char **template = xcalloc((size_t)cfg->nvariants, sizeof(char *));
    bool *fresh = xcalloc((size_t)cfg->nvariants, sizeof(bool));
    bool instr_mode = cfg->measure == MEASURE_INSTRUCTIONS; /* same data for every count */
    uint64_t run_ns = 0;
    int rc = 0, ran = 0;

    memset(res, 0, sizeof(*res));
    res->started_at = wall_time();
    res->env_json = experiment_environment_json();
    if (cfg->nvariants < 1 || cfg->nworkloads < 1 || cfg->nthreads < 1 || cfg->rounds < 1) {
        rc = run_fail(res, "experiment: nothing to run (need variants, workloads, threads, "
                           "rounds)");
        goto done;
    }
    if (cfg->store && cfg->experiment_id > 0) {
        if (load_recorded_runs(cfg->store, cfg, res) < 0) {
            rc = run_fail(res, "cannot read the runs of experiment %lld",
                          (long long)cfg->experiment_id);
            goto done;
        }
        res->resumed = res->nruns;
        /* The experiment's environment is the one recorded when it began, so this report
         * and one rebuilt from the store later (`pgolab report`) are the same. */
        struct store_experiment e;
        if (store_experiment_get(cfg->store, cfg->experiment_id, &e) == 0) {
            if (e.environment_json) {
                free(res->env_json);
                res->env_json = xstrdup(e.environment_json);
            }
            store_experiment_release(&e);
        }
    }
    if (mkdir_p(cfg->workdir) < 0) {
        rc = run_fail(res, "cannot create the work directory %s: %s", cfg->workdir,
                      strerror(errno));
        goto done;
    }

    run_catch_signals(&saved);

    for (int w = 0; w < cfg->nworkloads && rc == 0; w++) {
        int pending;
        if (workload_pending(cfg, w, &pending) < 0) {
            rc = run_fail(res, "cannot read the runs of experiment %lld",
                          (long long)cfg->experiment_id);
            break;
        }
        if (!pending)
            continue; /* every run of this workload is recorded: no data to prepare */
        /* The data: one template prepared by the baseline, or (--reset=variant) one per
         * variant prepared by that variant; each variant runs on its own working copy. */
        for (int v = 0; v < cfg->nvariants && rc == 0; v++) {
            const struct variant *var = &cfg->variants[v];
            free(template[v]);
            free(rundb[v]);
            template[v] = rundb[v] = NULL;
            fresh[v] = var->kind != VARIANT_EXTERNAL;
            if (var->kind == VARIANT_EXTERNAL) { /* data in place, prepared once */
                rc = run_prepare_template(cfg, res, w, v, NULL);
                continue;
            }
            /* A server's datadir is its own (another build may not read it); SQLite
             * variants share the baseline's file unless --reset=variant. */
            bool own = cfg->reset == RESET_VARIANT || var->kind == VARIANT_SERVER ||
                       cfg->variants[0].kind != VARIANT_SQLITE || v == 0;
            const char *sfx = var->kind == VARIANT_SERVER ? "d" : "db";
            template[v] = own ? xasprintf("%s/template-%d-%d.%s", cfg->workdir, w, v, sfx)
                              : xstrdup(template[0]);
            rundb[v] = xasprintf("%s/run-%d.%s", cfg->workdir, v, sfx);
            if (own) {
                run_remove_data(var, template[v]);
                rc = run_prepare_template(cfg, res, w, v, template[v]);
            }
        }
        if (rc == 0 && cfg->warmup_runs && cfg->measure == MEASURE_TIME)
            rc = warmup(cfg, res, w, template, rundb, fresh, order);
        for (int round = 1; round <= cfg->rounds && rc == 0; round++) {
            if (cfg->reset == RESET_ROUND)
                for (int v = 0; v < cfg->nvariants; v++)
                    fresh[v] = true;
            for (int t = 0; t < cfg->nthreads && rc == 0; t++) {
                /* The order depends only on (seed, round, block): a resumed experiment
                 * keeps it and runs what is missing in the same order. */
                experiment_order(cfg->seed, round, w * cfg->nthreads + t, cfg->nvariants, order);
                for (int i = 0; i < cfg->nvariants && rc == 0; i++) {
                    int done = res->nruns, recorded;
                    if (run_recorded(cfg, order[i], w, cfg->threads[t], round, &recorded) < 0) {
                        rc = run_fail(res, "cannot read the runs of experiment %lld",
                                      (long long)cfg->experiment_id);
                        break;
                    }
                    if (recorded)
                        continue;
                    if (cfg->progress) {
                        /* ETA: mean duration of the runs made so far (before any: --time +
                         * 1 s) times the runs left, this one included. */
                        double per = ran ? run_ns / 1e9 / ran : cfg->time_s + 1.0;
                        struct strbuf eta = STRBUF_INIT;
                        add_duration(&eta, per * (total - done));
                        progress("round %d/%d  %s  threads=%d  %s  [run %d/%d, ETA %s]", round,
                                 cfg->rounds, cfg->workloads[w], cfg->threads[t],
                                 cfg->variants[order[i]].name, done + 1, total, eta.buf);
                        strbuf_release(&eta);
                    }
                    uint64_t t0 = now_ns();
                    int v = order[i];
                    /* A copy of the template when the data is reset (every run; or the
                     * variant's first run of the workload or of the round). */
                    const char *tpl = (cfg->reset == RESET_RUN || fresh[v] || instr_mode) &&
                                      cfg->variants[v].kind != VARIANT_EXTERNAL
                                          ? template[v] : NULL;
                    fresh[v] = false;
                    rc = run_once(cfg, res, w, t, round, v, tpl, rundb[v]);
                    run_ns += now_ns() - t0;
                    ran++;
                }
            }
        }
        for (int v = 0; v < cfg->nvariants; v++) {
            if (template[v])
                run_remove_data(&cfg->variants[v], template[v]);
            if (rundb[v])
                run_remove_data(&cfg->variants[v], rundb[v]);
        }
    }
    progress_done();
    sig_restore(&saved);
done:
    res->finished_at = wall_time();
    for (int v = 0; v < cfg->nvariants; v++) {
        free(template[v]);
        free(rundb[v]);
    }
    free(template);
    free(rundb);
    free(fresh);
    free(order);
    return rc;
}

/* ---------------------------------------------------------------- results store */

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

/* {"loaded_from": ...} of a variant, or NULL (caller frees). */
static char *variant_fingerprint_json(const struct variant *v)
{
    if (!v->loaded_from)
        return NULL;
    json_t *o = json_object();
    json_object_set_new(o, "loaded_from", jstr(v->loaded_from));
    char *text = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    return text;
}

int experiment_record_begin(struct experiment_config *cfg, struct store *s, const char *kind,
                            const char *extra_json)
{
    char *settings = experiment_settings_json(cfg, extra_json);
    char *env = experiment_environment_json();
    int64_t id = 0;
    int rc = store_experiment_begin(s, kind, settings, env, cfg->seed, &id);
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
        cfg->store = s;
        cfg->experiment_id = id;
        cfg->kind = kind;
        progress_done();
        fprintf(stderr, "experiment %lld recorded in %s\n", (long long)id, store_path(s));
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

int experiment_lookup(struct store *s, int64_t id, struct store_experiment *out)
{
    struct find_ctx fc = { id, 0 };
    memset(out, 0, sizeof(*out));
    if (store_experiments_list(s, find_cb, &fc) < 0)
        return -1;
    if (!fc.found)
        return error("no experiment %lld in %s (see pgolab history)", (long long)id,
                     store_path(s));
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
    cfg->store = s;
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

int experiment_record_finish(const struct experiment_config *cfg,
                             const struct experiment_result *res, int run_rc)
{
    if (!cfg->store || cfg->experiment_id <= 0)
        return 0;
    const char *status = run_rc == 0 ? "complete" : res->signal ? "interrupted" : "failed";
    return store_experiment_finish(cfg->store, cfg->experiment_id, status);
}

/* ---- reading an experiment back */

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
    if (r->round > sc->max_round)
        sc->max_round = r->round;
    return 0;
}

static char *own(struct experiment_loaded *l, const char *s)
{
    l->owned = xrealloc(l->owned, sizeof(char *) * (size_t)(l->nowned + 1));
    return l->owned[l->nowned++] = xstrdup(s);
}

int experiment_load(struct store *s, int64_t id, struct experiment_loaded *out)
{
    struct experiment_config *cfg = &out->cfg;
    struct experiment_result *res = &out->res;
    struct scan_ctx sc;
    json_t *set = NULL, *a;
    size_t i;
    int rc = -1;

    memset(out, 0, sizeof(*out));
    memset(&sc, 0, sizeof(sc));
    if (experiment_lookup(s, id, &out->exp) < 0)
        return -1;
    const struct store_experiment *e = &out->exp;
    set = json_loads(e->settings_json ? e->settings_json : "{}", 0, NULL);
    if (store_runs_load(s, id, scan_cb, &sc) < 0)
        goto out;

    cfg->variants = xcalloc((size_t)e->nvariants + 1, sizeof(struct variant));
    for (int v = 0; v < e->nvariants; v++) {
        const struct store_variant *sv = &e->variants[v];
        struct variant *var = &cfg->variants[v];
        if (sv->idx != v) {
            error("experiment %lld: its variants are not numbered 0..%d", (long long)id,
                  e->nvariants - 1);
            goto out;
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
        const char *drv = json_string_value(json_object_get(json_object_get(set, key), "driver"));
        free(key);
        if (drv && server_kind_parse(drv, &var->server_kind) == 0)
            var->kind = strstr(var->library, "://") ? VARIANT_EXTERNAL : VARIANT_SERVER;
        json_t *fp = sv->fingerprint_json ? json_loads(sv->fingerprint_json, 0, NULL) : NULL;
        const char *lf = json_string_value(json_object_get(fp, "loaded_from"));
        var->loaded_from = lf ? xstrdup(lf) : NULL;
        json_decref(fp);
        cfg->nvariants++;
    }
    if (cfg->nvariants < 1) {
        error("experiment %lld has no variants recorded", (long long)id);
        goto out;
    }

    a = json_object_get(set, "workloads");
    if (json_is_array(a) && json_array_size(a) > 0) {
        cfg->workloads = xcalloc(json_array_size(a) + 1, sizeof(char *));
        for (i = 0; i < json_array_size(a); i++) {
            const char *w = json_string_value(json_array_get(a, i));
            cfg->workloads[cfg->nworkloads++] = own(out, w ? w : "?");
        }
    } else {
        cfg->workloads = xcalloc((size_t)sc.nworkloads + 1, sizeof(char *));
        for (int w = 0; w < sc.nworkloads; w++)
            cfg->workloads[cfg->nworkloads++] = own(out, sc.workloads[w]);
    }
    a = json_object_get(set, "threads");
    if (json_is_array(a) && json_array_size(a) > 0) {
        cfg->threads = xcalloc(json_array_size(a), sizeof(int));
        for (i = 0; i < json_array_size(a); i++)
            cfg->threads[cfg->nthreads++] = (int)json_integer_value(json_array_get(a, i));
    } else {
        cfg->threads = xcalloc((size_t)sc.nthreads + 1, sizeof(int));
        for (int t = 0; t < sc.nthreads; t++)
            cfg->threads[cfg->nthreads++] = sc.threads[t];
    }
    json_t *r = json_object_get(set, "rounds");
    cfg->rounds = json_is_integer(r) ? (int)json_integer_value(r) : sc.max_round;
    const char *reset = json_string_value(json_object_get(set, "reset"));
    for (i = 0; reset && i <= RESET_VARIANT; i++)  /* absent: the default, run */
        if (!strcmp(reset, experiment_reset_name((enum experiment_reset)i)))
            cfg->reset = (enum experiment_reset)i;
    cfg->warmup_runs = (int)json_integer_value(json_object_get(set, "warmup_runs"));
    a = json_object_get(set, "server_options");
    cfg->server_options = xcalloc(json_array_size(a) + 1, sizeof(char *));
    for (i = 0; i < json_array_size(a); i++) {
        const char *o = json_string_value(json_array_get(a, i));
        cfg->server_options[cfg->nserver_options++] = own(out, o ? o : "");
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
    cfg->seed = e->seed;
    cfg->experiment_id = e->id;
    cfg->kind = e->kind;
    cfg->workdir = "";
    cfg->pgolab = "pgolab";

    res->env_json = xstrdup(e->environment_json ? e->environment_json : "{}");
    res->started_at = e->created_at;
    res->finished_at = e->finished_at;
    if (load_recorded_runs(s, cfg, res) < 0)
        goto out;
    res->resumed = res->nruns;
    if (strcmp(e->status, "complete")) {
        if (!strcmp(e->status, "running"))
            res->error = xasprintf("experiment %lld is still running, or was stopped by a crash "
                                   "or power cut (`pgolab %s --resume=%lld` continues it)",
                                   (long long)id, e->kind, (long long)id);
        else
            res->error = xasprintf("experiment %lld %s (`pgolab %s --resume=%lld` with the "
                                   "same options continues it)",
                                   (long long)id, e->status, e->kind, (long long)id);
    }
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

