/* profiling: --profile in the experiment engine, the glue between a run (run.c) and the
 * profile module (src/profile): where a run's profile files go, the bench child's options,
 * the sampler around a managed server's run, the symbolization after the run and the
 * "profile" object of the run's stored report ({"file": "RUN.folded", "event", "samples",
 * ...} or {"refused": LINE}); and the side-by-side report of a whole experiment from the
 * stored files. A refusal (perf_event_paranoid) is said once per process. */
#ifndef PGOLAB_EXPERIMENT_PROFILING_H
#define PGOLAB_EXPERIMENT_PROFILING_H

#include <stdbool.h>
#include <stdio.h>

#include "experiment/model.h"
#include "profile/profile.h"
#include "profile/session.h"
#include "util/argvec.h"

/* RESULTS.profiles/EXPERIMENT (caller frees). */
char *experiment_profile_dir(const char *results_path, int64_t experiment_id);

/* Turn --profile on for cfg at freq Hz (1..100000), after experiment_record_begin/_resume
 * gave it its store and id: makes RESULTS.profiles/ID. -1 with a message. */
int experiment_profile_setup(struct experiment_config *cfg, int64_t freq);
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

/* ---- for the reports */

/* The side-by-side (seed 002) of every variant against the baseline, per workload and thread
 * count, from the folded files in dir named by the runs' "profile" objects. A missing or
 * truncated file is one WARNING line naming it and the run, and that run is left out; the
 * rest is printed. Returns the number of profiles that could not be read (0 = all fine);
 * prints nothing (returns 0) when no run has a profile. */
int experiment_profile_report(FILE *out, const struct experiment_config *cfg,
                              const struct experiment_result *res, const char *dir, int top);

/* Called once per (workload, thread count, variant) with the baseline's side a and the
 * variant's side b (either may have 0 runs, not both); the sides live until fn returns. */
typedef void (*experiment_profile_pair_fn)(void *ctx, const char *workload, int threads,
                                           const struct profile_side *a,
                                           const struct profile_side *b);
/* Walk the profiles as experiment_profile_report does (same warnings, same return), handing
 * each pair to fn: the machine-readable reports (report/profiles.c) are built on it. */
int experiment_profile_each(const struct experiment_config *cfg,
                            const struct experiment_result *res, const char *dir,
                            experiment_profile_pair_fn fn, void *ctx);

/* true when some run of res has a "profile" object. */
bool experiment_has_profiles(const struct experiment_result *res);

/* Every profiled run's stacks in folded form for flame-graph tools, one line per stack:
 * "VARIANT;WORKLOAD;frame;...;frame COUNT" (root first), summed over the rounds. Same return
 * as experiment_profile_report. */
int experiment_profile_folded(FILE *out, const struct experiment_config *cfg,
                              const struct experiment_result *res, const char *dir);

#endif
