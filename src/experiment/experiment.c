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
                    run_child(cfg, res, var, cfg->workloads[w], cfg->threads[t],
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
static int run_recorded(const struct experiment_config *cfg, int v, int w, int threads,
                        int round, int *done)
{
    *done = 0;
    if (!cfg->store || cfg->experiment_id <= 0)
        return 0;
    return store_run_exists(cfg->store, cfg->experiment_id, v, cfg->workloads[w], threads,
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
static int workload_pending(const struct experiment_config *cfg,
                            const struct experiment_result *res, int w, int *pending)
{
    *pending = 1;
    if (!cfg->store || cfg->experiment_id <= 0)
        return 0;
    if (target_reached(cfg, res, w, NULL)) {
        *pending = 0;
        return 0;
    }
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

/* ETA of the runs left: the mean duration of the runs made so far (before any: --time
 * + 1 s) times the runs not recorded yet, the next one included; appended to sb. */
static void add_eta(struct strbuf *sb, const struct experiment_config *cfg, int total,
                    int recorded, int ran, uint64_t run_ns)
{
    double per = ran ? run_ns / 1e9 / ran : cfg->time_s + 1.0;
    pace_add_duration(sb, per * (total - recorded));
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
            add_eta(line, cfg, total, res->nruns, ran, run_ns);
        }
        strbuf_addch(line, ']');
    } else {
        strbuf_addf(line, ended ? "  [%d of %d runs recorded, ETA " : "  [run %d/%d, ETA ",
                    ended ? res->nruns : res->nruns + 1, total);
        add_eta(line, cfg, total, res->nruns, ran, run_ns);
        strbuf_addch(line, ']');
    }
    strbuf_release(&tmp);
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
    struct strbuf line = STRBUF_INIT;
    struct pace pace;

    memset(res, 0, sizeof(*res));
    res->started_at = wall_time();
    res->env_json = experiment_environment_json();
    if (cfg->nvariants < 1 || cfg->nworkloads < 1 || cfg->nthreads < 1 || cfg->rounds < 1) {
        rc = run_fail(res, "experiment: nothing to run (need variants, workloads, threads, "
                           "rounds)");
        goto done;
    }
    if (cfg->store && cfg->experiment_id > 0) {
        if (record_load_runs(cfg->store, cfg, res) < 0) {
            rc = run_fail(res, "cannot read the runs of experiment %lld",
                          (long long)cfg->experiment_id);
            goto done;
        }
        res->resumed = res->nruns;
        if (!run_keeps_json(cfg))
            for (int i = 0; i < res->nruns; i++) {
                free(res->runs[i].json);
                res->runs[i].json = NULL;
            }
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
        if (run_signal()) { /* before this workload's data was prepared */
            res->signal = run_signal();
            rc = run_fail(res, "interrupted by %s", run_signal_name(run_signal()));
            break;
        }
        if (workload_pending(cfg, res, w, &pending) < 0) {
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
        /* --target-ci: this workload's share of the time left (--max-time), and the mean
         * duration of its rounds so far, so that no round starts that would end past it */
        double wl_start = wall_time(), wl_budget = 0, worst = NAN;
        if (cfg->target_ci > 0 && cfg->max_time_s > 0) {
            double left = cfg->max_time_s - (wl_start - res->started_at);
            wl_budget = (left > 0 ? left : 0) / (cfg->nworkloads - w);
        }
        int wl_rounds_run = 0, wl_ran = ran;
        if (rc == 0 && cfg->progress) { /* off a terminal: the measurement's phase line */
            strbuf_reset(&line);
            add_eta(&line, cfg, total, res->nruns, ran, run_ns);
            progress_log("measuring %s: %s%d rounds x %d thread count%s x %d variants, "
                         "%d of %d runs recorded, ETA %s%s", cfg->workloads[w],
                         cfg->target_ci > 0 ? "at most " : "", cfg->rounds, cfg->nthreads,
                         cfg->nthreads == 1 ? "" : "s", cfg->nvariants, res->nruns, total,
                         cfg->target_ci > 0 ? "at most " : "", line.buf);
        }
        pace_begin(&pace, wall_time(), pace_interval());
        for (int round = 1; round <= cfg->rounds && rc == 0; round++) {
            if (cfg->target_ci > 0 && round > 1) {
                if (target_reached(cfg, res, w, &worst))
                    break;
                double spent = wall_time() - wl_start;
                if (cfg->max_time_s > 0 && wl_rounds_run &&
                    spent + spent / wl_rounds_run > wl_budget)
                    break;
            }
            bool ran_round = false;
            pace_round(&pace, wall_time());
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
                    if (cfg->progress) { /* the status line; off a terminal, paced */
                        assert(done == res->nruns);
                        round_line(&line, cfg, res, w, round, t, order[i], false, total, ran,
                                   run_ns, worst);
                        progress("%s", line.buf);
                        double now = wall_time();
                        if (pace_due(&pace, now, false)) {
                            progress_log("%s", line.buf);
                            pace_printed(&pace, now);
                        }
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
                    ran_round = true;
                }
            }
            wl_rounds_run += ran_round;
            double now = wall_time();
            if (rc == 0 && ran_round && cfg->progress && pace_due(&pace, now, true)) {
                if (cfg->target_ci > 0)
                    target_reached(cfg, res, w, &worst);
                round_line(&line, cfg, res, w, round, 0, 0, true, total, ran, run_ns, worst);
                progress_log("%s", line.buf);
                pace_printed(&pace, now);
            }
        }
        if (rc == 0 && cfg->progress) {
            struct strbuf took = STRBUF_INIT;
            pace_add_duration(&took, wall_time() - wl_start);
            progress_phase_done("measured %s: %d runs in %s (%d of %d runs recorded)",
                                cfg->workloads[w], ran - wl_ran, took.buf, res->nruns, total);
            strbuf_release(&took);
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
    strbuf_release(&line);
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
