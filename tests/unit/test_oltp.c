/* Unit tests of the OLTP workloads (src/oltp) through the real SQLite driver (src/db): prepare
 * creates exactly the rows sysbench would, r/w/o classification of one event per workload,
 * read_write keeps the row count, the correctness-gate checksum is stable and data-sensitive,
 * table checks, injected retryable faults (in a re-executed child: the knob is read once per
 * process) and option validation. Everything lives in one mkdtemp directory.
 * This test links the system libsqlite3 for its own checks, so the driver loads its library
 * with PGOLAB_SQLITE_LOAD=dlmopen (set in main); a re-executed child without it shows that the
 * default plain load refuses to run beside another SQLite. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "db/driver.h"
#include "db/sqlite.h"
#include "oltp/oltp.h"
#include "util/fs.h"
#include "util/opts.h"
#include "util/util.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define TABLE_SIZE "500"
#define NROWS 500

/* bench.c keeps its general and rand options static: the same names and defaults. */
static const struct opt_def rand_options[] = {
    { "threads", OPT_INT, "1", "threads" },
    { "rand-type", OPT_STRING, "uniform", "distribution" },
    { "rand-seed", OPT_INT, "0", "seed" },
    { "rand-spec-iter", OPT_INT, "12", "special iterations" },
    { "rand-spec-pct", OPT_DOUBLE, "1", "special pct" },
    { "rand-spec-res", OPT_DOUBLE, "75", "special res" },
    { "rand-pareto-h", OPT_DOUBLE, "0.2", "pareto h" },
    { "rand-zipfian-exp", OPT_DOUBLE, "0.8", "zipfian exp" },
    OPT_END
};

static char *tmpdir;
static char *dbpath;
static struct opts gopts;  /* the options the driver was initialised with */
static const struct db_driver *drv = &sqlite_driver;

/* ---------------------------------------------------------------- helpers */

/* opts over the tables `pgolab bench` registers (rand, oltp, drivers), db in the temp dir,
 * a fixed seed and 500-row tables. */
static void make_opts(struct opts *o, const char *db)
{
    const struct opt_def *tables[OPTS_MAX_TABLES];
    int nt = 0, ndt;
    const struct opt_def *const *dt = db_driver_option_tables(&ndt);
    tables[nt++] = rand_options;
    tables[nt++] = oltp_options;
    for (int i = 0; i < ndt && nt < OPTS_MAX_TABLES; i++)
        tables[nt++] = dt[i];
    opts_init(o, tables, nt);
    if (opts_set(o, "sqlite-db", db) < 0 || opts_set(o, "table-size", TABLE_SIZE) < 0 ||
        opts_set(o, "rand-seed", "7") < 0)
        abort();
}

static void load(struct oltp_opts *oo, const char *wl_name)
{
    const struct workload *wl = workload_find(wl_name);
    assert_non_null(wl);
    assert_int_equal(oltp_opts_load(oo, &gopts, wl), 0);
}

static void conn_open(struct db_conn *c, bool create)
{
    memset(c, 0, sizeof(*c));
    c->drv = drv;
    c->create = create;
    assert_int_equal(drv->connect(c), 0);
}

/* Drop sbtest1..2 and prepare 1 table x 500 rows. */
static void fresh_db(void)
{
    struct oltp_opts o;
    struct db_conn c;
    load(&o, "oltp_read_write");
    conn_open(&c, true);
    o.tables = 2;
    assert_int_equal(oltp_cleanup(&c, &o), 0);
    o.tables = 1;
    assert_int_equal(oltp_prepare_tables(&c, &o, 1, 1), 0);
    drv->disconnect(&c);
}

/* Rows returned by sql on a second connection (checksum on counts them). */
static uint64_t rows_of(const char *sql)
{
    struct db_conn c;
    conn_open(&c, false);
    c.checksum = true;
    c.rows = 0;
    enum db_status st = db_query(&c, sql);
    if (st != DB_OK)
        fail_msg("%s: %s (code %d)", sql, c.err.msg, c.err.code);
    uint64_t n = c.rows;
    assert_int_equal(c.cnt.reads, 1); /* a result set is a read */
    drv->disconnect(&c);
    return n;
}

/* One event of wl on a fresh connection; returns the counters. */
static struct db_counters one_event(const char *wl_name)
{
    struct oltp_opts o;
    struct oltp_thread t;
    struct db_conn c;
    volatile int stop = 0;
    load(&o, wl_name);
    conn_open(&c, false);
    assert_int_equal(oltp_thread_init(&t, &c, &o, workload_find(wl_name), 42, 0), 0);
    memset(&c.cnt, 0, sizeof(c.cnt));
    assert_int_equal(oltp_event(&t, &stop), DB_OK);
    struct db_counters cnt = c.cnt;
    oltp_thread_done(&t);
    drv->disconnect(&c);
    return cnt;
}

static int group_setup(void **state)
{
    (void)state;
    tmpdir = xstrdup("/tmp/pgolab-oltp.XXXXXX");
    if (!mkdtemp(tmpdir))
        return -1;
    dbpath = path_join(tmpdir, "sbtest.db");
    make_opts(&gopts, dbpath);
    return drv->init(&gopts);
}

static int group_teardown(void **state)
{
    (void)state;
    drv->done();
    opts_release(&gopts);
    remove_tree(tmpdir);
    free(dbpath);
    free(tmpdir);
    return 0;
}

/* ---------------------------------------------------------------- tests */

static void test_prepare_rows(void **state)
{
    (void)state;
    fresh_db();
    assert_int_equal(rows_of("SELECT id FROM sbtest1"), NROWS);
    assert_int_equal(rows_of("SELECT 1 FROM (SELECT count(DISTINCT id) n, min(id) lo, max(id) hi "
                             "FROM sbtest1) WHERE n = 500 AND lo = 1 AND hi = 500"), 1);
    assert_int_equal(rows_of("SELECT 1 FROM sbtest1 WHERE k < 1 OR k > 500"), 0);
    assert_int_equal(rows_of("SELECT 1 FROM sbtest1 WHERE length(c) <> 119 OR length(pad) <> 59"), 0);
    assert_int_equal(rows_of("SELECT 1 FROM sqlite_master WHERE name = 'k_1' AND type = 'index'"), 1);

    /* The same facts read with the system SQLite directly (no driver connection is open). */
    sqlite3 *db;
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_open_v2(dbpath, &db, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, "SELECT count(*), min(id), max(id), min(k), max(k), "
                                            "count(DISTINCT k) FROM sbtest1", -1, &st, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int64(st, 0), NROWS);
    assert_int_equal(sqlite3_column_int64(st, 1), 1);
    assert_int_equal(sqlite3_column_int64(st, 2), NROWS);
    assert_true(sqlite3_column_int64(st, 3) >= 1);
    assert_true(sqlite3_column_int64(st, 4) <= NROWS);
    assert_true(sqlite3_column_int64(st, 5) > 100); /* uniform k: many distinct values */
    sqlite3_finalize(st);
    sqlite3_close(db);
}

static void test_classify_read_write(void **state)
{
    (void)state;
    fresh_db();
    struct db_counters c = one_event("oltp_read_write");
    assert_int_equal(c.reads, 14);
    assert_int_equal(c.writes, 4);
    assert_int_equal(c.others, 2);
    assert_int_equal(c.errors, 0);
    assert_int_equal(c.reconnects, 0);
}

static void test_classify_read_only(void **state)
{
    (void)state;
    struct db_counters c = one_event("oltp_read_only");
    assert_int_equal(c.reads, 14);
    assert_int_equal(c.writes, 0);
    assert_int_equal(c.others, 2);
    assert_int_equal(c.errors, 0);
}

static void test_classify_point_select(void **state)
{
    (void)state;
    struct db_counters c = one_event("oltp_point_select");
    assert_int_equal(c.reads, 1);
    assert_int_equal(c.writes, 0);
    assert_int_equal(c.others, 0);
    assert_int_equal(c.errors, 0);
}

/* The other sysbench workloads, one event each: reads/writes/others as sysbench counts them
 * (reference/sysbench.md §3 catalogue). */
static void test_classify_other_workloads(void **state)
{
    (void)state;
    static const struct {
        const char *wl;
        uint64_t r, w, o;
    } want[] = {
        { "oltp_update_index", 0, 1, 0 },     { "oltp_update_non_index", 0, 1, 0 },
        { "oltp_delete", 0, 1, 0 },           { "oltp_insert", 0, 1, 0 },
        { "select_random_points", 1, 0, 0 },  { "select_random_ranges", 1, 0, 0 },
    };
    fresh_db();
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        struct db_counters c = one_event(want[i].wl);
        print_message("%s: %llu/%llu/%llu\n", want[i].wl, (unsigned long long)c.reads,
                      (unsigned long long)c.writes, (unsigned long long)c.others);
        assert_int_equal(c.reads, want[i].r);
        assert_int_equal(c.writes, want[i].w);
        assert_int_equal(c.others, want[i].o);
        assert_int_equal(c.errors, 0);
    }
}

/* oltp_delete on an emptied table: the DELETE matches nothing and counts as "other". */
static void test_delete_of_missing_row_is_other(void **state)
{
    (void)state;
    fresh_db();
    struct db_conn c;
    conn_open(&c, false);
    assert_int_equal(db_query(&c, "DELETE FROM sbtest1"), DB_OK);
    drv->disconnect(&c);
    struct db_counters cnt = one_event("oltp_delete");
    assert_int_equal(cnt.writes, 0);
    assert_int_equal(cnt.others, 1);
}

static int64_t count_rows(const char *sql)
{
    sqlite3 *db;
    sqlite3_stmt *st;
    int64_t n = -1;
    assert_int_equal(sqlite3_open(dbpath, &db), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    if (sqlite3_step(st) == SQLITE_ROW)
        n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return n;
}

/* oltp_insert: the table grows by one row per event, with a server-assigned id (auto_inc). */
static void test_insert_adds_rows(void **state)
{
    (void)state;
    fresh_db();
    for (int i = 0; i < 3; i++)
        one_event("oltp_insert");
    assert_int_equal(count_rows("SELECT count(*) FROM sbtest1"), NROWS + 3);
    assert_int_equal(count_rows("SELECT max(id) FROM sbtest1"), NROWS + 3);
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* rand_unique: distinct values (it is a bijection of a counter). */
static void test_rand_unique_distinct(void **state)
{
    (void)state;
    enum { N = 100000 };
    uint32_t *v = malloc(N * sizeof(*v));
    rand_unique_seed(12345);
    for (int i = 0; i < N; i++)
        v[i] = rand_unique();
    qsort(v, N, sizeof(*v), cmp_u32);
    for (int i = 1; i < N; i++)
        assert_true(v[i] != v[i - 1]);
    /* not just a counter: consecutive calls are far apart */
    rand_unique_seed(0);
    uint32_t a = rand_unique(), b = rand_unique();
    assert_true((a > b ? a - b : b - a) > 1000);
    free(v);
}

/* bulk_insert: events buffer rows; finish sends them; rows = events, ids 1..n. */
static void test_bulk_insert_finish(void **state)
{
    (void)state;
    struct oltp_opts o;
    struct oltp_thread t;
    struct db_conn c;
    volatile int stop = 0;
    const struct workload *wl = workload_find("bulk_insert");
    load(&o, "bulk_insert");
    assert_int_equal(o.tables, 1);  /* one table per thread; --threads=1 */
    conn_open(&c, false);
    assert_int_equal(db_query(&c, "DROP TABLE IF EXISTS sbtest1"), DB_OK);
    assert_int_equal(oltp_prepare_tables(&c, &o, 1, 1), 0);
    assert_int_equal(oltp_thread_init(&t, &c, &o, wl, 1, 0), 0);
    memset(&c.cnt, 0, sizeof(c.cnt));
    for (int i = 0; i < 40000; i++)  /* ~ 2 full 512 KiB statements */
        assert_int_equal(oltp_event(&t, &stop), DB_OK);
    uint64_t sent = c.cnt.writes;
    assert_true(sent >= 1);
    assert_int_equal(oltp_thread_finish(&t), DB_OK);
    assert_int_equal(c.cnt.writes, sent + 1);
    oltp_thread_done(&t);
    drv->disconnect(&c);
    assert_int_equal(count_rows("SELECT count(*) FROM sbtest1"), 40000);
    assert_int_equal(count_rows("SELECT max(id) FROM sbtest1"), 40000);
    fresh_db();
}

static void test_read_write_keeps_rows(void **state)
{
    (void)state;
    struct oltp_opts o;
    struct oltp_thread t;
    struct db_conn c;
    volatile int stop = 0;
    fresh_db();
    load(&o, "oltp_read_write");
    conn_open(&c, false);
    assert_int_equal(oltp_thread_init(&t, &c, &o, workload_find("oltp_read_write"), 99, 0), 0);
    memset(&c.cnt, 0, sizeof(c.cnt));
    for (int i = 0; i < 50; i++)
        assert_int_equal(oltp_event(&t, &stop), DB_OK);
    assert_int_equal(c.cnt.reads, 50 * 14);
    assert_int_equal(c.cnt.writes, 50 * 4);
    assert_int_equal(c.cnt.others, 50 * 2);
    assert_int_equal(c.cnt.errors, 0);
    oltp_thread_done(&t);
    drv->disconnect(&c);
    assert_int_equal(rows_of("SELECT id FROM sbtest1"), NROWS);
    assert_int_equal(rows_of("SELECT 1 FROM (SELECT min(id) lo, max(id) hi FROM sbtest1) "
                             "WHERE lo = 1 AND hi = 500"), 1);
}

static void test_verify_checksum(void **state)
{
    (void)state;
    struct oltp_opts o;
    struct db_conn c;
    uint64_t s1, r1, s2, r2, s3, r3;
    fresh_db();
    load(&o, "oltp_read_write");
    conn_open(&c, false);
    assert_int_equal(oltp_verify(&c, &o, &s1, &r1), 0);
    assert_false(c.checksum); /* switched off again */
    assert_true(r1 > NROWS);
    assert_int_equal(oltp_verify(&c, &o, &s2, &r2), 0);
    assert_int_equal(s1, s2);
    assert_int_equal(r1, r2);
    /* verify's writes were rolled back */
    assert_int_equal(rows_of("SELECT id FROM sbtest1"), NROWS);
    assert_int_equal(db_query(&c, "UPDATE sbtest1 SET k = k + 1 WHERE id = 7"), DB_OK);
    assert_int_equal(oltp_verify(&c, &o, &s3, &r3), 0);
    assert_true(s3 != s1);
    drv->disconnect(&c);
}

static void test_check_tables(void **state)
{
    (void)state;
    struct oltp_opts o;
    struct db_conn c;
    fresh_db();
    load(&o, "oltp_read_write");
    conn_open(&c, false);
    o.tables = 1;
    assert_int_equal(oltp_check_tables(&c, &o), 0);
    o.tables = 2;
    assert_int_equal(oltp_check_tables(&c, &o), -1);
    /* cleanup drops it; then even tables=1 fails */
    assert_int_equal(oltp_cleanup(&c, &o), 0);
    o.tables = 1;
    assert_int_equal(oltp_check_tables(&c, &o), -1);
    drv->disconnect(&c);
}

/* The fault child: run events with PGOLAB_FAULT_RETRY_EVERY set (by the parent, before the
 * process's first db_execute). Exit 0 when every event completed and errors were counted. */
static int fault_child(const char *db)
{
    struct opts opts;
    struct oltp_opts o;
    struct oltp_thread t;
    struct db_conn c = { .drv = drv };
    volatile int stop = 0;
    const struct workload *wl = workload_find("oltp_read_write");
    make_opts(&opts, db);
    if (oltp_opts_load(&o, &opts, wl) < 0 || drv->init(&opts) < 0 || drv->connect(&c) < 0)
        return 10;
    if (oltp_thread_init(&t, &c, &o, wl, 5, 0) < 0)
        return 11;
    memset(&c.cnt, 0, sizeof(c.cnt));
    for (int i = 0; i < 20; i++)
        if (oltp_event(&t, &stop) != DB_OK)
            return 12;
    fprintf(stderr, "fault child: reads %llu writes %llu others %llu errors %llu\n",
            (unsigned long long)c.cnt.reads, (unsigned long long)c.cnt.writes,
            (unsigned long long)c.cnt.others, (unsigned long long)c.cnt.errors);
    if (c.cnt.errors == 0)
        return 13;
    /* retried events are re-run whole: at least the clean counts */
    if (c.cnt.writes < 20 * 4 || c.cnt.reads < 20 * 14)
        return 14;
    oltp_thread_done(&t);
    c.checksum = true;
    c.rows = 0;
    if (db_query(&c, "SELECT id FROM sbtest1") != DB_OK || c.rows != NROWS)
        return 15;
    drv->disconnect(&c);
    drv->done();
    opts_release(&opts);
    return 0;
}

static void test_fault_injection(void **state)
{
    (void)state;
    fresh_db();
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        /* A fresh image: the knob is read once per process, the parent may have read it. */
        setenv("PGOLAB_FAULT_RETRY_EVERY", "5", 1);
        execl("/proc/self/exe", "test_oltp", "--fault-child", dbpath, (char *)NULL);
        _exit(127);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

/* The child of test_refuses_beside_another_sqlite: the default load must fail, since this
 * process links the system SQLite. */
static int alone_child(const char *db)
{
    struct opts opts;
    make_opts(&opts, db);
    int rc = drv->init(&opts);
    opts_release(&opts);
    return rc == -1 ? 0 : 1;
}

static void test_refuses_beside_another_sqlite(void **state)
{
    (void)state;
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        unsetenv("PGOLAB_SQLITE_LOAD");
        execl("/proc/self/exe", "test_oltp", "--alone-child", dbpath, (char *)NULL);
        _exit(127);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

static void test_opts_load(void **state)
{
    (void)state;
    struct opts opts;
    struct oltp_opts o;
    const struct workload *rw = workload_find("oltp_read_write");
    const struct workload *ps = workload_find("oltp_point_select.lua");
    assert_non_null(rw);
    assert_non_null(ps);
    assert_null(workload_find("oltp_nope"));

    make_opts(&opts, dbpath);
    assert_int_equal(oltp_opts_load(&o, &opts, rw), 0);
    assert_int_equal(o.tables, 1);
    assert_int_equal(o.table_size, NROWS);
    assert_int_equal(o.point_selects, 10);
    assert_int_equal(o.range_size, 100);
    assert_true(o.range_selects);
    assert_false(o.skip_trx);
    assert_int_equal(o.rnd.type, RAND_UNIFORM);
    assert_int_equal(o.seed, 7);
    assert_int_equal(oltp_opts_load(&o, &opts, ps), 0);
    assert_int_equal(o.point_selects, 1); /* fixup */

    assert_int_equal(opts_set(&opts, "tables", "0"), 0);
    assert_int_equal(oltp_opts_load(&o, &opts, rw), -1);
    assert_int_equal(opts_set(&opts, "tables", "1"), 0);
    assert_int_equal(oltp_opts_load(&o, &opts, rw), 0);

    assert_int_equal(opts_set(&opts, "rand-type", "foo"), 0);
    assert_int_equal(oltp_opts_load(&o, &opts, rw), -1);
    assert_int_equal(opts_set(&opts, "rand-type", "zipfian"), 0);
    assert_int_equal(oltp_opts_load(&o, &opts, rw), 0);
    assert_int_equal(o.rnd.type, RAND_ZIPFIAN);

    assert_int_equal(opts_set(&opts, "table-size", "0"), 0);
    assert_int_equal(oltp_opts_load(&o, &opts, rw), -1);
    assert_int_equal(opts_set(&opts, "table-size", TABLE_SIZE), 0);
    assert_int_equal(opts_set(&opts, "rand-pareto-h", "1.5"), 0);
    assert_int_equal(oltp_opts_load(&o, &opts, rw), -1);
    opts_release(&opts);
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--alone-child"))
        return alone_child(argv[2]);
    setenv("PGOLAB_SQLITE_LOAD", "dlmopen", 1); /* see the top of this file */
    if (argc == 3 && !strcmp(argv[1], "--fault-child"))
        return fault_child(argv[2]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_prepare_rows),
        cmocka_unit_test(test_classify_read_write),
        cmocka_unit_test(test_classify_read_only),
        cmocka_unit_test(test_classify_point_select),
        cmocka_unit_test(test_classify_other_workloads),
        cmocka_unit_test(test_delete_of_missing_row_is_other),
        cmocka_unit_test(test_insert_adds_rows),
        cmocka_unit_test(test_rand_unique_distinct),
        cmocka_unit_test(test_bulk_insert_finish),
        cmocka_unit_test(test_read_write_keeps_rows),
        cmocka_unit_test(test_verify_checksum),
        cmocka_unit_test(test_check_tables),
        cmocka_unit_test(test_fault_injection),
        cmocka_unit_test(test_refuses_beside_another_sqlite),
        cmocka_unit_test(test_opts_load),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
