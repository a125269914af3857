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
#include "report/trainers.h"
#include "store/store.h"
#include "util/options.h"
#include "util/strbuf.h"
#include "util/util.h"

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

/* ---------------------------------------------------------------- helpers */

static char *workloads1[] = { "oltp_read_only", NULL };
static int threads2[] = { 1, 2 };
static int threads3[] = { 1, 4, 16 };

/* A config with variants base and pgo, one workload, threads 1,4,16. */
static void synthetic_config(struct experiment_config *cfg, struct variant *v, int rounds)
{
    memset(cfg, 0, sizeof(*cfg));
    memset(v, 0, 2 * sizeof(*v));
    v[0].name = "base";
    v[0].library = "/opt/base/libsqlite3.so";
    v[1].name = "pgo";
    v[1].library = "/opt/pgo/libsqlite3.so";
    cfg->variants = v;
    cfg->nvariants = 2;
    cfg->workloads = workloads1;
    cfg->nworkloads = 1;
    cfg->threads = threads3;
    cfg->nthreads = 3;
    cfg->rounds = rounds;
    cfg->time_s = 10;
    cfg->tables = 1;
    cfg->table_size = 10000;
    cfg->workdir = "/nonexistent";
    cfg->pgolab = "pgolab";
    cfg->seed = 7;
}

static void add_run(struct experiment_result *res, int variant, int threads, int round,
                    double tps, double avg, double p95)
{
    res->runs = xrealloc(res->runs, sizeof(*res->runs) * (size_t)(res->nruns + 1));
    struct run_result *r = &res->runs[res->nruns++];
    memset(r, 0, sizeof(*r));
    r->variant = variant;
    r->workload = 0;
    r->threads = threads;
    r->round = round;
    r->tps = tps;
    r->qps = tps * 16;
    r->lat_avg_ms = avg;
    r->lat_p95_ms = p95;
    r->lat_min_ms = avg / 2;
    r->lat_max_ms = p95 * 2;
    r->transactions = (uint64_t)(tps * 10);
    r->json = xasprintf("{\"tps\":%g,\"qps\":%g,\"latency_ms\":{\"avg\":%g,\"p95\":%g},"
                        "\"threads\":%d}",
                        tps, tps * 16, avg, p95, threads);
}

/* Per thread count t (1, 4, 16) and round k (1..3):
 *   base tps = 100*t + {0, +10, -10}[k-1],  pgo tps = 120*t + {-5, +5, 0}[k-1]
 *   base avg = 2.0 + {0, .2, .4}[k-1] ms,   pgo avg = 1.5 + {.1, 0, .2}[k-1] ms
 *   p95 = 2 * avg. */
static void synthetic_runs(struct experiment_result *res, int rounds)
{
    static const double bt[] = { 0, 10, -10 }, pt[] = { -5, 5, 0 };
    static const double ba[] = { 0, .2, .4 }, pa[] = { .1, 0, .2 };
    memset(res, 0, sizeof(*res));
    res->env_json = xstrdup("{\"kernel\":\"6.1.0-test\",\"cores\":2}");
    res->started_at = 1700000000.0;
    res->finished_at = 1700000100.0;
    for (int k = 1; k <= rounds; k++)
        for (int i = 0; i < 3; i++) {
            int t = threads3[i];
            add_run(res, 0, t, k, 100.0 * t + bt[k - 1], 2.0 + ba[k - 1], 2 * (2.0 + ba[k - 1]));
            add_run(res, 1, t, k, 120.0 * t + pt[k - 1], 1.5 + pa[k - 1], 2 * (1.5 + pa[k - 1]));
        }
}

/* The synthetic experiment of the report tests: synthetic_config() and synthetic_runs() with
 * `rounds` rounds, as experiment id (0: none). */
struct synth {
    struct experiment_config cfg;
    struct variant v[2];
    struct experiment_result res;
};

static void synth_make(struct synth *x, int rounds, int64_t id)
{
    synthetic_config(&x->cfg, x->v, rounds);
    synthetic_runs(&x->res, rounds);
    x->cfg.experiment_id = id;
}

static char *report_string(const struct experiment_config *cfg,
                           const struct experiment_result *res)
{
    struct strbuf sb = STRBUF_INIT;
    char chunk[4096];
    size_t n;
    FILE *f = tmpfile();
    assert_non_null(f);
    experiment_report_text(f, cfg, res);
    rewind(f);
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
        strbuf_add(&sb, chunk, n);
    fclose(f);
    return strbuf_detach(&sb);
}

/* Number of table lines whose first cell is exactly label. */
static int count_rows(const char *text, const char *label)
{
    int n = 0;
    for (const char *line = text; line && *line;) {
        const char *nl = strchr(line, '\n');
        if (line[0] == '|') {
            const char *p = line + 1;
            while (*p == ' ')
                p++;
            size_t l = strlen(label);
            if (!strncmp(p, label, l) && p[l] == ' ' && p[l + 1] == '|')
                n++;
        }
        line = nl ? nl + 1 : NULL;
    }
    return n;
}

/* The table line whose first cell is label, within the table titled title (caller frees). */
static char *table_row(const char *text, const char *title, const char *label)
{
    const char *t = strstr(text, title);
    assert_non_null(t);
    for (const char *line = t; line && *line;) {
        const char *nl = strchr(line, '\n');
        if (line != t && !strncmp(line, "Table ", 6))
            break;
        if (line[0] == '|') {
            const char *p = line + 1;
            while (*p == ' ')
                p++;
            size_t l = strlen(label);
            if (!strncmp(p, label, l) && p[l] == ' ')
                return nl ? xstrndup(line, (size_t)(nl - line)) : xstrdup(line);
        }
        line = nl ? nl + 1 : NULL;
    }
    fail_msg("no row '%s' in table '%s'", label, title);
    return NULL;
}

/* assert_row(text, title, label, needle...): the row label of the table titled title holds each
 * needle (a check per needle, failing at the caller's line). */
#define assert_row(text, title, label, ...) \
    row_holds(text, title, label, __FILE__, __LINE__, __VA_ARGS__, (const char *)NULL)

static void row_holds(const char *text, const char *title, const char *label, const char *file,
                      int line, ...)
{
    char *row = table_row(text, title, label);
    va_list ap;
    va_start(ap, line);
    for (const char *needle; (needle = va_arg(ap, const char *));)
        if (!strstr(row, needle)) {
            print_error("no '%s' in row '%s' of '%s': %s\n", needle, label, title, row);
            _fail(file, line);
        }
    va_end(ap);
    free(row);
}

/* ---------------------------------------------------------------- run order */

static void test_order_is_permutation(void **state)
{
    (void)state;
    int order[6], again[6];
    for (uint64_t seed = 0; seed < 20; seed++)
        for (int round = 1; round <= 5; round++)
            for (int block = 0; block < 4; block++) {
                int seen[6] = { 0 };
                experiment_order(seed, round, block, 6, order);
                for (int i = 0; i < 6; i++) {
                    assert_in_range(order[i], 0, 5);
                    seen[order[i]]++;
                }
                for (int i = 0; i < 6; i++)
                    assert_int_equal(seen[i], 1);
                /* Deterministic: the same (seed, round, block) gives the same order. */
                experiment_order(seed, round, block, 6, again);
                assert_memory_equal(order, again, sizeof(order));
            }
    /* n = 1 and n = 2 are permutations too. */
    experiment_order(3, 1, 0, 1, order);
    assert_int_equal(order[0], 0);
    experiment_order(3, 1, 0, 2, order);
    assert_int_equal(order[0] + order[1], 1);
}

static void test_order_differs_across_rounds(void **state)
{
    (void)state;
    int first[4], other[4], differs = 0, two[2], twodiff = 0;
    experiment_order(42, 1, 0, 4, first);
    for (int round = 2; round <= 10; round++) {
        experiment_order(42, round, 0, 4, other);
        differs += memcmp(first, other, sizeof(first)) != 0;
    }
    assert_true(differs > 0);
    /* With two variants, both orders (A B and B A) occur over 20 rounds. */
    int firsta = -1;
    for (int round = 1; round <= 20; round++) {
        experiment_order(42, round, 0, 2, two);
        if (firsta < 0)
            firsta = two[0];
        twodiff += two[0] != firsta;
    }
    assert_true(twodiff > 0);
    /* A different seed gives a different sequence of orders. */
    int s1[4], s2[4], seeddiff = 0;
    for (int round = 1; round <= 10; round++) {
        experiment_order(1, round, 0, 4, s1);
        experiment_order(2, round, 0, 4, s2);
        seeddiff += memcmp(s1, s2, sizeof(s1)) != 0;
    }
    assert_true(seeddiff > 0);
}

/* ---------------------------------------------------------------- statistics */

static void test_cell_median_min_max(void **state)
{
    (void)state;
    struct experiment_result res;
    synthetic_runs(&res, 3);

    /* base, 4 threads, tps: 400+0, 400+10, 400-10 -> sorted 390, 400, 410:
     * median 400 (the middle one), min 390, max 410. */
    struct cell_stats c = experiment_cell(&res, 0, 0, 4, METRIC_TPS);
    assert_int_equal(c.n, 3);
    assert_float_equal(c.median, 400.0, 1e-9);
    assert_float_equal(c.min, 390.0, 1e-9);
    assert_float_equal(c.max, 410.0, 1e-9);

    /* pgo, 4 threads, tps: 480-5, 480+5, 480+0 -> 475, 480, 485: median 480. */
    c = experiment_cell(&res, 1, 0, 4, METRIC_TPS);
    assert_float_equal(c.median, 480.0, 1e-9);
    assert_float_equal(c.min, 475.0, 1e-9);
    assert_float_equal(c.max, 485.0, 1e-9);

    /* % improvement in TPS = (480 - 400) / 400 * 100 = 20. */
    assert_float_equal(experiment_improvement(METRIC_TPS, 400.0, 480.0), 20.0, 1e-9);

    /* base avg latency: 2.0, 2.2, 2.4 -> median 2.2; pgo: 1.6, 1.5, 1.7 -> median 1.6.
     * Lower is better: (2.2 - 1.6) / 2.2 * 100 = 27.2727...% */
    struct cell_stats b = experiment_cell(&res, 0, 0, 1, METRIC_LAT_AVG_MS);
    struct cell_stats p = experiment_cell(&res, 1, 0, 1, METRIC_LAT_AVG_MS);
    assert_float_equal(b.median, 2.2, 1e-9);
    assert_float_equal(p.median, 1.6, 1e-9);
    assert_float_equal(p.min, 1.5, 1e-9);
    assert_float_equal(p.max, 1.7, 1e-9);
    assert_float_equal(experiment_improvement(METRIC_LAT_AVG_MS, b.median, p.median),
                       0.6 / 2.2 * 100.0, 1e-9);
    /* p95 is 2 x avg: 4.4 vs 3.2 -> (4.4 - 3.2) / 4.4 * 100 = 27.27...% as well. */
    b = experiment_cell(&res, 0, 0, 1, METRIC_LAT_P95_MS);
    p = experiment_cell(&res, 1, 0, 1, METRIC_LAT_P95_MS);
    assert_float_equal(experiment_improvement(METRIC_LAT_P95_MS, b.median, p.median),
                       1.2 / 4.4 * 100.0, 1e-9);

    /* A slower variant is a negative improvement: tps 90 vs 100 -> -10%;
     * latency 2.5 vs 2.0 -> (2.0 - 2.5) / 2.0 * 100 = -25%. */
    assert_float_equal(experiment_improvement(METRIC_TPS, 100, 90), -10.0, 1e-9);
    assert_float_equal(experiment_improvement(METRIC_LAT_AVG_MS, 2.0, 2.5), -25.0, 1e-9);
    /* No baseline, no percentage. */
    assert_true(isnan(experiment_improvement(METRIC_TPS, 0, 5)));
    assert_true(isnan(experiment_improvement(METRIC_TPS, NAN, 5)));

    /* Unknown thread count: no data. */
    c = experiment_cell(&res, 0, 0, 8, METRIC_TPS);
    assert_int_equal(c.n, 0);
    experiment_result_release(&res);

    /* Even count: 4 rounds of 1, 10, 2, 3 -> sorted 1, 2, 3, 10: median (2 + 3) / 2 = 2.5. */
    static const double v[] = { 1, 10, 2, 3 };
    memset(&res, 0, sizeof(res));
    for (int k = 0; k < 4; k++)
        add_run(&res, 0, 1, k + 1, v[k], 1, 1);
    c = experiment_cell(&res, 0, 0, 1, METRIC_TPS);
    assert_int_equal(c.n, 4);
    assert_float_equal(c.median, 2.5, 1e-9);
    assert_float_equal(c.min, 1, 1e-9);
    assert_float_equal(c.max, 10, 1e-9);
    experiment_result_release(&res);
}

/* ---------------------------------------------------------------- trainer matrix */

/* Variants base, pgo-a (trainer oltp_read_only), pgo-b (trainer oltp_point_select+
 * oltp_write_only), workloads oltp_read_only and oltp_point_select, 1 thread, 3 rounds of
 * tps M-1, M, M+1 with the medians M: base 100 | 100, pgo-a 110 | 105, pgo-b 102 | 120. */
static void test_trainer_matrix(void **state)
{
    (void)state;
    static char *wl[] = { "oltp_read_only", "oltp_point_select", NULL };
    static int one[] = { 1 };
    static const double median[3][2] = { { 100, 100 }, { 110, 105 }, { 102, 120 } };
    struct experiment_config cfg;
    struct variant v[3];
    struct experiment_result res;
    synthetic_config(&cfg, v, 3);
    memset(&v[2], 0, sizeof(v[2]));
    v[1].name = "pgo-a";
    v[2].name = "pgo-b";
    v[2].library = "/opt/b/libsqlite3.so";
    cfg.nvariants = 3;
    cfg.workloads = wl;
    cfg.nworkloads = 2;
    cfg.threads = one;
    cfg.nthreads = 1;
    memset(&res, 0, sizeof(res));
    for (int k = 1; k <= 3; k++)
        for (int w = 0; w < 2; w++)
            for (int i = 0; i < 3; i++) {
                add_run(&res, i, 1, k, median[i][w] + (k - 2), 1, 2);
                res.runs[res.nruns - 1].workload = w;
            }
    const char *trainer_of[] = { NULL, "oltp_read_only", "oltp_point_select+oltp_write_only" };
    struct strbuf sb = STRBUF_INIT;
    strbuf_init(&sb, 0);
    report_trainers(&sb, &cfg, &res, trainer_of);
    const char *text = sb.buf;

    /* header, separator and exactly one row per trainer: no empty row */
    int lines = 0;
    for (const char *l = strstr(text, "\n|"); l; l = strstr(l + 1, "\n|"))
        lines++;
    assert_int_equal(lines, 2 + 2);
    assert_int_equal(count_rows(text, "oltp_read_only"), 1);
    assert_int_equal(count_rows(text, "oltp_point_select+oltp_write_only"), 1);
    const char *head = strstr(text, " trainer |");
    assert_non_null(head);
    char *hl = xstrndup(head, strcspn(head, "\n"));
    const char *c1 = strstr(hl, " oltp_read_only |"), *c2 = strstr(hl, " oltp_point_select |"),
               *c3 = strstr(hl, " overall |");
    assert_true(c1 && c2 && c3 && c1 < c2 && c2 < c3);
    free(hl);
    /* the estimates: +10.0 | +5.0 | geomean sqrt(1.1 * 1.05) - 1 = +7.5; +2.0 | +20.0 | +10.6;
     * the exam marks on the trainer's own workloads only */
    assert_row(text, "Trainer matrix", "oltp_read_only", "+10.0%", "* |", "+5.0%) |", "+7.5%");
    assert_row(text, "Trainer matrix", "oltp_point_select+oltp_write_only", "+2.0%) |",
               "+20.0%", "+10.6%");
    char *row = table_row(text, "Trainer matrix", "oltp_point_select+oltp_write_only");
    assert_non_null(strstr(row, "+20.0%) * |"));
    assert_null(strstr(row, "+2.0%) *"));
    free(row);
    assert_non_null(strstr(text, "Best trainer (highest estimate): oltp_read_only: oltp_read_only; "
                                 "oltp_point_select: oltp_point_select+oltp_write_only; overall: "
                                 "oltp_point_select+oltp_write_only\n"));
    assert_non_null(strstr(text, "* the trainer is (or includes) the measured workload"));

    experiment_result_release(&res);

    /* 1 round: no statistics, but the estimates the best trainer is named by are shown */
    memset(&res, 0, sizeof(res));
    cfg.rounds = 1;
    for (int w = 0; w < 2; w++)
        for (int i = 0; i < 3; i++) {
            add_run(&res, i, 1, 1, median[i][w], 1, 2);
            res.runs[res.nruns - 1].workload = w;
        }
    strbuf_reset(&sb);
    report_trainers(&sb, &cfg, &res, trainer_of);
    text = sb.buf;
    assert_row(text, "Trainer matrix", "oltp_read_only", "+10.0% (1 round: no CI) *",
               "+5.0% (1 round: no CI) |", "+7.5% (1 round: no CI) |");
    assert_row(text, "Trainer matrix", "oltp_point_select+oltp_write_only",
               "+20.0% (1 round: no CI) *");

    /* one trainer: no matrix */
    strbuf_reset(&sb);
    const char *one_trainer[] = { NULL, "oltp_read_only", NULL };
    report_trainers(&sb, &cfg, &res, one_trainer);
    assert_int_equal(sb.len, 0);
    strbuf_release(&sb);
    experiment_result_release(&res);
}

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

/* ---------------------------------------------------------------- child reports */

static void test_parse_run(void **state)
{
    (void)state;
    struct run_result r;
    memset(&r, 0, sizeof(r));
    const char *ok = "{\"test\":\"oltp_read_only\",\"threads\":2,\"transactions\":12345,"
                     "\"tps\":1234.5,\"qps\":19750.3,\"ignored_errors\":3,"
                     "\"latency_ms\":{\"min\":0.1,\"avg\":1.62,\"max\":9.5,\"p95\":2.5,"
                     "\"percentile\":95,\"percentile_value\":2.5},\"interrupted\":false}";
    assert_int_equal(experiment_parse_run(ok, &r), 0);
    assert_float_equal(r.tps, 1234.5, 1e-9);
    assert_float_equal(r.qps, 19750.3, 1e-9);
    assert_float_equal(r.lat_avg_ms, 1.62, 1e-9);
    assert_float_equal(r.lat_p95_ms, 2.5, 1e-9);
    assert_float_equal(r.lat_min_ms, 0.1, 1e-9);
    assert_float_equal(r.lat_max_ms, 9.5, 1e-9);
    assert_int_equal(r.transactions, 12345);
    assert_int_equal(r.errors, 3);
    assert_string_equal(r.json, ok);
    free(r.json);

    /* p95 from percentile_value when there is no p95 key. */
    memset(&r, 0, sizeof(r));
    assert_int_equal(experiment_parse_run("{\"tps\":1,\"qps\":2,\"latency_ms\":{\"avg\":3,"
                                          "\"percentile_value\":4}}",
                                          &r),
                     0);
    assert_float_equal(r.lat_p95_ms, 4, 1e-9);
    free(r.json);

    memset(&r, 0, sizeof(r));
    assert_int_equal(experiment_parse_run("FATAL: no such table", &r), -1);
    assert_int_equal(experiment_parse_run("{\"tps\":1}", &r), -1);
    assert_int_equal(experiment_parse_run("{\"tps\":1,\"qps\":2,\"latency_ms\":{\"avg\":3}}", &r), -1);
    assert_int_equal(experiment_parse_run("{\"tps\":1,\"qps\":2,\"latency_ms\":{\"avg\":3,\"p95\":4},"
                                          "\"interrupted\":true}",
                                          &r),
                     -1);
    assert_null(r.json);
}

/* ---------------------------------------------------------------- JSON output */

static void test_json_roundtrip(void **state)
{
    (void)state;
    struct experiment_config cfg;
    struct variant v[2];
    struct experiment_result res;
    char *args[] = { "--rand-seed=5", NULL };
    char dir[] = "/tmp/pgolab-test-XXXXXX";
    assert_non_null(mkdtemp(dir));
    synthetic_config(&cfg, v, 3);
    cfg.bench_args = args;
    cfg.seed = 18446744073709551615ull; /* 2^64 - 1: must survive as text */
    v[1].sha256 = xstrdup("00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff");
    v[1].version = xstrdup("3.46.0");
    v[1].compiler = "gcc 12.2.0";
    v[1].cflags = "-O2 -fprofile-use";
    synthetic_runs(&res, 3);
    char *path = xasprintf("%s/out.json", dir);
    assert_int_equal(experiment_write_json(path, &cfg, &res), 0);

    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    assert_non_null(root);
    assert_true(json_is_true(json_object_get(root, "complete")));
    assert_true(json_is_null(json_object_get(root, "error")));
    json_t *set = json_object_get(root, "settings");
    assert_int_equal(json_integer_value(json_object_get(set, "rounds")), 3);
    assert_string_equal(json_string_value(json_object_get(set, "seed")), "18446744073709551615");
    assert_int_equal(json_array_size(json_object_get(set, "threads")), 3);
    assert_string_equal(json_string_value(json_array_get(json_object_get(set, "bench_args"), 0)),
                        "--rand-seed=5");

    json_t *vars = json_object_get(root, "variants");
    assert_int_equal(json_array_size(vars), 2);
    json_t *v1 = json_array_get(vars, 1);
    assert_string_equal(json_string_value(json_object_get(v1, "name")), "pgo");
    assert_string_equal(json_string_value(json_object_get(v1, "sha256")), v[1].sha256);
    assert_string_equal(json_string_value(json_object_get(v1, "cflags")), "-O2 -fprofile-use");
    assert_true(json_is_true(json_object_get(json_array_get(vars, 0), "baseline")));
    assert_true(json_is_null(json_object_get(json_array_get(vars, 0), "sha256")));

    json_t *env = json_object_get(root, "environment");
    assert_string_equal(json_string_value(json_object_get(env, "kernel")), "6.1.0-test");

    json_t *runs = json_object_get(root, "runs");
    assert_int_equal(json_array_size(runs), 18);
    for (size_t i = 0; i < json_array_size(runs); i++) {
        json_t *r = json_array_get(runs, i);
        const struct run_result *rr = &res.runs[i];
        assert_int_equal(json_integer_value(json_object_get(r, "seq")), (json_int_t)i + 1);
        assert_int_equal(json_integer_value(json_object_get(r, "threads")), rr->threads);
        assert_int_equal(json_integer_value(json_object_get(r, "round")), rr->round);
        assert_float_equal(json_real_value(json_object_get(r, "tps")), rr->tps, 1e-9);
        assert_float_equal(json_real_value(json_object_get(json_object_get(r, "latency_ms"), "p95")),
                           rr->lat_p95_ms, 1e-9);
        /* The child's report is embedded as an object, not as a string. */
        json_t *rep = json_object_get(r, "report");
        assert_true(json_is_object(rep));
        assert_float_equal(json_number_value(json_object_get(rep, "tps")), rr->tps, 1e-9);
    }
    /* Run order: 9 blocks (3 rounds x 3 thread counts) of 2 variants each. */
    json_t *order = json_object_get(root, "run_order");
    assert_int_equal(json_array_size(order), 9);
    assert_int_equal(json_array_size(json_object_get(json_array_get(order, 0), "order")), 2);
    /* Summary: 3 thread counts x 3 metrics; tps at 4 threads: base median 400, pgo +20%. */
    json_t *summary = json_object_get(root, "summary");
    assert_int_equal(json_array_size(summary), 9);
    json_t *s = json_array_get(summary, 3); /* threads index 1 (4), metric tps */
    assert_int_equal(json_integer_value(json_object_get(s, "threads")), 4);
    assert_string_equal(json_string_value(json_object_get(s, "metric")), "tps");
    json_t *cells = json_object_get(s, "cells");
    assert_float_equal(json_real_value(json_object_get(json_array_get(cells, 0), "median")), 400, 1e-9);
    assert_float_equal(json_real_value(json_object_get(json_array_get(cells, 1), "improvement_pct")),
                       20, 1e-9);
    json_decref(root);

    /* An incomplete experiment is written too, marked as such. */
    res.nruns = 5;
    res.error = xstrdup("run failed: variant pgo");
    assert_int_equal(experiment_write_json(path, &cfg, &res), 0);
    root = json_load_file(path, 0, &je);
    assert_non_null(root);
    assert_true(json_is_false(json_object_get(root, "complete")));
    assert_string_equal(json_string_value(json_object_get(root, "error")), "run failed: variant pgo");
    assert_int_equal(json_array_size(json_object_get(root, "runs")), 5);
    json_decref(root);
    res.nruns = 18;

    /* No temporary file is left behind. */
    char *tmp = xasprintf("%s.tmp", path);
    assert_int_equal(access(tmp, F_OK), -1);
    free(tmp);
    unlink(path);
    rmdir(dir);
    free(path);
    experiment_variant_release(&v[1]);
    experiment_result_release(&res);
}

/* ---------------------------------------------------------------- whole experiment */

/* A stand-in for the pgolab binary: prepare touches the db, info describes the library,
 * run prints a report whose tps depends on the library name (…fast… = 125, else 100),
 * and a library named …broken… fails like a crashing child. */
static const char fake_pgolab[] =
    "#!/bin/sh\n"
    "lib= db= threads= cmd=\n"
    "for a in \"$@\"; do\n"
    "  case \"$a\" in\n"
    "    --sqlite-library=*) lib=${a#*=} ;;\n"
    "    --sqlite-db=*) db=${a#*=} ;;\n"
    "    --threads=*) threads=${a#*=} ;;\n"
    "  esac\n"
    "  cmd=$a\n"
    "done\n"
    "case \"$cmd\" in\n"
    "  prepare) echo \"prepared $lib\" > \"$db\"; exit 0 ;;\n"
    "  info) printf '{\"library\":{\"path\":\"%s\",\"version\":\"3.99.0\",\"source_id\":\"fake-id\","
    "\"loaded_from\":\"%s\"}}\\n' \"$lib\" \"$lib\"; exit 0 ;;\n"
    "esac\n"
    "grep -q prepared \"$db\" || { echo \"not a copy of the template: $db\" >&2; exit 1; }\n"
    /* FAKE_STOP_AT=N: the Nth run (counted in $FAKE_COUNT) sends SIGINT to the experiment,
     * like Ctrl-C, and still finishes normally (the experiment must discard it) */
    "if [ -n \"$FAKE_STOP_AT\" ]; then\n"
    "  n=$(( $(cat \"$FAKE_COUNT\" 2>/dev/null || echo 0) + 1 )); echo $n > \"$FAKE_COUNT\"\n"
    "  [ \"$n\" -eq \"$FAKE_STOP_AT\" ] && kill -INT $PPID\n"
    "fi\n"
    /* FAKE_RUNLOG=FILE: every run appends "LIBRARY THREADS SEEN PREPARED-BY", SEEN = the runs
     * the database had seen before (each run appends "ran" to it) */
    "if [ -n \"$FAKE_RUNLOG\" ]; then\n"
    "  seen=$(grep -c '^ran' \"$db\"); prep=$(head -1 \"$db\" | cut -d' ' -f2); echo ran >> \"$db\"\n"
    "  echo \"${lib##*/} $threads $seen ${prep##*/}\" >> \"$FAKE_RUNLOG\"\n"
    "fi\n"
    "case \"$lib\" in *broken*) echo 'FATAL: boom' >&2; exit 1 ;; esac\n"
    "tps=100; case \"$lib\" in *fast*) tps=125 ;; esac\n"
    "printf '{\"tps\":%s,\"qps\":%s0,\"transactions\":10,\"ignored_errors\":0,\"threads\":%s,"
    "\"library\":{\"source_id\":\"fake-id\"},"
    "\"latency_ms\":{\"min\":1,\"avg\":2,\"max\":9,\"p95\":4},\"interrupted\":false}\\n' "
    "\"$tps\" \"$tps\" \"$threads\"\n";

static char *write_file(const char *dir, const char *name, const char *text, mode_t mode)
{
    char *path = xasprintf("%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    chmod(path, mode);
    return path;
}

static int count_files(const char *dir, const char *suffix)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    if (!d)
        return -1;
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name), s = strlen(suffix);
        n += l >= s && !strcmp(e->d_name + l - s, suffix);
    }
    closedir(d);
    return n;
}

/* A temporary directory with the fake pgolab (exe), its run log's path (runlog, see
 * FAKE_RUNLOG) and two libraries: lib_base (empty) and lib_fast. */
struct fake_dir {
    char dir[sizeof("/tmp/pgolab-test-XXXXXX")];
    char *exe, *lib_base, *lib_fast, *runlog;
};

static void fake_dir_make(struct fake_dir *fd)
{
    strcpy(fd->dir, "/tmp/pgolab-test-XXXXXX");
    assert_non_null(mkdtemp(fd->dir));
    fd->exe = write_file(fd->dir, "pgolab", fake_pgolab, 0755);
    fd->lib_base = write_file(fd->dir, "lib-base.so", "", 0644);
    fd->lib_fast = write_file(fd->dir, "lib-fast.so", "x", 0644);
    fd->runlog = xasprintf("%s/runs.log", fd->dir);
}

/* Removes the directory and all in it (rm -rf); returns rm's exit status. */
static int fake_dir_remove(struct fake_dir *fd)
{
    char *cmd = xasprintf("rm -rf %s", fd->dir);
    int rc = system(cmd);
    free(cmd);
    free(fd->exe);
    free(fd->lib_base);
    free(fd->lib_fast);
    free(fd->runlog);
    return rc;
}

/* A config for the fake pgolab of fd: variants base (lib_base) and fast (lib_fast), one
 * workload, threads 1 and 2, `rounds` rounds of 1 s on one table of 100 rows, in workdir. */
static void fake_config(struct experiment_config *cfg, struct variant *v, const struct fake_dir *fd,
                        const char *workdir, int rounds, uint64_t seed)
{
    v[0] = (struct variant){ .name = "base", .library = fd->lib_base };
    v[1] = (struct variant){ .name = "fast", .library = fd->lib_fast };
    *cfg = (struct experiment_config){
        .variants = v, .nvariants = 2, .workloads = workloads1, .nworkloads = 1,
        .threads = threads2, .nthreads = 2, .rounds = rounds, .time_s = 1, .tables = 1,
        .table_size = 100, .workdir = workdir, .pgolab = fd->exe, .seed = seed,
    };
}

/* Runs cfg's experiment into res with the fake's run log (FAKE_RUNLOG) in fd: checks it
 * succeeds with nruns runs; returns the log, open for reading. */
static FILE *run_logged(struct experiment_config *cfg, struct experiment_result *res,
                        const struct fake_dir *fd, int nruns)
{
    setenv("FAKE_RUNLOG", fd->runlog, 1);
    assert_int_equal(experiment_run(cfg, res), 0);
    unsetenv("FAKE_RUNLOG");
    assert_int_equal(res->nruns, nruns);
    FILE *f = fopen(fd->runlog, "r");
    assert_non_null(f);
    return f;
}

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

static char *shape_string(const struct experiment_config *cfg, const struct experiment_result *res,
                          enum report_shape shape, enum report_format fmt)
{
    struct strbuf sb = STRBUF_INIT;
    report_experiment(&sb, cfg, res, shape, fmt);
    return strbuf_detach(&sb);
}

/* The first line of text holding every one of the NULL-terminated needles (caller frees). */
static char *line_with(const char *text, ...)
{
    for (const char *line = text; line && *line;) {
        const char *nl = strchr(line, '\n');
        char *l = nl ? xstrndup(line, (size_t)(nl - line)) : xstrdup(line);
        va_list ap;
        const char *needle;
        int all = 1;
        va_start(ap, text);
        while ((needle = va_arg(ap, const char *)))
            all &= strstr(l, needle) != NULL;
        va_end(ap);
        if (all)
            return l;
        free(l);
        line = nl ? nl + 1 : NULL;
    }
    return NULL;
}

/* assert_line(text, key1, key2, needle...): some line of text holds key1 and key2 (NULL: only
 * key1), and that line holds each needle (a check for the line, one per needle, failing at the
 * caller's line). */
#define assert_line(text, key1, key2, ...) \
    line_holds(text, key1, key2, __FILE__, __LINE__, __VA_ARGS__, (const char *)NULL)

static void line_holds(const char *text, const char *key1, const char *key2, const char *file,
                       int line, ...)
{
    char *l = line_with(text, key1, key2, (const char *)NULL);
    if (!l) {
        print_error("no line with '%s' and '%s' in:\n%s\n", key1, key2 ? key2 : "", text);
        _fail(file, line);
    }
    va_list ap;
    va_start(ap, line);
    for (const char *needle; (needle = va_arg(ap, const char *));)
        if (!strstr(l, needle)) {
            print_error("no '%s' in the line: %s\n", needle, l);
            _fail(file, line);
        }
    va_end(ap);
    free(l);
}

static int count_lines(const char *text)
{
    int n = 0;
    for (const char *c = text; *c; c++)
        n += *c == '\n';
    return n;
}

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

/* threads 1, 4, 16 and `rounds` rounds; base tps 100 t (+-2%), the variant factor times that
 * (with other +-2% noise). */
static void slow_runs(struct experiment_result *res, int rounds, double factor)
{
    static const double nb[] = { 0, .02, -.02, .01, -.01, .015 }, nv[] = { .01, -.02, 0, .02, -.01, .005 };
    memset(res, 0, sizeof(*res));
    for (int k = 1; k <= rounds; k++)
        for (int i = 0; i < 3; i++) {
            int t = threads3[i];
            add_run(res, 0, t, k, 100.0 * t * (1 + nb[k - 1]), 2, 4);
            add_run(res, 1, t, k, 100.0 * t * factor * (1 + nv[k - 1]), 2, 4);
        }
}

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

static void test_env_diff(void **state)
{
    (void)state;
    struct strbuf sb = STRBUF_INIT;
    const char *a = "{\"hostname\":\"client-a\",\"kernel\":\"6.1.0-18\",\"cores\":2,"
                    "\"memory_bytes\":8589934592,\"loadavg_1m\":0.1,\"pgolab_version\":\"0.1.0\"}";
    const char *b = "{\"hostname\":\"client-b\",\"kernel\":\"6.1.0-18\",\"cores\":4,"
                    "\"memory_bytes\":8589934592,\"loadavg_1m\":1.0,\"pgolab_version\":\"0.1.0\"}";
    assert_int_equal(experiment_env_diff(a, b, true, &sb), 3);
    assert_string_equal(sb.buf, "hostname: client-a -> client-b\ncores: 2 -> 4\n"
                                "load (1 min, at start): 0.10 -> 1.00\n");
    strbuf_reset(&sb);
    assert_int_equal(experiment_env_diff(a, b, false, &sb), 2);
    strbuf_reset(&sb);
    /* Load within 0.5 is the same machine. */
    assert_int_equal(experiment_env_diff(a, a, true, &sb), 0);
    assert_int_equal(sb.len, 0);
    /* A key only one side has. */
    assert_int_equal(experiment_env_diff("{\"cpu_model\":\"X\"}", "{}", true, &sb), 1);
    assert_string_equal(sb.buf, "CPU model: X -> (unknown)\n");
    strbuf_release(&sb);
}

/* ---------------------------------------------------------------- the results store */

/* Redirect stderr to a file until stderr_end(), which returns what was written (caller
 * frees). */
static int stderr_begin(const char *path)
{
    fflush(stderr);
    int saved = dup(2), fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(saved >= 0 && fd >= 0);
    dup2(fd, 2);
    close(fd);
    return saved;
}

static char *stderr_end(int saved, const char *path)
{
    struct strbuf sb = STRBUF_INIT;
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    strbuf_read_file(&sb, path);
    return strbuf_detach(&sb);
}

struct key_list {
    struct strbuf keys;  /* "variant/workload/threads/round\n" per run, in seq order */
    double started[64];  /* started_at by seq - 1 */
    int n;
};

static int key_cb(const struct store_run *r, void *ctx)
{
    struct key_list *k = ctx;
    strbuf_addf(&k->keys, "%d/%s/%d/%d\n", r->variant_idx, r->workload, r->threads, r->round);
    if (k->n < 64)
        k->started[k->n] = r->started_at;
    k->n++;
    return 0;
}

static void run_keys(struct store *s, int64_t id, struct key_list *k)
{
    memset(k, 0, sizeof(*k));
    assert_int_equal(store_runs_load(s, id, key_cb, k), 0);
}

/* Checks that stored experiment id has status want. */
static void assert_status(struct store *s, int64_t id, const char *want)
{
    struct store_experiment e;
    assert_int_equal(store_experiment_get(s, id, &e), 0);
    assert_string_equal(e.status, want);
    store_experiment_release(&e);
}

/* experiment_record_resume() with its stderr captured (via errpath) in *err (caller frees);
 * returns its result. */
static int resume_captured(struct experiment_config *cfg, struct store *s, int64_t id,
                           const char *kind, const char *errpath, char **err)
{
    int saved = stderr_begin(errpath);
    int rc = experiment_record_resume(cfg, s, id, kind, NULL);
    *err = stderr_end(saved, errpath);
    return rc;
}

/* Record an experiment, interrupt another with SIGINT, refuse bad resumes, resume it, and
 * check it ends with the same runs in the same order as the uninterrupted one. */
static void test_record_and_resume(void **state)
{
    (void)state;
    struct fake_dir fd;
    fake_dir_make(&fd);
    char *workdir = xasprintf("%s/work", fd.dir);
    char *dbpath = xasprintf("%s/results.db", fd.dir);
    char *errpath = xasprintf("%s/stderr.txt", fd.dir);
    char *count = xasprintf("%s/count", fd.dir);
    struct variant v[2];
    struct experiment_config cfg;
    struct experiment_result res;
    struct store *s;
    struct key_list full, part, resumed;
    fake_config(&cfg, v, &fd, workdir, 3, 11);
    assert_int_equal(experiment_fingerprint(&cfg), 0);
    assert_int_equal(store_open(dbpath, &s), 0);

    /* 1. Uninterrupted: every run recorded, status complete, and the report rebuilt from the
     *    store is the report printed at the end, character for character. */
    int saved = stderr_begin(errpath);
    int rc = experiment_record_begin(&cfg, s, "compare", NULL);
    char *err = stderr_end(saved, errpath);
    assert_int_equal(rc, 0);
    assert_int_equal(cfg.experiment_id, 1);
    assert_ptr_equal(cfg.store, s);
    assert_non_null(strstr(err, "experiment 1 recorded in "));
    assert_non_null(strstr(err, "results.db"));
    free(err);
    assert_int_equal(experiment_run(&cfg, &res), 0);
    assert_int_equal(experiment_record_finish(&cfg, &res, 0), 0);
    assert_status(s, 1, "complete");
    run_keys(s, 1, &full);
    assert_int_equal(full.n, 12);
    char *live = report_string(&cfg, &res);
    assert_true(!strncmp(live, "pgolab experiment 1 (compare):", 30));
    struct experiment_loaded l;
    assert_int_equal(experiment_load(s, 1, &l), 0);
    assert_int_equal(l.res.nruns, 12);
    assert_int_equal(l.cfg.rounds, 3);
    assert_int_equal(l.cfg.nthreads, 2);
    assert_int_equal(l.cfg.seed, 11);
    assert_null(l.res.error);
    assert_string_equal(l.cfg.variants[1].sha256, v[1].sha256);
    char *stored = report_string(&l.cfg, &l.res);
    assert_string_equal(stored, live);
    free(stored);
    free(live);
    experiment_loaded_release(&l);
    experiment_result_release(&res);

    /* 2. The same experiment again, interrupted by SIGINT during its 3rd run: the two
     *    finished runs are recorded, the 3rd is not, status interrupted. */
    cfg.experiment_id = 0;
    setenv("FAKE_STOP_AT", "3", 1);
    setenv("FAKE_COUNT", count, 1);
    saved = stderr_begin(errpath);
    assert_int_equal(experiment_record_begin(&cfg, s, "compare", NULL), 0);
    assert_int_equal(cfg.experiment_id, 2);
    rc = experiment_run(&cfg, &res);
    err = stderr_end(saved, errpath);
    free(err);
    unsetenv("FAKE_STOP_AT");
    assert_int_equal(rc, -1);
    assert_int_equal(res.signal, SIGINT);
    assert_int_equal(res.nruns, 2);
    assert_int_equal(experiment_record_finish(&cfg, &res, rc), 0);
    experiment_result_release(&res);
    assert_status(s, 2, "interrupted");
    run_keys(s, 2, &part);
    assert_int_equal(part.n, 2);
    /* The report of a stored, interrupted experiment says so. */
    assert_int_equal(experiment_load(s, 2, &l), 0);
    stored = report_string(&l.cfg, &l.res);
    assert_non_null(strstr(stored, "INCOMPLETE: 2 of 12 runs finished: experiment 2 interrupted "
                                   "(`pgolab compare --resume=2` with the same options"));
    free(stored);
    experiment_loaded_release(&l);

    /* 3. Resumes that must be refused, each with one line naming the reason. */
    struct {
        int64_t id;
        const char *kind;
        int rounds;
        const char *want;
    } bad[] = {
        { 2, "compare", 4, "cannot resume experiment 2: its settings differ (recorded -> now): "
                           "rounds: 3 -> 4" },
        { 42, "compare", 3, "no experiment 42 in " },
        { 1, "compare", 3, "experiment 1 is complete; nothing to resume" },
        { 2, "pgo", 3, "experiment 2 was recorded by `pgolab compare`, not `pgolab pgo`" },
    };
    for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
        cfg.rounds = bad[i].rounds;
        cfg.experiment_id = 0;
        rc = resume_captured(&cfg, s, bad[i].id, bad[i].kind, errpath, &err);
        assert_int_equal(rc, -1);
        if (!strstr(err, bad[i].want))
            fail_msg("case %zu: '%s' lacks '%s'", i, err, bad[i].want);
        assert_int_equal(count_lines(err), 1);
        assert_int_equal(cfg.experiment_id, 0);
        free(err);
    }
    cfg.rounds = 3;
    /* A variant whose library changed is named. */
    char *other = write_file(fd.dir, "lib-other.so", "changed", 0644);
    v[1].library = other;
    char *sha = v[1].sha256;
    v[1].sha256 = NULL;
    assert_int_equal(experiment_fingerprint(&cfg), 0);
    rc = resume_captured(&cfg, s, 2, "compare", errpath, &err);
    assert_int_equal(rc, -1);
    assert_non_null(strstr(err, "variant.fast: {"));
    assert_null(strstr(err, "variant.base"));
    free(err);
    free(v[1].sha256);
    v[1].sha256 = sha;
    v[1].library = fd.lib_fast;

    /* 4. Resume: the stored seed comes back, only the 10 missing runs run, and the final
     *    runs are the full grid in the same order as the uninterrupted experiment. */
    cfg.seed = 999;
    rc = resume_captured(&cfg, s, 2, "compare", errpath, &err);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(err, "resuming experiment 2 in "));
    assert_non_null(strstr(err, ": 2 of 12 runs recorded"));
    free(err);
    assert_int_equal(cfg.seed, 11);
    assert_int_equal(cfg.experiment_id, 2);
    assert_status(s, 2, "running");
    assert_int_equal(experiment_run(&cfg, &res), 0);
    assert_int_equal(res.resumed, 2);
    assert_int_equal(res.nruns, 12);
    assert_int_equal(experiment_record_finish(&cfg, &res, 0), 0);
    experiment_result_release(&res);
    assert_status(s, 2, "complete");
    run_keys(s, 2, &resumed);
    assert_int_equal(resumed.n, 12);
    assert_string_equal(resumed.keys.buf, full.keys.buf);
    /* The two runs from before were kept, not redone. */
    assert_float_equal(resumed.started[0], part.started[0], 1e-6);
    assert_float_equal(resumed.started[1], part.started[1], 1e-6);
    /* Resuming it again is refused. */
    rc = resume_captured(&cfg, s, 2, "compare", errpath, &err);
    assert_int_equal(rc, -1);
    assert_non_null(strstr(err, "experiment 2 is complete; nothing to resume"));
    free(err);

    strbuf_release(&full.keys);
    strbuf_release(&part.keys);
    strbuf_release(&resumed.keys);
    store_close(s);
    for (int i = 0; i < 2; i++)
        experiment_variant_release(&v[i]);
    fake_dir_remove(&fd);
    free(other);
    free(workdir);
    free(dbpath);
    free(errpath);
    free(count);
}

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

/* --measure parsing, the callgrind total (totals: preferred over summary:), and the
 * instruction metric: lower is better, its key, its value in a run. */
static void test_measure_instructions(void **state)
{
    (void)state;
    enum experiment_measure m = MEASURE_INSTRUCTIONS;
    assert_int_equal(experiment_measure_parse("time", &m), 0);
    assert_int_equal(m, MEASURE_TIME);
    assert_int_equal(experiment_measure_parse("instructions", &m), 0);
    assert_int_equal(m, MEASURE_INSTRUCTIONS);
    assert_int_equal(experiment_measure_parse("cycles", &m), -1);

    char dir[] = "/tmp/pgolab-test-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char *both = write_file(dir, "cg.both", "# callgrind format\nversion: 1\ncmd: x\n"
                                            "events: Ir\nsummary: 123\nfl=a.c\nfn=f\n"
                                            "1 100\ntotals: 246881240\n", 0644);
    char *summary = write_file(dir, "cg.summary", "events: Ir\nsummary: 48178544\n", 0644);
    char *none = write_file(dir, "cg.none", "events: Ir\nfn=f\n1 5\n", 0644);
    uint64_t total = 0;
    assert_int_equal(experiment_callgrind_total(both, &total), 0);
    assert_true(total == 246881240u);
    assert_int_equal(experiment_callgrind_total(summary, &total), 0);
    assert_true(total == 48178544u);
    assert_int_equal(experiment_callgrind_total(none, &total), -1);
    char *missing = xasprintf("%s/cg.missing", dir);
    assert_int_equal(experiment_callgrind_total(missing, &total), -1);
    /* With --cache-sim and --branch-sim: I1mr and Bcm + Bim by their column names. */
    char *sim = write_file(dir, "cg.sim", "events: Ir I1mr D1mr D1mw ILmr DLmr DLmw Bc Bcm Bi Bim\n"
                                          "fn=f\n1 5 1 0 0 0 0 0 2 1 0 0\n"
                                          "totals: 1000 17 30 40 5 6 7 200 11 50 4\n", 0644);
    struct callgrind_counts cc;
    assert_int_equal(experiment_callgrind_counts(sim, &cc), 0);
    assert_true(cc.ir == 1000 && cc.i1_miss == 17 && cc.branch_miss == 15);
    assert_int_equal(experiment_callgrind_counts(both, &cc), 0);
    assert_true(cc.ir == 246881240u && cc.i1_miss == 0 && cc.branch_miss == 0);
    unlink(sim);
    free(sim);
    unlink(both);
    unlink(summary);
    unlink(none);
    rmdir(dir);
    free(both);
    free(summary);
    free(none);
    free(missing);

    struct run_result r;
    memset(&r, 0, sizeof(r));
    r.instr_per_txn = 805401.5;
    assert_true(experiment_metric_value(&r, METRIC_INSTR) == 805401.5);
    assert_true(experiment_metric_lower_is_better(METRIC_INSTR));
    assert_string_equal(experiment_metric_key(METRIC_INSTR), "instr_per_txn");
    /* 1% more instructions = 1% worse */
    assert_true(fabs(experiment_improvement(METRIC_INSTR, 1000, 1010) + 1.0) < 1e-9);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_order_is_permutation),
        cmocka_unit_test(test_order_differs_across_rounds),
        cmocka_unit_test(test_cell_median_min_max),
        cmocka_unit_test(test_trainer_matrix),
        cmocka_unit_test(test_report_rows),
        cmocka_unit_test(test_parse_run),
        cmocka_unit_test(test_json_roundtrip),
        cmocka_unit_test(test_run_with_fake_child),
        cmocka_unit_test(test_warmup_runs),
        cmocka_unit_test(test_reset_modes),
        cmocka_unit_test(test_report_seed003),
        cmocka_unit_test(test_report_seed002),
        cmocka_unit_test(test_report_csv_json),
        cmocka_unit_test(test_report_slower),
        cmocka_unit_test(test_env_diff),
        cmocka_unit_test(test_record_and_resume),
        cmocka_unit_test(test_report_compare),
        cmocka_unit_test(test_opt_multi),
        cmocka_unit_test(test_measure_instructions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
