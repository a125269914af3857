/* results_json: the --output file of compare and pgo: the settings, the variants' fingerprints,
 * the environment, the run order, every run with the child's whole report, and the summary
 * cells, as one JSON document. Written from a config and result the caller owns, also when
 * the experiment stopped midway; the file is the caller's. */
#ifndef PGOLAB_EXPERIMENT_RESULTS_JSON_H
#define PGOLAB_EXPERIMENT_RESULTS_JSON_H

#include "model/model.h"

/* Write every run, the variants' fingerprints, settings, environment, run order and the
 * summary cells as JSON (via path.tmp + rename, so a reader never sees half a file). A
 * summary cell of a variant has "improvement_pct", "change_ci_pct" and "significant": the
 * change the reports' tables and verdict compute (experiment_change_cfg(), the paired
 * per-round estimate under --target-ci), never the ratio of the medians beside it.
 * -1 with a message on error. */
int experiment_write_json(const char *path, const struct experiment_config *cfg,
                          const struct experiment_result *res);

#endif
