/* experiment: experiment_run(), the loop of an experiment (see experiment.h): per workload,
 * the data prepared once (run_prepare_template), the warm-up runs, then every round's blocks
 * in the order experiment_order() gives (plan.c), each variant's run made by run_once()
 * (run.c), skipping what the results store already holds. Its progress: a status line on a
 * terminal; off one, plain lines per phase and at the pace of pace.h (with the ETA). Owned
 * by the experiment engine; used by compare, pgo and calibrate. */
#include "experiment/experiment.h"
#include "model/environment.h"
#include "experiment/pace.h"
#include "experiment/plan.h"
#include "model/precision.h"
#include "experiment/record.h"
#include "experiment/run.h"
#include "stats/sequential.h"
#include "store/store.h"
#include "util/fs.h"
#include "util/progress.h"
#include "util/signals.h"
#include "util/strbuf.h"
#include "util/util.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- small helpers */

/* The widest CI half-width for the progress line: "+/-4.1%", or (NAN) "none before round 5". */
static const char *fmt_half(struct strbuf *sb, double pct)
{
    strbuf_reset(sb);
    if (isnan(pct))
        strbuf_addf(sb, "none before round %d", STATS_CS_MIN_ROUNDS);
    else
        strbuf_addf(sb, "+/-%.1f%%", pct);
    return sb->buf;
}

/* One experiment_run() in progress: the engine it runs with, its result, and per variant the
 * data of the workload being measured. experiment_run()'s own, for the length of the call. */
struct loop {
    struct experiment_engine en;
    const struct experiment_config *cfg; /* en.cfg */
    struct experiment_result *res;
    int total;              /* runs planned (experiment_runs_planned()) */
    int *order;             /* one block's variant order */
    char **template;        /* per variant: the workload's prepared data, or NULL */
    char **rundb;           /* per variant: its working copy, or NULL */
    bool *fresh;            /* per variant: its next run starts from a copy of the template */
    int ran;                /* runs made by this call */
    uint64_t run_ns;        /* and their time */
    double worst;           /* --target-ci: the workload's widest CI now (NAN: none yet) */
    struct strbuf line;     /* the progress line */
    struct pace pace;
};

/* --warmup-runs: before round 1 of workload w, every variant runs each thread count
 * cfg->warmup_runs times (in a shuffled order of its own); the results are discarded, only a
 * failure counts. Like measured runs they start from a copy of the template under
 * --reset=run; otherwise they run on (and warm) the variant's working copy. 0, or -1 after
 * run_fail(). */
static int warmup(struct loop *l, int w)
{
    const struct experiment_config *cfg = l->cfg;
    struct experiment_result *res = l->res;
    char **template = l->template, **rundb = l->rundb;
    bool *fresh = l->fresh;
    int *order = l->order;
    struct strbuf out = STRBUF_INIT;
    int rc = 0;
    if (cfg->progress)
        progress_log("warm-up of %s: %d run%s per variant and thread count (discarded)",
                     cfg->workloads[w], cfg->warmup_runs, cfg->warmup_runs == 1 ? "" : "s");
    for (int k = 1; k <= cfg->warmup_runs && rc == 0; k++)
        for (int t = 0; t < cfg->nthreads && rc == 0; t++) {
            experiment_order(cfg->seed, -k, w * cfg->nthreads + t, cfg->nvariants, order);
            for (int i = 0; i < cfg->nvariants && rc == 0; i++) {
                const struct variant *var = &cfg->variants[order[i]];
                char *log =
                    xasprintf("%s/warmup-%d-%d-%d-%s.log", cfg->workdir, w, t, k, var->name);
                if (cfg->progress)
                    progress("warm-up %d/%d  %s  threads=%d  %s (discarded)", k, cfg->warmup_runs,
                             cfg->workloads[w], cfg->threads[t], var->name);
                int v = order[i];
                int st =
                    run_child(&l->en, res, var, cfg->workloads[w], cfg->threads[t],
                              (cfg->reset == RESET_RUN || fresh[v]) && var->kind != VARIANT_EXTERNAL
                                  ? template[v]
                                  : NULL,
                              rundb[v], log, NULL, 0, &out, NULL);
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

/* *done = 1 when run (variant v, workload w, thread count, round) is recorded already. */
static int run_recorded(const struct experiment_engine *en, int v, int w, int threads,
                        int round, int *done)
{
    const struct experiment_config *cfg = en->cfg;
    *done = 0;
    if (!en->store || cfg->experiment_id <= 0)
        return 0;
    return store_run_exists(en->store, cfg->experiment_id, v, cfg->workloads[w], threads,
                            round, done);
}

/* --target-ci: true when every tps cell of workload w has reached the target (from the runs
 * in res, recorded ones included). */
static bool target_reached(const struct experiment_config *cfg,
                           const struct experiment_result *res, int w, double *worst)
{
    int reached, total = experiment_target_cells(cfg, res, w, &reached, worst);
    return cfg->target_ci > 0 && reached == total;
}

/* *pending = 1 when some run of workload w is not recorded yet (under --target-ci: and the
 * recorded runs have not reached the target). */
static int workload_pending(const struct experiment_engine *en,
                            const struct experiment_result *res, int w, int *pending)
{
    const struct experiment_config *cfg = en->cfg;
    *pending = 1;
    if (!en->store || cfg->experiment_id <= 0)
        return 0;
    if (target_reached(cfg, res, w, NULL)) {
        *pending = 0;
        return 0;
    }
    for (int round = 1; round <= cfg->rounds; round++)
        for (int t = 0; t < cfg->nthreads; t++)
            for (int v = 0; v < cfg->nvariants; v++) {
                int done;
                if (run_recorded(en, v, w, cfg->threads[t], round, &done) < 0)
                    return -1;
                if (!done)
                    return 0;
            }
    *pending = 0;
    return 0;
}

/* ETA of the runs left: the mean duration of the runs made so far (before any: --time
 * + 1 s) times the runs not recorded yet, the next one included; with --target-ci and
 * --max-time no more than the time --max-time leaves (measured from res's start: no round
 * starts that would end past it); appended to sb. */
static void add_eta(struct strbuf *sb, const struct experiment_config *cfg,
                    const struct experiment_result *res, int total, int ran, uint64_t run_ns)
{
    double per = ran ? run_ns / 1e9 / ran : cfg->time_s + 1.0;
    double eta = per * (total - res->nruns);
    if (cfg->target_ci > 0 && cfg->max_time_s > 0 && isfinite(res->started_at)) {
        double left = cfg->max_time_s - (wall_time() - res->started_at);
        if (left < eta)
            eta = left > 0 ? left : 0;
    }
    pace_add_duration(sb, eta);
}

/* The progress of round `round` of workload w (ended: its end, else at the start of the
 * run of thread count t and variant v) into line. */
static void round_line(struct strbuf *line, const struct experiment_config *cfg,
                       const struct experiment_result *res, int w, int round, int t, int v,
                       bool ended, int total, int ran, uint64_t run_ns, double worst)
{
    struct strbuf tmp = STRBUF_INIT;
    strbuf_reset(line);
    if (cfg->target_ci > 0)
        strbuf_addf(line, "round %d (at most %d)", round, cfg->rounds);
    else
        strbuf_addf(line, "round %d/%d", round, cfg->rounds);
    strbuf_addf(line, "%s  %s", ended ? " done" : "", cfg->workloads[w]);
    if (!ended)
        strbuf_addf(line, "  threads=%d  %s", cfg->threads[t], cfg->variants[v].name);
    if (cfg->target_ci > 0) {
        strbuf_addf(line, "  [--target-ci=%g%%: widest CI now %s", cfg->target_ci,
                    fmt_half(&tmp, worst));
        if (ended) {
            strbuf_addf(line, "; %d runs recorded, ETA at most ", res->nruns);
            add_eta(line, cfg, res, total, ran, run_ns);
        }
        strbuf_addch(line, ']');
    } else {
        strbuf_addf(line, ended ? "  [%d of %d runs recorded, ETA " : "  [run %d/%d, ETA ",
                    ended ? res->nruns : res->nruns + 1, total);
        add_eta(line, cfg, res, total, ran, run_ns);
        strbuf_addch(line, ']');
    }
    strbuf_release(&tmp);
}

/* A resumed experiment: the runs the store holds already into res (they are not run again),
 * and the environment recorded when it began. 0, or -1 after run_fail(). */
static int load_recorded(struct loop *l)
{
    const struct experiment_config *cfg = l->cfg;
    struct experiment_result *res = l->res;

    assert(l->en.store && cfg->experiment_id > 0);
    if (record_load_runs(l->en.store, cfg, res) < 0)
        return run_fail(res, "cannot read the runs of experiment %lld",
                        (long long)cfg->experiment_id);
    res->resumed = res->nruns;
    if (!run_keeps_json(&l->en))
        for (int i = 0; i < res->nruns; i++) {
            free(res->runs[i].json);
            res->runs[i].json = NULL;
        }
    /* The experiment's environment is the one recorded when it began, so this report
     * and one rebuilt from the store later (`pgolab report`) are the same. */
    struct store_experiment e;
    if (store_experiment_get(l->en.store, cfg->experiment_id, &e) == 0) {
        if (e.environment_json) {
            free(res->env_json);
            res->env_json = xstrdup(e.environment_json);
        }
        store_experiment_release(&e);
    }
    return 0;
}

/* The data of workload w: one template prepared by the baseline, or (--reset=variant) one per
 * variant prepared by that variant; each variant runs on its own working copy (l->rundb). A
 * running server's data is prepared in place. 0, or -1 after run_fail(). */
static int prepare_data(struct loop *l, int w)
{
    const struct experiment_config *cfg = l->cfg;
    char **template = l->template, **rundb = l->rundb;
    int rc = 0;

    for (int v = 0; v < cfg->nvariants && rc == 0; v++) {
        const struct variant *var = &cfg->variants[v];
        free(template[v]);
        free(rundb[v]);
        template[v] = rundb[v] = NULL;
        l->fresh[v] = var->kind != VARIANT_EXTERNAL;
        if (var->kind == VARIANT_EXTERNAL) { /* data in place, prepared once */
            rc = run_prepare_template(&l->en, l->res, w, v, NULL);
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
            rc = run_prepare_template(&l->en, l->res, w, v, template[v]);
        }
    }
    return rc;
}

/* Remove the data of the workload just measured (templates and working copies). */
static void remove_data(struct loop *l)
{
    for (int v = 0; v < l->cfg->nvariants; v++) {
        if (l->template[v])
            run_remove_data(&l->cfg->variants[v], l->template[v]);
        if (l->rundb[v])
            run_remove_data(&l->cfg->variants[v], l->rundb[v]);
    }
}

/* Round `round` of workload w: per thread count a block of every variant in the order of
 * (seed, round, block), each run not recorded yet made by run_once(). *ran_round = whether
 * any run was made. 0, or -1 after run_fail(). */
static int measure_round(struct loop *l, int w, int round, bool *ran_round)
{
    const struct experiment_config *cfg = l->cfg;
    struct experiment_result *res = l->res;
    bool instr_mode = cfg->measure == MEASURE_INSTRUCTIONS; /* same data for every count */
    int *order = l->order;
    int rc = 0;

    *ran_round = false;
    for (int t = 0; t < cfg->nthreads && rc == 0; t++) {
        /* The order depends only on (seed, round, block): a resumed experiment
         * keeps it and runs what is missing in the same order. */
        experiment_order(cfg->seed, round, w * cfg->nthreads + t, cfg->nvariants, order);
        for (int i = 0; i < cfg->nvariants && rc == 0; i++) {
            int done = res->nruns, recorded;
            if (run_recorded(&l->en, order[i], w, cfg->threads[t], round, &recorded) < 0) {
                rc = run_fail(res, "cannot read the runs of experiment %lld",
                              (long long)cfg->experiment_id);
                break;
            }
            if (recorded)
                continue;
            if (cfg->progress) { /* the status line; off a terminal, paced */
                assert(done == res->nruns);
                round_line(&l->line, cfg, res, w, round, t, order[i], false, l->total, l->ran,
                           l->run_ns, l->worst);
                progress("%s", l->line.buf);
                double now = wall_time();
                if (pace_due(&l->pace, now, false)) {
                    progress_log("%s", l->line.buf);
                    pace_printed(&l->pace, now);
                }
            }
            uint64_t t0 = now_ns();
            int v = order[i];
            /* A copy of the template when the data is reset (every run; or the
             * variant's first run of the workload or of the round). */
            const char *tpl = (cfg->reset == RESET_RUN || l->fresh[v] || instr_mode) &&
                              cfg->variants[v].kind != VARIANT_EXTERNAL
                                  ? l->template[v] : NULL;
            l->fresh[v] = false;
            rc = run_once(&l->en, res, w, t, round, v, tpl, l->rundb[v]);
            l->run_ns += now_ns() - t0;
            l->ran++;
            *ran_round = true;
        }
    }
    return rc;
}

/* Workload w on its prepared data: the warm-up runs, then its rounds (under --target-ci until
 * every cell reached the target, or before a round that would pass the workload's share of
 * --max-time), with their progress. 0, or -1 after run_fail(). */
static int measure_workload(struct loop *l, int w)
{
    const struct experiment_config *cfg = l->cfg;
    struct experiment_result *res = l->res;
    int rc = 0;

    if (cfg->warmup_runs && cfg->measure == MEASURE_TIME && (rc = warmup(l, w)) != 0)
        return rc;
    /* --target-ci: this workload's share of the time left (--max-time), and the mean
     * duration of its rounds so far, so that no round starts that would end past it */
    double wl_start = wall_time(), wl_budget = 0;
    l->worst = NAN;
    if (cfg->target_ci > 0 && cfg->max_time_s > 0) {
        double left = cfg->max_time_s - (wl_start - res->started_at);
        wl_budget = (left > 0 ? left : 0) / (cfg->nworkloads - w);
    }
    int wl_rounds_run = 0, wl_ran = l->ran;
    if (cfg->progress) { /* off a terminal: the measurement's phase line */
        strbuf_reset(&l->line);
        add_eta(&l->line, cfg, res, l->total, l->ran, l->run_ns);
        progress_log("measuring %s: %s%d round%s x %d thread count%s x %d variant%s, "
                     "%d of %d runs recorded, ETA %s%s", cfg->workloads[w],
                     cfg->target_ci > 0 ? "at most " : "", cfg->rounds,
                     cfg->rounds == 1 ? "" : "s", cfg->nthreads, cfg->nthreads == 1 ? "" : "s",
                     cfg->nvariants, cfg->nvariants == 1 ? "" : "s", res->nruns, l->total,
                     cfg->target_ci > 0 ? "at most " : "", l->line.buf);
    }
    pace_begin(&l->pace, wall_time(), pace_interval());
    for (int round = 1; round <= cfg->rounds && rc == 0; round++) {
        if (cfg->target_ci > 0 && round > 1) {
            if (target_reached(cfg, res, w, &l->worst))
                break;
            double spent = wall_time() - wl_start;
            if (cfg->max_time_s > 0 && wl_rounds_run &&
                spent + spent / wl_rounds_run > wl_budget)
                break;
        }
        bool ran_round;
        pace_round(&l->pace, wall_time());
        if (cfg->reset == RESET_ROUND)
            for (int v = 0; v < cfg->nvariants; v++)
                l->fresh[v] = true;
        rc = measure_round(l, w, round, &ran_round);
        wl_rounds_run += ran_round;
        double now = wall_time();
        if (rc == 0 && ran_round && cfg->progress && pace_due(&l->pace, now, true)) {
            if (cfg->target_ci > 0)
                target_reached(cfg, res, w, &l->worst);
            round_line(&l->line, cfg, res, w, round, 0, 0, true, l->total, l->ran, l->run_ns,
                       l->worst);
            progress_log("%s", l->line.buf);
            pace_printed(&l->pace, now);
        }
    }
    if (rc == 0 && cfg->progress) {
        struct strbuf took = STRBUF_INIT;
        pace_add_duration(&took, wall_time() - wl_start);
        progress_phase_done("measured %s: %d runs in %s (%d of %d runs recorded)",
                            cfg->workloads[w], l->ran - wl_ran, took.buf, res->nruns,
                            l->total);
        strbuf_release(&took);
    }
    return rc;
}

int experiment_run(const struct experiment_config *cfg, struct store *store,
                   struct experiment_result *res)
{
    struct sig_saved saved;
    struct loop l = {
        .en = { .cfg = cfg, .store = store },
        .cfg = cfg,
        .res = res,
        .total = experiment_runs_planned(cfg),
        .order = xcalloc((size_t)cfg->nvariants + 1, sizeof(int)),
        .template = xcalloc((size_t)cfg->nvariants, sizeof(char *)),
        .rundb = xcalloc((size_t)cfg->nvariants, sizeof(char *)),
        .fresh = xcalloc((size_t)cfg->nvariants, sizeof(bool)),
        .worst = NAN,
        .line = STRBUF_INIT,
    };
    int rc = 0;

    memset(res, 0, sizeof(*res));
    res->started_at = wall_time();
    res->env_json = experiment_environment_json();
    if (cfg->nvariants < 1 || cfg->nworkloads < 1 || cfg->nthreads < 1 || cfg->rounds < 1) {
        rc = run_fail(res, "experiment: nothing to run (need variants, workloads, threads, "
                           "rounds)");
        goto done;
    }
    if (store && cfg->experiment_id > 0 && (rc = load_recorded(&l)) < 0)
        goto done;
    if (mkdir_p(cfg->workdir) < 0) {
        rc = run_fail(res, "cannot create the work directory %s: %s", cfg->workdir,
                      strerror(errno));
        goto done;
    }

    run_catch_signals(&saved);

    for (int w = 0; w < cfg->nworkloads && rc == 0; w++) {
        int pending;
        if (run_signal()) { /* before this workload's data was prepared */
            res->signal = run_signal();
            rc = run_fail(res, "interrupted by %s", run_signal_name(run_signal()));
            break;
        }
        if (workload_pending(&l.en, res, w, &pending) < 0) {
            rc = run_fail(res, "cannot read the runs of experiment %lld",
                          (long long)cfg->experiment_id);
            break;
        }
        if (!pending)
            continue; /* every run of this workload is recorded: no data to prepare */
        rc = prepare_data(&l, w);
        if (rc == 0)
            rc = measure_workload(&l, w);
        remove_data(&l);
    }
    progress_done();
    sig_restore(&saved);
done:
    strbuf_release(&l.line);
    res->finished_at = wall_time();
    for (int v = 0; v < cfg->nvariants; v++) {
        free(l.template[v]);
        free(l.rundb[v]);
    }
    free(l.template);
    free(l.rundb);
    free(l.fresh);
    free(l.order);
    return rc;
}
