/* experiment: the A/B measurement engine shared by `pgolab compare`, `pgolab pgo` and
 * `pgolab calibrate`: variants x workloads x thread counts x rounds, interleaved (order
 * shuffled per round), every run a child `pgolab bench ... run --format=json` on a fresh copy
 * of the same prepared data. experiment_run() (experiment.c) is the loop; each other concern
 * of the engine has its own file and header, which a command includes for what it uses:
 *   plan.h             the run order and its seeds
 *   run.h              one run: its data, the managed server, the child and its JSON report
 *   callgrind.h        --measure=instructions
 *   pinning.h          --cpu-placement resolved, and each run's CPU sets
 *   profiling.h        --profile: each run's profile and its "profile" object
 *   variants.h         the variants' fingerprints
 *   variant_options.h  --variant-server-option checked and given to the variants
 *   record.h           recording in, resuming from and loading from the results store
 *   results_json.h     the --output JSON file
 *   conduct.h          fingerprint, record, run and record the end: compare's sequence
 * What the engine and the reports share is src/model, the layer below both: model.h (the
 * data model: config, variants, runs, results, loaded experiments), cells.h (per-cell
 * statistics), precision.h (paired per-round CIs, --target-ci's stopping rule, the noise per
 * cell), machine.h (the machine state against a calibration), environment.h (the machine's
 * environment and the diff of two), placement.h (the CPU placement as data) and profiles.h
 * (stored profiles read back). The reports (src/report) include those, never this header,
 * and nothing here includes src/report.
 *
 * Who owns what: the config (what the user asked for: plain data) and its strings are the
 * caller's, and so is the results store; the engine's handles of a run in progress (the
 * store it records in, the data of the workload, the children, the progress and its timers)
 * are experiment_run()'s for the length of the call (struct experiment_engine, run.h).
 * Results are owned by the experiment_result and freed by experiment_result_release(). */
#ifndef PGOLAB_EXPERIMENT_H
#define PGOLAB_EXPERIMENT_H

#include "model/model.h"

struct store;

/* Run the whole experiment; *res is initialized here. store (or NULL: nothing is recorded)
 * is the results store cfg->experiment_id was recorded in by experiment_record_begin() or
 * _resume() (record.h): the runs it holds already are loaded into *res and not run again, and
 * each new run is recorded in it as soon as it ends. On error (a child failed, or SIGINT/
 * SIGTERM arrived: both are caught while it runs) returns -1 with a one-line message, also
 * kept in res->error; runs already finished stay in *res (the caller can still report or
 * save them). Database files are removed as it goes; logs stay in cfg->workdir.
 * With cfg->target_ci > 0, cfg->rounds is a cap: each workload stops adding rounds once every
 * tps cell's sequential CI is narrow enough (precision.h), or before a round that would pass
 * its share of cfg->max_time_s; either is a success (0), not an incomplete experiment. */
int experiment_run(const struct experiment_config *cfg, struct store *store,
                   struct experiment_result *res);

#endif
