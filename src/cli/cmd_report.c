/* cmd_report: `pgolab report`, the tables of an experiment rebuilt from the results database (seed
 * 000, 003 or 002 shape; text, markdown, csv or json; or html, report/html.h), or two
 * experiments compared; --output writes any of them to a file. */
#include "cli/cli.h"
#include "cli/shared.h"
#include "experiment/experiment.h"
#include "experiment/record.h"
#include "report/html.h"
#include "report/stored.h"
#include "report/tables.h"
#include "store/store.h"
#include "util/fs.h"
#include "util/opts.h"
#include "util/strbuf.h"
#include "util/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const struct opt_def report_options[] = {
    { "experiment", OPT_INT, NULL,
      "the experiment to report (default: the latest; see pgolab history)" },
    { "compare", OPT_STRING, NULL,
      "ID1,ID2: compare two experiments (e.g. the same builds on two machines)" },
    { "results", OPT_STRING, STORE_DEFAULT_PATH, "results database" },
    { "format", OPT_STRING, "text",
      "text, markdown, csv, json or html (one self-contained page with charts; Chart.js from "
      "libjs-chart.js inlined; use with --output); folded (with --profile): the stacks of every "
      "profiled run, VARIANT;WORKLOAD;frame;...;frame COUNT" },
    { "shape", OPT_STRING, "seed000",
      "seed000 (tps/avg/p95 per thread count), seed003 (min/avg/max/p95 latency and QPS per "
      "variant), seed002 (speedup (x) per variant), runs (every measured run as a row, with its "
      "system metrics and trust; csv for a spreadsheet)" },
    { "profile", OPT_BOOL, "off",
      "also the CPU profiles of a --profile experiment: every variant's top-30 functions beside "
      "the baseline's, with their spread across rounds (text; markdown appends them as tables); "
      "with --format=csv or json only the profiles, one row per DSO or function "
      "(docs/results-format.md); with --format=folded only the folded stacks, for flame-graph "
      "tools" },
    { "trust-table", OPT_BOOL, "off",
      "also the \"Load and trust per run\" table, a row per run (run queue, other work's CPU, "
      "load, steal, iowait, why a run is distrusted); without it one line counts the distrusted "
      "runs (JSON and HTML always have every run's)" },
    CLI_EXCLUDE_DISTRUSTED_OPTION,
    { "output", OPT_STRING, NULL, "write the report to FILE instead of stdout (e.g. report.html)" },
    { "fail-if-slower", OPT_DOUBLE, NULL,
      "exit 3 when a variant is significantly slower than the baseline (tps) by more than PCT "
      "percent (with --compare: ID2 than ID1)" },
    OPT_END,
};

static void report_usage(void)
{
    printf("Usage: pgolab report [--experiment=ID] [--results=FILE] [--format=F] [--shape=S]\n"
           "       pgolab report --compare=ID1,ID2 [--results=FILE] [--format=F]\n"
           "       pgolab report [--experiment=ID | --compare=ID1,ID2] --format=html "
           "--output=FILE.html\n"
           "\n"
           "Rebuilds the report of a recorded experiment from its stored runs (the same\n"
           "numbers `pgolab compare` and `pgolab pgo` printed when it ended), in one of the\n"
           "seeds' shapes:\n"
           "  seed000  per workload: tps, avg and p95 latency by thread count, baseline vs\n"
           "           variants, %% improvement and change (95%% CI), with an Average row\n"
           "  seed003  per workload and thread count: one column per variant, rows min, avg,\n"
           "           max and 95th percentile latency (ms) and QPS\n"
           "  seed002  a row per variant: speedup (x) = baseline time per transaction over\n"
           "           the variant's (the tps ratio), its 95%% CI, p and verdict\n"
           "or --shape=runs: every measured run as a row in the order it ran (tps, qps,\n"
           "latency, errors, its system metrics, load and trust; csv: one row per run).\n"
           "Every cell is the median over the rounds; \"~\" = no significant difference\n"
           "(Mann-Whitney U, alpha 0.05); with fewer than 2 rounds there are no statistics.\n"
           "csv gives one row per cell with every number, json every cell with its rounds.\n"
           "html is one self-contained file (data and Chart.js inlined, no network at view\n"
           "time): the header and seed-000 tables, tps vs threads with CI whiskers, latency\n"
           "percentile curves, every run's per-second timeline, the trainer x workload\n"
           "heat map, system metrics and CPU profiles when they were recorded.\n"
           "\n"
           "--compare=ID1,ID2 compares two experiments cell by cell (variant, workload,\n"
           "threads; the change is ID2 against ID1) and first warns about every difference\n"
           "between their environments (kernel, CPU, cores, memory, hostname, pgolab version,\n"
           "load), which can move results more than builds do.\n"
           "\n"
           "Options:\n");
    opts_print_help(report_options);
    printf("\nExit status: 0 ok; 1 error or bad input (unknown experiment, not a results\n"
           "file); 3 --fail-if-slower: a variant is significantly slower than the baseline\n"
           "(with --compare: a cell of ID2 than the same cell of ID1) by more than PCT\n"
           "percent.\n");
}

/* The id of the latest experiment. */
static int latest_cb(const struct store_experiment *e, void *ctx)
{
    *(int64_t *)ctx = e->id;
    return 0;
}

static int parse_id(const char *s, const char *what, int64_t *id)
{
    if (parse_int64(s, id) < 0 || *id < 1)
        return error("invalid %s '%s' (expected an experiment id; see pgolab history)", what, s);
    return 0;
}

/* Write the report to path (through path.tmp, renamed: a failed write leaves no half file). */
static int write_output(const char *path, const struct strbuf *sb)
{
    char *tmp = xasprintf("%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    int rc = 0;
    if (!f || fwrite(sb->buf, 1, sb->len, f) != sb->len || fclose(f) != 0) {
        rc = error("--output=%s: cannot write there: %s", path, strerror(errno));
        if (f)
            unlink(tmp);
    } else if (rename(tmp, path) < 0) {
        rc = error("--output=%s: cannot write there: %s", path, strerror(errno));
        unlink(tmp);
    }
    free(tmp);
    return rc;
}

/* What cmd_report() parses, loads and releases. */
struct report_cmd {
    struct opts o;
    struct report_stored_request rq;
    const char *output;       /* --output, or NULL */
    double fail_pct;
    int64_t id2;              /* --compare's second id, or 0 */
    char **ids;
    int nids;
    struct strbuf chartjs;
};

/* --format, --shape, --profile, --output and --fail-if-slower, and what goes with what.
 * -1 after a message. */
static int report_formats(struct report_cmd *r)
{
    struct report_stored_request *rq = &r->rq;
    const struct opts *o = &r->o;
    rq->profile = opt_bool(o, "profile");
    rq->trust_table = opt_bool(o, "trust-table");
    rq->folded = !strcmp(opt_str(o, "format"), "folded");
    rq->html = !strcmp(opt_str(o, "format"), "html");
    r->output = opt_is_set(o, "output") ? opt_str(o, "output") : NULL;
    if (rq->html && opt_is_set(o, "shape"))
        return error("--shape is for the text formats; --format=html shows the seed-000 tables and "
                     "charts");
    if (rq->html && rq->profile)
        return error("--format=html includes the CPU profiles when the experiment has them; drop "
                     "--profile");
    if (r->output && rq->profile && !strcmp(opt_str(o, "format"), "text"))
        return error("--output is for the report, not --profile's text: redirect stdout, or use "
                     "--format=markdown, csv or json");
    if (r->output && check_writable("--output", r->output) < 0)
        return -1;
    if (rq->html && report_html_chartjs(&r->chartjs) < 0)
        return -1;
    rq->chartjs = r->chartjs.buf;
    if (rq->folded && !rq->profile)
        return error("--format=folded is the profiles' stacks: add --profile");
    if (rq->profile && opt_is_set(o, "compare"))
        return error("--profile is for one experiment (its variants side by side), not --compare");
    if ((!rq->folded && !rq->html && report_format_parse(opt_str(o, "format"), &rq->fmt) < 0) ||
        report_shape_parse(opt_str(o, "shape"), &rq->shape) < 0)
        return -1;
    if (rq->folded || rq->html)
        rq->fmt = REPORT_TEXT;
    return cli_fail_if_slower(o, &r->fail_pct);
}

/* --experiment or --compare=ID1,ID2 into rq.id (0: the latest) and id2. -1 after a message. */
static int report_ids(struct report_cmd *r)
{
    const struct opts *o = &r->o;
    if (opt_is_set(o, "experiment") &&
        parse_id(opt_str(o, "experiment"), "--experiment", &r->rq.id) < 0)
        return -1;
    if (!opt_is_set(o, "compare"))
        return 0;
    if (opt_is_set(o, "experiment"))
        return error("--experiment and --compare do not go together (--compare=ID1,ID2 names "
                     "both)");
    if (opt_is_set(o, "shape"))
        return error("--shape is for one experiment; --compare has its own table");
    r->ids = split_list(opt_str(o, "compare"), &r->nids);
    if (r->nids != 2)
        return error("--compare wants two experiment ids, ID1,ID2 (got '%s')", opt_str(o,
            "compare"));
    if (parse_id(r->ids[0], "--compare id", &r->rq.id) < 0 ||
        parse_id(r->ids[1], "--compare id", &r->id2) < 0)
        return -1;
    return 0;
}

/* The experiment(s) from store into a (and b with --compare; *loaded counts them), the
 * latest when no id was given (said on stderr), and the calibration a was compared with.
 * -1 after a message. */
static int report_load(struct report_cmd *r, struct store *store, struct experiment_loaded *a,
                       struct experiment_loaded *b, struct cli_calibration *cal, int *loaded)
{
    const char *path = r->rq.results;
    if (!r->rq.id) {
        if (store_experiments_list(store, latest_cb, &r->rq.id) < 0)
            return -1;
        if (!r->rq.id)
            return error("no experiments in %s yet", path);
        fprintf(stderr, "reporting experiment %lld, the latest in %s (see pgolab history)\n",
                (long long)r->rq.id, path);
    }
    if (experiment_load(store, r->rq.id, a) < 0)
        return -1;
    *loaded = 1;
    if (!r->id2 && cli_calibration_for(store, a, cal) < 0)
        return -1;
    if (r->id2) {
        if (experiment_load(store, r->id2, b) < 0)
            return -1;
        *loaded = 2;
    }
    if (opt_bool(&r->o, "exclude-distrusted")) {  /* every number without those runs */
        experiment_result_exclude_distrusted(&a->res);
        if (r->id2)
            experiment_result_exclude_distrusted(&b->res);
    }
    return 0;
}

/* The report of the loaded experiments to --output or stdout, then --profile's text and
 * --fail-if-slower: the exit code, or -1 (said) when nothing was written. */
static int report_write(struct report_cmd *r, const struct experiment_loaded *a,
                        const struct experiment_loaded *b)
{
    struct strbuf out = STRBUF_INIT;
    bool profile_done;
    int rc = report_stored(&out, &r->rq, a, r->id2 ? b : NULL, &profile_done);
    if (rc < 0 || (r->output && write_output(r->output, &out) < 0)) {
        strbuf_release(&out);
        return -1;
    }
    if (r->output)
        fprintf(stderr, "report written to %s\n", r->output);
    else if (out.len)
        fputs(out.buf, stdout);
    fflush(stdout);
    strbuf_release(&out);
    /* rc 1: a profile file was missing or truncated: said, rest written */
    if (r->rq.profile && !profile_done && report_stored_profiles_text(stdout, &r->rq, a))
        rc = 1;
    if (report_stored_verdict_after(&r->rq, r->id2 != 0))
        experiment_report_verdict(stdout, &a->cfg, &a->res);  /* after the profiles: last */
    if (r->fail_pct >= 0 && (r->id2 ? report_compare_fail_if_slower(a, b, r->fail_pct)
                                    : report_fail_if_slower(&a->cfg, &a->res, r->fail_pct)))
        rc = 3;
    return rc;
}

int cmd_report(int argc, char **argv)
{
    const struct opt_def *tables[] = { report_options };
    struct report_cmd r = { .fail_pct = -1, .chartjs = STRBUF_INIT };
    struct experiment_loaded a, b;
    struct cli_calibration cal = { 0 };
    struct store *store = NULL;
    int rc = 1, loaded = 0;

    memset(&a, 0, sizeof(a));
    memset(&b, 0, sizeof(b));
    if (cli_help(argc, argv, report_usage))
        return 0;
    if (cli_parse(&r.o, tables, 1, argc, argv, "report") == 0 && report_formats(&r) == 0 &&
        report_ids(&r) == 0) {
        r.rq.results = opt_str(&r.o, "results");
        if (cli_results_open_existing(r.rq.results, &store) == 0 &&
            report_load(&r, store, &a, &b, &cal, &loaded) == 0) {
            int w = report_write(&r, &a, &b);
            rc = w < 0 ? 1 : w;
        }
    }
    cli_calibration_release(&cal);
    if (loaded >= 1)
        experiment_loaded_release(&a);
    if (loaded >= 2)
        experiment_loaded_release(&b);
    opt_list_free(r.ids);
    strbuf_release(&r.chartjs);
    store_close(store);
    opts_release(&r.o);
    return rc;
}
