/* model: the data model of an experiment, the head of src/model (the layer below both the
 * engine, src/experiment, and the reports, src/report; the commands of src/cli use it too):
 * what is measured (struct variant, struct experiment_config), what came out (struct
 * run_result, struct experiment_result) and an experiment read back from the results store
 * (struct experiment_loaded); plus what can be said of them without running anything: the
 * runs a config plans, the --reset and --measure names, the variants and the measurement
 * settings as JSON, the release functions, and --exclude-distrusted's filter of a result.
 * The config and its strings are owned by the caller; results are owned by the
 * experiment_result and freed by experiment_result_release(). */
#ifndef PGOLAB_MODEL_MODEL_H
#define PGOLAB_MODEL_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "model/placement.h"
#include "metrics/metrics.h"
#include "server/server.h"
#include "store/store.h"

/* What a run measures (--measure of compare and pgo). */
enum experiment_measure {
    MEASURE_TIME,          /* tps and latencies of a --time run (the default) */
    MEASURE_INSTRUCTIONS,  /* instructions per transaction under valgrind callgrind: each run
                            * is two children at 1 thread with a fixed event count, N = events
                            * and N/5, and the value is the marginal cost
                            * (I(N) - I(N/5)) / (T(N) - T(N/5)) (I = callgrind's total
                            * instruction count, T = transactions the child reported), so the
                            * fixed cost of start-up, library loading and statement preparation
                            * cancels out. Deterministic for identical inputs; not time. */
};
#define EXPERIMENT_EVENTS_DEFAULT 2000  /* --events default of --measure=instructions */

/* When a variant's data is reset to the prepared state (--reset of compare). Every variant
 * runs on its own working copy of a template. */
enum experiment_reset {
    RESET_RUN,      /* every run starts from a fresh copy of the template, prepared once per
                     * workload by the baseline (the default) */
    RESET_ROUND,    /* the working copy is refreshed at each variant's first run of a round;
                     * within a round its runs continue on the data the previous one left */
    RESET_VARIANT,  /* each variant prepares its own template with its own build (once per
                     * workload); its runs continue on the same data across rounds */
};

/* What a variant is (compare's NAME=KIND:PATH). */
enum variant_kind {
    VARIANT_SQLITE,    /* library: a libsqlite3 shared library, loaded by the bench child */
    VARIANT_SERVER,    /* library: a server binary or install prefix (mysql: mariadbd or
                        * mysqld; pgsql: postgres), started by pgolab (src/server) on a
                        * private datadir for each run, stopped cleanly after it */
    VARIANT_EXTERNAL,  /* library: "mysql://HOST:PORT" or "pgsql://HOST:PORT", a running
                        * server pgolab does not manage (data prepared once per workload) */
};

/* One build under test and its fingerprint. */
struct variant {
    const char *name;      /* e.g. "baseline", "pgo", or the user's NAME */
    const char *library;   /* what is measured: see enum variant_kind */
    enum variant_kind kind;          /* VARIANT_SQLITE when zero */
    enum server_kind server_kind;    /* VARIANT_SERVER / _EXTERNAL: mysql or pgsql */
    const char *host;                /* VARIANT_EXTERNAL: the server's host and port */
    int port;
    /* Fingerprint (NULL = unknown; experiment_fingerprint() fills what it can) */
    char *sha256;          /* of the library file */
    char *version;         /* sqlite3_libversion(); servers: flavor and version, e.g.
                            * "MariaDB 10.11.19" (from `BINARY --version`) */
    char *source_id;       /* sqlite3_sourceid() */
    const char *compiler;  /* e.g. "gcc (Debian 12.2.0-14) 12.2.0" */
    const char *cflags;    /* flags the library was built with */
    const char *provenance; /* where a server variant comes from, in words (pgolab pgo: its
                            * source package and exact version, configure options; official's
                            * package and configuration), or NULL */
    /* How a managed server variant nobody described (compare's) was built, each part with
     * the file it was read from (toolchain/build_info.h: "gcc (Debian 12.2.0-14) 12.2.0 (pgolab
     * stamp); flags -O2 (...); configure --without-icu (...)"), or NULL; and, for a variant
     * after the baseline, what differs from the baseline's: a release series of its own
     * first, then compiler, flags and configure features, or NULL. */
    char *build;
    char *build_differences;
    char *loaded_from;     /* the file the child actually mapped (dladdr), or NULL */
    /* VARIANT_SERVER: this variant's own server options ("NAME=VALUE", as --server-option
     * takes them), after the experiment's global ones on its server's command line; one of
     * the same name replaces the global one (server_options_merge()). */
    char **server_options;
    int nserver_options;
};
/* sha256, version, source_id, build, build_differences and loaded_from are heap strings
 * owned by the variant
 * (experiment_fingerprint() fills the NULL ones), and so are server_options and its strings
 * (experiment_variant_add_option()); experiment_variant_release() frees them. */

struct machine_state;

/* The most rounds an experiment may have (--rounds, --max-rounds); a stored run numbered
 * outside 1..this is not read back. */
#define EXPERIMENT_ROUNDS_MAX 100000

struct experiment_config {
    struct variant *variants;  /* variants[0] is the baseline */
    int nvariants;
    char **workloads;          /* e.g. oltp_read_only, oltp_read_write */
    int nworkloads;
    int *threads;              /* thread counts */
    int nthreads;
    int rounds;                /* 1..EXPERIMENT_ROUNDS_MAX */
    enum experiment_reset reset;  /* --reset; instruction mode always copies per run */
    int warmup_runs;           /* --warmup-runs: runs per variant, workload and thread count
                                * made before round 1 and discarded (time mode only) */
    double time_s;             /* --time per run */
    int tables, table_size;    /* data set, prepared once per workload */
    const char *workdir;       /* directory for database files (tmpfs when available) */
    const char *pgolab;        /* the pgolab binary to run children with */
    char **bench_args;         /* extra options for every child, NULL-terminated, or NULL */
    char **server_options;     /* --server-option values for managed servers (VARIANT_SERVER) */
    /* Client options for the children of running servers (VARIANT_EXTERNAL), e.g.
     * "--mysql-user=U", "--pgsql-db=D": each goes to the variants of its driver. NULL-terminated
     * or NULL. Passwords are not here: the children inherit MYSQL_PWD / PGPASSWORD. */
    const char *const *external_args;
    int nserver_options;
    uint64_t seed;             /* seed of the per-round order shuffle */
    bool progress;             /* progress lines on stderr */
    /* The experiment's number in the results store (0 = not recorded). The store itself is no
     * part of the definition: experiment_run() is given it (src/experiment), and with a store
     * and experiment_id > 0 (experiment_record_begin/_resume set it) first loads the runs
     * already recorded for that experiment into the result and will not run them again, then
     * records every new run as soon as it ends. Reports name it ("pgolab experiment 12"). */
    int64_t experiment_id;
    const char *kind;          /* "compare" | "pgo" | "calibrate" (or NULL): for reports */
    const char *target;        /* pgo: its TARGET, for the --resume command it prints; or NULL */
    const char *resume_hint;   /* NULL, or what continues this experiment when a signal stops
                                * it, said instead of the --resume command (pgo --search: "the
                                * same command again ...") */
    const char *resume_options;/* pgo: its build options as shell words ("--workdir=W
                                * --source=S ..."), written after the --resume command it
                                * prints (the store does not describe the build cache); or NULL */
    bool experiment_new;       /* experiment_record_begin made it (not a resume) */
    /* Keep every run's full JSON report (run_result.json, ~40 KiB: its histogram and
     * per-second series) in memory: --output and calibrate's recommendation read it. Else,
     * with a store, a run's JSON is dropped once it is recorded (the store has it;
     * experiment_load() reads it back), so a long experiment's memory stays its numbers.
     * --profile and instruction mode keep it always. */
    bool keep_run_json;
    /* --measure=instructions: measure is MEASURE_INSTRUCTIONS, events (>= 5) the fixed event
     * count N of each run, valgrind the program to run (NULL = "valgrind" on PATH). time_s
     * is then unused by the runs; threads should be {1} (the CLIs force it). Settings record
     * "measure" and "events" only in this mode, so time-mode settings are unchanged. */
    enum experiment_measure measure;
    int events;
    const char *valgrind;
    /* --profile (src/experiment/profiling.h): a CPU profile of every run, kept in profile_dir
     * (RESULTS.profiles/EXPERIMENT, set by experiment_profile_setup()) as RUN.raw and
     * RUN.folded: the bench child of a SQLite variant samples itself, a managed server's
     * process tree is sampled by this process, and instruction mode keeps callgrind's
     * counts per function. Not part of the settings (a measurement with and without
     * profiles is the same measurement). */
    bool profile;
    int profile_freq;          /* Hz (PROFILE_FREQ_DEFAULT when 0) */
    char *profile_dir;         /* owned by the config's maker; experiment_profile_release() */
    /* --metrics=off: no system metrics sampled (src/metrics; on by default in time mode).
     * Not a setting of the measurement: an experiment may be resumed either way. */
    bool no_metrics;
    /* --target-ci (src/model/precision.h): > 0 = rounds go on until the CI half-width of
     * every tps cell (a variant against the baseline at one workload and thread count; a
     * confidence sequence, valid however often it is looked at) is at most target_ci
     * percent; rounds is then the cap (--max-rounds), max_time_s (> 0) a cap on the
     * measurement's wall time in this invocation, and cs_rounds the round count at which the
     * sequence is tightest. 0 = the fixed --rounds of before. Settings record "target_ci"
     * only then. */
    double target_ci;
    double max_time_s;
    int cs_rounds;
    /* --target-metric: the metric whose cells --target-ci waits for: METRIC_TPS (0, the
     * default) or METRIC_CPU_US. Settings record it in "target_ci" only when not tps. */
    int target_metric;
    /* --cpu-placement (model/placement.h; resolved by experiment/pinning.h): the CPUs of
     * each run's bench child and managed server. Zero = auto but not resolved, i.e. off (a config
     * no CLI resolved). Settings
     * record "cpu_placement" only when active. */
    struct cpu_placement placement;
    /* --clients=mpirun:N[:HOSTFILE]: each measured run's bench child is an MPI job of
     * clients_np ranks (`mpirun -np N [--hostfile F] pgolab bench ...`, each rank --threads
     * workers; bench/mpi.c merges them); 0 = one process, as before. Settings record
     * "clients" (the option's text) only when set. */
    int clients_np;
    char *clients_hostfile;  /* NULL: this host only (--oversubscribe) */
    char *clients;           /* the option as given, for the settings and the report */
    /* The latest calibration of this host (model/machine.h), for the reports' "busier
     * than at calibration" warning; NULL = none looked up or found. Not a setting. */
    const struct machine_state *calibration;
};

/* One finished run (one child process). */
/* run_result.below_zero's bits of the background's counts (after the INSTR_METRICS ones) */
#define RUN_BELOW_ZERO_BG_INSTR (1u << 6)
#define RUN_BELOW_ZERO_BG_CYCLES (1u << 7)

struct run_result {
    int variant, workload, threads, round;  /* indices into the config, except threads (the
                                               thread count) and round (1..rounds) */
    double tps, qps;
    double lat_avg_ms, lat_p95_ms, lat_min_ms, lat_max_ms;
    uint64_t transactions, errors;
    char *json;                              /* the child's full JSON report (may be NULL
                                                for a run read back from the store) */
    double started_at;                       /* wall clock, s since the epoch (NAN unknown) */
    double duration_s;                       /* the child's whole run, s (NAN unknown) */
    double instr_per_txn;                    /* --measure=instructions: marginal instructions
                                                per transaction (NAN otherwise); stored in
                                                the run's report_json as
                                                "callgrind": {"instructions_per_transaction",
                                                ...} */
    double i1_miss_per_txn;                  /* the same for callgrind's simulated I1 cache
                                                misses ("i1_misses_per_transaction") */
    double branch_miss_per_txn;              /* and its simulated branch mispredictions,
                                                conditional + indirect
                                                ("branch_mispredicts_per_transaction") */
    double d1_miss_per_txn;                  /* simulated D1 misses, reads + writes
                                                ("d1_misses_per_transaction") */
    double ll_miss_per_txn;                  /* simulated last-level misses, instruction +
                                                data ("ll_misses_per_transaction") */
    double est_cycles_per_txn;               /* estimated cycles (experiment_callgrind_
                                                est_cycles: Ir + 10 Bm + 10 L1m + 100 LLm;
                                                "est_cycles_per_transaction") */
    double bg_instr_per_txn;                 /* a managed server under callgrind: the marginal
                                                instructions and estimated cycles of its other
                                                processes and threads (background, not in the
                                                values above: "callgrind": {"background": ...});
                                                NAN otherwise */
    double bg_est_cycles_per_txn;
    /* Instruction mode: which marginal counts went below zero (the N/5 child counted more
     * than the N child's share: noise, never a cost) and are NAN above: bit k for the
     * metric METRIC_INSTR + k (k < INSTR_METRICS), RUN_BELOW_ZERO_BG_INSTR and _BG_CYCLES for
     * the background's. Read back from the "callgrind" JSON's "below_zero". */
    unsigned below_zero;
    struct run_metrics metrics;              /* system metrics sampled during the run
                                                (src/metrics; .available false when not
                                                sampled: instruction mode, --metrics=off,
                                                unreadable /proc, a run recorded before) */
};

struct experiment_result {
    struct run_result *runs;  /* in the order they ran */
    int nruns;
    char *env_json;  /* environment: kernel, CPU model, cores, hostname (JSON object text) */
    char *error;     /* why the experiment stopped early (one line), or NULL */
    int signal;      /* the signal (SIGINT/SIGTERM) that stopped it, or 0 */
    bool transient;  /* the failure may not happen again (a hung or killed child, a server
                      * that died in a run): --resume is worth suggesting */
    double started_at, finished_at;  /* wall clock, seconds since the epoch */
    int resumed;     /* runs already recorded in the store when experiment_run() started
                      * (they are the first `resumed` entries of runs) */
    /* --exclude-distrusted: experiment_result_exclude_distrusted() took the runs the trust
     * rules flag (src/metrics: steal, iowait, run queue, other work) out of runs, so that every
     * statistic is computed without them; excluded counts them. Both zero otherwise. */
    bool exclude_distrusted;
    int excluded;
};

/* An experiment read back from the store (experiment_load(), src/experiment/record.h), as a
 * config and result like experiment_run()'s: owns everything cfg and res point to. */
struct experiment_loaded {
    struct experiment_config cfg;
    struct experiment_result res;
    struct store_experiment exp;  /* the stored row: kind, status, dates, settings, variants */
    char **owned;                 /* strings behind cfg (workloads, bench_args) */
    int nowned;
};

/* --exclude-distrusted: take every run whose system metrics the trust rules flag
 * (metrics_flags() != 0; a run without metrics cannot be judged and stays) out of res->runs,
 * in place and in order, freeing them; sets res->exclude_distrusted and adds their number to
 * res->excluded (and keeps res->resumed counting the kept ones of the first `resumed`).
 * Returns how many it took out. */
int experiment_result_exclude_distrusted(struct experiment_result *res);

/* The runs res holds or held: nruns plus the runs --exclude-distrusted took out (what the
 * "N of M runs finished" of a report counts against the plan). */
int experiment_runs_done(const struct experiment_result *res);

/* Free the fingerprint strings and the own server options of v and set them to NULL. */
void experiment_variant_release(struct variant *v);
/* Append a copy of opt ("NAME=VALUE") to v's own server options. */
void experiment_variant_add_option(struct variant *v, const char *opt);
/* Free the runs (and their JSON), env_json and error of res, and zero it. */
void experiment_result_release(struct experiment_result *res);
/* Free everything an experiment_load() filled in l. */
void experiment_loaded_release(struct experiment_loaded *l);

/* cpu_placement_describe() of cfg's placement, knowing whether a variant is a managed
 * server (VARIANT_SERVER). */
void experiment_placement_describe(const struct experiment_config *cfg, char *buf, size_t size);

/* Runs the config plans: variants x workloads x thread counts x rounds. */
int experiment_runs_planned(const struct experiment_config *cfg);

/* "run" | "round" | "variant" into *out; -1 with a message otherwise. */
int experiment_reset_parse(const char *s, enum experiment_reset *out);
const char *experiment_reset_name(enum experiment_reset r);

/* "time" | "instructions" into *out; -1 with a message otherwise. */
int experiment_measure_parse(const char *s, enum experiment_measure *out);

/* The variants and their fingerprints as a JSON array (new reference). */
json_t *experiment_variants_json(const struct experiment_config *cfg);

/* The settings of the measurement that the JSON file, the results store and the report's JSON
 * hold, added to set: "workloads" (names), "threads" (counts), "rounds", "reset" and "warmup_runs"
 * when not the
 * default, "server_options" when given, "time_s", "tables", "table_size", and "target_ci" ({"pct",
 * "max_time_s", "cs_rounds"}) with --target-ci, "measure" + "events" when counting
 * instructions (each optional key only then, so the settings of
 * experiments without it are unchanged). */
void experiment_measurement_json(json_t *set, const struct experiment_config *cfg);

#endif
