/* profiles: an experiment's stored CPU profiles read back (--profile, src/experiment/
 * profiling.h, wrote them): where they are (RESULTS.profiles/EXPERIMENT), whether any run has
 * one, the side-by-side of every variant against the baseline as text, the same walk for the
 * machine-readable reports (report/profile_diff.c), and the folded stacks for flame-graph tools.
 * Reads the files the runs' "profile" objects name and prints; runs nothing and keeps no
 * state (what it loads is freed before it returns). */
#ifndef PGOLAB_MODEL_PROFILES_H
#define PGOLAB_MODEL_PROFILES_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "model/model.h"
#include "profile/profile.h"

/* RESULTS.profiles/EXPERIMENT (caller frees). */
char *experiment_profile_dir(const char *results_path, int64_t experiment_id);

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
 * each pair to fn: the machine-readable reports (report/profile_diff.c) are built on it. */
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
