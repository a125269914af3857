/* test_knobs: the test-only environment knobs (util/knobs.c): which are recorded, and that
 * the announcement marks the environment so child processes stay quiet. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "util/knobs.h"

static void clear_all(void)
{
    for (const struct test_knob *k = test_knobs; k->name; k++)
        unsetenv(k->name);
    unsetenv("PGOLAB_TEST_KNOBS_ANNOUNCED");
}

static void test_none_set(void **state)
{
    (void)state;
    clear_all();
    assert_null(knobs_json());
    setenv("PGOLAB_THROTTLE", "", 1); /* empty = not set */
    assert_null(knobs_json());
}

static void test_recorded(void **state)
{
    (void)state;
    clear_all();
    setenv("PGOLAB_THROTTLE", "0.8:/x/lib.so", 1);
    setenv("PGOLAB_PGO_EXTRA_CFLAGS", "-DX=1", 1);
    json_t *o = knobs_json();
    assert_non_null(o);
    assert_int_equal(json_object_size(o), 2);
    assert_string_equal(json_string_value(json_object_get(o, "PGOLAB_THROTTLE")), "0.8:/x/lib.so");
    assert_string_equal(json_string_value(json_object_get(o, "PGOLAB_PGO_EXTRA_CFLAGS")), "-DX=1");
    json_decref(o);
}

static void test_table(void **state)
{
    (void)state;
    static const char *const want[] = { "PGOLAB_THROTTLE", "PGOLAB_FAULT_RETRY_EVERY",
                                        "PGOLAB_FAULT_AT", "PGOLAB_SQLITE_LOAD",
                                        "PGOLAB_PGO_EXTRA_CFLAGS", "PGOLAB_CHARTJS",
                                        "PGOLAB_LATENCY_FILE", "PGOLAB_PROGRESS_EVERY",
                                        "PGOLAB_METRICS_PROC" };
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        int found = 0;
        for (const struct test_knob *k = test_knobs; k->name; k++)
            found += !strcmp(k->name, want[i]) && k->what && *k->what;
        assert_int_equal(found, 1);
    }
}

/* Last: knobs_announce() prints once per process and marks the environment. */
static void test_announce_marks_children(void **state)
{
    (void)state;
    clear_all();
    setenv("PGOLAB_FAULT_RETRY_EVERY", "5", 1);
    knobs_announce();
    assert_non_null(getenv("PGOLAB_TEST_KNOBS_ANNOUNCED"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_none_set),
        cmocka_unit_test(test_recorded),
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_announce_marks_children),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
