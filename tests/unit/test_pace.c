/* Unit tests of experiment/pace.c: when a progress line is due off a terminal (at most one
 * per interval; a round's end, or a run's start within a long round), the interval knob, and
 * the durations of the ETA. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "experiment/pace.h"
#include "util/strbuf.h"

#include <math.h>
#include <stdlib.h>

static void test_short_rounds(void **state)
{
    (void)state;
    struct pace p;
    pace_begin(&p, 1000, 60);
    /* rounds of 10 s: no line inside them, one round end a minute */
    int lines = 0;
    for (int r = 0; r < 12; r++) {
        double t0 = 1000 + 10.0 * r;
        pace_round(&p, t0);
        for (int run = 0; run < 4; run++)
            assert_false(pace_due(&p, t0 + 2.5 * run, false));
        if (pace_due(&p, t0 + 10, true)) {
            pace_printed(&p, t0 + 10);
            lines++;
        }
    }
    assert_int_equal(lines, 2); /* at 1060 and 1120 */
}

static void test_long_rounds(void **state)
{
    (void)state;
    struct pace p;
    pace_begin(&p, 0, 60);
    pace_round(&p, 0);
    assert_false(pace_due(&p, 30, false));   /* the round is young */
    assert_true(pace_due(&p, 90, false));    /* a long round: a line at a run's start */
    pace_printed(&p, 90);
    assert_false(pace_due(&p, 120, false));  /* never two within the interval */
    assert_false(pace_due(&p, 120, true));
    assert_true(pace_due(&p, 150, true));    /* its end, a minute after the last line */
    pace_printed(&p, 150);
    pace_round(&p, 150);
    assert_false(pace_due(&p, 200, false));  /* the next round is young again */
    assert_true(pace_due(&p, 211, false));
}

static void test_zero_interval(void **state)
{
    (void)state;
    struct pace p;
    pace_begin(&p, 5, 0);
    pace_round(&p, 5);
    assert_true(pace_due(&p, 5, true));      /* every round's end */
    assert_false(pace_due(&p, 6, false));    /* but no line per run */
}

static void test_interval_knob(void **state)
{
    (void)state;
    unsetenv(PACE_KNOB);
    assert_true(pace_interval() == PACE_INTERVAL_DEFAULT_S);
    setenv(PACE_KNOB, "2.5", 1);
    assert_true(pace_interval() == 2.5);
    setenv(PACE_KNOB, "0", 1);
    assert_true(pace_interval() == 0);
    setenv(PACE_KNOB, "-1", 1);
    assert_true(pace_interval() == PACE_INTERVAL_DEFAULT_S);
    setenv(PACE_KNOB, "soon", 1);
    assert_true(pace_interval() == PACE_INTERVAL_DEFAULT_S);
    unsetenv(PACE_KNOB);
}

static void check_duration(double s, const char *want)
{
    struct strbuf sb = STRBUF_INIT;
    strbuf_init(&sb, 0);
    pace_add_duration(&sb, s);
    assert_string_equal(sb.buf, want);
    strbuf_release(&sb);
}

static void test_duration(void **state)
{
    (void)state;
    check_duration(0, "0s");
    check_duration(44.6, "45s");
    check_duration(190, "3m10s");
    check_duration(3720, "1h02m");
    check_duration(-3, "0s");
    check_duration(NAN, "0s");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_short_rounds),
        cmocka_unit_test(test_long_rounds),
        cmocka_unit_test(test_zero_interval),
        cmocka_unit_test(test_interval_knob),
        cmocka_unit_test(test_duration),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
