/* Unit tests of the experiment engine (src/experiment) and its reports (src/report/tables): run
 * order, cell statistics, the seed-shaped reports, JSON output, --fail-if-slower, and whole
 * experiments against a fake `pgolab` shell script, recorded in and resumed from the store. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "experiment/experiment.h"
#include "report/tables.h"
#include "store/store.h"
#include "util/options.h"
#include "util/strbuf.h"
#include "util/util.h"

#include "experiment_fixtures.h"

#include <dirent.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---------------------------------------------------------------- text report */

static void test_report_rows(void **state)
{
    (void)state;
    struct synth x;
    synth_make(&x, 3, 0);
    char *text = report_string(&x.cfg, &x.res);

    /* Every table (3 metrics x 1 workload) has a row per thread count and an Average row. */
    assert_int_equal(count_rows(text, "1"), 3);
    assert_int_equal(count_rows(text, "4"), 3);
    assert_int_equal(count_rows(text, "16"), 3);
    assert_int_equal(count_rows(text, "Average"), 3);
    assert_non_null(strstr(text, "Table 1. Transactions per second, oltp_read_only"));
    assert_non_null(strstr(text, "Table 2. Average response time (ms), oltp_read_only"));
    assert_non_null(strstr(text, "Table 3. 95th percentile response time (ms), oltp_read_only"));
    assert_non_null(strstr(text, "% improvement"));
    assert_non_null(strstr(text, "base"));
    assert_null(strstr(text, "INCOMPLETE"));
    /* 3 rounds per variant: the smallest possible Mann-Whitney p is 2/C(6,3) = 0.1, so even a
     * clean +20% is "~" and the report warns (stats_min_rounds(0.05) = 4). */
    assert_non_null(strstr(text, "change (95% CI)"));
    assert_non_null(strstr(text, "WARNING: with 3 rounds per variant no difference can ever be significant"));

    /* TPS, 16 threads: base 1600 (1590-1610), pgo 1920 (1915-1925); (1920-1600)/1600 = +20%. */
    assert_row(text, "Table 1.", "16", "1600.00 (1590.00-1610.00)", "1920.00 (1915.00-1925.00)",
               "+20.00");
    /* TPS Average: base (100 + 400 + 1600) / 3 = 700, pgo (120 + 480 + 1920) / 3 = 840;
     * improvement of the averages (840 - 700) / 700 * 100 = +20.00. */
    assert_row(text, "Table 1.", "Average", "700.00", "840.00", "+20.00");
    /* Average latency, every thread count: base 2.2 (2.0-2.4), pgo 1.6 (1.5-1.7):
     * (2.2 - 1.6) / 2.2 * 100 = 27.2727 -> "+27.27"; 3 decimals for values >= 1. */
    assert_row(text, "Table 2.", "Average", "2.200", "1.600", "+27.27");
    assert_row(text, "Table 2.", "4", "2.200 (2.000-2.400)");

    /* Columns line up: every line of a table has the same length. */
    const char *t1 = strstr(text, "Table 1."), *first = strchr(t1, '|');
    size_t width = strcspn(first, "\n");
    for (const char *line = first; *line == '|';) {
        assert_int_equal(strcspn(line, "\n"), width);
        line += strcspn(line, "\n") + 1;
    }
    free(text);

    /* Runs missing (the experiment stopped): the report says so and shows "-" cells. */
    x.res.nruns = 4; /* only round 1, threads 1 and 4 */
    text = report_string(&x.cfg, &x.res);
    assert_non_null(strstr(text, "INCOMPLETE: 4 of 18 runs finished"));
    assert_row(text, "Table 1.", "16", "-");
    free(text);
    x.res.nruns = 18;
    experiment_result_release(&x.res);

    /* One round: values without a spread. */
    synth_make(&x, 1, 0);
    text = report_string(&x.cfg, &x.res);
    assert_int_equal(count_rows(text, "Average"), 3);
    for (const char *line = strstr(text, "Table 1."); line && *line;) {
        if (*line == '|' && strncmp(line, "| threads", 9)) /* the header names "(95% CI)" */
            assert_true(memchr(line, '(', strcspn(line, "\n")) == NULL);
        line = strchr(line, '\n');
        line = line ? line + 1 : NULL;
    }
    /* Round 1: base 100, pgo 115 -> +15.00 */
    assert_row(text, "Table 1.", "1", "no statistics with 1 round", "100.00", "115.00", "+15.00");
    free(text);
    experiment_result_release(&x.res);
}

/* ---------------------------------------------------------------- whole experiment */

static void test_run_with_fake_child(void **state)
{
    (void)state;
    struct fake_dir fd;
    fake_dir_make(&fd);
    char *lib_broken = write_file(fd.dir, "lib-broken.so", "", 0644);
    char *workdir = xasprintf("%s/work/nested", fd.dir);
    struct variant v[2];
    struct experiment_config cfg;
    struct experiment_result res;
    fake_config(&cfg, v, &fd, workdir, 3, 11);

    assert_int_equal(experiment_fingerprint(&cfg), 0);
    /* sha256 of the empty file (FIPS 180-4 test vector). */
    assert_string_equal(v[0].sha256,
                        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    assert_string_equal(v[1].version, "3.99.0");
    assert_string_equal(v[1].source_id, "fake-id");
    assert_string_equal(v[1].loaded_from, fd.lib_fast);

    assert_int_equal(experiment_run(&cfg, &res), 0);
    assert_null(res.error);
    assert_int_equal(res.nruns, 12); /* 3 rounds x 2 thread counts x 2 variants */
    assert_non_null(strstr(res.env_json, "\"cores\""));
    for (int i = 0; i < res.nruns; i += 2) {
        const struct run_result *a = &res.runs[i], *b = &res.runs[i + 1];
        int order[2];
        /* Each block runs both variants once, in the order experiment_order() gives. */
        assert_int_equal(a->round, b->round);
        assert_int_equal(a->threads, b->threads);
        assert_int_equal(a->round, i / 4 + 1);
        assert_int_equal(a->threads, threads2[(i / 2) % 2]);
        experiment_order(11, a->round, (i / 2) % 2, 2, order);
        assert_int_equal(a->variant, order[0]);
        assert_int_equal(b->variant, order[1]);
        for (int k = 0; k < 2; k++) {
            const struct run_result *r = k ? b : a;
            assert_float_equal(r->tps, r->variant == 1 ? 125.0 : 100.0, 1e-9);
            assert_non_null(strstr(r->json, "\"threads\":"));
        }
    }
    struct cell_stats c = experiment_cell(&res, 1, 0, 2, METRIC_TPS);
    assert_int_equal(c.n, 3);
    assert_float_equal(experiment_improvement(METRIC_TPS, 100, c.median), 25.0, 1e-9);
    /* Database files are removed as it goes; the logs stay. */
    assert_int_equal(count_files(workdir, ".db"), 0);
    assert_int_equal(count_files(workdir, ".log"), 13); /* 1 prepare + 12 runs */
    experiment_result_release(&res);

    /* A child that ran another SQLite than the fingerprinted one is an error, not a result. */
    free(v[1].source_id);
    v[1].source_id = xstrdup("another-id");
    cfg.rounds = 1;
    assert_int_equal(experiment_run(&cfg, &res), -1);
    assert_non_null(strstr(res.error, "wrong library"));
    assert_non_null(strstr(res.error, "another-id"));
    experiment_result_release(&res);
    cfg.rounds = 3;

    /* A failing child stops the experiment with a one-line message; finished runs are kept. */
    v[1].name = "broken";
    v[1].library = lib_broken;
    free(v[1].source_id);
    v[1].source_id = NULL;
    assert_int_equal(experiment_run(&cfg, &res), -1);
    assert_non_null(res.error);
    assert_null(strchr(res.error, '\n'));
    assert_non_null(strstr(res.error, "variant broken"));
    assert_non_null(strstr(res.error, "oltp_read_only"));
    assert_non_null(strstr(res.error, "threads=1"));
    assert_non_null(strstr(res.error, "round 1/3"));
    assert_non_null(strstr(res.error, "FATAL: boom"));
    assert_in_range(res.nruns, 0, 1);
    for (int i = 0; i < res.nruns; i++)
        assert_int_equal(res.runs[i].variant, 0);
    experiment_result_release(&res);

    /* A prepare failure names the workload and shows the log's tail. */
    v[0].library = lib_broken;
    char *bad[] = { "no_such_workload", NULL };
    const char *fail_exe = write_file(fd.dir, "fail", "#!/bin/sh\necho 'unknown test' >&2\nexit 1\n", 0755);
    cfg.pgolab = fail_exe;
    cfg.workloads = bad;
    assert_int_equal(experiment_run(&cfg, &res), -1);
    assert_non_null(strstr(res.error, "prepare of no_such_workload"));
    assert_non_null(strstr(res.error, "unknown test"));
    assert_int_equal(res.nruns, 0);
    experiment_result_release(&res);
    free((char *)fail_exe);

    for (int i = 0; i < 2; i++)
        experiment_variant_release(&v[i]);
    fake_dir_remove(&fd);
    free(lib_broken);
    free(workdir);
}

/* ---------------------------------------------------------------- report shapes */

/* --warmup-runs: warm-up runs happen first (each variant, each thread count, warmup_runs
 * times), are discarded (not in res), and the measured runs follow as without them. */
static void test_warmup_runs(void **state)
{
    (void)state;
    struct fake_dir fd;
    fake_dir_make(&fd);
    struct variant v[2];
    struct experiment_config cfg;
    struct experiment_result res;
    fake_config(&cfg, v, &fd, fd.dir, 1, 5);
    cfg.warmup_runs = 2;
    FILE *f = run_logged(&cfg, &res, &fd, 4);  /* only the measured runs */
    char line[256];
    int n = 0, per[2][3] = { { 0 } };
    while (fgets(line, sizeof(line), f)) {
        int th = 0;
        char lib[64];
        assert_int_equal(sscanf(line, "%63s %d", lib, &th), 2);
        if (n < 8) /* the warm-ups come first: 2 per variant and thread count */
            per[strstr(lib, "fast") != NULL][th]++;
        n++;
    }
    fclose(f);
    assert_int_equal(n, 8 + 4);
    for (int vi = 0; vi < 2; vi++)
        for (int th = 1; th <= 2; th++)
            assert_int_equal(per[vi][th], 2);
    char *settings = experiment_settings_json(&cfg, NULL);
    assert_non_null(strstr(settings, "\"warmup_runs\":2"));
    free(settings);
    cfg.warmup_runs = 0;
    settings = experiment_settings_json(&cfg, NULL);
    assert_null(strstr(settings, "warmup_runs"));
    free(settings);
    experiment_result_release(&res);
    assert_int_equal(fake_dir_remove(&fd), 0);
}

/* --reset: which data each run starts from. Each fake run appends to its database and logs
 * how many runs that database had seen: run = always 0; round = 0, 1 within a variant's round
 * (2 thread counts), then 0 again; variant = 0..3 over 2 rounds x 2 thread counts, on data
 * prepared by the variant itself. */
static void test_reset_modes(void **state)
{
    (void)state;
    static const enum experiment_reset modes[] = { RESET_RUN, RESET_ROUND, RESET_VARIANT };
    for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
        struct fake_dir fd;
        fake_dir_make(&fd);
        struct variant v[2];
        struct experiment_config cfg;
        struct experiment_result res;
        fake_config(&cfg, v, &fd, fd.dir, 2, 9);
        cfg.reset = modes[m];
        FILE *f = run_logged(&cfg, &res, &fd, 8);
        char line[256], lib[64], prep[64];
        int th, seen, n = 0, count[2] = { 0, 0 };
        while (fgets(line, sizeof(line), f)) {
            assert_int_equal(sscanf(line, "%63s %d %d %63s", lib, &th, &seen, prep), 4);
            int vi = strstr(lib, "fast") != NULL;
            int k = count[vi]++;  /* this variant's k-th run, in run order */
            int want = modes[m] == RESET_RUN ? 0 : modes[m] == RESET_ROUND ? k % 2 : k;
            print_message("%s: %s run %d saw %d (want %d), prepared by %s\n",
                          experiment_reset_name(modes[m]), lib, k, seen, want, prep);
            assert_int_equal(seen, want);
            /* run and round: the baseline's data; variant: its own */
            assert_string_equal(prep, modes[m] == RESET_VARIANT ? lib : "lib-base.so");
            n++;
        }
        fclose(f);
        assert_int_equal(n, 8);
        experiment_result_release(&res);
        assert_int_equal(fake_dir_remove(&fd), 0);
    }
    enum experiment_reset r;
    assert_int_equal(experiment_reset_parse("round", &r), 0);
    assert_int_equal(r, RESET_ROUND);
    assert_int_equal(experiment_reset_parse("never", &r), -1);
}

static void test_report_seed003(void **state)
{
    (void)state;
    struct synth x;
    synth_make(&x, 3, 12);
    x.cfg.kind = "compare";
    char *text = shape_string(&x.cfg, &x.res, REPORT_SEED003, REPORT_TEXT);

    /* The header names the experiment. */
    assert_true(!strncmp(text, "pgolab experiment 12 (compare): 2 variants", 42));
    /* One table per workload and thread count. */
    assert_non_null(strstr(text, "Table 1. oltp_read_only, 1 thread: latency (ms) and QPS, "
                                 "median of 3 rounds"));
    assert_non_null(strstr(text, "Table 2. oltp_read_only, 4 threads:"));
    assert_non_null(strstr(text, "Table 3. oltp_read_only, 16 threads:"));
    assert_null(strstr(text, "Table 4."));
    /* 4 threads, medians over rounds: min = avg/2: base 2.2/2 = 1.1, pgo 1.6/2 = 0.8 (four
     * decimals: the row's smallest value is below 1); avg 2.2 / 1.6; max = 2 p95 = 4 avg:
     * 8.8 / 6.4; p95 4.4 / 3.2; QPS = 16 tps: 6400 / 7680. */
    assert_row(text, "Table 2.", "min (ms)", "1.1000", "0.8000");
    assert_row(text, "Table 2.", "avg (ms)", "2.200", "1.600");
    assert_row(text, "Table 2.", "max (ms)", "8.800", "6.400");
    assert_row(text, "Table 2.", "95%ile (ms)", "4.400", "3.200");
    /* 3 rounds can never be significant (smallest p 0.1): "~" (the last column). */
    assert_row(text, "Table 2.", "QPS", "6400.00", "7680.00", " ~ |");
    assert_non_null(strstr(text, "| change (95% CI) |"));
    free(text);

    /* Markdown: headings and a list instead of the indented header. */
    text = shape_string(&x.cfg, &x.res, REPORT_SEED003, REPORT_MARKDOWN);
    assert_true(!strncmp(text, "## pgolab experiment 12", 23));
    assert_non_null(strstr(text, "\n- baseline base"));
    assert_non_null(strstr(text, "\n### Table 1. oltp_read_only, 1 thread"));
    assert_non_null(strstr(text, "\n|------"));
    free(text);
    experiment_result_release(&x.res);

    /* One round: no statistics. */
    synth_make(&x, 1, 0);
    text = shape_string(&x.cfg, &x.res, REPORT_SEED003, REPORT_TEXT);
    assert_row(text, "Table 1.", "QPS", "no statistics with 1 round");
    free(text);
    experiment_result_release(&x.res);
}

static void test_report_seed002(void **state)
{
    (void)state;
    struct synth x;
    synth_make(&x, 3, 0);
    char *text = shape_string(&x.cfg, &x.res, REPORT_SEED002, REPORT_TEXT);

    assert_non_null(strstr(text, "Table 1. Speedup (x) vs base (ratio of median tps)"));
    assert_non_null(strstr(text, "speedup (x) = base's median time per transaction"));
    /* A row per variant over all cells, then per thread count: 2 x (1 + 3) rows. */
    assert_int_equal(count_rows(text, "base"), 4);
    assert_int_equal(count_rows(text, "pgo"), 4);
    assert_line(text, " base | ", " 16 | ", "1600.00", "1.000", "baseline");
    /* 16 threads: 1920 / 1600 = 1.200, not significant with 3 rounds. */
    assert_line(text, " pgo | ", " 16 | ", "1920.00", "1.200", " ~ |");
    /* Over all cells: every ratio is 1.2, so the geometric mean is 1.200; the 9 pooled pgo
     * rounds (each over its cell's baseline median: 1.15..1.25) all lie above the 9 baseline
     * ones (0.9..1.1), so the pooled test is significant: "faster". */
    assert_line(text, " pgo | ", " all | ", "1.200", "faster");
    free(text);
    experiment_result_release(&x.res);

    synth_make(&x, 1, 0);
    text = shape_string(&x.cfg, &x.res, REPORT_SEED002, REPORT_TEXT);
    assert_line(text, " pgo | ", " 1 | ", "1.150" /* 115 / 100 */, "no statistics with 1 round");
    free(text);
    experiment_result_release(&x.res);
}

/* Number of comma-separated fields of a CSV line without quotes. */
static int csv_fields(const char *line)
{
    int n = 1;
    for (; *line && *line != '\n'; line++)
        n += *line == ',';
    return n;
}

static void test_report_csv_json(void **state)
{
    (void)state;
    struct synth x;
    synth_make(&x, 3, 7);

    /* seed000 CSV: a header, then 3 metrics x (3 thread rows + Average) x 2 variants. */
    char *csv = shape_string(&x.cfg, &x.res, REPORT_SEED000, REPORT_CSV);
    assert_int_equal(count_lines(csv), 1 + 24);
    assert_true(!strncmp(csv, "experiment,shape,table,workload,threads,metric,variant,", 55));
    int fields = csv_fields(csv);
    assert_int_equal(fields, 26);
    for (const char *line = csv; *line; line = strchr(line, '\n') + 1)
        assert_int_equal(csv_fields(line), fields);
    /* tps at 16 threads for pgo: value 1920, baseline 1600, +20%, 3 rounds 1915..1925,
     * ratio 1.2, p >= 0.1 so not significant ("~"). */
    assert_line(csv, "7,seed000,1,oltp_read_only,16,tps,pgo,0,1920,1600,20,3,1920,", NULL,
                ",1915,1925,1.2,", ",0,~");
    /* The Average row has threads "all" and the geometric-mean change. */
    char *line = line_with(csv, ",all,tps,pgo,0,840,700,20,", NULL);
    assert_non_null(line);
    free(line);
    free(csv);

    /* seed002 JSON: every cell with its statistics. */
    char *js = shape_string(&x.cfg, &x.res, REPORT_SEED002, REPORT_JSON);
    json_error_t je;
    json_t *root = json_loads(js, 0, &je);
    assert_non_null(root);
    assert_string_equal(json_string_value(json_object_get(root, "shape")), "seed002");
    json_t *exp = json_object_get(root, "experiment");
    assert_int_equal(json_integer_value(json_object_get(exp, "id")), 7);
    assert_true(json_is_true(json_object_get(exp, "complete")));
    json_t *cells = json_object_get(root, "cells");
    assert_int_equal(json_array_size(cells), 8); /* 2 variants x (all + 3 thread counts) */
    int seen_all = 0, seen_16 = 0;
    for (size_t i = 0; i < json_array_size(cells); i++) {
        json_t *c = json_array_get(cells, i);
        const char *var = json_string_value(json_object_get(c, "variant"));
        json_t *vs = json_object_get(c, "vs_baseline");
        assert_string_equal(json_string_value(json_object_get(c, "metric")), "speedup");
        if (!strcmp(var, "base")) {
            assert_true(json_is_null(vs));
            assert_float_equal(json_number_value(json_object_get(c, "value")), 1.0, 1e-12);
            continue;
        }
        assert_float_equal(json_number_value(json_object_get(vs, "ratio")), 1.2, 1e-9);
        if (json_is_null(json_object_get(c, "threads"))) {
            seen_all++;
            assert_true(json_is_true(json_object_get(vs, "significant")));
            assert_true(json_is_true(json_object_get(vs, "pooled")));
            json_t *ci = json_object_get(vs, "ratio_ci");
            assert_true(json_number_value(json_array_get(ci, 0)) > 1.0);
            assert_true(json_number_value(json_array_get(ci, 1)) >= 1.2);
        } else if (json_integer_value(json_object_get(c, "threads")) == 16) {
            seen_16++;
            assert_true(json_is_false(json_object_get(vs, "significant")));
            assert_string_equal(json_string_value(json_object_get(vs, "verdict")), "~");
            json_t *rounds = json_object_get(c, "rounds");
            assert_int_equal(json_integer_value(json_object_get(rounds, "n")), 3);
            assert_int_equal(json_array_size(json_object_get(rounds, "values")), 3);
            assert_float_equal(json_number_value(json_object_get(rounds, "median")), 1920, 1e-9);
        }
    }
    assert_int_equal(seen_all, 1);
    assert_int_equal(seen_16, 1);
    json_decref(root);
    free(js);
    experiment_result_release(&x.res);
}

/* ---------------------------------------------------------------- --fail-if-slower */

static void test_report_slower(void **state)
{
    (void)state;
    struct experiment_config cfg;
    struct variant v[2];
    struct experiment_result res;
    struct strbuf why = STRBUF_INIT;

    /* 30% slower in 5 rounds: every thread row and the Average are significant. */
    synthetic_config(&cfg, v, 5);
    slow_runs(&res, 5, 0.7);
    assert_int_equal(report_slower(&cfg, &res, 5, &why), 4);
    assert_non_null(strstr(why.buf, "pgo vs base, oltp_read_only, 1 thread: tps -30"));
    assert_non_null(strstr(why.buf, "pgo vs base, oltp_read_only, 16 threads: tps -"));
    assert_non_null(strstr(why.buf, "Average over thread counts: tps -"));
    assert_non_null(strstr(why.buf, "(95% CI"));
    /* ... but not by more than 40%. */
    strbuf_reset(&why);
    assert_int_equal(report_slower(&cfg, &res, 40, &why), 0);
    assert_int_equal(why.len, 0);
    experiment_result_release(&res);

    /* Faster is never "slower". */
    slow_runs(&res, 5, 1.3);
    assert_int_equal(report_slower(&cfg, &res, 0, &why), 0);
    experiment_result_release(&res);

    /* 3 rounds: no thread row can be significant (smallest p 0.1), however large the drop
     * looks; only the Average, whose test pools the 9 rounds of the 3 rows, can be. */
    synthetic_config(&cfg, v, 3);
    slow_runs(&res, 3, 0.5);
    strbuf_reset(&why);
    assert_int_equal(report_slower(&cfg, &res, 5, &why), 1);
    assert_non_null(strstr(why.buf, "Average over thread counts"));
    experiment_result_release(&res);
    /* ... and with one thread count there is no Average row. */
    cfg.nthreads = 1;
    slow_runs(&res, 3, 0.5);
    assert_int_equal(report_slower(&cfg, &res, 5, &why), 0);
    experiment_result_release(&res);
    strbuf_release(&why);
}

/* ---------------------------------------------------------------- the results store */

/* Record synthetic runs (res) as a new experiment of store s; the pgo variant's tps scaled by
 * factor. Returns the id. */
static int64_t record_synthetic(struct store *s, struct experiment_config *cfg,
                                const struct experiment_result *res, double factor)
{
    int dummy = stderr_begin("/dev/null");
    cfg->experiment_id = 0;
    assert_int_equal(experiment_record_begin(cfg, s, "compare", NULL), 0);
    free(stderr_end(dummy, "/dev/null"));
    for (int i = 0; i < res->nruns; i++) {
        const struct run_result *r = &res->runs[i];
        struct store_run sr = {
            .variant_idx = r->variant, .workload = cfg->workloads[r->workload],
            .threads = r->threads, .round = r->round, .seq = STORE_SEQ_NEXT,
            .started_at = NAN, .duration_s = NAN,
            .tps = r->variant ? r->tps * factor : r->tps, .qps = r->qps,
            .lat_min_ms = r->lat_min_ms, .lat_avg_ms = r->lat_avg_ms,
            .lat_p95_ms = r->lat_p95_ms, .lat_max_ms = r->lat_max_ms,
            .transactions = r->transactions, .report_json = r->json,
        };
        assert_int_equal(store_run_add(s, cfg->experiment_id, &sr), 0);
    }
    assert_int_equal(store_experiment_finish(s, cfg->experiment_id, "complete"), 0);
    return cfg->experiment_id;
}

/* `pgolab report --compare`: two stored experiments, the second on "another machine" with pgo
 * 30% slower. */
static void test_report_compare(void **state)
{
    (void)state;
    char dir[] = "/tmp/pgolab-test-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char *dbpath = xasprintf("%s/results.db", dir);
    struct experiment_config cfg;
    struct variant v[2];
    struct experiment_result res;
    struct experiment_loaded a, b;
    struct store *s;
    struct strbuf out = STRBUF_INIT, why = STRBUF_INIT;

    synthetic_config(&cfg, v, 5);
    v[0].sha256 = xstrdup("aaaa00112233445566778899aabbccddeeff00112233445566778899aabbccdd");
    v[1].sha256 = xstrdup("bbbb00112233445566778899aabbccddeeff00112233445566778899aabbccdd");
    slow_runs(&res, 5, 1.0);
    assert_int_equal(store_open(dbpath, &s), 0);
    assert_int_equal(record_synthetic(s, &cfg, &res, 1.0), 1);
    assert_int_equal(record_synthetic(s, &cfg, &res, 0.7), 2);
    experiment_result_release(&res);
    /* Experiment 2 "ran on another machine": change its recorded hostname. */
    sqlite3 *db;
    assert_int_equal(sqlite3_open(dbpath, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "UPDATE experiments SET environment_json ="
                                      " json_set(environment_json, '$.hostname', 'other-host')"
                                      " WHERE id = 2",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(db);

    assert_int_equal(experiment_load(s, 1, &a), 0);
    assert_int_equal(experiment_load(s, 2, &b), 0);
    report_compare(&out, &a, &b, REPORT_TEXT);
    assert_true(!strncmp(out.buf, "pgolab report: experiment 1 vs experiment 2", 43));
    assert_non_null(strstr(out.buf, "WARNING: experiments 1 and 2 ran in different environments"));
    assert_non_null(strstr(out.buf, " -> other-host\n"));
    assert_non_null(strstr(out.buf, "variant pgo: the same build in both (sha256 bbbb00112233)"));
    assert_non_null(strstr(out.buf, "Table 1. Transactions per second"));
    char *head = line_with(out.buf, "| variant |", " threads |", NULL);
    if (!head || !strstr(head, " experiment 1 ") || !strstr(head, " experiment 2 "))
        fail_msg("no table header in:\n%s", out.buf);
    free(head);
    /* base is unchanged ("~"); pgo is 30% slower in every cell, significant with 5 rounds. */
    assert_line(out.buf, " base | ", " 16 | ", " ~ |");
    assert_line(out.buf, " pgo | ", " 16 | ", "-30.0% (95% CI");
    /* The warning comes before the first table. */
    assert_true(strstr(out.buf, "WARNING") < strstr(out.buf, "Table 1."));
    assert_int_equal(report_compare_slower(&a, &b, 5, &why), 3);
    assert_non_null(strstr(why.buf, "pgo in experiment 2 vs experiment 1, oltp_read_only, 1 thread: "
                                    "tps -30.0%"));
    strbuf_reset(&why);
    assert_int_equal(report_compare_slower(&b, &a, 5, &why), 0); /* the other way: faster */

    /* CSV: a header and 3 metrics x 6 cells; JSON names the difference. */
    strbuf_reset(&out);
    report_compare(&out, &a, &b, REPORT_CSV);
    assert_int_equal(count_lines(out.buf), 1 + 18);
    strbuf_reset(&out);
    report_compare(&out, &a, &b, REPORT_JSON);
    json_t *root = json_loads(out.buf, 0, NULL);
    assert_non_null(root);
    json_t *d = json_object_get(root, "environment_differences");
    assert_int_equal(json_array_size(d), 1);
    assert_non_null(strstr(json_string_value(json_array_get(d, 0)), "hostname: "));
    assert_int_equal(json_array_size(json_object_get(root, "cells")), 18);
    json_decref(root);

    /* On its own, experiment 2 fails --fail-if-slower (3 thread rows + the Average), 1 not. */
    strbuf_reset(&why);
    assert_int_equal(report_slower(&b.cfg, &b.res, 5, &why), 4);
    strbuf_reset(&why);
    assert_int_equal(report_slower(&a.cfg, &a.res, 5, &why), 0);

    experiment_loaded_release(&a);
    experiment_loaded_release(&b);
    store_close(s);
    experiment_variant_release(&v[0]);
    experiment_variant_release(&v[1]);
    strbuf_release(&out);
    strbuf_release(&why);
    unlink(dbpath);
    char *wal = xasprintf("%s-wal", dbpath), *shm = xasprintf("%s-shm", dbpath);
    unlink(wal);
    unlink(shm);
    free(wal);
    free(shm);
    rmdir(dir);
    free(dbpath);
}

/* ---------------------------------------------------------------- OPT_MULTI */

/* The repeatable option compare uses for --variant (util/options). */
static void test_opt_multi(void **state)
{
    (void)state;
    static const struct opt_def defs[] = {
        { "variant", OPT_MULTI, NULL, "a variant" },
        { "mode", OPT_MULTI, "x", "with a default" },
        OPT_END,
    };
    const struct opt_def *tables[] = { defs };
    struct opts o;
    char *argv[] = { "--variant=A=sqlite:/a", "run", "--variant", "B=sqlite:/b", "--variant=A=x" };
    int n;

    opts_init(&o, tables, 1);
    const char *const *m = opt_multi(&o, "variant", &n);
    assert_int_equal(n, 0);
    assert_null(m[0]);
    m = opt_multi(&o, "mode", &n);
    assert_int_equal(n, 1);
    assert_string_equal(m[0], "x");

    assert_int_equal(opts_parse(&o, 5, argv), 0); /* "--variant B=..." as two words too */
    m = opt_multi(&o, "variant", &n);
    assert_int_equal(n, 3);
    assert_string_equal(m[0], "A=sqlite:/a");
    assert_string_equal(m[1], "B=sqlite:/b");
    assert_string_equal(m[2], "A=x");
    assert_null(m[3]);
    assert_string_equal(opt_str(&o, "variant"), "A=x"); /* the last one */
    assert_int_equal(o.nargs, 1);
    /* The first given value replaces the default. */
    assert_int_equal(opts_set(&o, "mode", "y"), 0);
    assert_int_equal(opts_set(&o, "mode", "z"), 0);
    m = opt_multi(&o, "mode", &n);
    assert_int_equal(n, 2);
    assert_string_equal(m[0], "y");
    assert_string_equal(m[1], "z");
    opts_release(&o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_report_rows),
        cmocka_unit_test(test_run_with_fake_child),
        cmocka_unit_test(test_warmup_runs),
        cmocka_unit_test(test_reset_modes),
        cmocka_unit_test(test_report_seed003),
        cmocka_unit_test(test_report_seed002),
        cmocka_unit_test(test_report_csv_json),
        cmocka_unit_test(test_report_slower),
        cmocka_unit_test(test_report_compare),
        cmocka_unit_test(test_opt_multi),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
