/* Unit tests for db/stmt_text.c: the table a statement names (every statement kind of the
 * workloads, quoted names, keywords inside literals, none), and the statement an error keeps:
 * its values inlined and quoted, on one line, cut to DB_ERR_SQL_MAX characters with "...". */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "db/stmt_text.h"

static const char *table_of(const char *sql)
{
    static char t[64];
    db_sql_table(sql, t, sizeof(t));
    return t;
}

static void test_table_of_each_kind(void **state)
{
    (void)state;
    assert_string_equal(table_of("SELECT c FROM sbtest3 WHERE id=?"), "sbtest3");
    assert_string_equal(table_of("SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN ? AND ?"), "sbtest1");
    assert_string_equal(table_of("UPDATE sbtest12 SET k=k+1 WHERE id=?"), "sbtest12");
    assert_string_equal(table_of("DELETE FROM sbtest2 WHERE id=?"), "sbtest2");
    assert_string_equal(table_of("INSERT INTO sbtest4 (id, k, c, pad) VALUES (?, ?, ?, ?)"),
                        "sbtest4");
    assert_string_equal(table_of("insert into sbtest5(k) values (1)"), "sbtest5");
    assert_string_equal(table_of("CREATE TABLE IF NOT EXISTS sbtest6 (id INT)"), "sbtest6");
    assert_string_equal(table_of("DROP TABLE IF EXISTS sbtest7"), "sbtest7");
    assert_string_equal(table_of("SELECT 1 FROM `sbtest8` WHERE 1=0"), "sbtest8");
    assert_string_equal(table_of("SELECT 1 FROM \"Sb Test\""), "Sb Test");
    assert_string_equal(table_of("SELECT 1 FROM sbtest.sbtest9"), "sbtest.sbtest9");
    /* a subquery: the first name after FROM */
    assert_string_equal(table_of("SELECT * FROM (SELECT id FROM sbtest10) t"), "sbtest10");
}

static void test_table_none_or_not_fooled(void **state)
{
    (void)state;
    assert_string_equal(table_of("BEGIN"), "");
    assert_string_equal(table_of("COMMIT"), "");
    assert_string_equal(table_of("SELECT 1"), "");
    assert_string_equal(table_of(""), "");
    /* a keyword inside a literal or a longer word is not one */
    assert_string_equal(table_of("UPDATE sbtest1 SET c='from x' WHERE id=1"), "sbtest1");
    assert_string_equal(table_of("SELECT 'from x', fromage FROM t1"), "t1");
    assert_string_equal(table_of("SELECT updated FROM t2"), "t2");
    /* a name that does not fit is cut, NUL-terminated */
    char small[5];
    assert_int_equal(db_sql_table("SELECT c FROM sbtest1", small, sizeof(small)), 4);
    assert_string_equal(small, "sbte");
}

static void test_stmt_values_inlined(void **state)
{
    (void)state;
    struct db_error e;
    memset(&e, 0, sizeof(e));
    struct db_param p[2] = { { .type = DB_TEXT, .s = "it's", .len = 4 },
                             { .type = DB_INT, .i = -7 } };
    db_error_set_stmt(&e, "UPDATE sbtest1 SET c=? WHERE id=?", p, 2);
    assert_string_equal(e.sql, "UPDATE sbtest1 SET c='it''s' WHERE id=-7");
    assert_string_equal(e.table, "sbtest1");
    /* counts that differ: the text as is */
    db_error_set_stmt(&e, "DELETE FROM sbtest2 WHERE id=? AND k=?", p, 1);
    assert_string_equal(e.sql, "DELETE FROM sbtest2 WHERE id=? AND k=?");
    assert_string_equal(e.table, "sbtest2");
    /* no statement table: the table is cleared */
    db_error_set_stmt(&e, "COMMIT", NULL, 0);
    assert_string_equal(e.sql, "COMMIT");
    assert_string_equal(e.table, "");
}

static void test_stmt_one_line_and_bounded(void **state)
{
    (void)state;
    struct db_error e;
    memset(&e, 0, sizeof(e));
    db_error_set_stmt(&e, "SELECT c\nFROM sbtest1\tWHERE id=1", NULL, 0);
    assert_string_equal(e.sql, "SELECT c FROM sbtest1 WHERE id=1");
    char big[DB_ERR_SQL_MAX * 3];
    strcpy(big, "INSERT INTO sbtest3 (c) VALUES ('");
    size_t n = strlen(big);
    memset(big + n, 'x', sizeof(big) - n - 3);
    strcpy(big + sizeof(big) - 3, "')");
    db_error_set_stmt(&e, big, NULL, 0);
    assert_int_equal(strlen(e.sql), DB_ERR_SQL_MAX + 3);
    assert_memory_equal(e.sql, big, DB_ERR_SQL_MAX);
    assert_string_equal(e.sql + DB_ERR_SQL_MAX, "...");
    assert_string_equal(e.table, "sbtest3");
    /* exactly DB_ERR_SQL_MAX characters: kept whole, no "..." */
    big[DB_ERR_SQL_MAX] = '\0';
    db_error_set_stmt(&e, big, NULL, 0);
    assert_string_equal(e.sql, big);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table_of_each_kind),
        cmocka_unit_test(test_table_none_or_not_fooled),
        cmocka_unit_test(test_stmt_values_inlined),
        cmocka_unit_test(test_stmt_one_line_and_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
