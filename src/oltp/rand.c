/* rand: the sysbench key distributions and the xoroshiro128+ seeding (see rand.h; the
 * generator itself and the uniform draw are inline there).
 * Formulas follow the behaviour documented for sysbench 1.0.20 / 1.1 sb_rand.c. */
#include "oltp/rand.h"
#include "util/util.h"

#include <math.h>
#include <string.h>

void rand_config_default(struct rand_config *c)
{
    c->type = RAND_UNIFORM;
    c->spec_iter = 12;
    c->spec_pct = 1;
    c->spec_res = 75;
    c->pareto_h = 0.2;
    c->zipf_exp = 0.8;
}

static const char *const type_names[] = {
    [RAND_UNIFORM] = "uniform",
    [RAND_GAUSSIAN] = "gaussian",
    [RAND_SPECIAL] = "special",
    [RAND_PARETO] = "pareto",
    [RAND_ZIPFIAN] = "zipfian",
};

int rand_type_parse(const char *name, enum rand_type *out)
{
    for (size_t i = 0; name && i < ARRAY_SIZE(type_names); i++)
        if (!strcmp(name, type_names[i])) {
            *out = (enum rand_type)i;
            return 0;
        }
    return -1;
}

const char *rand_type_name(enum rand_type t)
{
    if ((size_t)t < ARRAY_SIZE(type_names))
        return type_names[t];
    return "unknown";
}

/* splitmix64 (Steele, Lea, Flood 2014): expands one seed into well-mixed state words. */
static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void rand_seed(struct rand_state *r, uint64_t seed)
{
    uint64_t x = seed;
    r->s[0] = splitmix64(&x);
    r->s[1] = splitmix64(&x);
    if (!r->s[0] && !r->s[1]) /* the all-zero state is a fixed point */
        r->s[1] = 1;
}

double rand_double(struct rand_state *r)
{
    return (double)(rand_next(r) >> 11) * 0x1.0p-53;
}

/* a + floor(x), clamped into [a,b] (guards double rounding at the top of the range). */
static inline uint32_t offset_clamp(uint32_t a, uint32_t b, double x)
{
    if (!(x > 0))
        return a;
    if (x >= (double)(b - a))
        return b;
    return a + (uint32_t)x;
}

/* Mean of iter uniforms in [0,1): Irwin-Hall, bell-shaped around 0.5. */
static double irwin_hall_mean(struct rand_state *r, int iter)
{
    double sum = 0;
    if (iter < 1)
        iter = 1;
    for (int i = 0; i < iter; i++)
        sum += rand_double(r);
    return sum / iter;
}

uint32_t rand_gaussian(struct rand_state *r, const struct rand_config *c, uint32_t a, uint32_t b)
{
    if (b <= a)
        return a;
    return offset_clamp(a, b, irwin_hall_mean(r, c->spec_iter) * ((double)(b - a) + 1.0));
}

uint32_t rand_special(struct rand_state *r, const struct rand_config *c, uint32_t a, uint32_t b)
{
    if (b <= a)
        return a;
    double t = (double)(b - a);
    double u = rand_double(r);
    double cold = (100.0 - c->spec_res) / 100.0;
    if (u < cold)
        return offset_clamp(a, b, irwin_hall_mean(r, c->spec_iter) * t);
    /* Hot spot: a window d = pct% of the range at the middle. As in sysbench 1.0 the same u
     * (now known to be >= cold) places the value, so with res=75 it spans mid-d/4 .. mid+d/2. */
    double d = floor(t * c->spec_pct / 100.0);
    if (d < 1)
        d = 1;
    double mid = floor(t / 2.0);
    return offset_clamp(a, b, mid + floor((u - 0.5) * d));
}

/* p = ln(h)/ln(1-h), cached per thread for the last h seen. */
static double pareto_power(double h)
{
    static _Thread_local double last_h = -1, last_p;
    if (h != last_h) {
        double hc = h < 1e-9 ? 1e-9 : h > 1 - 1e-9 ? 1 - 1e-9 : h;
        last_p = log(hc) / log(1.0 - hc);
        last_h = h;
    }
    return last_p;
}

uint32_t rand_pareto(struct rand_state *r, const struct rand_config *c, uint32_t a, uint32_t b)
{
    if (b <= a)
        return a;
    double p = pareto_power(c->pareto_h);
    return offset_clamp(a, b, ((double)(b - a) + 1.0) * pow(rand_double(r), p));
}

/*
 * Zipfian by rejection-inversion (W. Hörmann, G. Derflinger, "Rejection-inversion to generate
 * variates from monotone discrete distributions", ACM TOMACS 6(3), 1996).
 * Target P(k) ∝ h(k) = k^-e on k = 1..n. The hat is the continuous density h(x) = x^-e with
 * integral H(x) = (x^(1-e) - 1)/(1-e) (log x when e = 1). Draw y uniformly from
 * (H(1.5) - h(1), H(n+0.5)], invert x = H^-1(y) and round to k. Accept k if x lies within the
 * squeeze distance s of k (k - x <= s), or if y >= H(k+0.5) - h(k); the area of the
 * interval [k-0.5, k+0.5] under the hat above H(k+0.5) - h(k) is exactly h(k), which makes the
 * accepted k exactly distributed. H and H^-1 are written via log1p/expm1 so e near 1 is exact.
 */
static double expm1_over_x(double x) /* (e^x - 1)/x */
{
    if (fabs(x) > 1e-8)
        return expm1(x) / x;
    return 1.0 + x * 0.5 * (1.0 + x / 3.0 * (1.0 + x / 4.0));
}

static double log1p_over_x(double x) /* ln(1+x)/x */
{
    if (fabs(x) > 1e-8)
        return log1p(x) / x;
    return 1.0 - x * (0.5 - x * (1.0 / 3.0 - x / 4.0));
}

struct zipf_consts {
    double n, e;
    double h_x1;  /* H(1.5) - h(1) */
    double h_n;   /* H(n + 0.5) */
    double s;     /* squeeze: 2 - H^-1(H(2.5) - h(2)) */
};

static double zipf_h(const struct zipf_consts *z, double x)
{
    return exp(-z->e * log(x));
}

static double zipf_H(const struct zipf_consts *z, double x)
{
    double lx = log(x);
    return expm1_over_x((1.0 - z->e) * lx) * lx;
}

static double zipf_Hinv(const struct zipf_consts *z, double y)
{
    double t = y * (1.0 - z->e);
    if (t < -1.0)
        t = -1.0; /* rounding guard: 1 + t must stay >= 0 */
    return exp(log1p_over_x(t) * y);
}

static const struct zipf_consts *zipf_setup(double n, double e)
{
    static _Thread_local struct zipf_consts z = { -1, -1, 0, 0, 0 };
    if (z.n != n || z.e != e) {
        z.n = n;
        z.e = e;
        z.h_x1 = zipf_H(&z, 1.5) - 1.0;
        z.h_n = zipf_H(&z, n + 0.5);
        z.s = 2.0 - zipf_Hinv(&z, zipf_H(&z, 2.5) - zipf_h(&z, 2.0));
    }
    return &z;
}

uint32_t rand_zipfian(struct rand_state *r, const struct rand_config *c, uint32_t a, uint32_t b)
{
    if (b <= a)
        return a;
    double n = (double)(b - a) + 1.0;
    const struct zipf_consts *z = zipf_setup(n, c->zipf_exp > 0 ? c->zipf_exp : 0);
    for (;;) {
        double y = z->h_n + rand_double(r) * (z->h_x1 - z->h_n);
        double x = zipf_Hinv(z, y);
        double k = floor(x + 0.5);
        if (k < 1)
            k = 1;
        else if (k > n)
            k = n;
        if (k - x <= z->s || y >= zipf_H(z, k + 0.5) - zipf_h(z, k))
            return a + (uint32_t)(k - 1);
    }
}

uint32_t rand_default_other(struct rand_state *r, const struct rand_config *c, uint32_t a,
                            uint32_t b)
{
    switch (c->type) {
    case RAND_GAUSSIAN: return rand_gaussian(r, c, a, b);
    case RAND_SPECIAL: return rand_special(r, c, a, b);
    case RAND_PARETO: return rand_pareto(r, c, a, b);
    case RAND_ZIPFIAN: return rand_zipfian(r, c, a, b);
    case RAND_UNIFORM:
    default: return rand_uniform(r, a, b);
    }
}

/* Next digit (radix 10) or letter (radix 26): the base-radix expansion of one 64-bit draw,
 * up to 8 symbols per draw (<= 38 of its 64 bits used, so each symbol is uniform to ~1e-11). */
static inline unsigned next_symbol(struct rand_state *r, uint64_t *frac, int *left, unsigned radix)
{
    if (*left == 0) {
        *frac = rand_next(r);
        *left = 8;
    }
    (*left)--;
    unsigned __int128 m = (unsigned __int128)*frac * radix;
    *frac = (uint64_t)m;
    return (unsigned)(m >> 64);
}

size_t rand_template(struct rand_state *r, const char *tmpl, char *buf, size_t len)
{
    uint64_t frac = 0;
    int left = 0;
    size_t i;
    for (i = 0; i < len && tmpl[i]; i++) {
        char ch = tmpl[i];
        if (ch == '#')
            ch = (char)('0' + next_symbol(r, &frac, &left, 10));
        else if (ch == '@')
            ch = (char)('a' + next_symbol(r, &frac, &left, 26));
        buf[i] = ch;
    }
    return i;
}

static uint32_t unique_next;

void rand_unique_seed(uint64_t seed)
{
    __atomic_store_n(&unique_next, (uint32_t)(seed ^ (seed >> 32)), __ATOMIC_RELAXED);
}

uint32_t rand_unique(void)
{
    /* Every step is invertible on 32 bits (xor-shift, multiply by an odd constant), so distinct
     * counters give distinct values; constants from Chris Wellons' "lowbias32" hash. */
    uint32_t x = __atomic_fetch_add(&unique_next, 1, __ATOMIC_RELAXED);
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}
