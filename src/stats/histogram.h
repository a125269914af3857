/* histogram: log-linear latency histogram, one per worker thread, mergeable by the reporter.
 * Values are nanoseconds. Relative error of any reported percentile <= 1% over 1 us .. 100 s
 * (sysbench 1.0.20's 1024-bucket log grid has ~1.8%). The struct owns its bucket array. */
#ifndef PGOLAB_HISTOGRAM_H
#define PGOLAB_HISTOGRAM_H

#include <stdint.h>
#include <stddef.h>

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
/* Record one value in ns. Values below 1 us or above 100 s go to the first/last bucket
 * (min/max/sum stay exact). Single writer; no locking. Fields are updated with relaxed
 * atomic stores, so another thread may histogram_copy()/histogram_merge() it concurrently
 * and see untorn (if slightly inconsistent) values. */
void histogram_add(struct histogram *h, uint64_t ns);
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
double histogram_mean(const struct histogram *h);  /* ns; 0 when empty */

/* Bucket geometry for printing and export: 128 linear sub-buckets per power of two from
 * 1 us to 100 s (3393 buckets); a bucket's midpoint is within 1/256 (0.39%) of its values. */
size_t histogram_nbuckets(void);
double histogram_bucket_value(size_t i);  /* representative value (ns) of bucket i */
/* Index of the bucket a value in ns is counted in (clamped to the first/last bucket). */
size_t histogram_bucket_index(uint64_t ns);

#endif
