/* html: the self-contained HTML report (see html.h): the page around the markdown report and
 * the JSON data block the page's script draws its charts from. Owns no state. */
#include "report/html.h"
#include "model/cells.h"
#include "metrics/metrics.h"
#include "report/tables.h"
#include "report/trainers.h"
#include "stats/histogram.h"
#include "util/fmt.h"
#include "util/strbuf.h"
#include "util/util.h"
#include "version.h"

#include "report_page.h" /* generated: REPORT_PAGE_CSS, REPORT_PAGE_JS */

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int report_html_chartjs(struct strbuf *js)
{
    const char *path = getenv("PGOLAB_CHARTJS"); /* a test knob (util/knobs.c) */
    if (!path || !*path)
        path = REPORT_CHARTJS_PATH;
    errno = 0;
    if (strbuf_read_file(js, path) < 0 || !js->len)
        return error("--format=html needs Chart.js: cannot read %s (%s); install the Debian "
                     "package %s (scripts/install-deps.sh does)",
                     path, errno ? strerror(errno) : "empty file", REPORT_CHARTJS_PACKAGE);
    return 0;
}

/* ---------------------------------------------------------------- HTML text */

static void esc(struct strbuf *sb, const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        switch (s[i]) {
        case '&': strbuf_addstr(sb, "&amp;"); break;
        case '<': strbuf_addstr(sb, "&lt;"); break;
        case '>': strbuf_addstr(sb, "&gt;"); break;
        case '"': strbuf_addstr(sb, "&quot;"); break;
        default: strbuf_addch(sb, s[i]);
        }
    }
}

static void esc_str(struct strbuf *sb, const char *s)
{
    esc(sb, s, strlen(s));
}

/* The class of a table cell by what it says: a change that is better or worse (the reports'
 * sign convention: positive = better), "~" (no significant difference), or a number. */
static const char *cell_class(const char *s, size_t len)
{
    bool pct = memchr(s, '%', len) != NULL;
    if (len >= 2 && s[0] == '+' && pct && strstr(s, "CI"))
        return "better";
    if (len >= 2 && s[0] == '-' && s[1] >= '0' && s[1] <= '9' && pct && strstr(s, "CI"))
        return "worse";
    if (len >= 1 && s[0] == '~')
        return "same";
    if (len >= 1 && ((s[0] >= '0' && s[0] <= '9') || s[0] == '-' || s[0] == '+'))
        return "num";
    return NULL;
}

/* One pipe-table row ("| a | b |") as <tr> of th or td cells. */
static void table_row(struct strbuf *out, const char *line, size_t len, bool head)
{
    strbuf_addstr(out, "<tr>");
    const char *end = line + len;
    const char *p = memchr(line, '|', len);
    while (p && p + 1 < end) {
        const char *q = memchr(p + 1, '|', (size_t)(end - p - 1));
        if (!q)
            break;
        const char *a = p + 1, *b = q;
        while (a < b && *a == ' ')
            a++;
        while (b > a && b[-1] == ' ')
            b--;
        /* cell strings are copied: strstr in cell_class needs a terminated string */
        char *cell = xstrndup(a, (size_t)(b - a));
        const char *cls = head ? NULL : cell_class(cell, strlen(cell));
        strbuf_addstr(out, head ? "<th" : "<td");
        if (cls)
            strbuf_addf(out, " class=\"%s\"", cls);
        strbuf_addch(out, '>');
        esc_str(out, cell);
        strbuf_addstr(out, head ? "</th>" : "</td>");
        free(cell);
        p = q;
    }
    strbuf_addstr(out, "</tr>\n");
}

/* The markdown the reports write (report_print_header, rep_table_title, table_render,
 * versus.c's warnings) as HTML: "## " and "### " headings, "- " lists, "> " quoted warnings,
 * pipe tables and plain lines. Nothing else is expected; anything else is a paragraph. */
static void md_to_html(struct strbuf *out, const char *md)
{
    enum { NONE, LIST, QUOTE, TABLE } open = NONE;
    int trow = 0;
    static const char *const close[] = { "", "</ul>\n", "</ul></div>\n",
        "</tbody></table></div>\n" };
    for (const char *line = md ? md : ""; *line;) { /* an empty strbuf's buf is NULL */
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        int kind = !len                                  ? NONE
                   : !strncmp(line, "- ", 2)             ? LIST
                   : !strncmp(line, "> ", 2)             ? QUOTE
                   : line[0] == '|'                      ? TABLE
                                                         : -1;
        if (open != NONE && kind != (int)open) {
            strbuf_addstr(out, close[open]);
            open = NONE;
        }
        if (kind == LIST) {
            if (open != LIST)
                strbuf_addstr(out, "<ul class=\"header\">\n");
            open = LIST;
            strbuf_addstr(out, "<li>");
            esc(out, line + 2, len - 2);
            strbuf_addstr(out, "</li>\n");
        } else if (kind == QUOTE) {
            if (open != QUOTE)
                strbuf_addstr(out, "<div class=\"warning\"><ul>\n");
            open = QUOTE;
            bool item = len > 4 && !strncmp(line, "> - ", 4);
            strbuf_addstr(out, item ? "<li>" : "<li class=\"lead\">");
            esc(out, line + (item ? 4 : 2), len - (item ? 4 : 2));
            strbuf_addstr(out, "</li>\n");
        } else if (kind == TABLE) {
            if (open != TABLE) {
                strbuf_addstr(out, "<div class=\"table\"><table>\n<thead>");
                trow = 0;
            }
            open = TABLE;
            bool sep = strspn(line, "|-: ") == len;
            if (sep)
                strbuf_addstr(out, "</thead><tbody>\n");
            else
                table_row(out, line, len, trow == 0);
            trow++;
        } else if (kind < 0) {
            int h = !strncmp(line, "### ", 4) ? 3 : !strncmp(line, "## ", 3) ? 2 : 0;
            strbuf_addf(out, h ? "<h%d>" : "<p>", h);
            esc(out, line + (h ? h + 1 : 0), len - (h ? (size_t)h + 1 : 0));
            strbuf_addf(out, h ? "</h%d>\n" : "</p>\n", h);
        }
        line += len + (nl ? 1 : 0);
    }
    if (open != NONE)
        strbuf_addstr(out, close[open]);
}

/* ---------------------------------------------------------------- the data block */

static const double pct_levels[] = { 50, 75, 90, 95, 99, 99.9 };
#define NPCT (sizeof(pct_levels) / sizeof(pct_levels[0]))

/* Each run's stored JSON report, parsed (NULL where absent or unreadable). */
static json_t **runs_parse(const struct experiment_result *res)
{
    json_t **p = xcalloc((size_t)res->nruns + 1, sizeof(*p));
    for (int i = 0; i < res->nruns; i++)
        p[i] = res->runs[i].json ? json_loads(res->runs[i].json, 0, NULL) : NULL;
    return p;
}

static void runs_free(json_t **p, int n)
{
    for (int i = 0; i < n; i++)
        json_decref(p[i]);
    free(p);
}

/* Add a run's stored histogram ([{"ms", "count"}], report_json()) to h; false without one. */
static bool hist_add_json(struct histogram *h, json_t *run)
{
    json_t *a = json_object_get(run, "histogram"), *b;
    size_t i;
    if (!json_is_array(a) || !json_array_size(a))
        return false;
    json_array_foreach(a, i, b) {
        double ms = json_number_value(json_object_get(b, "ms"));
        json_int_t n = json_integer_value(json_object_get(b, "count"));
        if (ms <= 0 || n <= 0)
            continue;
        h->counts[histogram_bucket_index((uint64_t)(ms * 1e6))] += (uint64_t)n;
        h->total += (uint64_t)n;
    }
    json_t *lat = json_object_get(run, "latency_ms");
    double mn = json_number_value(json_object_get(lat, "min")) * 1e6;
    double mx = json_number_value(json_object_get(lat, "max")) * 1e6;
    if (mn > 0 && (uint64_t)mn < h->min_ns)
        h->min_ns = (uint64_t)mn;
    if ((uint64_t)mx > h->max_ns)
        h->max_ns = (uint64_t)mx;
    return true;
}

/* Per (workload, threads, variant): the latency percentiles (ms) of every round's
 * transactions together, from the runs' histograms merged (histogram_percentile). */
static json_t *percentiles_json(const struct experiment_config *cfg,
                                const struct experiment_result *res, json_t **runs)
{
    json_t *a = json_array();
    for (int w = 0; w < cfg->nworkloads; w++)
        for (int t = 0; t < cfg->nthreads; t++)
            for (int v = 0; v < cfg->nvariants; v++) {
                struct histogram h;
                int n = 0;
                histogram_init(&h);
                for (int i = 0; i < res->nruns; i++) {
                    const struct run_result *r = &res->runs[i];
                    if (r->variant == v && r->workload == w && r->threads == cfg->threads[t])
                        n += hist_add_json(&h, runs[i]);
                }
                if (n && h.total) {
                    json_t *p = json_array();
                    for (size_t k = 0; k < NPCT; k++)
                        json_array_append_new(p,
                                              jreal(histogram_percentile(&h, pct_levels[k]) / 1e6));
                    json_array_append_new(
                        a, json_pack("{s:s,s:i,s:s,s:i,s:I,s:o}", "workload", cfg->workloads[w],
                                     "threads", cfg->threads[t], "variant", cfg->variants[v].name,
                                     "runs", n, "transactions", (json_int_t)h.total, "ms", p));
                }
                histogram_release(&h);
            }
    return a;
}

/* Every run's per-second series (the children's --report-interval=1 lines): [time_s, tps,
 * latency ms at the run's percentile] per interval. */
static json_t *timelines_json(const struct experiment_config *cfg,
                              const struct experiment_result *res, json_t **runs)
{
    json_t *a = json_array();
    for (int i = 0; i < res->nruns; i++) {
        const struct run_result *r = &res->runs[i];
        json_t *iv = json_object_get(runs[i], "intervals"), *x;
        size_t k;
        if (!json_is_array(iv) || !json_array_size(iv))
            continue;
        json_t *pts = json_array();
        json_array_foreach(iv, k, x)
            json_array_append_new(pts, json_pack("[f,f,f]",
                                                 json_number_value(json_object_get(x, "time_s")),
                                                 json_number_value(json_object_get(x, "tps")),
                                                 json_number_value(json_object_get(x,
                                                     "latency_ms"))));
        json_array_append_new(a, json_pack("{s:s,s:i,s:s,s:i,s:i,s:o}", "variant",
                                           cfg->variants[r->variant].name, "v", r->variant,
                                           "workload", cfg->workloads[r->workload], "threads",
                                           r->threads, "round", r->round, "points", pts));
    }
    return a;
}

/* The data of one experiment: the report's JSON (report_experiment(), seed000: every cell
 * with its rounds and change), the percentiles, the timelines, the trainer matrix. */
static json_t *experiment_data(const struct experiment_loaded *l)
{
    struct strbuf sb = STRBUF_INIT;
    const char **trainer_of = report_trainers_of(l);
    report_experiment_trainers(&sb, &l->cfg, &l->res, REPORT_SEED000, REPORT_JSON, trainer_of);
    free(trainer_of);
    json_t *rep = json_loads(sb.buf, 0, NULL);
    strbuf_release(&sb);
    if (!rep)
        die("report: the JSON report did not parse back (a bug)");
    json_t **runs = runs_parse(&l->res);
    json_t *keys = json_array(), *titles = json_array(), *lv = json_array();
    for (int f = 0; f < MF_SUMMARY; f++) {
        json_array_append_new(keys, json_string(metrics_field_key((enum metrics_field)f)));
        json_array_append_new(titles, json_string(metrics_field_title((enum metrics_field)f)));
    }
    for (size_t k = 0; k < NPCT; k++)
        json_array_append_new(lv, json_real(pct_levels[k]));
    json_t *d = json_object();
    json_object_set_new(d, "id", json_integer(l->cfg.experiment_id));
    json_object_set_new(d, "status", jstr(l->exp.status));
    json_object_set_new(d, "report", rep);
    json_object_set_new(d, "percentile_levels", lv);
    json_object_set_new(d, "percentiles", percentiles_json(&l->cfg, &l->res, runs));
    json_object_set_new(d, "timelines", timelines_json(&l->cfg, &l->res, runs));
    const char **of = report_trainers_of(l);
    json_object_set_new(d, "trainers", report_trainers_json(&l->cfg, &l->res, of));
    free(of);
    json_object_set_new(d, "metrics_keys", keys);
    json_object_set_new(d, "metrics_titles", titles);
    runs_free(runs, l->res.nruns);
    return d;
}

/* ---------------------------------------------------------------- the page */

static void page_head(struct strbuf *out, const char *title, const char *chartjs)
{
    strbuf_addstr(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                       "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                       "<meta name=\"generator\" content=\"pgolab " PGOLAB_VERSION "\">\n<title>");
    esc_str(out, title);
    strbuf_addstr(out, "</title>\n<style>\n" REPORT_PAGE_CSS "</style>\n");
    /* errors of any later script (the library's included) are kept for the status block */
    strbuf_addstr(out, "<script>window.pgolabErrors = [];\nwindow.addEventListener('error', "
                       "function (e) { window.pgolabErrors.push(String(e.message)); });\n"
                       "</script>\n<script>\n");
    strbuf_addstr(out, chartjs);
    strbuf_addstr(out, "\n</script>\n</head>\n<body>\n<header>\n<h1>");
    esc_str(out, title);
    strbuf_addstr(out, "</h1>\n<p class=\"meta\">pgolab " PGOLAB_VERSION " report, made ");
    struct strbuf t = STRBUF_INIT;
    iso_time(&t, (double)time(NULL));
    esc_str(out, t.buf);
    strbuf_release(&t);
    strbuf_addstr(out, "; charts by Chart.js (Debian package " REPORT_CHARTJS_PACKAGE
                       "), inlined: this file needs no network.</p>\n</header>\n<main>\n");
}

/* The data block (JSON with "/" escaped, so "</script>" cannot occur in it), the status
 * block the page script fills, the script, the end. */
static void page_tail(struct strbuf *out, json_t *data)
{
    char *text = json_dumps(data, JSON_COMPACT | JSON_ESCAPE_SLASH);
    if (!text)
        die("out of memory");
    strbuf_addstr(out, "</main>\n<pre id=\"pgolab-status\" class=\"status\"></pre>\n"
                       "<script type=\"application/json\" id=\"pgolab-data\">");
    strbuf_addstr(out, text);
    strbuf_addstr(out, "</script>\n<script>\n" REPORT_PAGE_JS "</script>\n</body>\n</html>\n");
    free(text);
}

/* The markdown report of one experiment split into its header (up to the first table) and
 * the rest. */
static void experiment_md(const struct experiment_loaded *l, struct strbuf *head,
                          struct strbuf *tables)
{
    struct strbuf md = STRBUF_INIT;
    /* the page keeps the per-run trust table (the terminal's report shows it on request) */
    struct report_options ro = { .trust_table = true };
    report_experiment_opts(&md, &l->cfg, &l->res, REPORT_SEED000, REPORT_MARKDOWN, NULL, &ro);
    const char *cut = strstr(md.buf, "\n### ");
    size_t n = cut ? (size_t)(cut - md.buf) : md.len;
    strbuf_add(head, md.buf, n);
    strbuf_addstr(tables, md.buf + n);
    strbuf_release(&md);
}

static void partial_note(struct strbuf *out, const struct experiment_loaded *l)
{
    if (l->exp.status && strcmp(l->exp.status, "complete")) {
        strbuf_addf(out, "<div class=\"warning\"><ul><li class=\"lead\">PARTIAL: experiment "
                         "%lld is %s: %d of %d runs are recorded; what is here is shown.</li>"
                         "</ul></div>\n",
                    (long long)l->cfg.experiment_id, l->exp.status, experiment_runs_done(&l->res),
                    experiment_runs_planned(&l->cfg));
    }
}

void report_html_experiment(struct strbuf *out, const struct experiment_loaded *l,
                            const char *chartjs, const char *profiles)
{
    struct strbuf head = STRBUF_INIT, tables = STRBUF_INIT;
    char *title = xasprintf("pgolab report: experiment %lld (%s)",
                            (long long)l->cfg.experiment_id, l->cfg.kind ? l->cfg.kind : "?");
    json_t *data = json_pack("{s:s,s:[o]}", "page", "experiment", "experiments",
                             experiment_data(l));

    page_head(out, title, chartjs);
    experiment_md(l, &head, &tables);
    partial_note(out, l);
    strbuf_addstr(out, "<section class=\"head\">\n");
    md_to_html(out, head.buf);
    strbuf_addstr(out, "</section>\n<section class=\"charts\" id=\"charts-0\"></section>\n"
                       "<section class=\"tables\">\n<h2>Tables</h2>\n");
    md_to_html(out, tables.buf);
    strbuf_addstr(out, "</section>\n");
    if (profiles && *profiles) {
        strbuf_addstr(out, "<section class=\"profiles\">\n<h2>CPU profiles: top functions, each "
                           "variant beside the baseline</h2>\n<pre>");
        esc_str(out, profiles);
        strbuf_addstr(out, "</pre>\n</section>\n");
    }
    page_tail(out, data);
    json_decref(data);
    free(title);
    strbuf_release(&head);
    strbuf_release(&tables);
}

void report_html_compare(struct strbuf *out, const struct experiment_loaded *a,
                         const struct experiment_loaded *b, const char *chartjs)
{
    struct strbuf md = STRBUF_INIT;
    const struct experiment_loaded *ab[2] = { a, b };
    char *title = xasprintf("pgolab report: experiment %lld vs experiment %lld",
                            (long long)a->cfg.experiment_id, (long long)b->cfg.experiment_id);
    json_t *data = json_pack("{s:s,s:[oo]}", "page", "compare", "experiments",
                             experiment_data(a), experiment_data(b));

    page_head(out, title, chartjs);
    report_compare(&md, a, b, REPORT_MARKDOWN);
    partial_note(out, a);
    partial_note(out, b);
    /* the environment differences (the markdown's "> " block) first, then the rest */
    struct strbuf warn = STRBUF_INIT, rest = STRBUF_INIT;
    for (const char *line = md.buf; *line;) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line + 1) : strlen(line);
        strbuf_add(!strncmp(line, "> ", 2) ? &warn : &rest, line, len);
        line += len;
    }
    strbuf_addstr(out, "<section class=\"compare\">\n");
    md_to_html(out, warn.buf);
    md_to_html(out, rest.buf);
    strbuf_release(&warn);
    strbuf_release(&rest);
    strbuf_addstr(out, "</section>\n<div class=\"side\">\n");
    for (int i = 0; i < 2; i++) {
        struct strbuf head = STRBUF_INIT, tables = STRBUF_INIT;
        experiment_md(ab[i], &head, &tables);
        strbuf_addf(out, "<div class=\"col\">\n<section class=\"head\">\n");
        md_to_html(out, head.buf);
        strbuf_addf(out, "</section>\n<section class=\"charts\" id=\"charts-%d\"></section>\n"
                         "</div>\n", i);
        strbuf_release(&head);
        strbuf_release(&tables);
    }
    strbuf_addstr(out, "</div>\n");
    page_tail(out, data);
    json_decref(data);
    free(title);
    strbuf_release(&md);
}
