/* Unit tests for the pure parts of src/toolchain/bolt.c (the profile figure and the -dyno-stats
 * summary read from llvm-bolt's output, as bolt-16 prints them) and src/report/step_gains.c (which
 * variant each one builds on). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "toolchain/bolt.h"
#include "report/step_gains.h"

static const char *const log_text =
    "BOLT-INFO: pre-processing profile using branch profile reader\n"
    "BOLT-INFO: 529 out of 1474 functions in the binary (35.9%) have non-empty execution profile\n"
    "BOLT-INFO: 12 functions with profile could not be optimized\n"
    "BOLT-INFO: program-wide dynostats after all optimizations before SCTC and FOP:\n"
    "\n"
    "           105036699 : executed forward branches\n"
    "          1159548128 : executed instructions\n"
    "\n"
    "           102114326 : executed forward branches (-2.8%)\n"
    "          1159000000 : executed instructions (-0.0%)\n"
    "BOLT-INFO: SCTC: patched 0 tail calls\n";

static void test_parse_profiled(void **state)
{
    (void)state;
    int n = -1, m = -1;
    assert_int_equal(bolt_parse_profiled(log_text, &n, &m), 0);
    assert_int_equal(n, 529);
    assert_int_equal(m, 1474);
    assert_int_equal(bolt_parse_profiled("BOLT-INFO: 3 out of 9 functions in the binary were "
                                         "split\nnothing\n", &n, &m), -1);
    assert_int_equal(bolt_parse_profiled("", &n, &m), -1);
}

static void test_dyno_stats(void **state)
{
    (void)state;
    char *d = bolt_dyno_stats(log_text);
    assert_non_null(d);
    assert_non_null(strstr(d, "program-wide dynostats"));
    assert_non_null(strstr(d, "1159000000 : executed instructions (-0.0%)\n"));
    assert_null(strstr(d, "patched 0 tail calls"));
    assert_null(strstr(d, "pre-processing"));
    free(d);
    assert_null(bolt_dyno_stats("BOLT-INFO: nothing here\n"));
}

/* The figures of a -dyno-stats summary as bolt-16 prints it (two blocks, the second with the
 * change in parentheses); a name is matched whole. */
static void test_dyno_figure(void **state)
{
    (void)state;
    static const char *const dyno =
        "BOLT-INFO: program-wide dynostats after all optimizations before SCTC and FOP:\n"
        "\n"
        "                   4 : taken forward branches\n"
        "                4353 : executed instructions\n"
        "                2100 : taken branches\n"
        "\n"
        "                   2 : taken forward branches (-50.0%)\n"
        "                4353 : executed instructions (=)\n"
        "                2098 : taken branches (-0.1%)\n";
    long long b = -1, a = -1;
    assert_int_equal(bolt_dyno_figure(dyno, "taken branches", &b, &a), 0);
    assert_int_equal(b, 2100);
    assert_int_equal(a, 2098);
    assert_int_equal(bolt_dyno_figure(dyno, "taken forward branches", &b, &a), 0);
    assert_int_equal(b, 4);
    assert_int_equal(a, 2);
    assert_int_equal(bolt_dyno_figure(dyno, "executed instructions", &b, &a), 0);
    assert_int_equal(b, a);
    /* a prefix of a name is not the name; one block is not enough */
    assert_int_equal(bolt_dyno_figure(dyno, "taken", &b, &a), -1);
    assert_int_equal(bolt_dyno_figure("  7 : taken branches\n", "taken branches", &b, &a), -1);
    assert_int_equal(bolt_dyno_figure("", "taken branches", &b, &a), -1);
}

static void test_step_base(void **state)
{
    (void)state;
    struct variant v[6];
    memset(v, 0, sizeof(v));
    const char *names[] = { "baseline", "pgo", "lto", "pgo+lto", "bolt", "pgo+bolt" };
    for (int i = 0; i < 6; i++)
        v[i].name = names[i];
    struct experiment_config cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.variants = v;
    cfg.nvariants = 6;
    assert_int_equal(report_step_base(&cfg, 0), -1);
    assert_int_equal(report_step_base(&cfg, 1), 0);
    assert_int_equal(report_step_base(&cfg, 2), 0);
    assert_int_equal(report_step_base(&cfg, 3), 1);
    assert_int_equal(report_step_base(&cfg, 4), 0);
    assert_int_equal(report_step_base(&cfg, 5), 1);
    /* pgo+bolt without pgo measured: over the baseline */
    v[1].name = "other";
    assert_int_equal(report_step_base(&cfg, 5), 0);
    /* a group's pgo+lto+bolt over the same group's pgo+lto, not over pgo+lto of --cc */
    v[2].name = "clang:pgo+lto";
    v[4].name = "clang:pgo+lto+bolt";
    assert_int_equal(report_step_base(&cfg, 4), 2);
    v[2].name = "clang:lto";
    assert_int_equal(report_step_base(&cfg, 4), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_profiled),
        cmocka_unit_test(test_dyno_stats),
        cmocka_unit_test(test_dyno_figure),
        cmocka_unit_test(test_step_base),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
