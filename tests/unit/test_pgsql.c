/* Unit tests for db/pgsql.c that need no server: '?' -> $n rewriting, the option table and
 * dialect, option checks in init, library facts, and connection errors (a closed loopback port,
 * a socket directory without a server): one line naming the server, never the password. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/pgsql.h"
#include "util/opts.h"
#include "util/strbuf.h"
#include "util/util.h"

#include "unit_helpers.h"  /* unit_closed_port */

static void check_rewrite(const char *sql, const char *want, int want_n)
{
    struct strbuf sb = STRBUF_INIT;
    int n = pgsql_rewrite_placeholders(&sb, sql);
    assert_string_equal(sb.buf, want);
    assert_int_equal(n, want_n);
    strbuf_release(&sb);
}

static void test_rewrite(void **state)
{
    (void)state;
    check_rewrite("SELECT c FROM sbtest1 WHERE id=?", "SELECT c FROM sbtest1 WHERE id=$1", 1);
    check_rewrite("INSERT INTO t (id, k, c, pad) VALUES (?, ?, ?, ?)",
                  "INSERT INTO t (id, k, c, pad) VALUES ($1, $2, $3, $4)", 4);
    check_rewrite("BEGIN", "BEGIN", 0);
    check_rewrite("", "", 0);
    /* Not inside literals or quoted identifiers; doubled quotes stay inside. */
    check_rewrite("SELECT '?', \"a?b\", ? FROM t WHERE c = 'it''s ?' AND d = ?",
                  "SELECT '?', \"a?b\", $1 FROM t WHERE c = 'it''s ?' AND d = $2", 2);
    check_rewrite("?????????????", "$1$2$3$4$5$6$7$8$9$10$11$12$13", 13);
}

static const char *def(const char *name)
{
    for (const struct opt_def *d = pgsql_driver.options; d->name; d++)
        if (!strcmp(d->name, name))
            return d->defval;
    fail_msg("no option --%s", name);
    return NULL;
}

static void test_options_and_dialect(void **state)
{
    (void)state;
    assert_string_equal(pgsql_driver.name, "pgsql");
    assert_string_equal(def("pgsql-host"), "localhost");
    assert_string_equal(def("pgsql-port"), "5432");
    assert_string_equal(def("pgsql-user"), "sbtest");
    assert_string_equal(def("pgsql-password"), "");
    assert_string_equal(def("pgsql-db"), "sbtest");
    assert_string_equal(def("pgsql-connect-timeout"), "10");
    assert_string_equal(pgsql_driver.id_auto_inc, "SERIAL");
    assert_string_equal(pgsql_driver.id_plain, "INTEGER NOT NULL");
    assert_string_equal(pgsql_driver.table_suffix, "");
    assert_null(pgsql_driver.insert_auto_id);
    assert_non_null(db_driver_find("pgsql"));
}

/* opts with the common and pgsql tables, then NAME=VALUE pairs (NULL-terminated). */
static void make_opts(struct opts *o, ...)
{
    const struct opt_def *const tables[] = { db_common_options, pgsql_driver.options };
    va_list ap;
    const char *name;
    opts_init(o, tables, 2);
    va_start(ap, o);
    while ((name = va_arg(ap, const char *))) {
        const char *value = va_arg(ap, const char *);
        assert_int_equal(opts_set(o, name, value), 0);
    }
    va_end(ap);
}

static void test_init_rejects(void **state)
{
    (void)state;
    struct opts o;
    make_opts(&o, "db-ps-mode", "sometimes", NULL);
    assert_int_equal(pgsql_driver.init(&o), -1);
    opts_release(&o);
    make_opts(&o, "pgsql-port", "70000", NULL);
    assert_int_equal(pgsql_driver.init(&o), -1);
    opts_release(&o);
    make_opts(&o, "pgsql-port", "0", NULL);
    assert_int_equal(pgsql_driver.init(&o), -1);
    opts_release(&o);
    make_opts(&o, "pgsql-connect-timeout", "-1", NULL);
    assert_int_equal(pgsql_driver.init(&o), -1);
    opts_release(&o);
    make_opts(&o, "pgsql-host", "", NULL);
    assert_int_equal(pgsql_driver.init(&o), -1);
    opts_release(&o);
    struct db_libinfo li = { 0 };
    assert_int_equal(pgsql_driver.libinfo(&li), -1);  /* nothing initialised */
}

static void test_connect_refused(void **state)
{
    (void)state;
    struct opts o;
    char port[16], want[96];
    snprintf(port, sizeof(port), "%d", unit_closed_port());
    make_opts(&o, "pgsql-host", "127.0.0.1", "pgsql-port", port, "pgsql-password", "pw-SECRET-42",
              "pgsql-connect-timeout", "5", NULL);
    assert_int_equal(pgsql_driver.init(&o), 0);

    struct db_libinfo li = { 0 };
    assert_int_equal(pgsql_driver.libinfo(&li), 0);
    /* one format for every driver: the file, its dotted version, no "libpq 150018" id */
    assert_true(li.path[0] == '/' && strstr(li.path, "libpq.so"));
    assert_null(li.source_id);
    assert_true(li.version[0] >= '1' && li.version[0] <= '9' && strchr(li.version, '.'));
    assert_string_equal(li.isolation, "dlopen(RTLD_GLOBAL) of libpq.so.5 at the driver's start");

    struct db_conn c = { .drv = &pgsql_driver };
    assert_int_equal(pgsql_driver.connect(&c), -1);
    assert_null(c.priv);
    assert_int_equal(c.err.status, DB_FATAL);
    snprintf(want, sizeof(want), "cannot connect to PostgreSQL server at 127.0.0.1:%s: ", port);
    assert_memory_equal(c.err.msg, want, strlen(want));
    assert_non_null(strstr(c.err.msg, "refused"));
    assert_null(strchr(c.err.msg, '\n'));
    assert_null(strstr(c.err.msg, "SECRET"));
    assert_null(strstr(c.err.msg, "  "));
    pgsql_driver.done();
    opts_release(&o);
}

static void test_connect_no_socket(void **state)
{
    (void)state;
    struct opts o;
    make_opts(&o, "pgsql-host", "/nonexistent-pgolab-dir", NULL);
    assert_int_equal(pgsql_driver.init(&o), 0);
    struct db_conn c = { .drv = &pgsql_driver };
    assert_int_equal(pgsql_driver.connect(&c), -1);
    const char *want = "cannot connect to PostgreSQL server at /nonexistent-pgolab-dir/.s.PGSQL.5432: ";
    assert_memory_equal(c.err.msg, want, strlen(want));
    assert_non_null(strstr(c.err.msg, "No such file or directory"));
    pgsql_driver.done();
    opts_release(&o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rewrite),
        cmocka_unit_test(test_options_and_dialect),
        cmocka_unit_test(test_init_rejects),
        cmocka_unit_test(test_connect_refused),
        cmocka_unit_test(test_connect_no_socket),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
