/* Unit tests for bench/arrivals.c (--rate): the arrivals of a time window number about
 * rate x window (a Poisson count), come in time order inside the window, a queue nobody empties
 * overflows and stops at its capacity, pops are counted as events started (the achieved rate),
 * and a popper is released by stop. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <time.h>

#include "bench/arrivals.h"
#include "util/util.h"

static void nap_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

/* Wait until the window [.., end) is over and the generator has pushed all of it (its length
 * stays put for 100 ms; a loaded machine may hold the thread up), at most 10 s. */
static size_t settled_length(struct arrivals *a, uint64_t end)
{
    while (now_ns() < end)
        nap_ms(20);
    size_t n = arrivals_length(a), m;
    for (int i = 0; i < 100; i++) {
        nap_ms(100);
        if ((m = arrivals_length(a)) == n)
            break;
        n = m;
    }
    return n;
}

/* 2000/s over 0.5 s: 1000 expected, sd ~32; every timestamp in the window, in order. */
static void test_count_and_order(void **state)
{
    (void)state;
    struct arrivals a;
    volatile int stop = 0;
    uint64_t start = now_ns(), end = start + 500000000ull, t, prev = 0;
    assert_int_equal(arrivals_start(&a, 2000, ARRIVALS_QUEUE_SLOTS, 42, start, end), 0);
    size_t n = settled_length(&a, end);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(arrivals_pop(&a, &t, &stop), 0);
        assert_true(t >= start && t < end);
        assert_true(t >= prev);
        prev = t;
    }
    assert_false(arrivals_overflowed(&a));
    assert_int_equal(arrivals_taken(&a), n);  /* every pop is an event started */
    assert_true(n >= 850 && n <= 1150);  /* about 5 sd either side */
    /* the window is over: nothing more comes, and a stopped queue releases its popper */
    arrivals_stop(&a);
    assert_int_equal(arrivals_pop(&a, &t, &stop), -1);
    arrivals_release(&a);
}

/* Gaps are exponential: their coefficient of variation is 1 (a constant rate would give 0). */
static void test_gaps_exponential(void **state)
{
    (void)state;
    struct arrivals a;
    volatile int stop = 0;
    uint64_t start = now_ns(), end = start + 400000000ull, t, prev = start;
    assert_int_equal(arrivals_start(&a, 5000, ARRIVALS_QUEUE_SLOTS, 7, start, end), 0);
    size_t n = settled_length(&a, end);
    double s = 0, ss = 0;
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(arrivals_pop(&a, &t, &stop), 0);
        double g = (double)(t - prev);
        s += g;
        ss += g * g;
        prev = t;
    }
    double mean = s / (double)n, sd = sqrt(ss / (double)n - mean * mean);
    assert_true(fabs(mean - 200000.0) < 20000.0);  /* 1/5000 s */
    assert_true(sd / mean > 0.85 && sd / mean < 1.15);
    arrivals_release(&a);
}

/* Nobody pops: the queue fills to its capacity, says it overflowed, and the generator stops. */
static void test_overflow(void **state)
{
    (void)state;
    struct arrivals a;
    uint64_t start = now_ns();
    assert_int_equal(arrivals_start(&a, 1e6, 1000, 1, start, 0), 0);
    for (int i = 0; i < 200 && !arrivals_overflowed(&a); i++)
        nap_ms(5);
    assert_true(arrivals_overflowed(&a));
    assert_int_equal(arrivals_length(&a), 1000);
    assert_int_equal(arrivals_taken(&a), 0);  /* none started: the achieved rate is 0 */
    arrivals_release(&a);
}

/* A worker waiting on an empty queue returns -1 once the run's stop flag is set. */
static void test_stop_releases(void **state)
{
    (void)state;
    struct arrivals a;
    volatile int stop = 1;
    uint64_t t;
    assert_int_equal(arrivals_start(&a, 0.001, 16, 1, now_ns(), 0), 0);
    assert_int_equal(arrivals_pop(&a, &t, &stop), -1);
    arrivals_release(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_count_and_order),
        cmocka_unit_test(test_gaps_exponential),
        cmocka_unit_test(test_overflow),
        cmocka_unit_test(test_stop_releases),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
