/* histogram: log-linear latency histogram, one per worker thread, mergeable by the reporter.
 * Values are nanoseconds. Relative error of any reported percentile <= 1% over 1 us .. 100 s
 * (sysbench 1.0.20's 1024-bucket log grid has ~1.8%); values above 100 s (the top,
 * HISTOGRAM_TOP_NS) are counted in an overflow bucket and a percentile that falls there is
 * flagged, never shown as a bucket value. The struct owns its bucket array, which starts and
 * ends on cache lines of its own (a worker writes it per event while others run). */
#ifndef PGOLAB_HISTOGRAM_H
#define PGOLAB_HISTOGRAM_H

#include <assert.h>
#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

#define HISTOGRAM_TOP_NS 100000000000ULL  /* 100 s: values above are overflow */

/* The geometry (histogram.c explains it): 2^HISTOGRAM_SUB_BITS sub-buckets per power of two,
 * values from HISTOGRAM_LOW_NS up. Here for the inline histogram_add only. */
#define HISTOGRAM_SUB_BITS 7
#define HISTOGRAM_LOW_NS 1000ULL  /* 1 us: values below count in the first bucket */

struct histogram {
    uint64_t *counts;  /* nbuckets counters */
    size_t nbuckets;
    uint64_t total;    /* number of recorded values */
    uint64_t min_ns;   /* exact minimum (UINT64_MAX when empty) */
    uint64_t max_ns;   /* exact maximum (0 when empty) */
    double sum_ns;     /* exact sum */
};

void histogram_init(struct histogram *h);
void histogram_release(struct histogram *h);
void histogram_reset(struct histogram *h);
/* The raw index of value v on the log-linear grid (continuous across octaves). */
static inline size_t histogram_raw_index(uint64_t v)
{
    if (v < 2u << HISTOGRAM_SUB_BITS)
        return (size_t)v;
    unsigned shift = 63u - (unsigned)__builtin_clzll(v) - HISTOGRAM_SUB_BITS;
    return ((size_t)shift << HISTOGRAM_SUB_BITS) + (size_t)(v >> shift);
}

/* Index of the bucket a value in ns is counted in (below 1 us: the first; above 100 s: the
 * overflow bucket, the last). */
static inline size_t histogram_bucket_index(uint64_t ns)
{
    if (ns > HISTOGRAM_TOP_NS)
        return histogram_raw_index(HISTOGRAM_TOP_NS) - histogram_raw_index(HISTOGRAM_LOW_NS) + 1;
    return histogram_raw_index(ns < HISTOGRAM_LOW_NS ? HISTOGRAM_LOW_NS : ns) -
           histogram_raw_index(HISTOGRAM_LOW_NS);
}

/* Record one value in ns. Values below 1 us go to the first bucket, above 100 s to the
 * overflow bucket (the last; min/max/sum stay exact). Single writer; no locking. Fields are
 * updated with relaxed atomic stores, so another thread may histogram_copy()/histogram_merge()
 * it concurrently and see untorn (if slightly inconsistent) values. Inline: a worker calls it
 * per event, where a call costs about as much as the work. */
static inline void histogram_add(struct histogram *h, uint64_t ns)
{
    size_t i = histogram_bucket_index(ns);
    assert(i < h->nbuckets);
    uint64_t *c = &h->counts[i];
    __atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
    __atomic_store_n(&h->total, __atomic_load_n(&h->total, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
    double sum;
    __atomic_load(&h->sum_ns, &sum, __ATOMIC_RELAXED);
    sum += (double)ns;
    __atomic_store(&h->sum_ns, &sum, __ATOMIC_RELAXED);
    /* min and max without a branch on the value: the same instructions run whatever the
     * latency, so `--measure=instructions` counts (callgrind) do not follow the clock */
    uint64_t lo = __atomic_load_n(&h->min_ns, __ATOMIC_RELAXED);
    uint64_t hi = __atomic_load_n(&h->max_ns, __ATOMIC_RELAXED);
    __atomic_store_n(&h->min_ns, ns < lo ? ns : lo, __ATOMIC_RELAXED);
    __atomic_store_n(&h->max_ns, ns > hi ? ns : hi, __ATOMIC_RELAXED);
}
/* dst += src (same geometry). */
void histogram_merge(struct histogram *dst, const struct histogram *src);
/* dst = a - b, where b is an earlier snapshot of a (for interval statistics). min/max of the
 * difference are approximated by bucket bounds clamped to a's exact min/max. */
void histogram_diff(struct histogram *dst, const struct histogram *a, const struct histogram *b);
/* Copy (dst must be initialised). */
void histogram_copy(struct histogram *dst, const struct histogram *src);
/* Percentile p in [0,100], in ns: the value at rank ceil(N*p/100) (nearest-rank, at least 1),
 * reported as the bucket's midpoint and clamped into [min,max]; rank 1 and rank N return
 * min and max themselves. 0 when empty. Reads plain fields: while a worker is still
 * writing h, call it on a histogram_copy() snapshot. */
double histogram_percentile(const struct histogram *h, double p);
/* The same, and *overflow (may be NULL) says whether that value is beyond the top (the rank
 * falls in the overflow bucket, or is the max and the max is above 100 s); the value
 * returned is then HISTOGRAM_TOP_NS, to be shown as ">100000.00" ms. */
double histogram_percentile_ex(const struct histogram *h, double p, bool *overflow);
double histogram_mean(const struct histogram *h);  /* ns; 0 when empty */

/* Bucket geometry for printing and export: 128 linear sub-buckets per power of two from
 * 1 us to 100 s (3393 buckets) and the overflow bucket (3394 in all); a bucket's midpoint is
 * within 1/256 (0.39%) of its values. */
size_t histogram_nbuckets(void);
/* representative value (ns) of bucket i; the overflow bucket's is HISTOGRAM_TOP_NS */
double histogram_bucket_value(size_t i);
/* Whether bucket i is the overflow bucket (values above 100 s). */
bool histogram_bucket_overflow(size_t i);

#endif
