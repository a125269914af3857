/* report: `pgolab report`, the tables of an experiment rebuilt from the results database (seed
 * 000, 003 or 002 shape; text, markdown, csv or json; or html, report/html.h), or two
 * experiments compared; --output writes any of them to a file. */
#include "cli/cli.h"
#include "cli/common.h"
#include "experiment/experiment.h"
#include "report/html.h"
#include "report/profiles.h"
#include "report/tables.h"
#include "report/trainers.h"
#include "store/store.h"
#include "util/fs.h"
#include "util/options.h"
#include "util/strbuf.h"
#include "util/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const struct opt_def report_options[] = {
    { "experiment", OPT_INT, NULL, "the experiment to report (default: the latest; see pgolab history)" },
    { "compare", OPT_STRING, NULL, "ID1,ID2: compare two experiments (e.g. the same builds on two machines)" },
    { "results", OPT_STRING, STORE_DEFAULT_PATH, "results database" },
    { "format", OPT_STRING, "text", "text, markdown, csv, json or html (one self-contained page with charts; Chart.js from libjs-chart.js inlined; use with --output); folded (with --profile): the stacks of every profiled run, VARIANT;WORKLOAD;frame;...;frame COUNT" },
    { "shape", OPT_STRING, "seed000", "seed000 (tps/avg/p95 per thread count), seed003 (min/avg/max/p95 latency and QPS per variant), seed002 (speedup (x) per variant), runs (every measured run as a row, with its system metrics and trust; csv for a spreadsheet)" },
    { "profile", OPT_BOOL, "off", "also the CPU profiles of a --profile experiment: every variant's top-30 functions beside the baseline's, with their spread across rounds (text; markdown appends them as tables); with --format=csv or json only the profiles, one row per DSO or function (docs/results-format.md); with --format=folded only the folded stacks, for flame-graph tools" },
    { "output", OPT_STRING, NULL, "write the report to FILE instead of stdout (e.g. report.html)" },
    { "fail-if-slower", OPT_DOUBLE, NULL, "exit 3 when a variant is significantly slower than the baseline (tps) by more than PCT percent (with --compare: ID2 than ID1)" },
    OPT_END,
};

static void report_usage(void)
{
    printf("Usage: pgolab report [--experiment=ID] [--results=FILE] [--format=F] [--shape=S]\n"
           "       pgolab report --compare=ID1,ID2 [--results=FILE] [--format=F]\n"
           "       pgolab report [--experiment=ID | --compare=ID1,ID2] --format=html --output=FILE.html\n"
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

/* The side-by-side CPU profiles of experiment id as text (for the HTML page), or NULL when
 * it has none. */
static char *html_profiles(const char *results, int64_t id, const struct experiment_loaded *l)
{
    char *buf = NULL;
    size_t len = 0;
    if (!experiment_has_profiles(&l->res))
        return NULL;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        die("out of memory");
    char *dir = experiment_profile_dir(results, id);
    experiment_profile_report(f, &l->cfg, &l->res, dir, PROFILE_TOP_DEFAULT);
    free(dir);
    fclose(f);
    return buf;
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

int cmd_report(int argc, char **argv)
{
    const struct opt_def *tables[] = { report_options };
    struct experiment_loaded a, b;
    struct cli_calibration cal = { 0 };
    struct strbuf out = STRBUF_INIT, chartjs = STRBUF_INIT;
    struct store *store = NULL;
    enum report_format fmt;
    enum report_shape shape;
    struct opts o;
    int64_t id = 0, id2 = 0;
    double fail_pct = -1;
    char **ids = NULL;
    int rc = 1, nids = 0, loaded = 0, profile_bad = 0;

    memset(&a, 0, sizeof(a));
    memset(&b, 0, sizeof(b));
    if (cli_help(argc, argv, report_usage))
        return 0;
    if (cli_parse(&o, tables, 1, argc, argv, "report") < 0)
        goto out;
    bool want_profile = opt_bool(&o, "profile");
    bool folded = !strcmp(opt_str(&o, "format"), "folded");
    bool html = !strcmp(opt_str(&o, "format"), "html");
    const char *output = opt_is_set(&o, "output") ? opt_str(&o, "output") : NULL;
    if (html && opt_is_set(&o, "shape")) {
        error("--shape is for the text formats; --format=html shows the seed-000 tables and charts");
        goto out;
    }
    if (html && want_profile) {
        error("--format=html includes the CPU profiles when the experiment has them; drop --profile");
        goto out;
    }
    if (output && want_profile && !strcmp(opt_str(&o, "format"), "text")) {
        error("--output is for the report, not --profile's text: redirect stdout, or use "
              "--format=markdown, csv or json");
        goto out;
    }
    if (output && check_writable("--output", output) < 0)
        goto out;
    if (html && report_html_chartjs(&chartjs) < 0)
        goto out;
    if (folded && !want_profile) {
        error("--format=folded is the profiles' stacks: add --profile");
        goto out;
    }
    if (want_profile && opt_is_set(&o, "compare")) {
        error("--profile is for one experiment (its variants side by side), not --compare");
        goto out;
    }
    if ((!folded && !html && report_format_parse(opt_str(&o, "format"), &fmt) < 0) ||
        report_shape_parse(opt_str(&o, "shape"), &shape) < 0)
        goto out;
    if (folded || html)
        fmt = REPORT_TEXT;
    if (cli_fail_if_slower(&o, &fail_pct) < 0)
        goto out;
    if (opt_is_set(&o, "experiment") && parse_id(opt_str(&o, "experiment"), "--experiment", &id) < 0)
        goto out;
    if (opt_is_set(&o, "compare")) {
        if (opt_is_set(&o, "experiment")) {
            error("--experiment and --compare do not go together (--compare=ID1,ID2 names both)");
            goto out;
        }
        if (opt_is_set(&o, "shape")) {
            error("--shape is for one experiment; --compare has its own table");
            goto out;
        }
        ids = split_list(opt_str(&o, "compare"), &nids);
        if (nids != 2) {
            error("--compare wants two experiment ids, ID1,ID2 (got '%s')", opt_str(&o, "compare"));
            goto out;
        }
        if (parse_id(ids[0], "--compare id", &id) < 0 || parse_id(ids[1], "--compare id", &id2) < 0)
            goto out;
    }
    const char *path = opt_str(&o, "results");
    if (cli_results_open_existing(path, &store) < 0)
        goto out;
    if (!id) {
        if (store_experiments_list(store, latest_cb, &id) < 0)
            goto out;
        if (!id) {
            error("no experiments in %s yet", path);
            goto out;
        }
        fprintf(stderr, "reporting experiment %lld, the latest in %s (see pgolab history)\n",
                (long long)id, path);
    }
    if (experiment_load(store, id, &a) < 0)
        goto out;
    loaded = 1;
    if (!id2 && cli_calibration_for(store, &a, &cal) < 0)
        goto out;
    if (id2) {
        if (experiment_load(store, id2, &b) < 0)
            goto out;
        loaded = 2;
        if (html)
            report_html_compare(&out, &a, &b, chartjs.buf);
        else
            report_compare(&out, &a, &b, fmt);
    } else if (html) {
        char *profiles = html_profiles(path, id, &a);
        report_html_experiment(&out, &a, chartjs.buf, profiles);
        free(profiles);
    } else if (!folded && !(want_profile && (fmt == REPORT_CSV || fmt == REPORT_JSON))) {
        /* a pgo experiment with several trainers: the matrix pgo printed after the tables */
        const char **trainer_of = report_trainers_of(&a);
        report_experiment_trainers(&out, &a.cfg, &a.res, shape, fmt, trainer_of);
        free(trainer_of);
    }
    if (want_profile && (fmt == REPORT_MARKDOWN || fmt == REPORT_CSV || fmt == REPORT_JSON)) {
        /* the profiles as data (csv, json: they alone) or appended to the markdown report */
        if (!experiment_has_profiles(&a.res)) {
            error("experiment %lld has no CPU profiles (it ran without --profile)",
                  (long long)id);
            goto out;
        }
        char *dir = experiment_profile_dir(path, id);
        profile_bad = report_profiles(&out, fmt, &a.cfg, &a.res, dir, PROFILE_TOP_DEFAULT);
        free(dir);
        want_profile = false;  /* done: not printed again as text below */
    }
    if (output) {
        if (write_output(output, &out) < 0)
            goto out;
        fprintf(stderr, "report written to %s\n", output);
    } else if (out.len) {
        fputs(out.buf, stdout);
    }
    fflush(stdout);
    rc = profile_bad ? 1 : 0;  /* a profile file was missing or truncated: said, rest written */
    if (want_profile) {
        char *dir = experiment_profile_dir(path, id);
        if (!experiment_has_profiles(&a.res)) {
            error("experiment %lld has no CPU profiles (it ran without --profile)",
                  (long long)id);
            rc = 1;
        } else if ((folded ? experiment_profile_folded(stdout, &a.cfg, &a.res, dir)
                           : experiment_profile_report(stdout, &a.cfg, &a.res, dir,
                                                       PROFILE_TOP_DEFAULT)) > 0) {
            rc = 1;  /* a profile file was missing or truncated: said, the rest printed */
        }
        free(dir);
        fflush(stdout);
    }
    if (fail_pct >= 0 && (id2 ? report_compare_fail_if_slower(&a, &b, fail_pct)
                              : report_fail_if_slower(&a.cfg, &a.res, fail_pct)))
        rc = 3;
out:
    cli_calibration_release(&cal);
    if (loaded >= 1)
        experiment_loaded_release(&a);
    if (loaded >= 2)
        experiment_loaded_release(&b);
    opt_list_free(ids);
    strbuf_release(&out);
    strbuf_release(&chartjs);
    store_close(store);
    opts_release(&o);
    return rc;
}
