/* runner: worker threads, start gate, limits, intermediate reports, --rate, --warmup-time,
 * --forced-shutdown, SIGINT (see runner.h). Owned by src/bench. With one worker on an
 * in-process engine (db_driver.in_process) and no --rate the worker runs on the caller's
 * thread and does the reporter's work itself (see runner_run). Just over 1,000 lines: the
 * workers, the reporter and the limits share the run's state and its atomics; the reporter is
 * the part to move out next. */
#include "bench/runner.h"
#include "bench/arrivals.h"
#include "util/util.h"

#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* One worker's state. The worker writes it per event (query counter, histogram, in_event) while
 * the others run, so every worker has cache lines of its own (the array is allocated aligned,
 * and the alignment pads the size): no line holds two workers' fields, and the others' loads
 * never wait for this one's stores. The reporter reads it only at interval boundaries and at
 * the end (snapshot). */
struct worker {
    _Alignas(CACHE_LINE_PAIR) pthread_t tid;
    int id;
    struct shared *sh;
    struct db_conn conn;
    struct oltp_thread ot;
    /* The counted events' latencies. Its total is also the event count and its sum the time
     * in events (thread_events, thread_time_s): the worker writes nothing else per event. */
    struct histogram hist;
    uint64_t lost;        /* counted events undone at the end (oltp_thread.lost_events; atomic) */
    uint64_t end_ns;      /* when this worker left its loop */
    int in_event;         /* inside an event (atomic): --rate's concurrency, forced shutdown */
    int measuring;        /* past --warmup-time (atomic, release): its counters count */
    bool connected;
    struct db_identity ident;  /* runner_config.server_identity: set after connect */
    uint64_t *lat;        /* runner_config.keep_latencies: counted latencies (single writer) */
    size_t nlat, caplat;
};

/* What the workers share. Per event they only read it (stop, arr, the clock's marks), except
 * issued under --events, on a line of its own that a worker writes once per claimed batch of
 * events (claim_events); the rest is written at the start, on a failure and at the end. */
struct shared {
    const struct runner_config *cfg;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int ready;            /* workers done with init (under mu) */
    int started_ok;       /* of which connected and prepared (under mu) */
    int go;               /* 1 = start, -1 = abort */
    int init_failed;
    uint64_t start_ns;    /* the clock starts (gate open) */
    uint64_t measure_ns;  /* start_ns + --warmup-time: events that start before are uncounted */
    uint64_t deadline_ns; /* measure_ns + --time, 0 = none */
    struct arrivals *arr; /* --rate: the arrival queue (&arr_buf), else NULL */
    struct arrivals arr_buf;
    /* One failure, one line: the first worker error (under mu), and how many workers hit the
     * same one (same code and message, or both the server's connection limit: PostgreSQL
     * says "too many clients already" or "connection slots are reserved" for one cause,
     * depending on which slot a backend raced for); a different error is printed at once. */
    struct db_error first_err;
    const char *first_what;
    int first_thread, same_errs;
    volatile int stop;
    int running;          /* workers still in their loop (atomic) */
    /* The reporter thread sleeps on it until its next due time (report, --time, forced
     * shutdown); posted by the last worker to leave its loop and by the SIGINT handler, so
     * it wakes for nothing else (report_loop). */
    sem_t wake;
    int fatal;            /* a worker hit a fatal error (atomic) */
    int queue_full;       /* --rate's queue overflowed (reporter thread) */
    bool inline_worker;   /* the one worker runs on runner_run's thread, no reporter thread */
    /* events handed out under --events (atomic), in batches (claim_events) */
    _Alignas(CACHE_LINE_PAIR) uint64_t issued;
};

static volatile sig_atomic_t got_sigint;
static volatile int *sigint_stop; /* inline worker: the handler stops it (no reporter to) */
static sem_t *sigint_wake;        /* reporter thread: the handler wakes it (sem_post is
                                   * async-signal-safe) */

static void on_sigint(int sig)
{
    (void)sig;
    got_sigint = 1;
    if (sigint_stop)
        *sigint_stop = 1;
    if (sigint_wake)
        sem_post(sigint_wake);
}

/* Intermediate reports: at each multiple of the interval (counted from the end of the
 * warmup), the rates since the previous one. Emitted by the reporter thread, or by an inline
 * worker between two events. */
struct reporter {
    const struct runner_config *cfg;
    struct shared *sh;
    struct worker *ws;
    int n;
    uint64_t interval_ns, next;  /* next = UINT64_MAX: no intermediate reports */
    uint64_t prev_t, prev_events;
    struct db_counters prev;
    struct histogram prev_h, cur_h, diff_h;
};

static void reporter_init(struct reporter *r, struct shared *sh, struct worker *ws, int n);
static void reporter_emit(struct reporter *r, uint64_t now);
static void reporter_finish(struct reporter *r, uint64_t end_ns);
static void reporter_release(struct reporter *r);

/* Open the start gate (all workers ready): start the clock, or abort if one failed. */
static void gate_open(struct shared *sh)
{
    const struct runner_config *cfg = sh->cfg;
    if (sh->init_failed) {
        sh->go = -1;
        return;
    }
    sh->start_ns = now_ns();
    sh->measure_ns = sh->start_ns + (uint64_t)(cfg->warmup_s * 1e9);
    if (cfg->time_s > 0)
        sh->deadline_ns = sh->measure_ns + (uint64_t)(cfg->time_s * 1e9);
    if (cfg->rate > 0) {
        if (arrivals_start(&sh->arr_buf, cfg->rate, ARRIVALS_QUEUE_SLOTS,
                           cfg->seed ^ 0xA5A5A5A55A5A5A5Aull, sh->start_ns, sh->deadline_ns) < 0) {
            error("cannot create the --rate event generator thread: %s", strerror(errno));
            sh->go = -1;
            return;
        }
        sh->arr = &sh->arr_buf;
    }
    sh->go = 1;
}

static void print_failure(const char *what, int thread, const struct db_error *e, int same,
                          int nthreads, const char *extra);
static bool conn_limit_error(const struct db_error *e);

/* A worker's error (what: "cannot connect", "SQL error", ...): the first is kept for one line
 * printed by runner_run (print_failure), the same error in other workers only counted; a
 * different one is printed at once. */
static void note_failure(struct worker *w, const char *what)
{
    struct shared *sh = w->sh;
    const struct db_error *e = &w->conn.err;
    bool print_now = false;
    pthread_mutex_lock(&sh->mu);
    if (!sh->first_what) {
        sh->first_what = what;
        sh->first_err = *e;
        sh->first_thread = w->id;
        sh->same_errs = 1;
    } else if ((e->code == sh->first_err.code && !strcmp(e->msg, sh->first_err.msg)) ||
               (conn_limit_error(e) && conn_limit_error(&sh->first_err))) {
        sh->same_errs++;
    } else {
        print_now = true;
    }
    pthread_mutex_unlock(&sh->mu);
    if (print_now)
        print_failure(what, w->id, e, 1, sh->cfg->threads, "");
}

/* A worker's fatal error: noted, and the run stops. */
static void fatal_error(struct worker *w)
{
    note_failure(w, "SQL error");
    __atomic_store_n(&w->sh->fatal, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&w->sh->stop, 1, __ATOMIC_RELAXED);
}

/* What the server allows, for runner_error_hint (0: unknown; set by runner_run from
 * runner_config.conn_limit once a start was refused) */
static int hint_allowed;
static char hint_limit[96];

/* The server refused a connection for its connection limit (MySQL 1040, PostgreSQL 53300 or
 * its messages, which a failed connect carries without a SQLSTATE). */
static bool conn_limit_error(const struct db_error *e)
{
    return e->code == 1040 || !strcmp(e->state, "53300") || strstr(e->msg, "too many clients") ||
           strstr(e->msg, "Too many connections") || strstr(e->msg,
                                                            "connection slots are reserved");
}

const char *runner_error_hint(const struct db_error *e, int nthreads, char *buf, size_t n)
{
    if (conn_limit_error(e)) {
        if (hint_allowed > 0)
            snprintf(buf, n, "--threads=%d needs %d connections at once (one per thread), the "
                     "server allows %d (%s): raise max_connections or lower --threads",
                     nthreads, nthreads, hint_allowed, hint_limit);
        else
            snprintf(buf, n, "--threads=%d needs %d connections at once (one per thread) and the "
                     "server allows fewer (max_connections): raise max_connections or lower "
                     "--threads", nthreads, nthreads);
        return buf;
    }
    if (e->code == 1461)
        return "each thread prepares one statement per table and kind, more than the server's "
               "max_prepared_stmt_count: raise it, lower --threads/--tables, or use "
               "--db-ps-mode=disable";
    if (e->code == 1146 || !strcmp(e->state, "42P01") || strstr(e->msg, "no such table"))
        return "a table of the test is missing: run `pgolab bench ... prepare` with the same "
               "--tables first";
    if (e->code == 2002 || e->code == 2003 || strstr(e->msg, "Connection refused"))
        return "is the server running there? start it (pgolab server start) or "
               "fix the host/port/socket options";
    return NULL;
}

/* One line for an error `same` of nthreads workers hit, with its native code, the fix, and
 * the table and statement it came from when it came from one (the first worker's, with its
 * values; extra: appended as is). */
static void print_failure(const char *what, int thread, const struct db_error *e, int same,
                          int nthreads, const char *extra)
{
    char code[48] = "", num[16] = "", who[64], hint_buf[256], stmt[sizeof(e->sql) + 96] = "";
    if (e->code > 0)  /* the native code, unless the message already names it */
        snprintf(num, sizeof(num), "%d", e->code);
    else if (e->state[0])
        snprintf(num, sizeof(num), "%s", e->state);
    if (num[0] && !strstr(e->msg, num))
        snprintf(code, sizeof(code), e->code > 0 ? " [error %s]" : " [SQLSTATE %s]", num);
    if (same > 1)
        snprintf(who, sizeof(who), "%d of %d threads", same, nthreads);
    else
        snprintf(who, sizeof(who), "thread #%d", thread);
    const char *hint = runner_error_hint(e, nthreads, hint_buf, sizeof(hint_buf));
    if (e->sql[0] && e->table[0])
        snprintf(stmt, sizeof(stmt), "; table %s, statement: %s", e->table, e->sql);
    else if (e->sql[0])
        snprintf(stmt, sizeof(stmt), "; statement: %s", e->sql);
    error("%s (%s): %s%s%s%s%s%s", what, who, e->msg, code, hint ? "; " : "", hint ? hint : "",
          stmt, extra);
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
    for (; *owed >= 1 && !__atomic_load_n(&sh->stop, __ATOMIC_RELAXED); *owed -= 1) {
        struct db_counters keep = w->conn.cnt;
        enum db_status st = oltp_event(&w->ot, &sh->stop);
        __atomic_store_n(&w->conn.cnt.reads, keep.reads, __ATOMIC_RELAXED);
        __atomic_store_n(&w->conn.cnt.writes, keep.writes, __ATOMIC_RELAXED);
        __atomic_store_n(&w->conn.cnt.others, keep.others, __ATOMIC_RELAXED);
        __atomic_store_n(&w->conn.cnt.errors, keep.errors, __ATOMIC_RELAXED);
        __atomic_store_n(&w->conn.cnt.reconnects, keep.reconnects, __ATOMIC_RELAXED);
        if (st == DB_FATAL) {
            fatal_error(w);
            return -1;
        }
        if (st != DB_OK)
            return -1; /* stopped while retrying */
    }
    return 0;
}

/* --events: how many events a worker claims at once, so that the shared count (sh->issued)
 * is written once per batch, not per event: 1/1024 of a worker's share, at least 1 and at
 * most 32. A run of few events still hands them out one by one; the total stays exact, and
 * the last batches leave the workers' counts at most 32 events further apart than one by one
 * would. */
static uint64_t events_batch(const struct runner_config *cfg)
{
    uint64_t b = cfg->events / (uint64_t)cfg->threads / 1024;
    return b < 1 ? 1 : b > 32 ? 32 : b;
}

/* Claim up to batch of the --events still unclaimed. Returns how many this worker may run
 * (0: none left). */
static uint64_t claim_events(struct shared *sh, uint64_t batch)
{
    uint64_t limit = sh->cfg->events, first;
    assert(limit > 0 && batch > 0);
    first = __atomic_fetch_add(&sh->issued, batch, __ATOMIC_RELAXED);
    if (first >= limit)
        return 0;
    return limit - first < batch ? limit - first : batch;
}

/* The worker's first event that starts after --warmup-time: what ran before is forgotten
 * (its own counters, histogram and times zeroed, single writer), then the reporter and the
 * final snapshot count it (release: they see the zeroes first). */
static void begin_measuring(struct worker *w)
{
    struct db_counters *c = &w->conn.cnt;
    __atomic_store_n(&c->reads, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&c->writes, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&c->others, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&c->errors, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&c->reconnects, 0, __ATOMIC_RELAXED);
    histogram_reset(&w->hist);  /* also the event count and time (struct worker) */
    w->nlat = 0;
    __atomic_store_n(&w->measuring, 1, __ATOMIC_RELEASE);
}

/* Events a worker counted (measuring), less those undone at the end; relaxed loads, as the
 * reporter reads them while the worker runs. */
static uint64_t worker_events(struct worker *w)
{
    uint64_t n = __atomic_load_n(&w->hist.total, __ATOMIC_RELAXED);
    uint64_t lost = __atomic_load_n(&w->lost, __ATOMIC_RELAXED);
    return n > lost ? n - lost : 0;
}

/* --report-interval's next slot (inline worker) or --time, whichever comes first: what the
 * worker compares each event's end with (UINT64_MAX: neither). */
static uint64_t next_due(const struct reporter *rp, uint64_t deadline_ns)
{
    uint64_t due = rp ? rp->next : UINT64_MAX;
    return deadline_ns && deadline_ns < due ? deadline_ns : due;
}

/* runner_config.keep_latencies: one more counted latency. */
static void keep_latency(struct worker *w, uint64_t ns)
{
    if (w->nlat == w->caplat) {
        w->caplat = w->caplat ? 2 * w->caplat : 4096;
        w->lat = xrealloc(w->lat, w->caplat * sizeof(*w->lat));
    }
    w->lat[w->nlat++] = ns;
}

/* A worker thread. Keep the name, and out of line: `--measure=instructions` counts
 * instructions only inside it (callgrind --toggle-collect=worker_main,
 * src/experiment/experiment.c). */
static __attribute__((noinline)) void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct shared *sh = w->sh;
    const struct runner_config *cfg = sh->cfg;
    int ok;

    w->conn.drv = cfg->drv;
    ok = cfg->drv->connect(&w->conn) == 0;
    if (!ok)
        note_failure(w, "cannot connect");
    w->connected = ok;
    if (ok && cfg->server_identity && cfg->drv->server_identity(&w->conn, &w->ident) < 0) {
        note_failure(w, "cannot report its server identity");
        ok = 0;
    }
    if (ok && oltp_thread_init(&w->ot, &w->conn, cfg->o, cfg->wl,
                               cfg->seed + 0x9E3779B97F4A7C15ull * (uint64_t)(w->id + 1),
                               w->id) < 0) {
        note_failure(w, "cannot prepare statements");
        ok = 0;
    }
    /* An inline worker is the only one, so it opens the gate and reports by itself. */
    struct reporter rep, *rp = NULL;
    if (sh->inline_worker) {
        sh->ready++;
        sh->started_ok += ok;
        if (cfg->agree_start && !cfg->agree_start(ok, cfg->ud) && ok)
            ok = 0;  /* another process failed: no message here */
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
        sh->started_ok += ok;
        if (!ok)
            sh->init_failed = 1;
        pthread_cond_broadcast(&sh->cv);
        while (!sh->go)
            pthread_cond_wait(&sh->cv, &sh->mu);
        pthread_mutex_unlock(&sh->mu);
    }
    if (sh->go < 0 || !ok)
        goto out;

    /* Closed loop: one clock read per event, an event starts when the previous one ended
     * (the loop's bookkeeping in between is a few ns). --rate: an event starts at its
     * arrival, so the time it waited for this worker is part of its latency. The per-event
     * path is kept short (at 2 threads on SQLite every instruction between two
     * autocommit transactions costs about twice): the options it tests are read once, and
     * the report slot and --time are one compare (due). */
    bool measuring = false;
    uint64_t t0 = now_ns();
    double owed = 0, extra_per_event = cfg->throttle > 0 ? 1.0 / cfg->throttle - 1.0 : 0;
    uint64_t granted = 0, batch = events_batch(cfg);  /* --events: claimed, not yet run */
    const bool limit_events = cfg->events > 0, keep = cfg->keep_latencies;
    struct arrivals *const arr = sh->arr;
    uint64_t due = next_due(rp, sh->deadline_ns);
    while (!__atomic_load_n(&sh->stop, __ATOMIC_RELAXED)) {
        if (arr && arrivals_pop(arr, &t0, &sh->stop) < 0)
            break;
        if (!measuring && t0 >= sh->measure_ns) {
            measuring = true;
            if (sh->measure_ns > sh->start_ns)
                begin_measuring(w);
            else
                __atomic_store_n(&w->measuring, 1, __ATOMIC_RELEASE);
        }
        if (limit_events && measuring) {
            if (!granted && !(granted = claim_events(sh, batch)))
                break;
            granted--;
        }
        __atomic_store_n(&w->in_event, 1, __ATOMIC_RELAXED);
        enum db_status st = oltp_event(&w->ot, &sh->stop);
        uint64_t t1 = now_ns();
        __atomic_store_n(&w->in_event, 0, __ATOMIC_RELAXED);
        if (st != DB_OK) {
            if (st == DB_FATAL)
                fatal_error(w);
            break; /* else stopped while retrying */
        }
        if (measuring) {
            histogram_add(&w->hist, t1 - t0);
            if (keep)
                keep_latency(w, t1 - t0);
        }
        uint64_t resume = 0;  /* after an inline report: the next event starts when it ended */
        if (t1 >= due) {
            if (rp && t1 >= rp->next) {
                reporter_emit(rp, t1);
                resume = now_ns();
            }
            if (sh->deadline_ns && t1 >= sh->deadline_ns)
                break;
            due = next_due(rp, sh->deadline_ns);
        }
        if (extra_per_event > 0 && (owed += extra_per_event) >= 1) {
            if (throttle_extra_events(w, &owed) < 0)
                break;
            t1 = now_ns();  /* the next event starts after the extra work */
        }
        t0 = resume > t1 ? resume : t1;
    }
    /* The workload's last step (bulk_insert sends its buffered rows); part of the run. */
    if (!__atomic_load_n(&sh->fatal, __ATOMIC_RELAXED) && oltp_thread_finish(&w->ot) == DB_FATAL)
        fatal_error(w);
    if (w->ot.lost_events)  /* counted, then undone by a failed statement (bulk_insert) */
        __atomic_store_n(&w->lost, w->ot.lost_events, __ATOMIC_RELAXED);
out:
    __atomic_store_n(&w->end_ns, now_ns(), __ATOMIC_RELAXED);
    if (rp)
        reporter_finish(rp, w->end_ns);
    /* release: the reporter that sees running drop also sees end_ns and the last counts; the
     * last worker out wakes it */
    if (__atomic_fetch_sub(&sh->running, 1, __ATOMIC_RELEASE) == 1 && !sh->inline_worker)
        sem_post(&sh->wake);
    if (rp)
        reporter_release(rp);
    return NULL;
}

/* Sum the counters of the workers past their warmup (relaxed loads: the workers keep
 * running; the acquire load of `measuring` orders them after the worker's reset). */
static void snapshot(struct worker *ws, int n, struct db_counters *c, uint64_t *events,
                     struct histogram *h)
{
    memset(c, 0, sizeof(*c));
    *events = 0;
    histogram_reset(h);
    for (int i = 0; i < n; i++) {
        if (!__atomic_load_n(&ws[i].measuring, __ATOMIC_ACQUIRE))
            continue;
        struct db_counters *wc = &ws[i].conn.cnt;
        c->reads += __atomic_load_n(&wc->reads, __ATOMIC_RELAXED);
        c->writes += __atomic_load_n(&wc->writes, __ATOMIC_RELAXED);
        c->others += __atomic_load_n(&wc->others, __ATOMIC_RELAXED);
        c->errors += __atomic_load_n(&wc->errors, __ATOMIC_RELAXED);
        c->reconnects += __atomic_load_n(&wc->reconnects, __ATOMIC_RELAXED);
        *events += worker_events(&ws[i]);
        histogram_merge(h, &ws[i].hist);
    }
}

/* Sleep until t_ns (now_ns() clock; UINT64_MAX: no time limit) or a post of sh->wake. */
static void sleep_until(struct shared *sh, uint64_t t_ns)
{
    if (t_ns == UINT64_MAX) {
        while (sem_wait(&sh->wake) < 0 && errno == EINTR)
            ;
        return;
    }
    if (t_ns <= now_ns())
        return;
    struct timespec ts = { (time_t)(t_ns / 1000000000ull), (long)(t_ns % 1000000000ull) };
    /* CLOCK_MONOTONIC, as now_ns(); EINTR (a signal) and ETIMEDOUT both end the wait */
    sem_clockwait(&sh->wake, CLOCK_MONOTONIC, &ts);
}

static void reporter_init(struct reporter *r, struct shared *sh, struct worker *ws, int n)
{
    memset(r, 0, sizeof(*r));
    r->cfg = sh->cfg;
    r->sh = sh;
    r->ws = ws;
    r->n = n;
    r->interval_ns = (uint64_t)(r->cfg->report_interval * 1e9);
    /* interval stamps count from the end of the warmup; none during it */
    r->next = r->interval_ns ? sh->measure_ns + r->interval_ns : UINT64_MAX;
    r->prev_t = sh->measure_ns;
    histogram_init(&r->prev_h);
    histogram_init(&r->cur_h);
    histogram_init(&r->diff_h);
}

/* cur - prev of a counter that can only grow; a snapshot that reads lower (a counter put back
 * by the throttle knob, events undone by bulk_insert) gives 0, never a wrapped difference. */
static uint64_t grown(uint64_t cur, uint64_t *prev)
{
    uint64_t d = cur > *prev ? cur - *prev : 0;
    if (cur > *prev)
        *prev = cur;
    return d;
}

/* Workers in their loop at time t: still in it, or left it at t or later. A reporter woken a
 * little after its slot (the thread was asleep, and workers stop at --time on the same stamp)
 * still counts the workers that were running at the slot, not when it got a CPU. */
static int running_at(const struct reporter *r, uint64_t t)
{
    int k = 0;
    for (int i = 0; i < r->n; i++) {
        uint64_t e = __atomic_load_n(&r->ws[i].end_ns, __ATOMIC_RELAXED);
        k += e == 0 || e >= t;
    }
    assert(k <= r->n);
    return k;
}

/* The lines for every slot due by t (t >= r->next): the interval since the previous report,
 * ending at t. Stamps are consecutive multiples of the interval. A reporter held up past more
 * than one slot (an inline worker in a long event, a starved reporter thread) reports each
 * missed slot with the average over the whole span it covers, so the lines still add up.
 * final: the run ended at t before the slot r->next: one last line for the partial interval,
 * stamped r->next, its rates divided by its real length. */
static void reporter_emit_span(struct reporter *r, uint64_t t, bool final)
{
    const struct runner_config *cfg = r->cfg;
    struct shared *sh = r->sh;
    struct db_counters cur;
    uint64_t events;
    snapshot(r->ws, r->n, &cur, &events, &r->cur_h);
    histogram_diff(&r->diff_h, &r->cur_h, &r->prev_h);
    uint64_t slots = 1;
    if (!final)
        slots = (t - r->next) / r->interval_ns + 1;
    double span = t > r->prev_t ? (double)(t - r->prev_t) / 1e9 : 1e-9;
    bool overflow = false;
    double lat = histogram_percentile_ex(&r->diff_h, cfg->percentile, &overflow);
    struct interval_stats iv = {
        /* the partial last line comes after every worker left: how many still run then */
        .threads = final ? __atomic_load_n(&sh->running, __ATOMIC_RELAXED) : running_at(r, r->next),
        .tps = (double)grown(events, &r->prev_events) / span,
        .reads_per_s = (double)grown(cur.reads, &r->prev.reads) / span,
        .writes_per_s = (double)grown(cur.writes, &r->prev.writes) / span,
        .other_per_s = (double)grown(cur.others, &r->prev.others) / span,
        .lat_ms = lat / 1e6,
        .lat_overflow = overflow,
        .errors_per_s = (double)grown(cur.errors, &r->prev.errors) / span,
        .reconnects_per_s = (double)grown(cur.reconnects, &r->prev.reconnects) / span,
        .length_s = span / (double)slots,
        .hist = &r->diff_h,
    };
    iv.qps = iv.reads_per_s + iv.writes_per_s + iv.other_per_s;
    if (sh->arr) {
        iv.rate_mode = true;
        iv.queue_length = arrivals_length(sh->arr);
        for (int i = 0; i < r->n; i++)
            iv.concurrency += __atomic_load_n(&r->ws[i].in_event, __ATOMIC_RELAXED);
    }
    for (uint64_t k = 0; k < slots; k++) {
        iv.time_s = (double)(r->next - sh->measure_ns) / 1e9;
        if (cfg->on_interval)
            cfg->on_interval(&iv, cfg->ud);
        r->next += r->interval_ns;
    }
    r->prev_t = t;
    histogram_copy(&r->prev_h, &r->cur_h);
}

/* Slot r->next is due (now >= r->next): report it (and any other missed slot). */
static void reporter_emit(struct reporter *r, uint64_t now)
{
    reporter_emit_span(r, now, false);
}

/* The run ended at end_ns: due slots, then the partial interval since the last line when it
 * is at least a tenth of an interval long (a few ms after the last slot are not a line) and
 * began before --time (the events still finishing after the time limit are not one). */
static void reporter_finish(struct reporter *r, uint64_t end_ns)
{
    if (r->next == UINT64_MAX || end_ns < r->sh->measure_ns)
        return;
    if (end_ns >= r->next)
        reporter_emit_span(r, end_ns, false);
    if (r->sh->deadline_ns && r->prev_t >= r->sh->deadline_ns)
        return;  /* only events finishing after --time: not an interval of the run */
    if (end_ns > r->prev_t && end_ns - r->prev_t >= r->interval_ns / 10)
        reporter_emit_span(r, end_ns, true);
}

static void reporter_release(struct reporter *r)
{
    histogram_release(&r->prev_h);
    histogram_release(&r->cur_h);
    histogram_release(&r->diff_h);
}

/* Workers inside an event now (forced shutdown: the events it cuts off). */
static uint64_t in_events(struct worker *ws, int n)
{
    uint64_t k = 0;
    for (int i = 0; i < n; i++)
        k += (uint64_t)__atomic_load_n(&ws[i].in_event, __ATOMIC_RELAXED);
    return k;
}

/* Reporter thread: sleep until the next report, --time or the forced shutdown, whichever
 * comes first, or until SIGINT or the last worker out wakes it (sh->wake); emit an
 * intermediate report at each multiple of the interval. It never wakes per event nor on a
 * fixed tick (a tick preempted a worker 50 times a second when the workers fill the CPUs),
 * except under --rate, whose queue it watches every 20 ms. Returns 1 when --forced-shutdown
 * ended the run (workers still running), else 0 once every worker has left its loop. */
static int report_loop(struct shared *sh, struct worker *ws, int n)
{
    const struct runner_config *cfg = sh->cfg;
    struct reporter r;
    int forced = 0;
    uint64_t force_at = 0;
    if (sh->deadline_ns && cfg->forced_shutdown_s >= 0)
        force_at = sh->deadline_ns + (uint64_t)(cfg->forced_shutdown_s * 1e9);

    reporter_init(&r, sh, ws, n);
    while (__atomic_load_n(&sh->running, __ATOMIC_ACQUIRE) > 0) {
        uint64_t now = now_ns(), wake = r.next;
        if (sh->deadline_ns && now < sh->deadline_ns && sh->deadline_ns < wake)
            wake = sh->deadline_ns;
        if (force_at && force_at < wake)
            wake = force_at;
        if (sh->arr && now + 20000000ull < wake)
            wake = now + 20000000ull;
        sleep_until(sh, wake);
        now = now_ns();
        /* workers check the deadline after each finished event; this ends an event that keeps
         * being retried (an ignorable error that repeats) at --time as well */
        if (got_sigint || (sh->deadline_ns && now >= sh->deadline_ns))
            __atomic_store_n(&sh->stop, 1, __ATOMIC_RELAXED);
        if (sh->arr && arrivals_overflowed(sh->arr) && !sh->queue_full) {
            sh->queue_full = 1;
            __atomic_store_n(&sh->fatal, 1, __ATOMIC_RELAXED);
            __atomic_store_n(&sh->stop, 1, __ATOMIC_RELAXED);
            /* the rate achieved: events started (arrivals taken) since the clock started */
            double el = now > sh->start_ns ? (double)(now - sh->start_ns) / 1e9 : 1e-9;
            uint64_t taken = arrivals_taken(sh->arr);
            error("The event queue is full. This means the worker threads are unable to keep "
                  "up with the specified event generation rate (--rate=%.0f requested, %.0f/s "
                  "achieved: %llu events started in %.2f s; the queue holds %d arrivals): lower "
                  "--rate or add --threads", cfg->rate, (double)taken / el,
                  (unsigned long long)taken, el, ARRIVALS_QUEUE_SLOTS);
        }
        if (__atomic_load_n(&sh->stop, __ATOMIC_RELAXED) && sh->arr)
            arrivals_stop(sh->arr);
        if (now >= r.next)  /* a slot due at the forced shutdown is still reported */
            reporter_emit(&r, now);
        if (force_at && now >= force_at && __atomic_load_n(&sh->running, __ATOMIC_RELAXED) > 0) {
            forced = 1;
            break;
        }
    }
    if (!forced && !sh->queue_full) {
        uint64_t end = 0;
        for (int i = 0; i < n; i++) {
            uint64_t e = __atomic_load_n(&ws[i].end_ns, __ATOMIC_RELAXED);
            end = e > end ? e : end;
        }
        reporter_finish(&r, end);
    }
    reporter_release(&r);
    return forced;
}

/* Wait until every started worker is ready, one fails (if stop_on_failure), or the init
 * timeout passes. Returns 0 (all ready), -1 (one failed: the start ends at once), -2 (timed
 * out). Under mu. */
static int wait_ready(struct shared *sh, int started, bool stop_on_failure, double tmo)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    uint64_t ns = (uint64_t)until.tv_nsec + (uint64_t)((tmo - (double)(uint64_t)tmo) * 1e9);
    until.tv_sec += (time_t)tmo + (time_t)(ns / 1000000000ull);
    until.tv_nsec = (long)(ns % 1000000000ull);
    while (sh->ready < started && !(stop_on_failure && sh->init_failed))
        if (pthread_cond_timedwait(&sh->cv, &sh->mu, &until) == ETIMEDOUT)
            break;
    if (sh->ready < started && !(stop_on_failure && sh->init_failed))
        return -2;
    return sh->init_failed ? -1 : 0;
}

/* The one line of a refused start, with how many threads had started; for too many
 * connections what the server allows (looked up when `lookup`: the workers have
 * disconnected, so there is a slot to ask from). */
static void print_start_failure(struct shared *sh, int n, bool lookup)
{
    pthread_mutex_lock(&sh->mu);
    const char *what = sh->first_what;
    struct db_error err = sh->first_err;
    int thread = sh->first_thread, same = sh->same_errs, ok = sh->started_ok;
    pthread_mutex_unlock(&sh->mu);
    if (!what)
        return;
    if (lookup && sh->cfg->conn_limit && conn_limit_error(&err))
        hint_allowed = sh->cfg->conn_limit(sh->cfg, hint_limit, sizeof(hint_limit));
    char extra[64];
    snprintf(extra, sizeof(extra), " (%d of %d threads had started)", ok, n);
    print_failure(what, thread, &err, same, n, extra);
}

/* --thread-init-timeout in seconds (30 when unset). */
static double init_timeout(const struct runner_config *cfg)
{
    return cfg->init_timeout_s > 0 ? cfg->init_timeout_s : 30;
}

/* What is left of --thread-init-timeout, counted from cfg->init_since_ns (a start that
 * already used it up still waits 1 ms: wait_ready takes a positive timeout). */
static double init_time_left(const struct runner_config *cfg)
{
    double left = init_timeout(cfg);
    uint64_t now = now_ns();
    if (cfg->init_since_ns && now > cfg->init_since_ns)
        left -= (double)(now - cfg->init_since_ns) / 1e9;
    return left > 1e-3 ? left : 1e-3;
}

/* Start the workers and wait for them (bounded by --thread-init-timeout). Returns the number
 * started; *outcome as wait_ready (with a message printed for a failure or a timeout). */
static int start_workers(struct shared *sh, struct worker *ws, int n, int *outcome)
{
    int started = 0;
    for (int i = 0; i < n; i++) {
        ws[i].id = i;
        ws[i].sh = sh;
        histogram_init(&ws[i].hist);
        if (pthread_create(&ws[i].tid, NULL, worker_main, &ws[i]) != 0) {
            error("cannot create worker thread #%d: %s", i, strerror(errno));
            pthread_mutex_lock(&sh->mu);
            sh->init_failed = 1;
            pthread_mutex_unlock(&sh->mu);
            sh->running -= n - i;
            break;
        }
        started++;
    }
    pthread_mutex_lock(&sh->mu);
    double tmo = init_time_left(sh->cfg);
    *outcome = wait_ready(sh, started, true, tmo);
    /* a refusal ends the start at once; the others' answers make its count (up to 5 s: a
     * loaded server takes over 1 s to answer 14 connects, and the count then fell short) */
    if (*outcome == -1)
        wait_ready(sh, started, false, tmo < 5 ? tmo : 5);
    if (sh->cfg->agree_start) {  /* every process ready, or none starts (workers wait on go) */
        pthread_mutex_unlock(&sh->mu);
        bool all = sh->cfg->agree_start(*outcome == 0, sh->cfg->ud);
        pthread_mutex_lock(&sh->mu);
        if (!all && *outcome == 0)
            *outcome = -3;  /* another process failed: quietly */
    }
    if (*outcome == 0 && sh->cfg->on_ready) {  /* before the gate: the workers wait on go */
        struct db_identity *ids = xcalloc((size_t)n, sizeof(*ids));
        for (int i = 0; i < n; i++)
            ids[i] = ws[i].ident;
        pthread_mutex_unlock(&sh->mu);
        int r = sh->cfg->on_ready(ids, n, sh->cfg->ud);
        pthread_mutex_lock(&sh->mu);
        free(ids);
        if (r < 0)
            *outcome = -3;  /* on_ready said why */
    }
    if (*outcome == 0) {
        gate_open(sh);
        if (sh->go < 0)
            *outcome = -1;
    } else {
        sh->go = -1;
    }
    pthread_cond_broadcast(&sh->cv);
    int ok = sh->started_ok;
    pthread_mutex_unlock(&sh->mu);
    /* a refused start (*outcome -1) is printed by runner_run once the workers are gone */
    if (*outcome == -2)
        runner_print_init_timeout(init_timeout(sh->cfg), ok, n, "the server does not answer");
    return started;
}

void runner_print_init_timeout(double timeout_s, int ready, int nthreads, const char *why)
{
    assert(ready >= 0 && ready <= nthreads);
    error("Worker threads failed to initialize within %g seconds! (%d of %d threads had "
          "connected and prepared; %s: check it, or raise --thread-init-timeout)", timeout_s,
          ready, nthreads, why);
}

/* A run that started: its numbers into st (all but st->failed and what runner_run set
 * before: abandoned, forced, unfinished). The workers' loops have ended (end_ns: when the
 * last one left its loop, or the forced shutdown) or, abandoned, may still run: the loads
 * are the reporter's relaxed ones. */
static void collect_stats(struct shared *sh, struct worker *ws, uint64_t end_ns,
                          struct run_stats *st)
{
    const struct runner_config *cfg = sh->cfg;
    int n = cfg->threads;
    st->total_time_s = end_ns > sh->measure_ns ? (double)(end_ns - sh->measure_ns) / 1e9 : 0;
    st->nthreads = n;
    st->thread_events = xcalloc((size_t)n, sizeof(uint64_t));
    st->thread_time_s = xcalloc((size_t)n, sizeof(double));
    histogram_init(&st->hist);
    snapshot(ws, n, &st->cnt, &st->events, &st->hist);
    for (int i = 0; i < n; i++) {
        if (!__atomic_load_n(&ws[i].measuring, __ATOMIC_ACQUIRE))
            continue;
        st->thread_events[i] = worker_events(&ws[i]);
        /* the sum of its latencies: exact (integers, below 2^53 ns = 104 days) */
        double sum;
        __atomic_load(&ws[i].hist.sum_ns, &sum, __ATOMIC_RELAXED);
        st->thread_time_s[i] = sum / 1e9;
    }
    for (int i = 0; i < n && cfg->keep_latencies; i++) {
        st->latencies = xrealloc(st->latencies, (st->nlatencies + ws[i].nlat + 1) *
                                                    sizeof(*st->latencies));
        memcpy(st->latencies + st->nlatencies, ws[i].lat, ws[i].nlat * sizeof(*ws[i].lat));
        st->nlatencies += ws[i].nlat;
    }
    if (cfg->server_identity) {
        st->identities = xcalloc((size_t)n, sizeof(*st->identities));
        for (int i = 0; i < n; i++)
            st->identities[i] = ws[i].ident;
    }
    st->interrupted = got_sigint;
    st->queue_full = sh->queue_full;
}

/* The workers' statements, connections and buffers, once none of them runs any more. */
static void release_workers(const struct runner_config *cfg, struct worker *ws, int n)
{
    for (int i = 0; i < n; i++) {
        if (ws[i].ot.stmts)
            oltp_thread_done(&ws[i].ot);
        if (ws[i].connected)
            cfg->drv->disconnect(&ws[i].conn);
        histogram_release(&ws[i].hist);
        free(ws[i].lat);
    }
}

int runner_run(const struct runner_config *cfg, struct run_stats *st)
{
    int n = cfg->threads;
    /* on the heap: abandoned workers (see run_stats) still use it after we return */
    struct shared *sh = xcalloc_aligned(1, sizeof(*sh), CACHE_LINE_PAIR);
    struct worker *ws = xcalloc_aligned((size_t)n, sizeof(*ws), CACHE_LINE_PAIR);
    struct sigaction sa = { 0 }, old_sa;
    int rc = 0, started = 0, outcome = 0, forced = 0;

    memset(st, 0, sizeof(*st));
    sh->cfg = cfg;
    hint_allowed = 0;
    pthread_mutex_init(&sh->mu, NULL);
    pthread_cond_init(&sh->cv, NULL);
    sem_init(&sh->wake, 0, 0);
    sh->running = n;
    /* One worker on an in-process engine runs on this thread, and the process stays
     * single-threaded: glibc then takes an uncontended mutex with a plain store instead of a
     * locked instruction, and SQLite takes ~9 per statement, even with SQLITE_OPEN_NOMUTEX
     * (BENCHMARKS.md, sqlite-overhead: a second thread alone cost point selects ~7%). The
     * worker then also does what the reporter thread would: the intermediate reports between
     * two events, --time for a retried event; SIGINT stops it from the handler. A server
     * driver keeps the reporter thread: its worker may sit in recv() for long, where a report
     * would be late and a signal would interrupt the read. --rate needs its generator thread
     * and the reporter's queue watch. */
    sh->inline_worker = n == 1 && cfg->drv->in_process && !(cfg->rate > 0);
    /* only a server has identities; start_workers calls on_ready */
    assert(!cfg->server_identity || (cfg->drv->server_identity && !sh->inline_worker));
    got_sigint = 0;
    sigint_stop = sh->inline_worker ? &sh->stop : NULL;
    sigint_wake = sh->inline_worker ? NULL : &sh->wake;
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_sa);
    /* Under mpirun, Ctrl-C reaches the ranks as SIGTERM (Open MPI forwards it, then SIGKILLs
     * after odls_base_sigkill_timeout, 1 s by default): stopping as for SIGINT lets the ranks
     * reduce and rank 0 print the partial summary in that second. */
    struct sigaction old_term;
    if (cfg->agree_start)
        sigaction(SIGTERM, &sa, &old_term);

    if (sh->inline_worker) {
        ws[0].sh = sh;
        histogram_init(&ws[0].hist);
        worker_main(&ws[0]);
        started = 1;
        if (sh->go < 0 && sh->first_what)
            print_failure(sh->first_what, 0, &sh->first_err, 1, 1, "");
    } else {
        started = start_workers(sh, ws, n, &outcome);
        if (sh->go > 0) {
            if (cfg->on_start)
                cfg->on_start(cfg->ud);
            forced = report_loop(sh, ws, started);
        }
    }
    /* A worker blocked in the database client (a silent server) cannot be joined: a forced
     * shutdown reports what ran without it, a start that timed out reports nothing; the caller
     * ends the process. Otherwise the run ends when the last worker leaves its loop (not when
     * the reporter, which polls every 20 ms, notices). */
    st->abandoned = forced || outcome == -2;
    if (outcome == -1 && !st->abandoned) {
        /* a failed start: the others finish their connect and see the abort; bounded by the
         * client's own connect timeout */
        pthread_mutex_lock(&sh->mu);
        st->abandoned = wait_ready(sh, started, false, init_timeout(cfg)) == -2;
        pthread_mutex_unlock(&sh->mu);
    }
    uint64_t end_ns = 0;
    if (forced) {
        end_ns = now_ns();
        st->forced = true;
        st->unfinished = in_events(ws, started);
        error("The --max-time limit has expired, forcing shutdown...");
    }
    for (int i = 0; i < started && !st->abandoned; i++) {
        if (!sh->inline_worker)
            pthread_join(ws[i].tid, NULL);
        if (ws[i].end_ns > end_ns)
            end_ns = ws[i].end_ns;
    }
    if (sh->arr && !st->abandoned)
        arrivals_release(sh->arr);
    else if (sh->arr)
        arrivals_stop(sh->arr);
    sigaction(SIGINT, &old_sa, NULL);
    if (cfg->agree_start)
        sigaction(SIGTERM, &old_term, NULL);
    sigint_stop = NULL;
    sigint_wake = NULL;
    if (sh->fatal) {  /* the run's failure, once */
        pthread_mutex_lock(&sh->mu);
        const char *what = sh->first_what;
        struct db_error err = sh->first_err;
        int thread = sh->first_thread, same = sh->same_errs;
        pthread_mutex_unlock(&sh->mu);
        if (what)
            print_failure(what, thread, &err, same, n, "");
    }

    /* every event done, no connection closed yet (the identities still hold) */
    bool finished_failed = sh->go > 0 && !st->abandoned && cfg->on_finished &&
                           cfg->on_finished(cfg->ud) < 0;
    if (sh->go <= 0) {
        rc = outcome == -2 ? 2 : -1;
    } else {
        collect_stats(sh, ws, end_ns, st);
        st->failed = sh->fatal || finished_failed;
        rc = st->failed ? -1 : forced ? 2 : got_sigint ? 1 : 0;
    }
    if (!st->abandoned)
        release_workers(cfg, ws, n);
    if (outcome == -1)
        print_start_failure(sh, n, !st->abandoned);
    if (st->abandoned)
        return rc;  /* workers still use ws, sh and the connections: the process ends */
    free(ws);
    pthread_mutex_destroy(&sh->mu);
    pthread_cond_destroy(&sh->cv);
    sem_destroy(&sh->wake);
    free(sh);
    return rc;
}

void run_stats_release(struct run_stats *st)
{
    if (st->thread_events)
        histogram_release(&st->hist);
    free(st->thread_events);
    free(st->thread_time_s);
    free(st->latencies);
    free(st->identities);
    memset(st, 0, sizeof(*st));
}
