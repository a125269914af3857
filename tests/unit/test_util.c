/* Unit tests for util/util.c: xcalloc_aligned's alignment, zeroing and rounding (per-thread
 * state of the runner and the histograms lives on cache lines of its own through it). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "util/util.h"

static void test_aligned_and_zeroed(void **state)
{
    (void)state;
    static const size_t sizes[] = { 1, 7, 64, 127, 128, 129, 1304, 27152 };
    for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
        for (size_t align = sizeof(void *); align <= 4096; align *= 2) {
            unsigned char *p = xcalloc_aligned(3, sizes[i], align);
            assert_int_equal((uintptr_t)p % align, 0);
            /* every byte of the rounded-up size is there and zero */
            size_t n = (3 * sizes[i] + align - 1) / align * align;
            for (size_t k = 0; k < n; k++)
                assert_int_equal(p[k], 0);
            memset(p, 0xA5, n);  /* writable to the end of the last line (ASan checks it) */
            free(p);
        }
    }
}

static void test_zero_count(void **state)
{
    (void)state;
    /* as xcalloc: a zero count or size still returns a usable, freeable block */
    void *p = xcalloc_aligned(0, 8, CACHE_LINE_PAIR);
    assert_non_null(p);
    assert_int_equal((uintptr_t)p % CACHE_LINE_PAIR, 0);
    free(p);
    p = xcalloc_aligned(4, 0, 64);
    assert_non_null(p);
    free(p);
}

/* Two blocks never share a line: one ends where a line ends. */
static void test_no_shared_line(void **state)
{
    (void)state;
    char *a = xcalloc_aligned(1, 130, CACHE_LINE_PAIR);
    char *b = xcalloc_aligned(1, 130, CACHE_LINE_PAIR);
    uintptr_t a_end = (uintptr_t)a + 2 * CACHE_LINE_PAIR, b0 = (uintptr_t)b;
    uintptr_t b_end = b0 + 2 * CACHE_LINE_PAIR, a0 = (uintptr_t)a;
    assert_true(a_end <= b0 || b_end <= a0);
    free(a);
    free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_aligned_and_zeroed),
        cmocka_unit_test(test_zero_count),
        cmocka_unit_test(test_no_shared_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
