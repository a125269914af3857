/* Unit tests for src/pgo/search_rank.c: the screen's order of the candidates (best change
 * first, no data last, ties in the given order), which the confirmation keeps, and the
 * confirmation's winner (the best significant gain; none when nothing is significantly
 * better). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdbool.h>

#include "pgo/search_rank.h"

static void test_rank_order(void **state)
{
    (void)state;
    const double pct[] = { -0.4, 3.2, NAN, 1.5, 3.2, -7.0 };
    int order[6];
    search_rank(pct, 6, order);
    const int want[] = { 1, 4, 3, 0, 5, 2 }; /* 3.2 twice: in the given order; NAN last */
    for (int i = 0; i < 6; i++)
        assert_int_equal(order[i], want[i]);
}

static void test_rank_empty_and_one(void **state)
{
    (void)state;
    int order[1] = { 42 };
    search_rank(NULL, 0, NULL);
    const double one[] = { NAN };
    search_rank(one, 1, order);
    assert_int_equal(order[0], 0);
}

static void test_keep(void **state)
{
    (void)state;
    const double pct[] = { -0.4, 3.2, NAN, 1.5 };
    bool keep[4];
    assert_int_equal(search_keep(pct, 4, 2, keep), 2);
    assert_false(keep[0]);
    assert_true(keep[1]);
    assert_false(keep[2]);
    assert_true(keep[3]);
    /* more wanted than have data: every one with a change, never the NAN one */
    assert_int_equal(search_keep(pct, 4, 10, keep), 3);
    assert_true(keep[0] && keep[1] && keep[3]);
    assert_false(keep[2]);
    /* the worst is kept only when wanted */
    assert_int_equal(search_keep(pct, 4, 1, keep), 1);
    assert_true(keep[1]);
    assert_false(keep[0] || keep[2] || keep[3]);
}

static void test_keep_no_data(void **state)
{
    (void)state;
    const double pct[] = { NAN, NAN };
    bool keep[2] = { true, true };
    assert_int_equal(search_keep(pct, 2, 2, keep), 0);
    assert_false(keep[0] || keep[1]);
}

static void test_winner(void **state)
{
    (void)state;
    const double pct[] = { 2.0, 5.0, 4.0, -1.0 };
    const bool sig[] = { true, false, true, true };
    /* 5.0 is not significant; the best significant gain is 4.0 */
    assert_int_equal(search_winner(pct, sig, 4), 2);
    const bool none[] = { false, false, false, true };
    /* only a significant loss: no winner */
    assert_int_equal(search_winner(pct, none, 4), -1);
    assert_int_equal(search_winner(pct, sig, 0), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rank_order),
        cmocka_unit_test(test_rank_empty_and_one),
        cmocka_unit_test(test_keep),
        cmocka_unit_test(test_keep_no_data),
        cmocka_unit_test(test_winner),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
