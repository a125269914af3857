/* test_loaded: the row count a prepare keeps for its parent (oltp/loaded.c): what threads add
 * is read back whole, and a file without a count reads as none. */
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

#include "oltp/loaded.h"

static void *add_many(void *arg)
{
    (void)arg;
    for (int i = 0; i < 1000; i++)
        oltp_loaded_add(3);
    return NULL;
}

static void test_count_and_read(void **state)
{
    (void)state;
    char path[] = "/tmp/pgolab-test-loaded.XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(oltp_loaded_read(path), -1); /* empty: no count yet */
    setenv(OLTP_LOADED_ENV, path, 1);
    oltp_loaded_add(100);
    assert_int_equal(oltp_loaded_read(path), 100);
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&t[i], NULL, add_many, NULL), 0);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    assert_int_equal(oltp_loaded_read(path), 100 + 4 * 1000 * 3);
    unlink(path);
    assert_int_equal(oltp_loaded_read(path), -1); /* gone */
    assert_int_equal(oltp_loaded_read("/nonexistent/pgolab-loaded"), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_count_and_read),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
