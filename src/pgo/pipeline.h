/* pipeline: the PGO pipeline of `pgolab pgo TARGET` for every recipe target (pgo/recipe.h),
 * servers and libraries (SQLite) alike: source [-> the recipe's prepare steps] -> baseline
 * build -> instrumented build -> training (one profile per trainer) -> profile check -> pgo
 * build (one per trainer) [-> BOLT variants] -> correctness gate -> measurement with the
 * experiment engine -> report. Every phase is cached under the work directory with a
 * stamp of exactly what it read (recipe text, source tree content hash, compiler version,
 * flags, profile hash), so an interrupted run continues where it stopped and a changed input
 * redoes the phases it feeds, saying why. cli/cmd_pgo.c owns the options and hands a validated
 * struct pgo_request over; the pipeline owns everything it builds (struct pgo_pipeline). */
#ifndef PGOLAB_PGO_PIPELINE_H
#define PGOLAB_PGO_PIPELINE_H

#include <stdbool.h>
#include <stdint.h>

#include "experiment/experiment.h"
#include "toolchain/toolchain.h"
#include "pgo/correction.h"
#include "pgo/profile_check.h"
#include "pgo/recipe.h"
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

/* One trainer and the profile it wrote. */
struct pgo_trainer {
    char *name;                   /* as given: "oltp_read_write", "oltp_read_only+oltp_write_only", "suite" */
    char **workloads;             /* the mix's workloads (NULL-terminated; empty for suite) */
    bool suite;
    char *key;                    /* directory-safe name */
    char *profile_dir, *profdata; /* profdata: clang only */
    struct profile_info profile;
    int objects, objects_profiled;/* gcc: instrumented objects (.o) and those with .gcda */
    struct profile_health health; /* the profile check's counts (profile_check.h) */
    bool cached;
    double seconds;
};

struct pgo_pipeline;

/* One build of the target (a variant, or the instrumented build). */
struct pgo_build {
    char *name;                   /* "baseline", "instrumented", "lto", "pgo", "pgo+lto",
                                   * "pgo-TRAINER" / "pgo+lto-TRAINER" with several trainers;
                                   * in another group of build settings prefixed by its label
                                   * ("clang:pgo+lto") */
    struct pgo_pipeline *pipeline;/* the pipeline of its build settings (compiler, flags) */
    bool skip;                    /* not asked for in its group (another group's baseline, an
                                   * instrumented build no pgo variant needs): neither built,
                                   * gated nor measured */
    enum build_phase phase;
    bool lto;
    struct pgo_trainer *trainer;  /* pgo builds: whose profile */
    char *dir, *build_dir, *prefix, *log;
    char *pgo_flags;              /* the phase's flags ({pgo_flags}) */
    char *flags;                  /* cflags + pgo flags: the fingerprint's "cflags" */
    char *product;                /* absolute path of the server binary or library */
    char *sha256;                 /* of product */
    bool cached;
    char *why;                    /* why it was built now ("not built before", "the profile changed") */
    double seconds;
    int profile_missing;          /* pgo: objects the compiler found no profile data for */
    int profile_stale_objects;    /* pgo, clang: objects with out-of-date functions let
                                   * through (none hot; build_log.h) */
    int profile_stale_functions;  /* ... and those functions */
    struct profile_corrections corrections; /* pgo: what GCC's -fprofile-correction corrected
                                   * (counted from the log; correction.h) */
    char *bolt_flags;             /* baseline and pgo with a BOLT variant: the recipe's "bolt"
                                   * cflags and link_flags (also in pgo_flags and flags) */
    /* BOLT variants ("bolt", "pgo+bolt"): not compiled; a copy of the input build's prefix
     * with the server binary optimized by llvm-bolt (bolt_server.c) */
    struct pgo_build *bolt_input;
    struct bolt_variant *bolt;    /* owned: the instrument/merge/optimize state and figures */
    double bolt_train_seconds;
    bool official;                /* the official variant: product is the distribution's
                                   * binary (official.c), no directory, prefix or build */
};

/* Run the whole pipeline for rq and print its summary and tables on stdout. Returns the
 * exit code: 0 ok, 1 error (one line said why), 2 interrupted, 3 --fail-if-slower. */
int pgo_pipeline_run(const struct pgo_request *rq);

/* Select the major version of r to build (major.c): db_version (--db-version, or NULL), else
 * the major of the distribution's binary installed here (official: --official=PATH, else the
 * recipe's server.official.binary, {major} tried for each of its majors; the default one
 * first, else the newest installed), else the recipe's "versions" default. A recipe without
 * "versions" builds its one version (db_version refused). 0 or -1 with one line. */
int pgo_major_select(struct recipe *r, const char *db_version, const char *official);

/* The Debian package that installed the file bin and that package's exact version
 * (dpkg-query -S, -W) into *pkg and *version (caller frees). 0, or -1 with both NULL (no
 * package installed it). */
int pgo_official_package_of(const char *bin, char **pkg, char **version);

#endif
