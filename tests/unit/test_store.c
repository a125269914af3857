/* Unit tests of the results store (src/store): round trip, the settings hash, refusing foreign
 * files untouched (not SQLite, another application's, a newer schema). The schema's creation,
 * the run key, writers and the settings diff are in test_store_writers.c. */
#include "store_test_helpers.h"

static const char report1[] =
    "{\"tps\":1235.5678,\"latency_ms\":{\"avg\":1.33,\"p95\":3.5},\n"
    " \"histogram\":[[0.125,3],[0.25,17]],\"intervals\":[{\"t\":1,\"tps\":1200}],"
    " \"note\":\"quotes \\\" and unicode \xc3\xa9\xe2\x82\xac, tab\\t\"}";

static void test_roundtrip(void **state)
{
    (void)state;
    char *dir = make_dir();
    char *path = xasprintf("%s/results.db", dir);
    struct store *s;
    int64_t id, other;
    const char *settings = "{\"workloads\":[\"oltp_read_only\"],\"threads\":[1,4],\"rounds\":3,"
                           "\"time\":10}";
    const char *env = "{\"kernel\":\"6.1.0-test\",\"cores\":2,\"cpu\":\"Test CPU @ 2GHz\"}";
    const uint64_t seed = 0xfedcba9876543210ull; /* above INT64_MAX: kept bit for bit */
    const struct store_variant vars[2] = {
        { 0, "baseline", "/opt/base/libsqlite3.so", "ab12", "3.40.1",
          "2022-12-28 14:03:47 df5c253c", "gcc (Debian 12.2.0-14) 12.2.0", "-O2",
          "{\"loaded_from\":\"/opt/base/libsqlite3.so\"}" },
        { 1, "pgo", "/opt/pgo/libsqlite3.so", NULL, NULL, NULL, NULL, NULL, NULL },
    };
    struct store_run runs[5];
    /* Added out of seq order; loading returns them by seq. */
    runs[0] = sample_run(0, 1, 1, 3, report1);
    runs[1] = sample_run(1, 1, 1, 1, "{}");
    runs[2] = sample_run(0, 4, 1, 2, NULL);
    runs[3] = sample_run(1, 4, 1, 5, "[1,2,3]");
    runs[4] = sample_run(1, 4, 2, 4, report1);
    runs[4].lat_p95_ms = NAN;
    runs[4].tps = 0.0;

    double t0 = wall_time();
    assert_int_equal(store_open(path, &s), 0);
    assert_string_equal(store_path(s), path);
    assert_int_equal(store_experiment_begin(s, "compare", settings, env, seed, &id), 0);
    for (int i = 0; i < 2; i++)
        assert_int_equal(store_variant_add(s, id, &vars[i]), 0);
    for (int i = 0; i < 5; i++)
        assert_int_equal(store_run_add(s, id, &runs[i]), 0);
    assert_int_equal(store_experiment_set_note(s, id, "first try"), 0);
    assert_int_equal(store_experiment_finish(s, id, "complete"), 0);
    /* A second experiment without environment, variants or runs; still running. */
    assert_int_equal(store_experiment_begin(s, "bench", "{}", NULL, 7, &other), 0);
    assert_true(other > id);
    assert_int_equal(store_close(s), 0);
    double t1 = wall_time();

    assert_int_equal(store_open(path, &s), 0);
    struct store_experiment e;
    assert_int_equal(store_experiment_get(s, id, &e), 0);
    assert_true(e.id == id);
    assert_string_equal(e.kind, "compare");
    assert_string_equal(e.status, "complete");
    assert_true(e.created_at >= t0 - 1e-3 && e.created_at <= t1 + 1e-3);
    assert_true(e.finished_at >= e.created_at && e.finished_at <= t1 + 1e-3);
    assert_string_equal(e.settings_json, settings);
    assert_string_equal(e.environment_json, env);
    assert_true(e.seed == seed);
    assert_string_equal(e.note, "first try");
    assert_int_equal(strncmp(e.settings_hash, "fnv1a64:", 8), 0);
    assert_int_equal(strlen(e.settings_hash), 8 + 16);
    assert_int_equal(e.nvariants, 2);
    for (int i = 0; i < 2; i++)
        assert_variant_equal(&e.variants[i], &vars[i]);
    assert_true(e.nruns == 5);
    store_experiment_release(&e);
    assert_null(e.kind);

    assert_int_equal(store_experiment_get(s, other, &e), 0);
    assert_string_equal(e.kind, "bench");
    assert_string_equal(e.status, "running");
    assert_true(e.finished_at == 0.0);
    assert_null(e.environment_json);
    assert_null(e.note);
    assert_int_equal(e.nvariants, 0);
    assert_null(e.variants);
    assert_true(e.nruns == 0 && e.seed == 7);
    store_experiment_release(&e);

    char *got_settings;
    assert_int_equal(store_experiment_settings(s, id, &got_settings), 0);
    assert_string_equal(got_settings, settings);
    free(got_settings);

    /* Runs come back ordered by seq (1..5), every column as written. */
    struct run_list l = { .n = 0 };
    assert_int_equal(store_runs_load(s, id, collect_run, &l), 0);
    assert_int_equal(l.n, 5);
    for (int i = 0; i < 5; i++) {
        int want = 0;
        while (runs[want].seq != i + 1)
            want++;
        assert_run_equal(&l.runs[i], &runs[want]);
        assert_true(l.runs[i].experiment_id == id);
        assert_true(l.runs[i].id > 0);
    }
    run_list_release(&l);
    /* A callback returning > 0 stops early without an error. */
    l.stop_after = 2;
    assert_int_equal(store_runs_load(s, id, collect_run, &l), 0);
    assert_int_equal(l.n, 2);
    run_list_release(&l);
    l.stop_after = 0;
    assert_int_equal(store_runs_load(s, other, collect_run, &l), 0);
    assert_int_equal(l.n, 0);

    /* History: both experiments in id order with variant names and run counts. */
    struct exp_list h = { .n = 0 };
    assert_int_equal(store_experiments_list(s, collect_experiment, &h), 0);
    assert_int_equal(h.n, 2);
    assert_true(h.ids[0] == id && h.ids[1] == other);
    assert_string_equal(h.names[0], "baseline,pgo");
    assert_string_equal(h.names[1], "");
    assert_true(h.nruns[0] == 5 && h.nruns[1] == 0);
    assert_string_equal(h.status[0], "complete");
    assert_string_equal(h.status[1], "running");
    exp_list_release(&h);

    /* Resuming sets it running again (finished_at back to 0). */
    assert_int_equal(store_experiment_finish(s, other, "interrupted"), 0);
    assert_int_equal(store_experiment_finish(s, other, "running"), 0);
    assert_int_equal(store_experiment_get(s, other, &e), 0);
    assert_true(e.finished_at == 0.0);
    store_experiment_release(&e);
    assert_int_equal(store_close(s), 0);

    /* The file is in WAL mode and passes an integrity check. */
    char *mode = sql_text(path, "PRAGMA journal_mode");
    assert_string_equal(mode, "wal");
    free(mode);
    char *ok = sql_text(path, "PRAGMA integrity_check");
    assert_string_equal(ok, "ok");
    free(ok);
    free(path);
    remove_dir(dir);
}

/* Settings with the same content in another key order hash alike. */
static void test_settings_hash(void **state)
{
    (void)state;
    char *dir = make_dir();
    char *path = xasprintf("%s/h.db", dir);
    struct store *s;
    int64_t a, b, c;
    struct store_experiment ea, eb, ec;
    assert_int_equal(store_open(path, &s), 0);
    assert_int_equal(store_experiment_begin(s, "pgo", "{\"a\":1,\"b\":[1,2]}", NULL, 1, &a), 0);
    assert_int_equal(
        store_experiment_begin(s, "pgo", "{ \"b\": [1, 2],\n \"a\": 1 }", NULL, 1, &b), 0);
    assert_int_equal(store_experiment_begin(s, "pgo", "{\"a\":1,\"b\":[2,1]}", NULL, 1, &c), 0);
    assert_int_equal(store_experiment_get(s, a, &ea), 0);
    assert_int_equal(store_experiment_get(s, b, &eb), 0);
    assert_int_equal(store_experiment_get(s, c, &ec), 0);
    assert_string_equal(ea.settings_hash, eb.settings_hash);
    assert_string_not_equal(ea.settings_hash, ec.settings_hash);
    store_experiment_release(&ea);
    store_experiment_release(&eb);
    store_experiment_release(&ec);
    assert_int_equal(store_close(s), 0);
    free(path);
    remove_dir(dir);
}

/* ---------------------------------------------------------------- refusing files */

/* store_open(path) must fail with exactly "FATAL: results file PATH: <msg>" and leave the
 * file (and the directory) as they were. */
static void assert_refused(const char *dir, const char *path, const char *msg)
{
    size_t before_len, after_len;
    char *before = read_whole(path, &before_len);
    char *list_before = dir_listing(dir);
    struct store *s = (struct store *)1;
    struct capture c;

    capture_begin(&c, dir);
    int rc = store_open(path, &s);
    char *err = capture_end(&c);
    assert_int_equal(rc, -1);
    assert_null(s);
    char *want = xasprintf("FATAL: results file %s: %s\n", path, msg);
    assert_string_equal(err, want);

    char *after = read_whole(path, &after_len);
    assert_int_equal(after_len, before_len);
    assert_memory_equal(after, before, before_len);
    char *list_after = dir_listing(dir);
    assert_string_equal(list_after, list_before);
    free(want);
    free(err);
    free(before);
    free(after);
    free(list_before);
    free(list_after);
}

static void test_refuse_not_sqlite(void **state)
{
    (void)state;
    char *dir = make_dir();
    char *path = xasprintf("%s/random.bin", dir);
    unsigned char bytes[8192];
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; i < sizeof(bytes); i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        bytes[i] = (unsigned char)(x >> 24);
    }
    write_file(path, bytes, sizeof(bytes));
    assert_refused(dir, path, "not a SQLite database");

    /* A short text file too. */
    char *text = xasprintf("%s/notes.txt", dir);
    write_file(text, "hello, world\n", 13);
    assert_refused(dir, text, "not a SQLite database");
    free(text);
    free(path);
    remove_dir(dir);
}

static void test_refuse_other_application(void **state)
{
    (void)state;
    char *dir = make_dir();

    /* Another program's database: tables, no application_id. */
    char *foo = xasprintf("%s/foo.db", dir);
    sql_script(foo, "CREATE TABLE foo (x INTEGER); INSERT INTO foo VALUES (1), (2);");
    assert_refused(dir, foo, "not a pgolab results database");

    /* Another application_id, even without tables. */
    char *app = xasprintf("%s/app.db", dir);
    sql_script(app, "PRAGMA application_id = 305419896;"); /* 0x12345678 */
    assert_int_equal(sql_int(app, "PRAGMA application_id"), 305419896);
    assert_refused(dir, app, "not a pgolab results database (application_id 0x12345678)");

    /* Another program's WAL-mode database (cleanly closed: no -wal/-shm files). */
    char *wal = xasprintf("%s/wal.db", dir);
    sql_script(wal, "PRAGMA journal_mode = WAL; CREATE TABLE t (x); INSERT INTO t VALUES (1);");
    assert_refused(dir, wal, "not a pgolab results database");

    free(foo);
    free(app);
    free(wal);
    remove_dir(dir);
}

static void test_refuse_newer_schema(void **state)
{
    (void)state;
    char *dir = make_dir();
    char *path = xasprintf("%s/newer.db", dir);
    struct store *s;
    /* A real store, then a "future pgolab" bumps the schema version. */
    assert_int_equal(store_open(path, &s), 0);
    assert_int_equal(store_close(s), 0);
    sql_script(path, "PRAGMA user_version = 99;");
    char *want = xasprintf("written by a newer pgolab (schema 99 > %d)", STORE_SCHEMA_VERSION);
    assert_refused(dir, path, want);
    free(want);

    /* Hand-made: our application_id, newer version, a table of the future. */
    char *hand = xasprintf("%s/hand.db", dir);
    char *script = xasprintf("PRAGMA application_id = 1346850636; PRAGMA user_version = %d;"
                             "CREATE TABLE future (x);", STORE_SCHEMA_VERSION + 1);
    sql_script(hand, script);
    want = xasprintf("written by a newer pgolab (schema %d > %d)", STORE_SCHEMA_VERSION + 1,
                     STORE_SCHEMA_VERSION);
    assert_refused(dir, hand, want);
    free(want);
    free(script);
    free(hand);

    /* A newer pgolab that crashed: its upgrade is only in the -wal file (not checkpointed).
     * The read-only look reads the WAL too, and the main file stays as it was. */
    char *crashed = xasprintf("%s/crashed.db", dir);
    assert_int_equal(store_open(crashed, &s), 0);
    assert_int_equal(store_close(s), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        sqlite3 *db;
        if (sqlite3_open(crashed, &db) != SQLITE_OK ||
            sqlite3_exec(db, "PRAGMA wal_autocheckpoint = 0; PRAGMA user_version = 7;", NULL,
                         NULL, NULL) != SQLITE_OK)
            _exit(1);
        _exit(0); /* no sqlite3_close: no checkpoint, -wal and -shm stay */
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    char *walfile = xasprintf("%s-wal", crashed);
    struct stat sb;
    assert_int_equal(stat(walfile, &sb), 0);
    assert_true(sb.st_size > 0);
    want = xasprintf("written by a newer pgolab (schema 7 > %d)", STORE_SCHEMA_VERSION);
    assert_refused(dir, crashed, want);
    free(want);
    size_t len;
    char *wal_after = read_whole(walfile, &len);
    assert_int_equal(len, sb.st_size);
    free(wal_after);
    free(walfile);
    free(crashed);
    free(path);
    remove_dir(dir);
}

/* ---------------------------------------------------------------- schema creation */

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip),
        cmocka_unit_test(test_settings_hash),
        cmocka_unit_test(test_refuse_not_sqlite),
        cmocka_unit_test(test_refuse_other_application),
        cmocka_unit_test(test_refuse_newer_schema),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
