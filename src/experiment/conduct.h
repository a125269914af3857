/* conduct: one recorded experiment from a checked config to its recorded end, the sequence
 * `pgolab compare` runs: fingerprint the variants, begin (or --resume) the experiment in the
 * results store, turn --profile on, run it (experiment_run()) and record how it ended. The
 * store, cfg and res stay the caller's. */
#ifndef PGOLAB_EXPERIMENT_CONDUCT_H
#define PGOLAB_EXPERIMENT_CONDUCT_H

#include <stdbool.h>
#include <stdint.h>

#include "model/model.h"
#include "store/store.h"

/* Conduct the experiment cfg into store as a new one of kind, or experiment resume_id (> 0)
 * continued; profile turns --profile on at profile_freq samples per second (checked by
 * experiment_profile_setup()). *ran says whether it got as far as the run: false means it
 * stopped before (a message said why; -1).
 * Once it ran: experiment_run()'s return (0 ok, else stopped: res->signal, res->error), -1
 * also when recording the end of a successful run failed. */
int experiment_conduct(struct experiment_config *cfg, struct store *store, const char *kind,
                       int64_t resume_id, bool profile, int64_t profile_freq,
                       struct experiment_result *res, bool *ran);

#endif
