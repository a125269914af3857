/* driver: driver registry and the counting wrappers workloads call (see driver.h). */
#include "db/driver.h"
#include "db/stmt_text.h"
#include "db/mysql.h"
#include "db/pgsql.h"
#include "db/sqlite.h"
#include "util/strbuf.h"

#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct db_driver *const drivers[] = {
    &sqlite_driver,
    &mysql_driver,
    &pgsql_driver,
};

const struct opt_def db_common_options[] = {
    { "db-ps-mode", OPT_STRING, "auto", "prepared statements usage mode {auto, disable}" },
    { "db-debug", OPT_BOOL, "off", "print database-specific debug information" },
    OPT_END
};

const struct db_driver *db_driver_find(const char *name)
{
    for (size_t i = 0; i < sizeof(drivers) / sizeof(drivers[0]); i++)
        if (!strcmp(drivers[i]->name, name))
            return drivers[i];
    return NULL;
}

const char *db_driver_names(void)
{
    static char names[128];
    if (!names[0])
        for (size_t i = 0, off = 0; i < sizeof(drivers) / sizeof(drivers[0]); i++)
            off += (size_t)snprintf(names + off, sizeof(names) - off, "%s%s", i ? ", " : "",
                                    drivers[i]->name);
    return names;
}

const struct opt_def *const *db_driver_option_tables(int *count)
{
    static const struct opt_def *tables[sizeof(drivers) / sizeof(drivers[0]) + 1];
    size_t n = 0;
    for (size_t i = 0; i < sizeof(drivers) / sizeof(drivers[0]); i++)
        if (drivers[i]->options)
            tables[n++] = drivers[i]->options;
    tables[n] = NULL;
    *count = (int)n;
    return tables;
}

bool db_option_of_other_driver(const struct opt_def *d, const struct db_driver *in_use)
{
    for (size_t i = 0; i < sizeof(drivers) / sizeof(drivers[0]); i++) {
        if (drivers[i] == in_use || !drivers[i]->options)
            continue;
        for (const struct opt_def *o = drivers[i]->options; o->name; o++)
            if (o == d)
                return true;
    }
    return false;
}

static uint64_t fnv1a(uint64_t h, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 1099511628211ull;
    }
    return h;
}

void db_checksum_value(struct db_conn *c, const void *v, size_t n)
{
    c->sum = v ? fnv1a(c->sum, v, n) : fnv1a(c->sum, "\1NULL", 5);
    c->sum = fnv1a(c->sum, "", 1);
}

void db_checksum_row_end(struct db_conn *c)
{
    c->sum = fnv1a(c->sum, "\n", 1);
    c->rows++;
}

static long fault_every = -1;  /* -1 = not read yet, 0 = off */
static __thread unsigned long fault_calls;

/* inject_fault past its fast check: the knob read, or on */
static __attribute__((noinline)) bool inject_fault_slow(struct db_conn *c, long every)
{
    if (every < 0) {
        const char *e = getenv("PGOLAB_FAULT_RETRY_EVERY");
        long v = e ? strtol(e, NULL, 10) : 0;
        every = v > 0 ? v : 0;
        __atomic_store_n(&fault_every, every, __ATOMIC_RELAXED);
    }
    if (every == 0 || !c->fault_armed || ++fault_calls % (unsigned long)every)
        return false;
    c->fault_armed = false;
    c->err.status = DB_RETRY;
    c->err.code = -1;
    snprintf(c->err.msg, sizeof(c->err.msg), "injected retryable fault (PGOLAB_FAULT_RETRY_EVERY)");
    return true;
}

/* PGOLAB_FAULT_RETRY_EVERY's fault: true (c->err filled) on every Nth armed call of this
 * thread. Inline and one load when the knob is off: it runs on every statement. */
static inline bool inject_fault(struct db_conn *c)
{
    /* every worker thread reads it (atomically: make check-tsan); the first ones set it */
    long every = __atomic_load_n(&fault_every, __ATOMIC_RELAXED);
    return every != 0 && inject_fault_slow(c, every);
}

/* PGOLAB_FAULT_AT (see driver.h): the walk's knob. at = 0 off; kind as enum db_status. */
static struct {
    int read;             /* 0 not yet, 1 read */
    unsigned long at;     /* the call that fails (1-based); 0: off or count only */
    bool count_only;
    enum db_status kind;
} walk;
static unsigned long walk_calls;  /* every wrapper call of the process (atomic) */

static void walk_report(void)
{
    fprintf(stderr, "pgolab: %lu driver calls (PGOLAB_FAULT_AT=count)\n",
            __atomic_load_n(&walk_calls, __ATOMIC_RELAXED));
}

static void walk_read(void)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&lock);
    if (!walk.read) {
        const char *e = getenv("PGOLAB_FAULT_AT");
        if (e && *e) {
            char *end;
            unsigned long n = strtoul(e, &end, 10);
            if (!strcmp(e, "count")) {
                walk.count_only = true;
                atexit(walk_report);
            } else if (end != e && n > 0 && *end == ':' &&
                       (!strcmp(end + 1, "retry") || !strcmp(end + 1, "reconnect") ||
                        !strcmp(end + 1, "fatal"))) {
                walk.at = n;
                walk.kind = !strcmp(end + 1, "retry") ? DB_RETRY
                          : !strcmp(end + 1, "reconnect") ? DB_RECONNECT : DB_FATAL;
            } else {
                fprintf(stderr, "FATAL: PGOLAB_FAULT_AT=%s: expected N:retry, N:reconnect, "
                        "N:fatal (N >= 1) or count\n", e);
                exit(1);
            }
        }
        __atomic_store_n(&walk.read, 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&lock);
}

/* walk_fault past its fast check: the knob read, or on */
static __attribute__((noinline)) bool walk_fault_slow(struct db_conn *c)
{
    if (!__atomic_load_n(&walk.read, __ATOMIC_ACQUIRE))
        walk_read();
    if (!walk.at && !walk.count_only)
        return false;
    unsigned long n = __atomic_add_fetch(&walk_calls, 1, __ATOMIC_RELAXED);
    if (n != walk.at)
        return false;
    c->err.status = walk.kind;
    c->err.code = 0;
    c->err.state[0] = 0;
    snprintf(c->err.msg, sizeof(c->err.msg), "injected %s fault at driver call %lu "
                                             "(PGOLAB_FAULT_AT)",
             walk.kind == DB_RETRY ? "retryable" : walk.kind == DB_RECONNECT ? "lost connection" :
                 "fatal",
             n);
    return true;
}

/* The walk's fault: true (c->err filled) when this call is the process's Nth wrapper call.
 * Inline and two loads when the knob is off: it runs on every statement. */
static inline bool walk_fault(struct db_conn *c)
{
    if (__atomic_load_n(&walk.read, __ATOMIC_ACQUIRE) && !walk.at && !walk.count_only)
        return false;
    return walk_fault_slow(c);
}

static void count(struct db_conn *c, enum db_status st, enum db_qclass cls)
{
    uint64_t *slot;
    if (st == DB_FATAL)
        return; /* stops the run: not an ignored error */
    if (st == DB_OK)
        slot = cls == DB_READ ? &c->cnt.reads : cls == DB_WRITE ? &c->cnt.writes : &c->cnt.others;
    else if (st == DB_RECONNECT)
        slot = &c->cnt.reconnects;
    else
        slot = &c->cnt.errors;
    __atomic_store_n(slot, *slot + 1, __ATOMIC_RELAXED);
}

int db_faults_off;

enum db_status db_execute_failed(struct db_conn *c, struct db_stmt *s, const struct db_param *p,
                                 int np, enum db_status st)
{
    assert(st != DB_OK);
    count(c, st, DB_OTHER);
    if (st == DB_FATAL) {
        assert(c->drv->stmt_sql);  /* every driver has it (driver.h) */
        db_error_set_stmt(&c->err, c->drv->stmt_sql(s), p, np);
    }
    return st;
}

enum db_status db_execute_slow(struct db_conn *c, struct db_stmt *s, const struct db_param *p,
                               int np)
{
    enum db_qclass cls = DB_OTHER;
    enum db_status st = walk_fault(c)    ? c->err.status
                      : inject_fault(c) ? DB_RETRY
                                        : c->drv->execute(c, s, p, np, &cls);
    /* both knobs read now (walk_fault and inject_fault read them on their first call) */
    if (__atomic_load_n(&walk.read, __ATOMIC_ACQUIRE) && !walk.at && !walk.count_only &&
        __atomic_load_n(&fault_every, __ATOMIC_RELAXED) == 0)
        __atomic_store_n(&db_faults_off, 1, __ATOMIC_RELAXED);
    if (st != DB_OK)
        return db_execute_failed(c, s, p, np, st);
    count(c, st, cls);
    return st;
}

enum db_status db_query(struct db_conn *c, const char *sql)
{
    enum db_qclass cls = DB_OTHER;
    enum db_status st = walk_fault(c) ? c->err.status : c->drv->query(c, sql, &cls);
    count(c, st, cls);
    if (st == DB_FATAL)
        db_error_set_stmt(&c->err, sql, NULL, 0);
    return st;
}

enum db_status db_begin(struct db_conn *c, bool will_write)
{
    enum db_status st = walk_fault(c) ? c->err.status : c->drv->begin(c, will_write);
    count(c, st, DB_OTHER);
    if (st == DB_FATAL)
        db_error_set_stmt(&c->err, "BEGIN", NULL, 0);
    return st;
}

enum db_status db_commit(struct db_conn *c)
{
    enum db_status st = walk_fault(c) ? c->err.status : c->drv->commit(c);
    count(c, st, DB_OTHER);
    if (st == DB_FATAL)
        db_error_set_stmt(&c->err, "COMMIT", NULL, 0);
    return st;
}
