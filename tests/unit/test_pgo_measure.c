/* Unit tests of the pgo pipeline's measurement set-up (src/pgo/measure.c,
 * pgo_measure_config()): the experiment of a server target (pgo postgresql, mariadb, mysql)
 * prints progress off a terminal as compare and a library target do (it was silent in a log,
 * CI or under nohup for the whole measurement), and carries the request's settings. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "pgo/stages.h"
#include "util/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* pgo_measure_config() of a request with stderr on a file (not a terminal). */
static void config_off_tty(const struct pgo_pipeline *p, struct variant *v, int nv,
                           struct experiment_config *cfg)
{
    FILE *f = tmpfile();
    assert_non_null(f);
    fflush(stderr);
    int saved = dup(STDERR_FILENO);
    assert_true(saved >= 0 && dup2(fileno(f), STDERR_FILENO) >= 0);
    assert_false(stderr_is_tty());
    pgo_measure_config(p, v, nv, cfg);
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    fclose(f);
}

static void test_progress_off_tty(void **state)
{
    (void)state;
    char *bench[] = { "oltp_read_only", NULL };
    int threads[] = { 1, 4 };
    struct pgo_request rq;
    struct pgo_pipeline p;
    struct variant v[2] = { { .name = "baseline" }, { .name = "pgo" } };
    struct experiment_config cfg;
    memset(&rq, 0, sizeof(rq));
    memset(&p, 0, sizeof(p));
    rq.target = "postgresql";
    rq.bench = bench;
    rq.nbench = 1;
    rq.threads = threads;
    rq.nthreads = 2;
    rq.rounds = 5;
    rq.time_s = 10;
    rq.tables = 1;
    rq.table_size = 10000;
    rq.seed = 42;
    p.rq = &rq;
    p.rundir = "/nonexistent/run";
    p.pgolab = "/nonexistent/pgolab";

    p.library = false;  /* a server target */
    config_off_tty(&p, v, 2, &cfg);
    assert_true(cfg.progress);  /* was stderr_is_tty(): false here, nothing in a log */
    assert_ptr_equal(cfg.variants, v);
    assert_int_equal(cfg.nvariants, 2);
    assert_int_equal(cfg.nworkloads, 1);
    assert_string_equal(cfg.workloads[0], "oltp_read_only");
    assert_int_equal(cfg.nthreads, 2);
    assert_int_equal(cfg.threads[1], 4);
    assert_int_equal(cfg.rounds, 5);
    assert_true(cfg.time_s == 10);
    assert_int_equal(cfg.table_size, 10000);
    assert_true(cfg.seed == 42);
    assert_string_equal(cfg.workdir, "/nonexistent/run");
    assert_string_equal(cfg.target, "postgresql");
    assert_false(cfg.no_metrics);

    p.library = true;  /* a library target (sqlite): as before */
    config_off_tty(&p, v, 2, &cfg);
    assert_true(cfg.progress);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_progress_off_tty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
