/* bare_loop: the baseline of bench/sqlite-overhead. A minimal single-threaded C loop with no
 * pgolab code that runs the statements of pgolab's oltp_point_select and oltp_read_only
 * workloads straight against a libsqlite3 loaded with dlopen(), so that pgolab's harness cost
 * (driver layer, counters, runner, RNG, latency histogram, reporter thread) can be measured as
 * the ratio pgolab tps / bare tps on the same library and the same database file.
 *
 * It mirrors what pgolab's SQLite driver does per statement and nothing more: the statements are
 * prepared once, each execution binds int64 parameters, steps through every row without reading
 * columns, and resets; BEGIN and COMMIT are cached prepared statements; the connection is opened
 * with SQLITE_OPEN_NOMUTEX, busy timeout 10000 ms, journal_mode=wal, synchronous=normal.
 * Ids are uniform in 1..table_size from a xorshift64 generator; the run stops on a SIGALRM
 * (no clock reads inside the loop).
 *
 * Usage: bare_loop [--workload=oltp_point_select|oltp_read_only] [--time=S] [--events=N]
 *                  [--table-size=N] [--range-size=N] [--sqlite-db=PATH] [--seed=N]
 *                  [--sqlite-library=PATH | PATH] [--dlmopen] [--extra-thread[=MS]]
 * The library defaults to libsqlite3.so.0 and the database to sbtest.db, as in pgolab.
 * The last two only serve to attribute a gap between pgolab and this loop: --dlmopen loads the
 * library into a new link-map namespace as pgolab's driver does; --extra-thread starts a second
 * thread (blocked forever, or waking every MS ms like pgolab's reporter) so that the process is
 * multi-threaded, as pgolab's is while it runs.
 * Output: "transactions: N (X per sec.)" and "queries: N (X per sec.)", the lines pgolab's
 * text report uses, so the same parser reads both. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

static struct {
    int (*open_v2)(const char *, sqlite3 **, int, const char *);
    int (*close_v2)(sqlite3 *);
    int (*prepare_v2)(sqlite3 *, const char *, int, sqlite3_stmt **, const char **);
    int (*step)(sqlite3_stmt *);
    int (*reset)(sqlite3_stmt *);
    int (*finalize)(sqlite3_stmt *);
    int (*bind_int64)(sqlite3_stmt *, int, sqlite3_int64);
    int (*exec)(sqlite3 *, const char *, int (*)(void *, int, char **, char **), void *, char **);
    int (*busy_timeout)(sqlite3 *, int);
    const char *(*errmsg)(sqlite3 *);
    const char *(*libversion)(void);
} api;

static sqlite3 *db;
static volatile sig_atomic_t stop;

static void on_alarm(int sig)
{
    (void)sig;
    stop = 1;
}

static void die(const char *what)
{
    fprintf(stderr, "bare_loop: %s: %s\n", what, db ? api.errmsg(db) : "(no connection)");
    exit(1);
}

static void load(const char *lib, int use_dlmopen)
{
    void *h = use_dlmopen ? dlmopen(LM_ID_NEWLM, lib, RTLD_NOW | RTLD_LOCAL)
                          : dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "bare_loop: cannot load %s: %s\n", lib, dlerror());
        exit(1);
    }
#define SYM(field, name)                                                         \
    do {                                                                         \
        *(void **)&api.field = dlsym(h, name);                                   \
        if (!api.field) {                                                        \
            fprintf(stderr, "bare_loop: %s: no symbol %s\n", lib, name);          \
            exit(1);                                                             \
        }                                                                        \
    } while (0)
    SYM(open_v2, "sqlite3_open_v2");
    SYM(close_v2, "sqlite3_close_v2");
    SYM(prepare_v2, "sqlite3_prepare_v2");
    SYM(step, "sqlite3_step");
    SYM(reset, "sqlite3_reset");
    SYM(finalize, "sqlite3_finalize");
    SYM(bind_int64, "sqlite3_bind_int64");
    SYM(exec, "sqlite3_exec");
    SYM(busy_timeout, "sqlite3_busy_timeout");
    SYM(errmsg, "sqlite3_errmsg");
    SYM(libversion, "sqlite3_libversion");
#undef SYM
}

static sqlite3_stmt *prepare(const char *sql)
{
    sqlite3_stmt *st = NULL;
    if (api.prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        die(sql);
    return st;
}

/* Step through all rows (columns are not read, as in pgolab's run loop), then reset. */
static inline void run(sqlite3_stmt *st)
{
    int rc;
    while ((rc = api.step(st)) == SQLITE_ROW)
        ;
    if (rc != SQLITE_DONE)
        die("sqlite3_step");
    api.reset(st);
}

static uint64_t rng;

/* xorshift64 (Marsaglia 2003); uniform 1..n by a 32x32->64 multiply of the high word. */
static inline uint32_t pick_id(uint32_t n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(((rng >> 32) * (uint64_t)n) >> 32) + 1;
}

/* --extra-thread: sleep forever (tick_ms == 0) or wake every tick_ms ms. */
static void *extra_thread(void *arg)
{
    long ms = (long)(intptr_t)arg;
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL); /* SIGALRM goes to the main thread */
    for (;;) {
        struct timespec ts = { ms ? ms / 1000 : 3600, ms ? (ms % 1000) * 1000000L : 0 };
        nanosleep(&ts, NULL);
    }
    return NULL;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int flag_val(const char *arg, const char *name, const char **val)
{
    size_t n = strlen(name);
    if (strncmp(arg, name, n) || arg[n] != '=')
        return 0;
    *val = arg + n + 1;
    return 1;
}

int main(int argc, char **argv)
{
    const char *lib = "libsqlite3.so.0", *path = "sbtest.db", *workload = "oltp_point_select", *v;
    double time_s = 10;
    unsigned long long max_events = 0, seed = 0;
    uint32_t table_size = 10000, range_size = 100;
    int use_dlmopen = 0;
    long extra_ms = -1;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (flag_val(a, "--workload", &v))
            workload = v;
        else if (flag_val(a, "--time", &v))
            time_s = atof(v);
        else if (flag_val(a, "--events", &v))
            max_events = strtoull(v, NULL, 10);
        else if (flag_val(a, "--table-size", &v))
            table_size = (uint32_t)strtoul(v, NULL, 10);
        else if (flag_val(a, "--range-size", &v))
            range_size = (uint32_t)strtoul(v, NULL, 10);
        else if (flag_val(a, "--sqlite-db", &v))
            path = v;
        else if (flag_val(a, "--sqlite-library", &v))
            lib = v;
        else if (flag_val(a, "--seed", &v))
            seed = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--dlmopen"))
            use_dlmopen = 1;
        else if (!strcmp(a, "--extra-thread"))
            extra_ms = 0;
        else if (flag_val(a, "--extra-thread", &v))
            extra_ms = atol(v);
        else if (a[0] != '-')
            lib = a;
        else {
            fprintf(stderr, "bare_loop: unknown option %s (see the comment at the top of "
                            "bench/bare_loop.c)\n", a);
            return 2;
        }
    }
    int read_only = !strcmp(workload, "oltp_read_only");
    if (!read_only && strcmp(workload, "oltp_point_select")) {
        fprintf(stderr, "bare_loop: --workload=%s: expected oltp_point_select or oltp_read_only\n",
                workload);
        return 2;
    }
    if (!table_size || !range_size || (time_s <= 0 && !max_events)) {
        fprintf(stderr, "bare_loop: --table-size, --range-size and one of --time/--events must be > 0\n");
        return 2;
    }

    if (extra_ms >= 0) {
        pthread_t tid;
        if (pthread_create(&tid, NULL, extra_thread, (void *)(intptr_t)extra_ms) != 0) {
            fprintf(stderr, "bare_loop: cannot create the extra thread\n");
            return 1;
        }
    }
    load(lib, use_dlmopen);
    if (api.open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK)
        die(path);
    api.busy_timeout(db, 10000);
    if (api.exec(db, "PRAGMA journal_mode=wal", NULL, NULL, NULL) != SQLITE_OK ||
        api.exec(db, "PRAGMA synchronous=normal", NULL, NULL, NULL) != SQLITE_OK)
        die("PRAGMA");

    sqlite3_stmt *begin = prepare("BEGIN"), *commit = prepare("COMMIT");
    sqlite3_stmt *point = prepare("SELECT c FROM sbtest1 WHERE id=?");
    sqlite3_stmt *ranges[4] = {
        prepare("SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ?"),
        prepare("SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN ? AND ?"),
        prepare("SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ? ORDER BY c"),
        prepare("SELECT DISTINCT c FROM sbtest1 WHERE id BETWEEN ? AND ? ORDER BY c"),
    };

    if (!seed) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        seed = (unsigned long long)ts.tv_sec * 1000000007ull ^ (unsigned long long)ts.tv_nsec;
    }
    rng = seed ? seed : 0x2545F4914F6CDD1Dull;

    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_alarm;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);

    unsigned long long events = 0;
    double t0 = now_s();
    if (time_s > 0) {
        struct itimerval it;
        memset(&it, 0, sizeof(it));
        it.it_value.tv_sec = (time_t)time_s;
        it.it_value.tv_usec = (suseconds_t)((time_s - (double)(time_t)time_s) * 1e6);
        setitimer(ITIMER_REAL, &it, NULL);
    }
    while (!stop) {
        if (read_only) {
            run(begin);
            for (int i = 0; i < 10; i++) {
                api.bind_int64(point, 1, pick_id(table_size));
                run(point);
            }
            for (int k = 0; k < 4; k++) {
                uint32_t id = pick_id(table_size);
                api.bind_int64(ranges[k], 1, id);
                api.bind_int64(ranges[k], 2, (sqlite3_int64)id + range_size - 1);
                run(ranges[k]);
            }
            run(commit);
        } else {
            api.bind_int64(point, 1, pick_id(table_size));
            run(point);
        }
        if (++events == max_events)
            break;
    }
    double dt = now_s() - t0;

    unsigned long long queries = events * (read_only ? 16 : 1);
    printf("bare_loop %s, SQLite %s, %s\n", workload, api.libversion(), lib);
    printf("    transactions:                        %llu (%.2f per sec.)\n", events,
           (double)events / dt);
    printf("    queries:                             %llu (%.2f per sec.)\n", queries,
           (double)queries / dt);
    printf("    total time:                          %.4fs\n", dt);

    api.finalize(begin);
    api.finalize(commit);
    api.finalize(point);
    for (int k = 0; k < 4; k++)
        api.finalize(ranges[k]);
    api.close_v2(db);
    return 0;
}
