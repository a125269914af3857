/* driver: the database driver interface (sysbench's db_driver idea): a const table of
 * operations plus dialect strings. A db_conn is owned by one worker thread; statements belong to
 * the connection that prepared them. Dialect differences live in the drivers, never in
 * workloads. Workloads call the db_* wrappers below, the one place that counts r/w/o. */
#ifndef PGOLAB_DRIVER_H
#define PGOLAB_DRIVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "db/status.h"
#include "util/opts.h"

/* Query classification (sysbench §3): result set -> read; else affected rows > 0 -> write;
 * else other. */
enum db_qclass { DB_READ, DB_WRITE, DB_OTHER };

/* Per-connection counters; the owning worker writes them, the reporter reads them with
 * relaxed atomic loads. */
struct db_counters {
    uint64_t reads, writes, others, errors, reconnects;
};

struct db_stmt;
struct db_driver;

struct db_conn {
    const struct db_driver *drv;
    void *priv;                /* driver state */
    struct db_error err;       /* last error */
    struct db_counters cnt;
    bool create;               /* connect may create the database (prepare only) */
    bool fault_armed;          /* fault injection may hit this event (re-armed per event) */
    bool checksum;             /* fold every fetched value into sum (correctness gate) */
    uint64_t sum;              /* FNV-1a over fetched values when checksum is on */
    uint64_t rows;             /* rows fetched when checksum is on */
};

/* Library facts reported in JSON and used by the isolation test. */
struct db_libinfo {
    const char *product;      /* the client library's name for the banner: "SQLite",
                               * "libmariadb", "libpq" (NULL: the driver's name) */
    const char *path;         /* the library file that was loaded (a client library: the file
                               * the dynamic linker chose for its soname) */
    const char *version;      /* the library's own version, dotted: "3.40.1" (SQLite),
                               * "3.3.20" (libmariadb), "15.18" (libpq); the same format for
                               * every driver, with product in front of it in the banner */
    const char *source_id;    /* build source id (sqlite3_sourceid(), called by us) */
    const char *engine_source_id; /* SELECT sqlite_source_id(): the engine's own answer; it
                                   * differs from source_id if the library's internal calls
                                   * were interposed by another SQLite in the process */
    const char *loaded_from;  /* file that holds the code of a hot function (dladdr) */
    const char *isolation;    /* how it was loaded, e.g. "dlopen(RTLD_LOCAL), the only
                               * SQLite in the process" */
    const char *server;       /* the server connected to, e.g. "MariaDB 10.11.19" (filled by
                               * `bench info` and `run` through server_version; NULL for an
                               * embedded engine or when not connected) */
};

/* A connection's identity on its server: what `--measure=instructions` matches callgrind's
 * per-process and per-thread files to (src/experiment/callgrind_server.h). 0 = none. */
struct db_identity {
    int64_t pid;        /* PostgreSQL: the PID of the backend process serving the connection */
    int64_t conn_id;    /* MariaDB/MySQL: the connection id (CONNECTION_ID()) */
    int64_t os_thread;  /* MariaDB/MySQL: the OS thread id (Linux TID) of the server thread
                         * serving it */
};

struct db_driver {
    const char *name;                  /* --db-driver value */
    const char *descr;
    const struct opt_def *options;     /* driver's options (help and parsing) */
    /* Dialect: the id column definition with and without auto-increment, and what follows
     * the column list of CREATE TABLE (e.g. an engine clause). */
    const char *id_auto_inc, *id_plain, *table_suffix;
    /* How oltp_insert (auto_inc on) asks the server for the next id: the literal to insert
     * into the id column ("0" on MySQL, as sysbench), or NULL to leave the column out
     * (PostgreSQL's SERIAL, SQLite). */
    const char *insert_auto_id;
    /* The engine runs inside this process (SQLite): with one worker the runner then keeps
     * the process single-threaded (no reporter thread, see runner_run). */
    bool in_process;
    /* Process-wide setup from options (load the client library). 0 or -1 (message printed). */
    int (*init)(const struct opts *o);
    void (*done)(void);
    int (*libinfo)(struct db_libinfo *info);
    /* Connect c (c->drv set by caller). 0, or -1 with c->err filled. */
    int (*connect)(struct db_conn *c);
    void (*disconnect)(struct db_conn *c);
    /* The connected server's product and version into buf (n bytes), e.g. "MariaDB 10.11.19",
     * "PostgreSQL 15.20 (Debian 15.20-0+deb12u1)". NULL for embedded engines. */
    void (*server_version)(struct db_conn *c, char *buf, size_t n);
    /* The server's setting `name` (e.g. "max_connections") as text into buf (n bytes): 0, or
     * -1 when unknown. NULL for embedded engines. */
    int (*server_setting)(struct db_conn *c, const char *name, char *buf, size_t n);
    /* The connection's identity on its server into id (PostgreSQL: the backend's PID;
     * MariaDB/MySQL: the connection id and the OS thread serving it). 0, or -1 with c->err
     * filled. NULL for embedded engines. */
    int (*server_identity)(struct db_conn *c, struct db_identity *id);
    /* Prepare sql with '?' placeholders; NULL with c->err filled on failure. */
    struct db_stmt *(*prepare)(struct db_conn *c, const char *sql);
    void (*stmt_close)(struct db_conn *c, struct db_stmt *s);
    /* The text s was prepared from ('?' placeholders): what a fatal error names. */
    const char *(*stmt_sql)(const struct db_stmt *s);
    /* Execute a prepared statement with params, fetch and discard all rows. Returns DB_OK or
     * the error class (c->err filled); sets *cls on success. */
    enum db_status (*execute)(struct db_conn *c, struct db_stmt *s, const struct db_param *p,
                              int np, enum db_qclass *cls);
    /* Execute one SQL text (no parameters) the same way. */
    enum db_status (*query)(struct db_conn *c, const char *sql, enum db_qclass *cls);
    /* Start a transaction; `will_write` lets drivers take the write lock up front. */
    enum db_status (*begin)(struct db_conn *c, bool will_write);
    enum db_status (*commit)(struct db_conn *c);
    /* After an error inside a transaction: roll back (no-op when none is open). */
    void (*rollback)(struct db_conn *c);
};

/* Options every driver honours (bench's "General database options"): --db-ps-mode=auto|disable
 * (server-side prepared statements, or statements sent as text with the parameters inlined by
 * db_sql_expand) and --db-debug (print every statement and error to stderr). */
extern const struct opt_def db_common_options[];

/* Checksum mode (c->checksum, the correctness gate): every driver folds each fetched row the
 * same way, so equal results give equal checksums: db_checksum_value() for each column value
 * in order (v NULL = SQL NULL, folded as "\1NULL"; each value is followed by a NUL byte),
 * then db_checksum_row_end() (folds "\n" and counts c->rows). The hash is FNV-1a 64
 * (Fowler/Noll/Vo; prime 1099511628211), its offset basis set by oltp_verify(). */
void db_checksum_value(struct db_conn *c, const void *v, size_t n);
void db_checksum_row_end(struct db_conn *c);

/* Look a driver up by name; NULL if unknown. */
const struct db_driver *db_driver_find(const char *name);
/* Comma-separated list of compiled-in driver names (static string). */
const char *db_driver_names(void);
/* Every driver's option table, NULL-terminated (for option registration). */
const struct opt_def *const *db_driver_option_tables(int *count);
/* Whether d is an option of a driver other than in_use (e.g. --pgsql-password on SQLite):
 * what a run's JSON leaves out of its options. */
bool db_option_of_other_driver(const struct opt_def *d, const struct db_driver *in_use);

/* Wrappers used by workloads: they count r/w/o and errors in c->cnt. Return DB_OK or the
 * error class; a DB_FATAL one with the statement and its table in c->err (sql, table; BEGIN
 * and COMMIT for db_begin and db_commit). Tests can inject a retryable error into db_execute
 * every N calls with the environment variable PGOLAB_FAULT_RETRY_EVERY=N (read once); at
 * most once per event, so the retried event always completes (the caller re-arms
 * c->fault_armed for each new event).
 * The fault walk's knob PGOLAB_FAULT_AT=N:KIND makes the process's Nth wrapper call (all four
 * wrappers, all threads, counted from 1; the real call is not made) fail once with KIND: retry
 * (DB_RETRY), reconnect (DB_RECONNECT: the connection is left as a successful reconnect would
 * leave it) or fatal (DB_FATAL); the message names the call. PGOLAB_FAULT_AT=count injects
 * nothing and prints "pgolab: N driver calls (PGOLAB_FAULT_AT=count)" on stderr at exit. A
 * malformed value ends the process with one FATAL line (exit 1). */
static inline enum db_status db_execute(struct db_conn *c, struct db_stmt *s,
                                        const struct db_param *p, int np);
enum db_status db_query(struct db_conn *c, const char *sql);
enum db_status db_begin(struct db_conn *c, bool will_write);
enum db_status db_commit(struct db_conn *c);

/* db_execute is inline: a point select's event is one statement, and the wrapper's call
 * cost more than its work. Its parts in driver.c: */
/* Nonzero once both fault knobs have been read and are off (relaxed atomic; set by
 * db_execute_slow): db_execute then skips them. */
extern int db_faults_off;
/* db_execute with the fault knobs (the first calls, and every call while a knob is on). */
enum db_status db_execute_slow(struct db_conn *c, struct db_stmt *s, const struct db_param *p,
                               int np);
/* The counting of a failed execution (st != DB_OK), and a fatal one's statement in c->err.
 * Returns st. */
enum db_status db_execute_failed(struct db_conn *c, struct db_stmt *s, const struct db_param *p,
                                 int np, enum db_status st);

static inline enum db_status db_execute(struct db_conn *c, struct db_stmt *s,
                                        const struct db_param *p, int np)
{
    if (__builtin_expect(!__atomic_load_n(&db_faults_off, __ATOMIC_RELAXED), 0))
        return db_execute_slow(c, s, p, np);
    enum db_qclass cls = DB_OTHER;
    enum db_status st = c->drv->execute(c, s, p, np, &cls);
    if (__builtin_expect(st != DB_OK, 0))
        return db_execute_failed(c, s, p, np, st);
    uint64_t *slot = cls == DB_READ ? &c->cnt.reads : cls == DB_WRITE ? &c->cnt.writes
                                                                       : &c->cnt.others;
    __atomic_store_n(slot, *slot + 1, __ATOMIC_RELAXED);  /* the reporter reads it (relaxed) */
    return DB_OK;
}

#endif
