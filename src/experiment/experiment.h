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

#include <jansson.h>

#include "server/server.h"
#include "store/store.h"

/* What a run measures (--measure of compare and pgo). */
enum experiment_measure {
    MEASURE_TIME,          /* tps and latencies of a --time run (the default) */
    MEASURE_INSTRUCTIONS,  /* instructions per transaction under valgrind callgrind: each run
                            * is two children at 1 thread with a fixed event count, N = events
                            * and N/5, and the value is the marginal cost
                            * (I(N) - I(N/5)) / (T(N) - T(N/5)) (I = callgrind's total
                            * instruction count, T = transactions the child reported), so the
                            * fixed cost of start-up, library loading and statement preparation
                            * cancels out. Deterministic for identical inputs; not time. */
};
#define EXPERIMENT_EVENTS_DEFAULT 2000  /* --events default of --measure=instructions */

/* When a variant's data is reset to the prepared state (--reset of compare). Every variant
 * runs on its own working copy of a template. */
enum experiment_reset {
    RESET_RUN,      /* every run starts from a fresh copy of the template, prepared once per
                     * workload by the baseline (the default) */
    RESET_ROUND,    /* the working copy is refreshed at each variant's first run of a round;
                     * within a round its runs continue on the data the previous one left */
    RESET_VARIANT,  /* each variant prepares its own template with its own build (once per
                     * workload); its runs continue on the same data across rounds */
};

/* What a variant is (compare's NAME=KIND:PATH). */
enum variant_kind {
    VARIANT_SQLITE,    /* library: a libsqlite3 shared library, loaded by the bench child */
    VARIANT_SERVER,    /* library: a server binary or install prefix (mysql: mariadbd or
                        * mysqld; pgsql: postgres), started by pgolab (src/server) on a
                        * private datadir for each run, stopped cleanly after it */
    VARIANT_EXTERNAL,  /* library: "mysql://HOST:PORT" or "pgsql://HOST:PORT", a running
                        * server pgolab does not manage (data prepared once per workload) */
};

/* One build under test and its fingerprint. */
struct variant {
    const char *name;      /* e.g. "baseline", "pgo", or the user's NAME */
    const char *library;   /* what is measured: see enum variant_kind */
    enum variant_kind kind;          /* VARIANT_SQLITE when zero */
    enum server_kind server_kind;    /* VARIANT_SERVER / _EXTERNAL: mysql or pgsql */
    const char *host;                /* VARIANT_EXTERNAL: the server's host and port */
    int port;
    /* Fingerprint (NULL = unknown; experiment_fingerprint() fills what it can) */
    char *sha256;          /* of the library file */
    char *version;         /* sqlite3_libversion(); servers: flavor and version, e.g.
                            * "MariaDB 10.11.19" (from `BINARY --version`) */
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
    enum experiment_reset reset;  /* --reset; instruction mode always copies per run */
    int warmup_runs;           /* --warmup-runs: runs per variant, workload and thread count
                                * made before round 1 and discarded (time mode only) */
    double time_s;             /* --time per run */
    int tables, table_size;    /* data set, prepared once per workload */
    const char *workdir;       /* directory for database files (tmpfs when available) */
    const char *pgolab;        /* the pgolab binary to run children with */
    char **bench_args;         /* extra options for every child, NULL-terminated, or NULL */
    char **server_options;     /* --server-option values for managed servers (VARIANT_SERVER) */
    /* Client options for the children of running servers (VARIANT_EXTERNAL), e.g.
     * "--mysql-user=U", "--pgsql-db=D": each goes to the variants of its driver. NULL-terminated
     * or NULL. Passwords are not here: the children inherit MYSQL_PWD / PGPASSWORD. */
    const char *const *external_args;
    int nserver_options;
    uint64_t seed;             /* seed of the per-round order shuffle */
    bool progress;             /* progress lines on stderr */
    /* The results store (optional; all zero = nothing is recorded, as before). With store
     * set and experiment_id > 0 (experiment_record_begin/_resume set both), experiment_run()
     * first loads the runs already recorded for that experiment into the result and will not
     * run them again, then records every new run (store_run_add) as soon as it ends. The
     * store stays the caller's. */
    struct store *store;
    int64_t experiment_id;     /* > 0: reports name it ("pgolab experiment 12: ...") */
    const char *kind;          /* "compare" | "pgo" | "calibrate" (or NULL): for reports */
    /* --measure=instructions: measure is MEASURE_INSTRUCTIONS, events (>= 5) the fixed event
     * count N of each run, valgrind the program to run (NULL = "valgrind" on PATH). time_s
     * is then unused by the runs; threads should be {1} (the CLIs force it). Settings record
     * "measure" and "events" only in this mode, so time-mode settings are unchanged. */
    enum experiment_measure measure;
    int events;
    const char *valgrind;
};

/* One finished run (one child process). */
struct run_result {
    int variant, workload, threads, round;  /* indices into the config, except threads (the
                                               thread count) and round (1..rounds) */
    double tps, qps;
    double lat_avg_ms, lat_p95_ms, lat_min_ms, lat_max_ms;
    uint64_t transactions, errors;
    char *json;                              /* the child's full JSON report (may be NULL
                                                for a run read back from the store) */
    double started_at;                       /* wall clock, s since the epoch (NAN unknown) */
    double duration_s;                       /* the child's whole run, s (NAN unknown) */
    double instr_per_txn;                    /* --measure=instructions: marginal instructions
                                                per transaction (NAN otherwise); stored in
                                                the run's report_json as
                                                "callgrind": {"instructions_per_transaction",
                                                ...} */
    double i1_miss_per_txn;                  /* the same for callgrind's simulated I1 cache
                                                misses ("i1_misses_per_transaction") */
    double branch_miss_per_txn;              /* and its simulated branch mispredictions,
                                                conditional + indirect
                                                ("branch_mispredicts_per_transaction") */
};

struct experiment_result {
    struct run_result *runs;  /* in the order they ran */
    int nruns;
    char *env_json;  /* environment: kernel, CPU model, cores, hostname (JSON object text) */
    char *error;     /* why the experiment stopped early (one line), or NULL */
    int signal;      /* the signal (SIGINT/SIGTERM) that stopped it, or 0 */
    double started_at, finished_at;  /* wall clock, seconds since the epoch */
    int resumed;     /* runs already recorded in the store when experiment_run() started
                      * (they are the first `resumed` entries of runs) */
};

/* The quantities of the reports. The first METRIC_COUNT are the seed-000 tables' (tps, avg
 * and p95 latency); the seed-003 shape adds the others. */
enum experiment_metric {
    METRIC_TPS,         /* transactions per second; higher is better */
    METRIC_LAT_AVG_MS,  /* average response time, ms; lower is better */
    METRIC_LAT_P95_MS,  /* 95th percentile response time, ms; lower is better */
    METRIC_QPS,         /* queries per second; higher is better */
    METRIC_LAT_MIN_MS,  /* minimum response time, ms; lower is better */
    METRIC_LAT_MAX_MS,  /* maximum response time, ms; lower is better */
    METRIC_INSTR,       /* instructions per transaction (callgrind, --measure=instructions);
                           lower is better */
    METRIC_I1_MISS,     /* simulated I1 cache misses per transaction (callgrind --cache-sim);
                           lower is better: the instruction-fetch side PGO's code layout
                           improves */
    METRIC_BRANCH_MISS, /* simulated branch mispredictions per transaction (--branch-sim);
                           lower is better */
};
#define METRIC_COUNT 3      /* the seed-000 metrics */
#define METRIC_ALL 9        /* every metric */
#define INSTR_METRICS 3     /* the instruction mode's: METRIC_INSTR .. METRIC_BRANCH_MISS */

/* One report cell: a metric of one variant at one workload and thread count over rounds. */
struct cell_stats {
    int n;                    /* runs found (0 = no data; the other fields are then 0) */
    double median, min, max;  /* median: GSL, mean of the two middle values for even n */
};

/* Fill sha256/version/source_id/loaded_from of every variant where NULL (sha256 via the
 * sha256sum program, the rest by asking `pgolab bench --sqlite-library=LIB --format=json
 * info`; managed servers: sha256 of the binary and the version its --version prints;
 * external servers: nothing). -1 with a message on error. */
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
/* Short key of a metric ("tps", "lat_avg_ms", "qps", ...), used in CSV and JSON. */
const char *experiment_metric_key(enum experiment_metric m);
/* true for the latencies (lower is better), false for tps and qps. */
bool experiment_metric_lower_is_better(enum experiment_metric m);

/* Median/min/max of metric m over the runs of (variant, workload, thread count). */
struct cell_stats experiment_cell(const struct experiment_result *res, int variant, int workload,
                                  int threads, enum experiment_metric m);
/* The values of metric m over the runs of (variant, workload index, thread count) in run
 * order: a new array (caller frees; never NULL), *n its length (0 = no runs). */
double *experiment_cell_values(const struct experiment_result *res, int variant, int workload,
                               int threads, enum experiment_metric m, int *n);

/* % improvement of value over base, positive = better: TPS and QPS (value - base) / base * 100,
 * latencies (base - value) / base * 100. NAN when base is 0 or either is NAN. */
double experiment_improvement(enum experiment_metric m, double base, double value);

/* The change of a variant against the baseline (variant 0) over one or more cells (a cell is
 * a workload index and a thread count), as the report tables apply the statistics
 * (src/stats/compare.h, alpha 0.05):
 * - one cell: stats_compare() of the rounds: ratio of medians (variant / baseline), its
 *   bootstrap CI, two-sided Mann-Whitney p; significant = p < alpha and the CI excludes 1;
 * - several cells (the Average rows): the geometric mean of the cells' median ratios with
 *   its bootstrap CI (stats_geomean_ratio) and a Mann-Whitney test of every round pooled,
 *   each divided by its cell's baseline median (so cells of different scale mix);
 *   significant = p < alpha and the CI excludes 1.
 * Cells without data for both are left out. When some cell has fewer than 2 rounds of either,
 * there are no statistics: ratio is the point estimate, the CI collapses to it, p = 1. */
struct experiment_change {
    int ncells;            /* cells with data for both (0: nothing to compare) */
    int n1, n2;            /* rounds of the baseline and the variant over those cells */
    bool stats;            /* every such cell has >= 2 rounds of both */
    bool pooled;           /* several cells (geometric mean) */
    bool lower_is_better;  /* the metric's direction */
    double ratio;          /* variant / baseline (raw, whatever the direction) */
    double ci_lo, ci_hi;   /* CI of ratio at level `level` */
    double level;          /* 1 - alpha */
    double p_value;
    bool significant;
};

/* Compute the change of variant v in metric m over the cells (workloads[i], threads[i]),
 * i < ncells, with bootstrap seed `seed`. 0 on success (out->ncells may still be 0: no data),
 * -1 (no message) when the values are unusable (e.g. NaN or 0 in a ratio). */
int experiment_change(const struct experiment_result *res, enum experiment_metric m, int v,
                      const int *workloads, const int *threads, int ncells, uint64_t seed,
                      struct experiment_change *out);

/* The change as a report cell, appended to sb: "-" without data, "no statistics with 1
 * round" without statistics, "~" when not significant, else the change in percent with its CI
 * in the improvement sign convention (stats_format_change / stats_format_interval). */
void experiment_change_format(struct strbuf *sb, const struct experiment_change *c);

/* The change in percent, positive = better (stats_change_pct), and its CI bounds ordered
 * low..high; NAN when there is no data. */
double experiment_change_pct(const struct experiment_change *c, double *lo, double *hi);

/* The seed-000-shaped tables on out: per workload, for tps, avg latency (ms) and p95 (ms):
 * threads | baseline | <variant> | % improvement | change (95% CI), each cell the median over
 * rounds with the min-max spread, plus an Average row: the mean of the per-thread medians,
 * and the % improvement of those means (as seed 000 computes its Average row). The same as
 * report_experiment() (src/report/tables.h) with REPORT_SEED000 and REPORT_TEXT. */
void experiment_report_text(FILE *out, const struct experiment_config *cfg,
                            const struct experiment_result *res);

/* "run" | "round" | "variant" into *out; -1 with a message otherwise. */
int experiment_reset_parse(const char *s, enum experiment_reset *out);
const char *experiment_reset_name(enum experiment_reset r);

/* "time" | "instructions" into *out; -1 with a message otherwise. */
int experiment_measure_parse(const char *s, enum experiment_measure *out);

/* Switch cfg to --measure=instructions with `events` per run (>= 5): checks that valgrind
 * runs, and forces the thread counts to the single count 1 (with a warning when others were
 * asked for: with several threads the counts include lock spinning and scheduling). cfg->threads
 * must have room for one int. -1 with a message on error. */
int experiment_instructions_setup(struct experiment_config *cfg, int64_t events);

/* Totals of a callgrind output file, from its "events:" line and its "totals:" line (else its
 * "summary:" line): ir = instructions (Ir), i1_miss = I1mr, branch_miss = Bcm + Bim (0 when
 * the file has no such events: no --cache-sim / --branch-sim). -1 with a message when the
 * file has no totals. */
struct callgrind_counts {
    uint64_t ir, i1_miss, branch_miss;
};
int experiment_callgrind_counts(const char *path, struct callgrind_counts *out);
/* Only the instruction count (Ir) of experiment_callgrind_counts(). */
int experiment_callgrind_total(const char *path, uint64_t *out);

/* Runs the config plans: variants x workloads x thread counts x rounds. */
int experiment_runs_planned(const struct experiment_config *cfg);

/* ---- The results store (src/store) ---- */

/* The environment as JSON object text (caller frees): pgolab_version, started_at (now),
 * hostname, kernel, kernel_version, machine, cpu_model, cores, memory_bytes, loadavg_1m,
 * cpufreq_governor (null where unreadable). */
char *experiment_environment_json(void);

/* The settings that define the measurement, as JSON object text (caller frees):
 * "variants": [names in order], "variant.NAME": {library, sha256[, compiler, cflags]} per
 * variant (so a resume refusal names the variant that changed), "workloads", "threads",
 * "rounds", "time_s", "tables", "table_size", "bench_args"; plus every key of extra_json (a
 * JSON object text, e.g. pgo's training settings, or NULL; anything else is left out with a
 * warning). Not the seed (stored apart), the work directory or the binary's path, which do
 * not change what is measured. Keys are sorted, so equal settings give equal text. */
char *experiment_settings_json(const struct experiment_config *cfg, const char *extra_json);

/* Start recording a new experiment of this kind in store s: experiment row (settings,
 * environment, cfg->seed), every variant with its fingerprint, status "running". Sets
 * cfg->store, cfg->experiment_id and cfg->kind, and prints "experiment N recorded in FILE"
 * on stderr. Call after experiment_fingerprint(). -1 with a message on error. */
int experiment_record_begin(struct experiment_config *cfg, struct store *s, const char *kind,
                            const char *extra_json);

/* Continue experiment id of store s (for --resume=ID): refuses with a one-line message when
 * there is no such experiment ("no experiment 42 in FILE (see pgolab history)"), when it is of
 * another kind, already complete ("experiment 3 is complete; nothing to resume"), or when its
 * settings differ from cfg's (naming each key that differs). Otherwise sets cfg->seed to the
 * stored seed (so every round keeps its run order), cfg->store, cfg->experiment_id and
 * cfg->kind, marks it running again and prints "resuming experiment N in FILE: K of M runs
 * recorded" on stderr (plus a warning when the machine differs from the one it started on).
 * Call after experiment_fingerprint(). */
int experiment_record_resume(struct experiment_config *cfg, struct store *s, int64_t id,
                             const char *kind, const char *extra_json);

/* Mark the recorded experiment finished after experiment_run() returned run_rc: "complete"
 * (0), "interrupted" (a signal stopped it) or "failed". Nothing when cfg->store is NULL. */
int experiment_record_finish(const struct experiment_config *cfg,
                             const struct experiment_result *res, int run_rc);

/* Look up experiment id: 0 and *out filled (release it with store_experiment_release()), or
 * -1 after printing "no experiment ID in FILE (see pgolab history)" or the store's error. */
int experiment_lookup(struct store *s, int64_t id, struct store_experiment *out);

/* An experiment read back from the store, as a config and result like experiment_run()'s:
 * owns everything cfg and res point to. */
struct experiment_loaded {
    struct experiment_config cfg;
    struct experiment_result res;
    struct store_experiment exp;  /* the stored row: kind, status, dates, settings, variants */
    char **owned;                 /* strings behind cfg (workloads, bench_args) */
    int nowned;
};

/* Load experiment id (lookup as experiment_lookup) with every recorded run. Settings keys
 * that are missing are rebuilt from the runs (workloads and thread counts in order of first
 * appearance, rounds = the largest round). An experiment that is not complete gets a
 * res.error saying so, so the report marks it INCOMPLETE. -1 with a message on error. */
int experiment_load(struct store *s, int64_t id, struct experiment_loaded *out);
void experiment_loaded_release(struct experiment_loaded *l);

/* The differences between two environments (experiment_environment_json() texts) that can
 * move results: hostname, kernel, kernel_version, machine, cpu_model, cores, memory_bytes,
 * cpufreq_governor, pgolab_version, and loadavg_1m when with_load and the two differ by 0.5
 * or more (half a core of other work). Appended to out one per line, "label: a -> b\n".
 * Returns how many differ. */
int experiment_env_diff(const char *env_a, const char *env_b, bool with_load,
                        struct strbuf *out);

/* Write every run, the variants' fingerprints, settings, environment, run order and the
 * summary cells as JSON (via path.tmp + rename, so a reader never sees half a file).
 * -1 with a message on error. */
int experiment_write_json(const char *path, const struct experiment_config *cfg,
                          const struct experiment_result *res);

void experiment_result_release(struct experiment_result *res);

/* The variants and their fingerprints as a JSON array (new reference). */
json_t *experiment_variants_json(const struct experiment_config *cfg);

/* The settings of the measurement that the JSON file, the results store and the report's JSON
 * hold, added to set: "workloads" (names), "threads" (counts), "rounds", "reset" and "warmup_runs" when not the
 * default, "server_options" when given, "time_s", "tables", "table_size", and "measure" +
 * "events" when counting instructions (each optional key only then, so the settings of
 * experiments without it are unchanged). */
void experiment_measurement_json(json_t *set, const struct experiment_config *cfg);
/* Default directory for an experiment's databases and logs: /dev/shm/pgolab-PID when /dev/shm
 * is writable (tmpfs, the seeds' "RAM disk"), else ./.pgolab/run-PID. Caller frees. */
char *experiment_default_workdir(void);

#endif
