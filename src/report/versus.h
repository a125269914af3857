/* versus: `pgolab report --compare=A,B`: two stored experiments side by side, with a warning
 * block for every difference between their environments, notes on settings and builds, and
 * per metric the medians of both and the change of B against A in every (variant, workload,
 * threads) cell either has. Reads results only (src/model/model.h, cells.h,
 * environment.h); owns no state; output goes to the caller's strbuf. */
#ifndef PGOLAB_REPORT_VERSUS_H
#define PGOLAB_REPORT_VERSUS_H

#include <stdint.h>

#include "model/cells.h"
#include "model/model.h"
#include "report/common.h"
#include "util/strbuf.h"

/* Append the comparison of two stored experiments to out (`pgolab report --compare=A,B`):
 * first a WARNING block with the environment differences (experiment_env_diff, load
 * included), notes on differing settings and builds, then per metric (tps, avg and p95
 * latency; instructions per transaction when both measured instructions; no table, only a
 * note, when one measured time and the other instructions) a row per (variant, workload,
 * threads) found in either: A's median, B's median and the change of B against A with its CI
 * ("~" when not significant). Variants are matched by name, workloads by name, thread counts
 * by value. */
void report_compare(struct strbuf *out, const struct experiment_loaded *a,
                    const struct experiment_loaded *b, enum report_format fmt);

/* ---- the cells of two experiments, also for --fail-if-slower (slower.c) */

/* A (variant, workload, threads) cell found in either experiment, with its indices in each
 * (-1 = absent). */
struct compare_cell {
    const char *variant, *workload;
    int threads;
    int va, wa, vb, wb;
};

/* Every cell of a, then the cells only b has. Caller frees. */
struct compare_cell *compare_cells(const struct experiment_config *a,
                                   const struct experiment_config *b, int *n);
/* Values of one side of a cell (caller frees; *n = 0 when absent). */
double *compare_values(const struct experiment_loaded *l, int v, int w, int threads,
                       enum experiment_metric m, int *n);
/* The change of b's rounds against a's in one cell: experiment_change_values() (model/cells.h,
 * as experiment_change() gives it for one cell of one experiment); values it cannot use give
 * the change of no data ("-"). */
void compare_change(const double *a, int n1, const double *b, int n2, enum experiment_metric m,
                    uint64_t seed, struct experiment_change *ch);
/* The bootstrap seed of cell i of metric m in the comparison of a and b. */
uint64_t compare_seed(const struct experiment_loaded *a, const struct experiment_loaded *b,
                      int i, enum experiment_metric m);

#endif
