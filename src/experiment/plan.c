/* plan: the shuffled variant order of each block of an experiment (see plan.h). */
#include "experiment/plan.h"
#include "util/util.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

/* splitmix64 step (Steele, Lea and Flood, "Fast splittable pseudorandom number generators",
 * OOPSLA 2014): a good 64-bit mixer for deriving independent seeds. */
static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

void experiment_order(uint64_t seed, int round, int block, int n, int *order)
{
    uint64_t st = seed;
    uint64_t h = splitmix64(&st);
    st = h + (uint64_t)(uint32_t)round;
    h = splitmix64(&st);
    st = h + (uint64_t)(uint32_t)block;
    h = splitmix64(&st);

    for (int i = 0; i < n; i++)
        order[i] = i;
    if (n < 2)
        return;
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (!rng)
        die("out of memory");
    gsl_rng_set(rng, (unsigned long)(h ^ (h >> 32)));
    gsl_ran_shuffle(rng, order, (size_t)n, sizeof(int));
    gsl_rng_free(rng);
}
