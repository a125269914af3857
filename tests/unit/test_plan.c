/* Unit tests of the run order (src/experiment/plan): every block's order is a permutation,
 * reproducible from (seed, round, block), and differs across rounds and seeds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "experiment/plan.h"

#include <string.h>

static void test_order_is_permutation(void **state)
{
    (void)state;
    int order[6], again[6];
    for (uint64_t seed = 0; seed < 20; seed++)
        for (int round = 1; round <= 5; round++)
            for (int block = 0; block < 4; block++) {
                int seen[6] = { 0 };
                experiment_order(seed, round, block, 6, order);
                for (int i = 0; i < 6; i++) {
                    assert_in_range(order[i], 0, 5);
                    seen[order[i]]++;
                }
                for (int i = 0; i < 6; i++)
                    assert_int_equal(seen[i], 1);
                /* Deterministic: the same (seed, round, block) gives the same order. */
                experiment_order(seed, round, block, 6, again);
                assert_memory_equal(order, again, sizeof(order));
            }
    /* n = 1 and n = 2 are permutations too. */
    experiment_order(3, 1, 0, 1, order);
    assert_int_equal(order[0], 0);
    experiment_order(3, 1, 0, 2, order);
    assert_int_equal(order[0] + order[1], 1);
}

static void test_order_differs_across_rounds(void **state)
{
    (void)state;
    int first[4], other[4], differs = 0, two[2], twodiff = 0;
    experiment_order(42, 1, 0, 4, first);
    for (int round = 2; round <= 10; round++) {
        experiment_order(42, round, 0, 4, other);
        differs += memcmp(first, other, sizeof(first)) != 0;
    }
    assert_true(differs > 0);
    /* With two variants, both orders (A B and B A) occur over 20 rounds. */
    int firsta = -1;
    for (int round = 1; round <= 20; round++) {
        experiment_order(42, round, 0, 2, two);
        if (firsta < 0)
            firsta = two[0];
        twodiff += two[0] != firsta;
    }
    assert_true(twodiff > 0);
    /* A different seed gives a different sequence of orders. */
    int s1[4], s2[4], seeddiff = 0;
    for (int round = 1; round <= 10; round++) {
        experiment_order(1, round, 0, 4, s1);
        experiment_order(2, round, 0, 4, s2);
        seeddiff += memcmp(s1, s2, sizeof(s1)) != 0;
    }
    assert_true(seeddiff > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_order_is_permutation),
        cmocka_unit_test(test_order_differs_across_rounds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
