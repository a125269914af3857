/* experiment: the A/B measurement engine shared by `pgolab pgo` and `pgolab compare`.
 * variants x workloads x thread counts x rounds, interleaved (order shuffled per round),
 * every run a child `pgolab bench ... run --format=json` on a fresh copy of the same prepared
 * data. The config and its strings are owned by the caller; results are owned by the
 * experiment_result and freed by experiment_result_release(). */
#ifndef PGOLAB_EXPERIMENT_H
#define PGOLAB_EXPERIMENT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* One build under test and its fingerprint. */
struct variant {
    const char *name;      /* e.g. "baseline", "pgo", or the user's NAME */
    const char *library;   /* path to the libsqlite3 shared library of this build */
    /* Fingerprint (NULL = unknown; experiment_fingerprint() fills what it can) */
    char *sha256;          /* of the library file */
    char *version;         /* sqlite3_libversion() */
    char *source_id;       /* sqlite3_sourceid() */
    const char *compiler;  /* e.g. "gcc (Debian 12.2.0-14) 12.2.0" */
    const char *cflags;    /* flags the library was built with */
    char *loaded_from;     /* the file the child actually mapped (dladdr), or NULL */
};
/* sha256, version, source_id and loaded_from are heap strings owned by the variant
 * (experiment_fingerprint() fills the NULL ones); experiment_variant_release() frees them. */

struct experiment_config {
    struct variant *variants;  /* variants[0] is the baseline */
    int nvariants;
    char **workloads;          /* e.g. oltp_read_only, oltp_read_write */
    int nworkloads;
    int *threads;              /* thread counts */
    int nthreads;
    int rounds;                /* >= 1 */
    double time_s;             /* --time per run */
    int tables, table_size;    /* data set, prepared once per workload */
    const char *workdir;       /* directory for database files (tmpfs when available) */
    const char *pgolab;        /* the pgolab binary to run children with */
    char **bench_args;         /* extra options for every child, NULL-terminated, or NULL */
    uint64_t seed;             /* seed of the per-round order shuffle */
    bool progress;             /* progress lines on stderr */
};

/* One finished run (one child process). */
struct run_result {
    int variant, workload, threads, round;  /* indices into the config, except threads (the
                                               thread count) and round (1..rounds) */
    double tps, qps;
    double lat_avg_ms, lat_p95_ms, lat_min_ms, lat_max_ms;
    uint64_t transactions, errors;
    char *json;                              /* the child's full JSON report */
};

struct experiment_result {
    struct run_result *runs;  /* in the order they ran */
    int nruns;
    char *env_json;  /* environment: kernel, CPU model, cores, hostname (JSON object text) */
    char *error;     /* why the experiment stopped early (one line), or NULL */
    int signal;      /* the signal (SIGINT/SIGTERM) that stopped it, or 0 */
    double started_at, finished_at;  /* wall clock, seconds since the epoch */
};

/* The three quantities of the report. */
enum experiment_metric {
    METRIC_TPS,         /* transactions per second; higher is better */
    METRIC_LAT_AVG_MS,  /* average response time, ms; lower is better */
    METRIC_LAT_P95_MS,  /* 95th percentile response time, ms; lower is better */
};
#define METRIC_COUNT 3

/* One report cell: a metric of one variant at one workload and thread count over rounds. */
struct cell_stats {
    int n;                    /* runs found (0 = no data; the other fields are then 0) */
    double median, min, max;  /* median: GSL, mean of the two middle values for even n */
};

/* Fill sha256/version/source_id/loaded_from of every variant where NULL (sha256 via the
 * sha256sum program, the rest by asking `pgolab bench --sqlite-library=LIB --format=json
 * info`). -1 with a message on error. */
int experiment_fingerprint(const struct experiment_config *cfg);
/* Free the fingerprint strings of v and set them to NULL. */
void experiment_variant_release(struct variant *v);

/* Run the whole experiment; *res is initialized here. On error (a child failed, or SIGINT/
 * SIGTERM arrived: both are caught while it runs) returns -1 with a one-line message, also
 * kept in res->error; runs already finished stay in *res (the caller can still report or
 * save them). Database files are removed as it goes; logs stay in cfg->workdir. */
int experiment_run(const struct experiment_config *cfg, struct experiment_result *res);

/* The variant order of one block (round 1..rounds, block = workload * nthreads + thread
 * index): a permutation of 0..n-1 written to order[], a GSL Mersenne-Twister shuffle
 * (gsl_ran_shuffle) seeded with splitmix64(seed, round, block), so each block is
 * reproducible on its own. */
void experiment_order(uint64_t seed, int round, int block, int n, int *order);

/* Read a child's `bench run --format=json` report into r (tps, qps, latencies, counts; r->json
 * gets a copy of the text). Indices are left alone. -1 with a message if it is not one. */
int experiment_parse_run(const char *json, struct run_result *r);

/* The value of metric m in one run. */
double experiment_metric_value(const struct run_result *r, enum experiment_metric m);

/* Median/min/max of metric m over the runs of (variant, workload, thread count). */
struct cell_stats experiment_cell(const struct experiment_result *res, int variant, int workload,
                                  int threads, enum experiment_metric m);

/* % improvement of value over base, positive = better: TPS (value - base) / base * 100,
 * latencies (base - value) / base * 100. NAN when base is 0 or either is NAN. */
double experiment_improvement(enum experiment_metric m, double base, double value);

/* The seed-000-shaped tables on out: per workload, for tps, avg latency (ms) and p95 (ms):
 * threads | baseline | <variant> | % improvement, each cell the median over rounds with the
 * min-max spread, plus an Average row: the mean of the per-thread medians, and the %
 * improvement of those means (as seed 000 computes its Average row). */
void experiment_report_text(FILE *out, const struct experiment_config *cfg,
                            const struct experiment_result *res);

/* Write every run, the variants' fingerprints, settings, environment, run order and the
 * summary cells as JSON (via path.tmp + rename, so a reader never sees half a file).
 * -1 with a message on error. */
int experiment_write_json(const char *path, const struct experiment_config *cfg,
                          const struct experiment_result *res);

void experiment_result_release(struct experiment_result *res);

#endif
