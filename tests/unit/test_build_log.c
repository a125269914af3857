/* Unit tests of src/pgo/build_log.c, the pgo build's log check: clang's unnamed "profile
 * data may be out of date" warnings attributed to the object compiled before them (make's
 * echoed command, cmake's "Building C object"), PostgreSQL's real frontend copies counted and
 * let through, a hot object's stale profile refused, a warning with no object refused, a
 * strict recipe refusing everything, GCC's missing-profile warnings counted, and the echoed
 * step command never taken for a message. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "pgo/build_log.h"

#include <stdlib.h>
#include <string.h>

static const char *const hot[] = { "execExprInterp", "postgres", NULL };

/* An excerpt of PostgreSQL 15's clang pgo+lto build log (make --output-sync=target). */
static const char pg_log[] =
    "$ cd /w/pgo+lto && make -j2 -C src/common "
    "COPT=-fprofile-instr-use=/w/p.profdata -Wno-error=profile-instr-out-of-date\n"
    "clang -Wall -O2 -fprofile-instr-use=/w/p.profdata -DFRONTEND -I. -c -o d2s.o "
    "/s/src/common/d2s.c\n"
    "warning: profile data may be out of date: of 2 functions, 2 have mismatched data that "
    "will be ignored [-Wprofile-instr-out-of-date]\n"
    "1 warning generated.\n"
    "clang -Wall -O2 -fprofile-instr-use=/w/p.profdata -I. -c -o d2s_srv.o /s/src/common/d2s.c\n"
    "clang -Wall -O2 -fPIC -DFRONTEND -I. -c /s/src/common/wait_error.c -o wait_error_shlib.o\n"
    "warning: profile data may be out of date: of 9 functions, 3 have mismatched data that "
    "will be ignored [-Wprofile-instr-out-of-date]\n"
    "$ cd /w/pgo+lto && make -j2 -C src/interfaces/libpq\n"
    "clang -O2 -c -o fe-exec.o /s/src/interfaces/libpq/fe-exec.c\n"
    "warning: no profile data available for file \"fe-exec.c\" [-Wprofile-instr-unprofiled]\n"
    "clang -O2 -c -o fe-misc.o /s/src/interfaces/libpq/fe-misc.c\n"
    "warning: profile data may be out of date: of 1 function, 1 has mismatched data that "
    "will be ignored [-Wprofile-instr-out-of-date]\n";

static void test_frontend_copies_counted(void **state)
{
    (void)state;
    struct build_log_scan s;
    assert_int_equal(build_log_scan(pg_log, false, hot, &s), 0);
    assert_null(s.problem);
    assert_int_equal(s.nstale, 3);
    assert_string_equal(s.stale[0].object, "d2s.o");
    assert_int_equal(s.stale[0].functions, 2);
    assert_int_equal(s.stale[0].mismatched, 2);
    assert_string_equal(s.stale[1].object, "wait_error_shlib.o"); /* -o after the source */
    assert_int_equal(s.stale[1].mismatched, 3);
    assert_string_equal(s.stale[2].object, "fe-misc.o");
    assert_int_equal(s.stale[2].functions, 1);                   /* "of 1 function, 1 has" */
    assert_int_equal(s.stale_functions, 6);
    assert_int_equal(s.missing, 1); /* clang's unprofiled file, counted as GCC's */
    build_log_scan_release(&s);
    assert_null(s.stale);
}

static void test_hot_object_refused(void **state)
{
    (void)state;
    const char log[] =
        "$ cd /w && make -C src/backend\n"
        "clang -O2 -c -o d2s.o d2s.c\n"
        "warning: profile data may be out of date: of 2 functions, 1 has mismatched data\n"
        "clang -O2 -I../../../src/include -c -o execExprInterp.o execExprInterp.c\n"
        "warning: profile data may be out of date: of 40 functions, 1 has mismatched data that "
        "will be ignored [-Wprofile-instr-out-of-date]\n";
    struct build_log_scan s;
    assert_int_equal(build_log_scan(log, false, hot, &s), -1);
    assert_non_null(s.problem);
    assert_non_null(strstr(s.problem, "execExprInterp.o (1 of 40 functions)"));
    assert_non_null(strstr(s.problem, "hot functions (execExprInterp): its profile may be stale"));
    assert_int_equal(s.nstale, 1); /* d2s.o before it was counted */
    build_log_scan_release(&s);
    /* without hot objects the same log passes */
    assert_int_equal(build_log_scan(log, false, NULL, &s), 0);
    assert_int_equal(s.nstale, 2);
    build_log_scan_release(&s);
}

static void test_unattributed_and_strict(void **state)
{
    (void)state;
    struct build_log_scan s;
    /* a warning a step's own command precedes, no compile: whose is it? */
    const char orphan[] = "$ cd /w && make -C x\n"
                          "warning: profile data may be out of date: of 3 functions, 1 has "
                          "mismatched data\n";
    assert_int_equal(build_log_scan(orphan, false, hot, &s), -1);
    assert_non_null(strstr(s.problem, "its object is unknown"));
    build_log_scan_release(&s);
    /* a new step forgets the last step's object */
    const char later[] = "clang -c -o a.o a.c\n$ cd /w && make -C y\n"
                         "warning: profile data may be out of date: of 3 functions, 1 has "
                         "mismatched data\n";
    assert_int_equal(build_log_scan(later, false, hot, &s), -1);
    build_log_scan_release(&s);
    /* strict (SQLite): every warning refuses */
    assert_int_equal(build_log_scan(pg_log, true, hot, &s), -1);
    assert_string_equal(s.problem, "'profile data may be out of date' after the compile of d2s.o");
    build_log_scan_release(&s);
    /* other clang problems refuse a lenient recipe too */
    assert_int_equal(build_log_scan("clang -c -o a.o a.c\nwarning: profile data may be corrupt\n",
                                    false, hot, &s), -1);
    build_log_scan_release(&s);
    /* out of date but no counts pgolab can read: refused, not guessed */
    assert_int_equal(build_log_scan("clang -c -o a.o a.c\nwarning: profile data may be out of "
                                    "date\n", false, hot, &s), -1);
    build_log_scan_release(&s);
}

static void test_gcc_and_cmake(void **state)
{
    (void)state;
    struct build_log_scan s;
    const char gcc[] =
        "$ cd /w && make -j2 -Werror=coverage-mismatch\n"
        "[ 10%] Building C object client/CMakeFiles/mysql.dir/mysql.c.o\n"
        "/s/client/mysql.c: warning: '/w/p/#w#client#mysql.c.gcda' profile count data file not "
        "found [-Wmissing-profile]\n"
        "/s/client/mysqldump.c: warning: profile count data file not found [-Wmissing-profile]\n";
    assert_int_equal(build_log_scan(gcc, false, hot, &s), 0);
    assert_int_equal(s.missing, 2);
    assert_int_equal(s.nstale, 0);
    build_log_scan_release(&s);
    assert_int_equal(build_log_scan(gcc, true, hot, &s), -1);
    assert_non_null(strstr(s.problem, "every object"));
    build_log_scan_release(&s);
    /* cmake's object line names the object; sql_parse.cc.o's stem is sql_parse */
    const char *const mhot[] = { "sql_parse", NULL };
    const char cm[] = "[ 50%] Building CXX object sql/CMakeFiles/sql.dir/sql_parse.cc.o\n"
                      "warning: profile data may be out of date: of 90 functions, 2 have "
                      "mismatched data that will be ignored\n";
    assert_int_equal(build_log_scan(cm, false, mhot, &s), -1);
    assert_non_null(strstr(s.problem, "sql/CMakeFiles/sql.dir/sql_parse.cc.o"));
    build_log_scan_release(&s);
    assert_int_equal(build_log_scan(NULL, false, NULL, &s), 0);
    build_log_scan_release(&s);
}

static void test_object_stem(void **state)
{
    (void)state;
    const char *cases[][2] = {
        { "src/backend/executor/execExprInterp.o", "execExprInterp" },
        { "sql/CMakeFiles/sql.dir/sql_parse.cc.o", "sql_parse" },
        { "d2s_shlib.o", "d2s_shlib" },
        { "a.cpp.o", "a" },
        { "noext", "noext" },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *s = build_log_object_stem(cases[i][0]);
        assert_string_equal(s, cases[i][1]);
        free(s);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_frontend_copies_counted),
        cmocka_unit_test(test_hot_object_refused),
        cmocka_unit_test(test_unattributed_and_strict),
        cmocka_unit_test(test_gcc_and_cmake),
        cmocka_unit_test(test_object_stem),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
