/* rand: per-thread pseudo-random numbers and the sysbench 1.0.20 distributions
 * (src/sb_rand.c): uniform, gaussian, special, pareto, plus zipfian (sysbench 1.1).
 * Each worker owns one struct rand_state; the configuration is shared and read-only.
 * The generator, rand_uniform and rand_default's uniform case are inline here: a worker draws
 * ids per statement, and the call chain cost more than the draw. */
#ifndef PGOLAB_RAND_H
#define PGOLAB_RAND_H

#include <stddef.h>
#include <stdint.h>

enum rand_type { RAND_UNIFORM, RAND_GAUSSIAN, RAND_SPECIAL, RAND_PARETO, RAND_ZIPFIAN };

struct rand_config {
    enum rand_type type;   /* --rand-type (default uniform) */
    int spec_iter;         /* --rand-spec-iter, default 12 */
    double spec_pct;       /* --rand-spec-pct, default 1 */
    double spec_res;       /* --rand-spec-res, default 75 */
    double pareto_h;       /* --rand-pareto-h, default 0.2 */
    double zipf_exp;       /* --rand-zipfian-exp, default 0.8 */
};

struct rand_state {
    uint64_t s[2];  /* xoroshiro128+ state */
};

/* Defaults as above. */
void rand_config_default(struct rand_config *c);
/* "uniform" etc. -> type; -1 for an unknown name. */
int rand_type_parse(const char *name, enum rand_type *out);
const char *rand_type_name(enum rand_type t);

/* Seed one thread's generator from a 64-bit seed (splitmix64 expansion). */
void rand_seed(struct rand_state *r, uint64_t seed);

/* xoroshiro128+ (Blackman & Vigna, 2018 parameters a=24, b=16, c=37). */
static inline uint64_t rand_next(struct rand_state *r)
{
    uint64_t s0 = r->s[0], s1 = r->s[1];
    uint64_t result = s0 + s1;
    s1 ^= s0;
    r->s[0] = ((s0 << 24) | (s0 >> 40)) ^ s1 ^ (s1 << 16);
    r->s[1] = (s1 << 37) | (s1 >> 27);
    return result;
}

double rand_double(struct rand_state *r);          /* [0,1), top 52/53 bits */
/* All distributions below return a value in [a,b]; b < a returns a. */
/* uniform integer in [a,b] (a + floor(u*(b-a+1))). */
static inline uint32_t rand_uniform(struct rand_state *r, uint32_t a, uint32_t b)
{
    if (b <= a)
        return a;
    /* Multiply-shift (Lemire): floor(u * (b-a+1)) for u = the top 32 bits / 2^32, the same
     * mapping as sysbench's a + floor(u * (b-a+1)) without the double conversion. */
    return a + (uint32_t)(((uint64_t)(b - a) + 1u) * (rand_next(r) >> 32) >> 32);
}

/* rand_default for every type but uniform. */
uint32_t rand_default_other(struct rand_state *r, const struct rand_config *c, uint32_t a,
                            uint32_t b);
/* Draw from the configured distribution in [a,b] (sysbench.rand.default). */
static inline uint32_t rand_default(struct rand_state *r, const struct rand_config *c, uint32_t a,
                                    uint32_t b)
{
    if (c->type == RAND_UNIFORM)
        return rand_uniform(r, a, b);
    return rand_default_other(r, c, a, b);
}
/* sysbench 1.0.20 sb_rand.c gaussian: a + floor(mean of spec_iter uniforms * (b-a+1))
 * (Irwin-Hall bell around the middle; spec_iter < 1 counts as 1). */
uint32_t rand_gaussian(struct rand_state *r, const struct rand_config *c, uint32_t a, uint32_t b);
/* sysbench 1.0.20 sb_rand.c special: with probability (100-spec_res)% the gaussian mean times
 * (b-a), otherwise a window of spec_pct% of the range at the middle, placed by the same
 * uniform (so with res=75 it spans mid-d/4 .. mid+d/2): ~75% of draws hit ~1% of ids. */
uint32_t rand_special(struct rand_state *r, const struct rand_config *c, uint32_t a, uint32_t b);
/* sysbench 1.0.20 sb_rand.c pareto: a + (uint32)((b-a+1) * u^p), p = ln(h)/ln(1-h); with
 * h = 0.2, 80% of draws fall in the lowest 20% of ids. */
uint32_t rand_pareto(struct rand_state *r, const struct rand_config *c, uint32_t a, uint32_t b);
/* sysbench 1.1 zipfian: k in [1,n] (n = b-a+1) with P(k) ∝ k^-zipf_exp, returned as a+k-1,
 * by rejection-inversion (Hörmann & Derflinger 1996). Constants are cached per thread for
 * the last (n, exponent) seen. */
/* sysbench.rand.unique()'s contract: process-wide, thread-safe, each call a different 32-bit
 * value (a bijective mix of an atomic counter; unique for 2^32 calls). rand_unique_seed sets
 * where the sequence starts, so runs with different seeds use different values. */
void rand_unique_seed(uint64_t seed);
uint32_t rand_unique(void);
uint32_t rand_zipfian(struct rand_state *r, const struct rand_config *c, uint32_t a, uint32_t b);
/* Fill buf from a sysbench template: '#' -> random digit, '@' -> random lowercase letter,
 * anything else copied. Writes min(len, strlen(tmpl)) bytes, no NUL; returns that count
 * (len when the template is at least len long). */
size_t rand_template(struct rand_state *r, const char *tmpl, char *buf, size_t len);

#endif
