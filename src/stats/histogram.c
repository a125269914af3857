/* histogram: log-linear (HDR-like) latency histogram, 128 linear sub-buckets per power of two
 * over 1 us .. 100 s, so a bucket midpoint is within 1/256 (0.39%) of any value in it. */
#include "stats/histogram.h"
#include "util/util.h"

#include <assert.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

/*
 * Geometry. A value v >= 2^SUB_BITS with highest set bit e falls in octave [2^e, 2^(e+1)),
 * which is split into SUB = 2^SUB_BITS equal sub-buckets of width 2^(e-SUB_BITS). Its raw
 * index is (e-SUB_BITS)*SUB + (v >> (e-SUB_BITS)), which is continuous across octaves
 * (values below 2*SUB get raw index v itself, width 1). The stored array covers the raw
 * indices of HIST_LO .. HIST_HI, values below are clamped to the first bucket, and one more
 * bucket at the end (OVERFLOW) counts every value above HIST_HI: beyond the histogram's top.
 *
 * Concurrency: one thread writes a histogram with histogram_add(); a reporter thread may
 * read it at the same time with histogram_copy()/histogram_merge(). Every field is read and
 * written with relaxed __atomic loads/stores so neither side sees a torn 64-bit value. There
 * is no cross-field consistency: a snapshot may hold a count whose total is not yet bumped
 * (off by the few values in flight), which the percentile walk tolerates.
 */
#define SUB_BITS HISTOGRAM_SUB_BITS
#define SUB (1u << SUB_BITS)
#define HIST_LO HISTOGRAM_LOW_NS  /* 1 us */
#define HIST_HI HISTOGRAM_TOP_NS  /* 100 s */
#define raw_index histogram_raw_index  /* the header's, inline for histogram_add */

#define RAW_OFFSET raw_index(HIST_LO)
#define OVERFLOW (raw_index(HIST_HI) - RAW_OFFSET + 1)  /* index of the overflow bucket */
#define NBUCKETS (OVERFLOW + 1)

/* [lo, lo+width) of array bucket i, in ns (the natural HDR bounds, before clamping). */
static void bucket_bounds(size_t i, uint64_t *lo, uint64_t *width)
{
    size_t r = i + RAW_OFFSET;
    assert(i < OVERFLOW);  /* the overflow bucket has no bounds */
    if (r < 2 * SUB) {
        *lo = r;
        *width = 1;
        return;
    }
    unsigned shift = (unsigned)(r / SUB) - 1;
    uint64_t mant = (uint64_t)(r % SUB) + SUB;
    *lo = mant << shift;
    *width = 1ULL << shift;
}

size_t histogram_nbuckets(void)
{
    return NBUCKETS;
}

double histogram_bucket_value(size_t i)
{
    uint64_t lo, w;
    if (i >= OVERFLOW)
        return (double)HIST_HI;
    bucket_bounds(i, &lo, &w);
    double v = (double)lo + (double)w / 2.0;
    return v > (double)HIST_HI ? (double)HIST_HI : v;  /* the top bucket holds values <= top */
}

bool histogram_bucket_overflow(size_t i)
{
    return i >= OVERFLOW;
}

void histogram_init(struct histogram *h)
{
    h->nbuckets = NBUCKETS;
    /* a worker writes its counts per event: lines no other allocation shares */
    h->counts = xcalloc_aligned(h->nbuckets, sizeof(*h->counts), CACHE_LINE_PAIR);
    h->total = 0;
    h->min_ns = UINT64_MAX;
    h->max_ns = 0;
    h->sum_ns = 0;
}

void histogram_release(struct histogram *h)
{
    free(h->counts);
    h->counts = NULL;
    h->nbuckets = 0;
    h->total = 0;
    h->min_ns = UINT64_MAX;
    h->max_ns = 0;
    h->sum_ns = 0;
}

static inline uint64_t ld(const uint64_t *p)
{
    return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static inline void st(uint64_t *p, uint64_t v)
{
    __atomic_store_n(p, v, __ATOMIC_RELAXED);
}

static inline double ld_d(const double *p)
{
    double v;
    __atomic_load(p, &v, __ATOMIC_RELAXED);
    return v;
}

static inline void st_d(double *p, double v)
{
    __atomic_store(p, &v, __ATOMIC_RELAXED);
}

void histogram_reset(struct histogram *h)
{
    for (size_t i = 0; i < h->nbuckets; i++)
        st(&h->counts[i], 0);
    st(&h->total, 0);
    st(&h->min_ns, UINT64_MAX);
    st(&h->max_ns, 0);
    st_d(&h->sum_ns, 0);
}

void histogram_merge(struct histogram *dst, const struct histogram *src)
{
    size_t n = dst->nbuckets < src->nbuckets ? dst->nbuckets : src->nbuckets;
    for (size_t i = 0; i < n; i++)
        dst->counts[i] += ld(&src->counts[i]);
    dst->total += ld(&src->total);
    dst->sum_ns += ld_d(&src->sum_ns);
    uint64_t mn = ld(&src->min_ns), mx = ld(&src->max_ns);
    if (mn < dst->min_ns)
        dst->min_ns = mn;
    if (mx > dst->max_ns)
        dst->max_ns = mx;
}

void histogram_copy(struct histogram *dst, const struct histogram *src)
{
    size_t n = dst->nbuckets < src->nbuckets ? dst->nbuckets : src->nbuckets;
    for (size_t i = 0; i < n; i++)
        st(&dst->counts[i], ld(&src->counts[i]));
    for (size_t i = n; i < dst->nbuckets; i++)
        st(&dst->counts[i], 0);
    st(&dst->total, ld(&src->total));
    st_d(&dst->sum_ns, ld_d(&src->sum_ns));
    st(&dst->min_ns, ld(&src->min_ns));
    st(&dst->max_ns, ld(&src->max_ns));
}

void histogram_diff(struct histogram *dst, const struct histogram *a, const struct histogram *b)
{
    size_t n = dst->nbuckets;
    size_t first = SIZE_MAX, last = 0;
    uint64_t total = 0;
    uint64_t amin = ld(&a->min_ns), amax = ld(&a->max_ns);

    for (size_t i = 0; i < n; i++) {
        uint64_t ca = i < a->nbuckets ? ld(&a->counts[i]) : 0;
        uint64_t cb = i < b->nbuckets ? ld(&b->counts[i]) : 0;
        uint64_t c = ca > cb ? ca - cb : 0;
        dst->counts[i] = c;
        total += c;
        if (c) {
            if (first == SIZE_MAX)
                first = i;
            last = i;
        }
    }
    dst->total = total;
    double sum = ld_d(&a->sum_ns) - ld_d(&b->sum_ns);
    dst->sum_ns = total && sum > 0 ? sum : 0;
    if (!total) {
        dst->min_ns = UINT64_MAX;
        dst->max_ns = 0;
        return;
    }
    /* The true interval min/max lie in the first/last non-empty bucket and inside a's exact
     * [min,max]; clamping the bucket bounds to that makes them exact whenever a's own
     * min/max was recorded after the snapshot. */
    uint64_t lo = HIST_HI + 1, w;
    if (first < OVERFLOW)
        bucket_bounds(first, &lo, &w);
    if (first == 0)
        lo = 0; /* the first bucket also holds everything below 1 us */
    dst->min_ns = lo < amin ? amin : lo > amax ? amax : lo;
    uint64_t hi = UINT64_MAX;  /* the overflow bucket: all above 100 s */
    if (last < OVERFLOW) {
        bucket_bounds(last, &lo, &w);
        hi = lo + w - 1;
    }
    dst->max_ns = hi > amax ? amax : hi < amin ? amin : hi;
    if (dst->max_ns < dst->min_ns)
        dst->max_ns = dst->min_ns;
}

double histogram_percentile(const struct histogram *h, double p)
{
    return histogram_percentile_ex(h, p, NULL);
}

double histogram_percentile_ex(const struct histogram *h, double p, bool *overflow)
{
    uint64_t n = h->total;
    bool dummy;
    if (!overflow)
        overflow = &dummy;
    *overflow = false;
    if (!n || !h->counts)
        return 0;
    if (!(p > 0))
        p = 0;
    if (p > 100)
        p = 100;
    /* Nearest rank ceil(N*p/100); the small relative slack keeps binary-fraction noise
     * (e.g. 99.9 is not exact) from bumping an exact integer rank up by one. */
    double r = (double)n * p / 100.0;
    double rc = ceil(r - r * 1e-12);
    uint64_t rank = rc < 1 ? 1 : rc >= (double)n ? n : (uint64_t)rc;
    double lo = (double)h->min_ns, hi = (double)h->max_ns;

    /* The extreme ranks are known exactly. */
    if (rank == 1 || rank == n) {
        double v = rank == 1 ? lo : hi;
        *overflow = v > (double)HIST_HI;
        return *overflow ? (double)HIST_HI : v;
    }

    uint64_t acc = 0;
    for (size_t i = 0; i < h->nbuckets; i++) {
        acc += h->counts[i];
        if (acc >= rank) {
            if (i >= OVERFLOW) {
                *overflow = true;
                return (double)HIST_HI;
            }
            double v = histogram_bucket_value(i);
            return v < lo ? lo : v > hi ? hi : v;
        }
    }
    *overflow = hi > (double)HIST_HI; /* counts lag total in a snapshot taken mid-update */
    return *overflow ? (double)HIST_HI : hi;
}

double histogram_mean(const struct histogram *h)
{
    return h->total ? h->sum_ns / (double)h->total : 0;
}
