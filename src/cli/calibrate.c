/* calibrate: `pgolab calibrate`, an A/A experiment (one library run as variants A and A') that
 * measures this machine's noise floor and what a given number of rounds can detect. */
#include "cli/cli.h"
#include "cli/common.h"
#include "experiment/experiment.h"
#include "oltp/oltp.h"
#include "stats/compare.h"
#include "store/store.h"
#include "util/fmt.h"
#include "util/fs.h"
#include "util/options.h"
#include "util/signals.h"
#include "util/strbuf.h"
#include "util/util.h"

#include <dlfcn.h>
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SYSTEM_LIBRARY "libsqlite3.so.0"
#define CAL_ALPHA STATS_ALPHA_DEFAULT
#define CAL_POWER STATS_POWER_DEFAULT
#define RECOMMEND_TARGET_DEFAULT 2.0  /* % (issue 16's goal: +/-2% in minutes) */

static const struct opt_def calibrate_options[] = {
    { "variant", OPT_STRING, NULL,
      "the build to measure: sqlite:/path/to/libsqlite3.so (NAME=sqlite:PATH is accepted too)" },
    { "sqlite-library", OPT_STRING, NULL,
      "the same as a plain path (default: the system's " SYSTEM_LIBRARY ", as the dynamic loader finds it)" },
    { "bench", OPT_LIST, "oltp_read_only", "workloads to run" },
    { "threads", OPT_LIST, "1", "thread counts to run each workload with" },
    { "rounds", OPT_INT, "5", "rounds per variant (the rounds you plan to use with `pgolab compare`); at least 2" },
    CLI_TARGET_CI_OPTIONS,
    CLI_PRECISION_OPTIONS,
    { "time", OPT_INT, "10", "seconds per run" },
    { "tables", OPT_INT, "1", "number of tables" },
    { "table-size", OPT_INT, "10000", "rows per table" },
    { "rand-seed", OPT_INT, NULL, "seed of the run-order shuffle, also passed to every bench child (default: from the clock)" },
    { "workdir", OPT_STRING, NULL, "directory for databases and logs (default a new private /dev/shm/pgolab.XXXXXX, else ./.pgolab/run.XXXXXX; removed at the end)" },
    { "output", OPT_STRING, NULL, "also write every run and the calibration to this JSON file" },
    { "results", OPT_STRING, STORE_DEFAULT_PATH, "results database: the A/A experiment and every run are recorded here as they finish (kind calibrate; `pgolab report` shows it as a comparison)" },
    OPT_END,
};

static const char *const metric_label[METRIC_COUNT] = { "tps", "avg lat (ms)", "p95 lat (ms)" };

static void calibrate_usage(void)
{
    printf("Usage: pgolab calibrate [--sqlite-library=LIB] [options]\n"
           "\n"
           "How noisy is this machine? An A/A experiment: the same library runs as two variants,\n"
           "A and A', exactly like a `pgolab compare` of two builds (every run a separate\n"
           "`pgolab bench` process on a fresh copy of the same data, the order shuffled per\n"
           "round). For every workload, thread count and metric (tps, average and 95th\n"
           "percentile latency) it prints:\n"
           "  CV             the coefficient of variation of a single run (pooled within-group\n"
           "                 standard deviation over the mean): the noise floor\n"
           "  A/A            the A vs A' verdict, which should be \"~\" (no significant change)\n"
           "  detectable     the smallest change --rounds rounds per variant detect (Mann-Whitney,\n"
           "                 alpha 0.05, power 0.8):\n"
           "                   delta = (z_0.975 + z_0.8) * CV * sqrt(2/n) / sqrt(3/pi)\n"
           "  rounds for 5%% / 2%%  the rounds per variant a 5%% / 2%% change needs\n"
           "A CV from few rounds is itself rough (relative standard error about\n"
           "1/sqrt(2(N-2)) for N runs): plan with margin.\n"
           "Then the machine state (load, steal, other work, the client's CPU share: `pgolab\n"
           "compare` warns when its runs are busier) and a recommendation for --target-ci\n"
           "(its value, else 2%%): the runs cut to their first L seconds give, per run length,\n"
           "the sd of the per-round log ratio, the rounds the confidence sequence needs and\n"
           "the wall time; the cheapest is recommended, and `pgolab compare --target-ci=PCT\n"
           "--from-calibration` starts from it.\n"
           "\n"
           "Options:\n");
    opts_print_help(calibrate_options);
    printf("\nExample:\n"
           "  pgolab calibrate --bench=oltp_read_only,oltp_point_select --rounds=5 --time=10\n"
           "\nExit status: 0 done, 1 bad input or a failed run, 2 interrupted.\n");
}

/* ---------------------------------------------------------------- setup */

static volatile sig_atomic_t got_signal;

static void on_signal(int sig)
{
    got_signal = sig;
}

/* The system SQLite as a user would name it: the file the dynamic loader picks for
 * libsqlite3.so.0 (dladdr of one of its symbols). Caller frees; NULL after a message. */
static char *system_library(void)
{
    void *h = dlopen(SYSTEM_LIBRARY, RTLD_LAZY | RTLD_LOCAL);
    if (!h) {
        const char *why = dlerror();
        error("no --sqlite-library given and the system SQLite cannot be loaded (%s); install "
              "libsqlite3-0 or give --sqlite-library=PATH", why ? why : SYSTEM_LIBRARY);
        return NULL;
    }
    char *path = NULL;
    Dl_info di;
    void *sym = dlsym(h, "sqlite3_libversion");
    if (sym && dladdr(sym, &di) && di.dli_fname && di.dli_fname[0] == '/')
        path = xstrdup(di.dli_fname);
    dlclose(h);
    if (!path)
        error("no --sqlite-library given and the file behind the system's %s cannot be "
              "found; give --sqlite-library=PATH", SYSTEM_LIBRARY);
    return path;
}

/* The library to calibrate, from --variant, --sqlite-library or the system. *name gets the
 * variant name given with NAME=sqlite:PATH, else NULL. Both heap strings; -1 after a message. */
static int choose_library(const struct opts *o, char **name, char **library)
{
    const char *spec = opt_str(o, "variant"), *plain = opt_str(o, "sqlite-library");
    *name = *library = NULL;
    if (spec && plain)
        return error("give either --variant or --sqlite-library, not both");
    if (spec) {
        const char *colon = strchr(spec, ':'), *eq = strchr(spec, '=');
        const char *kind = spec;
        if (eq && (!colon || eq < colon)) {
            if (eq == spec)
                return error("--variant=%s: empty name before '='", spec);
            *name = xstrndup(spec, (size_t)(eq - spec));
            kind = eq + 1;
        }
        colon = strchr(kind, ':');
        size_t klen = colon ? (size_t)(colon - kind) : 0;
        if (!colon) {
            error("--variant=%s: expected sqlite:/path/to/libsqlite3.so", spec);
        } else if (klen == 6 && !strncmp(kind, "sqlite", 6)) {
            *library = xstrdup(colon + 1);
        } else {
            char *k = xstrndup(kind, klen);
            error("--variant=%s: %s is not supported by calibrate (expected "
                  "sqlite:/path/to/libsqlite3.so)", spec, k);
            free(k);
        }
        if (!*library) {
            free(*name);
            *name = NULL;
            return -1;
        }
    } else if (plain) {
        *library = xstrdup(plain);
    } else if (!(*library = system_library())) {
        return -1;
    }
    struct stat st;
    int rc = 0;
    if (!**library)
        rc = error("the library path is empty (expected sqlite:/path/to/libsqlite3.so)");
    else if (stat(*library, &st) < 0)
        rc = error("library %s: %s", *library, strerror(errno));
    else if (!S_ISREG(st.st_mode))
        rc = error("library %s is not a regular file", *library);
    if (rc < 0) {
        free(*name);
        free(*library);
        *name = *library = NULL;
    }
    return rc;
}

/* ---------------------------------------------------------------- calibration */

/* One row of the report: a metric at one workload and thread count. */
struct cal_cell {
    int w, threads;
    enum experiment_metric m;
    int n1, n2;                 /* runs of A and of A' */
    bool ok;                    /* c is filled (n1, n2 >= 2) */
    struct stats_calibration c;
};

static struct cal_cell *calibrate_cells(const struct experiment_config *cfg,
                                        const struct experiment_result *res, int *ncells)
{
    int n = cfg->nworkloads * cfg->nthreads * METRIC_COUNT, k = 0;
    struct cal_cell *cells = xcalloc((size_t)n, sizeof(*cells));
    for (int w = 0; w < cfg->nworkloads; w++)
        for (int t = 0; t < cfg->nthreads; t++)
            for (int m = 0; m < METRIC_COUNT; m++, k++) {
                struct cal_cell *c = &cells[k];
                struct stats_opts so = STATS_OPTS_DEFAULT;
                c->w = w;
                c->threads = cfg->threads[t];
                c->m = (enum experiment_metric)m;
                double *a = experiment_cell_values(res, 0, w, c->threads, c->m, &c->n1);
                double *b = experiment_cell_values(res, 1, w, c->threads, c->m, &c->n2);
                /* a distinct, reproducible bootstrap seed per cell */
                so.seed = cfg->seed ^ (0x9E3779B97F4A7C15ull * (uint64_t)(k + 1));
                c->ok = c->n1 >= 2 && c->n2 >= 2 &&
                        stats_calibrate(a, c->n1, b, c->n2, CAL_POWER, &so, &c->c) == 0;
                free(a);
                free(b);
            }
    *ncells = n;
    return cells;
}

/* ---------------------------------------------------------------- text report */

/* Number with about four significant digits (225608, 12.35, 0.004412). */
static char *fmt_value(double x)
{
    int d = 2;
    if (x > 0 && isfinite(x)) {
        d = 3 - (int)floor(log10(x));
        d = d < 0 ? 0 : d > 6 ? 6 : d;
    }
    return xasprintf("%.*f", d, x);
}

static char *fmt_rounds(int n)
{
    return n < 0 ? xstrdup("> 1000000") : xasprintf("%d", n);
}

static char *fmt_aa(const struct stats_verdict *v, bool lower_is_better)
{
    struct strbuf sb = STRBUF_INIT;
    stats_format_change(&sb, v, lower_is_better);
    strbuf_addf(&sb, " (p=%.2f)", v->p_value);
    return strbuf_detach(&sb);
}

#define NCOLS 9

/* A pipe table (reads in a terminal and as Markdown): text columns left-aligned, numbers
 * right-aligned. cells holds nrows * NCOLS strings, NULL = empty. */
static void render_table(struct strbuf *sb, char *const *head, char *const *cells, int nrows)
{
    static const bool left[NCOLS] = { true, false, true, false, false, true, false, false, false };
    size_t w[NCOLS];
    for (int c = 0; c < NCOLS; c++) {
        w[c] = strlen(head[c]);
        for (int r = 0; r < nrows; r++) {
            const char *s = cells[r * NCOLS + c];
            size_t l = s ? strlen(s) : 0;
            w[c] = l > w[c] ? l : w[c];
        }
    }
    for (int r = -1; r < nrows; r++) {
        for (int c = 0; c < NCOLS; c++) {
            const char *s = r < 0 ? head[c] : cells[r * NCOLS + c];
            size_t l = s ? strlen(s) : 0;
            strbuf_addstr(sb, c ? " | " : "| ");
            if (!left[c])
                for (size_t i = l; i < w[c]; i++)
                    strbuf_addch(sb, ' ');
            strbuf_addstr(sb, s ? s : "");
            if (left[c])
                for (size_t i = l; i < w[c]; i++)
                    strbuf_addch(sb, ' ');
        }
        strbuf_addstr(sb, " |\n");
        if (r < 0) {
            for (int c = 0; c < NCOLS; c++) {
                strbuf_addstr(sb, left[c] ? "|:" : "|-");
                for (size_t i = 0; i < w[c]; i++)
                    strbuf_addch(sb, '-');
                strbuf_addstr(sb, left[c] ? "-" : ":");
            }
            strbuf_addstr(sb, "|\n");
        }
    }
}

/* The target the recommendation is for: --target-ci, else the 2% of issue 16's goal. */
static double recommend_target(const struct experiment_config *cfg)
{
    return cfg->target_ci > 0 ? cfg->target_ci : RECOMMEND_TARGET_DEFAULT;
}

/* The machine state this calibration records (its runs' metrics, in the results database:
 * compare compares its own runs with it) and the recommendation for the target. */
static void machine_text(struct strbuf *sb, const struct experiment_config *cfg,
                         const struct experiment_result *res)
{
    struct machine_state m;
    struct machine_recommendation rec;
    double target = recommend_target(cfg);
    char *time_arg = fmt_num(cfg->time_s);
    machine_state_of(cfg, res, &m);
    strbuf_addf(sb, "\nMachine state during calibration (kept with its runs; `pgolab compare` "
                    "warns when its runs are busier): load1 %.2f, steal %.1f%%, other work "
                    "%.1f%% of the CPU, CV of tps %.1f%%, the client got %.0f%% of a CPU (%d runs with "
                    "metrics)\n",
                m.load1, m.steal_pct, m.other_pct, m.cv_tps_pct, m.client_share * 100, m.nruns);
    machine_recommend(cfg, res, target, &rec);
    strbuf_addf(sb, "\nRecommendation for a 95%% CI of +/-%g%% on the tps ratio (--target-ci=%g), "
                    "from these runs cut to their first L seconds (per-second intervals; the "
                    "worst cell), %.1f s per run besides --time:\n",
                target, target, rec.overhead_s);
    for (int i = 0; i < rec.ncand; i++) {
        strbuf_addf(sb, "  --time=%-4g sd of the per-round log ratio %.2f%%: ", rec.cand[i].run_s,
                    rec.cand[i].sd_log * 100);
        if (rec.cand[i].rounds == INT32_MAX)
            strbuf_addf(sb, "not within %d rounds\n", MACHINE_ROUNDS_MAX);
        else
            strbuf_addf(sb, "about %d rounds, %.1f min\n", rec.cand[i].rounds,
                        rec.cand[i].wall_s / 60);
    }
    if (rec.ok)
        strbuf_addf(sb, "Recommended: --time=%g --max-rounds=%d (about %d rounds, %.1f min for "
                        "these workloads and thread counts), CPU placement %s; `pgolab compare "
                        "--target-ci=%g --from-calibration` starts from it.\n",
                    rec.run_s, rec.max_rounds, rec.rounds, rec.wall_s / 60, rec.placement_desc,
                    target);
    else
        strbuf_addf(sb, "No recommendation: %s.\n", rec.why);
    if (rec.ok && rec.run_s >= cfg->time_s)
        strbuf_addf(sb, "(the longest run length measured, --time=%s, was best: a calibration "
                        "with a longer --time may find a better one)\n", time_arg);
    free(time_arg);
}

static void print_report(FILE *out, const struct experiment_config *cfg,
                         const struct experiment_result *res, const struct cal_cell *cells,
                         int ncells)
{
    struct strbuf sb = STRBUF_INIT;
    const struct variant *v = &cfg->variants[0];
    int min_rounds = stats_min_rounds(CAL_ALPHA);
    char *head[NCOLS];
    char **tab = xcalloc((size_t)ncells * NCOLS, sizeof(char *));

    strbuf_addf(&sb, "Noise calibration (A/A): %s", v->library);
    if (v->version)
        strbuf_addf(&sb, " (SQLite %s)", v->version);
    strbuf_addf(&sb, " measured as two variants, A and A'\n");
    strbuf_addf(&sb, "%s%d rounds per variant, %g s per run, %d table%s x %d rows, %d runs; "
                     "alpha %g, power %g\n",
                cfg->target_ci > 0 ? "up to " : "", cfg->rounds, cfg->time_s, cfg->tables, cfg->tables == 1 ? "" : "s",
                cfg->table_size, res->nruns, CAL_ALPHA, CAL_POWER);
    int planned = cfg->nworkloads * cfg->nthreads * cfg->rounds * cfg->nvariants;
    if (cfg->target_ci > 0) {
        /* --target-ci: the rounds went on until the A/A pair's sequential CI was narrow enough */
        strbuf_addf(&sb, "--target-ci=%g%%: rounds until the A/A pair's sequential 95%% CI "
                         "(a confidence sequence of the per-round log ratios) was at most "
                         "+/-%g%% (at most %d rounds); stopped by %s:\n",
                    cfg->target_ci, cfg->target_ci, cfg->rounds,
                    res->error ? "an error" : experiment_target_stop_reason(cfg, res));
        for (int w = 0; w < cfg->nworkloads; w++)
            for (int t = 0; t < cfg->nthreads; t++) {
                struct experiment_precision p;
                experiment_precision_cell(cfg, res, METRIC_TPS, 1, w, cfg->threads[t], &p);
                strbuf_addf(&sb, "  %s, %d thread%s: %d rounds, ", cfg->workloads[w],
                            cfg->threads[t], cfg->threads[t] == 1 ? "" : "s", p.rounds);
                if (p.stats)
                    strbuf_addf(&sb, "A'/A %.4f, CI +/-%.1f%%: target %s\n", p.ratio,
                                p.half_pct, p.reached ? "reached" : "NOT reached");
                else
                    strbuf_addstr(&sb, "no CI yet: target NOT reached\n");
            }
    } else if (res->nruns < planned)
        strbuf_addf(&sb, "Stopped after %d of %d runs: the figures below are from the rounds "
                         "that finished.\n", res->nruns, planned);
    strbuf_addch(&sb, '\n');

    /* Rounds per variant behind each row: min(n1, n2); all equal unless it stopped early. */
    int rmin = INT_MAX, rmax = 0;
    for (int i = 0; i < ncells; i++) {
        int n = cells[i].n1 < cells[i].n2 ? cells[i].n1 : cells[i].n2;
        if (!cells[i].ok)
            continue;
        rmin = n < rmin ? n : rmin;
        rmax = n > rmax ? n : rmax;
    }
    bool uniform = rmax == 0 || rmin == rmax;
    int rounds_used = rmax ? rmax : cfg->rounds;

    head[0] = xstrdup("workload");
    head[1] = xstrdup("threads");
    head[2] = xstrdup("metric");
    head[3] = xstrdup("mean");
    head[4] = xstrdup("CV");
    head[5] = xstrdup("A/A");
    head[6] = uniform ? xasprintf("detectable (%d rounds)", rounds_used) : xstrdup("detectable");
    head[7] = xstrdup("rounds for 5%");
    head[8] = xstrdup("rounds for 2%");
    int nsig = 0, nok = 0, nmin_runs = INT_MAX;
    for (int i = 0; i < ncells; i++) {
        const struct cal_cell *c = &cells[i];
        char **row = &tab[i * NCOLS];
        row[0] = xstrdup(cfg->workloads[c->w]);
        row[1] = xasprintf("%d", c->threads);
        row[2] = xstrdup(metric_label[c->m]);
        if (!c->ok) {
            row[3] = xstrdup("-");
            row[4] = xstrdup("-");
            row[5] = xasprintf("not enough runs (%d + %d)", c->n1, c->n2);
            for (int k = 6; k < NCOLS; k++)
                row[k] = xstrdup("-");
            continue;
        }
        nok++;
        nsig += c->c.aa.significant;
        if (c->n1 + c->n2 < nmin_runs)
            nmin_runs = c->n1 + c->n2;
        row[3] = fmt_value(c->c.mean);
        row[4] = xasprintf("%.2f%%", c->c.cv * 100);
        row[5] = fmt_aa(&c->c.aa, c->m != METRIC_TPS);
        int n = c->n1 < c->n2 ? c->n1 : c->n2;
        if (isinf(c->c.detectable))
            row[6] = xasprintf("never (< %d rounds)", min_rounds);
        else if (uniform)
            row[6] = xasprintf("%.2f%%", c->c.detectable * 100);
        else
            row[6] = xasprintf("%.2f%% (%d rounds)", c->c.detectable * 100, n);
        row[7] = fmt_rounds(c->c.rounds_5pct);
        row[8] = fmt_rounds(c->c.rounds_2pct);
    }
    render_table(&sb, head, tab, ncells);
    strbuf_addch(&sb, '\n');

    if (rounds_used < min_rounds)
        strbuf_addf(&sb, "With %d rounds per variant the Mann-Whitney test can never reach "
                         "significance at alpha %g (its smallest p is %.3f; it needs at least %d "
                         "rounds): every comparison with so few rounds says ~.\n",
                    rounds_used, CAL_ALPHA, stats_mw_min_p(rounds_used, rounds_used), min_rounds);
    if (nok) {
        if (rounds_used < min_rounds)
            ; /* said above: every row is "~" whatever the data */
        else if (nsig == 0)
            strbuf_addf(&sb, "A/A: no significant difference in any of the %d rows (~), as it "
                             "should be.\n", nok);
        else
            strbuf_addf(&sb, "A/A: %d of %d rows differ significantly although both sides are "
                             "the same library; chance alone makes about 1 row in %.0f do so, "
                             "more than that points to drift during the experiment (other load, "
                             "throttling) or to state carried between runs.\n",
                        nsig, nok, 1 / CAL_ALPHA);
        if (nmin_runs > 2)
            strbuf_addf(&sb, "A CV from %d runs is itself rough: its relative standard error is "
                             "about %.0f%% (1/sqrt(2(N-2)), N = %d), so plan with margin.\n",
                        nmin_runs, 100 / sqrt(2.0 * (nmin_runs - 2)), nmin_runs);
    }
    /* The closing lines, in plain words, on tps (the headline number). */
    for (int i = 0; i < ncells; i++) {
        const struct cal_cell *c = &cells[i];
        int n = c->n1 < c->n2 ? c->n1 : c->n2;
        if (!c->ok || c->m != METRIC_TPS)
            continue;
        strbuf_addf(&sb, "\nOn this machine a single %g s run of %s with %d thread%s varies by "
                         "%.1f%% in tps (CV); ",
                    cfg->time_s, cfg->workloads[c->w], c->threads, c->threads == 1 ? "" : "s",
                    c->c.cv * 100);
        if (isinf(c->c.detectable))
            strbuf_addf(&sb, "with %d rounds per variant pgolab can detect no change at all "
                             "(it needs at least %d rounds)",
                        n, min_rounds);
        else
            strbuf_addf(&sb, "with %d rounds per variant pgolab can detect changes of about "
                             "%.1f%% or more",
                        n, c->c.detectable * 100);
        if (c->c.rounds_5pct < 0)
            strbuf_addstr(&sb, "; a 5% or a 2% change would need more than a million rounds.");
        else if (c->c.rounds_2pct < 0)
            strbuf_addf(&sb, "; a 5%% change needs %d rounds, a 2%% change more than a million.",
                        c->c.rounds_5pct);
        else
            strbuf_addf(&sb, "; a 5%% change needs %d rounds and a 2%% change %d rounds.",
                        c->c.rounds_5pct, c->c.rounds_2pct);
    }
    strbuf_addch(&sb, '\n');
    machine_text(&sb, cfg, res);
    fputs(sb.buf, out);
    fflush(out);

    for (int c = 0; c < NCOLS; c++)
        free(head[c]);
    for (int i = 0; i < ncells * NCOLS; i++)
        free(tab[i]);
    free(tab);
    strbuf_release(&sb);
}

/* ---------------------------------------------------------------- JSON */

static json_t *num_or_null(double x)
{
    return isfinite(x) ? json_real(x) : json_null();
}

static json_t *calibration_json(const struct experiment_config *cfg,
                                const struct experiment_result *res, const struct cal_cell *cells,
                                int ncells)
{
    json_t *cal = json_object(), *arr = json_array();
    json_object_set_new(cal, "alpha", json_real(CAL_ALPHA));
    json_object_set_new(cal, "power", json_real(CAL_POWER));
    json_object_set_new(cal, "rounds", json_integer(cfg->rounds));
    json_object_set_new(cal, "min_rounds", json_integer(stats_min_rounds(CAL_ALPHA)));
    json_object_set_new(cal, "formula",
                        json_string("detectable = (z_{1-alpha/2} + z_power) * cv * sqrt(2/n) / "
                                    "sqrt(3/pi); cv = pooled within-group stddev / grand mean"));
    for (int i = 0; i < ncells; i++) {
        const struct cal_cell *c = &cells[i];
        json_t *o = json_object();
        json_object_set_new(o, "workload", json_string(cfg->workloads[c->w]));
        json_object_set_new(o, "threads", json_integer(c->threads));
        json_object_set_new(o, "metric", json_string(experiment_metric_key(c->m)));
        json_object_set_new(o, "n1", json_integer(c->n1));
        json_object_set_new(o, "n2", json_integer(c->n2));
        if (c->ok) {
            struct strbuf sb = STRBUF_INIT;
            stats_format_change(&sb, &c->c.aa, c->m != METRIC_TPS);
            json_t *aa = json_object();
            json_object_set_new(aa, "verdict", json_string(sb.buf));
            json_object_set_new(aa, "ratio", num_or_null(c->c.aa.ratio));
            json_object_set_new(aa, "ci_lo", num_or_null(c->c.aa.ci_lo));
            json_object_set_new(aa, "ci_hi", num_or_null(c->c.aa.ci_hi));
            json_object_set_new(aa, "p_value", num_or_null(c->c.aa.p_value));
            json_object_set_new(aa, "significant", json_boolean(c->c.aa.significant));
            strbuf_release(&sb);
            json_object_set_new(o, "mean", num_or_null(c->c.mean));
            json_object_set_new(o, "cv", num_or_null(c->c.cv));
            /* null = never detectable with these rounds */
            json_object_set_new(o, "detectable", num_or_null(c->c.detectable));
            json_object_set_new(o, "rounds_5pct", c->c.rounds_5pct < 0 ? json_null()
                                                      : json_integer(c->c.rounds_5pct));
            json_object_set_new(o, "rounds_2pct", c->c.rounds_2pct < 0 ? json_null()
                                                      : json_integer(c->c.rounds_2pct));
            json_object_set_new(o, "aa", aa);
        }
        json_array_append_new(arr, o);
    }
    json_object_set_new(cal, "cells", arr);
    struct machine_state m;
    struct machine_recommendation rec;
    machine_state_of(cfg, res, &m);
    machine_recommend(cfg, res, recommend_target(cfg), &rec);
    json_object_set_new(cal, "machine", json_pack("{s:o,s:o,s:o,s:o,s:o,s:i}", "load1", num_or_null(m.load1),
                                                  "client_cpu_share", num_or_null(m.client_share),
                                                  "steal_pct", num_or_null(m.steal_pct),
                                                  "other_pct", num_or_null(m.other_pct),
                                                  "cv_tps_pct", num_or_null(m.cv_tps_pct),
                                                  "runs", m.nruns));
    json_t *cand = json_array();
    for (int i = 0; i < rec.ncand; i++)
        json_array_append_new(cand, json_pack("{s:o,s:o,s:o,s:o}", "time_s", json_real(rec.cand[i].run_s),
                                              "sd_log_ratio", num_or_null(rec.cand[i].sd_log),
                                              "rounds", rec.cand[i].rounds == INT32_MAX
                                                            ? json_null()
                                                            : json_integer(rec.cand[i].rounds),
                                              "wall_s", num_or_null(rec.cand[i].wall_s)));
    json_object_set_new(cal, "recommendation",
                        json_pack("{s:o,s:b,s:o,s:o,s:o,s:o,s:o,s:s,s:o,s:o}", "target_ci_pct",
                                  json_real(rec.target_pct), "ok", rec.ok, "time_s",
                                  rec.ok ? json_real(rec.run_s) : json_null(), "rounds",
                                  rec.ok ? json_integer(rec.rounds) : json_null(), "max_rounds",
                                  rec.ok ? json_integer(rec.max_rounds) : json_null(), "wall_s",
                                  num_or_null(rec.wall_s), "overhead_s", num_or_null(rec.overhead_s),
                                  "cpu_placement", rec.placement_desc, "why",
                                  rec.ok ? json_null() : json_string(rec.why), "candidates", cand));
    return cal;
}

/* The experiment's own JSON (every run, fingerprints, environment) plus a "calibration"
 * object, written via path.tmp + rename. -1 after a message. */
static int write_output(const char *path, const struct experiment_config *cfg,
                        const struct experiment_result *res, const struct cal_cell *cells,
                        int ncells)
{
    char *exp_path = xasprintf("%s.experiment", path), *tmp = xasprintf("%s.tmp", path);
    json_error_t je;
    json_t *root = NULL;
    int rc = -1;

    if (experiment_write_json(exp_path, cfg, res) < 0)
        goto out;
    root = json_load_file(exp_path, 0, &je);
    unlink(exp_path);
    if (!root) {
        error("cannot read back %s: %s", exp_path, je.text);
        goto out;
    }
    json_object_set_new(root, "calibration", calibration_json(cfg, res, cells, ncells));
    if (json_dump_file(root, tmp, JSON_INDENT(2)) < 0) {
        error("cannot write %s: %s", tmp, strerror(errno));
        unlink(tmp);
    } else if (rename(tmp, path) < 0) {
        error("cannot rename %s to %s: %s", tmp, path, strerror(errno));
        unlink(tmp);
    } else {
        rc = 0;
    }
out:
    json_decref(root);
    free(exp_path);
    free(tmp);
    return rc;
}

/* ---------------------------------------------------------------- command */

int cmd_calibrate(int argc, char **argv)
{
    const struct opt_def *tables[] = { calibrate_options };
    struct opts o;
    struct experiment_config cfg;
    struct experiment_result res;
    struct variant variants[2];
    struct sig_saved saved;
    struct cal_cell *cells = NULL;
    struct cli_experiment x;
    char **workloads = NULL, *name = NULL, *library = NULL;
    int ncells = 0, rc = 1, ran = 0;

    memset(&cfg, 0, sizeof(cfg));
    memset(&res, 0, sizeof(res));
    memset(variants, 0, sizeof(variants));
    memset(&x, 0, sizeof(x));
    if (cli_help(argc, argv, calibrate_usage))
        return 0;
    /* Ctrl-C before or after the experiment (which catches it itself while it runs) also
     * ends with exit 2 and whatever was measured. */
    got_signal = 0;
    sig_catch(on_signal, &saved);

    if (cli_parse(&o, tables, 1, argc, argv, "calibrate") < 0)
        goto out;

    int64_t rounds = opt_int(&o, "rounds");
    if (rounds < 2 || rounds > 100000) {
        error("invalid --rounds=%s (calibrate needs at least 2 rounds per variant to measure "
              "the variation; %d or more can detect a change)",
              opt_str(&o, "rounds"), stats_min_rounds(CAL_ALPHA));
        goto out;
    }
    if (cli_time_tables(&o, &cfg) < 0)
        goto out;
    workloads = opt_list(&o, "bench", &cfg.nworkloads);
    /* everything is checked before the experiment row is written (compare does the same) */
    if (workload_check_list("bench", workloads, cfg.nworkloads) < 0)
        goto out;
    if (opt_str(&o, "output") && check_writable("--output", opt_str(&o, "output")) < 0)
        goto out;
    cfg.workloads = workloads;
    if (cli_threads(&o, "--threads=1", &cfg) < 0)
        goto out;
    if (choose_library(&o, &name, &library) < 0)
        goto out;

    /* One library, two variants: A' is A under another name, so the order shuffle and the
     * per-run processes are exactly those of a real comparison. */
    variants[0].name = "A";
    variants[1].name = "A'";
    variants[0].library = variants[1].library = library;
    cfg.variants = variants;
    cfg.nvariants = 2;
    cfg.rounds = (int)rounds;
    if (cli_target_ci(&o, &cfg) < 0 || cli_precision(&o, &cfg) < 0)
        goto out;
    if (cli_experiment_setup(&o, &cfg, &x) < 0)
        goto out;
    /* A' is the same file as A: fingerprint it once and copy. */
    cfg.nvariants = 1;
    int fp = experiment_fingerprint(&cfg);
    cfg.nvariants = 2;
    if (fp < 0) {
        rc = got_signal ? 2 : 1;
        goto out;
    }
    if (got_signal) {
        error("interrupted by %s before the first run", run_signal_name(got_signal));
        rc = 2;
        goto out;
    }
    variants[1].sha256 = variants[0].sha256 ? xstrdup(variants[0].sha256) : NULL;
    variants[1].version = variants[0].version ? xstrdup(variants[0].version) : NULL;
    variants[1].source_id = variants[0].source_id ? xstrdup(variants[0].source_id) : NULL;
    variants[1].loaded_from = variants[0].loaded_from ? xstrdup(variants[0].loaded_from) : NULL;
    if (experiment_record_begin(&cfg, x.store, "calibrate", NULL) < 0)
        goto out;
    if (stderr_is_tty()) {
        int total = cfg.nworkloads * cfg.nthreads * cfg.rounds * 2;
        fprintf(stderr, "calibrate: %s%s%s, %d runs of %g s (about %.0f min); Ctrl-C stops "
                        "and reports what ran\n",
                name ? name : "", name ? " = " : "", library, total, cfg.time_s,
                ceil(total * (cfg.time_s + 1) / 60));
    }

    ran = 1;
    cfg.keep_run_json = true; /* the recommendation cuts every run's per-second series */
    int run_rc = experiment_run(&cfg, &res);
    if (experiment_record_finish(&cfg, &res, run_rc) < 0 && run_rc == 0)
        run_rc = -1;
    cells = calibrate_cells(&cfg, &res, &ncells);
    if (res.nruns > 0)
        print_report(stdout, &cfg, &res, cells, ncells);
    rc = run_rc == 0 ? 0 : res.signal ? 2 : 1;
    if (opt_str(&o, "output")) {
        if (write_output(opt_str(&o, "output"), &cfg, &res, cells, ncells) < 0)
            rc = rc ? rc : 1;
        else
            fprintf(stderr, "%d runs and the calibration written to %s\n", res.nruns,
                    opt_str(&o, "output"));
    }
    if (rc == 0 && got_signal)
        rc = 2;

out:
    cli_experiment_release(&x, ran);
    sig_restore(&saved);
    free(cells);
    experiment_result_release(&res);
    experiment_variant_release(&variants[0]);
    experiment_variant_release(&variants[1]);
    free(cfg.threads);
    opt_list_free(workloads);
    free(name);
    free(library);
    opts_release(&o);
    return rc;
}
