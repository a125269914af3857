/* Unit tests of --measure=instructions (src/experiment/callgrind): --measure parsing, the
 * totals of callgrind output files (totals: preferred over summary:, the simulated I1 and
 * branch misses by column name), and the instruction metric of the cell statistics. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "experiment/callgrind.h"
#include "model/cells.h"
#include "model/model.h"
#include "util/util.h"

#include "experiment_fixtures.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* --measure parsing, the callgrind total (totals: preferred over summary:), and the
 * instruction metric: lower is better, its key, its value in a run. */
static void test_measure_instructions(void **state)
{
    (void)state;
    enum experiment_measure m = MEASURE_INSTRUCTIONS;
    assert_int_equal(experiment_measure_parse("time", &m), 0);
    assert_int_equal(m, MEASURE_TIME);
    assert_int_equal(experiment_measure_parse("instructions", &m), 0);
    assert_int_equal(m, MEASURE_INSTRUCTIONS);
    assert_int_equal(experiment_measure_parse("cycles", &m), -1);

    char dir[] = "/tmp/pgolab-test-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char *both = write_file(dir, "cg.both", "# callgrind format\nversion: 1\ncmd: x\n"
                                            "events: Ir\nsummary: 123\nfl=a.c\nfn=f\n"
                                            "1 100\ntotals: 246881240\n", 0644);
    char *summary = write_file(dir, "cg.summary", "events: Ir\nsummary: 48178544\n", 0644);
    char *none = write_file(dir, "cg.none", "events: Ir\nfn=f\n1 5\n", 0644);
    uint64_t total = 0;
    assert_int_equal(experiment_callgrind_total(both, &total), 0);
    assert_true(total == 246881240u);
    assert_int_equal(experiment_callgrind_total(summary, &total), 0);
    assert_true(total == 48178544u);
    assert_int_equal(experiment_callgrind_total(none, &total), -1);
    char *missing = xasprintf("%s/cg.missing", dir);
    assert_int_equal(experiment_callgrind_total(missing, &total), -1);
    /* With --cache-sim and --branch-sim: I1mr and Bcm + Bim by their column names. */
    char *sim = write_file(dir, "cg.sim", "events: Ir I1mr D1mr D1mw ILmr DLmr DLmw Bc Bcm Bi Bim\n"
                                          "fn=f\n1 5 1 0 0 0 0 0 2 1 0 0\n"
                                          "totals: 1000 17 30 40 5 6 7 200 11 50 4\n", 0644);
    struct callgrind_counts cc;
    assert_int_equal(experiment_callgrind_counts(sim, &cc), 0);
    assert_true(cc.ir == 1000 && cc.i1_miss == 17 && cc.branch_miss == 15);
    assert_int_equal(experiment_callgrind_counts(both, &cc), 0);
    assert_true(cc.ir == 246881240u && cc.i1_miss == 0 && cc.branch_miss == 0);
    unlink(sim);
    free(sim);
    unlink(both);
    unlink(summary);
    unlink(none);
    rmdir(dir);
    free(both);
    free(summary);
    free(none);
    free(missing);

    struct run_result r;
    memset(&r, 0, sizeof(r));
    r.instr_per_txn = 805401.5;
    assert_true(experiment_metric_value(&r, METRIC_INSTR) == 805401.5);
    assert_true(experiment_metric_lower_is_better(METRIC_INSTR));
    assert_string_equal(experiment_metric_key(METRIC_INSTR), "instr_per_txn");
    /* 1% more instructions = 1% worse */
    assert_true(fabs(experiment_improvement(METRIC_INSTR, 1000, 1010) + 1.0) < 1e-9);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_measure_instructions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
