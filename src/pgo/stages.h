/* stages: the pipeline's shared state (struct pgo_pipeline, its builds and trainers) and the
 * functions the targets (target.h) build their stages from, one file each: steps.c (a build
 * from the recipe's steps), train.c (training and the profile check), bolt_server.c (a
 * server's BOLT variants), gate.c and suite.c (the correctness gate), instance.c (a server of
 * one build), official.c and provenance.c (the official variant, where variants come from);
 * and measure.c and search.c (the experiment), which the pipeline runs after the stages.
 * stages.c holds what every stage reads of the state. Private to src/pgo/; pipeline.c owns
 * the state for the run, target_server.c and target_sqlite.c set it up and run the stages. */
#ifndef PGOLAB_PGO_STAGES_H
#define PGOLAB_PGO_STAGES_H

#include <signal.h>
#include <stdbool.h>

#include "toolchain/toolchain.h"
#include "pgo/correction.h"
#include "pgo/distro.h"
#include "pgo/profile_check.h"
#include "pgo/recipe.h"
#include "pgo/request.h"
#include "pgo/target.h"
#include "util/argvec.h"

struct store;
struct variant;
struct pgo_library;

/* One trainer and the profile it wrote. */
struct pgo_trainer {
    char *name;                   /* as given: "oltp_read_write",
                                   * "oltp_read_only+oltp_write_only", "suite" */
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
    char *why;                    /* why it was built now ("not built before", "the profile
                                   * changed") */
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
    bool distro;                  /* the distro variant: built like Debian's package, its
                                   * configure step Debian's (p->distro, distro.h) */
};

/* Everything one run of the pipeline made; pipeline.c releases it. */
/* Where the variants come from, in words (provenance.c). */
struct pgo_provenance {
    char *built;                  /* the self-built variants': "postgresql-18 18.6-3 from
                                   * Debian sid, upstream 18.6; configure --without-icu ..." */
    char *official;               /* official's: its package and version, its configure
                                   * options and what differs; NULL without official */
    char *distro;                 /* distro's: "built like Debian's PKG VERSION (...); not the
                                   * distribution's binary; ..."; NULL without distro */
    char *configure;              /* the recipe's configure options, joined */
    char *official_cflags;        /* official's compile flags (pg_config --cflags), or NULL */
    struct argvec differs;        /* "icu: --without-icu built, --with-icu official" */
    struct argvec distro_differs; /* the same of the distro variant's options: a build like
                                   * Debian's should differ from official in none but what it
                                   * dropped */
    bool distro_compared;         /* distro_differs was made (official's options are known) */
};

struct pgo_pipeline {
    const struct pgo_request *rq;
    struct recipe recipe;
    const struct pgo_target *target; /* the kind of target (target.h): its operations run the
                                   * stages */
    bool library;                 /* target->embedded: a library recipe (target_sqlite.c),
                                   * whose own state is lib */
    struct pgo_library *lib;
    const char *cc_name, *cflags; /* the build settings of this pipeline's builds: --cc and
                                   * --cflags, or those of a group of --variants */
    const char *label;            /* NULL, or the group's prefix of its builds' names */
    struct pgo_pipeline *groups;  /* the other groups of build settings in --variants (rq's
                                   * groups[1..]), each a pipeline of its own for its builds
                                   * and training, sharing the recipe, source and run directory
                                   * with this one (pipeline.c); the gate and the measurement
                                   * take every group's builds */
    int ngroups;
    struct cc_info cc;
    char *cxx;                    /* the C++ compiler matching cc */
    char *pgolab;                 /* this binary, for bench children */
    char *source, *source_sha, *source_version;
    struct pgo_provenance prov;   /* made once the source and official are known */
    struct pgo_distro distro;     /* the distro variant's configure (distro.h), read with the
                                   * source when --variants names it (via NULL until then) */
    char *source_files;           /* the tree's per-file hashes (tree_sha256_list()): kept
                                   * beside each build's stamp to name the files an edit
                                   * changed (steps.c) */
    char *root;                   /* WORKDIR/TARGET-CC-KEY: every build, profile and log
                                   * (a library: WORKDIR/build-CC-KEY) */
    char *profile_raw;            /* ROOT/profile-raw: compiled into the instrumented build;
                                   * each training moves its data to the trainer's dir */
    char *rundir;                 /* tmpfs scratch for datadirs: /dev/shm/pgolab-pgo-PID (a
                                   * library: its database files, target_sqlite.c) */
    struct pgo_trainer *trainers;
    int ntrainers;
    struct pgo_exam *exams;       /* each measured workload against each trainer (exam.h) */
    int nexams;
    struct pgo_build *builds;     /* [0] baseline, [1] instrumented, then the rest (the BOLT
                                   * variants last) */
    int nbuilds;
    int nbolt;                    /* BOLT variants among the builds */
    bool bolt_lto;                /* pgo+lto+bolt among them: the LTO builds are BOLT's
                                   * inputs too (built with the recipe's bolt flags) */
    char *official_bin;           /* `official` in --variants: the distribution's binary
                                   * (official.c), its "PostgreSQL 15.13" and "15.13" */
    char *official_version, *official_number;
    char *official_package;       /* the Debian package that installed it (dpkg-query -S) and */
    char *official_debversion;    /* its exact version ("15.18-0+deb12u1"), else NULL */
    char *gate_checksum;
    long long gate_rows;
    bool suite_ran;
    volatile sig_atomic_t *interrupted;
    /* --search (search.c) sets these around each of its measurements; NULL otherwise */
    const bool *measure_only;     /* [k] for pgo_measured_builds()' k-th: whether pgo_measure
                                   * measures it ([0], the baseline, always) */
    struct pgo_outcome *outcome;  /* filled by pgo_measure from its result, when it has runs */
};

/* One measured variant's change in the measurement's key metric (estimated cycles per
 * transaction by instructions, else tps), every workload and thread count pooled, 95% CI,
 * + = better (experiment_change_pct()); NAN without data. */
struct pgo_change {
    double pct, lo, hi;
    double p_value;               /* the change's test (Mann-Whitney, or the sequence's) */
    bool stats, significant;
};

/* What pgo_measure found (struct pgo_pipeline's outcome); pgo_outcome_release() frees it. */
struct pgo_outcome {
    int64_t experiment_id;
    bool instructions;            /* the key metric is METRIC_EST_CYCLES, else METRIC_TPS */
    bool complete;                /* every run of the experiment finished (no signal, no error) */
    int nv;                       /* measured variants, [0] the baseline */
    const struct pgo_build **build; /* [nv]: into the pipeline's builds */
    struct pgo_change *vs_base;   /* [nv]: against the baseline ([0]: NAN) */
    struct pgo_change *vs_official; /* [nv]: against official (NAN without official and for
                                   * official itself) */
};
void pgo_outcome_release(struct pgo_outcome *o);

/* Every build the gate checks and the experiment measures, in the measurement's order: this
 * pipeline's baseline, its other builds, every group's builds, official last (no instrumented
 * or skipped one) into *out (caller frees the array). Returns how many. */
int pgo_measured_builds(const struct pgo_pipeline *p, const struct pgo_build ***out);

/* Build b from the recipe's steps (steps.c): skipped when its stamp matches and its product
 * exists (b->cached), else run with the log in b->log, progress on a TTY, and resumed from
 * the first unfinished step when an earlier run was interrupted with the same inputs. A
 * failure removes the partial install prefix (no half variant is ever cached) and prints one
 * error with the command and its log tail. 0 or -1. */
int pgo_build_run(struct pgo_pipeline *p, struct pgo_build *b);
/* The phase flags of b ({pgo_flags}): the flag table's row, without the missing-profile
 * errors for a non-strict recipe, plus -flto for LTO variants and, with clang, DWARF 4 for
 * valgrind. Sets b->pgo_flags/flags. */
int pgo_build_flags(struct pgo_pipeline *p, struct pgo_build *b);
/* The recipe's BOLT compile flags for p's compiler: bolt.clang_cflags for clang, else
 * bolt.cflags (GCC's). The recipe must have a "bolt" key. */
char **pgo_bolt_cflags(const struct pgo_pipeline *p);
/* Whether the build in dir has a stamp (steps.c) that names profile_dir (the trainer's
 * profile directory, or its .profdata): a pgo build of that trainer. */
bool pgo_stamp_names_profile(const char *dir, const char *profile_dir);
/* The recipe placeholders of build b (steps.c): source, build, prefix, profile_dir, phase,
 * cc/cxx, cflags, pgo_flags, jobs, phase_options. The strings stay owned by p and b. */
void pgo_build_vars(const struct pgo_pipeline *p, const struct pgo_build *b,
                    struct recipe_vars *v);

/* Train t on the instrumented build (train.c): skipped when the stamp of an identical
 * training matches and its profile is there; then the profile check. 0 or -1. */
int pgo_train(struct pgo_pipeline *p, struct pgo_trainer *t);
/* Trainer t's workloads (prepare, then each run) on a server started from prefix with the
 * recipe's train_options, then a clean shutdown, which is when instrumented processes write
 * their profiles (instance.c; train.c and BOLT's training use it). Not for the suite trainer. log
 * gets the bench output. 0 or -1 (one line). */
int pgo_train_server(struct pgo_pipeline *p, struct pgo_trainer *t, const char *prefix,
                     const char *log);

/* The BOLT variant b (bolt_server.c): b->prefix a copy of b->bolt_input's prefix, its server
 * binary instrumented by llvm-bolt, trained with the pipeline's trainer like the pgo build,
 * the profiles merged and the binary optimized into b->prefix; reused when its stamp (the
 * input's sha256, the training, BOLT's options) matches. A failed BOLT step is one line with
 * its command and log tail. 0 or -1. */
int pgo_bolt_build(struct pgo_pipeline *p, struct pgo_build *b);
/* The BOLT options of the recipe and request that refuse to run, checked before anything is
 * fetched or built (bolt_server.c; reads p->rq and p->recipe only): the recipe's "bolt" key,
 * llvm-bolt-16, one workload trainer, pgo for pgo+bolt, no --gate=suite where the suite runs the
 * build tree's own server. 0 or -1. */
int pgo_bolt_check(const struct pgo_pipeline *p);
/* The summary lines of BOLT variant b: its binary, the profile figure and the -dyno-stats
 * file. */
void pgo_bolt_print(const struct pgo_build *b);
/* Release what pgo_bolt_build allocated in b. */
void pgo_bolt_release(struct pgo_build *b);

/* The correctness gate (gate.c): checksum on every pgo build against the baseline, and the
 * regression suite with PGO_GATE_SUITE. 0 or -1. */
int pgo_gate(struct pgo_pipeline *p);
/* Run the recipe's suite steps against a server started from build b's prefix with the
 * --server-options options (NULL: none) (suite.c; the gate uses it, and the trainer "suite"
 * on the instrumented build with the recipe's train_options). The steps see b's placeholders
 * ({pgo_flags} of its phase, so a client the suite builds links like the build did) plus the
 * server's. A recipe whose server.suite_server is "own" gets no started server: its suite
 * (MariaDB's mysql-test-run) starts the build's servers from the build tree itself, and
 * options are not used. log gets the output, LOG.server the started server's own log (the
 * profile check of the "suite" trainer reads it). 0 or -1. */
int pgo_run_suite(struct pgo_pipeline *p, const struct pgo_build *b, char **options,
                  const char *log);

/* The experiment of the measurement (measure.c) into *cfg (zeroed first): variants v[0..nv)
 * (baseline first), rq's workloads, threads, rounds or --target-ci, time, tables, seed, the
 * run directory, and progress on (a status line on a terminal, the paced lines of
 * experiment/pace.h off one: a server target's measurement is never silent in a log). cfg
 * points into p, rq and v, which must outlive it. */
void pgo_measure_config(const struct pgo_pipeline *p, struct variant *v, int nv,
                        struct experiment_config *cfg);

/* Measure every variant against the baseline (measure.c), or those of p->measure_only; fills
 * p->outcome when set; returns the exit code. */
int pgo_measure(struct pgo_pipeline *p, struct store *store);

/* --search (search.c): the screen of every candidate by estimated cycles per transaction (an
 * instruction-mode pgo experiment), the confirmation of the best rq->search_keep against the
 * baseline (and official) by time (a second one), then the winner's block; returns the exit
 * code as pgo_measure. */
int pgo_search(struct pgo_pipeline *p, struct store *store);

/* ---- the official variant (official.c): the distribution's own server binary, measured
 * and gated like a build, never built ---- */
/* Whether --variants names official. */
bool pgo_official_wanted(const struct pgo_request *rq);
/* Before anything is fetched or built, with official wanted: its binary (--official, else the
 * recipe's server.official) is executable and a server of the recipe's family; sets
 * p->official_bin, p->official_version, p->official_number. 0 (also when not wanted) or -1
 * (one line, naming the Debian package when the recipe's binary is missing). */
int pgo_official_check(struct pgo_pipeline *p);
/* Refuse version (a server or Debian version, "15.13", "1:10.11.6-0+deb12u1") of what (the
 * source, a build) when its major version differs from the official binary's (PostgreSQL 10+:
 * the first number, else the first two): one line naming both. 0 without official or when
 * either major version is unknown. */
/* Refuse the source tree dir of Debian version (NULL: unknown) for an official comparison when
 * its debian/changelog disagrees with the .dsc beside it, or when it is another revision than
 * the installed official package's (p->official_debversion): one line naming both versions and
 * the command that fetches the right one. 0 without official, or when the package's version is
 * unknown (a binary no package installed). */
int pgo_official_same_revision(const struct pgo_pipeline *p, const char *dir, const char *version);
/* p->prov from the source tree, the recipe and the official binary (provenance.c). */
void pgo_provenance_make(struct pgo_pipeline *p);
/* The summary's lines of p->prov ("built from", "official", "differs"). */
void pgo_provenance_print(const struct pgo_pipeline *p);
void pgo_provenance_release(struct pgo_provenance *pv);
int pgo_official_same_major(const struct pgo_pipeline *p, const char *what,
                            const char *version);
/* The same for build b's server binary (its --version), once it is built. */
int pgo_official_against(const struct pgo_pipeline *p, const struct pgo_build *b);
/* The official build b (b->official): its sha256; marked cached, as nothing is built. */
int pgo_official_hash(struct pgo_pipeline *p, struct pgo_build *b);
/* Its summary line. */
void pgo_official_print(const struct pgo_pipeline *p, const struct pgo_build *b);

/* Start a managed server of the recipe from prefix (or from a server binary, a regular file:
 * the official variant's) on a fresh datadir (NULL: generated on tmpfs) with extra options;
 * the caller stops it with server_stop(), which copies the server's log to save_log when that
 * is not NULL. 0 or -1. */
struct server;
int pgo_server_start(struct pgo_pipeline *p, const char *prefix, const char *datadir,
                     char **options, const char *save_log, struct server *s);
/* Run one `pgolab bench` child against a started server (args after the connection options);
 * output appended to log, stdout collected in out when given. 0 or -1 with the log tail. */
struct strbuf;
int pgo_bench(struct pgo_pipeline *p, const struct server *s, const char *const *args,
              const char *log, struct strbuf *out);

#endif
