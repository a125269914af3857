/* store_test_helpers: what the results store's unit tests (test_store.c, test_store_writers.c)
 * share: temporary directories, stderr capture, sqlite3 queries on the file, sample runs and
 * their comparison, collectors for the store's list callbacks. static inline: each test
 * includes what it uses. */
#ifndef PGOLAB_TESTS_STORE_TEST_HELPERS_H
#define PGOLAB_TESTS_STORE_TEST_HELPERS_H

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

static inline char *make_dir(void)
{
    char *dir = xstrdup("/tmp/pgolab-store.XXXXXX");
    assert_non_null(mkdtemp(dir));
    return dir;
}

/* Remove dir and the files in it (the tests make no subdirectories). */
static inline void remove_dir(char *dir)
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
static inline char *dir_listing(const char *dir)
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

static inline void write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

static inline char *read_whole(const char *path, size_t *len)
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

static inline void capture_begin(struct capture *c, const char *dir)
{
    c->path = xasprintf("%s.stderr", dir); /* outside dir: its listing stays as it was */
    fflush(stderr);
    c->saved = dup(2);
    int fd = open(c->path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(c->saved >= 0 && fd >= 0);
    dup2(fd, 2);
    close(fd);
}

static inline char *capture_end(struct capture *c)
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
static inline int64_t sql_int(const char *path, const char *sql)
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

static inline char *sql_text(const char *path, const char *sql)
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
static inline void sql_script(const char *path, const char *sql)
{
    sqlite3 *db;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_close(db), SQLITE_OK);
}

/* A run with every field derived from k (variant v, threads t, round r). */
static inline struct store_run sample_run(int v, int t, int r, int k, const char *json)
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

static inline void assert_run_equal(const struct store_run *got, const struct store_run *want)
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

static inline void assert_opt_string_equal(const char *got, const char *want)
{
    if (want)
        assert_string_equal(got, want);
    else
        assert_null(got);
}

static inline void assert_variant_equal(const struct store_variant *got,
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

static inline int collect_run(const struct store_run *r, void *ctx)
{
    struct run_list *l = ctx;
    assert_true(l->n < (int)ARRAY_SIZE(l->runs));
    struct store_run *c = &l->runs[l->n++];
    *c = *r;
    c->workload = xstrdup(r->workload);
    c->report_json = r->report_json ? xstrdup(r->report_json) : NULL;
    return l->stop_after && l->n >= l->stop_after;
}

static inline void run_list_release(struct run_list *l)
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

static inline int collect_experiment(const struct store_experiment *e, void *ctx)
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

static inline void exp_list_release(struct exp_list *l)
{
    for (int i = 0; i < l->n; i++) {
        free(l->names[i]);
        free(l->status[i]);
    }
    l->n = 0;
}

/* ---------------------------------------------------------------- round trip */

#endif
