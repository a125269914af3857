/* exam: does a trainer's profile cover what is measured? The profile check (profile_check.h)
 * says a training reached the recipe's few hot functions; it cannot say that a trainer ran
 * the measured workload's own hot code (trained on oltp_point_select and measured on
 * oltp_write_only, the insert path never ran, and GCC optimizes code with no counts for
 * size). So each measured workload that is not itself a trainer runs once on the
 * instrumented build, as a training would (--train-time, --train-threads), into a profile of
 * its own: the exam profile. Its hottest functions (exact counter sums per transaction, the
 * same instrumented build, so the same function identities) are then looked up in each
 * trainer's profile; a function the trainer never ran is cold. The summary prints the table
 * and the report repeats the warning beside the gain table. The exam profile is cached like a
 * training (its stamp: the instrumented build and the training settings). The pipeline
 * (pipeline.c) owns when it runs; this file owns the exam run and the comparison. */
#ifndef PGOLAB_PGO_EXAM_H
#define PGOLAB_PGO_EXAM_H

#include <jansson.h>
#include <stdbool.h>

#include "pgo/profile_functions.h"

struct pgo_pipeline;

#define EXAM_TOP 10    /* the exam's hottest functions that are compared */
#define EXAM_TRACE 1000 /* a function with less than 1/EXAM_TRACE of the exam's counts is a
                         * trace (start-up code), never one of its hottest */

/* One of the exam's hottest functions, against one trainer. */
struct exam_row {
    char *function;          /* display name (profile_functions.h) */
    double exam_per_txn;     /* its counter sum per measured-workload transaction */
    double train_per_txn;    /* per training transaction; the raw sum when the trainer has no
                              * transactions (the suite) */
    bool cold;               /* the trainer never ran it (no counts) */
};

/* A measured workload against a trainer. */
struct pgo_exam {
    char *workload, *trainer;
    double exam_txns, train_txns; /* transactions of the exam run and of the training (0: the
                                   * suite trained) */
    struct exam_row *rows;
    int nrows, ncold;
};

/* After the training: the exam of every measured workload against every trainer, into
 * p->exams. A measured workload that is a trainer's whole mix is that trainer's own profile
 * (no run). Nothing without a measurement (--measure=off) or for a library target. 0, or -1
 * with a message (the run failed, or the profile could not be read). */
int pgo_exam_run(struct pgo_pipeline *p);

/* The summary's table: each exam's rows, the cold ones marked, and a warning line per exam
 * with cold functions. */
void pgo_exam_print(const struct pgo_pipeline *p);

/* Every exam of p and its groups as JSON (for the experiment's recorded settings,
 * settings.pgo.exam): an array of {workload, trainer, group (another group's label),
 * measured_transactions, training_transactions, cold, functions: [{function,
 * measured_per_txn, training_per_txn, cold}], warning (the summary's line, when some are
 * cold)}; empty without exams. New reference. */
json_t *pgo_exam_json(const struct pgo_pipeline *p);

/* The warning lines alone (beside the gain table): "warning: trainer T never ran N of the
 * measured W's 10 hottest functions (f, g, ...)". */
void pgo_exam_warn(const struct pgo_pipeline *p);

/* The rows of workload w's exam against a trainer's counts (both sorted, fn_counts_sort):
 * the top (at most EXAM_TOP) functions of exam by count, each with its count per transaction
 * on both sides (train_txns 0: raw sums). The display names must be set on exam's top
 * functions (fn_counts_describe). Fills e->rows, nrows, ncold. */
void exam_compare(const struct fn_counts *exam, double exam_txns, const struct fn_counts *train,
                  double train_txns, struct pgo_exam *e);

/* The top n functions of c by count, highest first, leaving out traces (EXAM_TRACE):
 * pointers into c. Returns how many (<= n); *out is caller-freed. */
int exam_top(const struct fn_counts *c, int n, const struct fn_count ***out);

/* The transactions a `pgolab bench` log reports: the sum of its "transactions:" lines. */
double exam_log_transactions(const char *log_text);

void pgo_exam_release(struct pgo_exam *e);

#endif
