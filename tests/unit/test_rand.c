/* Unit tests for oltp/rand.c: generator known answers and determinism, range bounds of every
 * distribution, and the shape of uniform, gaussian, special, pareto and zipfian draws. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oltp/rand.h"
#include "util/util.h"

typedef uint32_t (*draw_fn)(struct rand_state *, const struct rand_config *, uint32_t, uint32_t);

static uint32_t draw_uniform(struct rand_state *r, const struct rand_config *c, uint32_t a, uint32_t b)
{
    (void)c;
    return rand_uniform(r, a, b);
}

static const struct {
    const char *name;
    draw_fn fn;
} dists[] = {
    { "uniform", draw_uniform },   { "gaussian", rand_gaussian }, { "special", rand_special },
    { "pareto", rand_pareto },     { "zipfian", rand_zipfian },   { "default", rand_default },
};

/* Known answers, computed independently from the published splitmix64 and xoroshiro128+
 * (24/16/37) definitions: seed 0 expands to these two state words. */
static void test_known_answers(void **state)
{
    (void)state;
    struct rand_state r;
    rand_seed(&r, 0);
    assert_true(r.s[0] == 0xe220a8397b1dcdafULL);
    assert_true(r.s[1] == 0x6e789e6aa1b965f4ULL);
    assert_true(rand_next(&r) == 0x509946a41cd733a3ULL);
    assert_true(rand_next(&r) == 0xd805fcac6824536eULL);
    assert_true(rand_next(&r) == 0xdadc02f3e3cf7be3ULL);
}

static void test_determinism(void **state)
{
    (void)state;
    struct rand_state a, b, c;
    rand_seed(&a, 42);
    rand_seed(&b, 42);
    rand_seed(&c, 43);
    int differ = 0;
    for (int i = 0; i < 1000; i++) {
        uint64_t x = rand_next(&a), y = rand_next(&b), z = rand_next(&c);
        assert_true(x == y);
        differ += x != z;
    }
    assert_true(differ > 990);
    /* The distributions are deterministic too. */
    struct rand_config cfg;
    rand_config_default(&cfg);
    for (size_t d = 0; d < ARRAY_SIZE(dists); d++) {
        rand_seed(&a, 7);
        rand_seed(&b, 7);
        for (int i = 0; i < 200; i++)
            assert_int_equal(dists[d].fn(&a, &cfg, 1, 100000), dists[d].fn(&b, &cfg, 1, 100000));
    }
}

static void test_double(void **state)
{
    (void)state;
    struct rand_state r;
    rand_seed(&r, 1);
    double sum = 0, mn = 1, mx = 0;
    const int n = 1000000;
    for (int i = 0; i < n; i++) {
        double u = rand_double(&r);
        assert_true(u >= 0 && u < 1);
        sum += u;
        mn = u < mn ? u : mn;
        mx = u > mx ? u : mx;
    }
    assert_true(fabs(sum / n - 0.5) < 0.002);
    assert_true(mn < 1e-4 && mx > 1 - 1e-4);
}

static void check_bounds(const struct rand_config *cfg, uint32_t a, uint32_t b, int n)
{
    struct rand_state r;
    rand_seed(&r, (uint64_t)a * 31 + b);
    for (size_t d = 0; d < ARRAY_SIZE(dists); d++)
        for (int i = 0; i < n; i++) {
            uint32_t v = dists[d].fn(&r, cfg, a, b);
            if (v < a || v > b)
                fail_msg("%s(%u,%u) returned %u", dists[d].name, a, b, v);
        }
}

static void test_bounds(void **state)
{
    (void)state;
    struct rand_config cfg;
    rand_config_default(&cfg);
    for (int t = RAND_UNIFORM; t <= RAND_ZIPFIAN; t++) {
        cfg.type = (enum rand_type)t;
        check_bounds(&cfg, 1, 10000, 100000);
        check_bounds(&cfg, 7, 8, 10000);
        check_bounds(&cfg, 0, UINT32_MAX, 100000);
        check_bounds(&cfg, UINT32_MAX - 3, UINT32_MAX, 10000);
        check_bounds(&cfg, 5, 5, 100);
    }
    /* Extreme parameters still stay in range. */
    cfg.pareto_h = 0.001;
    cfg.zipf_exp = 0;
    cfg.spec_pct = 100;
    cfg.spec_res = 0;
    cfg.spec_iter = 1;
    check_bounds(&cfg, 1, 1000, 20000);
    cfg.pareto_h = 0.999;
    cfg.zipf_exp = 3;
    cfg.spec_pct = 0;
    cfg.spec_res = 100;
    cfg.spec_iter = 0;
    check_bounds(&cfg, 1, 1000, 20000);
    /* b < a returns a. */
    rand_config_default(&cfg);
    struct rand_state r;
    rand_seed(&r, 3);
    for (size_t d = 0; d < ARRAY_SIZE(dists); d++)
        assert_int_equal(dists[d].fn(&r, &cfg, 10, 3), 10);
}

static void test_uniform_shape(void **state)
{
    (void)state;
    struct rand_state r;
    rand_seed(&r, 11);
    enum { N = 1000000, BINS = 100 };
    static uint32_t hist[BINS];
    double sum = 0;
    int lo_hit = 0, hi_hit = 0;
    memset(hist, 0, sizeof(hist));
    for (int i = 0; i < N; i++) {
        uint32_t v = rand_uniform(&r, 1, 10000);
        hist[(v - 1) / 100]++;
        sum += v;
        lo_hit |= v == 1;
        hi_hit |= v == 10000;
    }
    assert_true(lo_hit && hi_hit);
    assert_true(fabs(sum / N - 5000.5) < 5000.5 * 0.005);
    double chi2 = 0, e = (double)N / BINS;
    for (int i = 0; i < BINS; i++)
        chi2 += (hist[i] - e) * (hist[i] - e) / e;
    print_message("    uniform chi-square (99 df): %.1f\n", chi2);
    assert_true(chi2 < 99 + 6 * 14); /* mean 99, sd 14 */

    /* The full 32-bit range reaches both halves. */
    int high = 0;
    for (int i = 0; i < 10000; i++)
        high += rand_uniform(&r, 0, UINT32_MAX) > UINT32_MAX / 2;
    assert_in_range(high, 4500, 5500);
}

static void test_gaussian_shape(void **state)
{
    (void)state;
    struct rand_config cfg;
    struct rand_state r;
    rand_config_default(&cfg);
    rand_seed(&r, 5);
    const int n = 200000;
    int middle = 0, tail = 0;
    double sum = 0, sq = 0;
    for (int i = 0; i < n; i++) {
        uint32_t v = rand_gaussian(&r, &cfg, 1, 10000);
        sum += v;
        sq += ((double)v - 5000.5) * ((double)v - 5000.5);
        middle += v >= 2500 && v <= 7500; /* +-3 sd (range/12) of the mean of 12 uniforms */
        tail += v < 1000 || v > 9000;
    }
    assert_true(fabs(sum / n - 5000.5) < 50);
    /* Irwin-Hall: the mean of 12 uniforms has sd 1/sqrt(12*12) = 1/12 of the range. */
    double sd = sqrt(sq / n);
    print_message("    gaussian: sd %.1f (expected %.1f)\n", sd, 10000.0 / 12);
    assert_true(fabs(sd / (10000.0 / 12) - 1) < 0.03);
    assert_true(middle > n * 0.99);
    assert_true(tail < n * 0.001);
    /* spec_iter 1 degenerates to uniform, as in sysbench. */
    cfg.spec_iter = 1;
    middle = 0;
    for (int i = 0; i < n; i++) {
        uint32_t v = rand_gaussian(&r, &cfg, 1, 10000);
        middle += v >= 2500 && v <= 7500;
    }
    assert_in_range(middle, n * 0.49, n * 0.51);
}

static void test_special_shape(void **state)
{
    (void)state;
    struct rand_config cfg;
    struct rand_state r;
    rand_config_default(&cfg);
    rand_seed(&r, 9);
    const int n = 400000;
    const uint32_t a = 1, b = 100000;
    const uint32_t mid = a + (b - a) / 2, half = (b - a) / 200; /* 1% window */
    int hot = 0, far = 0, below = 0, above = 0;
    for (int i = 0; i < n; i++) {
        uint32_t v = rand_special(&r, &cfg, a, b);
        if (v >= mid - half && v <= mid + half) {
            hot++;
            below += v < mid;
            above += v >= mid;
        }
        far += v < mid - (b - a) / 10 || v > mid + (b - a) / 10;
    }
    print_message("    special: %.1f%% in the 1%% middle window\n", 100.0 * hot / n);
    assert_in_range(hot, n * 0.70, n * 0.80);
    /* The cold 25% is spread over the whole range (sd ~8% of it). */
    assert_in_range(far, n * 0.03, n * 0.10);
    /* sysbench 1.0 quirk: the hot window spans mid-d/4 .. mid+d/2, so 2/3 of it is above mid. */
    assert_true(above > 1.6 * below);
}

static double frac_low_pareto(double h, double share)
{
    struct rand_config cfg;
    struct rand_state r;
    rand_config_default(&cfg);
    cfg.pareto_h = h;
    rand_seed(&r, 21);
    const int n = 200000;
    const uint32_t a = 1, b = 100000;
    int low = 0;
    for (int i = 0; i < n; i++)
        low += rand_pareto(&r, &cfg, a, b) <= a + (uint32_t)(share * (b - a + 1)) - 1;
    return (double)low / n;
}

static void test_pareto_shape(void **state)
{
    (void)state;
    double f = frac_low_pareto(0.2, 0.2);
    print_message("    pareto h=0.2: %.1f%% of draws in the lowest 20%% of ids\n", f * 100);
    assert_true(f >= 0.75 && f <= 0.85);
    f = frac_low_pareto(0.1, 0.1);
    assert_true(f >= 0.87 && f <= 0.93);
    f = frac_low_pareto(0.5, 0.5); /* h = 0.5: p = 1, uniform */
    assert_true(f >= 0.49 && f <= 0.51);
}

/* Exact bounded Zipf pmf P(k) = k^-e / sum_j j^-e. */
static void zipf_pmf(double *p, int n, double e)
{
    double z = 0;
    for (int k = 1; k <= n; k++)
        z += pow(k, -e);
    for (int k = 1; k <= n; k++)
        p[k - 1] = pow(k, -e) / z;
}

static void check_zipf(double e, int n, int draws, uint64_t seed)
{
    struct rand_config cfg;
    struct rand_state r;
    rand_config_default(&cfg);
    cfg.zipf_exp = e;
    rand_seed(&r, seed);
    uint32_t *cnt = xcalloc((size_t)n, sizeof(*cnt));
    double *p = xcalloc((size_t)n, sizeof(*p));
    for (int i = 0; i < draws; i++) {
        uint32_t v = rand_zipfian(&r, &cfg, 1, (uint32_t)n);
        cnt[v - 1]++;
    }
    zipf_pmf(p, n, e);
    double chi2 = 0;
    for (int k = 0; k < n; k++) {
        double ex = p[k] * draws;
        chi2 += (cnt[k] - ex) * (cnt[k] - ex) / ex;
    }
    double df = n - 1, limit = df + 6 * sqrt(2 * df);
    print_message("    zipfian e=%.2f n=%d: chi-square %.1f (df %.0f, limit %.1f), "
                  "P(1)/P(2) = %.3f (exact %.3f)\n",
                  e, n, chi2, df, limit, (double)cnt[0] / cnt[1], pow(2, e));
    assert_true(chi2 < limit);
    if (e > 0) {
        assert_true(cnt[0] > cnt[1] && cnt[1] > cnt[9]);
        assert_true(fabs((double)cnt[0] / cnt[1] / pow(2, e) - 1) < 0.05);
        assert_true(fabs((double)cnt[0] / cnt[9] / pow(10, e) - 1) < 0.10);
    }
    free(cnt);
    free(p);
}

static void test_zipfian_shape(void **state)
{
    (void)state;
    check_zipf(0.8, 1000, 2000000, 31); /* sysbench default exponent */
    check_zipf(1.0, 1000, 1000000, 32); /* the log branch of H */
    check_zipf(1.5, 100, 1000000, 33);
    check_zipf(0.0, 100, 500000, 34);   /* exponent 0 is uniform */
    /* The offset a is applied: id a is the hottest. */
    struct rand_config cfg;
    struct rand_state r;
    rand_config_default(&cfg);
    rand_seed(&r, 35);
    int first = 0;
    for (int i = 0; i < 100000; i++) {
        uint32_t v = rand_zipfian(&r, &cfg, 1000, 1999);
        assert_in_range(v, 1000, 1999);
        first += v == 1000;
    }
    assert_in_range(first, 6000, 7000); /* P(1) = 1/H(1000,0.8) = 6.4% */
}

static void test_default_dispatch(void **state)
{
    (void)state;
    struct rand_config cfg;
    struct rand_state r1, r2;
    rand_config_default(&cfg);
    assert_int_equal(cfg.type, RAND_UNIFORM);
    assert_int_equal(cfg.spec_iter, 12);
    assert_true(cfg.spec_pct == 1 && cfg.spec_res == 75);
    assert_true(cfg.pareto_h == 0.2 && cfg.zipf_exp == 0.8);
    for (int t = RAND_UNIFORM; t <= RAND_ZIPFIAN; t++) {
        cfg.type = (enum rand_type)t;
        rand_seed(&r1, 99);
        rand_seed(&r2, 99);
        for (int i = 0; i < 100; i++) {
            uint32_t x = rand_default(&r1, &cfg, 1, 1000000), y;
            switch (cfg.type) {
            case RAND_GAUSSIAN: y = rand_gaussian(&r2, &cfg, 1, 1000000); break;
            case RAND_SPECIAL: y = rand_special(&r2, &cfg, 1, 1000000); break;
            case RAND_PARETO: y = rand_pareto(&r2, &cfg, 1, 1000000); break;
            case RAND_ZIPFIAN: y = rand_zipfian(&r2, &cfg, 1, 1000000); break;
            default: y = rand_uniform(&r2, 1, 1000000); break;
            }
            assert_int_equal(x, y);
        }
    }
}

static void test_type_names(void **state)
{
    (void)state;
    static const char *names[] = { "uniform", "gaussian", "special", "pareto", "zipfian" };
    for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
        enum rand_type t;
        assert_int_equal(rand_type_parse(names[i], &t), 0);
        assert_int_equal(t, (enum rand_type)i);
        assert_string_equal(rand_type_name(t), names[i]);
    }
    enum rand_type t = RAND_PARETO;
    assert_int_equal(rand_type_parse("zipf", &t), -1);
    assert_int_equal(rand_type_parse("", &t), -1);
    assert_int_equal(rand_type_parse("Uniform", &t), -1);
    assert_int_equal(t, RAND_PARETO);
}

static void test_template(void **state)
{
    (void)state;
    struct rand_state r;
    rand_seed(&r, 77);
    /* The sbtest c column: 10 groups of 11 '#' joined with '-'. */
    char tmpl[10 * 12];
    size_t tl = 0;
    for (int g = 0; g < 10; g++) {
        if (g)
            tmpl[tl++] = '-';
        for (int i = 0; i < 11; i++)
            tmpl[tl++] = '#';
    }
    tmpl[tl] = '\0';
    assert_int_equal(tl, 119);
    char buf[128];
    int digits[10] = { 0 }, letters[26] = { 0 }, pairs[100] = { 0 };
    char prev[128] = "";
    for (int iter = 0; iter < 1000; iter++) {
        memset(buf, 'X', sizeof(buf));
        assert_int_equal(rand_template(&r, tmpl, buf, tl), tl);
        assert_true(buf[tl] == 'X'); /* nothing written past len */
        for (size_t i = 0; i < tl; i++) {
            if (i % 12 == 11) {
                assert_true(buf[i] == '-');
            } else {
                assert_true(isdigit((unsigned char)buf[i]));
                digits[buf[i] - '0']++;
                if (i % 12 != 10) /* the next character is a digit of the same group */
                    pairs[(buf[i] - '0') * 10 + (buf[i + 1] - '0')]++;
            }
        }
        buf[tl] = '\0';
        assert_true(strcmp(buf, prev) != 0);
        memcpy(prev, buf, tl + 1);
    }
    for (int d = 0; d < 10; d++)
        assert_in_range(digits[d], 11000 - 1000, 11000 + 1000); /* 110000 digits / 10 */
    /* Neighbouring digits are independent: 100000 pairs over 100 cells (df 99, sd 14). */
    double chi2 = 0;
    for (int k = 0; k < 100; k++)
        chi2 += (pairs[k] - 1000.0) * (pairs[k] - 1000.0) / 1000.0;
    print_message("    template digit pairs chi-square (99 df): %.1f\n", chi2);
    assert_true(chi2 < 99 + 6 * 14);

    const char *mixed = "@@##-x.@#";
    for (int iter = 0; iter < 2000; iter++) {
        assert_int_equal(rand_template(&r, mixed, buf, strlen(mixed)), strlen(mixed));
        for (size_t i = 0; mixed[i]; i++) {
            if (mixed[i] == '@') {
                assert_true(buf[i] >= 'a' && buf[i] <= 'z');
                letters[buf[i] - 'a']++;
            } else if (mixed[i] == '#') {
                assert_true(buf[i] >= '0' && buf[i] <= '9');
            } else {
                assert_true(buf[i] == mixed[i]);
            }
        }
    }
    for (int l = 0; l < 26; l++)
        assert_in_range(letters[l], 6000 / 26 / 2, 6000 / 26 * 2);

    /* len shorter than the template truncates; a shorter template stops at its end. */
    memset(buf, 'X', sizeof(buf));
    assert_int_equal(rand_template(&r, "##########", buf, 4), 4);
    assert_true(buf[4] == 'X');
    assert_int_equal(rand_template(&r, "ab#", buf, 50), 3);
    assert_true(buf[0] == 'a' && buf[1] == 'b' && isdigit((unsigned char)buf[2]));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_answers),
        cmocka_unit_test(test_determinism),
        cmocka_unit_test(test_double),
        cmocka_unit_test(test_bounds),
        cmocka_unit_test(test_uniform_shape),
        cmocka_unit_test(test_gaussian_shape),
        cmocka_unit_test(test_special_shape),
        cmocka_unit_test(test_pareto_shape),
        cmocka_unit_test(test_zipfian_shape),
        cmocka_unit_test(test_default_dispatch),
        cmocka_unit_test(test_type_names),
        cmocka_unit_test(test_template),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
