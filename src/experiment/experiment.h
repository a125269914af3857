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
};

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
    int variant, workload, threads, round;  /* indices into the config (threads = the count) */
    double tps, qps;
    double lat_avg_ms, lat_p95_ms, lat_min_ms, lat_max_ms;
    uint64_t transactions, errors;
    char *json;                              /* the child's full JSON report */
};

struct experiment_result {
    struct run_result *runs;
    int nruns;
    char *env_json;  /* environment: kernel, CPU model, cores, hostname (JSON object text) */
};

/* Fill sha256/version/source_id of every variant (sha256 via the sha256sum program,
 * version and source id by asking `pgolab bench ... version` of the library). -1 on error. */
int experiment_fingerprint(const struct experiment_config *cfg);

/* Run the whole experiment. On error returns -1 with a message; runs already finished stay
 * in *res (the caller can still report or save them). */
int experiment_run(const struct experiment_config *cfg, struct experiment_result *res);

/* The seed-000-shaped tables on out: per workload, for tps, avg latency (ms) and p95 (ms):
 * threads | baseline | <variant> | % improvement, each cell the median over rounds with the
 * min-max spread, plus an Average row. */
void experiment_report_text(FILE *out, const struct experiment_config *cfg,
                            const struct experiment_result *res);

/* Write every run, the variants' fingerprints, settings and environment as JSON. */
int experiment_write_json(const char *path, const struct experiment_config *cfg,
                          const struct experiment_result *res);

void experiment_result_release(struct experiment_result *res);

#endif
