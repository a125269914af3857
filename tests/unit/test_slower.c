/* Unit tests of --fail-if-slower on one experiment (src/report/slower): a 30% slower variant
 * in 5 rounds trips every thread row and the Average, not by more than 40%; faster never
 * does; with 3 rounds only the pooled Average can; one thread count has no Average. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "experiment/experiment.h"
#include "report/slower.h"
#include "util/strbuf.h"

#include "experiment_fixtures.h"

#include <string.h>

static void test_report_slower(void **state)
{
    (void)state;
    struct experiment_config cfg;
    struct variant v[2];
    struct experiment_result res;
    struct strbuf why = STRBUF_INIT;

    /* 30% slower in 5 rounds: every thread row and the Average are significant. */
    synthetic_config(&cfg, v, 5);
    slow_runs(&res, 5, 0.7);
    assert_int_equal(report_slower(&cfg, &res, 5, &why), 4);
    assert_non_null(strstr(why.buf, "pgo vs base, oltp_read_only, 1 thread: tps -30"));
    assert_non_null(strstr(why.buf, "pgo vs base, oltp_read_only, 16 threads: tps -"));
    assert_non_null(strstr(why.buf, "Average over thread counts: tps -"));
    assert_non_null(strstr(why.buf, "(95% CI"));
    /* ... but not by more than 40%. */
    strbuf_reset(&why);
    assert_int_equal(report_slower(&cfg, &res, 40, &why), 0);
    assert_int_equal(why.len, 0);
    experiment_result_release(&res);

    /* Faster is never "slower". */
    slow_runs(&res, 5, 1.3);
    assert_int_equal(report_slower(&cfg, &res, 0, &why), 0);
    experiment_result_release(&res);

    /* 3 rounds: no thread row can be significant (smallest p 0.1), however large the drop
     * looks; only the Average, whose test pools the 9 rounds of the 3 rows, can be. */
    synthetic_config(&cfg, v, 3);
    slow_runs(&res, 3, 0.5);
    strbuf_reset(&why);
    assert_int_equal(report_slower(&cfg, &res, 5, &why), 1);
    assert_non_null(strstr(why.buf, "Average over thread counts"));
    experiment_result_release(&res);
    /* ... and with one thread count there is no Average row. */
    cfg.nthreads = 1;
    slow_runs(&res, 3, 0.5);
    assert_int_equal(report_slower(&cfg, &res, 5, &why), 0);
    experiment_result_release(&res);
    strbuf_release(&why);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_report_slower),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
