/* Unit tests of recording in the results store (src/experiment/record): a whole experiment
 * recorded against the fake pgolab, its report rebuilt from the store character for
 * character, one interrupted by SIGINT, the resumes that must be refused, and a resume that
 * ends with the same runs in the same order as the uninterrupted one. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "experiment/experiment.h"
#include "experiment/record.h"
#include "experiment/variants.h"
#include "store/store.h"
#include "util/strbuf.h"
#include "util/util.h"

#include "experiment_fixtures.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>

struct key_list {
    struct strbuf keys;  /* "variant/workload/threads/round\n" per run, in seq order */
    double started[64];  /* started_at by seq - 1 */
    int n;
};

static int key_cb(const struct store_run *r, void *ctx)
{
    struct key_list *k = ctx;
    strbuf_addf(&k->keys, "%d/%s/%d/%d\n", r->variant_idx, r->workload, r->threads, r->round);
    if (k->n < 64)
        k->started[k->n] = r->started_at;
    k->n++;
    return 0;
}

static void run_keys(struct store *s, int64_t id, struct key_list *k)
{
    memset(k, 0, sizeof(*k));
    assert_int_equal(store_runs_load(s, id, key_cb, k), 0);
}

/* Checks that stored experiment id has status want. */
static void assert_status(struct store *s, int64_t id, const char *want)
{
    struct store_experiment e;
    assert_int_equal(store_experiment_get(s, id, &e), 0);
    assert_string_equal(e.status, want);
    store_experiment_release(&e);
}

/* experiment_record_resume() with its stderr captured (via errpath) in *err (caller frees);
 * returns its result. */
static int resume_captured(struct experiment_config *cfg, struct store *s, int64_t id,
                           const char *kind, const char *errpath, char **err)
{
    int saved = stderr_begin(errpath);
    int rc = experiment_record_resume(cfg, s, id, kind, NULL);
    *err = stderr_end(saved, errpath);
    return rc;
}

/* Record an experiment, interrupt another with SIGINT, refuse bad resumes, resume it, and
 * check it ends with the same runs in the same order as the uninterrupted one. */
static void test_record_and_resume(void **state)
{
    (void)state;
    struct fake_dir fd;
    fake_dir_make(&fd);
    char *workdir = xasprintf("%s/work", fd.dir);
    char *dbpath = xasprintf("%s/results.db", fd.dir);
    char *errpath = xasprintf("%s/stderr.txt", fd.dir);
    char *count = xasprintf("%s/count", fd.dir);
    struct variant v[2];
    struct experiment_config cfg;
    struct experiment_result res;
    struct store *s;
    struct key_list full, part, resumed;
    fake_config(&cfg, v, &fd, workdir, 3, 11);
    assert_int_equal(experiment_fingerprint(&cfg), 0);
    assert_int_equal(store_open(dbpath, &s), 0);
    setenv("XDG_STATE_HOME", fd.dir, 1); /* store_remember_path() writes there */

    /* 1. Uninterrupted: every run recorded, status complete, and the report rebuilt from the
     *    store is the report printed at the end, character for character. */
    int saved = stderr_begin(errpath);
    int rc = experiment_record_begin(&cfg, s, "compare", NULL);
    char *err = stderr_end(saved, errpath);
    assert_int_equal(rc, 0);
    assert_int_equal(cfg.experiment_id, 1);
    assert_non_null(strstr(err, "experiment 1 recorded in "));
    assert_non_null(strstr(err, "results.db"));
    free(err);
    assert_int_equal(experiment_run(&cfg, s, &res), 0);
    /* a recorded run's JSON report is the store's, not kept in memory (the report below is
     * made from the numbers alone, identical to the one rebuilt with the JSON) */
    for (int i = 0; i < res.nruns; i++)
        assert_null(res.runs[i].json);
    assert_int_equal(experiment_record_finish(&cfg, s, &res, 0), 0);
    assert_status(s, 1, "complete");
    run_keys(s, 1, &full);
    assert_int_equal(full.n, 12);
    char *live = report_string(&cfg, &res);
    assert_true(!strncmp(live, "pgolab experiment 1 (compare):", 30));
    struct experiment_loaded l;
    assert_int_equal(experiment_load(s, 1, &l), 0);
    assert_int_equal(l.res.nruns, 12);
    for (int i = 0; i < l.res.nruns; i++) /* read back from the store */
        assert_non_null(strstr(l.res.runs[i].json, "\"tps\""));
    assert_int_equal(l.cfg.rounds, 3);
    assert_int_equal(l.cfg.nthreads, 2);
    assert_int_equal(l.cfg.seed, 11);
    assert_null(l.res.error);
    assert_string_equal(l.cfg.variants[1].sha256, v[1].sha256);
    char *stored = report_string(&l.cfg, &l.res);
    assert_string_equal(stored, live);
    free(stored);
    free(live);
    experiment_loaded_release(&l);
    experiment_result_release(&res);

    /* 2. The same experiment again, interrupted by SIGINT during its 3rd run: the two
     *    finished runs are recorded, the 3rd is not, status interrupted. */
    cfg.experiment_id = 0;
    setenv("FAKE_STOP_AT", "3", 1);
    setenv("FAKE_COUNT", count, 1);
    saved = stderr_begin(errpath);
    assert_int_equal(experiment_record_begin(&cfg, s, "compare", NULL), 0);
    assert_int_equal(cfg.experiment_id, 2);
    cfg.keep_run_json = true; /* --output: every run's JSON stays */
    rc = experiment_run(&cfg, s, &res);
    cfg.keep_run_json = false;
    err = stderr_end(saved, errpath);
    free(err);
    unsetenv("FAKE_STOP_AT");
    assert_int_equal(rc, -1);
    assert_int_equal(res.signal, SIGINT);
    assert_int_equal(res.nruns, 2);
    for (int i = 0; i < res.nruns; i++)
        assert_non_null(strstr(res.runs[i].json, "\"tps\""));
    assert_int_equal(experiment_record_finish(&cfg, s, &res, rc), 0);
    experiment_result_release(&res);
    assert_status(s, 2, "interrupted");
    run_keys(s, 2, &part);
    assert_int_equal(part.n, 2);
    /* The report of a stored, interrupted experiment says so. */
    assert_int_equal(experiment_load(s, 2, &l), 0);
    stored = report_string(&l.cfg, &l.res);
    assert_non_null(strstr(stored, "INCOMPLETE: 2 of 12 runs finished: experiment 2 interrupted: "
                                   "interrupted by SIGINT during run 3 "));
    /* the exact command: the resume reads every setting from the store */
    assert_non_null(strstr(stored, "(`pgolab compare --resume=2 --results="));
    assert_non_null(strstr(stored, "` continues it)"));
    assert_null(strstr(stored, "same options"));
    free(stored);
    experiment_loaded_release(&l);

    /* 3. Resumes that must be refused, each with one line naming the reason. */
    struct {
        int64_t id;
        const char *kind;
        int rounds;
        const char *want;
    } bad[] = {
        { 2, "compare", 4, "cannot resume experiment 2: its settings differ (recorded -> now): "
                           "rounds: 3 -> 4" },
        { 42, "compare", 3, "no experiment 42 in " },
        { 1, "compare", 3, "experiment 1 is complete; nothing to resume" },
        { 2, "pgo", 3, "experiment 2 was recorded by `pgolab compare`, not `pgolab pgo`" },
    };
    for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
        cfg.rounds = bad[i].rounds;
        cfg.experiment_id = 0;
        rc = resume_captured(&cfg, s, bad[i].id, bad[i].kind, errpath, &err);
        assert_int_equal(rc, -1);
        if (!strstr(err, bad[i].want))
            fail_msg("case %zu: '%s' lacks '%s'", i, err, bad[i].want);
        assert_int_equal(count_lines(err), 1);
        assert_int_equal(cfg.experiment_id, 0);
        free(err);
    }
    cfg.rounds = 3;
    /* A variant whose library changed is named. */
    char *other = write_file(fd.dir, "lib-other.so", "changed", 0644);
    v[1].library = other;
    char *sha = v[1].sha256;
    v[1].sha256 = NULL;
    assert_int_equal(experiment_fingerprint(&cfg), 0);
    rc = resume_captured(&cfg, s, 2, "compare", errpath, &err);
    assert_int_equal(rc, -1);
    assert_non_null(strstr(err, "variant.fast: {"));
    assert_null(strstr(err, "variant.base"));
    free(err);
    free(v[1].sha256);
    v[1].sha256 = sha;
    v[1].library = fd.lib_fast;

    /* 4. Resume: the stored seed comes back, only the 10 missing runs run, and the final
     *    runs are the full grid in the same order as the uninterrupted experiment. */
    cfg.seed = 999;
    rc = resume_captured(&cfg, s, 2, "compare", errpath, &err);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(err, "resuming experiment 2 in "));
    assert_non_null(strstr(err, ": 2 of 12 runs recorded"));
    free(err);
    assert_int_equal(cfg.seed, 11);
    assert_int_equal(cfg.experiment_id, 2);
    assert_status(s, 2, "running");
    assert_int_equal(experiment_run(&cfg, s, &res), 0);
    assert_int_equal(res.resumed, 2);
    assert_int_equal(res.nruns, 12);
    for (int i = 0; i < res.nruns; i++) /* the 2 loaded from the store are dropped too */
        assert_null(res.runs[i].json);
    assert_int_equal(experiment_record_finish(&cfg, s, &res, 0), 0);
    experiment_result_release(&res);
    assert_status(s, 2, "complete");
    run_keys(s, 2, &resumed);
    assert_int_equal(resumed.n, 12);
    assert_string_equal(resumed.keys.buf, full.keys.buf);
    /* The two runs from before were kept, not redone. */
    assert_float_equal(resumed.started[0], part.started[0], 1e-6);
    assert_float_equal(resumed.started[1], part.started[1], 1e-6);
    /* Resuming it again is refused. */
    rc = resume_captured(&cfg, s, 2, "compare", errpath, &err);
    assert_int_equal(rc, -1);
    assert_non_null(strstr(err, "experiment 2 is complete; nothing to resume"));
    free(err);

    /* 5. How a failure ends: one before the first run leaves no row; after runs, --resume is
     *    suggested (at the end and by the stored report) only for a transient cause. */
    struct {
        int nruns;
        bool transient;
        const char *live, *stored; /* what stderr and the loaded report say (NULL: no row) */
        const char *not_live;
    } ends[] = {
        { 0, false, "removed from ", NULL, "resume" },
        { 1, false, "failed: the same options would fail again (--resume would too)",
          "failed: the server would not start", "--resume=" },
        { 1, true, "failed: `pgolab compare --resume=", "(`pgolab compare --resume=", NULL },
    };
    for (size_t i = 0; i < ARRAY_SIZE(ends); i++) {
        cfg.experiment_id = 0;
        saved = stderr_begin(errpath);
        assert_int_equal(experiment_record_begin(&cfg, s, "compare", NULL), 0);
        memset(&res, 0, sizeof(res));
        res.error = xstrdup("the server would not start");
        res.nruns = ends[i].nruns; /* the count only: no run rows are needed here */
        res.transient = ends[i].transient;
        assert_int_equal(experiment_record_finish(&cfg, s, &res, -1), 0);
        err = stderr_end(saved, errpath);
        free(res.error);
        if (!strstr(err, ends[i].live))
            fail_msg("case %zu: '%s' lacks '%s'", i, err, ends[i].live);
        if (ends[i].not_live && strstr(strstr(err, "\n") + 1, ends[i].not_live))
            fail_msg("case %zu: '%s' has '%s'", i, err, ends[i].not_live);
        free(err);
        struct store_experiment e;
        saved = stderr_begin(errpath);
        int got = store_experiment_get(s, cfg.experiment_id, &e);
        free(stderr_end(saved, errpath));
        if (!ends[i].stored) {
            assert_int_equal(got, -1);
            continue;
        }
        assert_int_equal(got, 0);
        store_experiment_release(&e);
        assert_int_equal(experiment_load(s, cfg.experiment_id, &l), 0);
        if (!strstr(l.res.error, ends[i].stored))
            fail_msg("case %zu: '%s' lacks '%s'", i, l.res.error, ends[i].stored);
        if (!ends[i].transient && strstr(l.res.error, "--resume"))
            fail_msg("case %zu: '%s' suggests --resume", i, l.res.error);
        experiment_loaded_release(&l);
    }
    /* calibrate has no --resume: an interrupted one is started again, never resumed */
    cfg.experiment_id = 0;
    saved = stderr_begin(errpath);
    assert_int_equal(experiment_record_begin(&cfg, s, "calibrate", NULL), 0);
    memset(&res, 0, sizeof(res));
    res.error = xstrdup("interrupted by SIGINT during run 2");
    res.nruns = 1;
    res.signal = SIGINT;
    assert_int_equal(experiment_record_finish(&cfg, s, &res, -1), 0);
    err = stderr_end(saved, errpath);
    free(res.error);
    assert_non_null(strstr(err, "interrupted: `pgolab calibrate` with the same options starts it "
                                "again (it has no --resume)"));
    free(err);
    assert_int_equal(experiment_load(s, cfg.experiment_id, &l), 0);
    assert_non_null(strstr(l.res.error, "interrupted: interrupted by SIGINT during run 2"));
    assert_null(strstr(l.res.error, "--resume"));
    experiment_loaded_release(&l);

    strbuf_release(&full.keys);
    strbuf_release(&part.keys);
    strbuf_release(&resumed.keys);
    store_close(s);
    for (int i = 0; i < 2; i++)
        experiment_variant_release(&v[i]);
    fake_dir_remove(&fd);
    free(other);
    free(workdir);
    free(dbpath);
    free(errpath);
    free(count);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_record_and_resume),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
