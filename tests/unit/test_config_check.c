/* Unit tests of src/pgo/config_check.c's comparison of two config headers: MariaDB's real
 * case (a pgo build whose configure lost HAVE_VFORK and PTHREAD_ONCE_INITIALIZER), install
 * paths that differ by build and must not count, cmake's and autoconf's ways of writing an
 * undefined macro, a changed value, a macro only one build defines, function-like macros
 * (ignored), and the count beyond the named ones. The pipeline's use of it (a build refused,
 * the flags that keep configure checks deciding as in the baseline) is tests/e2e/pgo_config.t. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "pgo/config_check.h"

#include <stdlib.h>
#include <string.h>

/* An excerpt of MariaDB 10.11's include/my_config.h as its baseline's configure wrote it. */
static const char baseline_h[] =
    "/* my_config.h */\n"
    "#ifndef MY_CONFIG_H\n"
    "#define MY_CONFIG_H\n"
    "#define HAVE_MALLINFO2 1\n"
    "#define PTHREAD_ONCE_INITIALIZER PTHREAD_ONCE_INIT\n"
    "/* #undef HAVE_BFD_H */\n"
    "#define HAVE_VFORK 1\n"
    "#define MYSQL_DATADIR \"/w/mariadb-gcc-1/baseline/prefix/data\"\n"
    "#define PLUGINDIR \"/w/mariadb-gcc-1/baseline/prefix/lib/plugin\"\n"
    "#define SOURCE_LINE(x) #x\n"
    "#endif\n";

static const char *const baseline_paths[] = { "/w/mariadb-gcc-1/baseline/prefix",
                                              "/w/mariadb-gcc-1/baseline/build", NULL };
static const char *const pgo_paths[] = { "/w/mariadb-gcc-1/pgo/prefix",
                                         "/w/mariadb-gcc-1/instrumented/build", NULL };

static void test_same_but_paths(void **state)
{
    (void)state;
    const char *pgo_h =
        "/* my_config.h */\n#ifndef MY_CONFIG_H\n#define MY_CONFIG_H\n#define HAVE_MALLINFO2 1\n"
        "#define PTHREAD_ONCE_INITIALIZER PTHREAD_ONCE_INIT\n/* #undef HAVE_BFD_H */\n"
        "#define HAVE_VFORK   1  \n"
        "#define MYSQL_DATADIR \"/w/mariadb-gcc-1/pgo/prefix/data\"\n"
        "#define PLUGINDIR \"/w/mariadb-gcc-1/pgo/prefix/lib/plugin\"\n"
        "#define SOURCE_LINE(x) (x)\n#endif\n";
    assert_null(config_header_diff(baseline_h, baseline_paths, "baseline", pgo_h, pgo_paths, "pgo"));
    /* without the paths, the install directories are a difference */
    char *d = config_header_diff(baseline_h, NULL, "baseline", pgo_h, NULL, "pgo");
    assert_non_null(d);
    assert_non_null(strstr(d, "MYSQL_DATADIR is '\"/w/mariadb-gcc-1/baseline/prefix/data\"' in "
                              "baseline, '\"/w/mariadb-gcc-1/pgo/prefix/data\"' in pgo"));
    assert_non_null(strstr(d, "(2 macros differ)"));
    free(d);
}

static void test_mariadb_pgo_lost_checks(void **state)
{
    (void)state;
    /* what MariaDB's pgo configure wrote when -Wmissing-profile under the checks' -Werror
     * failed them (2026-12-05, 10.11.18) */
    const char *pgo_h =
        "#define MY_CONFIG_H\n#define HAVE_MALLINFO2 1\n"
        "/* #undef PTHREAD_ONCE_INITIALIZER */\n/* #undef HAVE_BFD_H */\n"
        "/* #undef HAVE_VFORK */\n"
        "#define MYSQL_DATADIR \"/w/mariadb-gcc-1/pgo/prefix/data\"\n"
        "#define PLUGINDIR \"/w/mariadb-gcc-1/pgo/prefix/lib/plugin\"\n";
    char *d = config_header_diff(baseline_h, baseline_paths, "baseline", pgo_h, pgo_paths, "pgo");
    assert_non_null(d);
    assert_string_equal(d, "PTHREAD_ONCE_INITIALIZER defined in baseline (PTHREAD_ONCE_INIT), "
                           "not in pgo; HAVE_VFORK defined in baseline (1), not in pgo "
                           "(2 macros differ)");
    free(d);
    /* the other way round: the build defines what the reference does not */
    d = config_header_diff(pgo_h, pgo_paths, "pgo", baseline_h, baseline_paths, "baseline");
    assert_non_null(d);
    assert_non_null(strstr(d, "HAVE_VFORK defined in baseline (1), not in pgo"));
    free(d);
}

static void test_forms_and_count(void **state)
{
    (void)state;
    /* autoconf writes "#undef NAME" in a comment, cmake "/ * #undef NAME * /"; a macro that
     * one header leaves out and the other leaves undefined is no difference */
    const char *a = "#define A 1\n#define B \"x\"\n/* #undef C */\n#define D\n#define E 5\n"
                    "#define F 6\n";
    const char *b = "#define A 1\n#define B \"y\"\n#undef C\n#define D\n#define G 7\n"
                    "#  define E 50\n#define F 6 \n/* #undef H */\n";
    char *d = config_header_diff(a, NULL, "baseline", b, NULL, "lto");
    assert_non_null(d);
    assert_string_equal(d, "B is '\"x\"' in baseline, '\"y\"' in lto; E is '5' in baseline, '50' "
                           "in lto; G defined in lto (7), not in baseline (3 macros differ)");
    free(d);
    /* beyond CONFIG_DIFF_NAMED the differences are counted, not named */
    const char *c = "#define A 2\n#define B \"z\"\n#define C 1\n/* #undef D */\n#define E 5\n";
    d = config_header_diff(a, NULL, "baseline", c, NULL, "pgo");
    assert_non_null(d);
    assert_non_null(strstr(d, "(5 macros differ)"));
    assert_null(strstr(d, "F defined"));   /* the 5th is counted only */
    free(d);
    /* one difference: singular words */
    d = config_header_diff("#define X 1\n", NULL, "baseline", "#define X 2\n", NULL, "pgo");
    assert_string_equal(d, "X is '1' in baseline, '2' in pgo (1 macro differs)");
    free(d);
    assert_null(config_header_diff("", NULL, "baseline", "/* nothing */\n", NULL, "pgo"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_but_paths),
        cmocka_unit_test(test_mariadb_pgo_lost_checks),
        cmocka_unit_test(test_forms_and_count),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
