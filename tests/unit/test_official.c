/* Unit tests for src/pgo/official.c: the major versions an official binary and the source
 * must share (PostgreSQL 10+: the first number, older PostgreSQL and MariaDB/MySQL: the first
 * two; Debian epochs and revisions ignored). The configure features in which official
 * differs from the self-built variants are test_build_info.c's. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "pgo/stages.h"

/* pgo_official_same_major() of an official binary of kind and number against version. */
static int same(enum server_kind kind, const char *official, const char *version)
{
    struct pgo_pipeline p;
    memset(&p, 0, sizeof(p));
    p.recipe.server_kind = kind;
    p.official_bin = (char *)"/usr/bin/official";
    p.official_version = (char *)"Server X";
    p.official_number = (char *)official;
    return pgo_official_same_major(&p, "the source", version);
}

static void test_pgsql(void **state)
{
    (void)state;
    assert_int_equal(same(SERVER_PGSQL, "15.18", "15.13-0+deb12u1"), 0);
    assert_int_equal(same(SERVER_PGSQL, "15.18", "15"), 0);
    assert_int_equal(same(SERVER_PGSQL, "15.18", "16.2-1"), -1);
    assert_int_equal(same(SERVER_PGSQL, "15.18", "1.5"), -1);
    assert_int_equal(same(SERVER_PGSQL, "9.6.24", "9.6.1"), 0);   /* before 10: two numbers */
    assert_int_equal(same(SERVER_PGSQL, "9.6.24", "9.5.25"), -1);
    assert_int_equal(same(SERVER_PGSQL, "15.18", "unknown"), 0);  /* unknown: not refused */
    assert_int_equal(same(SERVER_PGSQL, "15.18", NULL), 0);
}

static void test_mysql(void **state)
{
    (void)state;
    assert_int_equal(same(SERVER_MYSQL, "10.11.19", "1:10.11.6-0+deb12u1"), 0); /* an epoch */
    assert_int_equal(same(SERVER_MYSQL, "10.11.19", "10.11"), 0);
    assert_int_equal(same(SERVER_MYSQL, "10.11.19", "10.6.21"), -1);
    assert_int_equal(same(SERVER_MYSQL, "10.11.19", "11.4.2"), -1);
    assert_int_equal(same(SERVER_MYSQL, "8.0.36", "8.0.40"), 0);
    assert_int_equal(same(SERVER_MYSQL, "8.0.36", "8.4.0"), -1);
}

/* No official variant: nothing to compare. */
static void test_none(void **state)
{
    (void)state;
    struct pgo_pipeline p;
    memset(&p, 0, sizeof(p));
    assert_int_equal(pgo_official_same_major(&p, "the source", "16.2"), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pgsql),
        cmocka_unit_test(test_mysql),
        cmocka_unit_test(test_none),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
