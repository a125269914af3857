/* oltp: sysbench OLTP schema, prepare/cleanup, statement groups and the correctness gate's
 * query set (see oltp.h). Statement texts, per-transaction counts and order, and the table/id
 * choice granularity follow sysbench 1.0.20's oltp_common.lua (reference/sysbench.md §2-3). */
#include "oltp/oltp.h"
#include "db/stmt_text.h"
#include "oltp/loaded.h"
#include "util/strbuf.h"
#include "util/util.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* c: 10 groups of 11 digits joined by '-' (119 chars); pad: 5 groups (59 chars). */
#define C_TEMPLATE                                                                              \
    "###########-###########-###########-###########-###########-###########-###########-"       \
    "###########-###########-###########"
#define PAD_TEMPLATE "###########-###########-###########-###########-###########"
#define C_LEN (sizeof(C_TEMPLATE) - 1)
#define PAD_LEN (sizeof(PAD_TEMPLATE) - 1)
/* sysbench flushes a multi-row INSERT when the next tuple would overflow 512 KiB. */
#define BULK_INSERT_BYTES (512 * 1024)

const struct opt_def oltp_options[] = {
    { "tables", OPT_INT, "1", "Number of tables" },
    { "table-size", OPT_INT, "10000", "Number of rows per table" },
    { "point-selects", OPT_INT, "10", "Number of point SELECT queries per transaction" },
    { "simple-ranges", OPT_INT, "1", "Number of simple range SELECT queries per transaction" },
    { "sum-ranges", OPT_INT, "1", "Number of SELECT SUM() queries per transaction" },
    { "order-ranges", OPT_INT, "1", "Number of SELECT ORDER BY queries per transaction" },
    { "distinct-ranges", OPT_INT, "1", "Number of SELECT DISTINCT queries per transaction" },
    { "index-updates", OPT_INT, "1", "Number of UPDATE index queries per transaction" },
    { "non-index-updates", OPT_INT, "1", "Number of UPDATE non-index queries per transaction" },
    { "delete-inserts", OPT_INT, "1", "Number of DELETE/INSERT combinations per transaction" },
    { "range-size", OPT_INT, "100", "Range size for range SELECT queries" },
    { "range-selects", OPT_BOOL, "on", "Enable/disable all range SELECT queries" },
    { "skip-trx", OPT_BOOL, "off",
      "Don't start explicit transactions and execute all queries in the AUTOCOMMIT mode" },
    { "auto-inc", OPT_BOOL, "on",
      "Use AUTO_INCREMENT column as Primary Key (for MySQL), or its alternatives in other DBMS. "
      "When disabled, use client-generated IDs" },
    { "create-secondary", OPT_BOOL, "on",
      "Create a secondary index in addition to the PRIMARY KEY" },
    { "random-points", OPT_INT, "10",
      "Number of random points in the IN() clause in generic SELECTs (select_random_points)" },
    { "number-of-ranges", OPT_INT, "10",
      "Number of random BETWEEN ranges per SELECT (select_random_ranges)" },
    { "delta", OPT_INT, "5", "Size of BETWEEN ranges (select_random_ranges)" },
    OPT_END
};

static const char *const stmt_sql[ST_COUNT] = {
    [ST_POINT] = "SELECT c FROM sbtest%d WHERE id=?",
    [ST_SIMPLE_RANGE] = "SELECT c FROM sbtest%d WHERE id BETWEEN ? AND ?",
    [ST_SUM_RANGE] = "SELECT SUM(k) FROM sbtest%d WHERE id BETWEEN ? AND ?",
    [ST_ORDER_RANGE] = "SELECT c FROM sbtest%d WHERE id BETWEEN ? AND ? ORDER BY c",
    [ST_DISTINCT_RANGE] = "SELECT DISTINCT c FROM sbtest%d WHERE id BETWEEN ? AND ? ORDER BY c",
    [ST_INDEX_UPDATE] = "UPDATE sbtest%d SET k=k+1 WHERE id=?",
    [ST_NON_INDEX_UPDATE] = "UPDATE sbtest%d SET c=? WHERE id=?",
    [ST_DELETE] = "DELETE FROM sbtest%d WHERE id=?",
    [ST_INSERT] = "INSERT INTO sbtest%d (id, k, c, pad) VALUES (?, ?, ?, ?)",
};

static int get_opt_int(const struct opts *opts, const char *name, int64_t min, int64_t max,
                       int64_t *out)
{
    int64_t v = opt_int(opts, name);
    if (v < min || v > max)
        return error("--%s=%lld: expected an integer in %lld..%lld", name, (long long)v,
                     (long long)min, (long long)max);
    *out = v;
    return 0;
}

int oltp_opts_load(struct oltp_opts *o, const struct opts *opts, const struct workload *wl)
{
    static const struct {
        const char *name;
        size_t off;
        int64_t min, max;
    } ints[] = {
        { "tables", offsetof(struct oltp_opts, tables), 1, 100000 },
        { "point-selects", offsetof(struct oltp_opts, point_selects), 0, 1000000 },
        { "simple-ranges", offsetof(struct oltp_opts, simple_ranges), 0, 1000000 },
        { "sum-ranges", offsetof(struct oltp_opts, sum_ranges), 0, 1000000 },
        { "order-ranges", offsetof(struct oltp_opts, order_ranges), 0, 1000000 },
        { "distinct-ranges", offsetof(struct oltp_opts, distinct_ranges), 0, 1000000 },
        { "index-updates", offsetof(struct oltp_opts, index_updates), 0, 1000000 },
        { "non-index-updates", offsetof(struct oltp_opts, non_index_updates), 0, 1000000 },
        { "delete-inserts", offsetof(struct oltp_opts, delete_inserts), 0, 1000000 },
        { "threads", offsetof(struct oltp_opts, threads), 1, 100000 },
        { "random-points", offsetof(struct oltp_opts, random_points), 1, 10000 },
        { "number-of-ranges", offsetof(struct oltp_opts, number_of_ranges), 1, 10000 },
    };
    int64_t v = 0;
    memset(o, 0, sizeof(*o));
    for (size_t i = 0; i < ARRAY_SIZE(ints); i++) {
        if (get_opt_int(opts, ints[i].name, ints[i].min, ints[i].max, &v) < 0)
            return -1;
        *(int *)((char *)o + ints[i].off) = (int)v;
    }
    /* All ids are 32-bit, as in sysbench (§10.9). */
    if (get_opt_int(opts, "table-size", 1, 2147483647, &v) < 0)
        return -1;
    o->table_size = (uint32_t)v;
    if (get_opt_int(opts, "range-size", 1, 2147483647, &v) < 0)
        return -1;
    o->range_size = (uint32_t)v;
    if (get_opt_int(opts, "delta", 0, 2147483647, &v) < 0)
        return -1;
    o->delta = (uint32_t)v;
    o->prepare_rows = o->table_size;
    o->test = wl ? wl->name : NULL;
    o->range_selects = opt_bool(opts, "range-selects");
    o->skip_trx = opt_bool(opts, "skip-trx");
    o->auto_inc = opt_bool(opts, "auto-inc");
    o->create_secondary = opt_bool(opts, "create-secondary");

    rand_config_default(&o->rnd);
    if (rand_type_parse(opt_str(opts, "rand-type"), &o->rnd.type) < 0)
        return error("--rand-type=%s: unknown distribution (expected uniform, gaussian, special, "
                     "pareto or zipfian)", opt_str(opts, "rand-type"));
    if (get_opt_int(opts, "rand-spec-iter", 1, 1000, &v) < 0)
        return -1;
    o->rnd.spec_iter = (int)v;
    o->rnd.spec_pct = opt_double(opts, "rand-spec-pct");
    o->rnd.spec_res = opt_double(opts, "rand-spec-res");
    o->rnd.pareto_h = opt_double(opts, "rand-pareto-h");
    o->rnd.zipf_exp = opt_double(opts, "rand-zipfian-exp");
    if (o->rnd.spec_pct < 0 || o->rnd.spec_pct > 100 || o->rnd.spec_res < 0 ||
        o->rnd.spec_res > 100)
        return error("--rand-spec-pct and --rand-spec-res are percentages: expected 0..100");
    if (o->rnd.pareto_h <= 0 || o->rnd.pareto_h >= 1)
        return error("--rand-pareto-h=%g: expected a number between 0 and 1", o->rnd.pareto_h);
    if (o->rnd.zipf_exp < 0)
        return error("--rand-zipfian-exp=%g: expected a number >= 0", o->rnd.zipf_exp);
    if (get_opt_int(opts, "rand-seed", 0, INT64_MAX, &v) < 0)
        return -1;
    o->seed = (uint64_t)v;
    if (wl && wl->one_table && o->tables != 1)
        return error("--tables=%d: %s uses sbtest1 only (expected --tables=1)", o->tables,
                     wl->name);
    if (wl && wl->fixup)
        wl->fixup(o);
    return 0;
}

/* ---- prepare / cleanup ---- */

/* Run one statement; on failure name it by its first line, at most 60 characters (a bulk
 * INSERT is half a megabyte). */
/* The one line of a failed sql: the statement, the server's message and code, and hint
 * (NULL for none). */
static void sql_failed(const struct db_conn *c, const char *sql, const char *hint)
{
    size_t len = strcspn(sql, "\n");
    char code[24] = "";
    if (c->err.code)  /* PostgreSQL has none: its message carries the SQLSTATE */
        snprintf(code, sizeof(code), " (code %d)", c->err.code);
    error("%.*s%s failed: %s%s%s", (int)(len > 60 ? 60 : len), sql,
          len > 60 || sql[len] ? "..." : "", c->err.msg, code, hint ? hint : "");
}

static enum db_status exec_sql(struct db_conn *c, const char *sql)
{
    enum db_status st = db_query(c, sql);
    if (st != DB_OK)
        sql_failed(c, sql, NULL);
    return st;
}

/* Print sysbench's progress line "WHAT 'sbtestN'..." and run sql, which it frees. -1 when the
 * statement failed (exec_sql printed why). */
static int exec_announced(struct db_conn *c, const char *what, int n, char *sql)
{
    enum db_status st;
    printf("%s 'sbtest%d'...\n", what, n);
    fflush(stdout);
    st = exec_sql(c, sql);
    free(sql);
    return st == DB_OK ? 0 : -1;
}

/* "already exists" is how SQLite, MariaDB/MySQL (1050) and PostgreSQL (42P07) all say it. */
static bool table_exists_error(const struct db_conn *c)
{
    return strstr(c->err.msg, "already exists") != NULL;
}

static int create_table(struct db_conn *c, const struct oltp_opts *o, int n)
{
    const struct db_driver *d = c->drv;
    /* bulk_insert's own table (sysbench's bulk_insert.lua: no engine clause, no data). */
    char *sql = o->bulk_schema
        ? xasprintf("CREATE TABLE IF NOT EXISTS sbtest%d (\n  id INTEGER NOT NULL,\n"
                    "  k INTEGER DEFAULT '0' NOT NULL,\n  PRIMARY KEY (id))", n)
        : xasprintf("CREATE TABLE sbtest%d(\n  id %s,\n  k INTEGER DEFAULT '0' NOT NULL,\n"
                          "  c CHAR(120) DEFAULT '' NOT NULL,\n  pad CHAR(60) DEFAULT '' NOT "
                          "NULL,\n"
                          "  PRIMARY KEY (id)\n) %s",
                          n, o->auto_inc ? d->id_auto_inc : d->id_plain, d->table_suffix);
    printf("Creating table 'sbtest%d'...\n", n);
    fflush(stdout);
    enum db_status st = db_query(c, sql);
    if (st != DB_OK) {
        char *hint = table_exists_error(c)
            ? xasprintf("; run `pgolab bench %s cleanup` with the same options first",
                        o->test ? o->test : "TESTNAME")
            : NULL;
        sql_failed(c, sql, hint);
        free(hint);
    }
    free(sql);
    return st == DB_OK ? 0 : -1;
}

volatile sig_atomic_t oltp_prepare_interrupted;

static int fill_table(struct db_conn *c, const struct oltp_opts *o, int n, struct rand_state *r)
{
    struct strbuf sql = STRBUF_INIT;
    char head[64], cbuf[C_LEN], padbuf[PAD_LEN];
    size_t head_len;
    unsigned batch = 0; /* rows in the INSERT being built */
    int rc = 0;

    if (!o->prepare_rows)
        return 0;
    printf("Inserting %u records into 'sbtest%d'\n", o->prepare_rows, n);
    fflush(stdout);
    if (o->auto_inc)
        head_len = (size_t)snprintf(head, sizeof(head), "INSERT INTO sbtest%d(k, c, pad) "
                                                        "VALUES", n);
    else
        head_len = (size_t)snprintf(head, sizeof(head), "INSERT INTO sbtest%d(id, k, c, pad) "
                                                        "VALUES", n);
    /* Each multi-row INSERT is one statement and so one (autocommit) transaction; tables
     * loaded by parallel workers interleave batch by batch instead of holding the write lock
     * for a whole table. */
    strbuf_init(&sql, BULK_INSERT_BYTES + 256);
    for (uint32_t i = 1; i <= o->prepare_rows; i++) {
        char tuple[256];
        uint32_t k = rand_default(r, &o->rnd, 1, o->table_size);
        int len;
        rand_template(r, C_TEMPLATE, cbuf, C_LEN);
        rand_template(r, PAD_TEMPLATE, padbuf, PAD_LEN);
        if (o->auto_inc)
            len = snprintf(tuple, sizeof(tuple), "(%u, '%.*s', '%.*s')", k, (int)C_LEN, cbuf,
                           (int)PAD_LEN, padbuf);
        else
            len = snprintf(tuple, sizeof(tuple), "(%u, %u, '%.*s', '%.*s')", i, k, (int)C_LEN, cbuf,
                           (int)PAD_LEN, padbuf);
        if (sql.len && sql.len + 1 + (size_t)len > BULK_INSERT_BYTES) {
            if (oltp_prepare_interrupted) {
                error("prepare interrupted while filling 'sbtest%d' (%u of %u rows): run cleanup "
                      "before the next prepare", n, i - 1, o->prepare_rows);
                goto fail;
            }
            if (exec_sql(c, sql.buf) != DB_OK)
                goto fail;
            oltp_loaded_add(batch);
            batch = 0;
            strbuf_reset(&sql);
        }
        if (!sql.len)
            strbuf_add(&sql, head, head_len);
        else
            strbuf_addch(&sql, ',');
        strbuf_add(&sql, tuple, (size_t)len);
        batch++;
    }
    if (sql.len && exec_sql(c, sql.buf) != DB_OK)
        goto fail;
    oltp_loaded_add(batch);
    goto out;
fail:
    rc = -1;
out:
    strbuf_release(&sql);
    return rc;
}

int oltp_prepare_tables(struct db_conn *c, const struct oltp_opts *o, int first, int step)
{
    for (int n = first; n <= o->tables; n += step) {
        struct rand_state r;
        if (oltp_prepare_interrupted)
            return error("prepare interrupted before 'sbtest%d'", n);
        /* Per-table seed: the data does not depend on how tables are striped over threads. */
        rand_seed(&r, (o->seed ? o->seed : 0x5eed) * 1000003u + (uint64_t)n);
        if (create_table(c, o, n) < 0 || (!o->bulk_schema && fill_table(c, o, n, &r) < 0))
            return -1;
        if (o->create_secondary && !o->bulk_schema &&
            exec_announced(c, "Creating a secondary index on", n,
                           xasprintf("CREATE INDEX k_%d ON sbtest%d(k)", n, n)) < 0)
            return -1;
    }
    return 0;
}

int oltp_prewarm_tables(struct db_conn *c, const struct oltp_opts *o, int first, int step)
{
    if (strcmp(c->drv->name, "mysql"))
        return error("prewarm is MySQL only (--db-driver=mysql), not %s", c->drv->name);
    /* In-memory temporary tables for the derived tables below, as sysbench does. */
    if (exec_sql(c, "SET tmp_table_size=2*1024*1024*1024") != DB_OK ||
        exec_sql(c, "SET max_heap_table_size=2*1024*1024*1024") != DB_OK)
        return -1;
    for (int n = first; n <= o->tables; n += step) {
        char *q[3] = {
            xasprintf("ANALYZE TABLE sbtest%d", n),
            xasprintf("SELECT AVG(id) FROM (SELECT * FROM sbtest%d FORCE KEY (PRIMARY) LIMIT %u) t",
                      n, o->table_size),
            xasprintf("SELECT COUNT(*) FROM (SELECT * FROM sbtest%d WHERE k LIKE '%%0%%' LIMIT %u) "
                      "t",
                      n, o->table_size),
        };
        int rc = 0;
        printf("Prewarming table sbtest%d\n", n);
        fflush(stdout);
        for (size_t i = 0; i < ARRAY_SIZE(q); i++) {
            if (!rc && exec_sql(c, q[i]) != DB_OK)
                rc = -1;
            free(q[i]);
        }
        if (rc < 0)
            return -1;
    }
    return 0;
}

int oltp_cleanup(struct db_conn *c, const struct oltp_opts *o)
{
    for (int n = 1; n <= o->tables; n++)
        if (exec_announced(c, "Dropping table", n,
                           xasprintf("DROP TABLE IF EXISTS sbtest%d", n)) < 0)
            return -1;
    return 0;
}

int oltp_check_tables(struct db_conn *c, const struct oltp_opts *o)
{
    for (int n = 1; n <= o->tables; n++) {
        char *sql = xasprintf("SELECT 1 FROM sbtest%d WHERE 1=0", n);
        struct db_stmt *s = c->drv->prepare(c, sql);
        free(sql);
        if (!s)
            return error("table sbtest%d does not exist: run prepare first", n);
        c->drv->stmt_close(c, s);
    }
    return 0;
}

/* ---- run ---- */

/* "SELECT ... WHERE k IN (?, ?, ...)" / "... k BETWEEN ? AND ? OR ...": n repetitions of
 * item joined by sep. */
static char *repeated_sql(const char *head, const char *item, const char *sep, int n)
{
    struct strbuf sb = STRBUF_INIT;
    strbuf_addstr(&sb, head);
    for (int i = 0; i < n; i++) {
        if (i)
            strbuf_addstr(&sb, sep);
        strbuf_addstr(&sb, item);
    }
    if (!strcmp(sep, ", "))
        strbuf_addch(&sb, ')');
    return strbuf_detach(&sb);
}

static char *stmt_text(const struct oltp_opts *o, enum oltp_stmt k, int table)
{
    if (k == ST_RANDOM_POINTS)
        return repeated_sql("SELECT id, k, c, pad FROM sbtest1 WHERE k IN (", "?", ", ",
                            o->random_points);
    if (k == ST_RANDOM_RANGES)
        return repeated_sql("SELECT count(k) FROM sbtest1 WHERE ", "k BETWEEN ? AND ?", " OR ",
                            o->number_of_ranges);
    return xasprintf(stmt_sql[k], table);
}

int oltp_thread_init(struct oltp_thread *t, struct db_conn *c, const struct oltp_opts *o,
                     const struct workload *wl, uint64_t seed, int tid)
{
    memset(t, 0, sizeof(*t));
    t->conn = c;
    t->o = o;
    t->wl = wl;
    t->tid = tid;
    strbuf_init(&t->bulk, 0);
    rand_seed(&t->rnd, seed);
    t->stmts = xcalloc((size_t)o->tables * ST_COUNT, sizeof(*t->stmts));
    for (int n = 0; n < o->tables; n++)
        for (int k = 0; k < ST_COUNT; k++) {
            if (!(wl->stmts & (1u << k)))
                continue;
            char *sql = stmt_text(o, (enum oltp_stmt)k, n + 1);
            t->stmts[n * ST_COUNT + k] = c->drv->prepare(c, sql);
            if (!t->stmts[n * ST_COUNT + k])
                db_error_set_stmt(&c->err, sql, NULL, 0);  /* its message names it */
            free(sql);
            if (!t->stmts[n * ST_COUNT + k])
                return -1;
        }
    return 0;
}

enum db_status oltp_thread_finish(struct oltp_thread *t)
{
    return t->wl->finish ? t->wl->finish(t) : DB_OK;
}

void oltp_thread_done(struct oltp_thread *t)
{
    strbuf_release(&t->bulk);
    if (!t->stmts)
        return;
    for (int i = 0; i < t->o->tables * ST_COUNT; i++)
        if (t->stmts[i])
            t->conn->drv->stmt_close(t->conn, t->stmts[i]);
    free(t->stmts);
    t->stmts = NULL;
}

static inline int pick_table(struct oltp_thread *t)
{
    return t->o->tables == 1 ? 0 : (int)rand_uniform(&t->rnd, 1, (uint32_t)t->o->tables) - 1;
}

static inline uint32_t pick_id(struct oltp_thread *t)
{
    return rand_default(&t->rnd, &t->o->rnd, 1, t->o->table_size);
}

static inline struct db_stmt *stmt(struct oltp_thread *t, int table, enum oltp_stmt k)
{
    return t->stmts[table * ST_COUNT + k];
}

#define TRY(expr)                      \
    do {                               \
        enum db_status st_ = (expr);   \
        if (st_ != DB_OK)              \
            return st_;                \
    } while (0)

static enum db_status point_selects(struct oltp_thread *t)
{
    int tb = pick_table(t);
    for (int i = 0; i < t->o->point_selects; i++) {
        struct db_param p = { .type = DB_INT, .i = pick_id(t) };
        TRY(db_execute(t->conn, stmt(t, tb, ST_POINT), &p, 1));
    }
    return DB_OK;
}

/* One group of range queries of kind k: one table per group, a fresh id per query; ranges are
 * not clamped to the table size (as in sysbench). */
static enum db_status ranges(struct oltp_thread *t, enum oltp_stmt k, int count)
{
    int tb = pick_table(t);
    for (int i = 0; i < count; i++) {
        uint32_t id = pick_id(t);
        struct db_param p[2] = { { .type = DB_INT, .i = id },
                                 { .type = DB_INT, .i = (int64_t)id + t->o->range_size - 1 } };
        TRY(db_execute(t->conn, stmt(t, tb, k), p, 2));
    }
    return DB_OK;
}

static enum db_status range_selects(struct oltp_thread *t)
{
    if (!t->o->range_selects)
        return DB_OK;
    TRY(ranges(t, ST_SIMPLE_RANGE, t->o->simple_ranges));
    TRY(ranges(t, ST_SUM_RANGE, t->o->sum_ranges));
    TRY(ranges(t, ST_ORDER_RANGE, t->o->order_ranges));
    TRY(ranges(t, ST_DISTINCT_RANGE, t->o->distinct_ranges));
    return DB_OK;
}

static enum db_status index_updates(struct oltp_thread *t)
{
    int tb = pick_table(t);
    for (int i = 0; i < t->o->index_updates; i++) {
        struct db_param p = { .type = DB_INT, .i = pick_id(t) };
        TRY(db_execute(t->conn, stmt(t, tb, ST_INDEX_UPDATE), &p, 1));
    }
    return DB_OK;
}

static enum db_status non_index_updates(struct oltp_thread *t)
{
    int tb = pick_table(t);
    for (int i = 0; i < t->o->non_index_updates; i++) {
        rand_template(&t->rnd, C_TEMPLATE, t->c, C_LEN);
        struct db_param p[2] = { { .type = DB_TEXT, .s = t->c, .len = (int)C_LEN },
                                 { .type = DB_INT, .i = pick_id(t) } };
        TRY(db_execute(t->conn, stmt(t, tb, ST_NON_INDEX_UPDATE), p, 2));
    }
    return DB_OK;
}

/* DELETE row id and re-insert the same id (explicit even with auto_inc), so the table size
 * stays constant. */
static enum db_status delete_inserts(struct oltp_thread *t)
{
    int tb = pick_table(t);
    for (int i = 0; i < t->o->delete_inserts; i++) {
        uint32_t id = pick_id(t);
        uint32_t k = pick_id(t);
        struct db_param del = { .type = DB_INT, .i = id };
        TRY(db_execute(t->conn, stmt(t, tb, ST_DELETE), &del, 1));
        rand_template(&t->rnd, C_TEMPLATE, t->c, C_LEN);
        rand_template(&t->rnd, PAD_TEMPLATE, t->pad, PAD_LEN);
        struct db_param ins[4] = { { .type = DB_INT, .i = id },
                                   { .type = DB_INT, .i = k },
                                   { .type = DB_TEXT, .s = t->c, .len = (int)C_LEN },
                                   { .type = DB_TEXT, .s = t->pad, .len = (int)PAD_LEN } };
        TRY(db_execute(t->conn, stmt(t, tb, ST_INSERT), ins, 4));
    }
    return DB_OK;
}

static enum db_status begin(struct oltp_thread *t, bool will_write)
{
    return t->o->skip_trx ? DB_OK : db_begin(t->conn, will_write);
}

static enum db_status commit(struct oltp_thread *t)
{
    return t->o->skip_trx ? DB_OK : db_commit(t->conn);
}

static enum db_status ev_read_write(struct oltp_thread *t)
{
    TRY(begin(t, true));
    TRY(point_selects(t));
    TRY(range_selects(t));
    TRY(index_updates(t));
    TRY(non_index_updates(t));
    TRY(delete_inserts(t));
    return commit(t);
}

static enum db_status ev_read_only(struct oltp_thread *t)
{
    TRY(begin(t, false));
    TRY(point_selects(t));
    TRY(range_selects(t));
    return commit(t);
}

static enum db_status ev_write_only(struct oltp_thread *t)
{
    TRY(begin(t, true));
    TRY(index_updates(t));
    TRY(non_index_updates(t));
    TRY(delete_inserts(t));
    return commit(t);
}

/* oltp_point_select: one point select (fix_point_select sets point_selects to 1), without
 * point_selects' loop: the whole event lies between two autocommit transactions, where every
 * instruction counts twice at 2 threads on SQLite (BENCHMARKS.md, sqlite-overhead). The same
 * draws in the same order as point_selects: the table, then the id. */
static enum db_status ev_point_select(struct oltp_thread *t)
{
    assert(t->o->point_selects == 1);
    int tb = pick_table(t);
    struct db_param p = { .type = DB_INT, .i = pick_id(t) };
    return db_execute(t->conn, stmt(t, tb, ST_POINT), &p, 1);
}

static void fix_point_select(struct oltp_opts *o)
{
    o->point_selects = 1;
}

static enum db_status ev_update_index(struct oltp_thread *t)
{
    return index_updates(t);
}

static enum db_status ev_update_non_index(struct oltp_thread *t)
{
    return non_index_updates(t);
}

/* oltp_delete: one DELETE of a random id; once rows run out it affects nothing (counted as
 * "other", as sysbench does). */
static enum db_status ev_delete(struct oltp_thread *t)
{
    int tb = pick_table(t);
    struct db_param p = { .type = DB_INT, .i = pick_id(t) };
    return db_execute(t->conn, stmt(t, tb, ST_DELETE), &p, 1);
}

/* oltp_insert: one INSERT sent as text (not prepared), autocommit. With --auto-inc the server
 * assigns the id (the driver's insert_auto_id: "0" on MySQL, column left out on PostgreSQL and
 * SQLite); without, ids come from rand_unique() mapped into the signed INT range. */
static enum db_status ev_insert(struct oltp_thread *t)
{
    char sql[320];
    int tb = pick_table(t) + 1;
    uint32_t k = pick_id(t);
    const char *auto_id = t->conn->drv->insert_auto_id;
    rand_template(&t->rnd, C_TEMPLATE, t->c, C_LEN);
    rand_template(&t->rnd, PAD_TEMPLATE, t->pad, PAD_LEN);
    if (t->o->auto_inc && !auto_id)
        snprintf(sql, sizeof(sql), "INSERT INTO sbtest%d (k, c, pad) VALUES (%u, '%.*s', '%.*s')",
                 tb, k, (int)C_LEN, t->c, (int)PAD_LEN, t->pad);
    else if (t->o->auto_inc)
        snprintf(sql, sizeof(sql), "INSERT INTO sbtest%d (id, k, c, pad) VALUES (%s, %u, '%.*s', "
                                   "'%.*s')",
                 tb, auto_id, k, (int)C_LEN, t->c, (int)PAD_LEN, t->pad);
    else
        snprintf(sql, sizeof(sql),
                 "INSERT INTO sbtest%d (id, k, c, pad) VALUES (%lld, %u, '%.*s', "
                 "'%.*s')",
                 tb, (long long)rand_unique() - 2147483648LL, k, (int)C_LEN, t->c, (int)PAD_LEN,
                 t->pad);
    return db_query(t->conn, sql);
}

static void fix_insert(struct oltp_opts *o)
{
    /* Empty tables when ids are client-generated: prepared ids could collide with them. */
    if (!o->auto_inc)
        o->prepare_rows = 0;
    rand_unique_seed(o->seed ? o->seed : now_ns());
}

/* select_random_*: each thread draws k values from its own slice of [0, table_size]. */
static inline uint32_t slice_value(struct oltp_thread *t)
{
    uint32_t rlen = t->o->table_size / (uint32_t)t->o->threads;
    uint32_t lo = rlen * (uint32_t)t->tid;
    return rand_default(&t->rnd, &t->o->rnd, lo, lo + rlen);
}

static enum db_status ev_random_points(struct oltp_thread *t)
{
    struct db_param p[t->o->random_points];
    for (int i = 0; i < t->o->random_points; i++)
        p[i] = (struct db_param){ .type = DB_INT, .i = slice_value(t) };
    return db_execute(t->conn, stmt(t, 0, ST_RANDOM_POINTS), p, t->o->random_points);
}

static enum db_status ev_random_ranges(struct oltp_thread *t)
{
    int n = t->o->number_of_ranges;
    struct db_param p[2 * n];
    for (int i = 0; i < n; i++) {
        uint32_t v = slice_value(t);
        p[2 * i] = (struct db_param){ .type = DB_INT, .i = v };
        p[2 * i + 1] = (struct db_param){ .type = DB_INT, .i = (int64_t)v + t->o->delta };
    }
    return db_execute(t->conn, stmt(t, 0, ST_RANDOM_RANGES), p, 2 * n);
}

/* bulk_insert: an event appends one row (n, n) to this thread's multi-row INSERT into
 * sbtest<tid+1>; the statement is sent when the next row would overflow 512 KiB, and at the
 * end (finish). Ids restart at 1 every run, as in sysbench: run cleanup + prepare between
 * runs. */
static enum db_status ev_bulk_insert(struct oltp_thread *t)
{
    char row[48];
    int len = snprintf(row, sizeof(row), "(%llu,%llu)", (unsigned long long)t->bulk_rows + 1,
                       (unsigned long long)t->bulk_rows + 1);
    if (t->bulk.len && t->bulk.len + 1 + (size_t)len > BULK_INSERT_BYTES) {
        enum db_status st = db_query(t->conn, t->bulk.buf);
        if (st != DB_OK && st != DB_FATAL)
            return st;  /* rolled back: the retried event sends the same rows again */
        if (st == DB_FATAL)
            t->lost_events += t->bulk_pending;
        strbuf_reset(&t->bulk);
        t->bulk_pending = 0;
        if (st != DB_OK)
            return st;
    }
    if (!t->bulk.len)
        strbuf_addf(&t->bulk, "INSERT INTO sbtest%d VALUES", t->tid + 1);
    else
        strbuf_addch(&t->bulk, ',');
    strbuf_add(&t->bulk, row, (size_t)len);
    t->bulk_rows++;
    t->bulk_pending++;
    return DB_OK;
}

static enum db_status finish_bulk_insert(struct oltp_thread *t)
{
    enum db_status st = t->bulk.len ? db_query(t->conn, t->bulk.buf) : DB_OK;
    if (st != DB_OK)
        t->lost_events += t->bulk_pending;
    strbuf_reset(&t->bulk);
    t->bulk_pending = 0;
    return st;
}

static void fix_bulk_insert(struct oltp_opts *o)
{
    o->tables = o->threads;  /* sbtest1..sbtest<threads>, one per thread */
    o->bulk_schema = true;
}

enum db_status oltp_event_retry(struct oltp_thread *t, const volatile int *stop,
                                enum db_status st)
{
    assert(st != DB_OK);
    for (;;) {
        if (st == DB_FATAL && t->conn->drv->in_process)
            /* The run stops, but the other workers finish their event first: an in-process
             * engine's write lock (SQLite's writers' turn) held by this transaction would
             * keep them waiting forever. A server releases a failed client's locks itself. */
            t->conn->drv->rollback(t->conn);
        if (st == DB_OK || st == DB_FATAL)
            return st;
        /* Retryable (counted by the wrapper): roll back and re-run the whole event. */
        t->conn->drv->rollback(t->conn);
        if (__atomic_load_n(stop, __ATOMIC_RELAXED) ||
            (t->deadline_ns && now_ns() >= t->deadline_ns))
            return st;
        st = t->wl->event(t);
    }
}

#define RANGE_STMTS                                                                              \
    ((1u << ST_SIMPLE_RANGE) | (1u << ST_SUM_RANGE) | (1u << ST_ORDER_RANGE) |                   \
     (1u << ST_DISTINCT_RANGE))
#define WRITE_STMTS                                                                              \
    ((1u << ST_INDEX_UPDATE) | (1u << ST_NON_INDEX_UPDATE) | (1u << ST_DELETE) | (1u << ST_INSERT))

/* The catalogue: sysbench 1.0.20's eleven OLTP scripts (reference/sysbench.md §3). */
static const struct workload catalogue[] = {
    { .name = "oltp_read_write", .descr = "OLTP read/write: point selects, ranges, updates, "
                                          "delete+insert in a transaction",
      .stmts = (1u << ST_POINT) | RANGE_STMTS | WRITE_STMTS, .event = ev_read_write },
    { .name = "oltp_read_only", .descr = "OLTP read-only: point selects and ranges in a "
                                         "transaction",
      .stmts = (1u << ST_POINT) | RANGE_STMTS, .event = ev_read_only },
    { .name = "oltp_write_only", .descr = "OLTP write-only: updates and delete+insert in a "
                                          "transaction",
      .stmts = WRITE_STMTS, .event = ev_write_only },
    { .name = "oltp_point_select", .descr = "One point select per event, autocommit",
      .stmts = 1u << ST_POINT, .fixup = fix_point_select, .event = ev_point_select },
    { .name = "oltp_update_index", .descr = "UPDATE of the indexed column k (--index-updates per "
                                            "event), autocommit",
      .stmts = 1u << ST_INDEX_UPDATE, .event = ev_update_index },
    { .name = "oltp_update_non_index", .descr = "UPDATE of the non-indexed column c "
                                                "(--non-index-updates per event), autocommit",
      .stmts = 1u << ST_NON_INDEX_UPDATE, .event = ev_update_non_index },
    { .name = "oltp_delete", .descr = "One DELETE of a random id per event, autocommit",
      .stmts = 1u << ST_DELETE, .event = ev_delete },
    { .name = "oltp_insert", .descr = "One INSERT (text, not prepared) per event, autocommit",
      .stmts = 0, .fixup = fix_insert, .event = ev_insert },
    { .name = "select_random_points", .descr = "SELECT with --random-points values in an IN() on "
                                               "the k index of sbtest1",
      .stmts = 1u << ST_RANDOM_POINTS, .event = ev_random_points, .one_table = true },
    { .name = "select_random_ranges", .descr = "SELECT count(k) over --number-of-ranges BETWEEN "
                                               "ranges of sbtest1",
      .stmts = 1u << ST_RANDOM_RANGES, .event = ev_random_ranges, .one_table = true },
    { .name = "bulk_insert", .descr = "Multi-row INSERTs of (id, k) rows into one table per thread "
                                      "(512 KiB each)",
      .stmts = 0, .fixup = fix_bulk_insert, .event = ev_bulk_insert, .finish = finish_bulk_insert },
};

const struct workload *workload_find(const char *name)
{
    size_t len = strlen(name);
    if (len > 4 && !strcmp(name + len - 4, ".lua"))
        len -= 4;  /* sysbench accepts oltp_read_write.lua too */
    for (size_t i = 0; i < ARRAY_SIZE(catalogue); i++)
        if (strlen(catalogue[i].name) == len && !strncmp(catalogue[i].name, name, len))
            return &catalogue[i];
    return NULL;
}

const char *workload_names(void)
{
    static char names[512];
    if (!names[0]) {
        size_t off = 0;
        for (size_t i = 0; i < ARRAY_SIZE(catalogue); i++)
            off += (size_t)snprintf(names + off, sizeof(names) - off, "%s%s", i ? ", " : "",
                                    catalogue[i].name);
    }
    return names;
}

int workload_check_list(const char *opt, char **list, int n)
{
    if (n == 0)
        return error("--%s: needs at least one workload", opt);
    for (int i = 0; i < n; i++)
        if (!workload_find(list[i]))
            return error("--%s: unknown workload '%s' (known: %s)", opt, list[i], workload_names());
    return 0;
}

const struct workload *workload_at(int i, int *count)
{
    *count = (int)ARRAY_SIZE(catalogue);
    return i >= 0 && i < (int)ARRAY_SIZE(catalogue) ? &catalogue[i] : NULL;
}

/* ---- correctness gate ---- */

/* The correctness gate's query set per SQL dialect: scans, index lookups, sorting, grouping,
 * joins, window functions, expressions, string functions, and writes inside a transaction
 * that is rolled back so the data stays the same for every variant. Each set asks the same
 * questions in its engine's own functions; a checksum is only ever compared between builds
 * of one engine. %d is the table number. */
static const char *const verify_sqlite[] = {
    "SELECT id, k, c, pad FROM sbtest%d ORDER BY id",
    "SELECT k, count(*), sum(id), min(c), max(pad) FROM sbtest%d GROUP BY k ORDER BY k",
    "SELECT substr(c, 1, 11), length(c), upper(pad), k * 3 + id %% 7, printf('%%.4f', k / 7.0) "
    "FROM sbtest%d WHERE id %% 13 = 0 ORDER BY c, id",
    "SELECT DISTINCT c FROM sbtest%d WHERE id BETWEEN 100 AND 1000 ORDER BY c",
    "SELECT a.id, b.k, b.c FROM sbtest%d a JOIN sbtest%d b ON b.id = a.k WHERE a.id <= 2000 "
    "ORDER BY a.id",
    "SELECT id, sum(k) OVER (ORDER BY id ROWS 5 PRECEDING), rank() OVER (ORDER BY k) "
    "FROM sbtest%d WHERE id <= 3000 ORDER BY id",
    "SELECT count(*), avg(k), total(id), min(k), max(k) FROM sbtest%d WHERE k BETWEEN 10 AND 5000",
    "SELECT id, replace(c, '-', ''), instr(pad, '9'), hex(substr(pad, 1, 8)) FROM sbtest%d "
    "WHERE c LIKE '%%12%%' ORDER BY id LIMIT 500",
    "BEGIN",
    "UPDATE sbtest%d SET k = k + 1, c = substr(c, 2) || substr(c, 1, 1) WHERE id %% 5 = 0",
    "DELETE FROM sbtest%d WHERE id %% 17 = 3",
    "INSERT INTO sbtest%d (id, k, c, pad) SELECT id + 100000000, k, pad, c FROM sbtest%d "
    "WHERE id %% 11 = 1",
    "SELECT k, count(*), group_concat(id) FROM (SELECT * FROM sbtest%d ORDER BY id) "
    "GROUP BY k ORDER BY k",
    "ROLLBACK",
    NULL,
};

static const char *const verify_mysql[] = {
    "SELECT id, k, c, pad FROM sbtest%d ORDER BY id",
    "SELECT k, count(*), sum(id), min(c), max(pad) FROM sbtest%d GROUP BY k ORDER BY k",
    "SELECT substr(c, 1, 11), length(c), upper(pad), k * 3 + id %% 7, format(k / 7.0, 4) "
    "FROM sbtest%d WHERE id %% 13 = 0 ORDER BY c, id",
    "SELECT DISTINCT c FROM sbtest%d WHERE id BETWEEN 100 AND 1000 ORDER BY c",
    "SELECT a.id, b.k, b.c FROM sbtest%d a JOIN sbtest%d b ON b.id = a.k WHERE a.id <= 2000 "
    "ORDER BY a.id",
    "SELECT id, sum(k) OVER (ORDER BY id ROWS 5 PRECEDING), rank() OVER (ORDER BY k) "
    "FROM sbtest%d WHERE id <= 3000 ORDER BY id",
    "SELECT count(*), avg(k), sum(id), min(k), max(k) FROM sbtest%d WHERE k BETWEEN 10 AND 5000",
    "SELECT id, replace(c, '-', ''), instr(pad, '9'), hex(substr(pad, 1, 8)) FROM sbtest%d "
    "WHERE c LIKE '%%12%%' ORDER BY id LIMIT 500",
    "BEGIN",
    "UPDATE sbtest%d SET k = k + 1, c = concat(substr(c, 2), substr(c, 1, 1)) WHERE id %% 5 = 0",
    "DELETE FROM sbtest%d WHERE id %% 17 = 3",
    /* pad is CHAR(60): c (119 characters) must be cut to fit in strict mode (MariaDB's default) */
    "INSERT INTO sbtest%d (id, k, c, pad) SELECT id + 100000000, k, pad, substr(c, 1, 60) "
    "FROM sbtest%d WHERE id %% 11 = 1",
    "SELECT k, count(*), group_concat(id ORDER BY id) FROM sbtest%d GROUP BY k ORDER BY k",
    "ROLLBACK",
    NULL,
};

static const char *const verify_pgsql[] = {
    "SELECT id, k, c, pad FROM sbtest%d ORDER BY id",
    "SELECT k, count(*), sum(id), min(c), max(pad) FROM sbtest%d GROUP BY k ORDER BY k",
    "SELECT substr(c, 1, 11), length(c), upper(pad), k * 3 + id %% 7, to_char(k / 7.0, "
    "'FM999999990.0000') "
    "FROM sbtest%d WHERE id %% 13 = 0 ORDER BY c, id",
    "SELECT DISTINCT c FROM sbtest%d WHERE id BETWEEN 100 AND 1000 ORDER BY c",
    "SELECT a.id, b.k, b.c FROM sbtest%d a JOIN sbtest%d b ON b.id = a.k WHERE a.id <= 2000 "
    "ORDER BY a.id",
    "SELECT id, sum(k) OVER (ORDER BY id ROWS 5 PRECEDING), rank() OVER (ORDER BY k) "
    "FROM sbtest%d WHERE id <= 3000 ORDER BY id",
    "SELECT count(*), avg(k), sum(id), min(k), max(k) FROM sbtest%d WHERE k BETWEEN 10 AND 5000",
    "SELECT id, replace(c, '-', ''), strpos(pad, '9'), encode(substr(pad, 1, 8)::bytea, 'hex') "
    "FROM sbtest%d WHERE c LIKE '%%12%%' ORDER BY id LIMIT 500",
    "BEGIN",
    "UPDATE sbtest%d SET k = k + 1, c = substr(c, 2) || substr(c, 1, 1) WHERE id %% 5 = 0",
    "DELETE FROM sbtest%d WHERE id %% 17 = 3",
    /* pad is CHAR(60): c (119 characters) must be cut to fit */
    "INSERT INTO sbtest%d (id, k, c, pad) SELECT id + 100000000, k, pad, substr(c, 1, 60) "
    "FROM sbtest%d WHERE id %% 11 = 1",
    "SELECT k, count(*), string_agg(id::text, ',' ORDER BY id) FROM sbtest%d GROUP BY k ORDER BY k",
    "ROLLBACK",
    NULL,
};

int oltp_verify(struct db_conn *c, const struct oltp_opts *o, uint64_t *checksum, uint64_t *rows)
{
    const char *const *queries = !strcmp(c->drv->name, "sqlite") ? verify_sqlite
                                 : !strcmp(c->drv->name, "mysql") ? verify_mysql
                                 : !strcmp(c->drv->name, "pgsql") ? verify_pgsql : NULL;
    if (!queries)
        return error("verify (the correctness gate's query set) has no queries for %s",
                     c->drv->name);
    c->checksum = true;
    c->sum = 14695981039346656037ull; /* FNV-1a 64 offset basis */
    c->rows = 0;
    for (int n = 1; n <= o->tables; n++)
        for (size_t i = 0; queries[i]; i++) {
            char *sql = xasprintf(queries[i], n, n);
            enum db_status st = exec_sql(c, sql);
            free(sql);
            if (st != DB_OK) {
                c->checksum = false;
                return -1;
            }
        }
    c->checksum = false;
    *checksum = c->sum;
    *rows = c->rows;
    return 0;
}
