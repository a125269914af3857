/* experiment: the A/B measurement engine shared by `pgolab compare`, `pgolab pgo` and
 * `pgolab calibrate`: variants x workloads x thread counts x rounds, interleaved (order
 * shuffled per round), every run a child `pgolab bench ... run --format=json` on a fresh copy
 * of the same prepared data. experiment_run() (experiment.c) is the loop; each other concern
 * of the engine has its own file and header, all included here so that a command needs only
 * this one (it includes src/model's headers too):
 *   plan.h          the run order and its seeds
 *   run.h           one run: its data, the managed server, the child and its JSON report
 *   callgrind.h     --measure=instructions
 *   pinning.h       --cpu-placement resolved, and each run's CPU sets
 *   profiling.h     --profile: each run's profile and its "profile" object
 *   variants.h      the variants' fingerprints
 *   record.h        recording in, resuming from and loading from the results store
 *   results_json.h  the --output JSON file
 *   conduct.h       fingerprint, record, run and record the end: compare's sequence
 * What the engine and the reports share is src/model, the layer below both: model.h (the
 * data model: config, variants, runs, results, loaded experiments), cells.h (per-cell
 * statistics), precision.h (paired per-round CIs, --target-ci's stopping rule, the noise per
 * cell), machine.h (the machine state against a calibration), environment.h (the machine's
 * environment and the diff of two), placement.h (the CPU placement as data) and profiles.h
 * (stored profiles read back). The reports (src/report) include those, never this header,
 * and nothing here includes src/report. The config and its strings are owned by the
 * caller; results are owned by the experiment_result and freed by
 * experiment_result_release(). */
#ifndef PGOLAB_EXPERIMENT_H
#define PGOLAB_EXPERIMENT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "experiment/callgrind.h"
#include "experiment/conduct.h"
#include "experiment/pinning.h"
#include "experiment/plan.h"
#include "experiment/profiling.h"
#include "experiment/record.h"
#include "experiment/results_json.h"
#include "experiment/run.h"
#include "experiment/variant_options.h"
#include "experiment/variants.h"
#include "model/cells.h"
#include "model/environment.h"
#include "model/machine.h"
#include "model/model.h"
#include "model/placement.h"
#include "model/precision.h"
#include "model/profiles.h"
#include "server/server.h"
#include "store/store.h"

/* Run the whole experiment; *res is initialized here. On error (a child failed, or SIGINT/
 * SIGTERM arrived: both are caught while it runs) returns -1 with a one-line message, also
 * kept in res->error; runs already finished stay in *res (the caller can still report or
 * save them). Database files are removed as it goes; logs stay in cfg->workdir. */
/* With cfg->target_ci > 0, cfg->rounds is a cap: each workload stops adding rounds once every
 * tps cell's sequential CI is narrow enough (precision.h), or before a round that would pass
 * its share of cfg->max_time_s; either is a success (0), not an incomplete experiment. */
int experiment_run(const struct experiment_config *cfg, struct experiment_result *res);

#endif
