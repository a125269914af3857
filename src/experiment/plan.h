/* plan: the order in which an experiment runs its variants. Every block (one workload, thread
 * count and round) runs each variant once, in an order shuffled from the experiment's seed,
 * the round and the block alone, so that a resumed experiment runs what is missing in the
 * order the uninterrupted one would have. A pure function; no state. */
#ifndef PGOLAB_EXPERIMENT_PLAN_H
#define PGOLAB_EXPERIMENT_PLAN_H

#include <stdint.h>

/* The variant order of one block (round 1..rounds, block = workload * nthreads + thread
 * index): a permutation of 0..n-1 written to order[], a GSL Mersenne-Twister shuffle
 * (gsl_ran_shuffle) seeded with splitmix64(seed, round, block), so each block is
 * reproducible on its own. */
void experiment_order(uint64_t seed, int round, int block, int n, int *order);

#endif
