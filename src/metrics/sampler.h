/* sampler: takes the /proc snapshots of one run at a fixed interval (METRICS_INTERVAL_S) and
 * turns them into its struct run_metrics (metrics.h): the whole machine (/proc/stat,
 * /proc/vmstat, /proc/loadavg), the client (the bench child, /proc/PID/stat while it runs and
 * its rusage at the end) and, for a managed server, its process tree: the root (mariadbd, the
 * postmaster) and every descendant, found anew at each snapshot (PostgreSQL's forked
 * backends) through /proc/PID/task/TID/children, or by scanning /proc where the kernel lacks
 * that file.
 *
 * The server's CPU at a snapshot is the sum over the live processes of the tree of utime +
 * stime + cutime + cstime: a backend that exits and is reaped by the postmaster moves its
 * time into the postmaster's cutime/cstime, so it is neither lost nor counted twice between
 * snapshots. A process that vanished whose parent is no longer in the tree (nobody in it
 * reaped it) keeps its last values. Limitation: CPU a process used after the last snapshot
 * that saw it, when it is not reaped inside the tree, is lost (at most one interval).
 * The same sums split it: user time = utime + cutime, system time = stime + cstime (the
 * client's: its utime and stime, or its rusage's ru_utime and ru_stime at the end).
 *
 * The driver (src/experiment/run.c) calls: new, set_server, start (with the child's pid, as
 * it forks), tick (often; a snapshot when the interval has passed), stop (after the child
 * is reaped, the server still up), result, free. Any /proc file that cannot be read or parsed
 * for the machine makes the run's metrics unavailable (note = why; no error: the run goes
 * on). The procfs root is "/proc", or $PGOLAB_METRICS_PROC (a test knob: a directory laid out
 * like /proc). */
#ifndef PGOLAB_METRICS_SAMPLER_H
#define PGOLAB_METRICS_SAMPLER_H

#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "metrics/metrics.h"

struct metrics_sampler;

/* A sampler for a run with `threads` client threads; proc_root NULL = $PGOLAB_METRICS_PROC
 * or "/proc". */
struct metrics_sampler *metrics_sampler_new(const char *proc_root, int threads);
/* The server's root process (0 = none, the default). Call before start. */
void metrics_sampler_set_server(struct metrics_sampler *ms, pid_t root);
/* The first snapshot, with the client's pid (just forked). */
void metrics_sampler_start(struct metrics_sampler *ms, pid_t client);
/* A snapshot when METRICS_INTERVAL_S has passed since the last one; cheap otherwise. */
void metrics_sampler_tick(struct metrics_sampler *ms);
/* The last snapshot, after the client ended; ru = its rusage (NULL: its CPU from the
 * snapshots of /proc/PID/stat instead). */
void metrics_sampler_stop(struct metrics_sampler *ms, const struct rusage *ru);
/* The run's metrics into out (overwritten) for the transactions the child reported. When
 * unavailable, out->note says why and the reason is printed once per process. */
void metrics_sampler_result(struct metrics_sampler *ms, uint64_t transactions,
                            struct run_metrics *out);
void metrics_sampler_free(struct metrics_sampler *ms);

#endif
