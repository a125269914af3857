/* store_read: reading the results database back (see store.h): an experiment's settings, one
 * experiment with its variants, the list of experiments, the runs of one, and the settings
 * difference of two. Reads of several statements run in one read transaction (one
 * snapshot); a NOT NULL column that reads as NULL (a damaged file) is one error naming the
 * file. Shares the handle and statement helpers of store_private.h with store.c. */
#include "store/store_private.h"
#include "store/store.h"
#include "util/strbuf.h"
#include "util/util.h"

#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

int store_experiment_settings(struct store *s, int64_t exp_id, char **settings_json)
{
    sqlite3_stmt *st;
    int rc;
    *settings_json = NULL;
    if (store_prepare(s, "SELECT settings_json FROM experiments WHERE id = ?1", &st))
        return -1;
    if (store_sq->bind_int64(st, 1, exp_id) != SQLITE_OK) {
        rc = store_fail(s, "reading settings");
    } else {
        rc = store_sq->step(st);
        if (rc == SQLITE_ROW) {
            *settings_json = (char *)store_col_dup(st, 0);
            if (!*settings_json)
                *settings_json = xstrdup("{}");
            rc = 0;
        } else if (rc == SQLITE_DONE) {
            rc = error("results file %s: no experiment %" PRId64, s->path, exp_id);
        } else {
            rc = store_fail(s, "reading settings");
        }
    }
    store_sq->finalize(st);
    return rc;
}

#define EXPERIMENT_COLUMNS                                                                    \
    "id, kind, created_at, finished_at, status, settings_json, settings_hash,"              \
    " environment_json, seed, note"

/* The per-experiment statements of a read, prepared once per call. */
struct exp_reader {
    sqlite3_stmt *variants, *nruns;
};

static int reader_init(struct store *s, struct exp_reader *r)
{
    r->variants = r->nruns = NULL;
    if (store_prepare(s,
                "SELECT idx, name, library, sha256, version, source_id, compiler, cflags,"
                " fingerprint_json FROM variants WHERE experiment_id = ?1 ORDER BY idx",
                &r->variants) ||
        store_prepare(s, "SELECT count(*) FROM runs WHERE experiment_id = ?1", &r->nruns))
        return -1;
    return 0;
}

static void reader_release(struct exp_reader *r)
{
    store_sq->finalize(r->variants);
    store_sq->finalize(r->nruns);
}

/* Fill *e (zeroed first; heap copies) from a row of SELECT EXPERIMENT_COLUMNS, plus its
 * variants and run count. On error *e may be partly filled: release it. */
static int read_experiment(struct store *s, sqlite3_stmt *row, struct exp_reader *r,
                           struct store_experiment *e)
{
    int rc;
    memset(e, 0, sizeof(*e));
    e->id = store_sq->column_int64(row, 0);
    e->kind = store_col_dup(row, 1);
    e->created_at = store_sq->column_double(row, 2);
    e->finished_at = store_sq->column_double(row, 3); /* NULL -> 0 */
    e->status = store_col_dup(row, 4);
    e->settings_json = store_col_dup(row, 5);
    e->settings_hash = store_col_dup(row, 6);
    e->environment_json = store_col_dup(row, 7);
    e->seed = (uint64_t)store_sq->column_int64(row, 8);
    e->note = store_col_dup(row, 9);
    /* NOT NULL in the schema, but a damaged or hand-edited file may have NULL (found by
     * tests/fuzz/fuzz_store.c): every reader relies on them */
    const char *missing = !e->kind ? "kind" : !e->status ? "status"
                        : !e->settings_json ? "settings_json" : NULL;
    if (missing)
        return error("results file %s: experiment %lld has no %s (the file is damaged)", s->path,
                     (long long)e->id, missing);

    store_sq->reset(r->variants);
    if (store_sq->bind_int64(r->variants, 1, e->id) != SQLITE_OK)
        return store_fail(s, "reading variants");
    while ((rc = store_sq->step(r->variants)) == SQLITE_ROW) {
        e->variants = xrealloc(e->variants, sizeof(*e->variants) * (size_t)(e->nvariants + 1));
        struct store_variant *v = &e->variants[e->nvariants++];
        v->idx = store_sq->column_int(r->variants, 0);
        v->name = store_col_dup(r->variants, 1);
        v->library = store_col_dup(r->variants, 2);
        v->sha256 = store_col_dup(r->variants, 3);
        v->version = store_col_dup(r->variants, 4);
        v->source_id = store_col_dup(r->variants, 5);
        v->compiler = store_col_dup(r->variants, 6);
        v->cflags = store_col_dup(r->variants, 7);
        v->fingerprint_json = store_col_dup(r->variants, 8);
        if (!v->name) {
            store_sq->reset(r->variants);
            return error("results file %s: a variant of experiment %lld has no name (the file "
                         "is damaged)", s->path, (long long)e->id);
        }
    }
    if (rc != SQLITE_DONE)
        return store_fail(s, "reading variants");

    store_sq->reset(r->nruns);
    if (store_sq->bind_int64(r->nruns, 1, e->id) != SQLITE_OK ||
        store_sq->step(r->nruns) != SQLITE_ROW)
        return store_fail(s, "counting runs");
    e->nruns = store_sq->column_int64(r->nruns, 0);
    return 0;
}

void store_experiment_release(struct store_experiment *e)
{
    free((char *)e->kind);
    free((char *)e->status);
    free((char *)e->settings_json);
    free((char *)e->settings_hash);
    free((char *)e->environment_json);
    free((char *)e->note);
    for (int i = 0; i < e->nvariants; i++) {
        struct store_variant *v = &e->variants[i];
        free((char *)v->name);
        free((char *)v->library);
        free((char *)v->sha256);
        free((char *)v->version);
        free((char *)v->source_id);
        free((char *)v->compiler);
        free((char *)v->cflags);
        free((char *)v->fingerprint_json);
    }
    free(e->variants);
    memset(e, 0, sizeof(*e));
}

/* Reads of several statements run in one read transaction, so they see one snapshot. */
static int read_begin(struct store *s)
{
    return store_exec(s, "BEGIN", "starting a read transaction");
}

int store_experiment_get(struct store *s, int64_t exp_id, struct store_experiment *out)
{
    struct exp_reader r;
    sqlite3_stmt *st = NULL;
    int rc;

    memset(out, 0, sizeof(*out));
    if (read_begin(s))
        return -1;
    rc = reader_init(s, &r);
    if (rc == 0)
        rc = store_prepare(s, "SELECT " EXPERIMENT_COLUMNS " FROM experiments WHERE id = ?1", &st);
    if (rc == 0) {
        if (store_sq->bind_int64(st, 1, exp_id) != SQLITE_OK) {
            rc = store_fail(s, "reading an experiment");
        } else {
            rc = store_sq->step(st);
            if (rc == SQLITE_ROW)
                rc = read_experiment(s, st, &r, out);
            else if (rc == SQLITE_DONE)
                rc = error("results file %s: no experiment %" PRId64, s->path, exp_id);
            else
                rc = store_fail(s, "reading an experiment");
        }
    }
    store_sq->finalize(st);
    reader_release(&r);
    if (rc)
        store_experiment_release(out);
    return store_txn_end(s, rc);
}

int store_experiments_list(struct store *s, store_experiment_fn fn, void *ctx)
{
    struct exp_reader r;
    sqlite3_stmt *st = NULL;
    int rc;

    if (read_begin(s))
        return -1;
    rc = reader_init(s, &r);
    if (rc == 0)
        rc = store_prepare(s, "SELECT " EXPERIMENT_COLUMNS " FROM experiments ORDER BY id", &st);
    while (rc == 0) {
        struct store_experiment e;
        int step = store_sq->step(st);
        if (step == SQLITE_DONE)
            break;
        if (step != SQLITE_ROW) {
            rc = store_fail(s, "listing experiments");
            break;
        }
        rc = read_experiment(s, st, &r, &e);
        if (rc == 0) {
            int cb = fn(&e, ctx);
            rc = cb < 0 ? -1 : 0;
            store_experiment_release(&e);
            if (cb)
                break;
        } else {
            store_experiment_release(&e);
        }
    }
    store_sq->finalize(st);
    reader_release(&r);
    return store_txn_end(s, rc);
}

int store_runs_load(struct store *s, int64_t exp_id, store_run_fn fn, void *ctx)
{
    sqlite3_stmt *st;
    int rc = 0;
    if (store_prepare(s,
                "SELECT id, experiment_id, variant_idx, workload, threads, round, seq,"
                " started_at, duration_s, tps, qps, lat_min_ms, lat_avg_ms, lat_p95_ms,"
                " lat_max_ms, transactions, errors, report_json, metrics_json"
                " FROM runs WHERE experiment_id = ?1 ORDER BY seq, id",
                &st))
        return -1;
    if (store_sq->bind_int64(st, 1, exp_id) != SQLITE_OK)
        rc = store_fail(s, "loading runs");
    while (rc == 0) {
        struct store_run r;
        int step = store_sq->step(st);
        if (step == SQLITE_DONE)
            break;
        if (step != SQLITE_ROW) {
            rc = store_fail(s, "loading runs");
            break;
        }
        r.id = store_sq->column_int64(st, 0);
        r.experiment_id = store_sq->column_int64(st, 1);
        r.variant_idx = store_sq->column_int(st, 2);
        r.workload = (const char *)store_sq->column_text(st, 3);
        r.threads = store_sq->column_int(st, 4);
        r.round = store_sq->column_int(st, 5);
        r.seq = store_sq->column_int(st, 6);
        r.started_at = store_col_double(st, 7);
        r.duration_s = store_col_double(st, 8);
        r.tps = store_col_double(st, 9);
        r.qps = store_col_double(st, 10);
        r.lat_min_ms = store_col_double(st, 11);
        r.lat_avg_ms = store_col_double(st, 12);
        r.lat_p95_ms = store_col_double(st, 13);
        r.lat_max_ms = store_col_double(st, 14);
        r.transactions = (uint64_t)store_sq->column_int64(st, 15);
        r.errors = (uint64_t)store_sq->column_int64(st, 16);
        r.report_json = (const char *)store_sq->column_text(st, 17);
        r.metrics_json = (const char *)store_sq->column_text(st, 18);
        if (!r.workload) { /* NOT NULL in the schema: a damaged file */
            rc = error("results file %s: run %lld has no workload (the file is damaged)",
                       s->path, (long long)r.id);
            break;
        }
        int cb = fn(&r, ctx);
        if (cb) {
            rc = cb < 0 ? -1 : 0;
            break;
        }
    }
    store_sq->finalize(st);
    return rc;
}

/* ---------------------------------------------------------------- settings diff */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void add_value(struct strbuf *out, const json_t *v)
{
    char *text;
    if (!v) {
        strbuf_addstr(out, "(unset)");
        return;
    }
    text = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT | JSON_SORT_KEYS);
    if (!text)
        die("out of memory");
    strbuf_addstr(out, text);
    free(text);
}

int store_settings_diff(const char *json_a, const char *json_b, struct strbuf *out)
{
    json_error_t jerr;
    json_t *a = json_a ? json_loads(json_a, 0, &jerr) : NULL;
    json_t *b = json_b ? json_loads(json_b, 0, &jerr) : NULL;
    const char **keys;
    const char *key;
    json_t *value;
    size_t n = 0;
    int rc = 0;

    if (!json_is_object(a) || !json_is_object(b)) {
        rc = error("settings diff: the %s settings are not a JSON object",
                   json_is_object(a) ? "new" : "old");
        goto done;
    }
    keys = xmalloc(sizeof(*keys) * (json_object_size(a) + json_object_size(b)));
    json_object_foreach(a, key, value)
        keys[n++] = key;
    json_object_foreach(b, key, value)
        if (!json_object_get(a, key))
            keys[n++] = key;
    qsort(keys, n, sizeof(*keys), cmp_str);
    for (size_t i = 0; i < n; i++) {
        const json_t *va = json_object_get(a, keys[i]), *vb = json_object_get(b, keys[i]);
        if (va && vb && json_equal(va, vb))
            continue;
        strbuf_addf(out, "%s: ", keys[i]);
        add_value(out, va);
        strbuf_addstr(out, " -> ");
        add_value(out, vb);
        strbuf_addch(out, '\n');
    }
    free(keys);
done:
    json_decref(a);
    json_decref(b);
    return rc;
}

int store_experiment_unfinished_like(struct store *s, const char *kind,
                                     const char *settings_json, int64_t *id, int64_t *nruns)
{
    *id = *nruns = 0;
    json_error_t jerr;
    json_t *settings = json_loads(settings_json, 0, &jerr);
    if (!json_is_object(settings)) {
        json_decref(settings);
        return error("results file %s: the settings are not a JSON object", s->path);
    }
    char *hash = store_settings_hash(settings);
    json_decref(settings);
    sqlite3_stmt *st;
    int rc = store_prepare(s, "SELECT id, n FROM (SELECT e.id AS id, (SELECT count(*) FROM runs "
                              "r WHERE r.experiment_id = e.id) AS n FROM experiments e WHERE "
                              "e.kind = ?1 AND e.settings_hash = ?2 AND e.status = "
                              "'interrupted') WHERE n > 0 ORDER BY n DESC, id DESC LIMIT 1", &st);
    if (rc == 0) {
        if (store_sq->bind_text(st, 1, kind, -1, SQLITE_STATIC) != SQLITE_OK ||
            store_sq->bind_text(st, 2, hash, -1, SQLITE_STATIC) != SQLITE_OK) {
            rc = store_fail(s, "looking for an unfinished experiment");
        } else {
            int step = store_sq->step(st);
            if (step == SQLITE_ROW) {
                *id = store_sq->column_int64(st, 0);
                *nruns = store_sq->column_int64(st, 1);
            } else if (step != SQLITE_DONE) {
                rc = store_fail(s, "looking for an unfinished experiment");
            }
        }
        store_sq->finalize(st);
    }
    free(hash);
    return rc;
}
