/* request: what `pgolab pgo TARGET` was asked to do, validated (struct pgo_request), the one
 * value cli/cmd_pgo.c hands to the pipeline (pipeline.h). A plain value: the strings and
 * arrays stay owned by the caller, and nothing here runs or holds a handle. Owns no state. */
#ifndef PGOLAB_PGO_REQUEST_H
#define PGOLAB_PGO_REQUEST_H

#include <stdbool.h>
#include <stdint.h>

#include "experiment/experiment.h"
#include "pgo/variant_spec.h"

/* Which gate runs after the pgo builds. */
enum pgo_gate {
    PGO_GATE_CHECKSUM,  /* `bench verify`: baseline and every pgo build answer the fixed query
                         * set on the same data with the same checksum */
    PGO_GATE_SUITE,     /* the checksum gate, then the recipe's regression suite against every
                         * pgo build */
};

/* The validated options (strings owned by the caller, cli/cmd_pgo.c). */
struct pgo_request {
    const char *target;           /* name or recipe file */
    const char *recipe_path;      /* resolved recipe file */
    const char *source;           /* --source or NULL */
    const char *workdir;          /* absolute */
    const char *workdir_opt;      /* as given (messages) */
    const char *cc, *cxx, *cflags;
    char **train;                 /* trainers: a workload, a mix "a+b", or "suite" */
    int ntrain;
    int train_time, train_threads;
    char **bench;                 /* measured workloads */
    int nbench;
    int *threads;
    int nthreads;
    int rounds, time_s, tables, table_size, jobs;
    const char *db_version;       /* --db-version=MAJOR, or NULL: the installed official's,
                                   * else the recipe's default (major.c) */
    const char *official;         /* --official=PATH: the official variant's binary instead of
                                   * the recipe's server.official, or NULL */
    const char *const *variant_options; /* --variant-server-option VARIANT:NAME=VALUE: the
                                   * measured servers of that variant get NAME=VALUE (checked
                                   * once the variants' names are known, before any build) */
    int nvariant_options;
    char **variants;              /* the kinds of --cc and --cflags' variants: baseline (always
                                   * built), pgo, lto, pgo+lto, bolt, pgo+bolt, official;
                                   * a library: baseline, pgo, then bolt, pgo+bolt as given */
    int nvariants;
    const struct variant_group *groups; /* --variants by build settings
                                   * (variant_spec.h); [0] is --cc and --cflags' (its kinds
                                   * are variants), [1..ngroups) the other compilers and flags,
                                   * each built by a pipeline of its own; NULL: none */
    int ngroups;
    enum pgo_gate gate;
    bool measure, rebuild;
    bool no_metrics;                      /* --metrics=off */
    bool trust_table;                     /* --trust-table: the per-run trust table */
    bool exclude_distrusted;              /* --exclude-distrusted: the report's numbers without
                                           * the distrusted runs */
    enum experiment_measure measure_kind; /* --measure=time|instructions (a library only) */
    int64_t events;                       /* --events (instructions) */
    bool threads_set;                     /* --threads given (not the default) */
    uint64_t seed;
    const char *results, *output;
    const char *build_options;    /* the build options as given and the absolute work
                                   * directory, as shell words: an interrupted measurement's
                                   * --resume command repeats them */
    int64_t resume_id;            /* > 0: continue that measurement; -1: the newest
                                   * unfinished pgo experiment of this target; 0: a new one */
    double fail_pct;              /* < 0: no --fail-if-slower */
    bool profile;                 /* --profile: a CPU profile of every measured run */
    int64_t profile_freq;         /* its samples per second */
    double target_ci, max_time_s; /* --target-ci, --max-time (rounds = --max-rounds) */
    int cs_rounds;
    bool search;                  /* --search (servers and libraries): screen every candidate by
                                   * estimated cycles, confirm the best by time (pgo/search.c) */
    int search_keep;              /* --search-keep: candidates the confirmation keeps (>= 1) */
    int64_t search_events;        /* the screen's transactions per run (--events, else 300) */
};

#endif
