/* runner: the benchmark engine. N worker threads, each with its own connection and
 * per-thread counters and latency histogram, on cache lines of their own and merged only at
 * interval boundaries and at the end (no shared line is written per event); a start gate (bounded
 * by --thread-init-timeout);
 * time and event limits; --warmup-time; open-loop arrivals under --rate (bench/arrivals.h);
 * the intermediate reporter (this thread); --forced-shutdown; SIGINT stops the run and keeps
 * what was measured. A failure every worker hits is reported once (first_error).
 * One worker on an in-process engine (SQLite) runs on this thread instead and reports by
 * itself, so the measured process stays single-threaded (see runner_run in runner.c).
 * The caller owns the config; run_stats owns its histogram and arrays (run_stats_release). */
#ifndef PGOLAB_RUNNER_H
#define PGOLAB_RUNNER_H

#include <stdbool.h>
#include <stdint.h>

#include "db/driver.h"
#include "oltp/oltp.h"
#include "stats/histogram.h"

/* One intermediate report: rates over the interval since the previous report. */
struct interval_stats {
    double time_s;       /* seconds since start (printed rounded, as sysbench) */
    int threads;         /* workers still running */
    double tps, qps, reads_per_s, writes_per_s, other_per_s;
    double lat_ms;       /* the --percentile of this interval's events, ms (0 if none) */
    double errors_per_s, reconnects_per_s;
    bool lat_overflow;   /* the percentile is beyond the histogram's top (> 100 s) */
    double length_s;     /* real length of the interval (the last one may be shorter) */
    /* --rate only (rate_mode): arrivals waiting for a worker at the report, and workers
     * inside an event (sysbench's "queue length: Q, concurrency: C") */
    bool rate_mode;
    uint64_t queue_length;
    int concurrency;
    /* this interval's latencies (valid during the on_interval call only): what several
     * client processes merge into one exact percentile (src/bench/mpi.c) */
    const struct histogram *hist;
};

struct runner_config {
    const struct db_driver *drv;
    const struct workload *wl;
    const struct oltp_opts *o;
    int threads;              /* >= 1 */
    double time_s;            /* time limit in s, 0 = none */
    uint64_t events;          /* event limit, 0 = none */
    double report_interval;   /* s, 0 = no intermediate reports */
    double percentile;        /* 0..100, for interval lines */
    uint64_t seed;            /* base seed of the workers' generators */
    double rate;              /* --rate: mean arrivals per second (Poisson), 0 = closed loop */
    double warmup_s;          /* --warmup-time: events that start before it run uncounted */
    double forced_shutdown_s; /* --forced-shutdown: grace after --time in s, < 0 = off */
    double init_timeout_s;    /* --thread-init-timeout: connect + prepare of every worker */
    /* When the start began (now_ns()), 0: at runner_run. --thread-init-timeout counts from
     * it, so that what ran before the workers (`run`'s table check) is inside the bound. */
    uint64_t init_since_ns;
    /* For the one line of a start refused for too many connections, called after the
     * workers have disconnected (may be NULL): how many connections the server allows this
     * user (0: unknown) and why into buf ("max_connections=6, 3 reserved for superusers"). */
    int (*conn_limit)(const struct runner_config *cfg, char *buf, size_t n);
    /* Test knob (0 = off): run at this fraction (0 < f < 1) of full speed: after each event
     * a worker owes 1/f - 1 events more and runs each whole one it owes as an uncounted extra
     * event (runner.c, throttle_extra_events), so over a run tps and qps are f x what they
     * would be, instructions per transaction 1/f x (deterministically), and the latencies of
     * the counted events are unchanged. A variant with a known true slowdown for the
     * statistics' end-to-end tests (set by PGOLAB_THROTTLE, see bench.c). */
    double throttle;
    /* Called on this thread for every intermediate report (by the inline worker between two
     * events, when there is one). */
    void (*on_interval)(const struct interval_stats *iv, void *ud);
    /* Test knob: keep every counted event's latency (run_stats.latencies). */
    bool keep_latencies;
    /* Several client processes (may be NULL): called on this thread once this process's
     * workers are connected and prepared (ok) or failed to (!ok), before the clock starts;
     * returns whether every process is ready (all pass one barrier there). false with ok:
     * another process failed, the start is abandoned here without a message (runner_run -1). */
    bool (*agree_start)(bool ok, void *ud);
    /* Called once when every worker is connected and the clock starts. */
    void (*on_start)(void *ud);
    /* --server-identity (a server driver only): each worker asks its connection's identity on
     * the server right after connecting (a connection that cannot fails the start, naming the
     * driver); the identities are in run_stats.identities. */
    bool server_identity;
    /* With server_identity (may be NULL): called on this thread once every worker is connected
     * and prepared, before the gate opens, with the n identities (worker order); -1 (message
     * printed) abandons the start (runner_run -1). */
    int (*on_ready)(const struct db_identity *ids, int n, void *ud);
    /* With server_identity (may be NULL): called on this thread after every worker's last
     * event, before any connection closes; -1 (message printed) fails the run. */
    int (*on_finished)(void *ud);
    void *ud;
};

struct run_stats {
    double total_time_s;                 /* start gate to last worker done */
    uint64_t events;                     /* successful events (= transactions) */
    struct db_counters cnt;              /* summed over workers */
    struct histogram hist;               /* every event's latency, merged */
    int nthreads;
    uint64_t *thread_events;             /* per worker */
    double *thread_time_s;               /* per worker: sum of its event latencies */
    bool interrupted;                    /* stopped by SIGINT (under mpirun: SIGTERM) */
    bool failed;                         /* a fatal error stopped the run (message printed) */
    bool queue_full;                     /* --rate: the arrival queue overflowed (failed too) */
    bool forced;                         /* --forced-shutdown ended the run */
    uint64_t unfinished;                 /* forced: events cut off inside a worker */
    /* Workers are still blocked in the database client (forced shutdown, or a start that
     * timed out): the caller prints what it has and ends the process (exit, no driver
     * teardown); the runner did not join them. */
    bool abandoned;
    /* runner_config.keep_latencies: every counted event's latency in ns (workers' in turn) */
    uint64_t *latencies;
    size_t nlatencies;
    /* runner_config.server_identity: each worker's connection on the server (nthreads) */
    struct db_identity *identities;
};

/* Run the benchmark. Returns 0 when it ran to its limit, 1 when interrupted by SIGINT,
 * 2 when --forced-shutdown ended it or the start timed out (sysbench's exit 2), -1 when
 * workers could not start or a fatal error stopped the run (message printed once, however
 * many workers hit it). In every case but a failed start (st->thread_events NULL), *st holds
 * what was measured. st->abandoned: see run_stats. */
int runner_run(const struct runner_config *cfg, struct run_stats *st);
void run_stats_release(struct run_stats *st);
/* sysbench's FATAL for a start that --thread-init-timeout ended, one line on stderr: "Worker
 * threads failed to initialize within N seconds!", how many of nthreads had connected and
 * prepared, and what was waited for (why: "the server does not answer"). */
void runner_print_init_timeout(double timeout_s, int ready, int nthreads, const char *why);
/* The fix for an error that every worker can hit (too many connections, too many prepared
 * statements, a missing table, a refused connection), by native code, SQLSTATE or message, in
 * one clause ("raise max_connections or lower --threads"); for too many connections with what
 * the server allows when runner_run learnt it (runner_config.conn_limit). NULL when none is
 * known. buf (n bytes) may hold the text. */
const char *runner_error_hint(const struct db_error *e, int nthreads, char *buf, size_t n);

#endif
