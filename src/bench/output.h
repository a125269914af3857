/* output: what `pgolab bench` prints of its own run, beside the runner that measures it: the
 * sysbench 1.0.20 text format line for line (header, intermediate lines, final block;
 * output_text.c) and the same figures as JSON (plus several percentiles, the histogram, the
 * per-interval series and the library's identity; output_json.c). Text goes to stdout. The
 * experiment reports (src/report) are another thing: they read stored runs. */
#ifndef PGOLAB_BENCH_OUTPUT_H
#define PGOLAB_BENCH_OUTPUT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "bench/runner.h"
#include "db/driver.h"
#include "util/opts.h"

#include "version.h"

/* What the reports say about the run besides its statistics. Caller-owned. */
struct bench_info {
    const char *test;          /* workload name */
    const char *command;       /* prepare, run, ... */
    const char *driver;        /* --db-driver */
    int threads;
    double time_s;
    uint64_t events;
    double report_interval;    /* s */
    double rate;               /* --rate, events/s (0 = closed loop) */
    double warmup_s;           /* --warmup-time, s */
    double forced_shutdown_s;  /* --forced-shutdown grace, s (< 0 = off) */
    int percentile;            /* --percentile */
    uint64_t seed;             /* 0 = from the clock */
    struct db_libinfo lib;     /* zeroed when unknown */
    const struct opts *opts;   /* every option, for the JSON "options" object */
    bool latency_us;           /* --latency-unit=us: text latencies in microseconds (the
                                * default, ms, is sysbench's byte for byte) */
};

/* First line of every text output (sysbench's version line, naming pgolab). */
void bench_text_banner(const struct bench_info *bi);
/* "Running the test with following options:" ... "Initializing worker threads..." */
void bench_text_run_header(const struct bench_info *bi);
/* "[ 1s ] thds: ... tps: ... qps: ... (r/w/o: ...) lat (ms,95%): ... err/s: ... reconn/s: ..."
 * (us: "lat (us,95%)", the value in microseconds). */
void bench_text_interval(const struct interval_stats *iv, int percentile, bool us);
/* The cumulative block: optional latency histogram, SQL statistics, General statistics,
 * Latency (ms), Threads fairness; with bi->latency_us the histogram and "Latency (us):" in
 * microseconds, same layout. */
void bench_text_final(const struct bench_info *bi, const struct run_stats *st, bool histogram);

/* The whole run as a JSON object (new reference; caller decrefs). ivs may be NULL. */
json_t *bench_json(const struct bench_info *bi, const struct run_stats *st,
                    const struct interval_stats *ivs, int niv);
/* {"path","version","source_id","loaded_from","isolation"} (new reference). */
json_t *bench_json_libinfo(const struct db_libinfo *lib);
/* Print a JSON value on stdout with a trailing newline. */
void bench_json_print(json_t *j);

/* Population mean and standard deviation of n values (sysbench's fairness stddev). */
void mean_stddev(const double *v, int n, double *mean, double *sd);

#endif
