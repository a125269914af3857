/* measure: the measurement phase of a recipe target — every built variant (baseline first,
 * then lto, the pgo builds, pgo+lto, the BOLT variants; the official binary last) as a
 * managed-server variant of the experiment engine, each with its --variant-server-option
 * values (each run on a fresh copy of the prepared datadir, its server restarted, interleaved
 * rounds, CIs), recorded in the results database run by run, then the seed-000 tables, with
 * more than two variants "what each step added" (report/step_gains.c: pgo+bolt over pgo, ...) and,
 * with several trainers, the trainer x workload table of gains (a row per trainer). A
 * library's variants (target_sqlite.c: baseline, pgo, the BOLT variants, then each other group of
 * build settings', as pgo_measured_builds() returns them) are library variants
 * loaded by the bench child, proven to be the variant's own file, and may be measured by
 * instructions (--measure=instructions). Progress as compare's: a status line on a terminal,
 * off one the paced lines of experiment/pace.h, for a server target too. --search (search.c)
 * measures a subset of the builds (p->measure_only) and reads each measurement's changes back
 * from p->outcome, which this file fills before it releases the result. */
#include "pgo/stages.h"
#include "experiment/experiment.h"
#include "experiment/callgrind.h"
#include "experiment/profiling.h"
#include "experiment/record.h"
#include "experiment/results_json.h"
#include "experiment/variant_options.h"
#include "experiment/variants.h"
#include "model/profiles.h"
#include "profile/profile.h"
#include "model/cells.h"
#include "model/precision.h"
#include "report/common.h"
#include "report/step_gains.h"
#include "report/tables.h"
#include "report/trainers.h"
#include "store/store.h"
#include "util/strbuf.h"
#include "util/util.h"

#include <assert.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* -1 in rq->resume_id: the newest pgo experiment that did not complete. */
struct newest {
    int64_t id;
};

static int newest_unfinished(const struct store_experiment *e, void *ctx)
{
    struct newest *n = ctx;
    if (!strcmp(e->kind, "pgo") && strcmp(e->status, "complete"))
        n->id = e->id;
    return 0;
}

/* The library variants' isolation proof: the bench child must have mapped the variant's own
 * file (experiment_fingerprint()'s loaded_from). 0 or -1. */
static int check_loaded(const struct variant *v, int nv)
{
    int rc = 0;
    for (int i = 0; i < nv; i++) {
        char *want = abs_path(v[i].library);
        char *got = v[i].loaded_from ? abs_path(v[i].loaded_from) : NULL;
        if (got && strcmp(want, got))
            rc = error("variant %s: the benchmark loaded %s instead of %s", v[i].name, got, want);
        free(want);
        free(got);
    }
    return rc;
}

void pgo_outcome_release(struct pgo_outcome *o)
{
    free(o->build);
    free(o->vs_base);
    free(o->vs_official);
    memset(o, 0, sizeof(*o));
}

/* The change of variant v over variant base (0: the baseline) in metric m, every cell pooled,
 * into *out (NAN without data). */
static void change_of(const struct experiment_config *cfg, const struct experiment_result *res,
                      enum experiment_metric m, int base, int v, const int *ws, const int *ts,
                      int nc, struct pgo_change *out)
{
    struct experiment_change ch;
    /* the verdict's seed of the Average row, offset by the base as report/step_gains.c does */
    uint64_t seed = report_all_cells_seed(cfg, v, m) + (uint64_t)base;
    out->pct = out->lo = out->hi = out->p_value = NAN;
    out->stats = out->significant = false;
    if (base == v || experiment_change_cfg_over(cfg, res, m, base, v, ws, ts, nc, seed, &ch) < 0 ||
        !ch.ncells)
        return;
    out->pct = experiment_change_pct(&ch, &out->lo, &out->hi);
    out->stats = ch.stats;
    out->significant = ch.significant;
    out->p_value = ch.p_value;
}

/* p->outcome from the measurement of m[0..nv) (cfg's variants): each variant's change in the key
 * metric against the baseline and against official. */
static void fill_outcome(struct pgo_pipeline *p, const struct experiment_config *cfg,
                         const struct experiment_result *res, const struct pgo_build **m, int nv,
                         bool complete)
{
    struct pgo_outcome *o = p->outcome;
    assert(nv == cfg->nvariants && nv >= 2);
    pgo_outcome_release(o);
    o->experiment_id = cfg->experiment_id;
    o->instructions = cfg->measure == MEASURE_INSTRUCTIONS;
    o->complete = complete;
    o->nv = nv;
    o->build = xcalloc((size_t)nv, sizeof(*o->build));
    o->vs_base = xcalloc((size_t)nv, sizeof(*o->vs_base));
    o->vs_official = xcalloc((size_t)nv, sizeof(*o->vs_official));
    enum experiment_metric key = !o->instructions ? METRIC_TPS
                                 : experiment_has_metric(res, -1, METRIC_EST_CYCLES)
                                     ? METRIC_EST_CYCLES : METRIC_INSTR;
    int nc = cfg->nworkloads * cfg->nthreads, official = -1;
    int *ws = xcalloc((size_t)nc, sizeof(int)), *ts = xcalloc((size_t)nc, sizeof(int));
    for (int w = 0, k = 0; w < cfg->nworkloads; w++)
        for (int t = 0; t < cfg->nthreads; t++, k++) {
            ws[k] = w;
            ts[k] = cfg->threads[t];
        }
    for (int v = 0; v < nv; v++)
        if (m[v]->official)
            official = v;
    for (int v = 0; v < nv; v++) {
        o->build[v] = m[v];
        change_of(cfg, res, key, 0, v, ws, ts, nc, &o->vs_base[v]);
        change_of(cfg, res, key, official < 0 ? v : official, v, ws, ts, nc,
                  &o->vs_official[v]);
    }
    free(ws);
    free(ts);
}

/* --search: the newest pgo experiment whose recorded settings are settings (the same builds,
 * by their sha256, and the same measurement), and whether it is complete. */
struct same {
    const char *settings;
    int64_t id;
    bool complete;
    int rc;
};

static int same_settings(const struct store_experiment *e, void *ctx)
{
    struct same *sm = ctx;
    struct strbuf diff = STRBUF_INIT;
    strbuf_init(&diff, 0);
    if (!strcmp(e->kind, "pgo") &&
        store_settings_diff(e->settings_json, sm->settings, &diff) == 0 && diff.len == 0) {
        sm->id = e->id;
        sm->complete = !strcmp(e->status, "complete");
    }
    strbuf_release(&diff);
    return 0;
}

/* --search's screen again (deterministic counts): the complete experiment id, with the same
 * builds and settings, read back into p->outcome instead of measured again. 0 or 1. */
static int reuse(struct pgo_pipeline *p, struct store *store, int64_t id,
                 const struct pgo_build **m, int nv)
{
    struct experiment_loaded l;
    if (experiment_load(store, id, &l) < 0)
        return 1;
    int rc = 0;
    if (l.cfg.nvariants != nv || l.res.nruns == 0) {
        error("experiment %lld: %d variants and %d runs recorded, %d variants expected",
              (long long)id, l.cfg.nvariants, l.res.nruns, nv);
        rc = 1;
    } else {
        printf("experiment %lld: complete, with these builds and settings: reused, not measured "
               "again (its tables: pgolab report --experiment=%lld --results=%s)\n",
               (long long)id, (long long)id, store_path(store));
        if (p->outcome)
            fill_outcome(p, &l.cfg, &l.res, m, nv, true);
    }
    experiment_loaded_release(&l);
    return rc;
}

void pgo_measure_config(const struct pgo_pipeline *p, struct variant *v, int nv,
                        struct experiment_config *cfg)
{
    const struct pgo_request *rq = p->rq;
    assert(nv >= 2 && rq->nbench >= 1 && rq->nthreads >= 1);
    memset(cfg, 0, sizeof(*cfg));
    cfg->variants = v;
    cfg->nvariants = nv;
    cfg->workloads = rq->bench;
    cfg->nworkloads = rq->nbench;
    cfg->threads = rq->threads;
    cfg->nthreads = rq->nthreads;
    cfg->rounds = rq->rounds;
    cfg->target_ci = rq->target_ci;
    cfg->max_time_s = rq->max_time_s;
    cfg->cs_rounds = rq->cs_rounds;
    cfg->time_s = rq->time_s;
    cfg->tables = rq->tables;
    cfg->table_size = rq->table_size;
    cfg->workdir = p->rundir;
    cfg->pgolab = p->pgolab;
    cfg->seed = rq->seed;
    cfg->target = rq->target;
    /* a status line on a terminal; off one (a log, CI, nohup) the paced lines of
     * experiment/pace.h, for a server target as for a library and as compare prints them */
    cfg->progress = true;
    cfg->no_metrics = rq->no_metrics;
}

/* v[0..nv) and trainer_of[0..nv): the experiment's variants of the measured builds m (the
 * target says what a variant of its builds is), and for the trainer x workload table the
 * trainer of each of --cc and --cflags' pgo builds (NULL for the others). */
static void make_variants(const struct pgo_pipeline *p, const struct pgo_build **m, int nv,
                          struct variant *v, const char **trainer_of)
{
    /* the trainer matrix has a row per trainer: from the pgo builds, or from the pgo+lto
     * builds when only those were asked for (both would give each trainer two rows) */
    bool plain_pgo = false;
    for (int i = 0; i < p->nbuilds; i++)
        plain_pgo = plain_pgo || (p->builds[i].phase == BUILD_PGO && !p->builds[i].lto);
    for (int k = 0; k < nv; k++) {
        const struct pgo_build *b = m[k];
        v[k].name = b->name;
        p->target->variant(p, b, &v[k]);
        v[k].server_kind = p->recipe.server_kind;
        /* each build's own compiler (its group's); official's is the distribution's: unknown */
        v[k].compiler = b->official ? NULL : b->pipeline->cc.version;
        v[k].cflags = b->official ? p->prov.official_cflags : b->flags;
        /* the trainer matrix: --cc and --cflags' pgo builds */
        trainer_of[k] = b->pipeline == p && b->trainer && (plain_pgo ? !b->lto : b->lto)
                            ? b->trainer->name : NULL;
    }
}

/* --search: only the builds of p->measure_only (the baseline always), in their order, moved
 * to the front of m, v and trainer_of; the others' variants released. Returns how many. */
static int keep_measured_only(const struct pgo_pipeline *p, const struct pgo_build **m,
                              struct variant *v, const char **trainer_of, int nv)
{
    assert(p->measure_only[0]);
    int k = 0;
    for (int i = 0; i < nv; i++) {
        if (!p->measure_only[i]) {
            experiment_variant_release(&v[i]);
            continue;
        }
        v[k] = v[i];
        m[k] = m[i];
        trainer_of[k++] = trainer_of[i];
    }
    for (int i = k; i < nv; i++)
        memset(&v[i], 0, sizeof(v[i]));
    assert(k >= 2);
    return k;
}

/* The measurement's report on stdout: the seed-000 tables, the profiles, "what each step
 * added" with more than two variants (a library's before the profiles), the trainer x
 * workload table with several trainers (a server's), the verdict last. */
static void print_report(const struct pgo_pipeline *p, const struct experiment_config *cfg,
                         const struct experiment_result *res, int nv, const char **trainer_of)
{
    const struct pgo_request *rq = p->rq;
    struct report_options ro = { .trust_table = rq->trust_table, .no_verdict = true };
    experiment_report_text_opts(stdout, cfg, res, &ro);
    if (cfg->profile && !p->library)
        experiment_profile_report(stdout, cfg, res, cfg->profile_dir, PROFILE_TOP_DEFAULT);
    if (nv > 2) {
        struct strbuf sb = STRBUF_INIT;
        strbuf_init(&sb, 0);
        report_steps(&sb, cfg, res);
        fputs(sb.buf, stdout);
        strbuf_release(&sb);
    }
    if (cfg->profile && p->library)
        experiment_profile_report(stdout, cfg, res, cfg->profile_dir, PROFILE_TOP_DEFAULT);
    if (rq->ntrain > 1 && !p->library && p->ntrainers > 1) {
        struct strbuf sb = STRBUF_INIT;
        strbuf_init(&sb, 0);
        report_trainers(&sb, cfg, res, trainer_of);
        fputs(sb.buf, stdout);
        strbuf_release(&sb);
    }
    experiment_report_verdict(stdout, cfg, res);  /* last: the bottom line */
}

int pgo_measure(struct pgo_pipeline *p, struct store *store)
{
    const struct pgo_request *rq = p->rq;
    const struct pgo_build **m = NULL;
    int nv = pgo_measured_builds(p, &m), rc = 0;
    struct variant *v = xcalloc((size_t)nv, sizeof(*v));
    const char **trainer_of = xcalloc((size_t)nv, sizeof(*trainer_of));
    struct experiment_config cfg;
    struct experiment_result res;

    memset(&res, 0, sizeof(res));
    make_variants(p, m, nv, v, trainer_of);
    if (!p->library && experiment_variant_server_options(rq->variant_options,
                                                         rq->nvariant_options, v, nv, true) < 0) {
        rc = 1; /* checked before the builds (pipeline.c): only a changed variant list */
        goto out;
    }
    if (p->measure_only) /* --search: only these builds, in their order */
        nv = keep_measured_only(p, m, v, trainer_of, nv);
    pgo_measure_config(p, v, nv, &cfg);
    int one_thread[1] = { rq->threads[0] };
    if (rq->measure_kind == MEASURE_INSTRUCTIONS) { /* a server runs under callgrind */
        cfg.threads = one_thread; /* rq->threads stays as given */
        cfg.nthreads = rq->threads_set ? rq->nthreads : 1; /* default 1,2: 1, no warning */
        if (experiment_instructions_setup(&cfg, rq->events) < 0) {
            rc = 1;
            goto out;
        }
    }

    if (experiment_fingerprint(&cfg) < 0 || (p->library && check_loaded(v, nv) < 0)) {
        rc = 1;
        goto out;
    }
    int64_t resume = rq->resume_id;
    if (resume < 0) {
        struct newest n = { 0 };
        if (store_experiments_list(store, newest_unfinished, &n) < 0) {
            rc = 1;
            goto out;
        }
        if (!n.id)
            warning("--resume: no unfinished pgo experiment in %s; starting a new one",
                    store_path(store));
        resume = n.id;
    }
    char *extra = p->target->settings(p);
    if (p->measure_only) { /* --search: continue a measurement of the same builds and settings */
        struct same sm = { .settings = experiment_settings_json(&cfg, extra) };
        int lrc = store_experiments_list(store, same_settings, &sm);
        free((char *)sm.settings);
        if (lrc == 0 && sm.id && sm.complete && rq->measure_kind == MEASURE_INSTRUCTIONS) {
            free(extra);
            rc = reuse(p, store, sm.id, m, nv);
            goto out;
        }
        if (lrc < 0) {
            free(extra);
            rc = 1;
            goto out;
        }
        if (sm.id && !sm.complete)
            resume = sm.id; /* the runs that finished are not run again */
        cfg.resume_hint = "the same command again continues the search (the runs that finished "
                          "are kept and not run again)";
    }
    cfg.resume_options = rq->build_options;
    int brc = resume > 0 ? experiment_record_resume(&cfg, store, resume, "pgo", extra)
                         : experiment_record_begin(&cfg, store, "pgo", extra);
    free(extra);
    if (brc < 0 || (rq->profile && experiment_profile_setup(&cfg, store, rq->profile_freq) < 0)) {
        rc = 1;
        goto out;
    }
    if (p->outcome) /* named from here on, also by an interrupt before the first run */
        p->outcome->experiment_id = cfg.experiment_id;
    cfg.keep_run_json = rq->output != NULL;
    int run_rc = experiment_run(&cfg, store, &res);
    if (experiment_record_finish(&cfg, store, &res, run_rc) < 0 && run_rc == 0)
        run_rc = -1;
    bool report = res.nruns > 0;
    if (rq->exclude_distrusted)  /* everything below without them (the store has every run) */
        experiment_result_exclude_distrusted(&res);
    if (report) {
        print_report(p, &cfg, &res, nv, trainer_of);
        if (p->outcome)
            fill_outcome(p, &cfg, &res, m, nv, run_rc == 0);
    }
    rc = run_rc == 0 ? 0 : res.signal ? 2 : 1;
    if (rq->output && experiment_write_json(rq->output, &cfg, &res) < 0 && !rc)
        rc = 1;
    if (rc == 0 && rq->fail_pct >= 0 && report_fail_if_slower(&cfg, &res, rq->fail_pct))
        rc = 3;
    experiment_profile_release(&cfg);
    experiment_result_release(&res);
out:
    for (int i = 0; i < nv; i++)
        experiment_variant_release(&v[i]);
    free(v);
    free(m);
    free(trainer_of);
    return rc;
}
