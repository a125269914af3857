/* runner: the benchmark engine. N worker threads, each with its own connection and
 * per-thread counters and latency histogram; a start gate; time and event limits; the
 * intermediate reporter (this thread); SIGINT stops the run and keeps what was measured.
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
    /* Called once when every worker is connected and the clock starts. */
    void (*on_start)(void *ud);
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
    bool interrupted;                    /* stopped by SIGINT */
    bool failed;                         /* a fatal error stopped the run (message printed) */
};

/* Run the benchmark. Returns 0 when it ran to its limit, 1 when interrupted by SIGINT,
 * -1 when workers could not start or a fatal error stopped the run (message printed). In
 * every case but a failed start, *st holds what was measured. */
int runner_run(const struct runner_config *cfg, struct run_stats *st);
void run_stats_release(struct run_stats *st);

#endif
