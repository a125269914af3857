/* trainers: the trainer matrix of a PGO experiment with several trainers (seed 000 found that
 * the training workload matters): a row per trainer, a column per measured workload plus an
 * overall column, each cell the tps change of that trainer's pgo build against the baseline
 * with its 95% CI, the best trainer marked per column. Reads the results only. */
#ifndef PGOLAB_REPORT_TRAINERS_H
#define PGOLAB_REPORT_TRAINERS_H

#include "model/cells.h"
#include "model/model.h"
#include <jansson.h>
#include "util/strbuf.h"

/* Append the matrix to out. trainer_of[v] names the trainer of variant v (NULL: not a pgo
 * build; those variants are left out). A trainer that is, or mixes in, the measured workload
 * gets a mark and a note: a profile trained on the exam flatters the result. Nothing is
 * appended when fewer than two variants have a trainer. */
void report_trainers(struct strbuf *out, const struct experiment_config *cfg,
                     const struct experiment_result *res, const char *const *trainer_of);

/* The matrix as data (the HTML heat map's, and --format=json's "trainers"): {workloads: [the
 * workloads..., "overall"], rows: [{trainer, variant, cells: [the change as
 * report_change_json() writes it plus "exam", or null]}]}; JSON null with fewer than two
 * trainers. */
json_t *report_trainers_json(const struct experiment_config *cfg,
                             const struct experiment_result *res, const char *const *trainer_of);

struct rep;
/* The matrix in the report being built (report_experiment_trainers()): text and markdown as
 * report_trainers(); CSV and JSON as a table of its own, a cell per (trainer's variant,
 * workload, or "all" for overall) with the change; JSON also gets "trainers" (above). */
void report_trainers_rep(struct rep *r, const char *const *trainer_of);

/* The tps change of variant v against the baseline over the cells of workload w (-1: every
 * workload): per workload the geometric mean over thread counts (experiment_change(), with a
 * bootstrap seed from the experiment's seed and the cell). What each matrix cell shows; the
 * HTML report's heat map uses it too. 0, or -1 when the values are unusable. */
int report_trainer_change(const struct experiment_config *cfg, const struct experiment_result *res,
                          int v, int w, struct experiment_change *ch);

/* The trainer of each variant of a stored pgo experiment, as pgo_measure() named them: with
 * two or more trainers in its settings ("pgo": {"train": [...]}), the variants "pgo-TRAINER"
 * (or "pgo+lto-TRAINER" when there is no plain pgo build) get TRAINER, the others NULL. An
 * array of nvariants pointers into the variants' names (caller frees the array only). */
const char **report_trainers_of(const struct experiment_loaded *l);

/* The warnings a pgo experiment recorded from its exam (settings "pgo": {"exam": [{...,
 * "warning": "..."}]}: a trainer that never ran some of a measured workload's hottest
 * functions), one indented line each into out, as `pgolab pgo` printed them after its gain
 * tables; nothing when there are none. */
void report_exam_warnings(struct strbuf *out, const struct experiment_loaded *l);

/* true if trainer (a workload, a mix "a+b", or "suite") includes workload. */
bool trainer_includes(const char *trainer, const char *workload);

#endif
