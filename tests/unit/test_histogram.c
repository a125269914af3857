/* Unit tests for stats/histogram.c: percentile accuracy against exactly sorted samples,
 * geometry, merge/diff/copy algebra and the empty case. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats/histogram.h"
#include "util/util.h"

#define NSAMPLES 100000

/* Percentiles under test, in tenths of a percent (so exact ranks need no floating point). */
static const unsigned pct10[] = { 1, 10, 500, 900, 950, 990, 999, 1000 };

static double worst_rel_err; /* largest relative error seen, reported at the end */

/* Test-local generator (splitmix64) so this file does not depend on oltp/rand.c. */
static uint64_t t_state;

static uint64_t t_next(void)
{
    uint64_t z = (t_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static double t_unit(void) /* (0,1) */
{
    return ((double)(t_next() >> 11) + 0.5) * 0x1.0p-53;
}

static double t_normal(void) /* Box-Muller */
{
    return sqrt(-2.0 * log(t_unit())) * cos(2.0 * M_PI * t_unit());
}

enum dist { D_UNIFORM, D_LOGNORMAL, D_BIMODAL, D_LOGUNIFORM, D_CONSTANT, D_SUBMICRO };

static uint64_t sample(enum dist d)
{
    switch (d) {
    case D_UNIFORM: /* 1 us .. 10 ms */
        return 1000 + t_next() % 9999001ULL;
    case D_LOGNORMAL: /* median 1 ms, sigma 1 */
        return (uint64_t)exp(log(1e6) + t_normal());
    case D_BIMODAL: /* 90% near 200 us, 10% near 50 ms */
        if (t_unit() < 0.9)
            return (uint64_t)exp(log(2e5) + 0.1 * t_normal());
        return (uint64_t)exp(log(5e7) + 0.2 * t_normal());
    case D_LOGUNIFORM: /* 1 us .. 100 s */
        return (uint64_t)exp(log(1e3) + t_unit() * (log(1e11) - log(1e3)));
    case D_CONSTANT:
        return 123456789;
    case D_SUBMICRO: /* all below the 1 us floor: only the clamp into [min,max] helps */
        return 100 + t_next() % 800;
    }
    return 0;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static uint64_t *gen(enum dist d, size_t n, uint64_t seed)
{
    uint64_t *v = xmalloc(n * sizeof(*v));
    t_state = seed;
    for (size_t i = 0; i < n; i++)
        v[i] = sample(d);
    return v;
}

/* Exact nearest-rank percentile of sorted[0..n): rank = ceil(n*p/100), at least 1. */
static uint64_t exact_pct(const uint64_t *sorted, size_t n, unsigned p10)
{
    uint64_t rank = ((uint64_t)n * p10 + 999) / 1000;
    if (rank < 1)
        rank = 1;
    return sorted[rank - 1];
}

/* Check every percentile of h against the exact one of sorted[0..n), within max_rel. */
static void check_percentiles(const struct histogram *h, const uint64_t *sorted, size_t n,
                              double max_rel, const char *what)
{
    for (size_t i = 0; i < ARRAY_SIZE(pct10); i++) {
        double p = pct10[i] / 10.0;
        double got = histogram_percentile(h, p);
        double want = (double)exact_pct(sorted, n, pct10[i]);
        double rel = fabs(got - want) / want;
        if (rel > worst_rel_err)
            worst_rel_err = rel;
        if (rel > max_rel)
            fail_msg("%s: p%.1f = %.1f, exact %.1f, relative error %.4f%% > %.2f%%", what, p, got,
                     want, rel * 100, max_rel * 100);
        if (got < (double)h->min_ns || got > (double)h->max_ns)
            fail_msg("%s: p%.1f = %.1f outside [min %llu, max %llu]", what, p, got,
                     (unsigned long long)h->min_ns, (unsigned long long)h->max_ns);
    }
}

static void check_dist(enum dist d, const char *what, double max_rel)
{
    uint64_t *v = gen(d, NSAMPLES, 1000 + (uint64_t)d);
    struct histogram h;
    histogram_init(&h);
    double sum = 0;
    for (size_t i = 0; i < NSAMPLES; i++) {
        histogram_add(&h, v[i]);
        sum += (double)v[i];
    }
    qsort(v, NSAMPLES, sizeof(*v), cmp_u64);
    assert_int_equal(h.total, NSAMPLES);
    assert_int_equal(h.min_ns, v[0]);
    assert_int_equal(h.max_ns, v[NSAMPLES - 1]);
    assert_true(fabs(histogram_mean(&h) - sum / NSAMPLES) <= 1e-9 * sum / NSAMPLES);
    check_percentiles(&h, v, NSAMPLES, max_rel, what);
    /* p0 is the minimum, p100 the maximum, and percentiles never decrease with p. */
    assert_true(histogram_percentile(&h, 0) == (double)v[0]);
    assert_true(histogram_percentile(&h, 100) == (double)v[NSAMPLES - 1]);
    double prev = 0;
    for (int p = 0; p <= 1000; p++) {
        double x = histogram_percentile(&h, p / 10.0);
        assert_true(x >= prev);
        prev = x;
    }
    histogram_release(&h);
    free(v);
}

static void test_uniform(void **state)
{
    (void)state;
    check_dist(D_UNIFORM, "uniform", 0.01);
}

static void test_lognormal(void **state)
{
    (void)state;
    check_dist(D_LOGNORMAL, "lognormal", 0.01);
}

static void test_bimodal(void **state)
{
    (void)state;
    check_dist(D_BIMODAL, "bimodal", 0.01);
}

static void test_loguniform(void **state)
{
    (void)state;
    check_dist(D_LOGUNIFORM, "1us..100s", 0.01);
}

static void test_constant(void **state)
{
    (void)state;
    check_dist(D_CONSTANT, "constant", 0.0); /* clamping into [min,max] makes it exact */
}

static void test_submicro(void **state)
{
    /* Below 1 us all values share bucket 0: only the [min,max] bounds are guaranteed. */
    (void)state;
    uint64_t *v = gen(D_SUBMICRO, 1000, 7);
    struct histogram h;
    histogram_init(&h);
    for (size_t i = 0; i < 1000; i++)
        histogram_add(&h, v[i]);
    qsort(v, 1000, sizeof(*v), cmp_u64);
    for (size_t i = 0; i < ARRAY_SIZE(pct10); i++) {
        double x = histogram_percentile(&h, pct10[i] / 10.0);
        assert_true(x >= (double)v[0] && x <= (double)v[999]);
    }
    assert_true(histogram_percentile(&h, 100) == (double)v[999]);
    histogram_release(&h);
    free(v);
}

/* Values above 100 s land in the overflow bucket (the last), max stays exact, and a
 * percentile that falls there is the top, flagged as overflow, never a bucket value. */
static void test_overflow(void **state)
{
    (void)state;
    struct histogram h;
    bool over = false;
    histogram_init(&h);
    histogram_add(&h, 500000000000ULL);
    histogram_add(&h, 700000000000ULL);
    histogram_add(&h, 5);
    assert_int_equal(h.counts[h.nbuckets - 1], 2);
    assert_true(histogram_bucket_overflow(h.nbuckets - 1));
    assert_false(histogram_bucket_overflow(h.nbuckets - 2));
    assert_int_equal(h.counts[0], 1);
    assert_int_equal(h.max_ns, 700000000000ULL);
    assert_int_equal(h.min_ns, 5);
    assert_true(histogram_percentile_ex(&h, 100, &over) == (double)HISTOGRAM_TOP_NS);
    assert_true(over);
    assert_true(histogram_percentile_ex(&h, 50, &over) == (double)HISTOGRAM_TOP_NS);
    assert_true(over);
    assert_true(histogram_percentile_ex(&h, 1, &over) == 5);
    assert_false(over);
    histogram_release(&h);

    /* exactly the top is still in range; one ns more is overflow */
    histogram_init(&h);
    for (int i = 0; i < 10; i++)
        histogram_add(&h, HISTOGRAM_TOP_NS);
    histogram_add(&h, 1000000);
    assert_int_equal(h.counts[h.nbuckets - 1], 0);
    double v = histogram_percentile_ex(&h, 95, &over);
    assert_false(over);
    assert_true(v <= (double)HISTOGRAM_TOP_NS && v > 0.99 * (double)HISTOGRAM_TOP_NS);
    histogram_add(&h, HISTOGRAM_TOP_NS + 1);
    assert_int_equal(h.counts[h.nbuckets - 1], 1);
    histogram_release(&h);
}

static void test_geometry(void **state)
{
    (void)state;
    size_t n = histogram_nbuckets();
    struct histogram h;
    histogram_init(&h);
    assert_int_equal(h.nbuckets, n);
    histogram_release(&h);
    assert_true(n >= 1000 && n <= 8192);
    assert_int_equal(histogram_bucket_index(0), 0);
    assert_int_equal(histogram_bucket_index(999), 0);
    assert_int_equal(histogram_bucket_index(1000), 0);
    assert_int_equal(histogram_bucket_index(100000000000ULL), n - 2);
    assert_int_equal(histogram_bucket_index(100000000001ULL), n - 1);  /* overflow */
    assert_int_equal(histogram_bucket_index(UINT64_MAX), n - 1);
    assert_true(histogram_bucket_value(0) >= 1000 && histogram_bucket_value(0) < 1010);
    assert_true(histogram_bucket_value(n - 2) > 1e11 * 0.99 && histogram_bucket_value(n - 2) < 1e11 * 1.01);
    assert_true(histogram_bucket_value(n - 1) == 1e11);  /* the overflow bucket shows the top */
    double prev = 0;
    for (size_t i = 0; i < n - 1; i++) {
        double m = histogram_bucket_value(i);
        assert_true(m > prev);
        prev = m;
        assert_int_equal(histogram_bucket_index((uint64_t)m), i);
    }
    /* Every integer value maps to a bucket whose midpoint is within 1/256 of it; check
     * a dense sweep of the first octaves and a geometric sweep of the rest. */
    double worst = 0;
    for (uint64_t v = 1000; v < 70000; v++) {
        double e = fabs(histogram_bucket_value(histogram_bucket_index(v)) - (double)v) / (double)v;
        if (e > worst)
            worst = e;
    }
    for (double x = 1000; x <= 1e11; x *= 1.0001) {
        uint64_t v = (uint64_t)x;
        double e = fabs(histogram_bucket_value(histogram_bucket_index(v)) - (double)v) / (double)v;
        if (e > worst)
            worst = e;
    }
    print_message("    bucket geometry: %zu buckets, max midpoint relative error %.4f%%\n", n,
                  worst * 100);
    assert_true(worst <= 1.0 / 256 + 1e-12);
}

static void fill(struct histogram *h, const uint64_t *v, size_t from, size_t to)
{
    for (size_t i = from; i < to; i++)
        histogram_add(h, v[i]);
}

static void assert_same_counts(const struct histogram *a, const struct histogram *b)
{
    assert_int_equal(a->nbuckets, b->nbuckets);
    assert_int_equal(a->total, b->total);
    assert_memory_equal(a->counts, b->counts, a->nbuckets * sizeof(*a->counts));
}

static void test_merge(void **state)
{
    (void)state;
    uint64_t *v = gen(D_LOGNORMAL, NSAMPLES, 99);
    struct histogram whole, h1, h2;
    histogram_init(&whole);
    histogram_init(&h1);
    histogram_init(&h2);
    fill(&whole, v, 0, NSAMPLES);
    fill(&h1, v, 0, NSAMPLES / 2);
    fill(&h2, v, NSAMPLES / 2, NSAMPLES);
    histogram_merge(&h1, &h2);
    assert_same_counts(&h1, &whole);
    assert_int_equal(h1.min_ns, whole.min_ns);
    assert_int_equal(h1.max_ns, whole.max_ns);
    assert_true(fabs(h1.sum_ns - whole.sum_ns) <= 1e-9 * whole.sum_ns);
    for (size_t i = 0; i < ARRAY_SIZE(pct10); i++)
        assert_true(histogram_percentile(&h1, pct10[i] / 10.0) ==
                    histogram_percentile(&whole, pct10[i] / 10.0));
    /* Merging an empty histogram changes nothing; merging into an empty one copies. */
    struct histogram empty, e2;
    histogram_init(&empty);
    histogram_init(&e2);
    histogram_merge(&h1, &empty);
    assert_same_counts(&h1, &whole);
    assert_int_equal(h1.min_ns, whole.min_ns);
    histogram_merge(&e2, &whole);
    assert_same_counts(&e2, &whole);
    assert_int_equal(e2.min_ns, whole.min_ns);
    assert_int_equal(e2.max_ns, whole.max_ns);
    histogram_release(&empty);
    histogram_release(&e2);
    histogram_release(&whole);
    histogram_release(&h1);
    histogram_release(&h2);
    free(v);
}

static void test_diff(void **state)
{
    (void)state;
    const size_t split = 60000;
    uint64_t *v = gen(D_BIMODAL, NSAMPLES, 4242);
    struct histogram a, snap, later, d;
    histogram_init(&a);
    histogram_init(&snap);
    histogram_init(&later);
    histogram_init(&d);
    fill(&a, v, 0, split);
    histogram_copy(&snap, &a);
    assert_same_counts(&snap, &a);
    fill(&a, v, split, NSAMPLES);
    fill(&later, v, split, NSAMPLES);
    histogram_diff(&d, &a, &snap);
    assert_same_counts(&d, &later);
    assert_true(fabs(d.sum_ns - later.sum_ns) <= 1e-9 * later.sum_ns);
    /* min/max of a difference are approximated within their bucket. */
    assert_true(fabs((double)d.min_ns - (double)later.min_ns) <= (double)later.min_ns / 128);
    assert_true(fabs((double)d.max_ns - (double)later.max_ns) <= (double)later.max_ns / 128);
    assert_true(d.min_ns >= a.min_ns && d.max_ns <= a.max_ns);

    size_t n = NSAMPLES - split;
    uint64_t *lv = xmalloc(n * sizeof(*lv));
    memcpy(lv, v + split, n * sizeof(*lv));
    qsort(lv, n, sizeof(*lv), cmp_u64);
    check_percentiles(&d, lv, n, 0.01, "diff");

    /* Nothing new since the snapshot: an empty difference. */
    histogram_copy(&snap, &a);
    histogram_diff(&d, &a, &snap);
    assert_int_equal(d.total, 0);
    assert_true(histogram_percentile(&d, 99) == 0);
    assert_true(histogram_mean(&d) == 0);

    /* Diff against an empty snapshot is the whole histogram, with exact min/max. */
    histogram_reset(&snap);
    histogram_diff(&d, &a, &snap);
    assert_same_counts(&d, &a);
    assert_int_equal(d.min_ns, a.min_ns);
    assert_int_equal(d.max_ns, a.max_ns);

    /* Later samples entirely above the earlier ones: the interval min must come from the
     * later samples (within a bucket), not a's overall minimum; and vice versa. */
    histogram_reset(&a);
    for (uint64_t i = 0; i < 1000; i++)
        histogram_add(&a, 1000000 + i * 1000); /* 1 .. 2 ms */
    histogram_copy(&snap, &a);
    for (uint64_t i = 0; i < 1000; i++)
        histogram_add(&a, 5000000 + i * 1000); /* 5 .. 6 ms */
    histogram_diff(&d, &a, &snap);
    assert_int_equal(d.total, 1000);
    assert_true(fabs((double)d.min_ns - 5e6) <= 5e6 / 128);
    assert_int_equal(d.max_ns, 5999000); /* a's max is newer than the snapshot: exact */
    assert_true(fabs(histogram_percentile(&d, 50) - 5.5e6) <= 5.5e6 / 100);
    histogram_copy(&snap, &a);
    for (uint64_t i = 0; i < 1000; i++)
        histogram_add(&a, 3000000 + i * 1000); /* 3 .. 4 ms: inside [min,max] of a */
    histogram_diff(&d, &a, &snap);
    assert_int_equal(d.total, 1000);
    assert_true(fabs((double)d.min_ns - 3e6) <= 3e6 / 128);
    assert_true(fabs((double)d.max_ns - 3.999e6) <= 3.999e6 / 128);
    histogram_copy(&snap, &a);
    histogram_add(&a, 10); /* a new overall minimum below 1 us: exact */
    histogram_diff(&d, &a, &snap);
    assert_int_equal(d.total, 1);
    assert_int_equal(d.min_ns, 10);
    assert_true(d.max_ns >= 10 && d.max_ns < 1010); /* bucket 0's upper bound */
    assert_true(histogram_percentile(&d, 50) == 10);
    /* Above 100 s the last bucket is open-ended: the approximated max must not undercut. */
    histogram_add(&a, 700000000000ULL);
    histogram_copy(&snap, &a);
    histogram_add(&a, 500000000000ULL);
    histogram_diff(&d, &a, &snap);
    assert_int_equal(d.total, 1);
    assert_true(d.max_ns >= 500000000000ULL && d.max_ns <= 700000000000ULL);
    assert_true(d.min_ns <= 500000000000ULL && d.min_ns >= 99000000000ULL);

    free(lv);
    histogram_release(&a);
    histogram_release(&snap);
    histogram_release(&later);
    histogram_release(&d);
    free(v);
}

static void test_empty_and_reset(void **state)
{
    (void)state;
    struct histogram h;
    histogram_init(&h);
    /* a worker writes its counts per event: they start on a line of their own */
    assert_int_equal((uintptr_t)h.counts % CACHE_LINE_PAIR, 0);
    assert_int_equal(h.total, 0);
    assert_true(h.min_ns == UINT64_MAX);
    assert_int_equal(h.max_ns, 0);
    for (size_t i = 0; i < ARRAY_SIZE(pct10); i++)
        assert_true(histogram_percentile(&h, pct10[i] / 10.0) == 0);
    assert_true(histogram_percentile(&h, 0) == 0);
    assert_true(histogram_mean(&h) == 0);

    histogram_add(&h, 5000);
    assert_true(histogram_percentile(&h, 50) == 5000);
    assert_true(histogram_mean(&h) == 5000);
    histogram_reset(&h);
    assert_int_equal(h.total, 0);
    assert_true(h.min_ns == UINT64_MAX);
    assert_int_equal(h.max_ns, 0);
    assert_true(h.sum_ns == 0);
    for (size_t i = 0; i < h.nbuckets; i++)
        assert_int_equal(h.counts[i], 0);
    assert_true(histogram_percentile(&h, 50) == 0);
    histogram_release(&h);
}

/* Out-of-range p is clamped; tiny p gives rank 1 (the minimum). */
static void test_rank_edges(void **state)
{
    (void)state;
    struct histogram h;
    histogram_init(&h);
    for (uint64_t i = 1; i <= 10; i++)
        histogram_add(&h, i * 1000000);
    assert_true(histogram_percentile(&h, -5) == 1e6);
    assert_true(histogram_percentile(&h, 1e-9) == 1e6);
    assert_true(histogram_percentile(&h, 250) == 1e7);
    /* rank ceil(10*0.3)=3 and ceil(10*0.31)=4 */
    assert_true(fabs(histogram_percentile(&h, 30) - 3e6) <= 3e6 / 256);
    assert_true(fabs(histogram_percentile(&h, 31) - 4e6) <= 4e6 / 256);
    assert_true(fabs(histogram_percentile(&h, 90) - 9e6) <= 9e6 / 256);
    assert_true(histogram_percentile(&h, 90.0001) == 1e7);
    histogram_release(&h);

    /* 41000*99.9/100 evaluates to 40959.00000000001 in doubles; the exact rank is 40959,
     * so a plain ceil() would step one sample too far: ranks 1..40959 are 1 ms, the rest 2 ms. */
    histogram_init(&h);
    for (uint64_t i = 1; i <= 41000; i++)
        histogram_add(&h, i <= 40959 ? 1000000 : 2000000);
    assert_true(fabs(histogram_percentile(&h, 99.9) - 1e6) <= 1e6 / 256);
    assert_true(fabs(histogram_percentile(&h, 99.91) - 2e6) <= 2e6 / 256);
    /* NaN p is treated as 0 (rank 1). */
    assert_true(histogram_percentile(&h, NAN) == 1e6);
    histogram_release(&h);
}

/* One writer, one snapshotting reader: totals seen never go backwards and the final
 * snapshot is complete. */
struct writer_arg {
    struct histogram *h;
    int done;
};

static void *writer(void *p)
{
    struct writer_arg *w = p;
    for (uint64_t i = 0; i < 2000000; i++)
        histogram_add(w->h, 1000 + (i * 7919) % 10000000);
    __atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

static void test_concurrent_snapshot(void **state)
{
    (void)state;
    struct histogram h, snap;
    histogram_init(&h);
    histogram_init(&snap);
    struct writer_arg w = { &h, 0 };
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, writer, &w), 0);
    uint64_t last = 0;
    while (!__atomic_load_n(&w.done, __ATOMIC_ACQUIRE)) {
        histogram_copy(&snap, &h);
        assert_true(snap.total >= last);
        last = snap.total;
        if (snap.total) {
            double p = histogram_percentile(&snap, 99);
            assert_true(p >= (double)snap.min_ns && p <= (double)snap.max_ns);
        }
    }
    pthread_join(t, NULL);
    histogram_copy(&snap, &h);
    assert_int_equal(snap.total, 2000000);
    uint64_t sum = 0;
    for (size_t i = 0; i < snap.nbuckets; i++)
        sum += snap.counts[i];
    assert_int_equal(sum, 2000000);
    histogram_release(&h);
    histogram_release(&snap);
}

/* Runs last: print the worst percentile error measured by the accuracy tests above. */
static void test_report_worst(void **state)
{
    (void)state;
    print_message("    worst percentile relative error vs exact nearest rank: %.4f%%\n",
                  worst_rel_err * 100);
    assert_true(worst_rel_err <= 0.01);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_geometry),
        cmocka_unit_test(test_uniform),
        cmocka_unit_test(test_lognormal),
        cmocka_unit_test(test_bimodal),
        cmocka_unit_test(test_loguniform),
        cmocka_unit_test(test_constant),
        cmocka_unit_test(test_submicro),
        cmocka_unit_test(test_overflow),
        cmocka_unit_test(test_merge),
        cmocka_unit_test(test_diff),
        cmocka_unit_test(test_empty_and_reset),
        cmocka_unit_test(test_rank_edges),
        cmocka_unit_test(test_concurrent_snapshot),
        cmocka_unit_test(test_report_worst),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
