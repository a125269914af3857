/* sqlite: the SQLite PGO target: find or fetch the source, build the amalgamation, the compile
 * command of libsqlite3.so per phase, and the training and correctness-gate runs of
 * `pgolab bench`. Inputs are owned by the caller; strings returned are the caller's to free. */
#ifndef PGOLAB_BUILD_SQLITE_H
#define PGOLAB_BUILD_SQLITE_H

#include "build/build.h"
#include "util/strbuf.h"

#include <stdbool.h>

enum sqlite_source_kind {
    SQLITE_SRC_NONE,          /* not SQLite source */
    SQLITE_SRC_TREE,          /* canonical tree: src/sqliteInt.h and tool/mksqlite3c.tcl */
    SQLITE_SRC_AMALGAMATION,  /* a directory holding sqlite3.c and sqlite3.h */
};

/* What kind of SQLite source dir holds (a tree wins over an amalgamation). */
enum sqlite_source_kind sqlite_source_kind(const char *dir);

/* Resolve --source to an absolute, validated directory. source NULL: reuse an unpacked
 * WORKDIR/src/sqlite3-* tree (the newest version) or run `apt-get source sqlite3` there
 * (log: WORKDIR/src/apt-get-source.log). A directory is checked as it is; a file is unpacked
 * with `tar -xf` into WORKDIR/src/tarball-KEY (once) and the tree is looked for there and one
 * level below. -1 with a one-line message (e.g. "--source=/x: not a SQLite source tree (no
 * src/sqliteInt.h or sqlite3.c)"). */
int sqlite_source_resolve(const char *source, const char *workdir, char **dir,
                          enum sqlite_source_kind *kind);

struct sqlite_amalgamation {
    char *dir;       /* directory with sqlite3.c and sqlite3.h */
    char *sqlite3_c; /* dir/sqlite3.c */
    char *version;   /* SQLITE_VERSION from sqlite3.h, e.g. "3.40.1" (or "unknown") */
    bool cached;     /* reused, not built now */
    double seconds;  /* build wall time */
};

/* The amalgamation of a source dir: an amalgamation dir is used as it is; a tree is built once
 * out of tree in WORKDIR/amalg-KEY (KEY from the tree's path): `configure` then
 * `make sqlite3.c` (log: build.log there; needs tclsh unless the tree bundles jimsh).
 * force rebuilds. -1 with a message. */
int sqlite_amalgamation_build(const char *src, enum sqlite_source_kind kind, const char *workdir,
                              bool force, struct sqlite_amalgamation *out);
void sqlite_amalgamation_release(struct sqlite_amalgamation *a);

/* SQLITE_VERSION from the text of sqlite3.h; NULL if absent. Caller frees. */
char *sqlite_version_from_header(const char *header_text);

/* The output name of every library build (relative to its build dir). */
#define SQLITE_LIB_NAME "libsqlite3.so"

/* Append the command that compiles sqlite3_c into SQLITE_LIB_NAME in the current directory:
 * CC CFLAGS -fPIC -shared -DSQLITE_THREADSAFE=1 -DNDEBUG -Wl,-Bsymbolic <phase flags>
 * -o libsqlite3.so SQLITE3_C -lpthread -lm -ldl. Identical across phases except the PGO flags.
 * -1 with a message when the phase's paths are missing. */
int sqlite_lib_argv(struct argvec *out, const char *cc, enum cc_family family, const char *cflags,
                    enum build_phase phase, const struct pgo_paths *paths, const char *sqlite3_c);

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

/* Correctness gate: prepare fresh data with the baseline library at b->db, then
 * `oltp_read_only verify --format=json` with each library; the checksums must match, else
 * -1 with "correctness gate failed: baseline checksum X != pgo checksum Y". On success the
 * checksum and row count are returned (caller frees *checksum). */
int sqlite_gate(const struct sqlite_bench *b, const char *baseline_lib, const char *pgo_lib,
                char **checksum, long long *rows);

/* Remove DB and its -wal/-shm/-journal companions (missing ones are fine). */
void sqlite_remove_db(const char *db);

#endif
