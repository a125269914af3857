/* oltp: the sysbench OLTP workloads (sysbench 1.0.20 oltp_common.lua semantics, our code):
 * schema, parallel prepare, cleanup, statement groups, the workload catalogue, and the fixed
 * query set of the correctness gate. A struct oltp_thread belongs to one worker thread; the
 * options and catalogue are shared read-only. */
#ifndef PGOLAB_OLTP_H
#define PGOLAB_OLTP_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "db/driver.h"
#include "oltp/rand.h"
#include "util/opts.h"
#include "util/strbuf.h"

/* Statement kinds prepared per table (sysbench's stmt_defs). */
enum oltp_stmt {
    ST_POINT,
    ST_SIMPLE_RANGE,
    ST_SUM_RANGE,
    ST_ORDER_RANGE,
    ST_DISTINCT_RANGE,
    ST_INDEX_UPDATE,
    ST_NON_INDEX_UPDATE,
    ST_DELETE,
    ST_INSERT,
    ST_RANDOM_POINTS,  /* select_random_points: k IN (?, ... ?) on sbtest1 */
    ST_RANDOM_RANGES,  /* select_random_ranges: k BETWEEN ? AND ? OR ... on sbtest1 */
    ST_COUNT
};

struct oltp_opts {
    int tables;           /* --tables, default 1 */
    uint32_t table_size;  /* --table-size, default 10000 */
    int point_selects, simple_ranges, sum_ranges, order_ranges, distinct_ranges;
    int index_updates, non_index_updates, delete_inserts;
    uint32_t range_size;  /* --range-size, default 100 */
    bool range_selects, skip_trx, auto_inc, create_secondary;
    int threads;          /* --threads: select_random_* slices, bulk_insert's tables */
    int random_points;    /* --random-points, default 10 (select_random_points) */
    int number_of_ranges; /* --number-of-ranges, default 10 (select_random_ranges) */
    uint32_t delta;       /* --delta, default 5 (select_random_ranges) */
    /* Set by workload fixups: */
    uint32_t prepare_rows;  /* rows prepare inserts per table (table_size; 0 for oltp_insert
                             * with --auto-inc=off, whose ids come from rand_unique) */
    bool bulk_schema;       /* bulk_insert: tables are (id, k) only, one per thread, no data */
    struct rand_config rnd;
    uint64_t seed;        /* --rand-seed (0 = from the clock in run; fixed in prepare) */
    const char *test;     /* the workload's name (static), for messages */
};

struct oltp_thread;

/* One workload of the catalogue. */
struct workload {
    const char *name;
    const char *descr;
    unsigned stmts;  /* bitmask of (1u << enum oltp_stmt) to prepare per table */
    /* Adjust options for this workload (e.g. oltp_point_select: point_selects = 1). */
    void (*fixup)(struct oltp_opts *o);
    /* One event (= transaction). Returns DB_OK or the first error's class. */
    enum db_status (*event)(struct oltp_thread *t);
    /* After the worker's last event, on its thread: send what is buffered (bulk_insert's
     * pending rows). NULL = nothing to do. */
    enum db_status (*finish)(struct oltp_thread *t);
    bool one_table;  /* uses sbtest1 only: --tables must be 1 (select_random_*) */
};

struct oltp_thread {
    struct db_conn *conn;
    const struct oltp_opts *o;
    const struct workload *wl;
    struct rand_state rnd;
    struct db_stmt **stmts;  /* [table * ST_COUNT + kind], tables numbered from 0 */
    int tid;                 /* worker number, 0-based */
    char c[120], pad[60];    /* template buffers */
    struct strbuf bulk;      /* bulk_insert: the multi-row INSERT being built */
    uint64_t bulk_rows;      /* bulk_insert: rows added by this thread (the next id - 1) */
    uint64_t bulk_pending;   /* bulk_insert: rows in bulk, not sent yet */
    /* Events already counted as done whose work a failed statement then lost: bulk_insert's
     * rows in an INSERT that failed for good. The runner takes them off its event count. */
    uint64_t lost_events;
    /* 0, or when (now_ns()) a retried event gives up: set by the runner when no reporter
     * thread stops it at --time (see oltp_event). */
    uint64_t deadline_ns;
};

/* The option table of the OLTP workloads (sysbench names and defaults). */
extern const struct opt_def oltp_options[];

/* The catalogue; NULL when the name is unknown. */
const struct workload *workload_find(const char *name);
/* All workload names, comma-separated (static string). */
const char *workload_names(void);
/* Check a list option of workload names (e.g. --bench): at least one, all known. -1 with a
 * message naming opt and listing the known workloads. */
int workload_check_list(const char *opt, char **list, int n);
/* Catalogue iteration: entries [0, count). */
const struct workload *workload_at(int i, int *count);

/* Read and check options (one-line error, -1 on a bad value), then apply wl->fixup. */
int oltp_opts_load(struct oltp_opts *o, const struct opts *opts, const struct workload *wl);

/* Set (e.g. by a SIGINT handler) to stop a prepare between two bulk INSERTs. */
extern volatile sig_atomic_t oltp_prepare_interrupted;

/* prepare: create and fill tables first, first+step, ... <= tables on connection c (one
 * worker of a parallel prepare, sysbench's striping). Prints sysbench's progress lines on
 * stdout. 0, or -1 (message printed; also when oltp_prepare_interrupted was set: the table
 * being filled is then partial). */
int oltp_prepare_tables(struct db_conn *c, const struct oltp_opts *o, int first, int step);
/* cleanup: DROP TABLE IF EXISTS sbtest1..N. */
int oltp_cleanup(struct db_conn *c, const struct oltp_opts *o);
/* Check that sbtest1..N exist ("table sbtestN does not exist: run prepare first"). */
int oltp_check_tables(struct db_conn *c, const struct oltp_opts *o);

/* prewarm (MySQL only, sysbench's cmd_prewarm): load tables first, first+step, ... into the
 * buffer pool by scanning the primary key and the k index. 0, or -1 (message printed). */
int oltp_prewarm_tables(struct db_conn *c, const struct oltp_opts *o, int first, int step);

/* Per-thread setup for worker tid (0-based): prepare the workload's statements for every
 * table. 0 or -1 (c->err). */
int oltp_thread_init(struct oltp_thread *t, struct db_conn *c, const struct oltp_opts *o,
                     const struct workload *wl, uint64_t seed, int tid);
/* After the last event, on the worker's thread: the workload's finish step (see struct
 * workload). DB_OK or the error class (c->err). */
enum db_status oltp_thread_finish(struct oltp_thread *t);
void oltp_thread_done(struct oltp_thread *t);
/* oltp_event after a first try that failed with st (!= DB_OK): the rollback and the retries. */
enum db_status oltp_event_retry(struct oltp_thread *t, const volatile int *stop,
                                enum db_status st);
/* Run one event, restarting it after a retryable error (rolled back and counted by the
 * wrappers) until it succeeds, a fatal error occurs, *stop becomes true, or t->deadline_ns
 * (when set) has passed. Inline: the runner calls it per event, where a call's cost shows in
 * the measured rate. */
static inline enum db_status oltp_event(struct oltp_thread *t, const volatile int *stop)
{
    t->conn->fault_armed = true;
    enum db_status st = t->wl->event(t);
    if (__builtin_expect(st == DB_OK, 1))
        return DB_OK;
    return oltp_event_retry(t, stop, st);
}

/* The correctness gate's fixed query set (in the SQLite, MySQL/MariaDB or PostgreSQL
 * dialect of the connection's driver): runs it with checksumming on and returns the FNV-1a
 * checksum of every row of every query and the row count. 0 or -1 (message printed). */
int oltp_verify(struct db_conn *c, const struct oltp_opts *o, uint64_t *checksum, uint64_t *rows);

#endif
