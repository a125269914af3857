/* metrics: the system metrics of one run (struct run_metrics) and the arithmetic that makes
 * them from /proc snapshots taken during the run (src/metrics/sampler.h takes them): deltas of
 * /proc/stat, /proc/vmstat and the processes' CPU times divided by the run's wall time or its
 * transactions, the run's trust flags, and their JSON form (stored with each run in the
 * results database, src/store). Pure functions: nothing here reads /proc or prints, except
 * metrics_warn_unavailable(). A run_metrics owns its note and points; metrics_release().
 *
 * Formulas (proc(5); the same split vmstat(8) prints):
 *   us% = (user + nice) / total, sys% = (system + irq + softirq) / total, idle% = idle / total,
 *   iowait% = iowait / total, steal% = steal / total, over the deltas of /proc/stat's cpu line,
 *   total = user + nice + system + idle + iowait + irq + softirq + steal (guest time is
 *   already inside user and nice);
 *   intr/s = delta intr / wall s, ctxsw/s = delta ctxt / wall s, faults and swap pages per s
 *   from /proc/vmstat (pgfault, pgmajfault, pswpin, pswpout);
 *   ctxsw/txn = delta ctxt (the whole machine, as seed 002 counts) / transactions;
 *   CPU us/txn client = the bench child's user + system time (its rusage) / transactions;
 *   server = delta of the server's process tree CPU (sampler.h) / transactions;
 *   each also split into user and system time (rusage ru_utime / ru_stime; /proc/PID/stat
 *   utime + cutime / stime + cstime), user + system = the total of each, exactly for the
 *   server (the same ticks) and the client (the same rusage);
 *   busy cores = (total - idle - iowait) ticks / USER_HZ / wall s; other cores = busy cores
 *   minus the client's and the server's (what else ran: other processes, interrupts, pgolab
 *   itself). */
#ifndef PGOLAB_METRICS_METRICS_H
#define PGOLAB_METRICS_METRICS_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "metrics/procstat.h"
#include "util/strbuf.h"

/* Fixed sampling interval during a run, s. */
#define METRICS_INTERVAL_S 0.5

/* Trust thresholds: a run above one is flagged in the reports as a reason to distrust it. */
#define METRICS_STEAL_PCT_MAX 5.0    /* steal% (a VM's CPU taken by the hypervisor) */
#define METRICS_IOWAIT_PCT_MAX 10.0  /* iowait% */
#define METRICS_OTHER_PCT_MAX 10.0   /* other work's CPU, % of the machine (all cores) */
/* ... and the run queue: mean runnable tasks (the sampler itself not counted) above the cores
 * the run uses (its threads, twice that with a server: client + backend; at most the cores). */

enum metrics_flag {
    METRICS_FLAG_STEAL = 1,
    METRICS_FLAG_IOWAIT = 2,
    METRICS_FLAG_RUNQ = 4,
    METRICS_FLAG_OTHER = 8,
};

/* One sampling interval (between two snapshots) of a run. */
struct metrics_point {
    double t;             /* end of the interval, s since the run started */
    double busy_pct;      /* the machine's busy CPU, % of all cores */
    double client_cores;  /* the client's CPU, cores (NAN: not read) */
    double server_cores;  /* the server's processes' CPU, cores (NAN: no server) */
    int server_procs;     /* server processes alive at the end of the interval */
    double runq;          /* runnable tasks at the end (the sampler not counted) */
};

/* The system metrics of one run. Rates are per second of the run's wall time; NAN = not
 * known (e.g. server figures of an in-process SQLite variant). */
struct run_metrics {
    bool available;        /* false: not sampled, or unavailable (note says why) */
    char *note;            /* why unavailable, or NULL */
    double wall_s;         /* sampled window (the bench child's life), s */
    int nsamples;          /* snapshots taken (>= 2 when available) */
    int ncpu;              /* cores of the machine */
    int cores_used;        /* cores the run can use (see above) */
    double intr_per_s, ctxsw_per_s;
    double us_pct, sys_pct, idle_pct, iowait_pct, steal_pct;
    double pgfault_per_s, pgmajfault_per_s, swapin_per_s, swapout_per_s;  /* pages/s */
    double ctxsw_per_txn;
    double client_cpu_s, server_cpu_s;            /* CPU seconds over the run */
    double client_us_per_txn, server_us_per_txn;  /* CPU microseconds per transaction */
    /* the same split into user and system time (user + sys = the figures above); NAN when
     * not known, and in runs recorded before the split */
    double client_user_cpu_s, client_sys_cpu_s, server_user_cpu_s, server_sys_cpu_s;
    double client_user_us_per_txn, client_sys_us_per_txn;
    double server_user_us_per_txn, server_sys_us_per_txn;
    int server_procs;      /* server processes that used CPU during the run */
    double busy_cores, other_cores, other_pct;    /* other_pct: % of the machine */
    double runq_avg, runq_max;
    double load1;          /* 1-minute load average at the end of the run */
    unsigned flags;        /* enum metrics_flag */
    struct metrics_point *points;  /* the intervals, in order */
    int npoints;
};

/* One snapshot: what the sampler read at time t. */
struct metrics_snapshot {
    double t;                   /* s (monotonic) */
    struct proc_stat stat;
    struct proc_vmstat vm;
    struct proc_loadavg load;
    double client_ticks;        /* client utime + stime, ticks (NAN: not read) */
    double server_ticks;        /* server tree total, ticks (NAN: no server) */
    /* the same split: user (utime, + cutime for the server) and system (stime, + cstime);
     * invariant: client_ticks = client_user_ticks + client_sys_ticks, the same for the
     * server (both NAN, or all three finite) */
    double client_user_ticks, client_sys_ticks;
    double server_user_ticks, server_sys_ticks;
    int server_procs;           /* server processes alive */
};

/* What the metrics need besides the snapshots. */
struct metrics_run_info {
    uint64_t transactions;      /* the child's report */
    double client_cpu_s;        /* the child's rusage user + system, s (NAN: from ticks) */
    double client_user_s;       /* its user part, s (NAN with client_cpu_s) */
    double client_sys_s;        /* its system part, s; user + sys = client_cpu_s */
    int threads;                /* the run's client threads */
    bool server;                /* a managed server ran beside the client */
    int server_procs_busy;      /* server processes whose own CPU time grew */
    long clk_tck;               /* USER_HZ */
};

/* The metrics of a run from its snapshots s[0..n) (n >= 2, in time order) into out (released
 * first is the caller's business; out is overwritten). */
void metrics_compute(const struct metrics_snapshot *s, int n, const struct metrics_run_info *in,
                     struct run_metrics *out);

/* The trust flags of m by the thresholds above. */
unsigned metrics_flags(const struct run_metrics *m);
/* The flags as words ("steal 7.1% > 5%; run queue 3.2 > 2 cores"), appended to sb. */
void metrics_flags_format(struct strbuf *sb, const struct run_metrics *m);

/* m as a JSON object (new reference): every field above by its name, "points" as
 * [[t, busy_pct, client_cores, server_cores, server_procs, runq], ...]; an unavailable run is
 * {"available": false, "note": ...}. */
json_t *metrics_to_json(const struct run_metrics *m);
/* metrics_to_json() as compact text (caller frees). */
char *metrics_json_text(const struct run_metrics *m);
/* The JSON text of metrics_to_json() back into out (zeroed first). -1 when it is not such an
 * object (out is then not available). */
int metrics_from_json(const char *text, struct run_metrics *out);

/* Free what m owns and zero it. */
void metrics_release(struct run_metrics *m);
/* Deep copy. */
void metrics_copy(struct run_metrics *dst, const struct run_metrics *src);

/* The report's per-run quantities (table columns, CSV/JSON keys). */
enum metrics_field {
    MF_INTR_S, MF_CTXSW_S, MF_US, MF_SYS, MF_IDLE, MF_IOWAIT, MF_STEAL, MF_CTXSW_TXN,
    MF_CLIENT_US_TXN, MF_SERVER_US_TXN, MF_PGFAULT_S, MF_SWAPIN_S, MF_SWAPOUT_S,
    MF_OTHER_PCT, MF_RUNQ,
    /* CPU us/txn split into user and system time (after the others: MF_SUMMARY's range and
     * the runs CSV's first columns stay as they were) */
    MF_CLIENT_USER_US_TXN, MF_CLIENT_SYS_US_TXN, MF_SERVER_USER_US_TXN, MF_SERVER_SYS_US_TXN,
    MF_COUNT
};
#define MF_SUMMARY 10  /* the seed-002 summary line's: MF_INTR_S .. MF_SERVER_US_TXN */
const char *metrics_field_key(enum metrics_field f);    /* "intr_per_s", ... */
const char *metrics_field_title(enum metrics_field f);  /* "intr/s", ... */
double metrics_field_value(const struct run_metrics *m, enum metrics_field f);

/* Say once per process that metrics are unavailable (why), on stderr. */
void metrics_warn_unavailable(const char *why);

#endif
