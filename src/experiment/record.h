/* record: an experiment in the results store (src/store): the settings that define it, the
 * experiment row and its variants when it begins, --resume (refusals, the stored seed), its
 * final status, and reading it back (experiment_load(): the config and result a report needs,
 * as struct experiment_loaded, src/model/model.h; machine_calibration_find(): the latest
 * calibration of a host). Each run itself is committed by run_once() (src/experiment/run.c)
 * as soon as it ends. The store stays the caller's; what experiment_load() fills is owned by
 * the struct experiment_loaded. */
#ifndef PGOLAB_EXPERIMENT_RECORD_H
#define PGOLAB_EXPERIMENT_RECORD_H

#include <stdint.h>

#include "model/model.h"
#include "store/store.h"

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
 * cfg->experiment_id and cfg->kind (the store stays the caller's: experiment_run() and
 * experiment_record_finish() are given it), and prints "experiment N recorded in FILE"
 * on stderr. Call after experiment_fingerprint(). -1 with a message on error. */
int experiment_record_begin(struct experiment_config *cfg, struct store *s, const char *kind,
                            const char *extra_json);

/* Continue experiment id of store s (for --resume=ID): refuses with a one-line message when
 * there is no such experiment ("no experiment 42 in FILE (see pgolab history)"), when it is of
 * another kind, already complete ("experiment 3 is complete; nothing to resume"), or when its
 * settings differ from cfg's (naming each key that differs). Otherwise sets cfg->seed to the
 * stored seed (so every round keeps its run order), cfg->experiment_id and cfg->kind,
 * marks it running again and prints "resuming experiment N in FILE: K of M runs
 * recorded" on stderr (plus a warning when the machine differs from the one it started on).
 * Call after experiment_fingerprint(). */
int experiment_record_resume(struct experiment_config *cfg, struct store *s, int64_t id,
                             const char *kind, const char *extra_json);

/* The note of a stopped experiment starts with this when --resume may succeed (interrupted,
 * or res->transient); the rest of the note is the error. */
#define EXPERIMENT_NOTE_RESUMABLE "resumable: "

/* The command that continues experiment id of the results file results:
 * "pgolab compare --resume=ID --results=PATH" (kind "pgo": "pgolab pgo TARGET --resume=ID
 * --results=PATH", target NULL = the word TARGET), words shell-quoted where needed. The
 * resume takes every setting from the store (src/cli/resume.h). Caller frees. */
char *experiment_resume_command(const char *kind, const char *target, int64_t id,
                                const char *results);

/* Mark the recorded experiment finished after experiment_run() returned run_rc: "complete"
 * (0), "interrupted" (a signal stopped it) or "failed". A new experiment that failed before
 * its first run (not a signal) is removed instead ("experiment N removed from FILE: ..."): a
 * failure before the first run leaves no row. Otherwise a stopped one gets res->error as its
 * note and one line on stderr: cfg->resume_hint where set, else the exact --resume command
 * (experiment_resume_command())
 * when a signal or a transient failure (res->transient) stopped it, else that the same options
 * would fail again. Nothing when
 * store is NULL. store is the one the experiment was recorded in. */
int experiment_record_finish(const struct experiment_config *cfg, struct store *store,
                             const struct experiment_result *res, int run_rc);

/* Look up experiment id: 0 and *out filled (release it with store_experiment_release()), or
 * -1 after printing "no experiment ID in FILE; it has experiments 1-3, 5 (see pgolab history)"
 * (or that it has none yet) or the store's error. */
int experiment_lookup(struct store *s, int64_t id, struct store_experiment *out);

/* Load experiment id (lookup as experiment_lookup) with every recorded run. Settings keys
 * that are missing are rebuilt from the runs (workloads and thread counts in order of first
 * appearance, rounds = the largest round). An experiment that is not complete gets a
 * res.error saying so, so the report marks it INCOMPLETE. -1 with a message on error. */
int experiment_load(struct store *s, int64_t id, struct experiment_loaded *out);

/* The latest complete `pgolab calibrate` experiment in s recorded on host (the hostname of its
 * environment; NULL = this host) with an id below before_id (the experiment it is for; 0 = any),
 * loaded into *out (experiment_loaded_release() it). 0 found, 1 none, -1 after a message (the
 * store failed). Here, not in machine.h, because it loads with experiment_load(). */
int machine_calibration_find(struct store *s, const char *host, int64_t before_id,
                             struct experiment_loaded *out);

/* ---- for the engine's own files (src/experiment/) */

/* Append the runs recorded in s for cfg->experiment_id to res (in the order they ran); runs
 * that do not fit cfg are left out with a warning. -1 on a store error. */
int record_load_runs(struct store *s, const struct experiment_config *cfg,
                     struct experiment_result *res);

#endif
