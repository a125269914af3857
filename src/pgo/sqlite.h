/* sqlite: the PGO pipeline of library recipes (`pgolab pgo sqlite`, recipes/sqlite.json, or a
 * user's copy of it): source and its prepare steps (the amalgamation), baseline and
 * instrumented libraries compiled in parallel from the recipe's step, training with
 * `pgolab bench --sqlite-library` children on the instrumented library, profile check, pgo
 * build, correctness gate (`bench verify`), measurement of the library variants with the
 * experiment engine. Server recipes run in pgo/pipeline.h. The building blocks are src/toolchain/
 * (flag table, compiles, profile data, bench children) and pgo/recipe.h, pgo/source.h; cli/pgo.c
 * owns the options and the loaded recipe and hands them over as a struct pgo_settings, whose
 * strings stay the caller's. */
#ifndef PGOLAB_PGO_SQLITE_H
#define PGOLAB_PGO_SQLITE_H

#include <stdbool.h>
#include <stdint.h>

#include "experiment/experiment.h"

struct recipe;

/* Validated options of `pgolab pgo`. Strings point into the caller's opts or are its lists. */
struct pgo_settings {
    const struct recipe *recipe;          /* a library recipe (RECIPE_LIBRARY) */
    const char *source, *workdir_opt, *cc, *cflags, *output, *results;
    int64_t resume_id;         /* 0 = a new experiment */
    double fail_pct;           /* < 0 = no --fail-if-slower */
    char **train, **bench, **threads_list;
    int ntrain, nbench, nthreads;
    int *threads;
    int train_time, train_threads, rounds, time_s, tables, table_size;
    uint64_t seed;
    bool measure, rebuild;
    bool no_metrics;                      /* --metrics=off */
    enum experiment_measure measure_kind; /* --measure=time|instructions */
    int64_t events;                       /* --events (instructions) */
    bool threads_set;                     /* --threads given (not the default) */
    bool profile;                         /* --profile (src/experiment/profiling.h) */
    int64_t profile_freq;                 /* --profile-frequency, Hz */
    double target_ci, max_time_s;         /* --target-ci, --max-time (cli_target_ci; rounds
                                           * is then --max-rounds) */
    int cs_rounds;
    char **variants;                      /* --variants: baseline first, then pgo, bolt,
                                           * pgo+bolt in the order given */
    int nvariants;
};

/* Run the library pipeline on s->recipe and print its summary and tables on stdout. Returns the exit
 * code: 0 ok, 1 error (one line said why), 2 interrupted, 3 --fail-if-slower tripped. */
int pgo_sqlite_run(const struct pgo_settings *s);

#endif
