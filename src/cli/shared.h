/* shared: the steps the subcommands share: help, option parsing, the results file, and the
 * setup of an experiment (compare, calibrate). Errors are printed with error(). */
#ifndef PGOLAB_CLI_SHARED_H
#define PGOLAB_CLI_SHARED_H

#include <stdbool.h>

#include "experiment/experiment.h"
#include "model/machine.h"
#include "store/store.h"
#include "util/opts.h"

/* "help", "--help" or "-h" anywhere in argv[1..argc): prints usage() and returns true. */
bool cli_help(int argc, char **argv, void (*usage)(void));

/* opts_init() with the ntables option tables, then parse argv[1..argc) into o; a positional
 * argument is refused ("unexpected argument 'x' (see `pgolab CMD help`)"). o is initialized
 * either way (the caller releases it). -1 after a message. */
int cli_parse(struct opts *o, const struct opt_def *const *tables, int ntables, int argc,
              char **argv, const char *cmd);

/* With no --results given, PGOLAB_RESULTS (STORE_ENV) when set and not empty replaces the
 * default ./pgolab.db (nothing when o has no --results option). cli_parse() calls it. */
int cli_results_env(struct opts *o);

/* --fail-if-slower=PCT into *pct (a percentage, 0 <= PCT < 100), -1 when not given. -1 after
 * a message. */
int cli_fail_if_slower(const struct opts *o, double *pct);

/* The options of --target-ci, for the option tables of compare, pgo and calibrate. */
#define CLI_TARGET_CI_OPTIONS                                                                     \
    { "target-ci", OPT_DOUBLE, NULL,                                                              \
      "add rounds until every tps cell's 95% CI half-width is at most PCT percent (a "            \
      "confidence sequence: valid however often it is looked at, so stopping early biases "       \
      "nothing), or --max-rounds / --max-time is reached; the report says per cell whether the "  \
      "target was reached. Replaces --rounds" },                                                  \
    { "max-rounds", OPT_INT, "200",                                                               \
      "--target-ci: at most this many rounds (the sequential CI is tuned to be tightest at "      \
      "half of it)" },                                                                            \
    { "max-time", OPT_INT, NULL,                                                                  \
      "--target-ci: stop starting rounds when the measurement would pass this many seconds "      \
      "(split over the workloads)" }

/* --exclude-distrusted, for the option tables of compare, pgo and report (the statistics
 * without the runs the trust rules flag: experiment_result_exclude_distrusted(), model.h). */
#define CLI_EXCLUDE_DISTRUSTED_OPTION                                                             \
    { "exclude-distrusted", OPT_BOOL, "off",                                                      \
      "compute every number of the report (tables, verdict, JSON and CSV, --output, "             \
      "--fail-if-slower) without the runs the trust rules distrust (steal > 5%, iowait > 10%, "   \
      "a run queue above the cores the run uses, or other work above 10% of the CPU; runs "       \
      "without system metrics stay); the header and the verdict say how many were left out. A "   \
      "report option, not a setting: the results database keeps every run, and --target-ci's "    \
      "stopping rule counts them all" }

/* --target-ci, --max-rounds and --max-time into cfg (target_ci, rounds = the cap, max_time_s,
 * cs_rounds); nothing without --target-ci. Call it after --rounds and --measure are in cfg:
 * --rounds with --target-ci, a cap without it, or --measure=instructions is refused. -1 after
 * a message. */
int cli_target_ci(const struct opts *o, struct experiment_config *cfg);

/* --variant-server-option, for the option tables of compare and pgo
 * (experiment/variant_options.h). */
#define CLI_VARIANT_SERVER_OPTION                                                                 \
    { "variant-server-option", OPT_MULTI, NULL,                                                   \
      "a server option of one managed-server variant only, VARIANT:NAME=VALUE (repeatable), "     \
      "e.g. B:shared_buffers=256MB; it comes after the --server-option values on that "           \
      "variant's command line and replaces one of the same name, so a configuration A/B is a "    \
      "variant like a build; recorded with the variant (settings, --output JSON, the report's "   \
      "variant lines)" }

/* The options of CPU placement and the target's metric (compare and calibrate). */
#define CLI_PRECISION_OPTIONS                                                                     \
    { "cpu-placement", OPT_STRING, "off",                                                         \
      "CPUs of the measured processes: off (the scheduler decides; the default until "            \
      "bench/placement-cpu shows placement steadier), auto (with 2 or more CPUs, the bench "      \
      "child on the first, a managed server's processes on the others; a SQLite child pinned "    \
      "only at --threads=1), or CLIENT[:SERVER] CPU lists as taskset takes them (e.g. 0:1-3); "   \
      "said in the report header and recorded in the settings" },                                 \
    { "target-metric", OPT_STRING, "tps",                                                         \
      "--target-ci: the metric whose cells must reach the target: tps, or cpu (CPU time per "     \
      "transaction of the client and the managed server, which co-tenants' steal affects less "   \
      "than tps)" }

/* --cpu-placement into cfg->placement (resolved) and --target-metric into cfg->target_metric
 * (cpu needs --target-ci and the system metrics). Call after cli_target_ci(). -1 after a
 * message. */
int cli_precision(const struct opts *o, struct experiment_config *cfg);

/* The latest calibration of this host in the results store, for the "busier than at
 * calibration" warning and --from-calibration. Zero it; cli_calibration_release(). */
struct cli_calibration {
    bool found;
    struct experiment_loaded l;
    struct machine_state state;
};

/* Look the calibration up in store (time mode only) and point cfg->calibration at its state;
 * with --from-calibration (an option of compare; needs --target-ci) also start from its
 * recommendation for the target: --time = the recommended run length, --max-rounds twice the
 * expected rounds (unless given), its CPU placement (unless --cpu-placement is given); says
 * what it took on stderr. No calibration is fine without --from-calibration. -1 after a
 * message. */
int cli_calibration_apply(const struct opts *o, struct experiment_config *cfg, struct store *store,
                          struct cli_calibration *c);
void cli_calibration_release(struct cli_calibration *c);

/* For `pgolab report`: the calibration experiment l was compared with (the latest of its host
 * recorded before it) into c, and l->cfg.calibration pointed at its state; nothing when there
 * is none. -1 after a message. */
int cli_calibration_for(struct store *store, struct experiment_loaded *l,
                        struct cli_calibration *c);

/* Open the existing results database at path (--results) for reading: an empty path or a
 * missing file is an error, as listing and reporting must not create one. -1 after a
 * message. */
int cli_results_open_existing(const char *path, struct store **store);

/* --threads into cfg->threads (heap, the caller frees it) and cfg->nthreads; an empty list is
 * refused with example as the hint (e.g. "--threads=1,2"). -1 after a message. */
int cli_threads(const struct opts *o, const char *example, struct experiment_config *cfg);

/* --time (seconds, at most a week), --tables (1..100000) and --table-size (rows >= 1) into
 * cfg->time_s, cfg->tables and cfg->table_size. -1 after a message naming the option and
 * its range ("out of range: seconds from 1 to 604800, a week"). */
int cli_time_tables(const struct opts *o, struct experiment_config *cfg);

/* What cli_experiment_setup() made; zero it before, free it with cli_experiment_release(). */
struct cli_experiment {
    char *bench_args[2];  /* { "--rand-seed=N", NULL } with --rand-seed, else { NULL } */
    char *workdir;        /* --workdir or experiment_default_workdir() */
    bool made_workdir;    /* workdir did not exist yet: the experiment makes it */
    bool temp_workdir;    /* no --workdir: experiment_default_workdir() made it, removed always */
    char *pgolab;         /* this binary, for the bench children */
    struct store *store;  /* --results, open */
};

/* The common setup of an experiment: cfg->seed from --rand-seed (also passed to every bench
 * child through cfg->bench_args) or else from the clock, cfg->workdir (--workdir),
 * cfg->pgolab, the progress line, and the results store --results, opened before anything
 * runs (a foreign or newer file is refused untouched; the store prints why). cfg points into
 * x afterwards. -1 after a message. */
int cli_experiment_setup(const struct opts *o, struct experiment_config *cfg,
                         struct cli_experiment *x);

/* Release x; the work directory is removed too when the experiment made it and ran. */
void cli_experiment_release(struct cli_experiment *x, bool ran);

#endif
