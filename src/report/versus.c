/* versus: `pgolab report --compare=A,B`, two stored experiments side by side (see
 * versus.h). Reads results only; owns no state. */
#include "report/versus.h"
#include "model/cells.h"
#include "model/environment.h"
#include "report/common.h"
#include "report/text_table.h"
#include "stats/compare.h"
#include "store/store.h"
#include "util/fmt.h"
#include "util/strbuf.h"
#include "util/util.h"
#include "version.h"

#include <jansson.h>
#include <assert.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- cells of two experiments */

static int variant_index(const struct experiment_config *cfg, const char *name)
{
    for (int v = 0; v < cfg->nvariants; v++)
        if (!strcmp(cfg->variants[v].name, name))
            return v;
    return -1;
}

static int workload_index(const struct experiment_config *cfg, const char *name)
{
    for (int w = 0; w < cfg->nworkloads; w++)
        if (!strcmp(cfg->workloads[w], name))
            return w;
    return -1;
}

static int has_threads(const struct experiment_config *cfg, int threads)
{
    for (int t = 0; t < cfg->nthreads; t++)
        if (cfg->threads[t] == threads)
            return 1;
    return 0;
}

struct compare_cell *compare_cells(const struct experiment_config *a,
                                   const struct experiment_config *b, int *n)
{
    struct compare_cell *c = NULL;
    *n = 0;
    for (int pass = 0; pass < 2; pass++) {
        const struct experiment_config *x = pass ? b : a, *y = pass ? a : b;
        for (int v = 0; v < x->nvariants; v++)
            for (int w = 0; w < x->nworkloads; w++)
                for (int t = 0; t < x->nthreads; t++) {
                    int vy = variant_index(y, x->variants[v].name);
                    int wy = workload_index(y, x->workloads[w]);
                    int in_y = vy >= 0 && wy >= 0 && has_threads(y, x->threads[t]);
                    if (pass && in_y)
                        continue; /* listed in the first pass */
                    c = xrealloc(c, sizeof(*c) * (size_t)(*n + 1));
                    struct compare_cell *e = &c[(*n)++];
                    e->variant = x->variants[v].name;
                    e->workload = x->workloads[w];
                    e->threads = x->threads[t];
                    e->va = pass ? (in_y ? vy : -1) : v;
                    e->wa = pass ? (in_y ? wy : -1) : w;
                    e->vb = pass ? v : (in_y ? vy : -1);
                    e->wb = pass ? w : (in_y ? wy : -1);
                }
    }
    return c;
}

double *compare_values(const struct experiment_loaded *l, int v, int w, int threads,
                       enum experiment_metric m, int *n)
{
    if (v < 0 || w < 0) {
        *n = 0;
        return xcalloc(1, sizeof(double));
    }
    return experiment_cell_values(&l->res, v, w, threads, m, n);
}

void compare_change(const double *a, int n1, const double *b, int n2, enum experiment_metric m,
                    uint64_t seed, struct experiment_change *ch)
{
    if (experiment_change_values(a, n1, b, n2, m, seed, ch) < 0)
        experiment_change_values(a, 0, b, 0, m, seed, ch); /* unusable: shown as no data */
}

uint64_t compare_seed(const struct experiment_loaded *a, const struct experiment_loaded *b, int i,
                      enum experiment_metric m)
{
    return a->cfg.seed ^ (b->cfg.seed << 1) ^ ((uint64_t)i << 20 | (uint64_t)m);
}

/* ---------------------------------------------------------------- the report */

/* One line describing a stored experiment. */
static void describe(struct strbuf *sb, const struct experiment_loaded *l)
{
    const struct experiment_config *cfg = &l->cfg;
    json_t *env = json_loads(l->res.env_json ? l->res.env_json : "{}", 0, NULL);
    const char *host = json_string_value(json_object_get(env, "hostname"));
    const char *kernel = json_string_value(json_object_get(env, "kernel"));
    strbuf_addf(sb, "experiment %lld: %s, %s, started ", (long long)cfg->experiment_id,
                l->exp.kind, l->exp.status);
    iso_time(sb, l->exp.created_at);
    strbuf_addf(sb, " on %s (Linux %s), variants ", host ? host : "?", kernel ? kernel : "?");
    for (int v = 0; v < cfg->nvariants; v++)
        strbuf_addf(sb, "%s%s", v ? "," : "", cfg->variants[v].name);
    strbuf_addstr(sb, ", workloads ");
    report_join_strs(sb, cfg->workloads, cfg->nworkloads);
    strbuf_addstr(sb, ", threads ");
    report_join_ints(sb, cfg->threads, cfg->nthreads);
    char *t = fmt_num(cfg->time_s);
    strbuf_addf(sb, ", %d round%s x %s s, %d of %d runs", cfg->rounds,
                cfg->rounds == 1 ? "" : "s", t, experiment_runs_done(&l->res),
                experiment_runs_planned(cfg));
    if (l->res.exclude_distrusted)
        strbuf_addf(sb, " (%d distrusted left out: --exclude-distrusted)", l->res.excluded);
    strbuf_addch(sb, '\n');
    free(t);
    json_decref(env);
}

/* The settings that differ, without the per-variant keys (builds get their own lines). */
static void settings_notes(struct strbuf *sb, const struct experiment_loaded *a,
                           const struct experiment_loaded *b)
{
    struct strbuf diff = STRBUF_INIT;
    if (store_settings_diff(a->exp.settings_json, b->exp.settings_json, &diff) == 0) {
        for (const char *line = diff.len ? diff.buf : ""; *line;) {
            const char *nl = strchr(line, '\n');
            size_t len = nl ? (size_t)(nl - line) : strlen(line);
            if (strncmp(line, "variant", 7)) {
                strbuf_addstr(sb, "settings differ: ");
                strbuf_add(sb, line, len);
                strbuf_addch(sb, '\n');
            }
            line += len + (nl ? 1 : 0);
        }
    }
    strbuf_release(&diff);
}

/* "A: the same build in both (sha256 ...)" per variant found in both. */
static void build_notes(struct strbuf *sb, const struct experiment_loaded *a,
                        const struct experiment_loaded *b)
{
    for (int v = 0; v < a->cfg.nvariants; v++) {
        const struct variant *va = &a->cfg.variants[v];
        int w = variant_index(&b->cfg, va->name);
        if (w < 0) {
            strbuf_addf(sb, "variant %s: only in experiment %lld\n", va->name,
                        (long long)a->cfg.experiment_id);
            continue;
        }
        const struct variant *vb = &b->cfg.variants[w];
        if (va->sha256 && vb->sha256 && !strcmp(va->sha256, vb->sha256))
            strbuf_addf(sb, "variant %s: the same build in both (sha256 %.12s)\n", va->name,
                        va->sha256);
        else {
            strbuf_addf(sb, "variant %s: different builds (sha256 %.12s vs %.12s)", va->name,
                        va->sha256 ? va->sha256 : "?", vb->sha256 ? vb->sha256 : "?");
            /* what is being compared: the versions and where each build comes from */
            if (va->version && vb->version && strcmp(va->version, vb->version))
                strbuf_addf(sb, ": %s vs %s", va->version, vb->version);
            if (va->provenance && vb->provenance && strcmp(va->provenance, vb->provenance))
                strbuf_addf(sb, "; from %s vs from %s", va->provenance, vb->provenance);
            if (va->build && vb->build && strcmp(va->build, vb->build))
                strbuf_addf(sb, "; built with %s vs %s", va->build, vb->build);
            strbuf_addch(sb, '\n');
        }
    }
    for (int v = 0; v < b->cfg.nvariants; v++)
        if (variant_index(&a->cfg, b->cfg.variants[v].name) < 0)
            strbuf_addf(sb, "variant %s: only in experiment %lld\n", b->cfg.variants[v].name,
                        (long long)b->cfg.experiment_id);
}

static void cell_text(struct table *t, int row, int col, const double *x, int n, int dec)
{
    struct stats_summary s;
    if (!n || stats_summarize(x, n, &s) < 0) {
        table_set(t, row, col, xstrdup("-"), NULL);
        return;
    }
    table_set(t, row, col, xasprintf("%.*f", dec, s.median),
              n > 1 ? xasprintf("(%.*f-%.*f)", dec, s.min, dec, s.max) : NULL);
}

/* Each line of text as a separate call of emit (the last may lack its '\n'). */
static void env_diff_lines(const struct strbuf *envd, void (*emit)(void *, const char *, size_t),
                           void *arg)
{
    for (const char *line = envd->len ? envd->buf : ""; *line;) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        emit(arg, line, len);
        line += len + (nl ? 1 : 0);
    }
}

struct warn_line {
    struct strbuf *out;
    enum report_format fmt;
};

static void warn_line(void *arg, const char *line, size_t len)
{
    struct warn_line *w = arg;
    strbuf_addstr(w->out, w->fmt == REPORT_MARKDOWN ? "> - " : "  ");
    strbuf_add(w->out, line, len);
    strbuf_addch(w->out, '\n');
}

static void json_line(void *arg, const char *line, size_t len)
{
    json_array_append_new(arg, json_stringn(line, len));
}

/* Text and markdown: the header of the two experiments, then the warning that their
 * environments differ (envd: one difference per line, nenv of them). */
static void compare_header(struct strbuf *out, const struct experiment_loaded *a,
                           const struct experiment_loaded *b, enum report_format fmt,
                           int nenv, const struct strbuf *envd)
{
    long long ida = (long long)a->cfg.experiment_id, idb = (long long)b->cfg.experiment_id;
    struct strbuf title = STRBUF_INIT, body = STRBUF_INIT;

    assert(fmt == REPORT_TEXT || fmt == REPORT_MARKDOWN);
    strbuf_addf(&title, "pgolab report: experiment %lld vs experiment %lld (change = %lld "
                        "against %lld)",
                ida, idb, idb, ida);
    describe(&body, a);
    describe(&body, b);
    settings_notes(&body, a, b);
    build_notes(&body, a, b);
    if (!nenv)
        strbuf_addstr(&body, "environment: the same hostname, kernel, CPU model, cores, "
                             "memory, CPU governor and pgolab version; load within 0.5\n");
    strbuf_addf(&body, "cells: median of the rounds (min-max); change (95%% CI) of %lld "
                       "against %lld: positive = better, ratio of medians, bootstrap CI, "
                       "Mann-Whitney U at alpha 0.05; \"~\" = no significant difference\n",
                idb, ida);
    report_print_header(out, fmt, title.buf, body.buf);
    if (nenv) {
        /* Seed 003: a changed client machine moved the results more than the builds. */
        strbuf_addf(out, "\n%sWARNING: experiments %lld and %lld ran in different "
                         "environments; a change below may come from the machine or "
                         "system, not from the builds:\n",
                    fmt == REPORT_MARKDOWN ? "> " : "", ida, idb);
        struct warn_line w = { out, fmt };
        env_diff_lines(envd, warn_line, &w);
    }
    strbuf_release(&title);
    strbuf_release(&body);
}

/* JSON: the document's top level, both experiments and their environment differences; the
 * cells are added last. */
static json_t *compare_json_root(const struct experiment_loaded *a,
                                 const struct experiment_loaded *b, const struct strbuf *envd)
{
    json_t *root = json_object();
    json_object_set_new(root, "pgolab_version", json_string(PGOLAB_VERSION));
    json_object_set_new(root, "report", json_string("compare"));
    json_t *exps = json_array();
    json_array_append_new(exps, report_experiment_json(&a->cfg, &a->res));
    json_array_append_new(exps, report_experiment_json(&b->cfg, &b->res));
    json_object_set_new(root, "experiments", exps);
    json_t *d = json_array();
    env_diff_lines(envd, json_line, d);
    json_object_set_new(root, "environment_differences", d);
    return root;
}

/* The metrics both experiments measured into *metrics, and their count: time (tps, avg, p95,
 * and the server's user / system split when both have it) or instructions; 0 when one
 * measured time and the other instructions. */
static int compare_metrics(const struct experiment_loaded *a, const struct experiment_loaded *b,
                           const enum experiment_metric **metrics)
{
    static const enum experiment_metric time_metrics[] = { METRIC_TPS, METRIC_LAT_AVG_MS,
                                                           METRIC_LAT_P95_MS,
                                                           METRIC_SERVER_USER_US,
                                                           METRIC_SERVER_SYS_US };
    static const enum experiment_metric instr_metrics[INSTR_METRICS] = {
        METRIC_INSTR, METRIC_I1_MISS, METRIC_BRANCH_MISS, METRIC_D1_MISS, METRIC_LL_MISS,
        METRIC_EST_CYCLES };
    bool ia = a->cfg.measure == MEASURE_INSTRUCTIONS, ib = b->cfg.measure == MEASURE_INSTRUCTIONS;
    *metrics = ia ? instr_metrics : time_metrics;
    /* time: the server's user / system split too when both experiments have it (a managed
     * server's runs recorded since the split) */
    return ia != ib ? 0
           : ia     ? INSTR_METRICS
           : experiment_has_metric(&a->res, -1, METRIC_SERVER_USER_US) &&
                   experiment_has_metric(&b->res, -1, METRIC_SERVER_USER_US)
               ? 5
               : 3;
}

/* One precision per table: the decimals of the smallest value of metric m in any cell. */
static int compare_decimals(const struct experiment_loaded *a, const struct experiment_loaded *b,
                            const struct compare_cell *cells, int nc, enum experiment_metric m)
{
    double minv = INFINITY;
    for (int i = 0; i < nc; i++)
        for (int side = 0; side < 2; side++) {
            int n;
            double *x = side ? compare_values(b, cells[i].vb, cells[i].wb, cells[i].threads, m,
                                              &n)
                             : compare_values(a, cells[i].va, cells[i].wa, cells[i].threads, m,
                                              &n);
            for (int k = 0; k < n; k++)
                minv = x[k] < minv ? x[k] : minv;
            free(x);
        }
    return table_decimals(minv);
}

/* One compared cell's values (x1: experiment a's n1 rounds, x2: b's n2) and change. */
struct compare_row {
    const struct compare_cell *c;
    enum experiment_metric m;
    const double *x1, *x2;
    int n1, n2;
    const struct experiment_change *ch;
    const char *verdict;
};

/* The cell as a CSV row (the columns report_compare() heads). */
static void compare_csv_row(struct strbuf *out, long long ida, long long idb,
                            const struct compare_row *r)
{
    const struct experiment_change *ch = r->ch;
    struct stats_summary s1, s2;
    bool h1 = r->n1 && stats_summarize(r->x1, r->n1, &s1) == 0;
    bool h2 = r->n2 && stats_summarize(r->x2, r->n2, &s2) == 0;
    double lo, hi, pct = experiment_change_pct(ch, &lo, &hi);

    strbuf_addf(out, "%lld,%lld,%s,", ida, idb, experiment_metric_key(r->m));
    report_csv_field(out, r->c->variant);
    strbuf_addch(out, ',');
    report_csv_field(out, r->c->workload);
    strbuf_addf(out, ",%d,%d", r->c->threads, h1 ? r->n1 : 0);
    report_csv_num(out, h1 ? s1.median : NAN);
    report_csv_num(out, h1 ? s1.min : NAN);
    report_csv_num(out, h1 ? s1.max : NAN);
    strbuf_addf(out, ",%d", h2 ? r->n2 : 0);
    report_csv_num(out, h2 ? s2.median : NAN);
    report_csv_num(out, h2 ? s2.min : NAN);
    report_csv_num(out, h2 ? s2.max : NAN);
    report_csv_num(out, ch->ncells ? ch->ratio : NAN);
    report_csv_num(out, ch->stats ? ch->ci_lo : NAN);
    report_csv_num(out, ch->stats ? ch->ci_hi : NAN);
    report_csv_num(out, pct);
    report_csv_num(out, ch->stats ? lo : NAN);
    report_csv_num(out, ch->stats ? hi : NAN);
    report_csv_num(out, report_p_decides(ch) ? ch->p_value : NAN);
    strbuf_addch(out, ',');
    if (ch->stats)
        strbuf_addstr(out, ch->significant ? "1" : "0");
    strbuf_addch(out, ',');
    report_csv_field(out, r->verdict);
    strbuf_addch(out, '\n');
}

/* The cell as a JSON object. */
static json_t *compare_json_cell(const struct compare_row *r)
{
    struct stats_summary s1, s2;
    bool h1 = r->n1 && stats_summarize(r->x1, r->n1, &s1) == 0;
    bool h2 = r->n2 && stats_summarize(r->x2, r->n2, &s2) == 0;
    json_t *o = json_object();

    json_object_set_new(o, "metric", json_string(experiment_metric_key(r->m)));
    json_object_set_new(o, "variant", jstr(r->c->variant));
    json_object_set_new(o, "workload", jstr(r->c->workload));
    json_object_set_new(o, "threads", json_integer(r->c->threads));
    json_object_set_new(o, "a", report_values_json(r->x1, r->n1));
    json_object_set_new(o, "b", report_values_json(r->x2, r->n2));
    json_object_set_new(o, "a_median", h1 ? jreal(s1.median) : json_null());
    json_object_set_new(o, "b_median", h2 ? jreal(s2.median) : json_null());
    json_object_set_new(o, "change", report_change_json(r->ch, r->verdict));
    return o;
}

/* Table number tableno of metric m over the nc cells: text and markdown render it, CSV gets a
 * row per cell, JSON an object per cell in jcells. */
static void compare_metric_table(struct strbuf *out, const struct experiment_loaded *a,
                                 const struct experiment_loaded *b,
                                 const struct compare_cell *cells, int nc,
                                 enum experiment_metric m, int tableno, enum report_format fmt,
                                 json_t *jcells)
{
    long long ida = (long long)a->cfg.experiment_id, idb = (long long)b->cfg.experiment_id;
    const char *mtitle = report_metric_title(m);
    struct table t;

    assert(fmt != REPORT_JSON || jcells);
    if (fmt == REPORT_MARKDOWN)
        strbuf_addf(out, "\n### Table %d. %s\n\n", tableno, mtitle);
    else if (fmt == REPORT_TEXT)
        strbuf_addf(out, "\nTable %d. %s\n\n", tableno, mtitle);
    table_init(&t, 6, nc);
    static const char *const head[] = { "variant", "workload", "threads" };
    for (int c = 0; c < 3; c++)
        t.head[c] = xstrdup(head[c]);
    t.head[3] = xasprintf("experiment %lld", ida);
    t.head[4] = xasprintf("experiment %lld", idb);
    t.head[5] = xstrdup("change (95% CI)");
    int dec = compare_decimals(a, b, cells, nc, m);
    for (int i = 0; i < nc; i++) {
        const struct compare_cell *c = &cells[i];
        int n1, n2;
        struct experiment_change ch;
        struct strbuf verdict = STRBUF_INIT;
        double *x1 = compare_values(a, c->va, c->wa, c->threads, m, &n1);
        double *x2 = compare_values(b, c->vb, c->wb, c->threads, m, &n2);
        compare_change(x1, n1, x2, n2, m, compare_seed(a, b, i, m), &ch);
        experiment_change_format(&verdict, &ch);
        table_set(&t, i, 0, xstrdup(c->variant), NULL);
        table_set(&t, i, 1, xstrdup(c->workload), NULL);
        table_set(&t, i, 2, xasprintf("%d", c->threads), NULL);
        cell_text(&t, i, 3, x1, n1, dec);
        cell_text(&t, i, 4, x2, n2, dec);
        table_set(&t, i, 5, xstrdup(verdict.buf), NULL);
        struct compare_row row = { c, m, x1, x2, n1, n2, &ch, verdict.buf };
        if (fmt == REPORT_CSV)
            compare_csv_row(out, ida, idb, &row);
        else if (fmt == REPORT_JSON)
            json_array_append_new(jcells, compare_json_cell(&row));
        strbuf_release(&verdict);
        free(x1);
        free(x2);
    }
    if (fmt == REPORT_TEXT || fmt == REPORT_MARKDOWN)
        table_render(&t, out);
    table_release(&t);
}

void report_compare(struct strbuf *out, const struct experiment_loaded *a,
                    const struct experiment_loaded *b, enum report_format fmt)
{
    long long ida = (long long)a->cfg.experiment_id, idb = (long long)b->cfg.experiment_id;
    struct strbuf envd = STRBUF_INIT;
    int nenv = experiment_env_diff(a->res.env_json, b->res.env_json, true, &envd);
    int nc;
    struct compare_cell *cells = compare_cells(&a->cfg, &b->cfg, &nc);
    json_t *root = NULL, *jcells = NULL;

    if (fmt == REPORT_TEXT || fmt == REPORT_MARKDOWN) {
        compare_header(out, a, b, fmt, nenv, &envd);
    } else if (fmt == REPORT_CSV) {
        strbuf_addstr(out, "experiment_a,experiment_b,metric,variant,workload,threads,a_n,"
                           "a_median,a_min,a_max,b_n,b_median,b_min,b_max,ratio,ratio_ci_lo,"
                           "ratio_ci_hi,change_pct,change_ci_lo_pct,change_ci_hi_pct,p_value,"
                           "significant,verdict\n");
    } else {
        root = compare_json_root(a, b, &envd);
        jcells = json_array();
    }

    const enum experiment_metric *metrics;
    int nmetrics = compare_metrics(a, b, &metrics);
    bool ia = a->cfg.measure == MEASURE_INSTRUCTIONS, ib = b->cfg.measure == MEASURE_INSTRUCTIONS;
    if (ia != ib && (fmt == REPORT_TEXT || fmt == REPORT_MARKDOWN))
        strbuf_addf(out, "\nNo tables: experiment %lld measured %s and experiment %lld %s; "
                         "the numbers are not comparable.\n",
                    ida, ia ? "instructions" : "time", idb, ib ? "instructions" : "time");
    for (int mi = 0; mi < nmetrics; mi++)
        compare_metric_table(out, a, b, cells, nc, metrics[mi], mi + 1, fmt, jcells);
    if (root) {
        json_object_set_new(root, "cells", jcells);
        char *text = json_dumps(root, JSON_INDENT(2));
        if (!text)
            die("out of memory");
        strbuf_addstr(out, text);
        strbuf_addch(out, '\n');
        free(text);
        json_decref(root);
    }
    free(cells);
    strbuf_release(&envd);
}
