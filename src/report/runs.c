/* runs: `pgolab report --shape=runs`, every measured run as a row (see runs.h). */
#include "report/runs.h"

#include "metrics/metrics.h"
#include "report/text_table.h"
#include "util/fmt.h"
#include "util/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static char *num(double x, int decimals)
{
    return isfinite(x) ? xasprintf("%.*f", decimals, x) : xstrdup("-");
}

static char *distrust_text(const struct run_metrics *m)
{
    if (!m->available)
        return xasprintf("metrics unavailable: %s", m->note ? m->note : "not sampled");
    struct strbuf sb = STRBUF_INIT;
    metrics_flags_format(&sb, m);
    return strbuf_detach(&sb);
}

static void runs_text(const struct experiment_config *cfg, const struct experiment_result *res,
                      enum report_format fmt, struct strbuf *out)
{
    static const char *const head[] = { "run", "variant", "workload", "threads", "round",
                                        "tps", "qps", "avg ms", "p95 ms", "errors", "load1",
                                        "run queue avg/max", "other CPU%", "distrust" };
    enum { NCOL = 14 };
    bool instr = cfg->measure == MEASURE_INSTRUCTIONS;
    struct table t;
    strbuf_addf(out, fmt == REPORT_MARKDOWN ? "\n### Runs\n\n" : "\nRuns\n");
    strbuf_addstr(out, instr ? "Every measured run in the order it ran; tps and latency are "
                               "callgrind's (slowed), the instructions are the measure.\n"
                             : "Every measured run in the order it ran (the tables' cells are "
                               "the medians of these).\n");
    if (fmt == REPORT_MARKDOWN)
        strbuf_addch(out, '\n');
    table_init(&t, NCOL, res->nruns);
    for (int c = 0; c < NCOL; c++)
        t.head[c] = xstrdup(head[c]);
    if (instr) {
        free(t.head[10]);
        t.head[10] = xstrdup("instructions/txn");
    }
    for (int i = 0; i < res->nruns; i++) {
        const struct run_result *run = &res->runs[i];
        const struct run_metrics *m = &run->metrics;
        table_set(&t, i, 0, xasprintf("%d", i + 1), NULL);
        table_set(&t, i, 1, xstrdup(cfg->variants[run->variant].name), NULL);
        table_set(&t, i, 2, xstrdup(cfg->workloads[run->workload]), NULL);
        table_set(&t, i, 3, xasprintf("%d", run->threads), NULL);
        table_set(&t, i, 4, xasprintf("%d", run->round), NULL);
        table_set(&t, i, 5, num(run->tps, 2), NULL);
        table_set(&t, i, 6, num(run->qps, 2), NULL);
        table_set(&t, i, 7, num(run->lat_avg_ms, 3), NULL);
        table_set(&t, i, 8, num(run->lat_p95_ms, 3), NULL);
        table_set(&t, i, 9, xasprintf("%llu", (unsigned long long)run->errors), NULL);
        if (instr)
            table_set(&t, i, 10, num(run->instr_per_txn, 0), NULL);
        else
            table_set(&t, i, 10, m->available ? num(m->load1, 2) : xstrdup("-"), NULL);
        table_set(&t, i, 11, m->available ? xasprintf("%.1f / %.0f", m->runq_avg, m->runq_max)
                                          : xstrdup("-"), NULL);
        table_set(&t, i, 12, m->available ? num(m->other_pct, 1) : xstrdup("-"), NULL);
        table_set(&t, i, 13, distrust_text(m), NULL);
    }
    table_render(&t, out);
    table_release(&t);
}

static void runs_csv(const struct experiment_config *cfg, const struct experiment_result *res,
                     struct strbuf *out)
{
    strbuf_addstr(out, "experiment,run,variant,baseline,workload,threads,round,started_at,"
                       "duration_s,tps,qps,lat_avg_ms,lat_p95_ms,lat_min_ms,lat_max_ms,"
                       "transactions,errors,instructions_per_txn,metrics_available");
    for (int f = 0; f < MF_COUNT; f++)
        strbuf_addf(out, ",%s", metrics_field_key((enum metrics_field)f));
    strbuf_addstr(out, ",runq_max,load1,distrusted,distrust\n");
    for (int i = 0; i < res->nruns; i++) {
        const struct run_result *run = &res->runs[i];
        const struct run_metrics *m = &run->metrics;
        if (cfg->experiment_id > 0)
            strbuf_addf(out, "%lld", (long long)cfg->experiment_id);
        strbuf_addf(out, ",%d,", i + 1);
        report_csv_field(out, cfg->variants[run->variant].name);
        strbuf_addf(out, ",%d,", run->variant == 0);
        report_csv_field(out, cfg->workloads[run->workload]);
        strbuf_addf(out, ",%d,%d,", run->threads, run->round);
        if (isfinite(run->started_at))
            iso_time(out, run->started_at);
        report_csv_num(out, run->duration_s);
        report_csv_num(out, run->tps);
        report_csv_num(out, run->qps);
        report_csv_num(out, run->lat_avg_ms);
        report_csv_num(out, run->lat_p95_ms);
        report_csv_num(out, run->lat_min_ms);
        report_csv_num(out, run->lat_max_ms);
        strbuf_addf(out, ",%llu,%llu", (unsigned long long)run->transactions,
                    (unsigned long long)run->errors);
        report_csv_num(out, run->instr_per_txn);
        strbuf_addf(out, ",%d", m->available);
        for (int f = 0; f < MF_COUNT; f++)
            report_csv_num(out, m->available ? metrics_field_value(m, (enum metrics_field)f)
                                             : NAN);
        report_csv_num(out, m->available ? m->runq_max : NAN);
        report_csv_num(out, m->available ? m->load1 : NAN);
        strbuf_addch(out, ',');
        if (m->available)
            strbuf_addstr(out, m->flags ? "1" : "0");
        strbuf_addch(out, ',');
        char *why = distrust_text(m);
        report_csv_field(out, why);
        free(why);
        strbuf_addch(out, '\n');
    }
}

static void runs_json(const struct experiment_config *cfg, const struct experiment_result *res,
                      struct strbuf *out)
{
    json_t *root = json_object(), *runs = json_array();
    json_object_set_new(root, "report", json_string("runs"));
    json_object_set_new(root, "experiment", report_experiment_json(cfg, res));
    for (int i = 0; i < res->nruns; i++) {
        const struct run_result *run = &res->runs[i];
        json_t *o = json_object();
        json_object_set_new(o, "run", json_integer(i + 1));
        json_object_set_new(o, "variant", jstr(cfg->variants[run->variant].name));
        json_object_set_new(o, "baseline", json_boolean(run->variant == 0));
        json_object_set_new(o, "workload", jstr(cfg->workloads[run->workload]));
        json_object_set_new(o, "threads", json_integer(run->threads));
        json_object_set_new(o, "round", json_integer(run->round));
        json_object_set_new(o, "started_at", jreal(run->started_at));
        json_object_set_new(o, "duration_s", jreal(run->duration_s));
        json_object_set_new(o, "tps", jreal(run->tps));
        json_object_set_new(o, "qps", jreal(run->qps));
        json_object_set_new(o, "lat_avg_ms", jreal(run->lat_avg_ms));
        json_object_set_new(o, "lat_p95_ms", jreal(run->lat_p95_ms));
        json_object_set_new(o, "lat_min_ms", jreal(run->lat_min_ms));
        json_object_set_new(o, "lat_max_ms", jreal(run->lat_max_ms));
        json_object_set_new(o, "transactions", json_integer((json_int_t)run->transactions));
        json_object_set_new(o, "errors", json_integer((json_int_t)run->errors));
        json_object_set_new(o, "instructions_per_txn", jreal(run->instr_per_txn));
        json_object_set_new(o, "metrics", metrics_to_json(&run->metrics));
        json_array_append_new(runs, o);
    }
    json_object_set_new(root, "runs", runs);
    char *s = json_dumps(root, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
    strbuf_addstr(out, s);
    strbuf_addch(out, '\n');
    free(s);
    json_decref(root);
}

void report_runs(struct strbuf *out, const struct experiment_config *cfg,
                 const struct experiment_result *res, enum report_format fmt)
{
    switch (fmt) {
    case REPORT_CSV: runs_csv(cfg, res, out); break;
    case REPORT_JSON: runs_json(cfg, res, out); break;
    default: runs_text(cfg, res, fmt, out); break;
    }
}
