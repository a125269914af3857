/* Unit tests of `pgolab report --compare` (src/report/compare): two experiments recorded in
 * the results store, the second "on another machine" with pgo 30% slower: the warning block,
 * build notes, the tables, CSV and JSON, and --fail-if-slower between the two
 * (src/report/slower). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "experiment/experiment.h"
#include "experiment/record.h"
#include "metrics/metrics.h"
#include "report/tables.h"
#include "store/store.h"
#include "util/strbuf.h"
#include "util/util.h"

#include "experiment_fixtures.h"

#include <jansson.h>
#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Record synthetic runs (res) as a new experiment of store s; the pgo variant's tps scaled by
 * factor. Returns the id. */
static int64_t record_synthetic(struct store *s, struct experiment_config *cfg,
                                const struct experiment_result *res, double factor)
{
    int dummy = stderr_begin("/dev/null");
    cfg->experiment_id = 0;
    assert_int_equal(experiment_record_begin(cfg, s, "compare", NULL), 0);
    free(stderr_end(dummy, "/dev/null"));
    for (int i = 0; i < res->nruns; i++) {
        const struct run_result *r = &res->runs[i];
        struct store_run sr = {
            .variant_idx = r->variant, .workload = cfg->workloads[r->workload],
            .threads = r->threads, .round = r->round, .seq = STORE_SEQ_NEXT,
            .started_at = NAN, .duration_s = NAN,
            .tps = r->variant ? r->tps * factor : r->tps, .qps = r->qps,
            .lat_min_ms = r->lat_min_ms, .lat_avg_ms = r->lat_avg_ms,
            .lat_p95_ms = r->lat_p95_ms, .lat_max_ms = r->lat_max_ms,
            .transactions = r->transactions, .report_json = r->json,
        };
        char *mj = NULL;
        if (r->metrics.available)  /* a managed server's user / system split */
            sr.metrics_json = mj = metrics_json_text(&r->metrics);
        assert_int_equal(store_run_add(s, cfg->experiment_id, &sr), 0);
        free(mj);
    }
    assert_int_equal(store_experiment_finish(s, cfg->experiment_id, "complete"), 0);
    return cfg->experiment_id;
}

/* `pgolab report --compare`: two stored experiments, the second on "another machine" with pgo
 * 30% slower. */
static void test_report_compare(void **state)
{
    (void)state;
    char dir[] = "/tmp/pgolab-test-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char *dbpath = xasprintf("%s/results.db", dir);
    struct experiment_config cfg;
    struct variant v[2];
    struct experiment_result res;
    struct experiment_loaded a, b;
    struct store *s;
    struct strbuf out = STRBUF_INIT, why = STRBUF_INIT;

    synthetic_config(&cfg, v, 5);
    v[0].sha256 = xstrdup("aaaa00112233445566778899aabbccddeeff00112233445566778899aabbccdd");
    v[1].sha256 = xstrdup("bbbb00112233445566778899aabbccddeeff00112233445566778899aabbccdd");
    slow_runs(&res, 5, 1.0);
    assert_int_equal(store_open(dbpath, &s), 0);
    v[0].version = xstrdup("PostgreSQL 15.18");
    v[0].provenance = "postgresql-15 15.18-0+deb12u1 from Debian bookworm-security, upstream 15.18";
    v[1].build = xstrdup("gcc 12.2.0 (pgolab stamp); flags -O2 (pgolab stamp)");
    assert_int_equal(record_synthetic(s, &cfg, &res, 1.0), 1);
    /* experiment 2's baseline: another major, built from another source */
    free(v[0].sha256);
    free(v[0].version);
    v[0].sha256 = xstrdup("cccc00112233445566778899aabbccddeeff00112233445566778899aabbccdd");
    v[0].version = xstrdup("PostgreSQL 18.6");
    v[0].provenance = "postgresql-18 18.6-3 from Debian sid, upstream 18.6";
    /* pgo: another build of the same version, as compare describes its managed servers */
    free(v[1].sha256);
    free(v[1].build);
    v[1].sha256 = xstrdup("dddd00112233445566778899aabbccddeeff00112233445566778899aabbccdd");
    v[1].build = xstrdup("clang 14.0.6 (pgolab stamp); flags -O3 (pgolab stamp)");
    assert_int_equal(record_synthetic(s, &cfg, &res, 0.7), 2);
    experiment_result_release(&res);
    /* Experiment 2 "ran on another machine": change its recorded hostname. */
    sqlite3 *db;
    assert_int_equal(sqlite3_open(dbpath, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "UPDATE experiments SET environment_json ="
                                      " json_set(environment_json, '$.hostname', 'other-host')"
                                      " WHERE id = 2",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(db);

    assert_int_equal(experiment_load(s, 1, &a), 0);
    assert_int_equal(experiment_load(s, 2, &b), 0);
    report_compare(&out, &a, &b, REPORT_TEXT);
    assert_true(!strncmp(out.buf, "pgolab report: experiment 1 vs experiment 2", 43));
    assert_non_null(strstr(out.buf, "WARNING: experiments 1 and 2 ran in different environments"));
    assert_non_null(strstr(out.buf, " -> other-host\n"));
    /* how each was built, read back from the results database */
    assert_non_null(strstr(out.buf, "variant pgo: different builds (sha256 bbbb00112233 vs "
                                    "dddd00112233); built with gcc 12.2.0 (pgolab stamp); flags "
                                    "-O2 (pgolab stamp) vs clang 14.0.6 (pgolab stamp); flags -O3 "
                                    "(pgolab stamp)\n"));
    /* both versions and where each build comes from, read back from the results database */
    assert_non_null(strstr(out.buf, "variant base: different builds (sha256 aaaa00112233 vs "
                                    "cccc00112233): PostgreSQL 15.18 vs PostgreSQL 18.6; from "
                                    "postgresql-15 15.18-0+deb12u1 from Debian bookworm-security, "
                                    "upstream 15.18 vs from postgresql-18 18.6-3 from Debian sid, "
                                    "upstream 18.6\n"));
    assert_non_null(strstr(out.buf, "Table 1. Transactions per second"));
    char *head = line_with(out.buf, "| variant |", " threads |", NULL);
    if (!head || !strstr(head, " experiment 1 ") || !strstr(head, " experiment 2 "))
        fail_msg("no table header in:\n%s", out.buf);
    free(head);
    /* base is unchanged ("~"); pgo is 30% slower in every cell, significant with 5 rounds. */
    assert_line(out.buf, " base | ", " 16 | ", " ~ |");
    assert_line(out.buf, " pgo | ", " 16 | ", "-30.0% (95% CI");
    /* The warning comes before the first table. */
    assert_true(strstr(out.buf, "WARNING") < strstr(out.buf, "Table 1."));
    assert_int_equal(report_compare_slower(&a, &b, 5, &why), 3);
    assert_non_null(strstr(why.buf, "pgo in experiment 2 vs experiment 1, oltp_read_only, 1 thread: "
                                    "tps -30.0%"));
    strbuf_reset(&why);
    assert_int_equal(report_compare_slower(&b, &a, 5, &why), 0); /* the other way: faster */

    /* CSV: a header and 3 metrics x 6 cells; JSON names the difference. */
    strbuf_reset(&out);
    report_compare(&out, &a, &b, REPORT_CSV);
    assert_int_equal(count_lines(out.buf), 1 + 18);
    strbuf_reset(&out);
    report_compare(&out, &a, &b, REPORT_JSON);
    json_t *root = json_loads(out.buf, 0, NULL);
    assert_non_null(root);
    json_t *d = json_object_get(root, "environment_differences");
    assert_int_equal(json_array_size(d), 1);
    assert_non_null(strstr(json_string_value(json_array_get(d, 0)), "hostname: "));
    assert_int_equal(json_array_size(json_object_get(root, "cells")), 18);
    json_decref(root);

    /* On its own, experiment 2 fails --fail-if-slower (3 thread rows + the Average), 1 not. */
    strbuf_reset(&why);
    assert_int_equal(report_slower(&b.cfg, &b.res, 5, &why), 4);
    strbuf_reset(&why);
    assert_int_equal(report_slower(&a.cfg, &a.res, 5, &why), 0);

    experiment_loaded_release(&a);
    experiment_loaded_release(&b);
    store_close(s);
    experiment_variant_release(&v[0]);
    experiment_variant_release(&v[1]);
    strbuf_release(&out);
    strbuf_release(&why);
    unlink(dbpath);
    char *wal = xasprintf("%s-wal", dbpath), *shm = xasprintf("%s-shm", dbpath);
    unlink(wal);
    unlink(shm);
    free(wal);
    free(shm);
    rmdir(dir);
    free(dbpath);
}

/* Two experiments of a managed server with the user / system split: --compare adds a table
 * for each (the user time 20% lower in experiment 2); without the split in one of them,
 * none. */
static void test_compare_server_split(void **state)
{
    (void)state;
    char dir[] = "/tmp/pgolab-test-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char *dbpath = xasprintf("%s/results.db", dir);
    struct experiment_config cfg;
    struct variant v[2];
    struct experiment_result res;
    struct experiment_loaded a, b, c;
    struct store *s;
    struct strbuf out = STRBUF_INIT;

    synthetic_config(&cfg, v, 5);
    slow_runs(&res, 5, 1.0);
    assert_int_equal(store_open(dbpath, &s), 0);
    for (int e = 0; e < 3; e++) {
        for (int i = 0; i < res.nruns; i++) {
            struct run_metrics *m = &res.runs[i].metrics;
            memset(m, 0, sizeof(*m));
            m->available = e < 2;  /* experiment 3: recorded without metrics */
            m->server_user_us_per_txn = (e ? 80.0 : 100.0) + res.runs[i].round;
            m->server_sys_us_per_txn = 30.0 + res.runs[i].round;
            m->server_us_per_txn = m->server_user_us_per_txn + m->server_sys_us_per_txn;
        }
        assert_int_equal(record_synthetic(s, &cfg, &res, 1.0), e + 1);
    }
    experiment_result_release(&res);
    assert_int_equal(experiment_load(s, 1, &a), 0);
    assert_int_equal(experiment_load(s, 2, &b), 0);
    assert_int_equal(experiment_load(s, 3, &c), 0);
    report_compare(&out, &a, &b, REPORT_TEXT);
    assert_non_null(strstr(out.buf, "Table 4. Server user CPU time per transaction (us)"));
    assert_non_null(strstr(out.buf, "Table 5. Server system CPU time per transaction (us)"));
    /* user: 103 -> 83 in every cell: 1 - 83 / 103 = +19.4% better */
    assert_line(strstr(out.buf, "Table 4."), " base | ", " 16 | ", "+19.4% (95% CI");
    assert_line(strstr(out.buf, "Table 5."), " base | ", " 16 | ", " ~ |");
    strbuf_reset(&out);
    report_compare(&out, &a, &c, REPORT_TEXT);
    assert_non_null(strstr(out.buf, "Table 3."));
    assert_null(strstr(out.buf, "Table 4."));
    assert_null(strstr(out.buf, "Server user CPU time"));
    experiment_loaded_release(&a);
    experiment_loaded_release(&b);
    experiment_loaded_release(&c);
    store_close(s);
    strbuf_release(&out);
    char *cmd = xasprintf("rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
    free(cmd);
    free(dbpath);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_report_compare),
        cmocka_unit_test(test_compare_server_split),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
