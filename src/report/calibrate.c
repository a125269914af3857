/* calibrate: `pgolab calibrate`'s report (report/calibrate.h): the A/A cells' text table and
 * notes, the machine state and the --target-ci recommendation, and the same as JSON. */
#include "report/calibrate.h"
#include "model/machine.h"
#include "model/precision.h"
#include "stats/compare.h"
#include "util/fmt.h"
#include "util/strbuf.h"
#include "util/util.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define RECOMMEND_TARGET_DEFAULT 2.0  /* % (the precision pgolab aims at: +/-2% in minutes) */

static const char *const metric_label[METRIC_COUNT] = { "tps", "avg lat (ms)", "p95 lat (ms)" };

/* ---------------------------------------------------------------- text */

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
    /* the p only where its test decides the verdict, as in every report (report_p_decides()):
     * where the CI holds 1 the CI alone says "~" */
    if (isfinite(v->ci_lo) && isfinite(v->ci_hi) && (v->ci_lo > 1 || v->ci_hi < 1))
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

/* The target the recommendation is for: --target-ci, else RECOMMEND_TARGET_DEFAULT. */
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
                    "%.1f%% of the CPU, CV of tps %.1f%%, the client got %.0f%% of a CPU (%d runs "
                    "with "
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

/* The lines above the table: the library, the settings and, with --target-ci, how far each
 * cell got (else whether the experiment stopped early). */
static void text_header(struct strbuf *sb, const struct experiment_config *cfg,
                        const struct experiment_result *res)
{
    const struct variant *v = &cfg->variants[0];

    strbuf_addf(sb, "Noise calibration (A/A): %s", v->library);
    if (v->version)
        strbuf_addf(sb, " (SQLite %s)", v->version);
    strbuf_addf(sb, " measured as two variants, A and A'\n");
    strbuf_addf(sb,
                "%s%d rounds per variant, %g s per run, %d table%s x %d rows, %d runs; "
                "alpha %g, power %g\n",
                cfg->target_ci > 0 ? "up to " : "", cfg->rounds, cfg->time_s, cfg->tables,
                cfg->tables == 1 ? "" : "s", cfg->table_size, res->nruns, CALIBRATE_ALPHA,
                CALIBRATE_POWER);
    int planned = cfg->nworkloads * cfg->nthreads * cfg->rounds * cfg->nvariants;
    if (cfg->target_ci > 0) {
        /* --target-ci: the rounds went on until the A/A pair's sequential CI was narrow enough */
        strbuf_addf(sb, "--target-ci=%g%%: rounds until the A/A pair's sequential 95%% CI "
                        "(a confidence sequence of the per-round log ratios) was at most "
                        "+/-%g%% (at most %d rounds); stopped by %s:\n",
                    cfg->target_ci, cfg->target_ci, cfg->rounds,
                    res->error ? "an error" : experiment_target_stop_reason(cfg, res));
        for (int w = 0; w < cfg->nworkloads; w++)
            for (int t = 0; t < cfg->nthreads; t++) {
                struct experiment_precision p;
                experiment_precision_cell(cfg, res, METRIC_TPS, 1, w, cfg->threads[t], &p);
                strbuf_addf(sb, "  %s, %d thread%s: %d rounds, ", cfg->workloads[w],
                            cfg->threads[t], cfg->threads[t] == 1 ? "" : "s", p.rounds);
                if (p.stats)
                    strbuf_addf(sb, "A'/A %.4f, CI +/-%.1f%%: target %s\n", p.ratio,
                                p.half_pct, p.reached ? "reached" : "NOT reached");
                else
                    strbuf_addstr(sb, "no CI yet: target NOT reached\n");
            }
    } else if (res->nruns < planned)
        strbuf_addf(sb, "Stopped after %d of %d runs: the figures below are from the rounds "
                        "that finished.\n", res->nruns, planned);
    strbuf_addch(sb, '\n');
}

/* What the rows say together (the ok cells only). */
struct summary {
    bool uniform;     /* every ok row rests on the same rounds per variant */
    int rounds_used;  /* those rounds (the most of them), else --rounds */
    int nok, nsig;    /* ok rows, and those A/A calls significant */
    int nmin_runs;    /* the fewest runs (A + A') behind an ok row */
};

static struct summary summarize(const struct experiment_config *cfg,
                                const struct calibrate_cell *cells, int ncells)
{
    struct summary s = { .nmin_runs = INT_MAX };
    /* Rounds per variant behind each row: min(n1, n2); all equal unless it stopped early. */
    int rmin = INT_MAX, rmax = 0;
    for (int i = 0; i < ncells; i++) {
        int n = cells[i].n1 < cells[i].n2 ? cells[i].n1 : cells[i].n2;
        if (!cells[i].ok)
            continue;
        rmin = n < rmin ? n : rmin;
        rmax = n > rmax ? n : rmax;
    }
    s.uniform = rmax == 0 || rmin == rmax;
    s.rounds_used = rmax ? rmax : cfg->rounds;
    for (int i = 0; i < ncells; i++) {
        const struct calibrate_cell *c = &cells[i];
        if (!c->ok)
            continue;
        s.nok++;
        s.nsig += c->c.aa.significant;
        if (c->n1 + c->n2 < s.nmin_runs)
            s.nmin_runs = c->n1 + c->n2;
    }
    return s;
}

/* The table: a row per cell (workload, threads, metric, mean, CV, A/A, detectable, rounds for
 * 5% and 2%). */
static void text_table(struct strbuf *sb, const struct experiment_config *cfg,
                       const struct calibrate_cell *cells, int ncells, const struct summary *s)
{
    int min_rounds = stats_min_rounds(CALIBRATE_ALPHA);
    char *head[NCOLS];
    char **tab = xcalloc((size_t)ncells * NCOLS, sizeof(char *));

    head[0] = xstrdup("workload");
    head[1] = xstrdup("threads");
    head[2] = xstrdup("metric");
    head[3] = xstrdup("mean");
    head[4] = xstrdup("CV");
    head[5] = xstrdup("A/A");
    head[6] = s->uniform ? xasprintf("detectable (%d rounds)", s->rounds_used)
                         : xstrdup("detectable");
    head[7] = xstrdup("rounds for 5%");
    head[8] = xstrdup("rounds for 2%");
    for (int i = 0; i < ncells; i++) {
        const struct calibrate_cell *c = &cells[i];
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
        row[3] = fmt_value(c->c.mean);
        row[4] = xasprintf("%.2f%%", c->c.cv * 100);
        row[5] = fmt_aa(&c->c.aa, c->m != METRIC_TPS);
        int n = c->n1 < c->n2 ? c->n1 : c->n2;
        if (isinf(c->c.detectable))
            row[6] = xasprintf("never (< %d rounds)", min_rounds);
        else if (s->uniform)
            row[6] = xasprintf("%.2f%%", c->c.detectable * 100);
        else
            row[6] = xasprintf("%.2f%% (%d rounds)", c->c.detectable * 100, n);
        row[7] = fmt_rounds(c->c.rounds_5pct);
        row[8] = fmt_rounds(c->c.rounds_2pct);
    }
    render_table(sb, head, tab, ncells);
    strbuf_addch(sb, '\n');
    for (int c = 0; c < NCOLS; c++)
        free(head[c]);
    for (int i = 0; i < ncells * NCOLS; i++)
        free(tab[i]);
    free(tab);
}

/* The notes under the table: too few rounds for significance, the A/A outcome over the rows,
 * the roughness of a CV from few runs. */
static void text_notes(struct strbuf *sb, const struct summary *s)
{
    int min_rounds = stats_min_rounds(CALIBRATE_ALPHA);

    if (s->rounds_used < min_rounds)
        strbuf_addf(sb, "With %d rounds per variant the Mann-Whitney test can never reach "
                        "significance at alpha %g (its smallest p is %.3f; it needs at least %d "
                        "rounds): every comparison with so few rounds says ~.\n",
                    s->rounds_used, CALIBRATE_ALPHA, stats_mw_min_p(s->rounds_used, s->rounds_used),
                    min_rounds);
    if (s->nok) {
        if (s->rounds_used < min_rounds)
            ; /* said above: every row is "~" whatever the data */
        else if (s->nsig == 0)
            strbuf_addf(sb, "A/A: no significant difference in any of the %d rows (~), as it "
                            "should be.\n", s->nok);
        else
            strbuf_addf(sb, "A/A: %d of %d rows differ significantly although both sides are "
                            "the same library; chance alone makes about 1 row in %.0f do so, "
                            "more than that points to drift during the experiment (other load, "
                            "throttling) or to state carried between runs.\n",
                        s->nsig, s->nok, 1 / CALIBRATE_ALPHA);
        if (s->nmin_runs > 2)
            strbuf_addf(sb, "A CV from %d runs is itself rough: its relative standard error is "
                            "about %.0f%% (1/sqrt(2(N-2)), N = %d), so plan with margin.\n",
                        s->nmin_runs, 100 / sqrt(2.0 * (s->nmin_runs - 2)), s->nmin_runs);
    }
}

/* The closing lines, in plain words, on tps (the headline number): one per tps cell. */
static void text_closing(struct strbuf *sb, const struct experiment_config *cfg,
                         const struct calibrate_cell *cells, int ncells)
{
    int min_rounds = stats_min_rounds(CALIBRATE_ALPHA);

    for (int i = 0; i < ncells; i++) {
        const struct calibrate_cell *c = &cells[i];
        int n = c->n1 < c->n2 ? c->n1 : c->n2;
        if (!c->ok || c->m != METRIC_TPS)
            continue;
        strbuf_addf(sb, "\nOn this machine a single %g s run of %s with %d thread%s varies by "
                        "%.1f%% in tps (CV); ",
                    cfg->time_s, cfg->workloads[c->w], c->threads, c->threads == 1 ? "" : "s",
                    c->c.cv * 100);
        if (isinf(c->c.detectable))
            strbuf_addf(sb, "with %d rounds per variant pgolab can detect no change at all "
                            "(it needs at least %d rounds)",
                        n, min_rounds);
        else
            strbuf_addf(sb, "with %d rounds per variant pgolab can detect changes of about "
                            "%.1f%% or more",
                        n, c->c.detectable * 100);
        if (c->c.rounds_5pct < 0)
            strbuf_addstr(sb, "; a 5% or a 2% change would need more than a million rounds.");
        else if (c->c.rounds_2pct < 0)
            strbuf_addf(sb, "; a 5%% change needs %d rounds, a 2%% change more than a million.",
                        c->c.rounds_5pct);
        else
            strbuf_addf(sb, "; a 5%% change needs %d rounds and a 2%% change %d rounds.",
                        c->c.rounds_5pct, c->c.rounds_2pct);
    }
}

void report_calibrate_text(FILE *out, const struct experiment_config *cfg,
                           const struct experiment_result *res,
                           const struct calibrate_cell *cells, int ncells)
{
    struct strbuf sb = STRBUF_INIT;
    struct summary s = summarize(cfg, cells, ncells);

    text_header(&sb, cfg, res);
    text_table(&sb, cfg, cells, ncells, &s);
    text_notes(&sb, &s);
    text_closing(&sb, cfg, cells, ncells);
    strbuf_addch(&sb, '\n');
    machine_text(&sb, cfg, res);
    fputs(sb.buf, out);
    fflush(out);
    strbuf_release(&sb);
}

/* ---------------------------------------------------------------- JSON */

static json_t *num_or_null(double x)
{
    return isfinite(x) ? json_real(x) : json_null();
}

json_t *report_calibrate_json(const struct experiment_config *cfg,
                              const struct experiment_result *res,
                              const struct calibrate_cell *cells, int ncells)
{
    json_t *cal = json_object(), *arr = json_array();
    json_object_set_new(cal, "alpha", json_real(CALIBRATE_ALPHA));
    json_object_set_new(cal, "power", json_real(CALIBRATE_POWER));
    json_object_set_new(cal, "rounds", json_integer(cfg->rounds));
    json_object_set_new(cal, "min_rounds", json_integer(stats_min_rounds(CALIBRATE_ALPHA)));
    json_object_set_new(cal, "formula",
                        json_string("detectable = (z_{1-alpha/2} + z_power) * cv * sqrt(2/n) / "
                                    "sqrt(3/pi); cv = pooled within-group stddev / grand mean"));
    for (int i = 0; i < ncells; i++) {
        const struct calibrate_cell *c = &cells[i];
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
    json_object_set_new(cal, "machine",
                        json_pack("{s:o,s:o,s:o,s:o,s:o,s:i}", "load1", num_or_null(m.load1),
                                  "client_cpu_share", num_or_null(m.client_share), "steal_pct",
                                  num_or_null(m.steal_pct), "other_pct", num_or_null(m.other_pct),
                                  "cv_tps_pct", num_or_null(m.cv_tps_pct), "runs", m.nruns));
    json_t *cand = json_array();
    for (int i = 0; i < rec.ncand; i++)
        json_array_append_new(
            cand, json_pack("{s:o,s:o,s:o,s:o}", "time_s", json_real(rec.cand[i].run_s),
                            "sd_log_ratio", num_or_null(rec.cand[i].sd_log), "rounds",
                            rec.cand[i].rounds == INT32_MAX ? json_null()
                                                            : json_integer(rec.cand[i].rounds),
                            "wall_s", num_or_null(rec.cand[i].wall_s)));
    json_object_set_new(
        cal, "recommendation",
        json_pack(
            "{s:o,s:b,s:o,s:o,s:o,s:o,s:o,s:s,s:o,s:o}", "target_ci_pct", json_real(rec.target_pct),
            "ok", rec.ok, "time_s", rec.ok ? json_real(rec.run_s) : json_null(), "rounds",
            rec.ok ? json_integer(rec.rounds) : json_null(), "max_rounds",
            rec.ok ? json_integer(rec.max_rounds) : json_null(), "wall_s", num_or_null(rec.wall_s),
            "overhead_s", num_or_null(rec.overhead_s), "cpu_placement", rec.placement_desc, "why",
            rec.ok ? json_null() : json_string(rec.why), "candidates", cand));
    return cal;
}
