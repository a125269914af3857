/* Unit tests for src/pgo/official.c: the major versions an official binary and the source
 * must share (PostgreSQL 10+: the first number, older PostgreSQL and MariaDB/MySQL: the first
 * two; Debian epochs and revisions ignored); and for src/pgo/provenance.c the configure
 * features in which official differs from the self-built variants. */
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

/* The recipe's PostgreSQL options against Debian's pg_config --configure (a part of it): each
 * feature set otherwise named once, with both settings ("default" where a side is silent);
 * equal settings, paths and build-process options left out. */
static void test_differs(void **state)
{
    (void)state;
    struct argvec built = ARGVEC_INIT, off = ARGVEC_INIT, out = ARGVEC_INIT;
    const char *b[] = { "--without-icu", "--without-readline", "--without-llvm",
                        "--with-system-tzdata=/usr/share/zoneinfo", NULL };
    const char *o[] = { "--build=x86_64-linux-gnu", "--prefix=/usr", "--disable-silent-rules",
                        "--with-icu", "--with-openssl", "--with-llvm", "--without-llvm",
                        "--with-system-tzdata=/usr/share/zoneinfo", NULL };
    argvec_pushv(&built, b);
    argvec_pushv(&off, o);
    pgo_provenance_differs(&built, &off, &out);
    assert_int_equal(out.n, 3);
    assert_string_equal(out.v[0], "icu: --without-icu built, --with-icu official");
    assert_string_equal(out.v[1], "readline: --without-readline built, default official");
    assert_string_equal(out.v[2], "openssl: default built, --with-openssl official");
    /* llvm: the last of official's two settings wins, as in configure: the same as built */
    argvec_clear(&out);
    pgo_provenance_differs(&built, &built, &out);
    assert_int_equal(out.n, 0);
    argvec_clear(&built);
    argvec_clear(&off);
    argvec_clear(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pgsql),
        cmocka_unit_test(test_mysql),
        cmocka_unit_test(test_none),
        cmocka_unit_test(test_differs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
