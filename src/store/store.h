/* store: the results database (SQLite, default ./pgolab.db) that records every bench run and
 * every experiment. Owned by src/store; callers see only the opaque struct store. */
#ifndef PGOLAB_STORE_H
#define PGOLAB_STORE_H

#include <stdint.h>

/*
 * File format
 * -----------
 * A SQLite database (the system libsqlite3, loaded by the first store_open() through
 * sqlite_api.h, so only processes that open a store have it; the SQLite *under test* runs in
 * `pgolab bench` children, which never open a store) in WAL mode, with
 *   PRAGMA application_id = STORE_APPLICATION_ID  ("PGOL" in ASCII, 0x50474F4C)
 *   PRAGMA user_version   = schema version (STORE_SCHEMA_VERSION in this build)
 * Tables (version 1): experiments, variants, runs (see store.c for the SQL). Version 2 adds
 * runs.metrics_json: the run's system metrics (src/metrics/metrics.h, metrics_to_json()).
 *
 * Concurrency: any number of pgolab processes may open and write the same file. Every write
 * is its own short BEGIN IMMEDIATE ... COMMIT transaction and waits up to 10 s for the lock.
 * A struct store must not be shared between processes (open it after fork) and is not
 * thread-safe: use it from one thread at a time.
 *
 * Conventions: times are wall-clock seconds since the epoch (REAL, as util's wall_time());
 * durations are seconds; latencies milliseconds. Strings passed in are copied (the caller
 * keeps ownership). Every function that returns int returns 0 on success, or -1 after
 * printing one error line (util's error(), "results file PATH: ...").
 */

#define STORE_DEFAULT_PATH "pgolab.db"
/* The environment variable that replaces STORE_DEFAULT_PATH when --results is not given. */
#define STORE_ENV "PGOLAB_RESULTS"
#define STORE_APPLICATION_ID 1346850636 /* 0x50474F4C = "PGOL" */
#define STORE_SCHEMA_VERSION 2

struct strbuf;
struct store;

/* One build under test of an experiment (a row of `variants`). */
struct store_variant {
    int idx;                      /* 0 = the baseline; the variant index of the experiment */
    const char *name;             /* required */
    const char *library;          /* path of the shared library; the rest may be NULL */
    const char *sha256;
    const char *version;          /* sqlite3_libversion() */
    const char *source_id;        /* sqlite3_sourceid() */
    const char *compiler;
    const char *cflags;
    const char *fingerprint_json; /* anything else known about the build (JSON text) */
};

/* One run (one child `pgolab bench ... run`): a row of `runs`. */
struct store_run {
    int64_t id;            /* filled by store_runs_load(); ignored by store_run_add() */
    int64_t experiment_id; /* ditto */
    int variant_idx;       /* must name a variant already added to the experiment */
    const char *workload;  /* e.g. "oltp_read_only"; required */
    int threads;           /* thread count */
    int round;             /* 1..rounds */
    int seq;               /* position in the experiment's run order (reports sort by it);
                              STORE_SEQ_NEXT = one more than the largest so far */
    /* The doubles may be NaN (SQLite stores NaN as NULL; it reads back as NaN). */
    double started_at;     /* wall clock, s */
    double duration_s;     /* s */
    double tps, qps;       /* per second */
    double lat_min_ms, lat_avg_ms, lat_p95_ms, lat_max_ms;
    uint64_t transactions, errors;
    const char *report_json; /* the child's full JSON report (counters, latency summary,
                                histogram, intervals), kept verbatim; may be NULL */
    const char *metrics_json; /* the run's system metrics (src/metrics, metrics_to_json()),
                                 or NULL (not sampled, or recorded before schema 2) */
};
#define STORE_SEQ_NEXT (-1)

/* An experiment with its variants (a row of `experiments` plus its `variants`). */
struct store_experiment {
    int64_t id;
    const char *kind;             /* "pgo" | "compare" | "bench" | "calibrate" */
    double created_at;            /* wall clock, s */
    double finished_at;           /* wall clock, s; 0 while it is still running */
    const char *status;           /* "running" | "complete" | "interrupted" | "failed" */
    const char *settings_json;    /* JSON object */
    const char *settings_hash;    /* "fnv1a64:<16 hex>" of the settings with sorted keys */
    const char *environment_json; /* JSON, or NULL */
    uint64_t seed;
    const char *note;             /* or NULL */
    struct store_variant *variants; /* ordered by idx */
    int nvariants;
    int64_t nruns;                /* runs recorded so far */
};

/* Open (creating it if missing) the results file at path (NULL = STORE_DEFAULT_PATH) and bring
 * its schema up to date. A file that is not a SQLite database, belongs to another application
 * or has a newer schema than this build knows is refused and left untouched (it is checked
 * read-only first); so is a file that cannot be written (a read-only file system, no
 * permission: one line naming it, before any experiment starts). On success *out is a new
 * handle for store_close(). */
int store_open(const char *path, struct store **out);
/* Open an existing results file for reading only (report, history): like store_open() when the
 * file and its directory are writable; else (a read-only file system, an archive without write
 * permission) through a read-only connection, which creates no files next to it. A file whose
 * schema is older than this build's and cannot be upgraded is refused in one line. */
int store_open_read(const char *path, struct store **out);
/* Close the handle (NULL is fine). */
int store_close(struct store *s);
/* The path the store was opened with (owned by the store). */
const char *store_path(const struct store *s);

/* Remember path (made absolute) as where experiments were last recorded, in
 * $XDG_STATE_HOME/pgolab/last-results (default ~/.local/state/pgolab/last-results); a failure
 * is silent (it is only a hint). */
void store_remember_path(const char *path);
/* The path store_remember_path() last kept (caller frees), or NULL. */
char *store_last_path(void);

/* Start an experiment: kind is one of the four kinds above, settings_json a JSON object (its
 * settings_hash is computed here), environment_json JSON or NULL. Status "running",
 * created_at now. *id gets the new experiment id. */
int store_experiment_begin(struct store *s, const char *kind, const char *settings_json,
                           const char *environment_json, uint64_t seed, int64_t *id);
/* Record variant v of experiment exp_id (v->idx must be new in that experiment). */
int store_variant_add(struct store *s, int64_t exp_id, const struct store_variant *v);
/* Record one finished run, committed at once (an interrupted experiment loses at most the run
 * in progress). Fails if a run with the same (experiment, variant, workload, threads, round)
 * is already recorded, or the variant is unknown. */
int store_run_add(struct store *s, int64_t exp_id, const struct store_run *run);
/* *exists = 1 if that run key is recorded, else 0 (for --resume). */
int store_run_exists(struct store *s, int64_t exp_id, int variant_idx, const char *workload,
                     int threads, int round, int *exists);
/* Set the experiment's status ("complete" | "interrupted" | "failed" | "running") and
 * finished_at = now (0 again for "running", as when resuming). */
int store_experiment_finish(struct store *s, int64_t exp_id, const char *status);
/* Remove an experiment with its variants and runs (one transaction): for one that failed
 * before anything was measured. */
int store_experiment_delete(struct store *s, int64_t exp_id);
/* Replace the experiment's free-form note (NULL clears it). */
int store_experiment_set_note(struct store *s, int64_t exp_id, const char *note);

/* *settings_json = the experiment's settings (a new heap string, caller frees). */
int store_experiment_settings(struct store *s, int64_t exp_id, char **settings_json);
/* Fill *out with experiment exp_id and its variants. Every string and the variants array are
 * heap copies owned by *out: free them with store_experiment_release(). */
int store_experiment_get(struct store *s, int64_t exp_id, struct store_experiment *out);
void store_experiment_release(struct store_experiment *e);

/* Callbacks of the listing functions: the pointed-to data (and its strings) is valid only
 * during the call. Return 0 to go on, > 0 to stop early (the listing returns 0), < 0 to stop
 * with an error the callback has already printed (the listing returns -1). A callback must
 * not call other store functions on the same handle. */
typedef int (*store_experiment_fn)(const struct store_experiment *e, void *ctx);
typedef int (*store_run_fn)(const struct store_run *r, void *ctx);

/* The interrupted experiment of kind whose settings are settings_json's (the same settings
 * hash) with the most runs recorded (the newest of those): *id and its *nruns (> 0), or *id 0
 * when there is none. One still "running" is left out: it may be running now, in another
 * process. 0 or -1 (a read error, said). */
int store_experiment_unfinished_like(struct store *s, const char *kind,
                                     const char *settings_json, int64_t *id, int64_t *nruns);

/* Every experiment in id order, with its variants and run count (for `pgolab history`). */
int store_experiments_list(struct store *s, store_experiment_fn fn, void *ctx);
/* Every run of experiment exp_id, ordered by seq (then id), all columns (for `pgolab report`).
 * An experiment without runs, or an unknown id, calls fn zero times. */
int store_runs_load(struct store *s, int64_t exp_id, store_run_fn fn, void *ctx);

/* The top-level keys whose values differ between two JSON objects (e.g. the settings of an
 * experiment being resumed and the new ones), appended to out one per line in key order as
 * "key: old -> new\n" (values as compact JSON; "(unset)" where a key is missing). Nothing is
 * appended when they are equal. -1 with a message if either is not a JSON object. */
int store_settings_diff(const char *json_a, const char *json_b, struct strbuf *out);

#endif
