/* Unit tests of --measure=instructions (src/experiment/callgrind): --measure parsing, the
 * totals of callgrind output files (totals: preferred over summary:, the simulated I1 and
 * branch misses by column name), and the instruction metric of the cell statistics. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "experiment/callgrind.h"
#include "experiment/callgrind_server.h"
#include "model/cells.h"
#include "model/model.h"
#include "util/util.h"

#include "experiment_fixtures.h"

#include <math.h>
#include <stdlib.h>
#include <signal.h>
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
    assert_true(cc.d1_miss == 70 && cc.ll_miss == 18);  /* D1mr + D1mw; ILmr + DLmr + DLmw */
    /* KCachegrind's CEst: 1000 + 10 * 15 + 10 * (17 + 70) + 100 * 18 */
    assert_float_equal(experiment_callgrind_est_cycles(&cc), 1000 + 150 + 870 + 1800, 1e-9);
    struct callgrind_counts sum = cc;
    experiment_callgrind_add(&sum, &cc);
    assert_true(sum.ir == 2000 && sum.i1_miss == 34 && sum.d1_miss == 140 && sum.ll_miss == 36 &&
                sum.branch_miss == 30);
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

/* callgrind_text_names: a function as a defined name, with and without name compression, as
 * a callee, a C++ signature by its "name(" prefix; a longer name or a mention elsewhere is
 * no match. */
static void test_text_names(void **state)
{
    (void)state;
    assert_true(callgrind_text_names("events: Ir\nfn=(12) PostgresMain\n1 5\n", "PostgresMain"));
    assert_true(callgrind_text_names("fn=(1) BackendRun\ncfn=(2) PostgresMain\ncalls=1 0\n",
                                     "PostgresMain"));
    assert_true(callgrind_text_names("fn=PostgresMain\n", "PostgresMain"));
    assert_false(callgrind_text_names("fn=(12) PostgresMainLoop\n", "PostgresMain"));
    assert_false(callgrind_text_names("cmd: PostgresMain\nfn=(3) main\n", "PostgresMain"));
    assert_false(callgrind_text_names("fn=(12)\n", "PostgresMain"));
    assert_true(callgrind_text_names("fn=(7) do_command(THD*, bool)\n", "do_command("));
    assert_false(callgrind_text_names("fn=(7) do_commands(THD*)\n", "do_command("));
    assert_string_equal(callgrind_server_marker(SERVER_PGSQL), "PortalRun");
    assert_string_equal(callgrind_server_marker(SERVER_MYSQL), "do_command(");
}

/* callgrind_server_read: the files of the benchmark's connections (by backend PID,
 * PostgreSQL; by callgrind thread of the dump, MariaDB) are serving, every other file
 * background, a stranger (another connection that ran statements) named there; a missing or
 * empty file of a connection is an error naming it. The wrapper zeroes PostgreSQL's counts
 * at the fork. */
static void test_server_read(void **state)
{
    (void)state;
    char dir[] = "/tmp/pgolab-test-XXXXXX";
    assert_non_null(mkdtemp(dir));
    const char *ev = "events: Ir I1mr D1mr D1mw ILmr DLmr DLmw Bc Bcm Bi Bim\n";
    /* a backend that ran a statement */
    char *t1 = xasprintf("%sfn=(1) BackendRun\ncfn=(2) PostgresMain\ncalls=1 0\n"
                         "1 900 0 0 0 0 0 0 0 0 0 0\nfn=(2)\n1 100 1 2 3 0 0 0 0 4 0 0\n"
                         "cfn=(3) PortalRun\ncalls=1 0\n1 0 0 0 0 0 0 0 0 0 0 0\n"
                         "totals: 1000 10 20 30 1 2 3 40 5 60 6\n", ev);
    char *t2 = xasprintf("%sfn=(1) CheckpointerMain\n1 70 0 0 0 0 0 0 0 0 0 0\n"
                         "totals: 70 1 2 3 0 0 1 4 1 6 1\n", ev);
    /* the backend of a start-up probe: through PostgresMain, no statement */
    char *t3 = xasprintf("%sfn=(1) BackendRun\ncfn=(2) PostgresMain\ncalls=1 0\n"
                         "1 500 0 0 0 0 0 0 0 0 0 0\ntotals: 500 1 1 1 0 0 0 1 1 1 1\n", ev);
    char *a = write_file(dir, "cg.101", t1, 0644);
    char *b = write_file(dir, "cg.102", t1, 0644);  /* a stranger: it ran statements */
    char *c = write_file(dir, "cg.103", t2, 0644);
    char *probe = write_file(dir, "cg.105", t3, 0644);
    char *other = write_file(dir, "server.log", "not a callgrind file\n", 0644);
    struct callgrind_server_counts sc;
    struct callgrind_server_conn mine[] = { { .pid = 101 } };
    assert_int_equal(callgrind_server_read(dir, SERVER_PGSQL, mine, 1, &sc, NULL), 0);
    assert_int_equal(sc.nserving, 1);
    assert_int_equal(sc.nbackground, 3);
    assert_true(sc.serving.ir == 1000 && sc.serving.i1_miss == 10 && sc.serving.d1_miss == 50);
    assert_true(sc.serving.ll_miss == 6 && sc.serving.branch_miss == 11);
    assert_true(sc.background.ir == 1570 && sc.background.branch_miss == 15);
    assert_int_equal(sc.nstrangers, 1);
    assert_string_equal(sc.strangers[0], "PID 102");
    /* both backends the benchmark's: no stranger */
    struct callgrind_server_conn two[] = { { .pid = 101 }, { .pid = 102 } };
    assert_int_equal(callgrind_server_read(dir, SERVER_PGSQL, two, 2, &sc, NULL), 0);
    assert_true(sc.serving.ir == 2000 && sc.nstrangers == 0 && sc.background.ir == 570);
    /* a connection whose file is missing: never a silently smaller count */
    struct callgrind_server_conn gone[] = { { .pid = 101 }, { .pid = 107 } };
    assert_int_equal(callgrind_server_read(dir, SERVER_PGSQL, gone, 2, &sc, NULL), -1);
    /* MariaDB: only the dump's per-thread files (cg.PID.1-NN) count, by thread number; the
     * files at exit (cg.PID-NN) and the process's empty own name are after the run */
    char *m0 = write_file(dir, "cg.300", "", 0644);
    char *m1 = write_file(dir, "cg.300.1-01", t2, 0644);
    char *m2 = write_file(dir, "cg.300.1-14", t1, 0644);
    char *m3 = write_file(dir, "cg.300.1-15", t1, 0644);
    char *m4 = write_file(dir, "cg.300-14", t1, 0644);
    struct callgrind_server_conn thr[] = { { .thread = 14 } };
    assert_int_equal(callgrind_server_read(dir, SERVER_MYSQL, thr, 1, &sc, NULL), 0);
    assert_true(sc.nserving == 1 && sc.serving.ir == 1000);
    assert_true(sc.nbackground == 2 && sc.background.ir == 1070);
    assert_int_equal(sc.nstrangers, 0);  /* MariaDB's marker is do_command(...) */
    struct callgrind_server_conn thr9[] = { { .thread = 9 } };
    assert_int_equal(callgrind_server_read(dir, SERVER_MYSQL, thr9, 1, &sc, NULL), -1);
    /* a file cut short (a server killed before it wrote its counts): an error */
    char *empty = write_file(dir, "cg.104", "", 0644);
    assert_int_equal(callgrind_server_read(dir, SERVER_PGSQL, mine, 1, &sc, NULL), -1);

    /* the connections of a bench child's report */
    struct callgrind_server_conn *cs;
    int n;
    assert_int_equal(callgrind_server_conns("{\"server_connections\":[{\"pid\":7},{\"pid\":9}]}",
                                            SERVER_PGSQL, &cs, &n), 0);
    assert_true(n == 2 && cs[0].pid == 7 && cs[1].pid == 9);
    free(cs);
    assert_int_equal(callgrind_server_conns("{\"server_connections\":[{\"connection_id\":4,"
                                            "\"os_thread\":99,\"callgrind_thread\":14}]}",
                                            SERVER_MYSQL, &cs, &n), 0);
    assert_true(n == 1 && cs[0].thread == 14);
    free(cs);
    /* no identity: refused, naming the driver */
    assert_int_equal(callgrind_server_conns("{\"server_connections\":[{\"connection_id\":4}]}",
                                            SERVER_MYSQL, &cs, &n), -1);
    assert_int_equal(callgrind_server_conns("{\"threads\":1}", SERVER_PGSQL, &cs, &n), -1);
    /* a reconnect made a connection whose identity nobody reported: refused */
    assert_int_equal(callgrind_server_conns("{\"reconnects\":1,\"server_connections\":"
                                            "[{\"pid\":7}]}", SERVER_PGSQL, &cs, &n), -1);
    assert_int_equal(callgrind_server_conns(NULL, SERVER_PGSQL, &cs, &n), -1);
    assert_null(cs);
    struct argvec w = ARGVEC_INIT;
    struct experiment_config cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.valgrind = "/bin/true";  /* any executable: the wrapper only names it */
    assert_int_equal(callgrind_server_wrapper(&w, &cfg, SERVER_PGSQL, dir), 0);
    char *joined = argvec_join(&w);
    assert_non_null(strstr(joined, "--zero-before=fork_process"));
    assert_non_null(strstr(joined, "--cache-sim=yes --branch-sim=yes"));
    assert_null(strstr(joined, "--separate-threads"));
    /* the client's socket is read outside the count, and collection stays on elsewhere */
    assert_non_null(strstr(joined, "--toggle-collect=secure_read --collect-atstart=yes"));
    free(joined);
    argvec_clear(&w);
    assert_int_equal(callgrind_server_wrapper(&w, &cfg, SERVER_MYSQL, dir), 0);
    joined = argvec_join(&w);
    assert_non_null(strstr(joined, "--separate-threads=yes"));
    assert_non_null(strstr(joined, "--vgdb-prefix="));  /* the bench child's vgdb reaches it */
    assert_null(strstr(joined, "--zero-before"));
    assert_non_null(strstr(joined, "--toggle-collect=vio_read"));
    assert_non_null(strstr(joined, "--collect-atstart=yes"));
    free(joined);
    argvec_clear(&w);
    /* PostgreSQL stops with a smart shutdown (each backend ends by itself), MariaDB its own */
    assert_int_equal(callgrind_server_stop_signal(SERVER_PGSQL), SIGTERM);
    assert_int_equal(callgrind_server_stop_signal(SERVER_MYSQL), 0);
    cfg.valgrind = "/nonexistent/valgrind";
    assert_int_equal(callgrind_server_wrapper(&w, &cfg, SERVER_PGSQL, dir), -1);
    argvec_clear(&w);
    /* the deterministic defaults first, the user's after them (they override) */
    char *user[] = { "autovacuum=on", "shared_buffers=64MB" };
    callgrind_server_options(SERVER_PGSQL, NULL, user, 2, &w);
    assert_int_equal(w.n, 4);
    assert_string_equal(w.v[0], "autovacuum=off");
    assert_string_equal(w.v[1], "track_counts=off");
    assert_string_equal(w.v[2], "autovacuum=on");
    argvec_clear(&w);
    char *paths[] = { a, b, c, probe, other, empty, m0, m1, m2, m3, m4 };
    for (size_t i = 0; i < ARRAY_SIZE(paths); i++) {
        unlink(paths[i]);
        free(paths[i]);
    }
    rmdir(dir);
    free(t1);
    free(t2);
    free(t3);
}

/* callgrind_marginal: a marginal count that noise takes below zero (fewer LL misses in the N
 * child than in the N/5 child, a background that did less in the longer run) is never a
 * negative value: NAN, its bit in below_zero, null in the JSON with its key listed; read back
 * the same, and a negative value stored by an older pgolab too. */
static void test_marginal_signs(void **state)
{
    (void)state;
    struct callgrind_counts cc[2] = {
        { .ir = 1000, .i1_miss = 10, .d1_miss = 20, .ll_miss = 9, .branch_miss = 5 },
        { .ir = 5000, .i1_miss = 50, .d1_miss = 60, .ll_miss = 7, .branch_miss = 25 },
    };
    struct callgrind_counts bg[2] = { { .ir = 900 }, { .ir = 400 } };
    uint64_t txns[2] = { 20, 100 };
    struct run_result r;
    memset(&r, 0, sizeof(r));
    r.json = xstrdup("{\"threads\":1}");
    callgrind_marginal(&r, 100, cc, txns, bg, "test");
    assert_float_equal(r.instr_per_txn, 50.0, 1e-9);
    assert_float_equal(r.i1_miss_per_txn, 0.5, 1e-9);
    assert_true(isnan(r.ll_miss_per_txn));  /* (7 - 9) / 80: below zero */
    assert_true(isnan(r.bg_instr_per_txn));  /* (400 - 900) / 80 */
    assert_true(isnan(r.bg_est_cycles_per_txn));
    assert_int_equal(r.below_zero, (1u << (METRIC_LL_MISS - METRIC_INSTR)) |
                                       RUN_BELOW_ZERO_BG_INSTR | RUN_BELOW_ZERO_BG_CYCLES);
    /* est. cycles: 4000 + 10 * 20 + 10 * 80 + 100 * -2 = 4800 over 80 */
    assert_float_equal(r.est_cycles_per_txn, 60.0, 1e-9);
    assert_non_null(strstr(r.json, "\"ll_misses_per_transaction\":null"));
    assert_non_null(strstr(r.json, "\"below_zero\":[\"ll_misses_per_transaction\","
                                   "\"background.instructions_per_transaction\""));
    struct run_result back;
    memset(&back, 0, sizeof(back));
    callgrind_from_json(r.json, &back);
    assert_int_equal(back.below_zero, r.below_zero);
    assert_true(isnan(back.ll_miss_per_txn) && isnan(back.bg_instr_per_txn));
    assert_float_equal(back.instr_per_txn, 50.0, 1e-9);
    /* an older pgolab stored the negative value itself */
    callgrind_from_json("{\"callgrind\":{\"instructions_per_transaction\":5,"
                        "\"d1_misses_per_transaction\":-0.01,\"background\":{"
                        "\"instructions_per_transaction\":-15160}}}", &back);
    assert_true(isnan(back.d1_miss_per_txn) && isnan(back.bg_instr_per_txn));
    assert_int_equal(back.below_zero, (1u << (METRIC_D1_MISS - METRIC_INSTR)) |
                                          RUN_BELOW_ZERO_BG_INSTR);
    assert_float_equal(back.instr_per_txn, 5.0, 1e-9);
    free(r.json);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_measure_instructions),
        cmocka_unit_test(test_text_names),
        cmocka_unit_test(test_server_read),
        cmocka_unit_test(test_marginal_signs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
