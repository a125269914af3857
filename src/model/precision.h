/* precision: how precise an experiment's answer is, and --target-ci's stopping rule. A layer
 * beside cells.h (pure functions of a config and a result; they run nothing and print
 * nothing), used by the engine (experiment.c: when to stop adding rounds) and by the reports
 * (the change column under --target-ci, the noise table).
 *
 * The paired view of an experiment: every round runs every variant once per workload and
 * thread count, so round r of a cell gives one value d_r = log(x_variant / x_baseline) of
 * the two runs of that round; the round's shared machine state cancels out and the d_r are
 * independent across rounds. Their mean is the log of the geometric-mean ratio. Under
 * --target-ci its CI is the confidence sequence of src/stats/sequential.h (valid however
 * often it is looked at, so stopping when it is narrow enough biases nothing); the rounds
 * stop when every tps cell's half-width is at most the target, or at the caps. */
#ifndef PGOLAB_MODEL_PRECISION_H
#define PGOLAB_MODEL_PRECISION_H

#include <stdbool.h>

#include <jansson.h>

#include "model/cells.h"
#include "model/model.h"

/* Defaults of --max-rounds with --target-ci (and the round count the confidence sequence is
 * tuned for: half the cap, at least 10). */
#define TARGET_MAX_ROUNDS_DEFAULT 200
#define TARGET_CS_ROUNDS_MIN 10

/* The log ratios variant v / baseline of metric m in cell (w, threads), one per round in
 * which both ran (round order): a new array (caller frees; never NULL), *n its length. */
double *experiment_round_log_ratios(const struct experiment_result *res, enum experiment_metric m,
                                    int v, int w, int threads, int *n);

/* The largest standard deviation of the per-round log ratios (experiment_round_log_ratios())
 * of variant v in metric m over every cell (workload, thread count) of cfg: the noise a
 * --target-ci experiment must beat. NAN when no cell has 2 paired rounds. */
double experiment_round_log_sd_max(const struct experiment_config *cfg,
                                   const struct experiment_result *res, enum experiment_metric m,
                                   int v);

/* The precision of one cell (variant v >= 1 against the baseline, workload w, a thread count)
 * in metric m. */
struct experiment_precision {
    int rounds;            /* paired rounds */
    bool stats;            /* a CI: >= 2 paired rounds (>= STATS_CS_MIN_ROUNDS sequential) */
    bool sequential;       /* the CI is the confidence sequence (cfg->target_ci > 0) */
    double ratio;          /* geometric mean of the rounds' ratios variant / baseline */
    double ci_lo, ci_hi;   /* its 95% CI (sequential, or the fixed-sample t interval) */
    double half_pct;       /* the CI's half-width in percent ((exp(half) - 1) * 100) */
    double p_value;        /* anytime-valid p (sequential) or the paired t-test's */
    bool reached;          /* --target-ci set and half_pct <= target_ci */
    double cv_base, cv_var;  /* coefficient of variation of one run (sd / mean over the
                              * rounds) of the baseline and of the variant; NAN with < 2 */
    double detectable_pct; /* the change (percent) these rounds detect with 80% power: for the
                            * fixed --rounds the Mann-Whitney test's, stats_detectable_change()
                            * of the pooled CV; under --target-ci the sequence's,
                            * sd_d * (stats_cs_factor(n) + z_0.8 / sqrt(n)); NAN without */
};

/* Fill *out for cell (v, w, threads) and metric m; never fails (a cell without data has
 * rounds 0 and stats false). */
void experiment_precision_cell(const struct experiment_config *cfg,
                               const struct experiment_result *res, enum experiment_metric m,
                               int v, int w, int threads, struct experiment_precision *out);

/* --target-ci: how many of workload w's tps cells (variants x thread counts) have reached the
 * target, into *reached (out of the returned count of cells); w = -1: every workload's.
 * *worst (optional) = the widest half-width in percent among them (NAN when a cell has no
 * CI yet). */
int experiment_target_cells(const struct experiment_config *cfg,
                            const struct experiment_result *res, int w, int *reached,
                            double *worst);

/* Why the rounds stopped, for the report: "target reached" (every cell), "--max-rounds"
 * (some workload ran the cap), else "--max-time" (or an interruption: the report says that
 * too). NULL without --target-ci. */
const char *experiment_target_stop_reason(const struct experiment_config *cfg,
                                          const struct experiment_result *res);

/* The metric --target-ci waits for: METRIC_TPS, or METRIC_CPU_US with --target-metric=cpu. */
enum experiment_metric experiment_target_metric(const struct experiment_config *cfg);

/* "tps", or "CPU time per transaction" with --target-metric=cpu: for the reports' sentences. */
const char *experiment_target_metric_name(const struct experiment_config *cfg);


/* The precision of every tps cell as JSON (new reference): {"sequential", "target_ci_pct"
 * (null without), "stop_reason" (null without), "cells_reached", "cells", "per_cell": [{
 * "variant", "workload", "threads", "rounds", "cv_baseline_pct", "cv_variant_pct",
 * "detectable_change_pct", "ratio", "ratio_ci", "half_width_pct", "target_reached" (null
 * without --target-ci)}], "target_metric" ("tps" | "cpu_us_per_txn"), "cpu_per_txn": the same
 * per cell for METRIC_CPU_US plus "change_pct", "change_ci_pct" [lo, hi] (positive = less CPU)
 * and "significant" (experiment_change_cfg(); null when no run has CPU times), "cpu_placement"
 * (cpu_placement_describe()), "busier_than_calibration" (machine_busier_json(): null without
 * a calibration)}; NULL in instruction mode. */
json_t *experiment_precision_json(const struct experiment_config *cfg,
                                  const struct experiment_result *res);

/* The change of variant v in metric m over the cells (workloads[i], threads[i]) as the reports
 * show it: experiment_change() (cells.h) normally; under --target-ci (time mode) the paired
 * confidence sequence: per round the mean over the cells of the log ratios (rounds every
 * cell has), its CS, ratio = exp(mean), significant = p < 0.05 (the CS excludes 1), stats =
 * at least STATS_CS_MIN_ROUNDS rounds. 0, or -1 as experiment_change(). */
int experiment_change_cfg(const struct experiment_config *cfg,
                          const struct experiment_result *res, enum experiment_metric m, int v,
                          const int *workloads, const int *threads, int ncells, uint64_t seed,
                          struct experiment_change *out);

/* experiment_change_cfg() of variant v over variant base instead of the baseline (variant 0):
 * what one step added (report/step_gains.c), paired by round under --target-ci as the tables are.
 * */
int experiment_change_cfg_over(const struct experiment_config *cfg,
                               const struct experiment_result *res, enum experiment_metric m,
                               int base, int v, const int *workloads, const int *threads,
                               int ncells, uint64_t seed, struct experiment_change *out);

#endif
