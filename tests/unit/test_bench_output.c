/* Unit tests of bench's own output (src/bench/output*.c): the sysbench 1.0.20 text layout of
 * the final block and the interval line (stdout captured into a temp file), and bench_json's figures
 * against a synthetic run_stats with a histogram filled by the test. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "bench/output.h"
#include "stats/histogram.h"
#include "util/fs.h"
#include "util/strbuf.h"
#include "util/util.h"

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NEV 1000

/* ---------------------------------------------------------------- helpers */

static char *tmpdir;

/* Run fn(arg) with stdout redirected into a temp file; return what it printed (caller frees). */
static char *capture(void (*fn)(void *), void *arg)
{
    char *path = path_join(tmpdir, "out.txt");
    int saved, fd;
    struct strbuf sb = STRBUF_INIT;
    fflush(stdout);
    saved = dup(STDOUT_FILENO);
    assert_true(saved >= 0);
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    dup2(fd, STDOUT_FILENO);
    close(fd);
    fn(arg);
    fflush(stdout);
    dup2(saved, STDOUT_FILENO);
    close(saved);
    assert_int_equal(strbuf_read_file(&sb, path), 0);
    unlink(path);
    free(path);
    return strbuf_detach(&sb);
}

/* The line starting with prefix (a copy without '\n'), or fail. */
static char *find_line(const char *text, const char *prefix)
{
    size_t plen = strlen(prefix);
    for (const char *p = text; *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        if (len >= plen && !strncmp(p, prefix, plen))
            return xstrndup(p, len);
        p += len + (nl ? 1 : 0);
    }
    fail_msg("no line starting with '%s' in:\n%s", prefix, text);
    return NULL;
}

/* A count line: label, spaces up to column 41, the value text starting in column 42. */
static void check_count_line(const char *text, const char *label, const char *value)
{
    char *line = find_line(text, label);
    size_t llen = strlen(label);
    assert_true(strlen(line) > 41);
    for (size_t i = llen; i < 41; i++)
        assert_int_equal(line[i], ' ');
    assert_string_equal(line + 41, value);
    free(line);
}

/* A latency line: label, the value right-aligned to end in column 53; returns the value. */
static double check_latency_line(const char *text, const char *label)
{
    char *line = find_line(text, label);
    assert_int_equal(strlen(line), 53);
    assert_true(line[52] >= '0' && line[52] <= '9');
    assert_int_equal(line[strlen(label)], ' ');
    double v = strtod(line + strlen(label), NULL);
    free(line);
    return v;
}

/* 1000 events of 20 us, 40 us, ..., 20 ms; 2 threads (600 and 400 events, 3 s and 2 s). */
static void synth(struct run_stats *st, struct bench_info *bi)
{
    memset(st, 0, sizeof(*st));
    histogram_init(&st->hist);
    for (int i = 1; i <= NEV; i++)
        histogram_add(&st->hist, (uint64_t)i * 20000);
    st->total_time_s = 10.0;
    st->events = NEV;
    st->cnt = (struct db_counters){ .reads = 14000, .writes = 4000, .others = 2000, .errors = 3,
                                    .reconnects = 0 };
    st->nthreads = 2;
    st->thread_events = xcalloc(2, sizeof(uint64_t));
    st->thread_time_s = xcalloc(2, sizeof(double));
    st->thread_events[0] = 600;
    st->thread_events[1] = 400;
    st->thread_time_s[0] = 3.0;
    st->thread_time_s[1] = 2.0;
    memset(bi, 0, sizeof(*bi));
    bi->test = "oltp_read_write";
    bi->command = "run";
    bi->driver = "sqlite";
    bi->threads = 2;
    bi->time_s = 10;
    bi->percentile = 95;
    bi->seed = 7;
    bi->lib.path = "/usr/lib/libsqlite3.so.0";
    bi->lib.version = "3.40.1";
    bi->lib.source_id = "src-id";
    bi->lib.isolation = "dlmopen(LM_ID_NEWLM)";
}

static void synth_release(struct run_stats *st)
{
    histogram_release(&st->hist);
    free(st->thread_events);
    free(st->thread_time_s);
}

struct final_args {
    struct bench_info *bi;
    struct run_stats *st;
    bool histogram;
};

static void call_final(void *arg)
{
    struct final_args *a = arg;
    bench_text_final(a->bi, a->st, a->histogram);
}

static void call_interval(void *arg)
{
    bench_text_interval(arg, 95, false);
}

static void call_interval_us(void *arg)
{
    bench_text_interval(arg, 95, true);
}

static int group_setup(void **state)
{
    (void)state;
    tmpdir = xstrdup("/tmp/pgolab-report.XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int group_teardown(void **state)
{
    (void)state;
    remove_tree(tmpdir);
    free(tmpdir);
    return 0;
}

/* ---------------------------------------------------------------- tests */

static void test_text_final_layout(void **state)
{
    (void)state;
    struct run_stats st;
    struct bench_info bi;
    synth(&st, &bi);
    struct final_args a = { &bi, &st, false };
    char *out = capture(call_final, &a);

    assert_non_null(strstr(out, "SQL statistics:\n    queries performed:\n"));
    assert_null(strstr(out, "Latency histogram"));
    check_count_line(out, "        read:", "14000");
    check_count_line(out, "        write:", "4000");
    check_count_line(out, "        other:", "2000");
    check_count_line(out, "        total:", "20000");
    check_count_line(out, "    transactions:", "1000   (100.00 per sec.)");
    check_count_line(out, "    queries:", "20000  (2000.00 per sec.)");
    check_count_line(out, "    ignored errors:", "3      (0.30 per sec.)");
    check_count_line(out, "    reconnects:", "0      (0.00 per sec.)");
    assert_non_null(strstr(out, "\nGeneral statistics:\n"));
    check_count_line(out, "    total time:", "10.0000s");
    check_count_line(out, "    total number of events:", "1000");

    assert_non_null(strstr(out, "\nLatency (ms):\n"));
    assert_true(fabs(check_latency_line(out, "         min:") - 0.02) < 1e-9);
    assert_true(fabs(check_latency_line(out, "         avg:") - 10.01) < 1e-9);
    assert_true(fabs(check_latency_line(out, "         max:") - 20.00) < 1e-9);
    double p95 = check_latency_line(out, "         95th percentile:");
    assert_true(fabs(p95 - 19.0) <= 19.0 * 0.01); /* rank 950 = 19 ms, within 1% */
    assert_true(fabs(check_latency_line(out, "         sum:") - 10010.00) < 1e-9);

    char *l = find_line(out, "    events (avg/stddev):");
    assert_string_equal(l, "    events (avg/stddev):           500.0000/100.00");
    free(l);
    l = find_line(out, "    execution time (avg/stddev):");
    assert_string_equal(l, "    execution time (avg/stddev):   2.5000/0.50");
    free(l);
    /* block order */
    assert_true(strstr(out, "SQL statistics:") < strstr(out, "General statistics:"));
    assert_true(strstr(out, "General statistics:") < strstr(out, "Latency (ms):"));
    assert_true(strstr(out, "Latency (ms):") < strstr(out, "Threads fairness:"));
    free(out);
    synth_release(&st);
}

static void test_text_final_histogram(void **state)
{
    (void)state;
    struct run_stats st;
    struct bench_info bi;
    synth(&st, &bi);
    struct final_args a = { &bi, &st, true };
    char *out = capture(call_final, &a);
    const char *h = strstr(out, "Latency histogram (values are in milliseconds)\n");
    assert_true(h == out); /* first */
    assert_non_null(strstr(out, "       value  ------------- distribution ------------- count\n"));
    /* the bars' counts add up to the events; values ascend */
    uint64_t sum = 0;
    double prev = -1;
    int lines = 0;
    for (const char *p = out; *p && p < strstr(out, "SQL statistics:");) {
        const char *nl = strchr(p, '\n');
        const char *bar = memchr(p, '|', (size_t)(nl - p));
        if (bar) {
            double v = strtod(p, NULL);
            const char *sp = nl;
            while (sp[-1] != ' ')
                sp--;
            assert_true(v > prev);
            prev = v;
            assert_int_equal(bar[1], '*');
            sum += strtoull(sp, NULL, 10);
            lines++;
        }
        p = nl + 1;
    }
    assert_int_equal(sum, NEV);
    assert_true(lines > 10);
    free(out);
    synth_release(&st);
}

static void test_text_final_percentile_off_and_empty(void **state)
{
    (void)state;
    struct run_stats st;
    struct bench_info bi;
    synth(&st, &bi);
    bi.percentile = 0;
    struct final_args a = { &bi, &st, true }; /* no histogram without percentiles */
    char *out = capture(call_final, &a);
    assert_null(strstr(out, "Latency histogram"));
    assert_null(strstr(out, "th percentile:"));
    char *l = find_line(out, "         percentile stats:");
    assert_string_equal(l, "         percentile stats:               disabled");
    free(l);
    free(out);
    synth_release(&st);

    /* nothing measured, no time: zeros, no division by zero */
    struct run_stats z = { 0 };
    uint64_t ev = 0;
    double tm = 0;
    histogram_init(&z.hist);
    z.nthreads = 1;
    z.thread_events = &ev;
    z.thread_time_s = &tm;
    synth(&st, &bi);
    synth_release(&st);
    a = (struct final_args){ &bi, &z, false };
    out = capture(call_final, &a);
    check_count_line(out, "    transactions:", "0      (0.00 per sec.)");
    assert_true(check_latency_line(out, "         min:") == 0.0);
    assert_true(check_latency_line(out, "         95th percentile:") == 0.0);
    assert_null(strstr(out, "nan"));
    free(out);
    histogram_release(&z.hist);
}

static void test_text_interval(void **state)
{
    (void)state;
    struct interval_stats iv = { .time_s = 3.0, .threads = 4, .tps = 123.456, .qps = 2469.12,
                                 .reads_per_s = 1728.384, .writes_per_s = 493.824,
                                 .other_per_s = 246.912, .lat_ms = 5.47, .errors_per_s = 0.5,
                                 .reconnects_per_s = 0 };
    char *out = capture(call_interval, &iv);
    assert_string_equal(out, "[ 3s ] thds: 4 tps: 123.46 qps: 2469.12 (r/w/o: 1728.38/493.82/246.91) "
                             "lat (ms,95%): 5.47 err/s: 0.50 reconn/s: 0.00\n");
    free(out);
    /* --latency-unit=us: the same line, the latency in microseconds */
    iv.lat_ms = 0.0042;
    out = capture(call_interval_us, &iv);
    assert_string_equal(out, "[ 3s ] thds: 4 tps: 123.46 qps: 2469.12 (r/w/o: 1728.38/493.82/246.91) "
                             "lat (us,95%): 4.20 err/s: 0.50 reconn/s: 0.00\n");
    free(out);
}

/* Latencies beyond the histogram's top (100 s): the percentile line says ">100000.00" in the
 * value's column, the histogram's last line is labelled ">100000.000", the interval line shows
 * ">100000.00", and JSON flags them ("overflow" lists, bucket "overflow": true). */
static void test_overflow_shown(void **state)
{
    (void)state;
    struct run_stats st;
    struct bench_info bi;
    synth(&st, &bi);
    histogram_release(&st.hist);
    histogram_init(&st.hist);
    for (int i = 0; i < 90; i++)
        histogram_add(&st.hist, 5000000);          /* 5 ms */
    for (int i = 0; i < 10; i++)
        histogram_add(&st.hist, 150000000000ULL);  /* 150 s: beyond the top */
    st.events = 100;
    struct final_args a = { &bi, &st, true };
    char *out = capture(call_final, &a);
    char *l = find_line(out, "         95th percentile:");
    assert_string_equal(l, "         95th percentile:                  >100000.00");
    free(l);
    assert_true(fabs(check_latency_line(out, "         max:") - 150000.00) < 1e-6); /* exact */
    assert_non_null(strstr(out, " >100000.000 |"));
    assert_null(strstr(out, "\n  100000.000 |")); /* never as a plain bucket value */
    free(out);

    json_t *j = bench_json(&bi, &st, NULL, 0);
    json_t *lat = json_object_get(j, "latency_ms");
    json_t *over = json_object_get(lat, "overflow");
    assert_true(json_is_array(over));
    assert_int_equal(json_array_size(over), 4); /* p95, p99, p99_9, percentile_value (95); not p50/p90 */
    assert_string_equal(json_string_value(json_array_get(over, 0)), "p95");
    assert_true(json_real_value(json_object_get(lat, "p95")) == 100000.0);
    assert_true(fabs(json_real_value(json_object_get(lat, "p50")) - 5.0) < 0.05);
    json_t *hist = json_object_get(j, "histogram");
    json_t *last = json_array_get(hist, json_array_size(hist) - 1);
    assert_true(json_is_true(json_object_get(last, "overflow")));
    assert_int_equal(json_integer_value(json_object_get(last, "count")), 10);
    json_t *first = json_array_get(hist, 0);
    assert_null(json_object_get(first, "overflow"));
    json_decref(j);
    synth_release(&st);

    struct interval_stats iv = { .time_s = 7.0, .threads = 1, .lat_ms = 100000.0,
                                 .lat_overflow = true };
    out = capture(call_interval, &iv);
    assert_string_equal(out, "[ 7s ] thds: 1 tps: 0.00 qps: 0.00 (r/w/o: 0.00/0.00/0.00) "
                             "lat (ms,95%): >100000.00 err/s: 0.00 reconn/s: 0.00\n");
    free(out);
}

/* --rate: sysbench's second line per interval, "[ Ns ] queue length: Q, concurrency: C". */
static void test_text_interval_rate(void **state)
{
    (void)state;
    struct interval_stats iv = { .time_s = 2.0, .threads = 4, .tps = 10, .qps = 200,
                                 .reads_per_s = 140, .writes_per_s = 40, .other_per_s = 20,
                                 .lat_ms = 1.5, .rate_mode = true, .queue_length = 17,
                                 .concurrency = 3 };
    char *out = capture(call_interval, &iv);
    assert_string_equal(out, "[ 2s ] thds: 4 tps: 10.00 qps: 200.00 (r/w/o: 140.00/40.00/20.00) "
                             "lat (ms,95%): 1.50 err/s: 0.00 reconn/s: 0.00\n"
                             "[ 2s ] queue length: 17, concurrency: 3\n");
    free(out);
}

static void test_json(void **state)
{
    (void)state;
    struct run_stats st;
    struct bench_info bi;
    synth(&st, &bi);
    struct interval_stats ivs[2] = {
        { .time_s = 1, .threads = 2, .tps = 90, .qps = 1800, .lat_ms = 18.5 },
        { .time_s = 2, .threads = 2, .tps = 110, .qps = 2200, .lat_ms = 19.5, .errors_per_s = 1 },
    };
    json_t *j = bench_json(&bi, &st, ivs, 2);
    assert_non_null(j);
    assert_string_equal(json_string_value(json_object_get(j, "test")), "oltp_read_write");
    assert_string_equal(json_string_value(json_object_get(j, "command")), "run");
    assert_string_equal(json_string_value(json_object_get(j, "db_driver")), "sqlite");
    assert_string_equal(json_string_value(json_object_get(j, "pgolab_version")), PGOLAB_VERSION);
    assert_int_equal(json_integer_value(json_object_get(j, "threads")), 2);
    assert_int_equal(json_integer_value(json_object_get(j, "events")), NEV);
    assert_int_equal(json_integer_value(json_object_get(j, "transactions")), NEV);
    assert_int_equal(json_integer_value(json_object_get(j, "queries")), 20000);
    assert_int_equal(json_integer_value(json_object_get(j, "reads")), 14000);
    assert_int_equal(json_integer_value(json_object_get(j, "writes")), 4000);
    assert_int_equal(json_integer_value(json_object_get(j, "other")), 2000);
    assert_int_equal(json_integer_value(json_object_get(j, "ignored_errors")), 3);
    assert_int_equal(json_integer_value(json_object_get(j, "reconnects")), 0);
    assert_true(fabs(json_real_value(json_object_get(j, "total_time_s")) - 10.0) < 1e-12);
    assert_true(fabs(json_real_value(json_object_get(j, "tps")) - 100.0) < 1e-9);
    assert_true(fabs(json_real_value(json_object_get(j, "qps")) - 2000.0) < 1e-9);
    assert_true(fabs(json_real_value(json_object_get(j, "errors_per_s")) - 0.3) < 1e-9);
    assert_true(json_is_false(json_object_get(j, "interrupted")));
    assert_true(json_is_false(json_object_get(j, "failed")));
    assert_true(json_is_object(json_object_get(j, "options")));

    json_t *lib = json_object_get(j, "library");
    assert_string_equal(json_string_value(json_object_get(lib, "version")), "3.40.1");
    assert_string_equal(json_string_value(json_object_get(lib, "path")), "/usr/lib/libsqlite3.so.0");
    assert_true(json_is_null(json_object_get(lib, "loaded_from")));

    json_t *lat = json_object_get(j, "latency_ms");
    double min = json_real_value(json_object_get(lat, "min"));
    double avg = json_real_value(json_object_get(lat, "avg"));
    double max = json_real_value(json_object_get(lat, "max"));
    double sum = json_real_value(json_object_get(lat, "sum"));
    assert_true(fabs(min - 0.02) < 1e-9);
    assert_true(fabs(avg - 10.01) < 1e-9);
    assert_true(fabs(max - 20.0) < 1e-9);
    assert_true(fabs(sum - 10010.0) < 1e-6);
    static const struct { const char *k; double want; } pct[] = {
        { "p50", 10.0 }, { "p90", 18.0 }, { "p95", 19.0 }, { "p99", 19.8 }, { "p99_9", 19.98 },
    };
    double prev = 0;
    for (size_t i = 0; i < ARRAY_SIZE(pct); i++) {
        double v = json_real_value(json_object_get(lat, pct[i].k));
        assert_true(fabs(v - pct[i].want) <= pct[i].want * 0.01);
        assert_true(v >= prev && v >= min && v <= max);
        prev = v;
    }
    assert_int_equal(json_integer_value(json_object_get(lat, "percentile")), 95);
    assert_true(json_real_value(json_object_get(lat, "percentile_value")) ==
                json_real_value(json_object_get(lat, "p95")));

    json_t *hist = json_object_get(j, "histogram");
    size_t i;
    json_t *b;
    uint64_t total = 0;
    double prev_ms = -1;
    assert_true(json_array_size(hist) > 10);
    json_array_foreach(hist, i, b) {
        double ms = json_real_value(json_object_get(b, "ms"));
        json_int_t c = json_integer_value(json_object_get(b, "count"));
        assert_true(ms > prev_ms);
        assert_true(c > 0);
        prev_ms = ms;
        total += (uint64_t)c;
    }
    assert_int_equal(total, NEV);

    json_t *series = json_object_get(j, "intervals");
    assert_int_equal(json_array_size(series), 2);
    json_t *s1 = json_array_get(series, 1);
    assert_true(json_real_value(json_object_get(s1, "time_s")) == 2.0);
    assert_true(json_real_value(json_object_get(s1, "tps")) == 110.0);
    assert_true(json_real_value(json_object_get(s1, "latency_ms")) == 19.5);
    assert_true(json_real_value(json_object_get(s1, "errors_per_s")) == 1.0);
    assert_int_equal(json_integer_value(json_object_get(s1, "threads")), 2);

    json_t *fair = json_object_get(j, "fairness");
    assert_true(fabs(json_real_value(json_object_get(fair, "events_avg")) - 500) < 1e-9);
    assert_true(fabs(json_real_value(json_object_get(fair, "events_stddev")) - 100) < 1e-9);
    assert_true(fabs(json_real_value(json_object_get(fair, "exec_time_avg_s")) - 2.5) < 1e-9);
    assert_true(fabs(json_real_value(json_object_get(fair, "exec_time_stddev_s")) - 0.5) < 1e-9);
    json_decref(j);

    /* no intervals */
    j = bench_json(&bi, &st, NULL, 0);
    assert_int_equal(json_array_size(json_object_get(j, "intervals")), 0);
    json_decref(j);
    synth_release(&st);
}

static void test_mean_stddev(void **state)
{
    (void)state;
    double v[] = { 2, 4, 4, 4, 5, 5, 7, 9 }, m, sd;
    mean_stddev(v, 8, &m, &sd);
    assert_true(fabs(m - 5) < 1e-12);
    assert_true(fabs(sd - 2) < 1e-12); /* population stddev */
    mean_stddev(v, 0, &m, &sd);
    assert_true(m == 0 && sd == 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_text_final_layout),
        cmocka_unit_test(test_text_final_histogram),
        cmocka_unit_test(test_text_final_percentile_off_and_empty),
        cmocka_unit_test(test_text_interval),
        cmocka_unit_test(test_overflow_shown),
        cmocka_unit_test(test_text_interval_rate),
        cmocka_unit_test(test_json),
        cmocka_unit_test(test_mean_stddev),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
