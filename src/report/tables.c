/* tables: the seed-shaped reports of one experiment: their header, the tables of each shape,
 * the cells they show as CSV and JSON records (see tables.h). Reads experiment results; owns
 * no state. */
#include "report/tables.h"
#include "report/system_metrics.h"
#include "report/rep.h"
#include "report/trainers.h"
#include "report/noise.h"
#include "report/runs.h"
#include "report/ceiling.h"
#include "report/server_cpu.h"
#include "model/cells.h"
#include "model/model.h"
#include "report/common.h"
#include "report/text_table.h"
#include "stats/compare.h"
#include "util/fmt.h"
#include "util/strbuf.h"
#include "util/util.h"
#include "version.h"

#include <jansson.h>
#include <assert.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int report_shape_parse(const char *s, enum report_shape *out)
{
    if (!strcmp(s, "seed000") || !strcmp(s, "000"))
        *out = REPORT_SEED000;
    else if (!strcmp(s, "seed003") || !strcmp(s, "003"))
        *out = REPORT_SEED003;
    else if (!strcmp(s, "seed002") || !strcmp(s, "002"))
        *out = REPORT_SEED002;
    else if (!strcmp(s, "runs"))
        *out = REPORT_RUNS;
    else
        return error("invalid --shape=%s (expected seed000, seed003, seed002 or runs)", s);
    return 0;
}

/* ---------------------------------------------------------------- header */

/* Instruction mode: which counters moved between the rounds of one variant (identical runs),
 * and by how much at most: (max - min) / |median| over the rounds of each cell. A line into
 * body only when some cell has two rounds or more. */
static void repeatability_line(const struct rep *r, struct strbuf *body)
{
    const struct experiment_config *cfg = r->cfg;
    struct strbuf moved = STRBUF_INIT, still = STRBUF_INIT;
    bool any = false;
    for (int k = 0; k < INSTR_METRICS; k++) {
        enum experiment_metric m = (enum experiment_metric)(METRIC_INSTR + k);
        double worst = -1;
        for (int v = 0; v < cfg->nvariants; v++)
            for (int w = 0; w < cfg->nworkloads; w++)
                for (int t = 0; t < cfg->nthreads; t++) {
                    struct cell_stats c = experiment_cell(r->res, v, w, cfg->threads[t], m);
                    if (c.n < 2 || c.median == 0)
                        continue;
                    double spread = (c.max - c.min) / fabs(c.median) * 100;
                    if (spread > worst)
                        worst = spread;
                }
        if (worst < 0)
            continue;
        any = true;
        const char *key = experiment_metric_key(m);
        if (worst > 0)
            strbuf_addf(&moved, "%s%s up to %.3g%%", moved.len ? ", " : "", key, worst);
        else
            strbuf_addf(&still, "%s%s", still.len ? ", " : "", key);
    }
    /* an empty strbuf's buf is NULL (STRBUF_INIT): never given to %s */
    if (any)
        strbuf_addf(body, "repeatability: between the rounds of one variant %s%s%s%s\n",
                    moved.len ? "moved: " : "nothing moved", moved.len ? moved.buf : "",
                    still.len ? "; identical: " : "", still.len ? still.buf : "");
    strbuf_release(&moved);
    strbuf_release(&still);
}

/* The report header's first line: the experiment, its variants, workloads, threads, rounds. */
static void header_title(const struct rep *r, struct strbuf *title)
{
    const struct experiment_config *cfg = r->cfg;
    char *time_s = fmt_num(cfg->time_s);

    strbuf_addstr(title, "pgolab experiment");
    if (cfg->experiment_id > 0)
        strbuf_addf(title, " %lld", (long long)cfg->experiment_id);
    if (cfg->kind)
        strbuf_addf(title, " (%s)", cfg->kind);
    strbuf_addf(title, ": %d variants, workloads ", cfg->nvariants);
    report_join_strs(title, cfg->workloads, cfg->nworkloads);
    strbuf_addstr(title, ", threads ");
    report_join_ints(title, cfg->threads, cfg->nthreads);
    if (cfg->measure == MEASURE_INSTRUCTIONS)
        strbuf_addf(title, ", %d round%s x %d events per run: INSTRUCTIONS per transaction "
                           "(valgrind callgrind), not time",
                    cfg->rounds, cfg->rounds == 1 ? "" : "s", cfg->events);
    else if (cfg->target_ci > 0)
        strbuf_addf(title, ", rounds until the 95%% CI is +/-%g%% (at most %d) x %s s per run",
                    cfg->target_ci, cfg->rounds, time_s);
    else
        strbuf_addf(title, ", %d round%s x %s s per run", cfg->rounds,
                    cfg->rounds == 1 ? "" : "s", time_s);
    free(time_s);
}

/* One line per variant: the build under test, where it comes from, its server options. */
static void header_variants(const struct rep *r, struct strbuf *body)
{
    const struct experiment_config *cfg = r->cfg;
    const struct variant *base = &cfg->variants[0];
    size_t namew = 0;

    for (int v = 0; v < cfg->nvariants; v++)
        if (strlen(cfg->variants[v].name) > namew)
            namew = strlen(cfg->variants[v].name);
    for (int v = 0; v < cfg->nvariants; v++) {
        const struct variant *var = &cfg->variants[v];
        strbuf_addf(body, "%-8s %-*s  %s", v ? "variant" : "baseline", (int)namew, var->name,
                    var->library);
        /* SQLite versions are bare numbers; servers' carry their flavor ("MariaDB 10.11.19") */
        bool bare = var->version && var->version[0] >= '0' && var->version[0] <= '9';
        strbuf_addf(body, " (%s%s", bare ? "SQLite " : "",
                    var->version ? var->version : "version unknown");
        if (var->sha256)
            strbuf_addf(body, ", sha256 %.12s", var->sha256);
        if (var->compiler)
            strbuf_addf(body, ", %s", var->compiler);
        if (var->cflags) /* briefly: the JSON output has them whole */
            strbuf_addf(body, ", %.48s%s", var->cflags, strlen(var->cflags) > 48 ? "..." : "");
        for (int i = 0; i < var->nserver_options; i++)
            strbuf_addf(body, "%s%s", i ? ", " : "; server options ", var->server_options[i]);
        /* where it comes from: in full once, then "the same as the baseline" */
        bool same_origin = v && var->provenance && base->provenance &&
                           !strcmp(var->provenance, base->provenance);
        if (var->provenance)
            strbuf_addf(body, "; from %s", same_origin ? "the same source and configure options "
                                                         "as the baseline" : var->provenance);
        if (v && var->sha256 && base->sha256 && !strcmp(var->sha256, base->sha256))
            strbuf_addf(body, "; same file as %s%s", base->name,
                        var->nserver_options || base->nserver_options
                            ? ", other server options" : ": an A/A run, differences are noise");
        strbuf_addstr(body, ")\n");
    }
    /* how each was built and what differs from the baseline's (compare's managed servers) */
    for (int v = 0; v < cfg->nvariants; v++) {
        const struct variant *var = &cfg->variants[v];
        if (!var->build)
            continue;
        if (v && base->build && !strcmp(var->build, base->build))
            strbuf_addf(body, "build of %s: %s as %s's\n", var->name,
                        var->sha256 && base->sha256 && !strcmp(var->sha256, base->sha256)
                            ? "the same file" : "described the same", base->name);
        else
            strbuf_addf(body, "build of %s: %s\n", var->name, var->build);
        if (v && var->build_differences)
            strbuf_addf(body, "build differences, %s against %s: %s\n", var->name, base->name,
                        var->build_differences);
    }
}

/* How the runs were set up: the data and its reset, the run order, the server options, CPU
 * placement, MPI clients and warm-up runs. */
static void header_setup(const struct rep *r, struct strbuf *body)
{
    const struct experiment_config *cfg = r->cfg;

    static const char *const reset_words[] = {
        [RESET_RUN] = "a fresh copy per run",
        [RESET_ROUND] = "a fresh copy per variant and round",
        [RESET_VARIANT] = "prepared by each variant once per workload, never reset",
    };
    /* a running server's data is not pgolab's to copy (experiment.c, prepare_template) */
    struct strbuf ext = STRBUF_INIT;
    int next = 0;
    for (int v = 0; v < cfg->nvariants; v++)
        if (cfg->variants[v].kind == VARIANT_EXTERNAL)
            strbuf_addf(&ext, "%s%s", next++ ? ", " : "", cfg->variants[v].name);
    strbuf_addf(body, "data: %d table%s x %d rows", cfg->tables, cfg->tables == 1 ? "" : "s",
                cfg->table_size);
    if (next < cfg->nvariants)
        strbuf_addf(body, ", %s",
                    reset_words[cfg->measure == MEASURE_INSTRUCTIONS ? RESET_RUN : cfg->reset]);
    if (next)
        strbuf_addf(body, "%s running server%s %s: tables dropped and prepared once per workload, "
                          "never reset%s",
                    next < cfg->nvariants ? " (on the" : "; on the", next == 1 ? "" : "s", ext.buf,
                    next < cfg->nvariants ? ")" : "");
    strbuf_release(&ext);
    strbuf_addf(body, "; variant order shuffled per round (seed %llu)\n",
                (unsigned long long)cfg->seed);
    if (cfg->nserver_options) {
        strbuf_addstr(body, "server options:");
        for (int i = 0; i < cfg->nserver_options; i++)
            strbuf_addf(body, "%s %s", i ? "," : "", cfg->server_options[i]);
        bool own = false;
        for (int v = 0; v < cfg->nvariants; v++)
            own = own || cfg->variants[v].nserver_options > 0;
        strbuf_addstr(body, own ? " (managed servers; a variant's own option of the same name "
                                  "replaces one)\n" : " (managed servers)\n");
    }
    if (cfg->measure == MEASURE_TIME) {
        char place[2 * PLACEMENT_STR_MAX + 64];
        experiment_placement_describe(cfg, place, sizeof(place));
        strbuf_addf(body, "CPU placement: %s\n", place);
    }
    if (cfg->clients_np > 0)
        strbuf_addf(body, "clients: each run is one MPI job of %d rank%s (%s), each with the "
                          "thread count's workers; the cells are the merged runs\n",
                    cfg->clients_np, cfg->clients_np == 1 ? "" : "s", cfg->clients);
    if (cfg->warmup_runs)
        strbuf_addf(body, "warm-up: %d run%s per variant, workload and thread count before round "
                          "1, "
                          "not counted\n", cfg->warmup_runs, cfg->warmup_runs == 1 ? "" : "s");
}

/* Instruction mode: what is counted and how the cells and their changes read. */
static void header_instructions(const struct rep *r, struct strbuf *body)
{
    const struct experiment_config *cfg = r->cfg;
    const struct variant *base = &cfg->variants[0];

    assert(cfg->measure == MEASURE_INSTRUCTIONS);
    strbuf_addf(body, "measure: instructions per transaction counted by valgrind callgrind "
                      "(deterministic, NOT time, NOT tps): each run is two 1-thread "
                      "children of %d and %d events, value = (I(%d) - I(%d)) / "
                      "(transactions difference), so start-up, library loading and "
                      "statement preparation cancel out; lower is better; I1 cache misses "
                      "and branch mispredictions are callgrind's simulation (--cache-sim, "
                      "--branch-sim), the same marginal way; real cache misses, stalls and "
                      "I/O are not counted\n",
                cfg->events / 5, cfg->events, cfg->events, cfg->events / 5);
    if (cfg->rounds > 1)
        strbuf_addf(body, "cells: median of %d rounds (min-max); ", cfg->rounds);
    else
        strbuf_addstr(body, "cells: one round; ");
    strbuf_addf(body, "%% improvement vs %s: the change's estimate, (1 - ratio)*100, in "
                      "parentheses when not significant; change (95%% CI): ratio of "
                      "medians, bootstrap CI, Mann-Whitney U at alpha 0.05; \"~\" = no "
                      "significant difference (identical inputs give nearly identical "
                      "counts: tiny CIs)%s\n",
                base->name,
                r->shape != REPORT_SEED000 ? "; the instruction table is the only shape"
                                           : "");
    repeatability_line(r, body);
    bool servers = false;
    for (int v = 0; v < cfg->nvariants; v++)
        servers |= cfg->variants[v].kind == VARIANT_SERVER;
    if (servers)
        strbuf_addstr(body, "servers: each child runs outside valgrind against a server "
                            "started for it alone under callgrind; counted are exactly "
                            "the benchmark's connections, each matched by the identity it "
                            "reported (PostgreSQL: its backend's PID; MariaDB: its server "
                            "thread, counted from the first event to the last), the "
                            "server's other processes and threads (another client's "
                            "connections too, named in each run's \"counted\") are "
                            "recorded beside (the background table), never in these "
                            "numbers; PostgreSQL runs with "
                            "autovacuum=off, track_counts=off and a smart "
                            "shutdown, MariaDB with "
                            "innodb-stats-auto-recalc=0 (timer-driven work would make the "
                            "counts vary); reading from the client (secure_read, vio_read: "
                            "how often it waits depends on timing) is not counted; "
                            "estimated "
                            "cycles = Ir + 10 Bm + 10 L1m + 100 LLm (KCachegrind's "
                            "formula): simulated counts, not time\n");
}

/* Time mode: how the cells and their changes of this report's shape read. */
static void header_cells(const struct rep *r, struct strbuf *body)
{
    const struct experiment_config *cfg = r->cfg;
    const struct variant *base = &cfg->variants[0];

    assert(cfg->measure != MEASURE_INSTRUCTIONS);
    switch (r->shape) {
    case REPORT_SEED000:
        if (cfg->target_ci > 0)
            strbuf_addstr(body, "cells: median of the rounds (min-max); ");
        else if (cfg->rounds > 1)
            strbuf_addf(body, "cells: median of %d rounds (min-max); ", cfg->rounds);
        else
            strbuf_addstr(body, "cells: one round; ");
        strbuf_addf(body, "%% improvement vs %s: the change column's own estimate, TPS "
                          "(ratio-1)*100, latency (1-ratio)*100, in parentheses when not "
                          "significant\n", base->name);
        if (cfg->target_ci <= 0)
            strbuf_addstr(body, "change (95% CI): ratio of medians, bootstrap CI, Mann-Whitney U "
                                "at alpha 0.05; \"~\" = no significant difference; Average = "
                                "geometric mean of the ratios, tested on all rounds pooled\n");
        break;
    case REPORT_SEED003:
        if (cfg->target_ci > 0)
            strbuf_addstr(body, "cells: median over the rounds of each run's min, avg, max and "
                                "95th percentile latency (ms) and QPS\n");
        else
            strbuf_addf(body, "cells: median over %d round%s of each run's min, avg, max and "
                              "95th percentile latency (ms) and QPS\n",
                        cfg->rounds, cfg->rounds == 1 ? "" : "s");
        if (cfg->target_ci <= 0)
            strbuf_addf(body, "change vs %s (95%% CI): positive = better (lower latency, higher "
                          "QPS); ratio of medians, bootstrap CI, Mann-Whitney U at alpha 0.05; "
                          "\"~\" = no significant difference\n",
                    base->name);
        break;
    case REPORT_SEED002:
        if (cfg->target_ci <= 0)
            strbuf_addf(body, "speedup (x) = %s's median time per transaction / the variant's = "
                          "median tps of the variant / %s's; 95%% CI bootstrap; p = "
                          "Mann-Whitney U, shown where the CI excludes 1 (there it decides); "
                          "\"~\" = no significant difference at alpha 0.05; "
                          "workload \"all\" = geometric mean over every workload and thread "
                          "count\n",
                    base->name, base->name);
        break;
    }
}

/* --target-ci's outcome, or the warning that too few rounds can never be significant. */
static void header_precision(const struct rep *r, struct strbuf *body)
{
    const struct experiment_config *cfg = r->cfg;
    const struct experiment_result *res = r->res;

    if (cfg->target_ci > 0 && cfg->measure == MEASURE_TIME) {
        int reached, cells = experiment_target_cells(cfg, res, -1, &reached, NULL);
        strbuf_addf(body, "SEQUENTIAL: --target-ci=%g%%: rounds were added until every %s "
                          "cell's 95%% CI half-width was at most %g%% (at most %d rounds",
                    cfg->target_ci, experiment_target_metric_name(cfg), cfg->target_ci,
                    cfg->rounds);
        if (cfg->max_time_s > 0)
            strbuf_addf(body, ", %g s", cfg->max_time_s);
        strbuf_addf(body, "): reached in %d of %d cell%s, stopped by %s\n", reached, cells,
                    cells == 1 ? "" : "s",
                    res->error ? "an error" : experiment_target_stop_reason(cfg, res));
        strbuf_addf(body, "change (95%% CI), every table: geometric mean of the per-round ratios "
                          "(the runs of a round paired); the CI is a confidence sequence "
                          "(Waudby-Smith et al. 2024), valid at every round at once, so stopping "
                          "when it was narrow enough does not inflate false positives; \"~\" = "
                          "it holds 0%%; Average and \"all\" rows: per round the mean log ratio "
                          "over their cells\n");
    }
    if (cfg->target_ci <= 0 && cfg->rounds >= 2 &&
        stats_mw_min_p(cfg->rounds, cfg->rounds) >= 0.05)
        strbuf_addf(body, "WARNING: with %d rounds per variant no difference can ever be "
                          "significant (smallest possible p = %.3f); use --rounds=%d or more\n",
                    cfg->rounds, stats_mw_min_p(cfg->rounds, cfg->rounds),
                    stats_min_rounds(0.05));
}

/* The machine the experiment ran on (res->env_json), and how busy it was at the start. */
static void header_host(const struct rep *r, struct strbuf *body)
{
    const struct experiment_config *cfg = r->cfg;
    const struct experiment_result *res = r->res;

    json_t *env = res->env_json ? json_loads(res->env_json, 0, NULL) : NULL;
    if (env) {
        const char *cpu = json_string_value(json_object_get(env, "cpu_model"));
        const char *kernel = json_string_value(json_object_get(env, "kernel"));
        json_int_t cores = json_integer_value(json_object_get(env, "cores"));
        json_t *load = json_object_get(env, "loadavg_1m");
        strbuf_addf(body, "host: %s, %lld cores, Linux %s", cpu ? cpu : "unknown CPU",
                    (long long)cores, kernel ? kernel : "?");
        if (json_is_number(load)) {
            double l = json_number_value(load);
            strbuf_addf(body, ", load %.2f at start", l);
            /* Other work on half the cores or more moves the numbers more than most builds. */
            if (cores > 0 && l >= cores / 2.0 && cfg->measure != MEASURE_INSTRUCTIONS)
                strbuf_addstr(body, " (busy machine: expect noise)");
        }
        strbuf_addch(body, '\n');
        json_decref(env);
    }
}

/* Which runs the numbers below stand on: an incomplete experiment, distrusted runs left out. */
static void header_runs_used(const struct rep *r, struct strbuf *body)
{
    const struct experiment_config *cfg = r->cfg;
    const struct experiment_result *res = r->res;

    if (experiment_runs_done(res) < experiment_runs_planned(cfg) &&
        (cfg->target_ci <= 0 || res->error))
        strbuf_addf(body, "INCOMPLETE: %d of %d runs finished%s%s\n", experiment_runs_done(res),
                    experiment_runs_planned(cfg), res->error ? ": " : "",
                    res->error ? res->error : "");
    if (res->exclude_distrusted)
        strbuf_addf(body, "--exclude-distrusted: %d distrusted run%s left out of every number "
                          "below (%d of %d runs used)\n",
                    res->excluded, res->excluded == 1 ? "" : "s", res->nruns,
                    experiment_runs_done(res));
}

/* The report header: its first line into title, the others (one per line) into body. */
static void header_lines(struct rep *r, struct strbuf *title, struct strbuf *body)
{
    header_title(r, title);
    header_variants(r, body);
    header_setup(r, body);
    if (r->cfg->measure == MEASURE_INSTRUCTIONS)
        header_instructions(r, body);
    else
        header_cells(r, body);
    header_precision(r, body);
    header_host(r, body);
    header_runs_used(r, body);
}

/* ---------------------------------------------------------------- seed 000 */

/* One metric table of one workload (the seed-000 layout). */
static void seed000_table(struct rep *r, int w, enum experiment_metric m)
{
    const struct experiment_config *cfg = r->cfg;
    const struct experiment_result *res = r->res;
    int nv = cfg->nvariants, nt = cfg->nthreads;
    int ncols = 1 + nv + 2 * (nv - 1);
    struct table t;
    struct cell_stats *cs = xcalloc((size_t)(nv * nt), sizeof(*cs));
    double *avg = xcalloc((size_t)nv, sizeof(double));
    int *ws = xcalloc((size_t)nt, sizeof(int));
    char *title = xasprintf("%s, %s", report_metric_title(m), cfg->workloads[w]);

    rep_table_title(r, title);
    free(title);
    for (int ti = 0; ti < nt; ti++)
        ws[ti] = w;
    int dec = table_decimals(experiment_workload_cells(cfg, res, w, m, cs, avg));

    table_init(&t, ncols, nt + 1);
    t.head[0] = xstrdup("threads");
    for (int v = 0; v < nv; v++)
        t.head[1 + v] = xstrdup(cfg->variants[v].name);
    for (int v = 1; v < nv; v++) {
        t.head[nv + v] = nv == 2 ? xstrdup("% improvement")
                                 : xasprintf("%% improvement %s", cfg->variants[v].name);
        t.head[2 * nv - 1 + v] = nv == 2 ? xstrdup("change (95% CI)")
                                         : xasprintf("change %s (95%% CI)", cfg->variants[v].name);
    }
    for (int row = 0; row <= nt; row++) {
        table_set(&t, row, 0, row < nt ? xasprintf("%d", cfg->threads[row]) : xstrdup("Average"),
                  NULL);
        double base = row < nt ? (cs[row * nv].n ? cs[row * nv].median : NAN) : avg[0];
        for (int v = 0; v < nv; v++) {
            double val = row < nt ? (cs[row * nv + v].n ? cs[row * nv + v].median : NAN) : avg[v];
            /* % improvement: the change's own point estimate (report_improvement_cell()) */
            struct experiment_change ch;
            int tv[1] = { row < nt ? cfg->threads[row] : 0 };
            char *verdict = !v ? NULL
                            : row < nt ? rep_change_cell(cfg, res, m, v, ws, tv, 1,
                                                         report_cell_seed(cfg, w, v, row, m), &ch)
                                       : rep_change_cell(cfg, res, m, v, ws, cfg->threads, nt,
                                                         report_cell_seed(cfg, w, v, row, m), &ch);
            double p = v ? experiment_change_pct(&ch, NULL, NULL) : NAN;
            struct rec *rc = rep_rec_add(r, w, row < nt ? cfg->threads[row] : 0,
                                     experiment_metric_key(m), v, val, base, p);
            if (row < nt)
                rep_rec_values(r, rc, m);
            if (row == nt) {
                table_set(&t, row, 1 + v, isnan(val) ? xstrdup("-") : xasprintf("%.*f", dec, val),
                          NULL);
            } else {
                const struct cell_stats *c = &cs[row * nv + v];
                char *spread = NULL;
                if (c->n && cfg->rounds > 1)
                    spread = c->n > 1 ? xasprintf("(%.*f-%.*f)", dec, c->min, dec, c->max)
                                      : xstrdup("(1 run)");
                table_set(&t, row, 1 + v, c->n ? xasprintf("%.*f", dec, c->median) : xstrdup("-"),
                          spread);
            }
            if (!v)
                continue;
            table_set(&t, row, nv + v, report_improvement_cell(&ch), NULL);
            rep_rec_change(rc, &ch, verdict);
            table_set(&t, row, 2 * nv - 1 + v, verdict, NULL);
        }
    }
    rep_table_emit(r, &t);
    free(cs);
    free(avg);
    free(ws);
}

/* Whether any run of the report has metric m (runs recorded before a metric existed have
 * none: no empty table for it). */
static bool metric_measured(const struct rep *r, enum experiment_metric m)
{
    for (int i = 0; i < r->res->nruns; i++)
        if (isfinite(experiment_metric_value(&r->res->runs[i], m)))
            return true;
    return false;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of field f (a double of struct run_result at that offset) over the runs of
 * variant v at workload w; NAN when no run has it. */
static double run_field_median(const struct experiment_result *res, int v, int w, size_t f)
{
    double *x = xcalloc((size_t)res->nruns + 1, sizeof(double));
    int n = 0;
    for (int i = 0; i < res->nruns; i++) {
        const struct run_result *run = &res->runs[i];
        double val = *(const double *)((const char *)run + f);
        if (run->variant == v && run->workload == w && isfinite(val))
            x[n++] = val;
    }
    qsort(x, (size_t)n, sizeof(double), cmp_double);
    double m = n == 0 ? NAN : n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2;
    free(x);
    return m;
}

/* How many runs at workload w have bit in their below_zero. */
static int below_zero_runs(const struct experiment_result *res, int w, unsigned bit)
{
    int n = 0;
    for (int i = 0; i < res->nruns; i++)
        n += res->runs[i].workload == w && (res->runs[i].below_zero & bit);
    return n;
}

/* After an instruction-mode table: the runs whose `what` noise took below zero, said in words
 * (their value is left out of the table, never printed as a negative count). */
static void below_zero_note(struct rep *r, int w, unsigned bit, const char *what)
{
    int n = below_zero_runs(r->res, w, bit);
    if (!n || (r->fmt != REPORT_TEXT && r->fmt != REPORT_MARKDOWN))
        return;
    strbuf_addf(r->out, "\nBelow zero in %d run%s: %s (the N/5 child counted more than the N "
                "child's share: noise, not a cost); left out above.\n", n, n == 1 ? "" : "s",
                what);
}

/* Instruction mode on managed servers: what the servers' other processes and threads
 * (checkpointer, WAL writer, InnoDB's background threads, the main thread) cost per
 * transaction, beside the serving cost of the tables above and never in it. */
static void server_background_table(struct rep *r, int w)
{
    const struct experiment_config *cfg = r->cfg;
    bool any = false;
    for (int v = 0; v < cfg->nvariants; v++)
        any |= isfinite(run_field_median(r->res, v, w,
                                         offsetof(struct run_result, bg_instr_per_txn)));
    if (!any)
        return;
    char *title = xasprintf("Server background per transaction (its other processes and "
                            "threads, marginal; not in the tables above), %s",
                            cfg->workloads[w]);
    rep_table_title(r, title);
    free(title);
    struct table t;
    table_init(&t, 4, cfg->nvariants);
    t.head[0] = xstrdup("variant");
    t.head[1] = xstrdup("instructions");
    t.head[2] = xstrdup("est. cycles");
    t.head[3] = xstrdup("% of the server's est. cycles");
    for (int v = 0; v < cfg->nvariants; v++) {
        double bi = run_field_median(r->res, v, w, offsetof(struct run_result, bg_instr_per_txn));
        double bc = run_field_median(r->res, v, w,
                                     offsetof(struct run_result, bg_est_cycles_per_txn));
        double sc = run_field_median(r->res, v, w,
                                     offsetof(struct run_result, est_cycles_per_txn));
        /* never negative: a marginal below zero is NAN (callgrind_marginal) */
        assert(!(bi < 0) && !(bc < 0) && !(sc < 0));
        bool bi_noise = !isfinite(bi) && below_zero_runs(r->res, w, RUN_BELOW_ZERO_BG_INSTR);
        bool bc_noise = !isfinite(bc) && below_zero_runs(r->res, w, RUN_BELOW_ZERO_BG_CYCLES);
        table_set(&t, v, 0, xstrdup(cfg->variants[v].name), NULL);
        table_set(&t, v, 1, isfinite(bi) ? xasprintf("%.0f", bi)
                            : xstrdup(bi_noise ? "below zero (noise)" : "-"), NULL);
        table_set(&t, v, 2, isfinite(bc) ? xasprintf("%.0f", bc)
                            : xstrdup(bc_noise ? "below zero (noise)" : "-"), NULL);
        double share = isfinite(bc) && isfinite(sc) && bc + sc > 0 ? 100 * bc / (bc + sc) : NAN;
        assert(isnan(share) || (share >= 0 && share <= 100));
        table_set(&t, v, 3, isfinite(share) ? xasprintf("%.1f", share) : xstrdup("-"), NULL);
    }
    rep_table_emit(r, &t);
    below_zero_note(r, w, RUN_BELOW_ZERO_BG_INSTR | RUN_BELOW_ZERO_BG_CYCLES,
                    "the background's marginal instructions or est. cycles per transaction");
}

static void shape_seed000(struct rep *r)
{
    if (r->cfg->measure == MEASURE_INSTRUCTIONS) {
        for (int w = 0; w < r->cfg->nworkloads; w++) {
            for (int k = 0; k < INSTR_METRICS; k++) {
                enum experiment_metric m = (enum experiment_metric)(METRIC_INSTR + k);
                if (!metric_measured(r, m))
                    continue;
                seed000_table(r, w, m);
                char *what = xasprintf("the marginal %s", experiment_metric_key(m));
                below_zero_note(r, w, 1u << k, what);
                free(what);
            }
            server_background_table(r, w);
        }
        return;
    }
    for (int w = 0; w < r->cfg->nworkloads; w++)
        for (int m = 0; m < METRIC_COUNT; m++)
            seed000_table(r, w, (enum experiment_metric)m);
}

/* ---------------------------------------------------------------- seed 003 */

static void seed003_table(struct rep *r, int w, int ti)
{
    static const struct {
        enum experiment_metric m;
        const char *label;
    } rows[] = {
        { METRIC_LAT_MIN_MS, "min (ms)" },   { METRIC_LAT_AVG_MS, "avg (ms)" },
        { METRIC_LAT_MAX_MS, "max (ms)" },   { METRIC_LAT_P95_MS, "95%ile (ms)" },
        { METRIC_QPS, "QPS" },
    };
    const struct experiment_config *cfg = r->cfg;
    const struct experiment_result *res = r->res;
    int nv = cfg->nvariants, threads = cfg->threads[ti];
    struct table t;
    /* under --target-ci the rounds the cell ran, not the cap */
    int nr = cfg->target_ci > 0 ? experiment_cell(res, 0, w, threads, METRIC_TPS).n : cfg->rounds;
    char *title = xasprintf("%s, %d thread%s: latency (ms) and QPS, median of %d round%s",
                            cfg->workloads[w], threads, threads == 1 ? "" : "s", nr,
                            nr == 1 ? "" : "s");
    rep_table_title(r, title);
    free(title);

    table_init(&t, 1 + nv + (nv - 1), (int)ARRAY_SIZE(rows));
    t.head[0] = xstrdup("");
    for (int v = 0; v < nv; v++)
        t.head[1 + v] = xstrdup(cfg->variants[v].name);
    for (int v = 1; v < nv; v++)
        t.head[nv + v] = nv == 2 ? xstrdup("change (95% CI)")
                                 : xasprintf("change %s (95%% CI)", cfg->variants[v].name);
    for (int i = 0; i < (int)ARRAY_SIZE(rows); i++) {
        enum experiment_metric m = rows[i].m;
        struct cell_stats *cs = xcalloc((size_t)nv, sizeof(*cs));
        double minv = INFINITY;
        for (int v = 0; v < nv; v++) {
            cs[v] = experiment_cell(res, v, w, threads, m);
            if (cs[v].n && cs[v].median < minv)
                minv = cs[v].median;
        }
        int dec = m == METRIC_QPS ? 2 : table_decimals(minv);
        table_set(&t, i, 0, xstrdup(rows[i].label), NULL);
        double base = cs[0].n ? cs[0].median : NAN;
        for (int v = 0; v < nv; v++) {
            double val = cs[v].n ? cs[v].median : NAN;
            struct experiment_change ch;
            int wi[1] = { w }, tv[1] = { threads };
            char *verdict = !v ? NULL : rep_change_cell(cfg, res, m, v, wi, tv, 1,
                                                        report_cell_seed(cfg, w, v, ti, m), &ch);
            struct rec *rc = rep_rec_add(r, w, threads, experiment_metric_key(m), v, val, base,
                                         v ? experiment_change_pct(&ch, NULL, NULL) : NAN);
            rep_rec_values(r, rc, m);
            table_set(&t, i, 1 + v, cs[v].n ? xasprintf("%.*f", dec, val) : xstrdup("-"), NULL);
            if (!v)
                continue;
            rep_rec_change(rc, &ch, verdict);
            table_set(&t, i, nv + v, verdict, NULL);
        }
        free(cs);
    }
    rep_table_emit(r, &t);
}

static void shape_seed003(struct rep *r)
{
    for (int w = 0; w < r->cfg->nworkloads; w++)
        for (int t = 0; t < r->cfg->nthreads; t++)
            seed003_table(r, w, t);
}

/* ---------------------------------------------------------------- seed 002 */

/* Fill one seed-002 row: variant v over the cells (ws[i], ts[i]); w/threads label the row
 * (-1/0 = all). */
static void seed002_row(struct rep *r, struct table *t, int row, int v, int w, int threads,
                        const int *ws, const int *ts, int n, uint64_t seed)
{
    const struct experiment_config *cfg = r->cfg;
    const struct experiment_result *res = r->res;
    struct experiment_change ch;

    table_set(t, row, 0, xstrdup(cfg->variants[v].name), NULL);
    table_set(t, row, 1, xstrdup(w >= 0 ? cfg->workloads[w] : "all"), NULL);
    table_set(t, row, 2, threads ? xasprintf("%d", threads) : xstrdup("all"), NULL);
    if (w >= 0) {
        struct cell_stats c = experiment_cell(res, v, w, threads, METRIC_TPS);
        table_set(t, row, 3, c.n ? xasprintf("%.2f", c.median) : xstrdup("-"), NULL);
    }
    char *verdict = rep_change_cell(cfg, res, METRIC_TPS, v, ws, ts, n, seed, &ch);
    double speedup = !v ? (ch.ncells ? 1.0 : NAN) : ch.ncells ? ch.ratio : NAN;
    struct rec *rc = rep_rec_add(r, w, threads, "speedup", v, speedup, ch.ncells ? 1.0 : NAN,
                             isnan(speedup) ? NAN : (speedup - 1) * 100);
    if (w >= 0)
        rep_rec_values(r, rc, METRIC_TPS);
    table_set(t, row, 4, isnan(speedup) ? xstrdup("-") : xasprintf("%.3f", speedup), NULL);
    if (!v) {
        table_set(t, row, 7, xstrdup("baseline"), NULL);
    } else if (ch.ncells) {
        if (ch.stats) {
            table_set(t, row, 5, xasprintf("%.3f .. %.3f", ch.ci_lo, ch.ci_hi), NULL);
            /* the p only where its test decides the verdict (report_p_decides()) */
            table_set(t, row, 6, !report_p_decides(&ch) ? xstrdup("-")
                                 : ch.p_value < 0.001 ? xstrdup("<0.001")
                                                      : xasprintf("%.3f", ch.p_value), NULL);
            table_set(t, row, 7, xstrdup(!ch.significant ? "~"
                                         : ch.ratio > 1  ? "faster"
                                                         : "slower"),
                      NULL);
        } else {
            table_set(t, row, 5, xstrdup("no statistics with 1 round"), NULL);
        }
        rep_rec_change(rc, &ch, verdict);
    }
    free(verdict);
}

static void shape_seed002(struct rep *r)
{
    const struct experiment_config *cfg = r->cfg;
    int nv = cfg->nvariants, ncells = cfg->nworkloads * cfg->nthreads;
    int all = ncells > 1, rows = nv * (ncells + all), row = 0;
    int *ws = xcalloc((size_t)ncells, sizeof(int)), *ts = xcalloc((size_t)ncells, sizeof(int));
    struct table t;
    char *title = xasprintf(cfg->target_ci > 0 ? "Speedup (x) vs %s (geometric mean of the "
                                                 "per-round "
                                                   "tps ratios)"
                                                 : "Speedup (x) vs %s (ratio of median tps)",
                            cfg->variants[0].name);

    for (int w = 0, i = 0; w < cfg->nworkloads; w++)
        for (int k = 0; k < cfg->nthreads; k++, i++) {
            ws[i] = w;
            ts[i] = cfg->threads[k];
        }
    rep_table_title(r, title);
    free(title);
    table_init(&t, 8, rows);
    static const char *const head[] = { "variant", "workload", "threads", "tps",
                                        "speedup (x)", "95% CI", "p", "verdict" };
    for (int c = 0; c < 8; c++)
        t.head[c] = xstrdup(head[c]);
    for (int v = 0; v < nv; v++) {
        if (all)
            seed002_row(r, &t, row++, v, -1, 0, ws, ts, ncells,
                        report_all_cells_seed(cfg, v, METRIC_TPS));
        for (int i = 0; i < ncells; i++)
            seed002_row(r, &t, row++, v, ws[i], ts[i], &ws[i], &ts[i], 1,
                        report_cell_seed(cfg, ws[i], v, i % cfg->nthreads, METRIC_TPS));
    }
    rep_table_emit(r, &t);
    free(ws);
    free(ts);
}

/* ---------------------------------------------------------------- CSV and JSON */

static const char *shape_name(enum report_shape s)
{
    return s == REPORT_SEED003 ? "seed003" : s == REPORT_SEED002 ? "seed002" : "seed000";
}

static void rec_change_numbers(const struct rec *c, double *pct, double *lo, double *hi)
{
    *pct = *lo = *hi = NAN;
    if (c->has_change && c->ch.ncells)
        *pct = experiment_change_pct(&c->ch, lo, hi);
    if (c->has_change && !c->ch.stats)
        *lo = *hi = NAN;
}

static void output_csv(struct rep *r)
{
    struct strbuf *sb = r->out;
    strbuf_addstr(sb, "experiment,shape,table,workload,threads,metric,variant,baseline,value,"
                      "baseline_value,improvement_pct,n,median,mean,stddev,min,max,ratio,"
                      "ratio_ci_lo,ratio_ci_hi,change_pct,change_ci_lo_pct,change_ci_hi_pct,"
                      "p_value,significant,verdict\n");
    for (int i = 0; i < r->nrecs; i++) {
        const struct rec *c = &r->recs[i];
        double pct, lo, hi;
        if (r->cfg->experiment_id > 0)
            strbuf_addf(sb, "%lld", (long long)r->cfg->experiment_id);
        strbuf_addf(sb, ",%s,%d,", shape_name(r->shape), c->table);
        report_csv_field(sb, c->w >= 0 ? r->cfg->workloads[c->w] : "all");
        if (c->threads)
            strbuf_addf(sb, ",%d,", c->threads);
        else
            strbuf_addstr(sb, ",all,");
        strbuf_addf(sb, "%s,", c->metric);
        report_csv_field(sb, r->cfg->variants[c->v].name);
        strbuf_addf(sb, ",%d", c->v == 0);
        report_csv_num(sb, c->value);
        report_csv_num(sb, c->base_value);
        report_csv_num(sb, c->improvement_pct);
        if (c->n) {
            strbuf_addf(sb, ",%d", c->n);
            report_csv_num(sb, c->sum.median);
            report_csv_num(sb, c->sum.mean);
            report_csv_num(sb, c->sum.stddev);
            report_csv_num(sb, c->sum.min);
            report_csv_num(sb, c->sum.max);
        } else {
            strbuf_addstr(sb, ",,,,,,");
        }
        rec_change_numbers(c, &pct, &lo, &hi);
        bool st = c->has_change && c->ch.ncells;
        report_csv_num(sb, st ? c->ch.ratio : NAN);
        report_csv_num(sb, st && c->ch.stats ? c->ch.ci_lo : NAN);
        report_csv_num(sb, st && c->ch.stats ? c->ch.ci_hi : NAN);
        report_csv_num(sb, pct);
        report_csv_num(sb, lo);
        report_csv_num(sb, hi);
        /* the p only where its test decides the verdict, as in the tables */
        report_csv_num(sb, st && report_p_decides(&c->ch) ? c->ch.p_value : NAN);
        strbuf_addch(sb, ',');
        if (st && c->ch.stats)
            strbuf_addstr(sb, c->ch.significant ? "1" : "0");
        strbuf_addch(sb, ',');
        report_csv_field(sb, c->verdict);
        strbuf_addch(sb, '\n');
    }
}

static void output_json(struct rep *r)
{
    json_t *root = json_object(), *cells = json_array();
    json_object_set_new(root, "pgolab_version", json_string(PGOLAB_VERSION));
    json_object_set_new(root, "report", json_string("experiment"));
    json_object_set_new(root, "shape", json_string(shape_name(r->shape)));
    json_object_set_new(root, "experiment", report_experiment_json(r->cfg, r->res));
    for (int i = 0; i < r->nrecs; i++) {
        const struct rec *c = &r->recs[i];
        json_t *o = json_object();
        json_object_set_new(o, "table", json_integer(c->table));
        json_object_set_new(o, "workload", jstr(c->w >= 0 ? r->cfg->workloads[c->w] : NULL));
        json_object_set_new(o, "threads", c->threads ? json_integer(c->threads) : json_null());
        json_object_set_new(o, "metric", json_string(c->metric));
        json_object_set_new(o, "variant", jstr(r->cfg->variants[c->v].name));
        json_object_set_new(o, "baseline", json_boolean(c->v == 0));
        json_object_set_new(o, "value", jreal(c->value));
        json_object_set_new(o, "baseline_value", jreal(c->base_value));
        json_object_set_new(o, "improvement_pct", jreal(c->improvement_pct));
        if (c->values) {
            json_t *s = json_object();
            json_object_set_new(s, "n", json_integer(c->n));
            json_object_set_new(s, "median", c->n ? jreal(c->sum.median) : json_null());
            json_object_set_new(s, "mean", c->n ? jreal(c->sum.mean) : json_null());
            json_object_set_new(s, "stddev", c->n ? jreal(c->sum.stddev) : json_null());
            json_object_set_new(s, "min", c->n ? jreal(c->sum.min) : json_null());
            json_object_set_new(s, "max", c->n ? jreal(c->sum.max) : json_null());
            json_object_set_new(s, "values", report_values_json(c->values, c->n));
            json_object_set_new(o, "rounds", s);
        }
        json_object_set_new(o, "vs_baseline",
                            c->has_change ? report_change_json(&c->ch, c->verdict) : json_null());
        json_array_append_new(cells, o);
    }
    json_object_set_new(root, "cells", cells);
    if (r->extra)
        json_object_update(root, r->extra);
    char *text = json_dumps(root, JSON_INDENT(2));
    if (!text)
        die("out of memory");
    strbuf_addstr(r->out, text);
    strbuf_addch(r->out, '\n');
    free(text);
    json_decref(root);
}

/* ---------------------------------------------------------------- experiment report */

void report_experiment(struct strbuf *out, const struct experiment_config *cfg,
                       const struct experiment_result *res, enum report_shape shape,
                       enum report_format fmt)
{
    report_experiment_trainers(out, cfg, res, shape, fmt, NULL);
}

void report_experiment_trainers(struct strbuf *out, const struct experiment_config *cfg,
                                const struct experiment_result *res, enum report_shape shape,
                                enum report_format fmt, const char *const *trainer_of)
{
    report_experiment_opts(out, cfg, res, shape, fmt, trainer_of, NULL);
}

void report_experiment_opts(struct strbuf *out, const struct experiment_config *cfg,
                            const struct experiment_result *res, enum report_shape shape,
                            enum report_format fmt, const char *const *trainer_of,
                            const struct report_options *opt)
{
    static const struct report_options defaults;
    if (!opt)
        opt = &defaults;
    struct rep r = { cfg, res, shape, fmt, out, 0, NULL, 0, NULL, opt->trust_table };
    if (fmt == REPORT_TEXT || fmt == REPORT_MARKDOWN) {
        struct strbuf title = STRBUF_INIT, body = STRBUF_INIT;
        header_lines(&r, &title, &body);
        report_print_header(out, fmt, title.buf, body.buf);
        strbuf_release(&title);
        strbuf_release(&body);
    }
    if (shape == REPORT_RUNS) {  /* the runs themselves, no cells or statistics */
        report_runs(out, cfg, res, fmt);
        return;
    }
    switch (shape) {
    case REPORT_RUNS:
    case REPORT_SEED000: shape_seed000(&r); break;
    /* instruction counts have no latency or tps: every shape is the instruction table */
    case REPORT_SEED003:
        cfg->measure == MEASURE_INSTRUCTIONS ? shape_seed000(&r) : shape_seed003(&r);
        break;
    case REPORT_SEED002:
        cfg->measure == MEASURE_INSTRUCTIONS ? shape_seed000(&r) : shape_seed002(&r);
        break;
    }
    if (cfg->measure == MEASURE_TIME) {
        report_server_cpu(&r);
        report_ceiling(&r);
        report_precision(&r);
        report_metrics(&r);
    }
    if (trainer_of)
        report_trainers_rep(&r, trainer_of);
    if (!opt->no_verdict || fmt == REPORT_JSON)
        report_verdict_rep(&r);  /* last: the bottom line */
    if (fmt == REPORT_CSV)
        output_csv(&r);
    else if (fmt == REPORT_JSON)
        output_json(&r);
    json_decref(r.extra);
    rep_recs_release(&r);
}

void experiment_report_text(FILE *out, const struct experiment_config *cfg,
                            const struct experiment_result *res)
{
    experiment_report_text_opts(out, cfg, res, NULL);
}

void experiment_report_text_opts(FILE *out, const struct experiment_config *cfg,
                                 const struct experiment_result *res,
                                 const struct report_options *opt)
{
    struct strbuf sb = STRBUF_INIT;
    report_experiment_opts(&sb, cfg, res, REPORT_SEED000, REPORT_TEXT, NULL, opt);
    fputs(sb.buf, out);
    fflush(out);
    strbuf_release(&sb);
}
