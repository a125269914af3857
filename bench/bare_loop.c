/* bare_loop: the baseline of bench/sqlite-overhead. A minimal C loop (one thread, or N threads
 * with --threads=N) with no pgolab code that runs the statements of pgolab's oltp_point_select and oltp_read_only
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
 * --threads=N: N threads, each with its own connection (opened as above), its own prepared
 * statements, generator and event count, on a cache line of its own; the only shared state is
 * the stop flag (read per event, written once by the SIGALRM handler). With N = 1 the loop runs
 * on the main thread, as before. --events=N is per thread.
 *
 * Usage: bare_loop [--workload=oltp_point_select|oltp_read_only] [--time=S] [--events=N]
 *                  [--threads=N] [--table-size=N] [--range-size=N] [--sqlite-db=PATH] [--seed=N]
 *                  [--sqlite-library=PATH | PATH] [--dlmopen] [--extra-thread[=MS]] [--spin=N]
 * The library defaults to libsqlite3.so.0 and the database to sbtest.db, as in pgolab.
 * The last two only serve to attribute a gap between pgolab and this loop: --dlmopen loads the
 * library into a new link-map namespace as pgolab's driver does; --extra-thread starts a second
 * thread (blocked forever, or waking every MS ms like pgolab's reporter) so that the process is
 * multi-threaded, as pgolab's is while it runs. --spin=N adds N steps of a dependent
 * multiply chain (about 3 instructions each) after every event, outside any transaction,
 * standing in for a harness's per-event work: what that work costs by itself.
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

static volatile sig_atomic_t stop;

/* One loop's state: connection, statements, generator, count; aligned so that no two threads
 * share a cache line. */
struct loop {
    sqlite3 *db;
    sqlite3_stmt *begin, *commit, *point, *ranges[4];
    uint64_t rng;
    unsigned long long events;
    pthread_t tid;
} __attribute__((aligned(128)));

/* the settings every loop reads */
static int read_only;
static uint32_t table_size = 10000, range_size = 100;
static unsigned long long max_events;
static unsigned spin;
static const char *path = "sbtest.db";

static void on_alarm(int sig)
{
    (void)sig;
    stop = 1;
}

static void die(sqlite3 *db, const char *what)
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

static sqlite3_stmt *prepare(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st = NULL;
    if (api.prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        die(db, sql);
    return st;
}

/* Step through all rows (columns are not read, as in pgolab's run loop), then reset. */
static inline void run(struct loop *l, sqlite3_stmt *st)
{
    int rc;
    while ((rc = api.step(st)) == SQLITE_ROW)
        ;
    if (rc != SQLITE_DONE)
        die(l->db, "sqlite3_step");
    api.reset(st);
}

/* xorshift64 (Marsaglia 2003); uniform 1..n by a 32x32->64 multiply of the high word. */
static inline uint32_t pick_id(struct loop *l, uint32_t n)
{
    l->rng ^= l->rng << 13;
    l->rng ^= l->rng >> 7;
    l->rng ^= l->rng << 17;
    return (uint32_t)(((l->rng >> 32) * (uint64_t)n) >> 32) + 1;
}

/* Open l's connection and prepare its statements. */
static void loop_open(struct loop *l)
{
    if (api.open_v2(path, &l->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK)
        die(l->db, path);
    api.busy_timeout(l->db, 10000);
    if (api.exec(l->db, "PRAGMA journal_mode=wal", NULL, NULL, NULL) != SQLITE_OK ||
        api.exec(l->db, "PRAGMA synchronous=normal", NULL, NULL, NULL) != SQLITE_OK)
        die(l->db, "PRAGMA");
    l->begin = prepare(l->db, "BEGIN");
    l->commit = prepare(l->db, "COMMIT");
    l->point = prepare(l->db, "SELECT c FROM sbtest1 WHERE id=?");
    l->ranges[0] = prepare(l->db, "SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ?");
    l->ranges[1] = prepare(l->db, "SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN ? AND ?");
    l->ranges[2] = prepare(l->db, "SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ? ORDER BY c");
    l->ranges[3] = prepare(l->db, "SELECT DISTINCT c FROM sbtest1 WHERE id BETWEEN ? AND ? ORDER BY c");
}

static void loop_close(struct loop *l)
{
    api.finalize(l->begin);
    api.finalize(l->commit);
    api.finalize(l->point);
    for (int k = 0; k < 4; k++)
        api.finalize(l->ranges[k]);
    api.close_v2(l->db);
}

/* --spin: n steps of a multiply chain the compiler cannot drop. */
static inline void spin_work(unsigned n)
{
    uint64_t x = n;
    for (unsigned i = 0; i < n; i++)
        x = x * 6364136223846793005ull + 1442695040888963407ull;
    __asm__ volatile("" : : "r"(x));
}

/* The measured loop: events until the stop flag (or --events). */
static void *loop_main(void *arg)
{
    struct loop *l = arg;
    unsigned long long events = 0;
    while (!stop) {
        if (read_only) {
            run(l, l->begin);
            for (int i = 0; i < 10; i++) {
                api.bind_int64(l->point, 1, pick_id(l, table_size));
                run(l, l->point);
            }
            for (int k = 0; k < 4; k++) {
                uint32_t id = pick_id(l, table_size);
                api.bind_int64(l->ranges[k], 1, id);
                api.bind_int64(l->ranges[k], 2, (sqlite3_int64)id + range_size - 1);
                run(l, l->ranges[k]);
            }
            run(l, l->commit);
        } else {
            api.bind_int64(l->point, 1, pick_id(l, table_size));
            run(l, l->point);
        }
        if (spin)
            spin_work(spin);
        if (++events == max_events)
            break;
    }
    l->events = events;
    return NULL;
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
    const char *lib = "libsqlite3.so.0", *workload = "oltp_point_select", *v;
    double time_s = 10;
    unsigned long long seed = 0;
    int use_dlmopen = 0, nthreads = 1;
    long extra_ms = -1;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (flag_val(a, "--workload", &v))
            workload = v;
        else if (flag_val(a, "--time", &v))
            time_s = atof(v);
        else if (flag_val(a, "--events", &v))
            max_events = strtoull(v, NULL, 10);
        else if (flag_val(a, "--spin", &v))
            spin = (unsigned)strtoul(v, NULL, 10);
        else if (flag_val(a, "--threads", &v))
            nthreads = atoi(v);
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
    read_only = !strcmp(workload, "oltp_read_only");
    if (!read_only && strcmp(workload, "oltp_point_select")) {
        fprintf(stderr, "bare_loop: --workload=%s: expected oltp_point_select or oltp_read_only\n",
                workload);
        return 2;
    }
    if (!table_size || !range_size || (time_s <= 0 && !max_events) || nthreads < 1 ||
        nthreads > 1024) {
        fprintf(stderr, "bare_loop: --table-size, --range-size and one of --time/--events must be "
                        "> 0, --threads in 1..1024\n");
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
    struct loop *loops = aligned_alloc(128, (size_t)nthreads * sizeof(*loops));
    if (!loops) {
        fprintf(stderr, "bare_loop: out of memory\n");
        return 1;
    }
    memset(loops, 0, (size_t)nthreads * sizeof(*loops));

    if (!seed) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        seed = (unsigned long long)ts.tv_sec * 1000000007ull ^ (unsigned long long)ts.tv_nsec;
    }
    for (int t = 0; t < nthreads; t++) {
        loop_open(&loops[t]);
        uint64_t r = seed + 0x9E3779B97F4A7C15ull * (uint64_t)t;
        loops[t].rng = r ? r : 0x2545F4914F6CDD1Dull;
    }

    /* SIGALRM to the main thread only: the workers block it before they start */
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_alarm;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
    sigset_t alarm_set, old_set;
    sigemptyset(&alarm_set);
    sigaddset(&alarm_set, SIGALRM);

    double t0 = now_s();
    if (nthreads > 1) {
        pthread_sigmask(SIG_BLOCK, &alarm_set, &old_set);
        for (int t = 0; t < nthreads; t++)
            if (pthread_create(&loops[t].tid, NULL, loop_main, &loops[t]) != 0) {
                fprintf(stderr, "bare_loop: cannot create thread #%d\n", t);
                return 1;
            }
        pthread_sigmask(SIG_SETMASK, &old_set, NULL);
    }
    if (time_s > 0) {
        struct itimerval it;
        memset(&it, 0, sizeof(it));
        it.it_value.tv_sec = (time_t)time_s;
        it.it_value.tv_usec = (suseconds_t)((time_s - (double)(time_t)time_s) * 1e6);
        setitimer(ITIMER_REAL, &it, NULL);
    }
    unsigned long long events = 0;
    if (nthreads == 1) {
        loop_main(&loops[0]);
    } else {
        for (int t = 0; t < nthreads; t++)
            pthread_join(loops[t].tid, NULL);
    }
    double dt = now_s() - t0;
    for (int t = 0; t < nthreads; t++)
        events += loops[t].events;

    unsigned long long queries = events * (read_only ? 16 : 1);
    printf("bare_loop %s, %d thread%s, SQLite %s, %s\n", workload, nthreads,
           nthreads > 1 ? "s" : "", api.libversion(), lib);
    printf("    transactions:                        %llu (%.2f per sec.)\n", events,
           (double)events / dt);
    printf("    queries:                             %llu (%.2f per sec.)\n", queries,
           (double)queries / dt);
    printf("    total time:                          %.4fs\n", dt);

    for (int t = 0; t < nthreads; t++)
        loop_close(&loops[t]);
    free(loops);
    return 0;
}
