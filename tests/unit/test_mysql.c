/* Unit tests of the MySQL driver (src/db/mysql.c) that need no server: option defaults and
 * validation in init (--mysql-ignore-errors, port, engine, ps mode, hosts), the dialect
 * (engine clause built from --mysql-storage-engine), libinfo, and a failed connect that names
 * host:port, is fast, and never shows the password. With PGOLAB_TEST_MYSQL_SOCKET set (a
 * server's socket where root may connect without a password; mysql_driver.t does that), also
 * the driver against it: checksums of prepared and text results agree (long values, NULLs,
 * parameters, quoting in --db-ps-mode=disable), unpreparable statements fall back to text, the r/w/o classes,
 * error codes/SQLSTATEs and the ignore list. The workload paths are in tests/e2e/mysql_driver.t. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "db/driver.h"
#include "db/mysql.h"
#include "util/opts.h"
#include "util/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit_helpers.h"  /* unit_closed_port */

static const struct opt_def *drv_tables[OPTS_MAX_TABLES];

/* opts over the common database options and every driver's table, then NAME=VALUE pairs. */
static void make_opts(struct opts *o, const char *const *pairs)
{
    int nt = 0, ndt;
    const struct opt_def *const *dt = db_driver_option_tables(&ndt);
    drv_tables[nt++] = db_common_options;
    for (int i = 0; i < ndt && nt < OPTS_MAX_TABLES; i++)
        drv_tables[nt++] = dt[i];
    opts_init(o, drv_tables, nt);
    for (int i = 0; pairs && pairs[i]; i += 2)
        if (opts_set(o, pairs[i], pairs[i + 1]) < 0)
            abort();
}

/* init with NAME=VALUE pairs (NULL-terminated); returns init's result. */
static int init_with(const char *const *pairs)
{
    struct opts o;
    make_opts(&o, pairs);
    int rc = mysql_driver.init(&o);
    opts_release(&o);
    return rc;
}

static void test_defaults_and_dialect(void **state)
{
    (void)state;
    struct db_libinfo info = { 0 };
    assert_string_equal(mysql_driver.name, "mysql");
    assert_ptr_equal(db_driver_find("mysql"), &mysql_driver);
    assert_int_equal(init_with(NULL), 0);
    assert_string_equal(mysql_driver.table_suffix, "/*! ENGINE = innodb */");
    assert_string_equal(mysql_driver.id_auto_inc, "INTEGER NOT NULL AUTO_INCREMENT");
    assert_string_equal(mysql_driver.id_plain, "INTEGER NOT NULL");
    assert_string_equal(mysql_driver.insert_auto_id, "0");
    assert_int_equal(mysql_driver.libinfo(&info), 0);
    /* one format for every driver: the file, its dotted version */
    assert_true(info.path[0] == '/' && strstr(info.path, "libmariadb.so"));
    assert_true(info.version && info.version[0] >= '1' && info.version[0] <= '9' &&
                strchr(info.version, '.'));
    assert_string_equal(info.isolation, "dlopen(RTLD_GLOBAL) of libmariadb.so.3 at the driver's start");
    mysql_driver.done();

    const char *engine[] = { "mysql-storage-engine", "MyISAM", NULL };
    assert_int_equal(init_with(engine), 0);
    assert_string_equal(mysql_driver.table_suffix, "/*! ENGINE = MyISAM */");
    mysql_driver.done();
}

static void test_option_defaults(void **state)
{
    (void)state;
    struct opts o;
    make_opts(&o, NULL);
    assert_string_equal(opt_str(&o, "mysql-host"), "localhost");
    assert_int_equal(opt_int(&o, "mysql-port"), 3306);
    assert_null(opt_str(&o, "mysql-socket"));
    assert_string_equal(opt_str(&o, "mysql-user"), "sbtest");
    assert_string_equal(opt_str(&o, "mysql-password"), "");
    assert_string_equal(opt_str(&o, "mysql-db"), "sbtest");
    assert_string_equal(opt_str(&o, "mysql-storage-engine"), "innodb");
    assert_string_equal(opt_str(&o, "mysql-ignore-errors"), "1213,1020,1205");
    assert_false(opt_bool(&o, "mysql-ssl"));
    assert_int_equal(opt_int(&o, "mysql-connect-timeout"), 10);
    opts_release(&o);
}

static void test_ignore_errors(void **state)
{
    (void)state;
    static const char *const good[] = { "all", "ALL", "", "1213", "1213, 1205", "1213,,1205", "1213 , 1205 ", "2013,all" };
    static const char *const bad[] = { "12x", "-5", "0", "1213,deadlock", "1e3", "1213;1205" };
    for (size_t i = 0; i < ARRAY_SIZE(good); i++) {
        const char *p[] = { "mysql-ignore-errors", good[i], NULL };
        assert_int_equal(init_with(p), 0);
        mysql_driver.done();
    }
    for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
        const char *p[] = { "mysql-ignore-errors", bad[i], NULL };
        assert_int_equal(init_with(p), -1);
        mysql_driver.done();
    }
}

static void test_bad_options(void **state)
{
    (void)state;
    static const char *const bad[][2] = {
        { "mysql-port", "0" },           { "mysql-port", "65536" },
        { "mysql-connect-timeout", "0" }, { "db-ps-mode", "sometimes" },
        { "mysql-host", "a,b" },         { "mysql-host", "" },
        { "mysql-socket", "/a,/b" },     { "mysql-storage-engine", "inno db" },
        { "mysql-storage-engine", "x */ DROP" },
    };
    for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
        const char *p[] = { bad[i][0], bad[i][1], NULL };
        assert_int_equal(init_with(p), -1);
        mysql_driver.done();
    }
}

static void test_connect_refused(void **state)
{
    (void)state;
    char port[16], where[64];
    snprintf(port, sizeof(port), "%d", unit_closed_port());
    snprintf(where, sizeof(where), "127.0.0.1:%s", port);
    const char *p[] = { "mysql-host", "127.0.0.1", "mysql-port", port,
                        "mysql-password", "Pw-never-shown-42", NULL };
    assert_int_equal(init_with(p), 0);
    struct db_conn c = { .drv = &mysql_driver };
    uint64_t t0 = now_ns();
    assert_int_equal(mysql_driver.connect(&c), -1);
    assert_true(now_ns() - t0 < 5000000000ull);
    assert_null(c.priv);
    assert_int_equal(c.err.status, DB_FATAL);
    assert_int_equal(c.err.code, 2002);  /* CR_CONN_HOST_ERROR */
    assert_non_null(strstr(c.err.msg, "cannot connect to MySQL server at "));
    assert_non_null(strstr(c.err.msg, where));
    assert_non_null(strstr(c.err.msg, "(errno 2002)"));
    assert_null(strstr(c.err.msg, "Pw-never-shown-42"));
    assert_null(strchr(c.err.msg, '\n'));
    mysql_driver.disconnect(&c);  /* harmless without a connection */
    mysql_driver.done();
}

/* ---- against a server (PGOLAB_TEST_MYSQL_SOCKET) ---- */

static struct db_conn srv;

static void srv_connect(const char *ps_mode, const char *ignore)
{
    const char *sock = getenv("PGOLAB_TEST_MYSQL_SOCKET");
    const char *p[] = { "mysql-socket", sock, "mysql-user", "root", "db-ps-mode", ps_mode,
                        "mysql-ignore-errors", ignore, NULL };
    assert_int_equal(init_with(p), 0);
    memset(&srv, 0, sizeof(srv));
    srv.drv = &mysql_driver;
    if (mysql_driver.connect(&srv) < 0)
        fail_msg("connect: %s", srv.err.msg);
}

static void srv_disconnect(void)
{
    mysql_driver.disconnect(&srv);
    mysql_driver.done();
}

static void sum_start(void)
{
    srv.checksum = true;
    srv.sum = 14695981039346656037ull;
    srv.rows = 0;
}

static uint64_t sum_query(const char *sql, uint64_t *rows)
{
    enum db_qclass cls = DB_OTHER;
    sum_start();
    assert_int_equal(mysql_driver.query(&srv, sql, &cls), DB_OK);
    assert_int_equal(cls, DB_READ);
    *rows = srv.rows;
    srv.checksum = false;
    return srv.sum;
}

static uint64_t sum_stmt(const char *sql, const struct db_param *p, int np, uint64_t *rows)
{
    enum db_qclass cls = DB_OTHER;
    struct db_stmt *s = mysql_driver.prepare(&srv, sql);
    if (!s)
        fail_msg("prepare %s: %s", sql, srv.err.msg);
    sum_start();
    assert_int_equal(mysql_driver.execute(&srv, s, p, np, &cls), DB_OK);
    assert_int_equal(cls, DB_READ);
    /* twice: the second execution reuses the bound parameters and results */
    uint64_t first = srv.sum;
    sum_start();
    assert_int_equal(mysql_driver.execute(&srv, s, p, np, &cls), DB_OK);
    assert_true(srv.sum == first);
    mysql_driver.stmt_close(&srv, s);
    *rows = srv.rows;
    srv.checksum = false;
    return srv.sum;
}

#define MIXED_SQL                                                                                  \
    "SELECT REPEAT('x', 1000) AS a, NULL AS b, 42 AS c, 'abc' AS d "                             \
    "UNION ALL SELECT 'y', 7, NULL, ''"

static void test_server_checksums(void **state)
{
    (void)state;
    if (!getenv("PGOLAB_TEST_MYSQL_SOCKET"))
        UNIT_SKIP("a MariaDB server (PGOLAB_TEST_MYSQL_SOCKET)",
                  "runs in tests/e2e/mysql_driver.t against its private server");
    static const char *const modes[] = { "auto", "disable" };
    uint64_t rows, rows2, text, stmt;
    uint64_t by_mode[2];
    for (int m = 0; m < 2; m++) {
        srv_connect(modes[m], "1213");
        text = sum_query(MIXED_SQL, &rows);
        assert_int_equal(rows, 2);
        stmt = sum_stmt(MIXED_SQL, NULL, 0, &rows2);
        assert_int_equal(rows2, 2);
        assert_true(text == stmt);
        /* a different value changes the checksum */
        assert_true(sum_query("SELECT REPEAT('x', 1000), NULL, 43, 'abc' UNION ALL SELECT 'y', 7, NULL, ''",
                              &rows) != text);
        /* parameters, including a string that needs escaping in disable mode */
        const char quoted[] = "it's a \\ \"test\"";
        struct db_param p[2] = { { .type = DB_INT, .i = -5 },
                                 { .type = DB_TEXT, .s = quoted, .len = (int)strlen(quoted) } };
        stmt = sum_stmt("SELECT ?, ?", p, 2, &rows);
        by_mode[m] = stmt;
        text = sum_query("SELECT -5, 'it\\'s a \\\\ \\\"test\\\"'", &rows2);
        assert_true(text == stmt);
        srv_disconnect();
    }
    assert_true(by_mode[0] == by_mode[1]);
}

static void test_server_classes_and_errors(void **state)
{
    (void)state;
    if (!getenv("PGOLAB_TEST_MYSQL_SOCKET"))
        UNIT_SKIP("a MariaDB server (PGOLAB_TEST_MYSQL_SOCKET)",
                  "runs in tests/e2e/mysql_driver.t against its private server");
    enum db_qclass cls = DB_READ;
    srv_connect("auto", "1213,1020,1205");
    /* A statement the server cannot prepare (ER_UNSUPPORTED_PS: MariaDB refuses PREPARE itself
     * in the binary protocol) falls back to text and still runs. */
    struct db_stmt *noprep = mysql_driver.prepare(&srv, "PREPARE ut_p FROM 'SELECT 1'");
    assert_non_null(noprep);
    assert_int_equal(mysql_driver.execute(&srv, noprep, NULL, 0, &cls), DB_OK);
    assert_int_equal(cls, DB_OTHER);
    mysql_driver.stmt_close(&srv, noprep);
    /* BEGIN/COMMIT through the driver's own (prepared) statements, twice: the second begin
     * reuses them */
    for (int i = 0; i < 2; i++) {
        assert_int_equal(mysql_driver.begin(&srv, false), DB_OK);
        assert_int_equal(mysql_driver.commit(&srv), DB_OK);
    }

    assert_int_equal(mysql_driver.query(&srv, "CREATE TEMPORARY TABLE ut (id INT PRIMARY KEY)", &cls), DB_OK);
    assert_int_equal(cls, DB_OTHER);
    struct db_stmt *ins = mysql_driver.prepare(&srv, "INSERT INTO ut VALUES (?)");
    struct db_stmt *upd = mysql_driver.prepare(&srv, "UPDATE ut SET id = id + 100 WHERE id = ?");
    assert_non_null(ins);
    assert_non_null(upd);
    struct db_param one = { .type = DB_INT, .i = 1 }, none = { .type = DB_INT, .i = 99 };
    assert_int_equal(mysql_driver.execute(&srv, ins, &one, 1, &cls), DB_OK);
    assert_int_equal(cls, DB_WRITE);
    assert_int_equal(mysql_driver.execute(&srv, upd, &none, 1, &cls), DB_OK);
    assert_int_equal(cls, DB_OTHER);  /* no row matched */
    assert_int_equal(mysql_driver.execute(&srv, upd, &one, 1, &cls), DB_OK);
    assert_int_equal(cls, DB_WRITE);
    /* a statement error: fatal, with errno, SQLSTATE and the server's message */
    struct db_param dup = { .type = DB_INT, .i = 101 };
    assert_int_equal(mysql_driver.execute(&srv, ins, &dup, 1, &cls), DB_FATAL);
    assert_int_equal(srv.err.code, 1062);
    assert_string_equal(srv.err.state, "23000");
    assert_non_null(strstr(srv.err.msg, "Duplicate entry"));
    assert_int_equal(mysql_driver.query(&srv, "SELECT * FROM no_such_table", &cls), DB_FATAL);
    assert_int_equal(srv.err.code, 1146);
    assert_string_equal(srv.err.state, "42S02");
    assert_null(mysql_driver.prepare(&srv, "SELECT * FROM no_such_table"));
    assert_int_equal(srv.err.code, 1146);
    /* the connection is still usable */
    assert_int_equal(mysql_driver.query(&srv, "SELECT 1", &cls), DB_OK);
    assert_int_equal(cls, DB_READ);
    mysql_driver.stmt_close(&srv, ins);
    mysql_driver.stmt_close(&srv, upd);
    srv_disconnect();

    /* listed errors are retryable, and "all" makes every error retryable */
    srv_connect("auto", "1146");
    assert_int_equal(mysql_driver.query(&srv, "SELECT * FROM no_such_table", &cls), DB_RETRY);
    assert_int_equal(mysql_driver.query(&srv, "SELEC 1", &cls), DB_FATAL);
    assert_int_equal(srv.err.code, 1064);
    srv_disconnect();
    srv_connect("auto", "all");
    assert_int_equal(mysql_driver.query(&srv, "SELEC 1", &cls), DB_RETRY);
    srv_disconnect();
    /* an empty list makes every error fatal, even a deadlock's errno */
    srv_connect("auto", "");
    assert_int_equal(mysql_driver.query(&srv, "SIGNAL SQLSTATE '40001' SET MYSQL_ERRNO = 1213", &cls),
                     DB_FATAL);
    assert_int_equal(srv.err.code, 1213);
    srv_disconnect();
    srv_connect("auto", "1213,1020,1205");
    assert_int_equal(mysql_driver.query(&srv, "SIGNAL SQLSTATE '40001' SET MYSQL_ERRNO = 1213", &cls),
                     DB_RETRY);
    assert_string_equal(srv.err.state, "40001");
    srv_disconnect();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults_and_dialect),
        cmocka_unit_test(test_option_defaults),
        cmocka_unit_test(test_ignore_errors),
        cmocka_unit_test(test_bad_options),
        cmocka_unit_test(test_connect_refused),
        cmocka_unit_test(test_server_checksums),
        cmocka_unit_test(test_server_classes_and_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
