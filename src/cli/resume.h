/* resume: `--resume=ID` with the settings experiment ID recorded. The results store holds
 * every setting that defines an experiment (experiment_settings_json(), record.h); this turns
 * them back into the options of the command that made it (compare or pgo), so that
 * `pgolab compare --resume=ID --results=FILE` alone continues it. An option given again must
 * agree with the recorded one, or the resume is refused in one line naming the option, the
 * recorded value and the given one, before anything runs. Options that are not settings
 * (--output, --workdir, --fail-if-slower, --profile, --metrics, passwords, ...) may be given
 * freely. Owns no state; struct resume_options owns its strings. */
#ifndef PGOLAB_CLI_RESUME_H
#define PGOLAB_CLI_RESUME_H

#include "util/opts.h"

/* Recorded options in order: names[i] = values[i] ("variant" and "server-option" repeat). */
struct resume_options {
    char **names;
    char **values;
    int n;
};

/* The options of kind ("compare" or "pgo") that the settings JSON text (a store's
 * experiments.settings_json) records, appended to out (zero it first; release it with
 * resume_options_release()): variant, server-option, bench, threads, rounds (or target-ci,
 * max-rounds, max-time, target-metric), time, tables, table-size, reset, warmup-runs, measure,
 * events, clients, rand-seed; pgo: train, train-time, train-threads, gate. Not the CPU
 * placement (experiment_record_resume() takes the recorded one when none is given). Pure.
 * -1 when settings is not a JSON object (nothing appended). */
int resume_options_from_settings(const char *settings, const char *kind,
                                 struct resume_options *out);

void resume_options_release(struct resume_options *ro);

/* Whether a given value and a recorded one of an option of this type mean the same (numbers
 * as numbers, lists item by item, spaces around items ignored). Pure. */
bool resume_same_value(enum opt_type type, const char *given, const char *recorded);

/* With --resume=ID (an integer; pgo's bare --resume is left alone) in o: read experiment ID's
 * settings from --results and fill every recorded option of cmd that o was not given; an
 * option given with another value is refused: "cannot resume experiment 2: --rounds=3
 * differs from its recorded --rounds=2 (leave --rounds out to continue with the recorded
 * settings)"; so is a setting recorded only when given (--target-ci, --server-option, ...)
 * given now. Refused too: no such experiment, a complete one, one of another command.
 * Unreadable recorded settings: a warning, and the options given are taken as they are.
 * 0 (nothing to do without --resume), or -1 after one line. */
int cli_resume_settings(struct opts *o, const char *cmd);

#endif
