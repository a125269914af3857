/* Unit tests of the environment of an experiment (src/model/environment): the differences
 * between two recorded environments, with and without the load. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "model/environment.h"
#include "util/strbuf.h"

static void test_env_diff(void **state)
{
    (void)state;
    struct strbuf sb = STRBUF_INIT;
    const char *a = "{\"hostname\":\"client-a\",\"kernel\":\"6.1.0-18\",\"cores\":2,"
                    "\"memory_bytes\":8589934592,\"loadavg_1m\":0.1,\"pgolab_version\":\"0.1.0\"}";
    const char *b = "{\"hostname\":\"client-b\",\"kernel\":\"6.1.0-18\",\"cores\":4,"
                    "\"memory_bytes\":8589934592,\"loadavg_1m\":1.0,\"pgolab_version\":\"0.1.0\"}";
    assert_int_equal(experiment_env_diff(a, b, true, &sb), 3);
    assert_string_equal(sb.buf, "hostname: client-a -> client-b\ncores: 2 -> 4\n"
                                "load (1 min, at start): 0.10 -> 1.00\n");
    strbuf_reset(&sb);
    assert_int_equal(experiment_env_diff(a, b, false, &sb), 2);
    strbuf_reset(&sb);
    /* Load within 0.5 is the same machine. */
    assert_int_equal(experiment_env_diff(a, a, true, &sb), 0);
    assert_int_equal(sb.len, 0);
    /* A key only one side has. */
    assert_int_equal(experiment_env_diff("{\"cpu_model\":\"X\"}", "{}", true, &sb), 1);
    assert_string_equal(sb.buf, "CPU model: X -> (unknown)\n");
    strbuf_release(&sb);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_env_diff),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
