/* Unit tests of the results store (src/store): round trip, refusing foreign files untouched,
 * schema creation, the run key, concurrent writers in several processes, settings diff. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "store/store.h"
#include "util/strbuf.h"
#include "util/util.h"

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---------------------------------------------------------------- helpers */

static char *make_dir(void)
{
    char *dir = xstrdup("/tmp/pgolab-store.XXXXXX");
    assert_non_null(mkdtemp(dir));
    return dir;
}

/* Remove dir and the files in it (the tests make no subdirectories). */
static void remove_dir(char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    assert_non_null(d);
    while ((de = readdir(d)))
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
            char *p = xasprintf("%s/%s", dir, de->d_name);
            unlink(p);
            free(p);
        }
    closedir(d);
    rmdir(dir);
    free(dir);
}

/* The names in dir, sorted, one per line (caller frees). */
static char *dir_listing(const char *dir)
{
    struct dirent **names;
    struct strbuf sb = STRBUF_INIT;
    int n = scandir(dir, &names, NULL, alphasort);
    assert_true(n >= 0);
    for (int i = 0; i < n; i++) {
        strbuf_addf(&sb, "%s\n", names[i]->d_name);
        free(names[i]);
    }
    free(names);
    return strbuf_detach(&sb);
}

static void write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

static char *read_whole(const char *path, size_t *len)
{
    struct strbuf sb = STRBUF_INIT;
    assert_int_equal(strbuf_read_file(&sb, path), 0);
    *len = sb.len;
    return strbuf_detach(&sb);
}

/* Redirect stderr (fd 2) to a file until capture_end(), which returns what was written. */
struct capture {
    int saved;
    char *path;
};

static void capture_begin(struct capture *c, const char *dir)
{
    c->path = xasprintf("%s.stderr", dir); /* outside dir: its listing stays as it was */
    fflush(stderr);
    c->saved = dup(2);
    int fd = open(c->path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(c->saved >= 0 && fd >= 0);
    dup2(fd, 2);
    close(fd);
}

static char *capture_end(struct capture *c)
{
    size_t len;
    fflush(stderr);
    dup2(c->saved, 2);
    close(c->saved);
    char *text = read_whole(c->path, &len);
    unlink(c->path);
    free(c->path);
    return text;
}

/* The first column of the first row of sql on the database at path, via plain SQLite. */
static int64_t sql_int(const char *path, const char *sql)
{
    sqlite3 *db;
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    int64_t v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}

static char *sql_text(const char *path, const char *sql)
{
    sqlite3 *db;
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    char *v = xstrdup((const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}

/* Run a script on a database made with plain SQLite (creating it). */
static void sql_script(const char *path, const char *sql)
{
    sqlite3 *db;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_close(db), SQLITE_OK);
}

/* A run with every field derived from k (variant v, threads t, round r). */
static struct store_run sample_run(int v, int t, int r, int k, const char *json)
{
    struct store_run run;
    memset(&run, 0, sizeof(run));
    run.variant_idx = v;
    run.workload = k % 2 ? "oltp_read_only" : "oltp_read_write";
    run.threads = t;
    run.round = r;
    run.seq = k;
    run.started_at = 1700000000.25 + k;
    run.duration_s = 10.0 + k / 1000.0;
    run.tps = 1234.5678 + k;
    run.qps = 19752.9 + k;
    run.lat_min_ms = 0.1 + k;
    run.lat_avg_ms = 1.0 / 3.0 + k;
    run.lat_p95_ms = 2.5 + k;
    run.lat_max_ms = 99.75 + k;
    run.transactions = 12345678901ull + (uint64_t)k;
    run.errors = (uint64_t)k;
    run.report_json = json;
    return run;
}

static void assert_run_equal(const struct store_run *got, const struct store_run *want)
{
    assert_int_equal(got->variant_idx, want->variant_idx);
    assert_string_equal(got->workload, want->workload);
    assert_int_equal(got->threads, want->threads);
    assert_int_equal(got->round, want->round);
    assert_int_equal(got->seq, want->seq);
    /* Doubles round-trip exactly (SQLite REAL is an IEEE double); NaN comes back as NaN. */
    const double g[] = { got->started_at, got->duration_s, got->tps, got->qps,
                         got->lat_min_ms, got->lat_avg_ms, got->lat_p95_ms, got->lat_max_ms };
    const double w[] = { want->started_at, want->duration_s, want->tps, want->qps,
                         want->lat_min_ms, want->lat_avg_ms, want->lat_p95_ms, want->lat_max_ms };
    for (size_t i = 0; i < ARRAY_SIZE(g); i++) {
        if (isnan(w[i]))
            assert_true(isnan(g[i]));
        else
            assert_memory_equal(&g[i], &w[i], sizeof(double));
    }
    assert_true(got->transactions == want->transactions);
    assert_true(got->errors == want->errors);
    if (want->report_json)
        assert_string_equal(got->report_json, want->report_json);
    else
        assert_null(got->report_json);
}

static void assert_opt_string_equal(const char *got, const char *want)
{
    if (want)
        assert_string_equal(got, want);
    else
        assert_null(got);
}

static void assert_variant_equal(const struct store_variant *got,
                                 const struct store_variant *want)
{
    assert_int_equal(got->idx, want->idx);
    assert_string_equal(got->name, want->name);
    assert_opt_string_equal(got->library, want->library);
    assert_opt_string_equal(got->sha256, want->sha256);
    assert_opt_string_equal(got->version, want->version);
    assert_opt_string_equal(got->source_id, want->source_id);
    assert_opt_string_equal(got->compiler, want->compiler);
    assert_opt_string_equal(got->cflags, want->cflags);
    assert_opt_string_equal(got->fingerprint_json, want->fingerprint_json);
}

/* Collects loaded runs (deep copies of the strings). */
struct run_list {
    struct store_run runs[64];
    int n;
    int stop_after; /* > 0: the callback returns 1 after this many */
};

static int collect_run(const struct store_run *r, void *ctx)
{
    struct run_list *l = ctx;
    assert_true(l->n < (int)ARRAY_SIZE(l->runs));
    struct store_run *c = &l->runs[l->n++];
    *c = *r;
    c->workload = xstrdup(r->workload);
    c->report_json = r->report_json ? xstrdup(r->report_json) : NULL;
    return l->stop_after && l->n >= l->stop_after;
}

static void run_list_release(struct run_list *l)
{
    for (int i = 0; i < l->n; i++) {
        free((char *)l->runs[i].workload);
        free((char *)l->runs[i].report_json);
    }
    l->n = 0;
}

struct exp_list {
    int64_t ids[16];
    char *names[16]; /* the variant names joined by ',' */
    int64_t nruns[16];
    char *status[16];
    int n;
};

static int collect_experiment(const struct store_experiment *e, void *ctx)
{
    struct exp_list *l = ctx;
    struct strbuf sb = STRBUF_INIT;
    assert_true(l->n < 16);
    for (int i = 0; i < e->nvariants; i++)
        strbuf_addf(&sb, "%s%s", i ? "," : "", e->variants[i].name);
    l->ids[l->n] = e->id;
    l->names[l->n] = strbuf_detach(&sb);
    l->nruns[l->n] = e->nruns;
    l->status[l->n] = xstrdup(e->status);
    l->n++;
    return 0;
}

static void exp_list_release(struct exp_list *l)
{
    for (int i = 0; i < l->n; i++) {
        free(l->names[i]);
        free(l->status[i]);
    }
    l->n = 0;
}

/* ---------------------------------------------------------------- round trip */

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
        cmocka_unit_test(test_roundtrip),
        cmocka_unit_test(test_settings_hash),
        cmocka_unit_test(test_refuse_not_sqlite),
        cmocka_unit_test(test_refuse_other_application),
        cmocka_unit_test(test_refuse_newer_schema),
        cmocka_unit_test(test_migration_from_empty),
        cmocka_unit_test(test_run_key),
        cmocka_unit_test(test_killed_writer),
        cmocka_unit_test(test_concurrent_writers),
        cmocka_unit_test(test_settings_diff),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
