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

#include "experiment/model.h"
#include "server/server.h"
#include "store/store.h"

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

/* Load experiment id (lookup as experiment_lookup) with every recorded run. Settings keys
 * that are missing are rebuilt from the runs (workloads and thread counts in order of first
 * appearance, rounds = the largest round). An experiment that is not complete gets a
 * res.error saying so, so the report marks it INCOMPLETE. -1 with a message on error. */
int experiment_load(struct store *s, int64_t id, struct experiment_loaded *out);

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

/* Default directory for an experiment's databases and logs: /dev/shm/pgolab-PID when /dev/shm
 * is writable (tmpfs, the seeds' "RAM disk"), else ./.pgolab/run-PID. Caller frees. */
char *experiment_default_workdir(void);

#endif
