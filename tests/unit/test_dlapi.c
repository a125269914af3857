/* Unit tests for util/dlapi.c and the client library tables built on it (util/libpq_api.h,
 * util/libmariadb_api.h): a table is filled once and shared by every thread, a library or
 * function that is missing is one error line naming it and the package, and libpq and
 * libmariadb load through their tables with their functions callable as plain API calls. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/dlapi.h"
#include "util/libmariadb_api.h"
#include "util/libpq_api.h"
#include "util/strbuf.h"
#include "util/util.h"

struct mathlib {
    double (*cos)(double);
    double (*sqrt)(double);
};

/* A fresh description of libm with the two functions (or a missing one for the second). */
static void mathlib_init(struct dlapi_lib *lib, struct mathlib *t, const char *soname,
                         const char *second)
{
    static struct dlapi_sym syms[2];
    syms[0] = (struct dlapi_sym){ "cos", offsetof(struct mathlib, cos) };
    syms[1] = (struct dlapi_sym){ second, offsetof(struct mathlib, sqrt) };
    memset(t, 0, sizeof(*t));
    *lib = (struct dlapi_lib){ .what = "the test library", .soname = soname,
                               .package = "pgolab-test", .syms = syms, .nsyms = 2,
                               .table = t, .lock = PTHREAD_MUTEX_INITIALIZER };
}

/* dlapi_load(lib) with stderr sent to a temporary file; *err gets what was written there. */
static void *load_capturing(struct dlapi_lib *lib, char **err)
{
    char path[] = "/tmp/pgolab-test-dlapi-XXXXXX";
    int tmp = mkstemp(path);
    assert_true(tmp >= 0);
    fflush(stderr);
    int saved = dup(2);
    assert_true(saved >= 0 && dup2(tmp, 2) >= 0);
    void *t = dlapi_load(lib);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    close(tmp);
    struct strbuf sb = STRBUF_INIT;
    assert_int_equal(strbuf_read_file(&sb, path), 0);
    unlink(path);
    *err = strbuf_detach(&sb);
    return t;
}

static void test_load_fills_the_table_once(void **state)
{
    (void)state;
    struct dlapi_lib lib;
    struct mathlib t;
    mathlib_init(&lib, &t, "libm.so.6", "sqrt");
    char *err;
    assert_ptr_equal(load_capturing(&lib, &err), &t);
    assert_string_equal(err, "");
    free(err);
    assert_true(t.cos(0.0) == 1.0);
    assert_true(t.sqrt(16.0) == 4.0);
    /* a second call returns the same table and does not load again */
    t.sqrt = NULL;
    assert_ptr_equal(dlapi_load(&lib), &t);
    assert_null(t.sqrt);
}

static void test_missing_library(void **state)
{
    (void)state;
    struct dlapi_lib lib;
    struct mathlib t;
    mathlib_init(&lib, &t, "libpgolab-no-such-library.so.1", "sqrt");
    char *err;
    assert_null(load_capturing(&lib, &err));
    assert_non_null(strstr(err, "FATAL: cannot load the test library libpgolab-no-such-library.so.1 ("));
    assert_non_null(strstr(err, "); install the Debian package pgolab-test\n"));
    assert_string_equal(strchr(err, '\n'), "\n"); /* one line */
    free(err);
    assert_null(lib.loaded);
}

static void test_missing_function(void **state)
{
    (void)state;
    struct dlapi_lib lib;
    struct mathlib t;
    mathlib_init(&lib, &t, "libm.so.6", "pgolab_no_such_function");
    char *err;
    assert_null(load_capturing(&lib, &err));
    assert_string_equal(err, "FATAL: the test library libm.so.6 has no function "
                             "pgolab_no_such_function; install the Debian package pgolab-test\n");
    free(err);
    /* a later call tries again, and fails again: the table is never half-used */
    assert_null(load_capturing(&lib, &err));
    free(err);
    assert_null(lib.loaded);
}

static struct dlapi_lib shared_lib;
static struct mathlib shared_table;
static void *load_thread(void *arg)
{
    (void)arg;
    return dlapi_load(&shared_lib);
}

static void test_threads_share_one_load(void **state)
{
    (void)state;
    mathlib_init(&shared_lib, &shared_table, "libm.so.6", "sqrt");
    pthread_t th[8];
    for (int i = 0; i < 8; i++)
        assert_int_equal(pthread_create(&th[i], NULL, load_thread, NULL), 0);
    for (int i = 0; i < 8; i++) {
        void *got;
        assert_int_equal(pthread_join(th[i], &got), 0);
        assert_ptr_equal(got, &shared_table);
    }
    assert_true(shared_table.sqrt(9.0) == 3.0);
}

/* The client tables: loaded by their first call, and their macros are the library's own
 * functions. */
static void test_client_libraries(void **state)
{
    (void)state;
    const struct libpq_api *pq = libpq_api_load();
    assert_non_null(pq);
    assert_ptr_equal(libpq_api(), pq);
    assert_true(PQlibVersion() >= 100000); /* libpq 10 and later: major * 10000 + minor */
    const struct libmariadb_api *my = libmariadb_api_load();
    assert_non_null(my);
    assert_ptr_equal(libmariadb_api(), my);
    const char *v = mysql_get_client_info();
    assert_non_null(v);
    assert_true(v[0] >= '1' && v[0] <= '9' && strchr(v, '.'));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_load_fills_the_table_once),
        cmocka_unit_test(test_missing_library),
        cmocka_unit_test(test_missing_function),
        cmocka_unit_test(test_threads_share_one_load),
        cmocka_unit_test(test_client_libraries),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
