/* common: what the reports of experiments share (see common.h). Owns no state. */
#include "report/common.h"
#include "util/fmt.h"
#include "util/strbuf.h"
#include "util/util.h"

#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int report_format_parse(const char *s, enum report_format *out)
{
    if (!strcmp(s, "text"))
        *out = REPORT_TEXT;
    else if (!strcmp(s, "markdown") || !strcmp(s, "md"))
        *out = REPORT_MARKDOWN;
    else if (!strcmp(s, "csv"))
        *out = REPORT_CSV;
    else if (!strcmp(s, "json"))
        *out = REPORT_JSON;
    else
        return error("invalid --format=%s (expected text, markdown, csv, json or html)", s);
    return 0;
}

/* ---------------------------------------------------------------- text and markdown */

void report_print_header(struct strbuf *out, enum report_format fmt, const char *title,
                         const char *body)
{
    if (fmt == REPORT_MARKDOWN)
        strbuf_addf(out, "## %s\n\n", title);
    else
        strbuf_addf(out, "%s\n", title);
    for (const char *line = body ? body : ""; *line;) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        strbuf_addstr(out, fmt == REPORT_MARKDOWN ? "- " : "  ");
        strbuf_add(out, line, len);
        strbuf_addch(out, '\n');
        line += len + (nl ? 1 : 0);
    }
}

static const char *const seed000_title[METRIC_COUNT] = {
    "Transactions per second",
    "Average response time (ms)",
    "95th percentile response time (ms)",
};

const char *report_metric_title(enum experiment_metric m)
{
    switch (m) {
    case METRIC_INSTR: return "Instructions per transaction (callgrind; deterministic, not time)";
    case METRIC_I1_MISS: return "Simulated I1 cache misses per transaction (callgrind --cache-sim)";
    case METRIC_CPU_US: return "CPU time per transaction (us, client + server)";
    case METRIC_SERVER_USER_US: return "Server user CPU time per transaction (us)";
    case METRIC_SERVER_SYS_US: return "Server system CPU time per transaction (us)";
    case METRIC_D1_MISS: return "Simulated D1 cache misses per transaction (callgrind --cache-sim)";
    case METRIC_LL_MISS:
        return "Simulated last-level cache misses per transaction (callgrind --cache-sim)";
    case METRIC_EST_CYCLES:
        return "Estimated cycles per transaction (Ir + 10 Bm + 10 L1m + 100 LLm; simulated "
               "counts, not time)";
    case METRIC_BRANCH_MISS:
        return "Simulated branch mispredictions per transaction (callgrind --branch-sim)";
    default: return (int)m < METRIC_COUNT ? seed000_title[m] : experiment_metric_key(m);
    }
}

void report_join_strs(struct strbuf *sb, char *const *list, int n)
{
    for (int i = 0; i < n; i++)
        strbuf_addf(sb, "%s%s", i ? "," : "", list[i]);
}

void report_join_ints(struct strbuf *sb, const int *list, int n)
{
    for (int i = 0; i < n; i++)
        strbuf_addf(sb, "%s%d", i ? "," : "", list[i]);
}

uint64_t report_cell_seed(const struct experiment_config *cfg, int w, int v, int row,
                          enum experiment_metric m)
{
    return experiment_cell_seed(cfg, w, v, row, m);
}

/* ---------------------------------------------------------------- CSV and JSON */

void report_csv_field(struct strbuf *sb, const char *s)
{
    if (!s)
        return;
    if (!strpbrk(s, ",\"\n\r")) {
        strbuf_addstr(sb, s);
        return;
    }
    strbuf_addch(sb, '"');
    for (; *s; s++) {
        if (*s == '"')
            strbuf_addch(sb, '"');
        strbuf_addch(sb, *s);
    }
    strbuf_addch(sb, '"');
}

void report_csv_num(struct strbuf *sb, double x)
{
    strbuf_addch(sb, ',');
    if (isfinite(x))
        strbuf_addf(sb, "%.10g", x);
}

json_t *report_values_json(const double *x, int n)
{
    json_t *a = json_array();
    for (int i = 0; i < n; i++)
        json_array_append_new(a, jreal(x[i]));
    return a;
}

json_t *report_change_json(const struct experiment_change *ch, const char *verdict)
{
    json_t *o = json_object();
    double lo, hi, pct = experiment_change_pct(ch, &lo, &hi);
    json_object_set_new(o, "cells", json_integer(ch->ncells));
    json_object_set_new(o, "n_baseline", json_integer(ch->n1));
    json_object_set_new(o, "n_variant", json_integer(ch->n2));
    json_object_set_new(o, "statistics", json_boolean(ch->stats));
    json_object_set_new(o, "pooled", json_boolean(ch->pooled));
    json_object_set_new(o, "ratio", ch->ncells ? jreal(ch->ratio) : json_null());
    json_object_set_new(o, "ratio_ci", ch->stats ? json_pack("[oo]", jreal(ch->ci_lo),
                                                            jreal(ch->ci_hi))
                                                 : json_null());
    json_object_set_new(o, "level", jreal(ch->level));
    json_object_set_new(o, "change_pct", jreal(pct));
    json_object_set_new(o, "change_ci_pct", ch->stats ? json_pack("[oo]", jreal(lo), jreal(hi))
                                                      : json_null());
    /* the p only where its test decides the verdict (report_p_decides()), as in the tables */
    json_object_set_new(o, "p_value", report_p_decides(ch) ? jreal(ch->p_value) : json_null());
    json_object_set_new(o, "significant", json_boolean(ch->significant));
    json_object_set_new(o, "verdict", jstr(verdict));
    return o;
}

json_t *report_experiment_json(const struct experiment_config *cfg,
                               const struct experiment_result *res)
{
    json_t *o = json_object(), *set = json_object();
    struct strbuf sb = STRBUF_INIT;
    json_object_set_new(o, "id", cfg->experiment_id > 0 ? json_integer(cfg->experiment_id)
                                                        : json_null());
    json_object_set_new(o, "kind", jstr(cfg->kind));
    json_object_set_new(o, "complete",
                        json_boolean(!res->error &&
                                     experiment_runs_done(res) >= experiment_runs_planned(cfg)));
    json_object_set_new(o, "error", jstr(res->error));
    json_object_set_new(o, "runs", json_integer(res->nruns));
    if (res->exclude_distrusted)  /* only with the option: the JSON is otherwise as before */
        json_object_set_new(o, "runs_left_out", json_integer(res->excluded));
    json_object_set_new(o, "runs_planned", json_integer(experiment_runs_planned(cfg)));
    if (res->started_at > 0) {
        iso_time(&sb, res->started_at);
        json_object_set_new(o, "started_at", json_string(sb.buf));
    }
    experiment_measurement_json(set, cfg);
    json_object_set_new(set, "measure", json_string(cfg->measure == MEASURE_INSTRUCTIONS
                                                        ? "instructions" : "time"));
    char *seed = xasprintf("%llu", (unsigned long long)cfg->seed);
    json_object_set_new(set, "seed", json_string(seed));
    free(seed);
    json_object_set_new(o, "settings", set);
    json_object_set_new(o, "variants", experiment_variants_json(cfg));
    json_t *env = res->env_json ? json_loads(res->env_json, 0, NULL) : NULL;
    json_object_set_new(o, "environment", env ? env : json_object());
    strbuf_release(&sb);
    return o;
}

char *report_improvement_cell(const struct experiment_change *ch)
{
    double pct = experiment_change_pct(ch, NULL, NULL);
    if (!ch->ncells || !isfinite(pct))
        return xstrdup("-");
    if (ch->stats && !ch->significant)
        return xasprintf("(%+.2f)", pct);
    return xasprintf("%+.2f", pct);
}

bool report_p_decides(const struct experiment_change *ch)
{
    if (!ch->ncells || !ch->stats)
        return false;
    if (ch->sequential)
        return true;
    return !(ch->ci_lo <= 1.0 && ch->ci_hi >= 1.0);
}

uint64_t report_all_cells_seed(const struct experiment_config *cfg, int v,
                               enum experiment_metric m)
{
    return cfg->nworkloads == 1 ? report_cell_seed(cfg, 0, v, cfg->nthreads, m)
                                : report_cell_seed(cfg, cfg->nworkloads, v, cfg->nthreads + 1, m);
}
