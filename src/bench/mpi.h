/* mpi: `pgolab bench` as one job of several client processes (ranks) under Open MPI's
 * mpirun. The only file that knows MPI: built with -DPGOLAB_MPI when the Makefile finds
 * libopenmpi-dev, else as a stub that runs one process as before and refuses, in one line, to
 * run as one of several ranks. The rest of pgolab calls these functions unconditionally; with
 * one process (no mpirun, or -np 1) every one of them is a no-op that returns the local value.
 *
 * What a job does (cmd_bench's path in docs/ARCHITECTURE.md): ranks given different
 * options are refused with the first difference; prepare/cleanup run on rank 0 while the
 * others wait; every rank runs its --threads workers, seeded from --rand-seed and its rank, on
 * its share of --events; all pass one barrier before the clock starts; rank 0 alone prints,
 * intervals and the final block from exact merges of the ranks' counters and latency
 * histograms (bucket counts summed, min/max/sum reduced: percentiles over all samples).
 * Owns the MPI state (initialised by ranks_start, ended by ranks_finish) and the per-rank
 * figures gathered by ranks_reduce. MPI is called only from the thread that ran ranks_start.
 * Interval lines are merged per slot number, so ranks that end at different times line up (the
 * slots reported after rank 0's last come from ranks_intervals_end). A failed rank MPI_Aborts
 * the job after its message. Checked by tests/e2e/bench_mpi*.t with the PGOLAB_LATENCY_FILE
 * knob (every counted latency per rank, recomputed by mpi_merge_check.pl); the Makefile's
 * build/pgolab-nompi links the stub, so a build without MPI is tested on a machine with it. */
#ifndef PGOLAB_BENCH_MPI_H
#define PGOLAB_BENCH_MPI_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "bench/runner.h"

/* Join the job when started by mpirun with more than one rank (OMPI_COMM_WORLD_SIZE / PMI_SIZE
 * in the environment): MPI_Init_thread (funneled), rank > 0's stdout to /dev/null, and the
 * options (argv, argc entries) compared with rank 0's. Returns 0 (one process, or a job whose
 * ranks agree), -1 when refused: different options (the first difference, one line by the
 * lowest rank that differs) or a build without MPI under mpirun (one line by rank 0). */
int ranks_start(int argc, char **argv);
/* Leave the job (MPI_Finalize); safe to call when not in one, and twice. */
void ranks_finish(void);
bool ranks_active(void);  /* more than one rank */
bool ranks_built(void);   /* this pgolab was built with MPI (else the stub) */
int ranks_rank(void);     /* 0 when not in a job */
int ranks_size(void);     /* 1 when not in a job */
/* Stop every rank at once (MPI_Abort with rc) after this rank printed its error: one more
 * line "rank R of N (host H): WHY: stopping every rank"; exit(rc) when not in a job. */
void ranks_abort(int rc, const char *why);
/* Rank 0's value on every rank (a barrier too). */
int ranks_bcast_int(int v);
/* Whether every rank is ok (a barrier too). When one is not, rank 0 prints one line naming the
 * lowest failing rank and what it could not do (what: "start its workers"); the failing rank
 * printed its own message. */
bool ranks_all_ok(bool ok, const char *what);

/* This rank's share of n events (n split evenly, the first n % size ranks one more). */
uint64_t ranks_share(uint64_t n);

/* One interval line of this rank (on the runner's thread, at each report): rank 0 waits for
 * the same slot of every other rank still running, merges (rates, threads, queue and
 * concurrency summed; the percentile from the summed histograms) and calls print with the
 * merged line; the other ranks send theirs to rank 0. interval: --report-interval in s. */
void ranks_interval(const struct interval_stats *iv, double interval, double percentile,
                    void (*print)(const struct interval_stats *iv, void *ud), void *ud);
/* After the run, on every rank: the others tell rank 0 they are done; rank 0 prints the slots
 * the others still reported after its own last one. */
void ranks_intervals_end(double interval, double percentile,
                         void (*print)(const struct interval_stats *iv, void *ud), void *ud);

/* After the run, on every rank: rank 0's st becomes the job's (events, counters, histogram
 * and ignored errors summed; total time the longest; per-thread figures of every rank, rank by
 * rank; interrupted/failed/forced/queue_full of any rank); the others' st are unchanged. Also
 * gathers the per-rank figures for ranks_json. */
void ranks_reduce(struct run_stats *st);
/* Rank 0, after ranks_reduce: [{"rank","host","threads","events","tps","total_time_s"}] per
 * rank (new reference), or NULL when not in a job. */
json_t *ranks_json(void);

#endif
