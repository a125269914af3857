/* sqlite_bench: the `pgolab bench --sqlite-library` children of the SQLite target
 * (target_sqlite.c, recipes/sqlite.json): the library's version (sqlite3.h), and the training
 * and correctness-gate runs on a built library. Where the source comes from and how it is
 * built is the recipe's (recipes/sqlite.json, pgo/recipe.h). Inputs are owned by the caller;
 * strings returned are the caller's to free. */
#ifndef PGOLAB_PGO_SQLITE_BENCH_H
#define PGOLAB_PGO_SQLITE_BENCH_H

#include "toolchain/toolchain.h"
#include "util/strbuf.h"

#include <stdbool.h>

/* SQLITE_VERSION from the text of sqlite3.h; NULL if absent. Caller frees. */
char *sqlite_version_from_header(const char *header_text);

/* One `pgolab bench` child against one library. */
struct sqlite_bench {
    const char *pgolab;          /* the pgolab binary */
    const char *library;         /* --sqlite-library */
    const char *db;              /* --sqlite-db */
    int tables, table_size;      /* --tables, --table-size */
    const char *const *env;      /* extra environment ("NAME=VALUE"), or NULL */
    const char *log;             /* the child's output is appended here */
};

/* Run `pgolab bench --sqlite-library=.. --sqlite-db=.. --tables=.. --table-size=.. ARGS`.
 * With out, the child's stdout is collected there (stderr still goes to the log).
 * -1 with the failing command and the log's tail. */
int sqlite_bench_run(const struct sqlite_bench *b, const char *const *args, struct strbuf *out);

/* Training: prepare (1 thread), then `--time=TIME --threads=THREADS W run` for every training
 * workload, then cleanup, all on b's (instrumented) library; progress shows step k/n. */
int sqlite_train(const struct sqlite_bench *b, char *const *workloads, int nworkloads,
                 double time_s, int threads);

/* Read {"checksum":"<hex>","rows":N,...} (the output of `bench ... verify --format=json`).
 * -1 with a message if it is not that. */
int sqlite_parse_verify(const char *json_text, char **checksum, long long *rows);

/* Correctness gate: prepare fresh data with libs[0] (the baseline) at b->db, then
 * `oltp_read_only verify --format=json` with each of the n libraries; every checksum and row
 * count must match the baseline's, else -1 with "correctness gate failed: baseline checksum X
 * != NAME checksum Y" (names[i] names libs[i]). On success the checksum and row count are
 * returned (caller frees *checksum). */
int sqlite_gate(const struct sqlite_bench *b, const char *const *names, const char *const *libs,
                int n, char **checksum, long long *rows);

/* Remove DB and its -wal/-shm/-journal companions (missing ones are fine). */
void sqlite_remove_db(const char *db);

#endif
