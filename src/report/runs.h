/* report/runs: `pgolab report --shape=runs`, the raw material under every table: one row per
 * measured run in the order it ran (variant, workload, threads, round, tps, qps, latency,
 * errors, instructions per transaction in instruction mode, and its system metrics with the
 * load and trust verdict of src/metrics). text/markdown: one table; csv: one row per run with
 * every number (columns in docs/results-format.md), for a spreadsheet; json: {report: "runs",
 * experiment, runs: [...]}. Reads results only; appends to the caller's strbuf. */
#ifndef PGOLAB_REPORT_RUNS_H
#define PGOLAB_REPORT_RUNS_H

#include "report/common.h"

/* Append the runs of cfg/res to out in fmt (text and markdown: after the caller's header). */
void report_runs(struct strbuf *out, const struct experiment_config *cfg,
                 const struct experiment_result *res, enum report_format fmt);

#endif
