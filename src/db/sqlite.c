/* sqlite: SQLite driver on the variant's libsqlite3, loaded at run time with a plain dlopen
 * after proving that it will be the only SQLite in the process (see load_library). The loaded
 * library and its function table are process-wide (set up by init); each worker's db_conn
 * owns one sqlite3 handle and its cached BEGIN/COMMIT/ROLLBACK statements. */
#include "db/sqlite.h"
#include "util/util.h"

#include <assert.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>

#define DEFAULT_LIBRARY "libsqlite3.so.0"

/* The subset of the SQLite C API we call, resolved in the variant's namespace. */
static struct {
    __typeof__(&sqlite3_open_v2) open_v2;
    __typeof__(&sqlite3_close_v2) close_v2;
    __typeof__(&sqlite3_prepare_v2) prepare_v2;
    __typeof__(&sqlite3_step) step;
    __typeof__(&sqlite3_reset) reset;
    __typeof__(&sqlite3_finalize) finalize;
    __typeof__(&sqlite3_bind_int64) bind_int64;
    __typeof__(&sqlite3_bind_text) bind_text;
    __typeof__(&sqlite3_column_count) column_count;
    __typeof__(&sqlite3_column_text) column_text;
    __typeof__(&sqlite3_column_bytes) column_bytes;
    __typeof__(&sqlite3_total_changes) total_changes;
    __typeof__(&sqlite3_get_autocommit) get_autocommit;
    __typeof__(&sqlite3_errmsg) errmsg;
    __typeof__(&sqlite3_extended_errcode) extended_errcode;
    __typeof__(&sqlite3_errstr) errstr;
    __typeof__(&sqlite3_busy_timeout) busy_timeout;
    __typeof__(&sqlite3_exec) exec;
    __typeof__(&sqlite3_libversion) libversion;
    __typeof__(&sqlite3_sourceid) sourceid;
    __typeof__(&sqlite3_threadsafe) threadsafe;
} api;

static void *lib_handle;
static char *lib_path;           /* as given */
static char *lib_loaded_from;    /* dladdr of sqlite3_step */
static char *lib_engine_source_id;
static const char *lib_isolation;
static char *db_path;
static int busy_timeout_ms;
static char *journal_mode;
static char *synchronous;

static const struct opt_def sqlite_options[] = {
    { "sqlite-db", OPT_STRING, "sbtest.db", "SQLite database file" },
    { "sqlite-library", OPT_STRING, NULL,
      "libsqlite3 shared library to load (default: the system's " DEFAULT_LIBRARY ")" },
    { "sqlite-busy-timeout", OPT_INT, "10000",
      "busy timeout in ms before SQLITE_BUSY is returned" },
    { "sqlite-journal-mode", OPT_STRING, "wal", "journal_mode pragma" },
    { "sqlite-synchronous", OPT_STRING, "normal", "synchronous pragma (off, normal, full)" },
    OPT_END
};

struct sqlite_conn {
    sqlite3 *db;
    sqlite3_stmt *begin, *begin_immediate, *commit, *rollback;
    bool write_turn;  /* holds the in-process writers' turn (see write_turn_take) */
};

/* SQLite has one writer at a time. Left to its busy handler (sleeps of 1..100 ms), the thread
 * that just committed re-takes the lock before a sleeping waiter wakes, and waiters starve for
 * whole seconds. So this process's write transactions take turns first-come first-served
 * (a ticket queue, like a server's lock queue); the database lock and busy timeout still
 * apply between processes. */
static pthread_mutex_t turn_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t turn_cv = PTHREAD_COND_INITIALIZER;
static uint64_t turn_next, turn_serving;

static void write_turn_take(struct sqlite_conn *sc)
{
    pthread_mutex_lock(&turn_mu);
    uint64_t ticket = turn_next++;
    while (ticket != turn_serving)
        pthread_cond_wait(&turn_cv, &turn_mu);
    pthread_mutex_unlock(&turn_mu);
    sc->write_turn = true;
}

static void write_turn_give(struct sqlite_conn *sc)
{
    if (!sc->write_turn)
        return;
    sc->write_turn = false;
    pthread_mutex_lock(&turn_mu);
    turn_serving++;
    pthread_cond_broadcast(&turn_cv);
    pthread_mutex_unlock(&turn_mu);
}

struct db_stmt {
    sqlite3_stmt *st;
    int ncol;  /* result columns, fixed at prepare */
    char *sql; /* the text prepared, for the message of a failed execution */
};

/* Ask the engine itself (SQL function sqlite_source_id()) on an in-memory database. */
static char *engine_source_id(void)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    char *res = NULL;
    if (api.open_v2(":memory:", &db, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK &&
        api.prepare_v2(db, "SELECT sqlite_source_id()", -1, &st, NULL) == SQLITE_OK &&
        api.step(st) == SQLITE_ROW)
        res = xstrdup((const char *)api.column_text(st, 0));
    api.finalize(st);
    api.close_v2(db);
    return res ? res : xstrdup("?");
}

/* ---------------------------------------------------------------- is SQLite alone? */

/* The symbols whose definition makes an object "a SQLite": every build exports both. */
static const char *const sqlite_marks[] = { "sqlite3_libversion", "sqlite3_step" };

static uint32_t gnu_hash(const char *name)
{
    uint32_t h = 5381;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        h = h * 33 + *p;
    return h;
}

static uint32_t sysv_hash(const char *name)
{
    uint32_t h = 0, g;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
        h = (h << 4) + *p;
        if ((g = h & 0xf0000000u))
            h ^= g >> 24;
        h &= ~g;
    }
    return h;
}

/* A d_ptr of a loaded object's dynamic section as an address: glibc relocates them in place,
 * except where the section is read-only (the vDSO), where they stay offsets from the base. */
static const void *dyn_ptr(const struct dl_phdr_info *info, ElfW(Addr) p)
{
    return (const void *)(p < info->dlpi_addr ? p + info->dlpi_addr : p);
}

static bool sym_is(const ElfW(Sym) *sym, const char *strtab, const char *name)
{
    return sym->st_shndx != SHN_UNDEF && sym->st_value != 0 && !strcmp(strtab + sym->st_name, name);
}

/* Does the loaded object define (not just use) name in its dynamic symbol table? Looked up
 * through its GNU or SysV hash table, as the dynamic linker would. */
static bool object_defines(const struct dl_phdr_info *info, const char *name)
{
    const ElfW(Dyn) *dyn = NULL;
    const ElfW(Sym) *symtab = NULL;
    const char *strtab = NULL;
    const uint32_t *gnu = NULL, *sysv = NULL;

    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
            dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    for (; dyn && dyn->d_tag != DT_NULL; dyn++) {
        if (dyn->d_tag == DT_SYMTAB)
            symtab = dyn_ptr(info, dyn->d_un.d_ptr);
        else if (dyn->d_tag == DT_STRTAB)
            strtab = dyn_ptr(info, dyn->d_un.d_ptr);
        else if (dyn->d_tag == DT_GNU_HASH)
            gnu = dyn_ptr(info, dyn->d_un.d_ptr);
        else if (dyn->d_tag == DT_HASH)
            sysv = dyn_ptr(info, dyn->d_un.d_ptr);
    }
    if (!symtab || !strtab)
        return false;
    if (gnu) {
        /* nbuckets, symoffset, bloom words, bloom shift, bloom[], buckets[], chain[] */
        uint32_t nbuckets = gnu[0], symoffset = gnu[1], nbloom = gnu[2], h = gnu_hash(name);
        const uint32_t *buckets = (const uint32_t *)((const ElfW(Addr) *)(gnu + 4) + nbloom);
        const uint32_t *chain = buckets + nbuckets;
        uint32_t i = nbuckets ? buckets[h % nbuckets] : 0;
        if (i == 0 || i < symoffset)
            return false;
        for (;; i++) {
            uint32_t c = chain[i - symoffset];
            if ((c | 1) == (h | 1) && sym_is(&symtab[i], strtab, name))
                return true;
            if (c & 1)
                return false;
        }
    }
    if (sysv) {
        /* nbucket, nchain, bucket[], chain[] */
        uint32_t nbucket = sysv[0];
        const uint32_t *bucket = sysv + 2, *chain = bucket + nbucket;
        for (uint32_t i = nbucket ? bucket[sysv_hash(name) % nbucket] : 0; i != STN_UNDEF;
             i = chain[i])
            if (sym_is(&symtab[i], strtab, name))
                return true;
    }
    return false;
}

static int find_sqlite_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    for (size_t k = 0; k < ARRAY_SIZE(sqlite_marks); k++)
        if (object_defines(info, sqlite_marks[k])) {
            *(char **)data = xstrdup(info->dlpi_name && info->dlpi_name[0]
                                         ? info->dlpi_name
                                         : "the pgolab executable");
            return 1;
        }
    return 0;
}

/* The file of an object already in this process that defines SQLite, or NULL: every loaded
 * object of every namespace (dl_iterate_phdr: the executable, its libraries, LD_PRELOAD,
 * dlopen'ed ones, local or global), then, in case an object escaped that look, the global
 * scope through dlsym. Caller frees. */
static char *sqlite_already_loaded(void)
{
    char *found = NULL;
    dl_iterate_phdr(find_sqlite_cb, &found);
    for (size_t k = 0; !found && k < ARRAY_SIZE(sqlite_marks); k++) {
        void *sym = dlsym(RTLD_DEFAULT, sqlite_marks[k]);
        Dl_info di;
        if (sym)
            found = xstrdup(dladdr(sym, &di) && di.dli_fname && di.dli_fname[0]
                                ? di.dli_fname
                                : "the pgolab executable");
    }
    return found;
}

/* ---------------------------------------------------------------- loading */

/* How the variant is loaded: PGOLAB_SQLITE_LOAD unset (or "plain") = plain dlopen in the base
 * namespace, after proving it is alone; "dlmopen" = a private link-map namespace, for a
 * process that deliberately holds another SQLite (the unit tests link one); "global" = the
 * naive dlopen(RTLD_GLOBAL) without the proof, which exists only so the isolation test can
 * show that it detects mixing. */
static int load_library(const char *path)
{
    const char *name = path ? path : DEFAULT_LIBRARY;
    const char *mode = getenv("PGOLAB_SQLITE_LOAD");
    struct stat stt;

    if (path && stat(path, &stt) < 0)
        return error("--sqlite-library=%s: %s", path, strerror(errno));
    if (path && !S_ISREG(stt.st_mode))
        return error("--sqlite-library=%s: not a regular file (expected a libsqlite3 shared "
                     "library)", path);
    if (mode && !strcmp(mode, "global")) {
        lib_handle = dlopen(name, RTLD_NOW | RTLD_GLOBAL);
        lib_isolation = "dlopen(RTLD_GLOBAL) [PGOLAB_SQLITE_LOAD=global, not isolated]";
    } else if (mode && !strcmp(mode, "dlmopen")) {
        /* The variant's internal calls cannot be interposed by any other SQLite in the
         * process (ELF symbol interposition stops at the namespace). The price: glibc takes
         * the locked path for every mutex in an inner namespace (BENCHMARKS.md). */
        lib_handle = dlmopen(LM_ID_NEWLM, name, RTLD_NOW | RTLD_LOCAL);
        lib_isolation = "dlmopen(LM_ID_NEWLM) [PGOLAB_SQLITE_LOAD=dlmopen]";
    } else if (mode && *mode && strcmp(mode, "plain")) {
        return error("PGOLAB_SQLITE_LOAD=%s: expected plain, dlmopen or global", mode);
    } else {
        /* Another SQLite already here (an LD_PRELOAD, a library that pulled one in) would
         * interpose the variant's calls to its own exported functions, and two SQLites in one
         * process break each other's POSIX locks on a shared file. Refused rather than
         * falling back to dlmopen with a warning: the fallback measures something else
         * (point selects ~10% slower, BENCHMARKS.md), so its numbers would not compare with
         * those of an ordinary run, and inside an experiment the warning ends up in a child's
         * log that nobody reads. One clear error costs a rerun; PGOLAB_SQLITE_LOAD=dlmopen
         * measures in a private namespace for whoever wants that. */
        char *other = sqlite_already_loaded();
        if (other) {
            const char *preload = getenv("LD_PRELOAD");
            error("--sqlite-library=%s: another SQLite is already loaded in this process (%s%s%s), "
                  "so the variant would not run alone; %s, or set PGOLAB_SQLITE_LOAD=dlmopen to "
                  "load the variant into a private namespace (slower mutexes)",
                  name, other, preload ? "; LD_PRELOAD=" : "", preload ? preload : "",
                  preload ? "unset LD_PRELOAD" : "remove it");
            free(other);
            return -1;
        }
        /* Proven alone, so every symbol the variant uses and defines itself binds to its own
         * definition, fixed at load time (RTLD_NOW): nothing loaded later can interpose it.
         * RTLD_LOCAL keeps it out of the global scope. Not RTLD_DEEPBIND: it would add no
         * safety here, and it would make the variant bind malloc & co. to libc's even when
         * an allocator is LD_PRELOADed on purpose (jemalloc, mimalloc), silently measuring
         * something other than asked. */
        lib_handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
        lib_isolation = "dlopen(RTLD_LOCAL), the only SQLite in the process";
    }
    if (!lib_handle) {
        const char *why = dlerror();
        return error("--sqlite-library=%s: cannot load it as a shared library: %s", name,
                     why ? why : "?");
    }
#define SYM(field, sym)                                                                           \
    do {                                                                                          \
        *(void **)&api.field = dlsym(lib_handle, #sym);                                           \
        if (!api.field)                                                                           \
            return error("--sqlite-library=%s: not a SQLite library (no %s symbol)", name, #sym); \
    } while (0)
    SYM(libversion, sqlite3_libversion);
    SYM(sourceid, sqlite3_sourceid);
    SYM(open_v2, sqlite3_open_v2);
    SYM(close_v2, sqlite3_close_v2);
    SYM(prepare_v2, sqlite3_prepare_v2);
    SYM(step, sqlite3_step);
    SYM(reset, sqlite3_reset);
    SYM(finalize, sqlite3_finalize);
    SYM(bind_int64, sqlite3_bind_int64);
    SYM(bind_text, sqlite3_bind_text);
    SYM(column_count, sqlite3_column_count);
    SYM(column_text, sqlite3_column_text);
    SYM(column_bytes, sqlite3_column_bytes);
    SYM(total_changes, sqlite3_total_changes);
    SYM(get_autocommit, sqlite3_get_autocommit);
    SYM(errmsg, sqlite3_errmsg);
    SYM(extended_errcode, sqlite3_extended_errcode);
    SYM(errstr, sqlite3_errstr);
    SYM(busy_timeout, sqlite3_busy_timeout);
    SYM(exec, sqlite3_exec);
    SYM(threadsafe, sqlite3_threadsafe);
#undef SYM
    Dl_info di;
    if (dladdr(*(void **)&api.step, &di) && di.dli_fname)
        lib_loaded_from = xstrdup(di.dli_fname);
    else
        lib_loaded_from = xstrdup("?");
    lib_path = xstrdup(name);
    lib_engine_source_id = engine_source_id();
    if (api.threadsafe() == 0)
        warning("%s was built with SQLITE_THREADSAFE=0; use --threads=1", name);
    return 0;
}

/* Whether w is one of the NULL-terminated words, ignoring case. */
static bool word_in(const char *w, const char *const *words)
{
    for (; *words; words++)
        if (!strcasecmp(w, *words))
            return true;
    return false;
}

static int sqlite_init(const struct opts *o)
{
    if (lib_handle)
        return 0;
    db_path = xstrdup(opt_str(o, "sqlite-db"));
    busy_timeout_ms = (int)opt_int(o, "sqlite-busy-timeout");
    journal_mode = xstrdup(opt_str(o, "sqlite-journal-mode"));
    synchronous = xstrdup(opt_str(o, "sqlite-synchronous"));
    if (busy_timeout_ms < 0)
        return error("--sqlite-busy-timeout=%d: expected a number of ms >= 0", busy_timeout_ms);
    /* SQLite ignores a pragma value it does not know, and the run would use another mode
     * than the one its options record: the values of sqlite.org/pragma.html */
    static const char *const journal_modes[] = { "delete", "truncate", "persist", "memory",
                                                 "wal", "off", NULL };
    static const char *const sync_modes[] = { "off", "normal", "full", "extra", "0", "1", "2",
                                              "3", NULL };
    /* SQLite always prepares; the option is checked as the servers' drivers check it */
    const char *ps_mode = opt_known(o, "db-ps-mode") ? opt_str(o, "db-ps-mode") : "auto";
    if (strcmp(ps_mode, "auto") && strcmp(ps_mode, "disable"))
        return error("--db-ps-mode=%s: expected auto or disable", ps_mode);
    if (!word_in(journal_mode, journal_modes))
        return error("--sqlite-journal-mode=%s: expected delete, truncate, persist, memory, wal "
                     "or off", journal_mode);
    if (!word_in(synchronous, sync_modes))
        return error("--sqlite-synchronous=%s: expected off, normal, full or extra (or 0-3)",
                     synchronous);
    return load_library(opt_str(o, "sqlite-library"));
}

static void sqlite_done(void)
{
    /* The library stays mapped: unloading a namespace with live TLS is not worth the risk. */
    free(db_path);
    free(journal_mode);
    free(synchronous);
    db_path = journal_mode = synchronous = NULL;
}

static int sqlite_libinfo(struct db_libinfo *info)
{
    if (!lib_handle)
        return -1;
    info->product = "SQLite";
    info->path = lib_path;
    info->version = api.libversion();
    info->source_id = api.sourceid();
    info->engine_source_id = lib_engine_source_id;
    info->loaded_from = lib_loaded_from;
    info->isolation = lib_isolation;
    return 0;
}

/* Fill c->err from the connection's last error; SQLITE_BUSY/LOCKED are retryable. */
static enum db_status set_error(struct db_conn *c, int rc)
{
    struct sqlite_conn *sc = c->priv;
    int prim = rc & 0xff;
    c->err.code = rc;
    snprintf(c->err.msg, sizeof(c->err.msg), "%s",
             sc && sc->db ? api.errmsg(sc->db) : api.errstr(rc));
    c->err.status = (prim == SQLITE_BUSY || prim == SQLITE_LOCKED) ? DB_RETRY : DB_FATAL;
    return c->err.status;
}

static sqlite3_stmt *prep(struct db_conn *c, const char *sql)
{
    struct sqlite_conn *sc = c->priv;
    sqlite3_stmt *st = NULL;
    int rc = api.prepare_v2(sc->db, sql, -1, &st, NULL);
    if (rc != SQLITE_OK) {
        set_error(c, rc);
        return NULL;
    }
    return st;
}

/* Set a pragma. Switching a new database to WAL needs an exclusive lock, and SQLite returns
 * SQLITE_BUSY for it without calling the busy handler when several connections open the
 * file at once (parallel prepare), so BUSY is retried here for up to the busy timeout. */
static int pragma(struct db_conn *c, const char *name, const char *value)
{
    struct sqlite_conn *sc = c->priv;
    char *sql = xasprintf("PRAGMA %s=%s", name, value);
    uint64_t give_up = now_ns() + (uint64_t)busy_timeout_ms * 1000000ull;
    int rc;
    while ((rc = api.exec(sc->db, sql, NULL, NULL, NULL)) == SQLITE_BUSY && now_ns() < give_up) {
        struct timespec ts = { 0, 1000000 };
        nanosleep(&ts, NULL);
    }
    free(sql);
    if (rc != SQLITE_OK) {
        set_error(c, rc);
        return -1;
    }
    return 0;
}

static void sqlite_disconnect(struct db_conn *c)
{
    struct sqlite_conn *sc = c->priv;
    if (!sc)
        return;
    write_turn_give(sc);
    api.finalize(sc->begin);
    api.finalize(sc->begin_immediate);
    api.finalize(sc->commit);
    api.finalize(sc->rollback);
    api.close_v2(sc->db);
    free(sc);
    c->priv = NULL;
}

static int sqlite_connect(struct db_conn *c)
{
    struct sqlite_conn *sc;
    struct stat stt;
    int rc;
    if (!c->create && stat(db_path, &stt) < 0) {
        c->err.status = DB_FATAL;
        c->err.code = SQLITE_CANTOPEN;
        snprintf(c->err.msg, sizeof(c->err.msg), "--sqlite-db=%s does not exist: run prepare first",
                 db_path);
        return -1;
    }
    sc = xcalloc(1, sizeof(*sc));
    c->priv = sc;
    rc = api.open_v2(
        db_path, &sc->db,
        SQLITE_OPEN_READWRITE | (c->create ? SQLITE_OPEN_CREATE : 0) | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK) {
        set_error(c, rc);
        snprintf(c->err.msg, sizeof(c->err.msg), "cannot open --sqlite-db=%s: %s", db_path,
                 sc->db ? api.errmsg(sc->db) : api.errstr(rc));
        sqlite_disconnect(c);
        return -1;
    }
    api.busy_timeout(sc->db, busy_timeout_ms);
    if (pragma(c, "journal_mode", journal_mode) < 0 || pragma(c, "synchronous", synchronous) < 0)
        goto fail;
    if (!(sc->begin = prep(c, "BEGIN")) || !(sc->begin_immediate = prep(c, "BEGIN IMMEDIATE")) ||
        !(sc->commit = prep(c, "COMMIT")) || !(sc->rollback = prep(c, "ROLLBACK")))
        goto fail;
    return 0;
fail:
    {
        char msg[sizeof(c->err.msg)];
        snprintf(msg, sizeof(msg), "%s", c->err.msg);
        snprintf(c->err.msg, sizeof(c->err.msg), "--sqlite-db=%s: %.400s", db_path, msg);
    }
    sqlite_disconnect(c);
    return -1;
}

static struct db_stmt *sqlite_prepare(struct db_conn *c, const char *sql)
{
    sqlite3_stmt *st = prep(c, sql);
    struct db_stmt *s;
    if (!st)
        return NULL;
    s = xmalloc(sizeof(*s));
    s->st = st;
    s->ncol = api.column_count(st);
    s->sql = xstrdup(sql);
    return s;
}

static void sqlite_stmt_close(struct db_conn *c, struct db_stmt *s)
{
    (void)c;
    if (s) {
        api.finalize(s->st);
        free(s->sql);
        free(s);
    }
}

static const char *sqlite_stmt_sql(const struct db_stmt *s)
{
    return s->sql;
}

/* The correctness gate's checksum of the row st is on (ncol columns). */
static __attribute__((noinline)) void checksum_row(struct db_conn *c, sqlite3_stmt *st, int ncol)
{
    assert(c->checksum);
    for (int i = 0; i < ncol; i++) {
        const unsigned char *v = api.column_text(st, i);
        db_checksum_value(c, v, v ? (size_t)api.column_bytes(st, i) : 0);
    }
    db_checksum_row_end(c);
}

/* st's step failed with rc: c->err filled, st reset. Returns the error class. */
static __attribute__((noinline)) enum db_status step_failed(struct db_conn *c, sqlite3_stmt *st,
                                                            int rc)
{
    enum db_status stt = set_error(c, rc);
    api.reset(st);
    return stt;
}

/* Step st to the end and classify it: a result set is a read; otherwise a change in
 * sqlite3_total_changes() (which BEGIN/COMMIT leave alone, unlike sqlite3_changes()) is a
 * write, else other. ncol: st's column count (-1: ask). Inlined into its callers: every
 * statement of a run goes through it. */
static inline __attribute__((always_inline)) enum db_status
run_stmt(struct db_conn *c, sqlite3_stmt *st, int ncol, enum db_qclass *cls)
{
    struct sqlite_conn *sc = c->priv;
    int before = 0;
    int rc;

    if (ncol < 0)
        ncol = api.column_count(st);
    if (ncol == 0)
        before = api.total_changes(sc->db);

    while ((rc = api.step(st)) == SQLITE_ROW)
        if (c->checksum)
            checksum_row(c, st, ncol);
    if (rc != SQLITE_DONE)
        return step_failed(c, st, rc);
    api.reset(st);
    if (ncol > 0)
        *cls = DB_READ;
    else
        *cls = api.total_changes(sc->db) != before ? DB_WRITE : DB_OTHER;
    return DB_OK;
}

/* Bind the np parameters p to st: SQLITE_OK or the first failure's code. */
static __attribute__((noinline)) int bind_params(sqlite3_stmt *st, const struct db_param *p, int np)
{
    for (int i = 0; i < np; i++) {
        int rc = p[i].type == DB_INT ? api.bind_int64(st, i + 1, p[i].i)
                                     : api.bind_text(st, i + 1, p[i].s, p[i].len, SQLITE_STATIC);
        if (rc != SQLITE_OK)
            return rc;
    }
    return SQLITE_OK;
}

static enum db_status sqlite_execute(struct db_conn *c, struct db_stmt *s, const struct db_param *p,
                                     int np, enum db_qclass *cls)
{
    /* one integer (a point select's id) is bound straight, without the loop */
    int rc =
        np == 1 && p->type == DB_INT ? api.bind_int64(s->st, 1, p->i) : bind_params(s->st, p, np);
    if (rc != SQLITE_OK)
        return set_error(c, rc);
    return run_stmt(c, s->st, s->ncol, cls);
}

static enum db_status sqlite_query(struct db_conn *c, const char *sql, enum db_qclass *cls)
{
    sqlite3_stmt *st = prep(c, sql);
    enum db_status rc;
    if (!st)
        return c->err.status;
    rc = run_stmt(c, st, -1, cls);
    api.finalize(st);
    return rc;
}

/* A transaction that will write takes the write lock at BEGIN (BEGIN IMMEDIATE), so concurrent
 * writers wait in the busy handler like row-lock waits on a server instead of failing on the
 * read-to-write upgrade (SQLITE_BUSY_SNAPSHOT). */
static enum db_status sqlite_begin(struct db_conn *c, bool will_write)
{
    struct sqlite_conn *sc = c->priv;
    enum db_qclass cls;
    enum db_status st;
    if (!will_write)
        return run_stmt(c, sc->begin, 0, &cls);
    write_turn_take(sc);
    st = run_stmt(c, sc->begin_immediate, 0, &cls);
    if (st != DB_OK)
        write_turn_give(sc);
    return st;
}

static enum db_status sqlite_commit(struct db_conn *c)
{
    struct sqlite_conn *sc = c->priv;
    enum db_qclass cls;
    enum db_status st = run_stmt(c, sc->commit, 0, &cls);
    if (st == DB_OK || api.get_autocommit(sc->db))
        write_turn_give(sc);
    return st;
}

static void sqlite_rollback(struct db_conn *c)
{
    struct sqlite_conn *sc = c->priv;
    enum db_qclass cls;
    if (!api.get_autocommit(sc->db))
        run_stmt(c, sc->rollback, 0, &cls);
    write_turn_give(sc);
}

const struct db_driver sqlite_driver = {
    .name = "sqlite",
    .descr = "SQLite (embedded; library loaded at run time)",
    .options = sqlite_options,
    /* INTEGER + PRIMARY KEY(id) is a rowid alias: an insert without id gets max(id)+1. */
    .id_auto_inc = "INTEGER NOT NULL",
    .id_plain = "INTEGER NOT NULL",
    .table_suffix = "",
    .in_process = true,
    .init = sqlite_init,
    .done = sqlite_done,
    .libinfo = sqlite_libinfo,
    .connect = sqlite_connect,
    .disconnect = sqlite_disconnect,
    .prepare = sqlite_prepare,
    .stmt_close = sqlite_stmt_close,
    .stmt_sql = sqlite_stmt_sql,
    .execute = sqlite_execute,
    .query = sqlite_query,
    .begin = sqlite_begin,
    .commit = sqlite_commit,
    .rollback = sqlite_rollback,
};
