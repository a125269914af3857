/* Unit tests of the experiment loop (src/experiment/experiment.c, experiment_run()) against a
 * fake `pgolab` shell script: fingerprints, the runs of every block in experiment_order(),
 * the wrong-library check, a failing child and a failing prepare, --warmup-runs and the
 * --reset modes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "experiment/experiment.h"
#include "experiment/plan.h"
#include "experiment/record.h"
#include "experiment/variants.h"
#include "util/signals.h"
#include "util/util.h"

#include "experiment_fixtures.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void test_run_with_fake_child(void **state)
{
    (void)state;
    struct fake_dir fd;
    fake_dir_make(&fd);
    char *lib_broken = write_file(fd.dir, "lib-broken.so", "", 0644);
    char *workdir = xasprintf("%s/work/nested", fd.dir);
    struct variant v[2];
    struct experiment_config cfg;
    struct experiment_result res;
    fake_config(&cfg, v, &fd, workdir, 3, 11);

    assert_int_equal(experiment_fingerprint(&cfg), 0);
    /* sha256 of the empty file (FIPS 180-4 test vector). */
    assert_string_equal(v[0].sha256,
                        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    assert_string_equal(v[1].version, "3.99.0");
    assert_string_equal(v[1].source_id, "fake-id");
    assert_string_equal(v[1].loaded_from, fd.lib_fast);

    assert_int_equal(experiment_run(&cfg, NULL, &res), 0);
    assert_null(res.error);
    assert_int_equal(res.nruns, 12); /* 3 rounds x 2 thread counts x 2 variants */
    assert_non_null(strstr(res.env_json, "\"cores\""));
    for (int i = 0; i < res.nruns; i += 2) {
        const struct run_result *a = &res.runs[i], *b = &res.runs[i + 1];
        int order[2];
        /* Each block runs both variants once, in the order experiment_order() gives. */
        assert_int_equal(a->round, b->round);
        assert_int_equal(a->threads, b->threads);
        assert_int_equal(a->round, i / 4 + 1);
        assert_int_equal(a->threads, threads2[(i / 2) % 2]);
        experiment_order(11, a->round, (i / 2) % 2, 2, order);
        assert_int_equal(a->variant, order[0]);
        assert_int_equal(b->variant, order[1]);
        for (int k = 0; k < 2; k++) {
            const struct run_result *r = k ? b : a;
            assert_float_equal(r->tps, r->variant == 1 ? 125.0 : 100.0, 1e-9);
            assert_non_null(strstr(r->json, "\"threads\":"));
        }
    }
    struct cell_stats c = experiment_cell(&res, 1, 0, 2, METRIC_TPS);
    assert_int_equal(c.n, 3);
    assert_float_equal(experiment_improvement(METRIC_TPS, 100, c.median), 25.0, 1e-9);
    /* Database files are removed as it goes; the logs stay. */
    assert_int_equal(count_files(workdir, ".db"), 0);
    assert_int_equal(count_files(workdir, ".log"), 13); /* 1 prepare + 12 runs */
    experiment_result_release(&res);

    /* A child that ran another SQLite than the fingerprinted one is an error, not a result. */
    free(v[1].source_id);
    v[1].source_id = xstrdup("another-id");
    cfg.rounds = 1;
    assert_int_equal(experiment_run(&cfg, NULL, &res), -1);
    assert_non_null(strstr(res.error, "wrong library"));
    assert_non_null(strstr(res.error, "another-id"));
    experiment_result_release(&res);
    cfg.rounds = 3;

    /* A failing child stops the experiment with a one-line message; finished runs are kept. */
    v[1].name = "broken";
    v[1].library = lib_broken;
    free(v[1].source_id);
    v[1].source_id = NULL;
    assert_int_equal(experiment_run(&cfg, NULL, &res), -1);
    assert_non_null(res.error);
    assert_null(strchr(res.error, '\n'));
    assert_non_null(strstr(res.error, "variant broken"));
    assert_non_null(strstr(res.error, "oltp_read_only"));
    assert_non_null(strstr(res.error, "threads=1"));
    assert_non_null(strstr(res.error, "round 1/3"));
    assert_non_null(strstr(res.error, "FATAL: boom"));
    assert_in_range(res.nruns, 0, 1);
    for (int i = 0; i < res.nruns; i++)
        assert_int_equal(res.runs[i].variant, 0);
    experiment_result_release(&res);

    /* A prepare failure names the workload and shows the log's tail. */
    v[0].library = lib_broken;
    char *bad[] = { "no_such_workload", NULL };
    const char *fail_exe = write_file(fd.dir, "fail", "#!/bin/sh\necho 'unknown test' >&2\nexit 1\n", 0755);
    cfg.pgolab = fail_exe;
    cfg.workloads = bad;
    assert_int_equal(experiment_run(&cfg, NULL, &res), -1);
    assert_non_null(strstr(res.error, "prepare of no_such_workload"));
    assert_non_null(strstr(res.error, "unknown test"));
    assert_int_equal(res.nruns, 0);
    experiment_result_release(&res);
    free((char *)fail_exe);

    for (int i = 0; i < 2; i++)
        experiment_variant_release(&v[i]);
    fake_dir_remove(&fd);
    free(lib_broken);
    free(workdir);
}

/* --warmup-runs: warm-up runs happen first (each variant, each thread count, warmup_runs
 * times), are discarded (not in res), and the measured runs follow as without them. */
static void test_warmup_runs(void **state)
{
    (void)state;
    struct fake_dir fd;
    fake_dir_make(&fd);
    struct variant v[2];
    struct experiment_config cfg;
    struct experiment_result res;
    fake_config(&cfg, v, &fd, fd.dir, 1, 5);
    cfg.warmup_runs = 2;
    FILE *f = run_logged(&cfg, &res, &fd, 4);  /* only the measured runs */
    char line[256];
    int n = 0, per[2][3] = { { 0 } };
    while (fgets(line, sizeof(line), f)) {
        int th = 0;
        char lib[64];
        assert_int_equal(sscanf(line, "%63s %d", lib, &th), 2);
        if (n < 8) /* the warm-ups come first: 2 per variant and thread count */
            per[strstr(lib, "fast") != NULL][th]++;
        n++;
    }
    fclose(f);
    assert_int_equal(n, 8 + 4);
    for (int vi = 0; vi < 2; vi++)
        for (int th = 1; th <= 2; th++)
            assert_int_equal(per[vi][th], 2);
    char *settings = experiment_settings_json(&cfg, NULL);
    assert_non_null(strstr(settings, "\"warmup_runs\":2"));
    free(settings);
    cfg.warmup_runs = 0;
    settings = experiment_settings_json(&cfg, NULL);
    assert_null(strstr(settings, "warmup_runs"));
    free(settings);
    experiment_result_release(&res);
    assert_int_equal(fake_dir_remove(&fd), 0);
}

/* --reset: which data each run starts from. Each fake run appends to its database and logs
 * how many runs that database had seen: run = always 0; round = 0, 1 within a variant's round
 * (2 thread counts), then 0 again; variant = 0..3 over 2 rounds x 2 thread counts, on data
 * prepared by the variant itself. */
static void test_reset_modes(void **state)
{
    (void)state;
    static const enum experiment_reset modes[] = { RESET_RUN, RESET_ROUND, RESET_VARIANT };
    for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
        struct fake_dir fd;
        fake_dir_make(&fd);
        struct variant v[2];
        struct experiment_config cfg;
        struct experiment_result res;
        fake_config(&cfg, v, &fd, fd.dir, 2, 9);
        cfg.reset = modes[m];
        FILE *f = run_logged(&cfg, &res, &fd, 8);
        char line[256], lib[64], prep[64];
        int th, seen, n = 0, count[2] = { 0, 0 };
        while (fgets(line, sizeof(line), f)) {
            assert_int_equal(sscanf(line, "%63s %d %d %63s", lib, &th, &seen, prep), 4);
            int vi = strstr(lib, "fast") != NULL;
            int k = count[vi]++;  /* this variant's k-th run, in run order */
            int want = modes[m] == RESET_RUN ? 0 : modes[m] == RESET_ROUND ? k % 2 : k;
            print_message("%s: %s run %d saw %d (want %d), prepared by %s\n",
                          experiment_reset_name(modes[m]), lib, k, seen, want, prep);
            assert_int_equal(seen, want);
            /* run and round: the baseline's data; variant: its own */
            assert_string_equal(prep, modes[m] == RESET_VARIANT ? lib : "lib-base.so");
            n++;
        }
        fclose(f);
        assert_int_equal(n, 8);
        experiment_result_release(&res);
        assert_int_equal(fake_dir_remove(&fd), 0);
    }
    enum experiment_reset r;
    assert_int_equal(experiment_reset_parse("round", &r), 0);
    assert_int_equal(r, RESET_ROUND);
    assert_int_equal(experiment_reset_parse("never", &r), -1);
}

/* --target-ci: the fake's tps are exact (100 and 125 in every round), so every cell's
 * sequence has width 0 and the rounds stop at the first round they may: 5 of at most 40. */
static void test_target_ci_stops(void **state)
{
    (void)state;
    struct fake_dir fd;
    fake_dir_make(&fd);
    struct variant v[2];
    struct experiment_config cfg;
    struct experiment_result res;
    fake_config(&cfg, v, &fd, fd.dir, 40, 9);
    cfg.target_ci = 2;
    cfg.cs_rounds = 20;
    assert_int_equal(experiment_run(&cfg, NULL, &res), 0);
    assert_int_equal(res.nruns, 5 * 2 * 2); /* 5 rounds x 2 thread counts x 2 variants */
    int reached;
    assert_int_equal(experiment_target_cells(&cfg, &res, -1, &reached, NULL), 2);
    assert_int_equal(reached, 2);
    assert_string_equal(experiment_target_stop_reason(&cfg, &res), "target reached");
    char *text = report_string(&cfg, &res);
    assert_non_null(strstr(text, "reached in 2 of 2 cells, stopped by target reached"));
    assert_null(strstr(text, "INCOMPLETE"));
    assert_non_null(strstr(text, "+25.0% (95% CI +25.0% .. +25.0%)"));
    free(text);
    experiment_result_release(&res);
    assert_int_equal(fake_dir_remove(&fd), 0);
}

static volatile sig_atomic_t outer_got;

static void outer(int sig)
{
    outer_got = sig;
}

/* A Ctrl-C that reached an enclosing catch (pgo's, between its correctness gate and its
 * measurement) before the engine installed its own: the engine stops before any prepare or
 * run, says so, and records the signal; without that signal the same config runs. */
static void test_signal_before_run(void **state)
{
    (void)state;
    struct fake_dir fd;
    fake_dir_make(&fd);
    struct variant v[2];
    struct experiment_config cfg;
    struct experiment_result res;
    struct sig_saved saved;
    fake_config(&cfg, v, &fd, fd.dir, 1, 9);
    sig_catch(outer, &saved);
    raise(SIGINT);
    assert_int_equal(outer_got, SIGINT);
    assert_int_equal(experiment_run(&cfg, NULL, &res), -1);
    assert_int_equal(res.signal, SIGINT);
    assert_non_null(strstr(res.error, "interrupted by SIGINT"));
    assert_int_equal(res.nruns, 0);
    assert_int_equal(count_files(fd.dir, ".log"), 0); /* not even the prepare ran */
    experiment_result_release(&res);
    sig_restore(&saved);
    assert_int_equal(experiment_run(&cfg, NULL, &res), 0);
    assert_int_equal(res.nruns, 2 * 2);
    experiment_result_release(&res);
    assert_int_equal(fake_dir_remove(&fd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_run_with_fake_child),
        cmocka_unit_test(test_warmup_runs),
        cmocka_unit_test(test_reset_modes),
        cmocka_unit_test(test_target_ci_stops),
        cmocka_unit_test(test_signal_before_run),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
