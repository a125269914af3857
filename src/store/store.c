/* store: the SQLite results database of experiments, variants and runs (see store.h): the
 * schema and its migrations, opening (and refusing files that are not ours, damaged or
 * unwritable), and recording experiments, variants and runs. Reading them back is
 * store_read.c's; the helpers both share are in store_private.h. Owned by src/store; uses
 * the system libsqlite3 through store_sq, the function table that sqlite_api.c loads at the
 * first store_open(), never the SQLite under test. */
#include "store/store_private.h"
#include "store/store.h"
#include "store/sqlite_api.h"
#include "util/strbuf.h"
#include "util/util.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define BUSY_TIMEOUT_MS 10000

#define STR_(x) #x
#define STR(x) STR_(x)


/* The store's SQLite (store_private.h), set by the first store_open(). */
const struct store_sqlite *store_sq;

/* ---------------------------------------------------------------- schema */

/* migrations[k] moves a database from schema version k to k + 1; each script ends by setting
 * user_version, and all pending ones run in one transaction at open. Never edit a released
 * script: append a new one and bump STORE_SCHEMA_VERSION. Kinds and statuses are checked in C
 * rather than with CHECK constraints, so adding one needs no table rebuild. */
static const char *const migrations[] = {
    /* 0 -> 1 */
    "CREATE TABLE experiments (\n"
    "    id INTEGER PRIMARY KEY,\n"
    "    kind TEXT NOT NULL,\n"            /* pgo | compare | bench | calibrate */
    "    created_at REAL NOT NULL,\n"      /* s since the epoch */
    "    finished_at REAL,\n"              /* NULL while running */
    "    status TEXT NOT NULL,\n"          /* running | complete | interrupted | failed */
    "    settings_json TEXT NOT NULL,\n"
    "    settings_hash TEXT NOT NULL,\n"
    "    environment_json TEXT,\n"
    "    seed INTEGER NOT NULL,\n"         /* uint64 stored as its int64 bit pattern */
    "    note TEXT\n"
    ");\n"
    "CREATE INDEX experiments_settings_hash ON experiments(settings_hash);\n"
    "CREATE TABLE variants (\n"
    "    experiment_id INTEGER NOT NULL REFERENCES experiments(id) ON DELETE CASCADE,\n"
    "    idx INTEGER NOT NULL,\n"
    "    name TEXT NOT NULL,\n"
    "    library TEXT,\n"
    "    sha256 TEXT,\n"
    "    version TEXT,\n"
    "    source_id TEXT,\n"
    "    compiler TEXT,\n"
    "    cflags TEXT,\n"
    "    fingerprint_json TEXT,\n"
    "    PRIMARY KEY (experiment_id, idx)\n"
    ");\n"
    "CREATE TABLE runs (\n"
    "    id INTEGER PRIMARY KEY,\n"
    "    experiment_id INTEGER NOT NULL,\n"
    "    variant_idx INTEGER NOT NULL,\n"
    "    workload TEXT NOT NULL,\n"
    "    threads INTEGER NOT NULL,\n"
    "    round INTEGER NOT NULL,\n"
    "    seq INTEGER NOT NULL,\n"
    "    started_at REAL,\n"               /* NULL = NaN for every REAL measurement */
    "    duration_s REAL,\n"
    "    tps REAL,\n"
    "    qps REAL,\n"
    "    lat_min_ms REAL,\n"
    "    lat_avg_ms REAL,\n"
    "    lat_p95_ms REAL,\n"
    "    lat_max_ms REAL,\n"
    "    transactions INTEGER,\n"
    "    errors INTEGER,\n"
    "    report_json TEXT,\n"
    "    UNIQUE (experiment_id, variant_idx, workload, threads, round),\n"
    "    FOREIGN KEY (experiment_id, variant_idx)\n"
    "        REFERENCES variants(experiment_id, idx) ON DELETE CASCADE\n"
    ");\n"
    "CREATE INDEX runs_experiment_seq ON runs(experiment_id, seq);\n"
    "PRAGMA application_id = " STR(STORE_APPLICATION_ID) ";\n"
    "PRAGMA user_version = 1;\n",
    /* 1 -> 2: system metrics of each run (src/metrics: metrics_to_json()'s object; NULL =
     * not sampled) */
    "ALTER TABLE runs ADD COLUMN metrics_json TEXT;\n"
    "PRAGMA user_version = 2;\n",
};
_Static_assert(sizeof(migrations) / sizeof(migrations[0]) == STORE_SCHEMA_VERSION,
               "one migration per schema version");

static const char *const kinds[] = { "pgo", "compare", "bench", "calibrate" };
static const char *const statuses[] = { "running", "complete", "interrupted", "failed" };

/* ---------------------------------------------------------------- helpers */

/* Print "results file PATH: WHAT: <sqlite message>" and return -1. */
int store_fail(const struct store *s, const char *what)
{
    return error("results file %s: %s: %s", s->path, what, store_sq->errmsg(s->db));
}

int store_prepare(struct store *s, const char *sql, sqlite3_stmt **st)
{
    if (store_sq->prepare_v2(s->db, sql, -1, st, NULL) != SQLITE_OK) {
        *st = NULL;
        return store_fail(s, "preparing a statement");
    }
    return 0;
}

static int bind_text(sqlite3_stmt *st, int i, const char *v)
{
    return v ? store_sq->bind_text(st, i, v, -1, SQLITE_STATIC) : store_sq->bind_null(st, i);
}

/* A copy of a TEXT column, or NULL for NULL. */
const char *store_col_dup(sqlite3_stmt *st, int i)
{
    const unsigned char *t = store_sq->column_text(st, i);
    return t ? xstrndup((const char *)t, (size_t)store_sq->column_bytes(st, i)) : NULL;
}

/* A REAL column; NULL (how SQLite stores NaN) reads back as NaN. */
double store_col_double(sqlite3_stmt *st, int i)
{
    return store_sq->column_type(st, i) == SQLITE_NULL ? NAN : store_sq->column_double(st, i);
}

static int one_of(const char *v, const char *const *list, size_t n)
{
    for (size_t i = 0; v && i < n; i++)
        if (!strcmp(v, list[i]))
            return 1;
    return 0;
}

int store_exec(struct store *s, const char *sql, const char *what)
{
    if (store_sq->exec(s->db, sql, NULL, NULL, NULL) != SQLITE_OK)
        return store_fail(s, what);
    return 0;
}

/* Open a write transaction (waits for the lock up to the busy timeout). */
static int write_begin(struct store *s)
{
    return store_exec(s, "BEGIN IMMEDIATE", "starting a write transaction");
}

/* Commit when rc is 0, else (or if the commit fails) roll back. Returns 0 or -1. */
int store_txn_end(struct store *s, int rc)
{
    if (rc == 0 && store_sq->exec(s->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
        rc = store_fail(s, "commit");
    if (rc && !store_sq->get_autocommit(s->db))
        store_sq->exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    return rc ? -1 : 0;
}

/* Step a statement that returns no rows, then finalize it. */
static int step_done(struct store *s, sqlite3_stmt *st, const char *what)
{
    int rc = store_sq->step(st) == SQLITE_DONE ? 0 : store_fail(s, what);
    store_sq->finalize(st);
    return rc;
}

/* ---------------------------------------------------------------- open */

/* The header facts that decide whether a file is ours. */
struct file_id {
    int64_t application_id, user_version, nobjects;
};

/* Read the header facts; a SQLite result code, the message stays in db. */
static int query_file_id(sqlite3 *db, struct file_id *id)
{
    sqlite3_stmt *st;
    int rc = store_sq->prepare_v2(db,
                            "SELECT (SELECT application_id FROM pragma_application_id),"
                            " (SELECT user_version FROM pragma_user_version),"
                            " (SELECT count(*) FROM sqlite_master)",
                            -1, &st, NULL);
    if (rc != SQLITE_OK)
        return rc;
    if (store_sq->step(st) == SQLITE_ROW) {
        id->application_id = store_sq->column_int64(st, 0);
        id->user_version = store_sq->column_int64(st, 1);
        id->nobjects = store_sq->column_int64(st, 2);
    }
    rc = store_sq->finalize(st); /* the step's error, if any */
    return rc;
}

/* Print the error of query_file_id() (rc its result) and return -1. */
static int file_id_error(const struct store *s, int rc)
{
    if ((rc & 0xff) == SQLITE_NOTADB)
        return error("results file %s: not a SQLite database", s->path);
    return store_fail(s, "reading the header");
}

/* 0 = ours and usable, 1 = empty (never written: create the schema), -1 = refused. */
static int check_file_id(const struct store *s, const struct file_id *id)
{
    if (id->application_id == STORE_APPLICATION_ID) {
        if (id->user_version > STORE_SCHEMA_VERSION)
            return error("results file %s: written by a newer pgolab (schema %" PRId64
                         " > %d)",
                         s->path, id->user_version, STORE_SCHEMA_VERSION);
        if (id->user_version < 0)
            return error("results file %s: bad schema version %" PRId64, s->path,
                         id->user_version);
        return 0;
    }
    if (id->application_id == 0 && id->user_version == 0 && id->nobjects == 0)
        return 1;
    if (id->application_id != 0)
        return error("results file %s: not a pgolab results database (application_id "
                     "0x%08" PRIx32 ")",
                     s->path, (uint32_t)id->application_id);
    return error("results file %s: not a pgolab results database", s->path);
}

/* The SQLite URI of path with the query string query ("mode=ro", ...). Always using URIs
 * keeps a path that happens to start with "file:" or hold '?' or '#' a plain path. */
static char *path_uri(const char *path, const char *query)
{
    struct strbuf sb = STRBUF_INIT;
    strbuf_addstr(&sb, "file:");
    for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
            strchr("/._~-", *p))
            strbuf_addch(&sb, *p);
        else
            strbuf_addf(&sb, "%%%02X", *p);
    }
    strbuf_addf(&sb, "?%s", query);
    return strbuf_detach(&sb);
}

static int file_exists(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0;
}

/* Open an existing file through a read-only connection into ro->db (NULL on failure; the
 * file's ids into *id). Without a -wal file next to it (no writer, or cleanly closed: the main
 * file is the whole database) it is opened immutable, which creates no -wal/-shm files, so a
 * refused file's directory is left as it was too (and a file on a read-only file system can
 * be read). With one (a live or crashed writer), or if one appeared meanwhile, a plain
 * read-only connection reads the WAL as well; the files it might add exist already or belong
 * to that writer. 0, or -1 with the message printed. */
static int open_readonly(struct store *ro, struct file_id *id)
{
    char *wal = xasprintf("%s-wal", ro->path);
    int rc, opened;
    for (int immutable = !file_exists(wal);; immutable = 0) {
        /* immutable: SQLite takes no locks and creates no -wal/-shm files */
        char *uri = path_uri(ro->path, immutable ? "mode=ro&immutable=1" : "mode=ro");
        rc = store_sq->open_v2(uri, &ro->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL);
        free(uri);
        opened = rc == SQLITE_OK;
        if (!opened)
            break;
        store_sq->extended_result_codes(ro->db, 1);
        store_sq->busy_timeout(ro->db, BUSY_TIMEOUT_MS);
        rc = query_file_id(ro->db, id);
        if (!immutable || !file_exists(wal))
            break;
        store_sq->close(ro->db); /* a writer started meanwhile: what we read may be stale */
        ro->db = NULL;
    }
    free(wal);
    if (!opened)
        rc = store_fail(ro, "cannot open");
    else if (rc != SQLITE_OK)
        rc = file_id_error(ro, rc);
    else
        rc = check_file_id(ro, id) < 0 ? -1 : 0;
    if (rc) {
        store_sq->close(ro->db);
        ro->db = NULL;
    }
    return rc ? -1 : 0;
}

/* Look at an existing file read-only (open_readonly), so a file we refuse is never opened for
 * writing. */
static int check_readonly(const char *path)
{
    struct store ro = { NULL, (char *)path };
    struct file_id id = { 0, 0, 0 };
    int rc = open_readonly(&ro, &id);
    store_sq->close(ro.db);
    return rc;
}

/* The directory of path ("." for a bare name, "/" for a file in the root); caller frees. */
static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? xstrndup(path, (size_t)(slash - path + (slash == path))) : xstrdup(".");
}

/* Whether the results file at path (existing or not) can be written: its directory and, when
 * it exists, the file itself. 0, or -1 after one line saying why not (a read-only file system
 * or no permission), before anything is measured. */
static int check_writable(const char *path, bool exists)
{
    char *dir = dir_of(path);
    int rc = 0;
    const char *where = exists && access(path, W_OK) < 0 ? path
                        : access(dir, W_OK) < 0          ? dir
                                                         : NULL;
    if (where)
        rc = error("results file %s: cannot record there: %s: %s (--results=FILE names a "
                   "writable file)", path, where, strerror(errno));
    free(dir);
    return rc;
}

/* Apply the pending migrations in one write transaction. The file is checked again inside it:
 * another process may have created or upgraded it since the read-only look. */
static int migrate(struct store *s)
{
    struct file_id id = { 0, 0, 0 };
    if (write_begin(s))
        return -1;
    int rc = query_file_id(s->db, &id);
    if (rc != SQLITE_OK)
        rc = file_id_error(s, rc);
    else
        rc = check_file_id(s, &id) < 0 ? -1 : 0;
    for (int64_t v = id.user_version; rc == 0 && v < STORE_SCHEMA_VERSION; v++) {
        char *what = xasprintf("migrating the schema to version %" PRId64, v + 1);
        rc = store_exec(s, migrations[v], what);
        free(what);
    }
    return store_txn_end(s, rc);
}

/* Switch to WAL mode. The switch needs an exclusive lock, and while a new file is still in
 * rollback mode SQLite may answer SQLITE_BUSY at once instead of calling the busy handler (two
 * processes creating the file together), so retry for up to the busy timeout. */
static int set_wal(struct store *s)
{
    uint64_t deadline = now_ns() + BUSY_TIMEOUT_MS * 1000000ull;
    for (unsigned attempt = 1;; attempt++) {
        sqlite3_stmt *st;
        int rc;
        if (store_prepare(s, "PRAGMA journal_mode = WAL", &st))
            return -1;
        rc = store_sq->step(st);
        if (rc == SQLITE_ROW) {
            const char *mode = (const char *)store_sq->column_text(st, 0);
            rc = mode && !strcmp(mode, "wal")
                     ? 0
                     : error("results file %s: cannot use WAL mode (journal mode stays %s)",
                             s->path, mode ? mode : "unknown");
            store_sq->finalize(st);
            return rc;
        }
        rc &= 0xff;
        if ((rc != SQLITE_BUSY && rc != SQLITE_LOCKED) || now_ns() >= deadline) {
            rc = store_fail(s, "switching to WAL mode");
            store_sq->finalize(st);
            return rc;
        }
        store_sq->finalize(st);
        /* 1..8 ms, varied by process so competing openers do not retry in lockstep */
        struct timespec ts = { 0, (long)(1 + (getpid() + attempt) % 8) * 1000000L };
        nanosleep(&ts, NULL);
    }
}

int store_open(const char *path, struct store **out)
{
    struct stat sb;
    int exists, rc, flags = SQLITE_OPEN_READWRITE;
    struct store *s;
    char *uri;

    *out = NULL;
    if (!path)
        path = STORE_DEFAULT_PATH;
    if (!store_sq) {
        char *what = xasprintf("results file %s", path);
        store_sq = store_sqlite_load(what);
        free(what);
        if (!store_sq)
            return -1;
    }
    exists = stat(path, &sb) == 0;
    if (!exists && errno != ENOENT)
        return error("results file %s: %s", path, strerror(errno));
    if (exists && S_ISDIR(sb.st_mode))
        return error("results file %s: a directory (expected a results database file, e.g. "
                     "%s/pgolab.db)", path, path);
    if (exists && check_readonly(path))
        return -1;
    if (check_writable(path, exists))
        return -1;
    if (!exists)
        flags |= SQLITE_OPEN_CREATE;

    s = xcalloc(1, sizeof(*s));
    s->path = xstrdup(path);
    uri = path_uri(path, exists ? "mode=rw" : "mode=rwc");
    rc = store_sq->open_v2(uri, &s->db, flags | SQLITE_OPEN_URI, NULL);
    free(uri);
    if (rc != SQLITE_OK) {
        store_fail(s, "cannot open");
        goto bad;
    }
    store_sq->extended_result_codes(s->db, 1);
    store_sq->busy_timeout(s->db, BUSY_TIMEOUT_MS);
    /* synchronous=NORMAL: in WAL mode a process crash loses nothing committed, a power cut at
     * most the last commits, and the file is never corrupted. */
    if (set_wal(s) || store_exec(s, "PRAGMA foreign_keys = ON", "enabling foreign keys") ||
        store_exec(s, "PRAGMA synchronous = NORMAL", "setting synchronous") || migrate(s))
        goto bad;
    *out = s;
    return 0;
bad:
    store_sq->close(s->db);
    free(s->path);
    free(s);
    return -1;
}

int store_open_read(const char *path, struct store **out)
{
    struct file_id id = { 0, 0, 0 };
    *out = NULL;
    if (!path)
        path = STORE_DEFAULT_PATH;
    char *dir = dir_of(path);
    bool writable = access(path, W_OK) == 0 && access(dir, W_OK) == 0;
    free(dir);
    if (writable || !file_exists(path))
        return store_open(path, out);
    if (!store_sq) {
        char *what = xasprintf("results file %s", path);
        store_sq = store_sqlite_load(what);
        free(what);
        if (!store_sq)
            return -1;
    }
    struct store *s = xcalloc(1, sizeof(*s));
    s->path = xstrdup(path);
    if (open_readonly(s, &id) == 0 && id.user_version < STORE_SCHEMA_VERSION) {
        error("results file %s: schema %" PRId64 " is older than this pgolab's %d and the file "
              "cannot be written to bring it up to date (copy it somewhere writable)",
              path, id.user_version, STORE_SCHEMA_VERSION);
        store_sq->close(s->db);
        s->db = NULL;
    }
    if (!s->db) {
        free(s->path);
        free(s);
        return -1;
    }
    *out = s;
    return 0;
}

int store_close(struct store *s)
{
    int rc = 0;
    if (!s)
        return 0;
    if (store_sq->close(s->db) != SQLITE_OK)
        rc = store_fail(s, "closing");
    free(s->path);
    free(s);
    return rc;
}

const char *store_path(const struct store *s)
{
    return s->path;
}

/* ---------------------------------------------------------------- writes */

char *store_settings_hash(const json_t *settings)
{
    char *canon = json_dumps(settings, JSON_COMPACT | JSON_SORT_KEYS);
    uint64_t h = 0xcbf29ce484222325ull;
    if (!canon)
        die("out of memory");
    for (const unsigned char *p = (const unsigned char *)canon; *p; p++) {
        h ^= *p;
        h *= 0x100000001b3ull;
    }
    free(canon);
    return xasprintf("fnv1a64:%016" PRIx64, h);
}

int store_experiment_begin(struct store *s, const char *kind, const char *settings_json,
                           const char *environment_json, uint64_t seed, int64_t *id)
{
    json_error_t jerr;
    json_t *settings;
    sqlite3_stmt *st;
    char *hash;
    int rc;

    if (!one_of(kind, kinds, ARRAY_SIZE(kinds)))
        return error("results file %s: unknown experiment kind '%s'", s->path,
                     kind ? kind : "(null)");
    settings = settings_json ? json_loads(settings_json, 0, &jerr) : NULL;
    if (!json_is_object(settings)) {
        json_decref(settings);
        return error("results file %s: the settings are not a JSON object", s->path);
    }
    hash = store_settings_hash(settings);
    json_decref(settings);
    if (environment_json) {
        json_t *env = json_loads(environment_json, JSON_DECODE_ANY, &jerr);
        if (!env) {
            free(hash);
            return error("results file %s: the environment is not JSON (%s)", s->path,
                         jerr.text);
        }
        json_decref(env);
    }

    if (write_begin(s)) {
        free(hash);
        return -1;
    }
    rc = store_prepare(s,
                 "INSERT INTO experiments (kind, created_at, finished_at, status, settings_json,"
                 " settings_hash, environment_json, seed, note)"
                 " VALUES (?1, ?2, NULL, 'running', ?3, ?4, ?5, ?6, NULL)",
                 &st);
    if (rc == 0) {
        if (bind_text(st, 1, kind) | store_sq->bind_double(st, 2, wall_time()) |
            bind_text(st, 3, settings_json) | bind_text(st, 4, hash) |
            bind_text(st, 5, environment_json) | store_sq->bind_int64(st, 6, (int64_t)seed)) {
            rc = store_fail(s, "recording an experiment");
            store_sq->finalize(st);
        } else {
            rc = step_done(s, st, "recording an experiment");
        }
    }
    if (rc == 0)
        *id = store_sq->last_insert_rowid(s->db);
    free(hash);
    return store_txn_end(s, rc);
}

int store_variant_add(struct store *s, int64_t exp_id, const struct store_variant *v)
{
    sqlite3_stmt *st;
    int rc;
    if (!v->name)
        return error("results file %s: variant %d has no name", s->path, v->idx);
    if (write_begin(s))
        return -1;
    rc = store_prepare(s,
                 "INSERT INTO variants (experiment_id, idx, name, library, sha256, version,"
                 " source_id, compiler, cflags, fingerprint_json)"
                 " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                 &st);
    if (rc == 0) {
        if (store_sq->bind_int64(st, 1, exp_id) | store_sq->bind_int(st, 2, v->idx) |
            bind_text(st, 3, v->name) | bind_text(st, 4, v->library) |
            bind_text(st, 5, v->sha256) | bind_text(st, 6, v->version) |
            bind_text(st, 7, v->source_id) | bind_text(st, 8, v->compiler) |
            bind_text(st, 9, v->cflags) | bind_text(st, 10, v->fingerprint_json)) {
            rc = store_fail(s, "recording a variant");
        } else if (store_sq->step(st) != SQLITE_DONE) {
            int ext = store_sq->extended_errcode(s->db);
            if (ext == SQLITE_CONSTRAINT_PRIMARYKEY)
                rc = error("results file %s: experiment %" PRId64 " already has a variant %d",
                           s->path, exp_id, v->idx);
            else if (ext == SQLITE_CONSTRAINT_FOREIGNKEY)
                rc = error("results file %s: no experiment %" PRId64, s->path, exp_id);
            else
                rc = store_fail(s, "recording a variant");
        }
        store_sq->finalize(st);
    }
    return store_txn_end(s, rc);
}

int store_run_add(struct store *s, int64_t exp_id, const struct store_run *r)
{
    sqlite3_stmt *st;
    int rc;
    if (!r->workload)
        return error("results file %s: a run without a workload", s->path);
    if (write_begin(s))
        return -1;
    rc = store_prepare(s,
                 "INSERT INTO runs (experiment_id, variant_idx, workload, threads, round, seq,"
                 " started_at, duration_s, tps, qps, lat_min_ms, lat_avg_ms, lat_p95_ms,"
                 " lat_max_ms, transactions, errors, report_json, metrics_json)"
                 " VALUES (?1, ?2, ?3, ?4, ?5,"
                 " CASE WHEN ?6 < 0 THEN (SELECT coalesce(max(seq), 0) + 1 FROM runs"
                 "                        WHERE experiment_id = ?1) ELSE ?6 END,"
                 " ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)",
                 &st);
    if (rc == 0) {
        if (store_sq->bind_int64(st, 1, exp_id) | store_sq->bind_int(st, 2, r->variant_idx) |
            bind_text(st, 3, r->workload) | store_sq->bind_int(st, 4, r->threads) |
            store_sq->bind_int(st, 5, r->round) | store_sq->bind_int(st, 6, r->seq) |
            store_sq->bind_double(st, 7, r->started_at) |
            store_sq->bind_double(st, 8, r->duration_s) | store_sq->bind_double(st, 9, r->tps) |
            store_sq->bind_double(st, 10, r->qps) | store_sq->bind_double(st, 11, r->lat_min_ms) |
            store_sq->bind_double(st, 12, r->lat_avg_ms) |
            store_sq->bind_double(st, 13, r->lat_p95_ms) |
            store_sq->bind_double(st, 14, r->lat_max_ms) |
            store_sq->bind_int64(st, 15, (int64_t)r->transactions) |
            store_sq->bind_int64(st, 16, (int64_t)r->errors) | bind_text(st, 17, r->report_json) |
            bind_text(st, 18, r->metrics_json)) {
            rc = store_fail(s, "recording a run");
        } else if (store_sq->step(st) != SQLITE_DONE) {
            int ext = store_sq->extended_errcode(s->db);
            if (ext == SQLITE_CONSTRAINT_UNIQUE)
                rc = error("results file %s: run already recorded (experiment %" PRId64
                           ", variant %d, %s, %d threads, round %d)",
                           s->path, exp_id, r->variant_idx, r->workload, r->threads, r->round);
            else if (ext == SQLITE_CONSTRAINT_FOREIGNKEY)
                rc = error("results file %s: experiment %" PRId64 " has no variant %d",
                           s->path, exp_id, r->variant_idx);
            else
                rc = store_fail(s, "recording a run");
        }
        store_sq->finalize(st);
    }
    return store_txn_end(s, rc);
}

/* UPDATE experiments: bind ?1 = exp_id here, the caller binds the rest; fails when there is
 * no such experiment. */
static int update_experiment(struct store *s, int64_t exp_id, sqlite3_stmt *st, int bind_rc,
                             const char *what)
{
    int rc = 0;
    if (bind_rc | store_sq->bind_int64(st, 1, exp_id))
        rc = store_fail(s, what);
    else if (store_sq->step(st) != SQLITE_DONE)
        rc = store_fail(s, what);
    else if (store_sq->changes(s->db) == 0)
        rc = error("results file %s: no experiment %" PRId64, s->path, exp_id);
    store_sq->finalize(st);
    return rc;
}

int store_experiment_finish(struct store *s, int64_t exp_id, const char *status)
{
    sqlite3_stmt *st;
    int rc;
    if (!one_of(status, statuses, ARRAY_SIZE(statuses)))
        return error("results file %s: unknown experiment status '%s'", s->path,
                     status ? status : "(null)");
    if (write_begin(s))
        return -1;
    rc =
        store_prepare(s, "UPDATE experiments SET status = ?2, finished_at = ?3 WHERE id = ?1", &st);
    if (rc == 0) {
        int b = bind_text(st, 2, status) |
                (strcmp(status, "running") ? store_sq->bind_double(st, 3, wall_time())
                                           : store_sq->bind_null(st, 3));
        rc = update_experiment(s, exp_id, st, b, "updating an experiment");
    }
    return store_txn_end(s, rc);
}

int store_experiment_delete(struct store *s, int64_t exp_id)
{
    static const char *const sql[] = {
        "DELETE FROM runs WHERE experiment_id = ?1",
        "DELETE FROM variants WHERE experiment_id = ?1",
        "DELETE FROM experiments WHERE id = ?1",
    };
    int rc = 0;
    if (write_begin(s))
        return -1;
    for (size_t i = 0; rc == 0 && i < ARRAY_SIZE(sql); i++) {
        sqlite3_stmt *st;
        rc = store_prepare(s, sql[i], &st);
        if (rc == 0) {
            if (store_sq->bind_int64(st, 1, exp_id) != SQLITE_OK ||
                store_sq->step(st) != SQLITE_DONE)
                rc = store_fail(s, "removing an experiment");
            store_sq->finalize(st);
        }
    }
    return store_txn_end(s, rc);
}

int store_experiment_set_note(struct store *s, int64_t exp_id, const char *note)
{
    sqlite3_stmt *st;
    int rc;
    if (write_begin(s))
        return -1;
    rc = store_prepare(s, "UPDATE experiments SET note = ?2 WHERE id = ?1", &st);
    if (rc == 0)
        rc = update_experiment(s, exp_id, st, bind_text(st, 2, note), "setting a note");
    return store_txn_end(s, rc);
}

/* ---------------------------------------------------------------- reads */

int store_run_exists(struct store *s, int64_t exp_id, int variant_idx, const char *workload,
                     int threads, int round, int *exists)
{
    sqlite3_stmt *st;
    int rc;
    *exists = 0;
    if (store_prepare(s,
                "SELECT 1 FROM runs WHERE experiment_id = ?1 AND variant_idx = ?2"
                " AND workload = ?3 AND threads = ?4 AND round = ?5",
                &st))
        return -1;
    if (store_sq->bind_int64(st, 1, exp_id) | store_sq->bind_int(st, 2, variant_idx) |
        bind_text(st, 3, workload) | store_sq->bind_int(st, 4, threads) |
        store_sq->bind_int(st, 5, round)) {
        rc = store_fail(s, "looking up a run");
    } else {
        rc = store_sq->step(st);
        if (rc == SQLITE_ROW)
            *exists = 1;
        rc = rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : store_fail(s, "looking up a run");
    }
    store_sq->finalize(st);
    return rc;
}

