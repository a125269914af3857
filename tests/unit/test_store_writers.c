/* Unit tests of the results store (src/store), the second half: schema creation from an empty
 * file, the run key, a killed writer, concurrent writers in several processes, the settings
 * diff. */
#include "store_test_helpers.h"

static void assert_fresh_schema(const char *path)
{
    assert_int_equal(sql_int(path, "PRAGMA application_id"), STORE_APPLICATION_ID);
    assert_int_equal(sql_int(path, "PRAGMA user_version"), STORE_SCHEMA_VERSION);
    assert_int_equal(sql_int(path, "SELECT count(*) FROM sqlite_master WHERE type = 'table'"
                                   " AND name IN ('experiments', 'variants', 'runs')"),
                     3);
    char *mode = sql_text(path, "PRAGMA journal_mode");
    assert_string_equal(mode, "wal");
    free(mode);
}

static void test_migration_from_empty(void **state)
{
    (void)state;
    char *dir = make_dir();
    struct store *s;
    assert_int_equal(STORE_APPLICATION_ID, 0x50474F4C); /* "PGOL" */

    /* A path that does not exist yet. */
    char *fresh = xasprintf("%s/fresh.db", dir);
    assert_int_equal(store_open(fresh, &s), 0);
    assert_int_equal(store_close(s), 0);
    assert_fresh_schema(fresh);
    /* Reopening changes nothing (no migration left to apply). */
    assert_int_equal(store_open(fresh, &s), 0);
    assert_int_equal(store_close(s), 0);
    assert_fresh_schema(fresh);

    /* An empty (0-byte) file, as `touch` makes. */
    char *empty = xasprintf("%s/empty.db", dir);
    write_file(empty, "", 0);
    assert_int_equal(store_open(empty, &s), 0);
    int64_t id;
    assert_int_equal(store_experiment_begin(s, "calibrate", "{}", NULL, 0, &id), 0);
    assert_true(id == 1);
    assert_int_equal(store_close(s), 0);
    assert_fresh_schema(empty);

    /* A name with characters that mean something in URIs; opened twice (the second time
     * through the read-only check). */
    char *odd = xasprintf("%s/we?ird %%20#name&mode=rw.db", dir);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(store_open(odd, &s), 0);
        assert_int_equal(store_close(s), 0);
    }
    assert_fresh_schema(odd);
    free(odd);

    /* NULL = ./pgolab.db; a relative name starting with "file:" is a plain file name. */
    char cwd[4096];
    assert_non_null(getcwd(cwd, sizeof(cwd)));
    assert_int_equal(chdir(dir), 0);
    assert_int_equal(store_open(NULL, &s), 0);
    assert_string_equal(store_path(s), STORE_DEFAULT_PATH);
    assert_int_equal(store_close(s), 0);
    assert_int_equal(store_open("file:x.db?mode=memory", &s), 0);
    assert_int_equal(store_close(s), 0);
    assert_int_equal(chdir(cwd), 0);
    char *def = xasprintf("%s/pgolab.db", dir);
    char *literal = xasprintf("%s/file:x.db?mode=memory", dir);
    assert_fresh_schema(def);
    assert_fresh_schema(literal);
    free(def);
    free(literal);

    /* A directory that does not exist, and a directory: one error line naming the file. */
    char *missing = xasprintf("%s/no/such/dir.db", dir);
    const char *bad[] = { missing, dir };
    for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
        struct capture c;
        capture_begin(&c, dir);
        assert_int_equal(store_open(bad[i], &s), -1);
        char *err = capture_end(&c);
        char *want = xasprintf("FATAL: results file %s: ", bad[i]);
        assert_int_equal(strncmp(err, want, strlen(want)), 0);
        assert_true(strchr(err, '\n') == err + strlen(err) - 1); /* one line */
        free(want);
        free(err);
    }
    free(missing);
    free(fresh);
    free(empty);
    remove_dir(dir);
}

/* ---------------------------------------------------------------- run key and bad input */

/* Call f and check it fails with one line containing needle. */
#define assert_fails_with(dir, call, needle)                                                  \
    do {                                                                                      \
        struct capture c_;                                                                    \
        capture_begin(&c_, dir);                                                              \
        int rc_ = (call);                                                                     \
        char *err_ = capture_end(&c_);                                                        \
        assert_int_equal(rc_, -1);                                                            \
        if (!strstr(err_, needle))                                                            \
            fail_msg("error '%s' lacks '%s'", err_, needle);                                  \
        assert_int_equal(strncmp(err_, "FATAL: results file ", 20), 0);                       \
        assert_true(strchr(err_, '\n') == err_ + strlen(err_) - 1);                           \
        free(err_);                                                                           \
    } while (0)

static void test_run_key(void **state)
{
    (void)state;
    char *dir = make_dir();
    char *path = xasprintf("%s/key.db", dir);
    struct store *s;
    int64_t id, id2;
    int exists = -1;
    struct store_variant v = { .idx = 0, .name = "base" };
    assert_int_equal(store_open(path, &s), 0);
    assert_int_equal(store_experiment_begin(s, "compare", "{}", NULL, 1, &id), 0);
    assert_int_equal(store_experiment_begin(s, "compare", "{}", NULL, 1, &id2), 0);
    assert_int_equal(store_variant_add(s, id, &v), 0);
    assert_int_equal(store_variant_add(s, id2, &v), 0);

    struct store_run r = sample_run(0, 4, 2, STORE_SEQ_NEXT, "{\"a\":1}");
    assert_int_equal(store_run_exists(s, id, 0, r.workload, 4, 2, &exists), 0);
    assert_int_equal(exists, 0);
    assert_int_equal(store_run_add(s, id, &r), 0);
    assert_int_equal(store_run_exists(s, id, 0, r.workload, 4, 2, &exists), 0);
    assert_int_equal(exists, 1);

    /* The same key again: refused, nothing added, and the handle still works. */
    assert_fails_with(dir, store_run_add(s, id, &r),
                      "run already recorded (experiment 1, variant 0, oltp_read_only, 4 "
                      "threads, round 2)");
    /* Any other component of the key makes it a different run. */
    assert_int_equal(store_run_exists(s, id, 0, r.workload, 4, 3, &exists), 0);
    assert_int_equal(exists, 0);
    assert_int_equal(store_run_exists(s, id, 0, r.workload, 8, 2, &exists), 0);
    assert_int_equal(exists, 0);
    assert_int_equal(store_run_exists(s, id, 0, "oltp_write_only", 4, 2, &exists), 0);
    assert_int_equal(exists, 0);
    assert_int_equal(store_run_exists(s, id2, 0, r.workload, 4, 2, &exists), 0);
    assert_int_equal(exists, 0);
    assert_int_equal(store_run_add(s, id2, &r), 0); /* same key, other experiment */
    r.round = 3;
    assert_int_equal(store_run_add(s, id, &r), 0);
    r.round = 4;
    r.seq = 10;
    assert_int_equal(store_run_add(s, id, &r), 0);
    r.round = 5;
    r.seq = STORE_SEQ_NEXT;
    assert_int_equal(store_run_add(s, id, &r), 0);
    struct run_list l = { .n = 0 };
    assert_int_equal(store_runs_load(s, id, collect_run, &l), 0);
    assert_int_equal(l.n, 4);
    /* STORE_SEQ_NEXT numbered 1, 2; then 10 given; then next = 11. */
    assert_int_equal(l.runs[0].seq, 1);
    assert_int_equal(l.runs[1].seq, 2);
    assert_int_equal(l.runs[2].seq, 10);
    assert_int_equal(l.runs[3].seq, 11);
    assert_int_equal(l.runs[3].round, 5);
    run_list_release(&l);

    /* Unknown variant / experiment, duplicate variant, bad kind and status. */
    r.variant_idx = 1;
    assert_fails_with(dir, store_run_add(s, id, &r), "experiment 1 has no variant 1");
    assert_fails_with(dir, store_variant_add(s, 42, &v), "no experiment 42");
    assert_fails_with(dir, store_variant_add(s, id, &v), "experiment 1 already has a variant 0");
    assert_fails_with(dir, store_experiment_begin(s, "benchmark", "{}", NULL, 1, &id2),
                      "unknown experiment kind 'benchmark'");
    assert_fails_with(dir, store_experiment_begin(s, "bench", "[1]", NULL, 1, &id2),
                      "the settings are not a JSON object");
    assert_fails_with(dir, store_experiment_begin(s, "bench", "{}", "{oops", 1, &id2),
                      "the environment is not JSON");
    assert_fails_with(dir, store_experiment_finish(s, id, "done"),
                      "unknown experiment status 'done'");
    assert_fails_with(dir, store_experiment_finish(s, 42, "complete"), "no experiment 42");
    char *settings = NULL;
    assert_fails_with(dir, store_experiment_settings(s, 42, &settings), "no experiment 42");
    assert_null(settings);
    struct store_experiment e;
    assert_fails_with(dir, store_experiment_get(s, 42, &e), "no experiment 42");

    /* After all those failures the handle writes normally (no transaction left open). */
    r.variant_idx = 0;
    r.round = 6;
    assert_int_equal(store_run_add(s, id, &r), 0);
    assert_int_equal(store_close(s), 0);
    assert_int_equal(sql_int(path, "SELECT count(*) FROM runs"), 6);
    free(path);
    remove_dir(dir);
}

/* A writer killed (SIGKILL) in the middle of an experiment loses nothing it had committed. */
static void test_killed_writer(void **state)
{
    (void)state;
    char *dir = make_dir();
    char *path = xasprintf("%s/killed.db", dir);
    struct store *s;
    int64_t id;
    struct store_variant v = { .idx = 0, .name = "v" };
    assert_int_equal(store_open(path, &s), 0);
    assert_int_equal(store_experiment_begin(s, "compare", "{}", NULL, 3, &id), 0);
    assert_int_equal(store_variant_add(s, id, &v), 0);
    assert_int_equal(store_close(s), 0);

    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct store *cs;
        if (store_open(path, &cs))
            _exit(1);
        for (int k = 1; k <= 3; k++) {
            struct store_run r = sample_run(0, 1, k, k, "{\"k\":1}");
            r.workload = "oltp_read_only";
            if (store_run_add(cs, id, &r))
                _exit(1);
        }
        raise(SIGKILL); /* mid-experiment: status still "running", WAL not checkpointed */
        _exit(1);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

    assert_int_equal(store_open(path, &s), 0);
    struct store_experiment e;
    assert_int_equal(store_experiment_get(s, id, &e), 0);
    assert_string_equal(e.status, "running");
    assert_true(e.nruns == 3);
    store_experiment_release(&e);
    /* --resume: the three finished runs exist, the fourth does not. */
    int exists;
    for (int k = 1; k <= 4; k++) {
        assert_int_equal(store_run_exists(s, id, 0, "oltp_read_only", 1, k, &exists), 0);
        assert_int_equal(exists, k <= 3);
    }
    assert_int_equal(store_close(s), 0);
    char *ok = sql_text(path, "PRAGMA integrity_check");
    assert_string_equal(ok, "ok");
    free(ok);
    free(path);
    remove_dir(dir);
}

/* ---------------------------------------------------------------- concurrency */

#define NCHILDREN 4
#define CHILD_RUNS 200
#define PARENT_RUNS 100

/* One writer: its own experiment (created after the start signal, so the file itself may be
 * created concurrently), n runs with STORE_SEQ_NEXT, then finish. 0 if all went well. */
static int writer(const char *path, int who, int n)
{
    struct store *s;
    int64_t id;
    char *settings = xasprintf("{\"writer\":%d}", who);
    struct store_variant v = { .idx = 0, .name = "v" };
    char json[1024];
    int rc = 0;

    memset(json, 'x', sizeof(json));
    json[0] = '"';
    json[sizeof(json) - 2] = '"';
    json[sizeof(json) - 1] = '\0';
    if (store_open(path, &s))
        return -1;
    if (store_experiment_begin(s, "bench", settings, NULL, (uint64_t)who, &id) ||
        store_variant_add(s, id, &v))
        rc = -1;
    for (int k = 0; rc == 0 && k < n; k++) {
        struct store_run r = sample_run(0, 1 + k % 8, 1 + k / 8, STORE_SEQ_NEXT, json);
        r.workload = "oltp_read_write";
        rc = store_run_add(s, id, &r);
        /* A pause between runs (real ones take seconds), so the writers interleave instead
         * of one re-taking the lock while the others sleep in the busy handler. */
        struct timespec pause = { 0, 1000000L };
        nanosleep(&pause, NULL);
    }
    if (rc == 0)
        rc = store_experiment_finish(s, id, "complete");
    if (store_close(s))
        rc = -1;
    free(settings);
    return rc;
}

static void test_concurrent_writers(void **state)
{
    (void)state;
    char *dir = make_dir();
    char *path = xasprintf("%s/shared.db", dir);
    pid_t pids[NCHILDREN];
    int go[2];
    double t0 = wall_time();

    assert_int_equal(pipe(go), 0);
    for (int i = 0; i < NCHILDREN; i++) {
        pids[i] = fork();
        assert_true(pids[i] >= 0);
        if (pids[i] == 0) {
            char c;
            close(go[1]);
            /* Wait for the start signal (the parent closing the pipe). */
            while (read(go[0], &c, 1) > 0)
                ;
            _exit(writer(path, i + 1, CHILD_RUNS) ? 1 : 0);
        }
    }
    close(go[0]);
    close(go[1]); /* everyone starts now, the file does not exist yet */
    int parent_rc = writer(path, 0, PARENT_RUNS);
    for (int i = 0; i < NCHILDREN; i++) {
        int status;
        assert_int_equal(waitpid(pids[i], &status, 0), pids[i]);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
    }
    assert_int_equal(parent_rc, 0);
    double elapsed = wall_time() - t0;
    print_message("concurrency: %d runs by %d processes in %.2f s\n",
                  NCHILDREN * CHILD_RUNS + PARENT_RUNS, NCHILDREN + 1, elapsed);

    char *ok = sql_text(path, "PRAGMA integrity_check");
    assert_string_equal(ok, "ok");
    free(ok);
    assert_int_equal(sql_int(path, "SELECT count(*) FROM runs"),
                     NCHILDREN * CHILD_RUNS + PARENT_RUNS);
    assert_int_equal(sql_int(path, "SELECT count(*) FROM experiments"), NCHILDREN + 1);
    assert_int_equal(sql_int(path, "SELECT count(*) FROM experiments WHERE status = 'complete'"),
                     NCHILDREN + 1);
    /* Every experiment got seq 1..n without gaps or duplicates, despite the interleaving. */
    assert_int_equal(sql_int(path, "SELECT count(*) FROM (SELECT experiment_id FROM runs"
                                   " GROUP BY experiment_id"
                                   " HAVING count(DISTINCT seq) != count(*) OR min(seq) != 1"
                                   " OR max(seq) != count(*))"),
                     0);
    assert_fresh_schema(path);
    /* How often consecutive runs (in commit order) belong to different writers: 4 would
     * mean the writers ran one after another. How well they interleave and how long it
     * takes are the machine's timing, not correctness: bench/store-writers checks both
     * from these two lines (BENCHMARKS.md). */
    int64_t switches = sql_int(path, "SELECT count(*) FROM runs a JOIN runs b"
                                     " ON b.id = a.id + 1 WHERE a.experiment_id != b.experiment_id");
    print_message("concurrency: %" PRId64 " writer switches in commit order\n", switches);
    free(path);
    remove_dir(dir);
}

/* ---------------------------------------------------------------- settings diff */

static void test_settings_diff(void **state)
{
    (void)state;
    struct strbuf sb = STRBUF_INIT;
    const char *a = "{\"time\":10,\"threads\":[1,4],\"rounds\":3,\"workloads\":[\"a\"],"
                    "\"opts\":{\"x\":1,\"y\":2},\"seed\":5,\"label\":\"old\"}";
    const char *b = "{\"label\":\"new\",\"opts\":{\"y\":2,\"x\":1},\"rounds\":3,"
                    "\"threads\":[1,4,16],\"time\":10,\"seed\":5,\"fresh\":true}";
    assert_int_equal(store_settings_diff(a, b, &sb), 0);
    assert_string_equal(sb.buf, "fresh: (unset) -> true\n"
                                "label: \"old\" -> \"new\"\n"
                                "threads: [1,4] -> [1,4,16]\n"
                                "workloads: [\"a\"] -> (unset)\n");
    strbuf_reset(&sb);

    /* Equal (key order and whitespace do not matter): nothing. */
    assert_int_equal(store_settings_diff(a, "{ \"seed\": 5, \"label\": \"old\", \"time\": 10,"
                                            " \"rounds\": 3, \"workloads\": [\"a\"],"
                                            " \"opts\": {\"y\": 2, \"x\": 1},"
                                            " \"threads\": [1, 4] }",
                                         &sb),
                     0);
    assert_int_equal(sb.len, 0);
    assert_int_equal(store_settings_diff("{}", "{}", &sb), 0);
    assert_int_equal(sb.len, 0);

    /* A nested change is reported at its top-level key, with the whole value. */
    assert_int_equal(store_settings_diff("{\"o\":{\"a\":1,\"b\":2}}", "{\"o\":{\"a\":1,\"b\":3}}",
                                         &sb),
                     0);
    assert_string_equal(sb.buf, "o: {\"a\":1,\"b\":2} -> {\"a\":1,\"b\":3}\n");
    strbuf_reset(&sb);

    /* Not objects: an error, nothing appended. */
    struct capture c;
    char *dir = make_dir();
    capture_begin(&c, dir);
    assert_int_equal(store_settings_diff("[1]", "{}", &sb), -1);
    assert_int_equal(store_settings_diff("{}", "{nope", &sb), -1);
    char *err = capture_end(&c);
    assert_string_equal(err, "FATAL: settings diff: the old settings are not a JSON object\n"
                             "FATAL: settings diff: the new settings are not a JSON object\n");
    free(err);
    assert_int_equal(sb.len, 0);
    strbuf_release(&sb);
    remove_dir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_migration_from_empty),
        cmocka_unit_test(test_run_key),
        cmocka_unit_test(test_killed_writer),
        cmocka_unit_test(test_concurrent_writers),
        cmocka_unit_test(test_settings_diff),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
