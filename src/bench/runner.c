/* runner: worker threads, start gate, limits, intermediate reports, SIGINT (see runner.h).
 * Owned by src/bench. With one worker on an in-process engine (db_driver.in_process) the
 * worker runs on the caller's thread and does the reporter's work itself (see runner_run). */
#include "bench/runner.h"
#include "util/util.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct worker {
    pthread_t tid;
    int id;
    struct shared *sh;
    struct db_conn conn;
    struct oltp_thread ot;
    struct histogram hist;
    uint64_t events;      /* written by the worker, read by the reporter (relaxed atomics) */
    uint64_t exec_ns;
    uint64_t end_ns;      /* when this worker left its loop */
    bool connected;
};

struct shared {
    const struct runner_config *cfg;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int ready;            /* workers done with init */
    int go;               /* 1 = start, -1 = abort */
    int init_failed;
    uint64_t start_ns, deadline_ns;
    volatile int stop;    /* set by any thread or the SIGINT handler (atomic: stop_all, stopped) */
    int running;          /* workers still in their loop (atomic) */
    uint64_t issued;      /* events handed out under --events (atomic) */
    int fatal;            /* a worker hit a fatal error (atomic) */
    bool inline_worker;   /* the one worker runs on runner_run's thread, no reporter thread */
};

static volatile sig_atomic_t got_sigint;
static volatile int *sigint_stop; /* inline worker: the handler stops it (no reporter to) */

static void on_sigint(int sig)
{
    (void)sig;
    got_sigint = 1;
    if (sigint_stop)
        __atomic_store_n(sigint_stop, 1, __ATOMIC_RELAXED);
}

/* The stop flag is written by one thread and read by the others while they run: relaxed
 * atomics (a plain access is a data race; ThreadSanitizer, `make check-tsan`, reports it). */
static void stop_all(struct shared *sh)
{
    __atomic_store_n(&sh->stop, 1, __ATOMIC_RELAXED);
}

static bool stopped(struct shared *sh)
{
    return __atomic_load_n(&sh->stop, __ATOMIC_RELAXED) != 0;
}

/* Intermediate reports: at each multiple of the interval, the rates since the previous one
 * (a slot is skipped if late, as sysbench does). Emitted by the reporter thread, or by an
 * inline worker between two events. */
struct reporter {
    const struct runner_config *cfg;
    struct shared *sh;
    struct worker *ws;
    int n;
    uint64_t interval_ns, next;  /* next = 0: no intermediate reports */
    uint64_t prev_t, prev_events;
    struct db_counters prev;
    struct histogram prev_h, cur_h, diff_h;
};

static void reporter_init(struct reporter *r, struct shared *sh, struct worker *ws, int n);
static void reporter_emit(struct reporter *r);
static void reporter_release(struct reporter *r);

/* Open the start gate (all workers ready): start the clock, or abort if one failed. */
static void gate_open(struct shared *sh)
{
    const struct runner_config *cfg = sh->cfg;
    if (sh->init_failed) {
        sh->go = -1;
    } else {
        sh->start_ns = now_ns();
        if (cfg->time_s > 0)
            sh->deadline_ns = sh->start_ns + (uint64_t)(cfg->time_s * 1e9);
        sh->go = 1;
    }
}

/* A worker's fatal SQL error: "thread #N: SQL error CODE: MSG" (sysbench's errno wording);
 * PostgreSQL has no native code, its message starts with the severity and SQLSTATE. */
static void fatal_error(const struct worker *w)
{
    if (w->conn.err.code)
        error("thread #%d: SQL error %d: %s", w->id, w->conn.err.code, w->conn.err.msg);
    else
        error("thread #%d: SQL error: %s", w->id, w->conn.err.msg);
}

/* The throttle test knob (runner_config.throttle = F): after each counted event the worker
 * owes 1/F - 1 events more and runs every whole one it owes as an extra event, counted
 * nowhere (the connection's counters are put back, no latency, no event): the same statements
 * on the same data, so the variant really does 1/F times the work per counted transaction.
 * Its tps and qps are F times full speed in time, and its instructions per transaction 1/F
 * times as many under `--measure=instructions`, exactly repeatable (no clock decides how much
 * extra work runs). Returns 0, or -1 when the run must stop (fatal error, stopped). */
static int throttle_extra_events(struct worker *w, double *owed)
{
    struct shared *sh = w->sh;
    for (; *owed >= 1 && !stopped(sh); *owed -= 1) {
        struct db_counters keep = w->conn.cnt;
        enum db_status st = oltp_event(&w->ot, &sh->stop);
        __atomic_store_n(&w->conn.cnt.reads, keep.reads, __ATOMIC_RELAXED);
        __atomic_store_n(&w->conn.cnt.writes, keep.writes, __ATOMIC_RELAXED);
        __atomic_store_n(&w->conn.cnt.others, keep.others, __ATOMIC_RELAXED);
        __atomic_store_n(&w->conn.cnt.errors, keep.errors, __ATOMIC_RELAXED);
        __atomic_store_n(&w->conn.cnt.reconnects, keep.reconnects, __ATOMIC_RELAXED);
        if (st == DB_FATAL) {
            fatal_error(w);
            __atomic_store_n(&sh->fatal, 1, __ATOMIC_RELAXED);
            stop_all(sh);
            return -1;
        }
        if (st != DB_OK)
            return -1; /* stopped while retrying */
    }
    return 0;
}

/* A worker thread. Keep the name: `--measure=instructions` counts instructions only inside
 * it (callgrind --toggle-collect=worker_main, src/experiment/experiment.c). */
static void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct shared *sh = w->sh;
    const struct runner_config *cfg = sh->cfg;
    int ok;

    w->conn.drv = cfg->drv;
    ok = cfg->drv->connect(&w->conn) == 0;
    if (!ok)
        error("thread #%d: cannot connect: %s", w->id, w->conn.err.msg);
    w->connected = ok;
    if (ok && oltp_thread_init(&w->ot, &w->conn, cfg->o, cfg->wl,
                               cfg->seed + 0x9E3779B97F4A7C15ull * (uint64_t)(w->id + 1),
                               w->id) < 0) {
        error("thread #%d: cannot prepare statements: %s", w->id, w->conn.err.msg);
        ok = 0;
    }
    /* An inline worker is the only one, so it opens the gate and reports by itself. */
    struct reporter rep, *rp = NULL;
    if (sh->inline_worker) {
        sh->ready++;
        if (!ok)
            sh->init_failed = 1;
        gate_open(sh);
        if (sh->go > 0 && cfg->on_start)
            cfg->on_start(cfg->ud);
        if (sh->go > 0 && cfg->report_interval > 0) {
            reporter_init(&rep, sh, w, 1);
            rp = &rep;
        }
        /* a retried event has no reporter to stop it at --time (see report_loop) */
        w->ot.deadline_ns = sh->deadline_ns;
    } else {
        pthread_mutex_lock(&sh->mu);
        sh->ready++;
        if (!ok)
            sh->init_failed = 1;
        pthread_cond_broadcast(&sh->cv);
        while (!sh->go)
            pthread_cond_wait(&sh->cv, &sh->mu);
        pthread_mutex_unlock(&sh->mu);
    }
    if (sh->go < 0 || !ok)
        goto out;

    /* One clock read per event: an event starts when the previous one ended (the loop's
     * bookkeeping in between is a few ns). */
    uint64_t t0 = now_ns();
    double owed = 0, extra_per_event = cfg->throttle > 0 ? 1.0 / cfg->throttle - 1.0 : 0;
    while (!stopped(sh)) {
        if (cfg->events && __atomic_fetch_add(&sh->issued, 1, __ATOMIC_RELAXED) >= cfg->events)
            break;
        enum db_status st = oltp_event(&w->ot, &sh->stop);
        uint64_t t1 = now_ns();
        if (st == DB_FATAL) {
            fatal_error(w);
            __atomic_store_n(&sh->fatal, 1, __ATOMIC_RELAXED);
            stop_all(sh);
            break;
        }
        if (st != DB_OK)
            break; /* stopped while retrying */
        histogram_add(&w->hist, t1 - t0);
        __atomic_store_n(&w->exec_ns, w->exec_ns + (t1 - t0), __ATOMIC_RELAXED);
        __atomic_store_n(&w->events, w->events + 1, __ATOMIC_RELAXED);
        uint64_t resume = 0;  /* after an inline report: the next event starts when it ended */
        if (rp && rp->next && t1 >= rp->next) {
            reporter_emit(rp);
            resume = now_ns();
        }
        if (sh->deadline_ns && t1 >= sh->deadline_ns)
            break;
        if (extra_per_event > 0 && (owed += extra_per_event) >= 1) {
            if (throttle_extra_events(w, &owed) < 0)
                break;
            t1 = now_ns();  /* the next event starts after the extra work */
        }
        t0 = resume > t1 ? resume : t1;
    }
    /* The workload's last step (bulk_insert sends its buffered rows); part of the run. */
    if (!__atomic_load_n(&sh->fatal, __ATOMIC_RELAXED) && oltp_thread_finish(&w->ot) == DB_FATAL) {
        fatal_error(w);
        __atomic_store_n(&sh->fatal, 1, __ATOMIC_RELAXED);
    }
    if (w->ot.lost_events)  /* counted, then undone by a failed statement (bulk_insert) */
        __atomic_store_n(&w->events,
                         w->events - (w->ot.lost_events < w->events ? w->ot.lost_events : w->events),
                         __ATOMIC_RELAXED);
out:
    w->end_ns = now_ns();
    __atomic_fetch_sub(&sh->running, 1, __ATOMIC_RELAXED);
    if (rp)
        reporter_release(rp);
    return NULL;
}

/* Sum the workers' counters (relaxed loads: the workers keep running). */
static void snapshot(struct worker *ws, int n, struct db_counters *c, uint64_t *events,
                     struct histogram *h)
{
    memset(c, 0, sizeof(*c));
    *events = 0;
    histogram_reset(h);
    for (int i = 0; i < n; i++) {
        struct db_counters *wc = &ws[i].conn.cnt;
        c->reads += __atomic_load_n(&wc->reads, __ATOMIC_RELAXED);
        c->writes += __atomic_load_n(&wc->writes, __ATOMIC_RELAXED);
        c->others += __atomic_load_n(&wc->others, __ATOMIC_RELAXED);
        c->errors += __atomic_load_n(&wc->errors, __ATOMIC_RELAXED);
        c->reconnects += __atomic_load_n(&wc->reconnects, __ATOMIC_RELAXED);
        *events += __atomic_load_n(&ws[i].events, __ATOMIC_RELAXED);
        histogram_merge(h, &ws[i].hist);
    }
}

static void sleep_until(uint64_t t_ns)
{
    uint64_t now = now_ns();
    if (t_ns <= now)
        return;
    uint64_t d = t_ns - now;
    struct timespec ts = { (time_t)(d / 1000000000ull), (long)(d % 1000000000ull) };
    nanosleep(&ts, NULL);
}

static void reporter_init(struct reporter *r, struct shared *sh, struct worker *ws, int n)
{
    memset(r, 0, sizeof(*r));
    r->cfg = sh->cfg;
    r->sh = sh;
    r->ws = ws;
    r->n = n;
    r->interval_ns = (uint64_t)(r->cfg->report_interval * 1e9);
    r->next = r->interval_ns ? sh->start_ns + r->interval_ns : 0;
    r->prev_t = sh->start_ns;
    histogram_init(&r->prev_h);
    histogram_init(&r->cur_h);
    histogram_init(&r->diff_h);
}

/* The report of slot r->next (due: now >= r->next), then the next slot after now. */
static void reporter_emit(struct reporter *r)
{
    const struct runner_config *cfg = r->cfg;
    struct shared *sh = r->sh;
    struct db_counters cur;
    uint64_t events, t = now_ns();
    snapshot(r->ws, r->n, &cur, &events, &r->cur_h);
    histogram_diff(&r->diff_h, &r->cur_h, &r->prev_h);
    double dt = (double)(t - r->prev_t) / 1e9;
    struct interval_stats iv = {
        .time_s = (double)(r->next - sh->start_ns) / 1e9,
        .threads = __atomic_load_n(&sh->running, __ATOMIC_RELAXED),
        .tps = (double)(events - r->prev_events) / dt,
        .reads_per_s = (double)(cur.reads - r->prev.reads) / dt,
        .writes_per_s = (double)(cur.writes - r->prev.writes) / dt,
        .other_per_s = (double)(cur.others - r->prev.others) / dt,
        .lat_ms = histogram_percentile(&r->diff_h, cfg->percentile) / 1e6,
        .errors_per_s = (double)(cur.errors - r->prev.errors) / dt,
        .reconnects_per_s = (double)(cur.reconnects - r->prev.reconnects) / dt,
    };
    iv.qps = iv.reads_per_s + iv.writes_per_s + iv.other_per_s;
    if (cfg->on_interval)
        cfg->on_interval(&iv, cfg->ud);
    r->prev = cur;
    r->prev_events = events;
    r->prev_t = t;
    histogram_copy(&r->prev_h, &r->cur_h);
    while (r->next <= now_ns())
        r->next += r->interval_ns;
}

static void reporter_release(struct reporter *r)
{
    histogram_release(&r->prev_h);
    histogram_release(&r->cur_h);
    histogram_release(&r->diff_h);
}

/* Reporter thread: wake every 20 ms to notice SIGINT and finished workers; emit an
 * intermediate report at each multiple of the interval. */
static void report_loop(struct shared *sh, struct worker *ws, int n)
{
    struct reporter r;

    reporter_init(&r, sh, ws, n);
    while (__atomic_load_n(&sh->running, __ATOMIC_RELAXED) > 0) {
        uint64_t wake = now_ns() + 20000000ull;
        if (r.next && r.next < wake)
            wake = r.next;
        sleep_until(wake);
        /* workers check the deadline after each finished event; this ends an event that keeps
         * being retried (an ignorable error that repeats) at --time as well */
        if (got_sigint || (sh->deadline_ns && now_ns() >= sh->deadline_ns))
            stop_all(sh);
        if (!r.next || now_ns() < r.next)
            continue;
        reporter_emit(&r);
    }
    reporter_release(&r);
}

int runner_run(const struct runner_config *cfg, struct run_stats *st)
{
    int n = cfg->threads;
    struct shared sh = { .cfg = cfg };
    struct worker *ws = xcalloc((size_t)n, sizeof(*ws));
    struct sigaction sa = { 0 }, old_sa;
    int rc = 0, started = 0;

    memset(st, 0, sizeof(*st));
    pthread_mutex_init(&sh.mu, NULL);
    pthread_cond_init(&sh.cv, NULL);
    sh.running = n;
    /* One worker on an in-process engine runs on this thread, and the process stays
     * single-threaded: glibc then takes an uncontended mutex with a plain store instead of a
     * locked instruction, and SQLite takes ~9 per statement, even with SQLITE_OPEN_NOMUTEX
     * (BENCHMARKS.md, sqlite-overhead: a second thread alone cost point selects ~7%). The
     * worker then also does what the reporter thread would: the intermediate reports between
     * two events, --time for a retried event; SIGINT stops it from the handler. A server
     * driver keeps the reporter thread: its worker may sit in recv() for long, where a report
     * would be late and a signal would interrupt the read. */
    sh.inline_worker = n == 1 && cfg->drv->in_process;
    got_sigint = 0;
    sigint_stop = sh.inline_worker ? &sh.stop : NULL;
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_sa);

    if (sh.inline_worker) {
        ws[0].sh = &sh;
        histogram_init(&ws[0].hist);
        worker_main(&ws[0]);
        started = 1;
    }
    for (int i = 0; i < n && !sh.inline_worker; i++) {
        ws[i].id = i;
        ws[i].sh = &sh;
        histogram_init(&ws[i].hist);
        if (pthread_create(&ws[i].tid, NULL, worker_main, &ws[i]) != 0) {
            error("cannot create worker thread #%d: %s", i, strerror(errno));
            sh.init_failed = 1;
            sh.running -= n - i;
            break;
        }
        started++;
    }
    if (!sh.inline_worker) {
        pthread_mutex_lock(&sh.mu);
        while (sh.ready < started)
            pthread_cond_wait(&sh.cv, &sh.mu);
        gate_open(&sh);
        pthread_cond_broadcast(&sh.cv);
        pthread_mutex_unlock(&sh.mu);

        if (sh.go > 0) {
            if (cfg->on_start)
                cfg->on_start(cfg->ud);
            report_loop(&sh, ws, started);
        }
    }
    /* The run ends when the last worker leaves its loop (not when the reporter, which polls
     * every 20 ms, notices). */
    uint64_t end_ns = 0;
    for (int i = 0; i < started; i++) {
        if (!sh.inline_worker)
            pthread_join(ws[i].tid, NULL);
        if (ws[i].end_ns > end_ns)
            end_ns = ws[i].end_ns;
    }
    sigaction(SIGINT, &old_sa, NULL);
    sigint_stop = NULL;

    if (sh.go < 0) {
        rc = -1;
    } else {
        st->total_time_s = (double)(end_ns - sh.start_ns) / 1e9;
        st->nthreads = n;
        st->thread_events = xcalloc((size_t)n, sizeof(uint64_t));
        st->thread_time_s = xcalloc((size_t)n, sizeof(double));
        histogram_init(&st->hist);
        snapshot(ws, n, &st->cnt, &st->events, &st->hist);
        for (int i = 0; i < n; i++) {
            st->thread_events[i] = ws[i].events;
            st->thread_time_s[i] = (double)ws[i].exec_ns / 1e9;
        }
        st->interrupted = got_sigint;
        st->failed = sh.fatal;
        rc = sh.fatal ? -1 : got_sigint ? 1 : 0;
    }
    for (int i = 0; i < n; i++) {
        if (ws[i].ot.stmts)
            oltp_thread_done(&ws[i].ot);
        if (ws[i].connected)
            cfg->drv->disconnect(&ws[i].conn);
        histogram_release(&ws[i].hist);
    }
    free(ws);
    pthread_mutex_destroy(&sh.mu);
    pthread_cond_destroy(&sh.cv);
    return rc;
}

void run_stats_release(struct run_stats *st)
{
    if (st->thread_events)
        histogram_release(&st->hist);
    free(st->thread_events);
    free(st->thread_time_s);
    memset(st, 0, sizeof(*st));
}
