/* session: one process profiled from start to stop, for `pgolab bench --profile` (the bench
 * process itself) and for the experiment's runs (a managed server's process tree): start the
 * sampler, or say once why there is no profile; stop it; describe the outcome as JSON.
 * The caller owns the struct profile_session; profile_session_stop() releases it. */
#ifndef PGOLAB_PROFILE_SESSION_H
#define PGOLAB_PROFILE_SESSION_H

#include <jansson.h>
#include <stdbool.h>
#include <sys/types.h>

#include "profile/perf_sampler.h"

struct profile_session {
    struct profile_sampler s;
    bool running;     /* the sampler runs */
    bool written;     /* after stop: the raw file is complete */
    char *raw_path;   /* where it goes */
    char *event, *note, *refused;  /* after start: what was opened / left out / why none */
    bool kernel;
    int freq;
    double sampler_cpu_s;  /* after stop: the sampler process's CPU time, s */
};

/* Start sampling target at freq Hz into raw_path. A refusal is not an error: refused gets the
 * one line (also printed as a WARNING unless quiet), and the run goes on without a profile.
 * Another failure is printed as a WARNING and the run goes on too. */
void profile_session_start(struct profile_session *ps, pid_t target, const char *raw_path,
                           int freq, bool quiet);

/* Stop the sampler (if it runs): written says whether raw_path is complete. */
void profile_session_stop(struct profile_session *ps);

/* {"event", "frequency", "kernel", "raw", "note", "sampler_cpu_s"} after a written profile,
 * {"refused": LINE}
 * after a refusal, {"error": ...} when the sampler failed (new reference). */
json_t *profile_session_json(const struct profile_session *ps);

void profile_session_release(struct profile_session *ps);

#endif
