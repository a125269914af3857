/* tables: the report of one experiment in the seeds' shapes (000, 003, 002), as text,
 * markdown, CSV or JSON (report_experiment(); experiment_report_text(), what compare and pgo
 * print). This header is also the report layer's front door for the experiment reports: it
 * includes the headers of the other parts, so that a command needs only this one:
 *   common.h   formats, the header of a report, metric titles, CSV and JSON pieces
 *   text_table.h  the text tables
 *   versus.h   the comparison of two stored experiments (report --compare)
 *   slower.h   --fail-if-slower
 *   verdict.h  the closing verdict
 * The report layer only reads results: the structs of src/model/model.h and the cell
 * statistics of src/model/cells.h (plus the rest of src/model: the environment diff,
 * precision, the machine state, stored profiles); it never runs, records or loads an
 * experiment. src/report and src/experiment (the engine) are siblings above src/model and
 * never include each other. Output goes to a strbuf the
 * caller owns (experiment_report_text(): to a FILE). */
#ifndef PGOLAB_REPORT_TABLES_H
#define PGOLAB_REPORT_TABLES_H

#include <stdbool.h>
#include <stdio.h>

#include "model/cells.h"
#include "model/precision.h"
#include "model/model.h"
#include "report/common.h"
#include "report/versus.h"
#include "report/slower.h"
#include "report/text_table.h"
#include "report/verdict.h"
#include "util/strbuf.h"

/*
 * Shapes (rows and columns of the tables; every number is a median over the rounds):
 * - REPORT_SEED000 (seed 000, the default): per workload and metric (tps, avg and p95
 *   latency), threads | baseline | variant | % improvement | change (95% CI), plus an
 *   Average row (mean of the medians as seed 000 computes it; the change is the geometric
 *   mean of the ratios with its CI). % improvement is the change's own point estimate
 *   (report_improvement_cell(), common.h), in parentheses where the change is "~".
 * - REPORT_SEED003 (seed 003): per workload and thread count, one column per variant and the
 *   rows min / avg / max / 95%ile latency (ms) and QPS, plus a change column per variant.
 * - REPORT_SEED002 (seed 002): one table, a row per variant (first over all cells, then per
 *   workload and thread count) with speedup (x) = the baseline's median time per transaction
 *   over the variant's = the ratio of the median tps, its 95% CI, p (only where it decides
 *   the verdict: report_p_decides()) and "~" when not significant.
 * Every change uses experiment_change() (Mann-Whitney U + bootstrap CI, alpha 0.05), with a
 * bootstrap seed derived from the experiment's seed and the cell, so a report rebuilt from
 * the results store prints the same numbers as the one printed when the experiment ended.
 * The formats are common.h's.
 */
/* REPORT_RUNS is no seed's table: every measured run as a row (report/runs.h). */
enum report_shape { REPORT_SEED000, REPORT_SEED003, REPORT_SEED002, REPORT_RUNS };

/* "seed000" | "seed003" | "seed002" (or "000", "003", "002") | "runs"; -1 with a message
 * otherwise. */
int report_shape_parse(const char *s, enum report_shape *out);

/* ---- Reports */

/* Append the report of one experiment (live, or read back by experiment_load()) to out in
 * the given shape and format. The header names the experiment id when cfg->experiment_id is
 * set, says INCOMPLETE when runs are missing, and warns when the rounds are too few for any
 * difference to be significant. */
void report_experiment(struct strbuf *out, const struct experiment_config *cfg,
                       const struct experiment_result *res, enum report_shape shape,
                       enum report_format fmt);

/* What a report shows beyond its tables (all zero: the defaults). */
struct report_options {
    bool trust_table;  /* --trust-table: the "Load and trust per run" table (a row per run) in
                        * text and markdown; without it one line counts the distrusted runs.
                        * JSON always has every run's metrics ("runs_metrics"). */
    bool no_verdict;   /* leave the closing verdict (report/verdict.h) out of text and
                        * markdown: the caller prints it last itself (compare, pgo) */
};

/* report_experiment_trainers() with options (NULL: the defaults). The closing verdict
 * (report/verdict.h) ends the text and markdown reports and is "verdict" in JSON. */
void report_experiment_opts(struct strbuf *out, const struct experiment_config *cfg,
                            const struct experiment_result *res, enum report_shape shape,
                            enum report_format fmt, const char *const *trainer_of,
                            const struct report_options *opt);

/* report_experiment() of a pgo experiment whose variants have trainers (trainer_of[v], from
 * report_trainers_of(); NULL: none): the trainer matrix follows the tables in every format
 * (report/trainers.h). */
void report_experiment_trainers(struct strbuf *out, const struct experiment_config *cfg,
                                const struct experiment_result *res, enum report_shape shape,
                                enum report_format fmt, const char *const *trainer_of);

/* The seed-000-shaped tables on out: per workload, for tps, avg latency (ms) and p95 (ms):
 * threads | baseline | <variant> | % improvement | change (95% CI), each cell the median over
 * rounds with the min-max spread, plus an Average row: the mean of the per-thread medians
 * (as seed 000 computes its Average row), its % improvement and change the geometric mean
 * of the per-thread ratios; the closing verdict last (report/verdict.h). The same as
 * report_experiment() with REPORT_SEED000 and REPORT_TEXT: the report compare and pgo print
 * when an experiment ends (named for the engine, where it used to live). */
void experiment_report_text(FILE *out, const struct experiment_config *cfg,
                            const struct experiment_result *res);
/* experiment_report_text() with options: compare and pgo pass no_verdict and print the
 * verdict last (experiment_report_verdict(), report/verdict.h), after what follows the
 * tables. */
void experiment_report_text_opts(FILE *out, const struct experiment_config *cfg,
                                 const struct experiment_result *res,
                                 const struct report_options *opt);

#endif
