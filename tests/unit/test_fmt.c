/* Unit tests for util/fmt.c: iso_time() of ordinary times and of values that are no time
 * (a damaged results database gave 1.6e248 s, found by tests/fuzz/fuzz_store.c: converting it
 * to time_t was undefined behaviour and gmtime_r failed, leaving struct tm unset). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>

#include "util/fmt.h"
#include "util/strbuf.h"

/* iso_time(t) as a string compared with want */
static void check_time(double t, const char *want)
{
    struct strbuf sb = STRBUF_INIT;
    strbuf_init(&sb, 0);
    iso_time(&sb, t);
    assert_string_equal(sb.buf, want);
    strbuf_release(&sb);
}

static void test_iso_time(void **state)
{
    (void)state;
    check_time(0, "1970-01-01T00:00:00Z");
    check_time(1764643330.7, "2025-12-02T02:42:10Z");
    check_time(253402300799.0, "9999-12-31T23:59:59Z");
}

static void test_iso_time_not_a_time(void **state)
{
    (void)state;
    check_time(1.63858e+248, "unknown");
    check_time(253402300800.0, "unknown");
    check_time(-1, "unknown");
    check_time(NAN, "unknown");
    check_time(INFINITY, "unknown");
    check_time(-INFINITY, "unknown");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_iso_time),
        cmocka_unit_test(test_iso_time_not_a_time),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
