/* profiling: --profile in the experiment engine, the glue between a run (run.c) and the
 * profile module (src/profile): where a run's profile files go, the bench child's options,
 * the sampler around a managed server's run, the symbolization after the run and the
 * "profile" object of the run's stored report ({"file": "RUN.folded", "event", "samples",
 * ...} or {"refused": LINE}). Reading the stored files back (the side-by-side report, the
 * folded stacks) is profiles.h's. A refusal (perf_event_paranoid) is said once per process. */
#ifndef PGOLAB_EXPERIMENT_PROFILING_H
#define PGOLAB_EXPERIMENT_PROFILING_H

#include <stdbool.h>

#include "model/model.h"
#include "profile/profile.h"
#include "profile/session.h"
#include "util/argvec.h"

/* Turn --profile on for cfg at freq Hz (1..100000), after experiment_record_begin/_resume
 * recorded it in store and gave it its id: makes RESULTS.profiles/ID beside the store's file.
 * -1 with a message (also without a store). */
struct store;
int experiment_profile_setup(struct experiment_config *cfg, const struct store *store,
                             int64_t freq);
void experiment_profile_release(struct experiment_config *cfg);

/* ---- for run.c */

/* DIR/RUN.EXT for run number seq (1-based; caller frees). */
char *profile_run_path(const struct experiment_config *cfg, int seq, const char *ext);

/* The bench child's options of a profiled SQLite time-mode run (--profile --profile-file=...). */
void profile_child_args(const struct experiment_config *cfg, int seq, struct argvec *a);

/* Sample a managed server's process tree (pid) during a run, quietly (a refusal is said once
 * by profile_run_finish). */
void profile_server_start(const struct experiment_config *cfg, int seq, pid_t pid,
                          struct profile_session *ps);

/* After a successful run seq: symbolize its raw file (from the child, or ps for a server; ps
 * NULL otherwise) into RUN.folded and add the "profile" object to r->json. Instruction mode
 * wrote RUN.folded already (profile_write_instructions). Never fails the run: a profile that
 * cannot be made is a warning and a "profile": {"error": ...}. */
void profile_run_finish(const struct experiment_config *cfg, int seq,
                        struct profile_session *ps, struct run_result *r);

#endif
