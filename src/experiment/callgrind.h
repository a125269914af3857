/* callgrind: --measure=instructions, the deterministic mode. Each run is two `pgolab bench`
 * children under valgrind callgrind (N/5 and N events, 1 thread; src/experiment/run.c runs
 * them), and its value is the marginal cost (I(N) - I(N/5)) / (T(N) - T(N/5)) of the
 * instructions I (and of the simulated I1 misses and branch mispredictions) over the
 * transactions T. This file owns what is callgrind's: the mode's setup, valgrind's command
 * line, reading callgrind's output files, and the "callgrind" object of a run's stored report
 * (written here, read back by the results store's loader). No state.
 *
 * Start-up, library loading and statement preparation are the same in both children and cancel
 * out. Only bench/runner.c's worker_main is counted (--toggle-collect; keep that name): a
 * reporter follows the wall time and would make counts vary. Nothing in the worker branches on
 * the clock, so two runs of one library give the same counts exactly. Two copies of one library
 * at paths of different lengths can differ by a few instructions per transaction on writes, the
 * same in every round: the child's heap and stack layout follows the length of its arguments,
 * and glibc's memory functions cost more or less on other alignments (compare_slowdown.t allows
 * 0.01% for its A/A pair). Threads are forced to 1: with more, lock spinning is counted. */
#ifndef PGOLAB_EXPERIMENT_CALLGRIND_H
#define PGOLAB_EXPERIMENT_CALLGRIND_H

#include <stdint.h>

#include "model/model.h"
#include "util/argvec.h"

/* Switch cfg to --measure=instructions with `events` per run (>= 5): checks that valgrind
 * runs, and forces the thread counts to the single count 1 (with a warning when others were
 * asked for: with several threads the counts include lock spinning and scheduling). cfg->threads
 * must have room for one int. -1 with a message on error. */
int experiment_instructions_setup(struct experiment_config *cfg, int64_t events);

/* Totals of a callgrind output file, from its "events:" line and its "totals:" line (else its
 * "summary:" line): ir = instructions (Ir), i1_miss = I1mr, d1_miss = D1mr + D1mw, ll_miss =
 * ILmr + DLmr + DLmw (last level), branch_miss = Bcm + Bim (0 when the file has no such
 * events: no --cache-sim / --branch-sim). -1 with a message when the file has no totals. */
struct callgrind_counts {
    uint64_t ir, i1_miss, d1_miss, ll_miss, branch_miss;
};
int experiment_callgrind_counts(const char *path, struct callgrind_counts *out);
/* sum += x, field by field. */
void experiment_callgrind_add(struct callgrind_counts *sum, const struct callgrind_counts *x);
/* The estimated cycles of counts c: KCachegrind's "Cycle Estimation" (its default formula for
 * the CEst event): CEst = Ir + 10 Bm + 10 L1m + 100 LLm, with Bm the branch mispredictions,
 * L1m the first-level misses (I1mr + D1mr + D1mw) and LLm the last-level ones (ILmr + DLmr +
 * DLmw). A model of a CPU, not a measurement of time. */
double experiment_callgrind_est_cycles(const struct callgrind_counts *c);
/* Only the instruction count (Ir) of experiment_callgrind_counts(). */
int experiment_callgrind_total(const char *path, uint64_t *out);

/* ---- for the engine's own files (src/experiment/) */

/* The valgrind prefix of an instruction-mode child's argv, appended to a: cfg->valgrind (or
 * "valgrind") --tool=callgrind, counting only the bench's worker thread, with cache and branch
 * simulation, writing its profile to cg_out. */
void callgrind_argv(struct argvec *a, const struct experiment_config *cfg, const char *cg_out);

/* Fill r from the counts of the two children of an instruction-mode run (cc[0], txns[0]: the
 * N/5 child; cc[1], txns[1]: the N child, with txns[1] > txns[0]): the marginal instructions,
 * cache and branch misses and estimated cycles per transaction; the time metrics become NaN
 * (valgrind slowed the run down); r->json gets the "callgrind" object with every count. bg
 * (NULL for SQLite): a server's background processes or threads in the two runs, recorded
 * beside as "background", never in r's values; counted: what was counted, in words (or
 * NULL). A value below zero (noise in a subtraction of two runs: a miss count, the
 * background) is never used: NAN in r with its bit in r->below_zero, null in the JSON with
 * its key in "below_zero". */
void callgrind_marginal(struct run_result *r, int events, const struct callgrind_counts *cc,
                        const uint64_t *txns, const struct callgrind_counts *bg,
                        const char *counted);

/* The marginal counts per transaction stored in a run's report JSON ("callgrind":
 * {instructions_per_transaction, ..., "below_zero": [...]}) into r; NAN where missing (json
 * may be NULL) or below zero (r->below_zero says which; a negative value stored by an older
 * pgolab counts as below zero). */
void callgrind_from_json(const char *json, struct run_result *r);

#endif
