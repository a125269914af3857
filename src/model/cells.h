/* cells: the statistics of an experiment's results, a layer below both the engine and the
 * reports: the metrics of a run, one report cell (a metric of one variant at one workload and
 * thread count, over the rounds), the % improvement, and the change of a variant against the
 * baseline with its confidence interval and Mann-Whitney test (experiment_change() and its
 * one-cell case experiment_change_values(), the one place the statistics of
 * src/stats/compare.h are applied to an experiment). Pure functions
 * of a struct experiment_result (src/model/model.h); they run nothing, read no store and
 * print nothing. Returned arrays are the caller's. */
#ifndef PGOLAB_MODEL_CELLS_H
#define PGOLAB_MODEL_CELLS_H

#include <stdbool.h>
#include <stdint.h>

#include "model/model.h"
#include "util/strbuf.h"

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
    METRIC_D1_MISS,     /* simulated D1 cache misses (reads + writes) per transaction */
    METRIC_LL_MISS,     /* simulated last-level cache misses per transaction */
    METRIC_EST_CYCLES,  /* estimated cycles per transaction (experiment_callgrind_est_cycles:
                           Ir + 10 Bm + 10 L1m + 100 LLm); lower is better */
    METRIC_CPU_US,      /* CPU time per transaction of the measured processes, us: the
                           client's plus the managed server's tree's (src/metrics,
                           client_us_per_txn + server_us_per_txn; the client's alone for
                           SQLite); lower is better. Steadier than tps when co-tenants take
                           wall time (steal, run queue), as it counts only the CPU the
                           measured processes got. NAN without metrics */
    METRIC_SERVER_USER_US, /* user CPU time per transaction of the managed server's tree, us
                              (server_user_us_per_txn of src/metrics): the server's own code,
                              the part PGO and BOLT can change; lower is better. NAN without
                              a managed server or in runs recorded before the split */
    METRIC_SERVER_SYS_US,  /* system CPU time per transaction of the same tree, us (the
                              kernel on its behalf: I/O, scheduling, syscalls); lower is
                              better; NAN as above */
};
#define METRIC_COUNT 3      /* the seed-000 metrics */
#define METRIC_ALL 15       /* every metric */
#define INSTR_METRICS 6     /* the instruction mode's: METRIC_INSTR .. METRIC_EST_CYCLES */

/* One report cell: a metric of one variant at one workload and thread count over rounds. */
struct cell_stats {
    int n;                    /* runs found (0 = no data; the other fields are then 0) */
    double median, min, max;  /* median: GSL, mean of the two middle values for even n */
};

/* The value of metric m in one run. */
double experiment_metric_value(const struct run_result *r, enum experiment_metric m);
/* Whether some run of res at workload w (-1: any) has a finite value of metric m (runs of
 * SQLite, or recorded before a metric existed, have NAN). */
bool experiment_has_metric(const struct experiment_result *res, int w, enum experiment_metric m);
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

/* The cells of metric m at workload w, a report table's rows: cs[ti * cfg->nvariants + v] per
 * thread count (cfg->threads[ti]) and variant, avg[v] the Average row (the mean of the medians
 * of the thread rows where every variant has data; NAN when none). Returns the smallest value
 * seen (INFINITY when none), for the table's decimals. */
double experiment_workload_cells(const struct experiment_config *cfg,
                                 const struct experiment_result *res, int w,
                                 enum experiment_metric m, struct cell_stats *cs, double *avg);

/* The bootstrap seed of one cell of the reports and of the --output file's summary (workload
 * w, variant v, row: the thread count's index, or nthreads for a workload's Average row,
 * metric m): the formula the seed-000 tables always used, so that every output computes a
 * cell's CI from the same resamples and prints the same numbers. */
uint64_t experiment_cell_seed(const struct experiment_config *cfg, int w, int v, int row,
                              enum experiment_metric m);

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
    bool sequential;       /* --target-ci: paired confidence sequence (precision.h) */
};

/* Compute the change of variant v in metric m over the cells (workloads[i], threads[i]),
 * i < ncells, with bootstrap seed `seed`. 0 on success (out->ncells may still be 0: no data),
 * -1 (no message) when the values are unusable (e.g. NaN or 0 in a ratio). */
int experiment_change(const struct experiment_result *res, enum experiment_metric m, int v,
                      const int *workloads, const int *threads, int ncells, uint64_t seed,
                      struct experiment_change *out);

/* The change of values b (n2 rounds) against values a (n1 rounds) as one cell: what
 * experiment_change() gives for a cell, computed from the values themselves (e.g. the same
 * cell of two stored experiments, report/versus.c). 0 on success (out->ncells 0 when either
 * side has no values), -1 (no message; *out zeroed) when they are unusable. */
int experiment_change_values(const double *a, int n1, const double *b, int n2,
                             enum experiment_metric m, uint64_t seed,
                             struct experiment_change *out);

/* experiment_change() of variant v over variant base instead of the baseline (variant 0):
 * what one step added, e.g. pgo+bolt over pgo. */
int experiment_change_over(const struct experiment_result *res, enum experiment_metric m,
                           int base, int v, const int *workloads, const int *threads,
                           int ncells, uint64_t seed, struct experiment_change *out);

/* The change as a report cell, appended to sb: "-" without data, "no statistics with 1
 * round" without statistics ("no statistics before 5 rounds" when sequential), "~" when not
 * significant, else the change in percent with its CI
 * in the improvement sign convention (stats_format_change / stats_format_interval). */
void experiment_change_format(struct strbuf *sb, const struct experiment_change *c);

/* The change in percent, positive = better (stats_change_pct), and its CI bounds ordered
 * low..high; NAN when there is no data. */
double experiment_change_pct(const struct experiment_change *c, double *lo, double *hi);

#endif
