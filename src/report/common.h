/* common: what the reports of experiments share (the shapes of tables.c, the comparison of
 * versus.c, the --fail-if-slower lines of slower.c): the output formats, the header of a
 * report in text or markdown, the tables' metric titles, the bootstrap seed of a report cell,
 * and the pieces of the CSV and JSON formats. Reads results only (src/model/model.h,
 * cells.h); owns no state; what it writes goes to the caller's strbuf, and JSON values it
 * returns are new references. */
#ifndef PGOLAB_REPORT_COMMON_H
#define PGOLAB_REPORT_COMMON_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "model/cells.h"
#include "model/model.h"
#include "util/strbuf.h"

/* Formats: REPORT_TEXT (pipe tables that line up in a terminal), REPORT_MARKDOWN (the same
 * tables under markdown headings), REPORT_CSV (one row per table cell with every number:
 * value, rounds' summary, ratio and its CI, change %, p-value; header row first) and
 * REPORT_JSON (one object: experiment, settings, variants, environment, cells). */
enum report_format { REPORT_TEXT, REPORT_MARKDOWN, REPORT_CSV, REPORT_JSON };

/* "text" | "markdown" (or "md") | "csv" | "json"; -1 with a message otherwise (the message also
 * names html, which `pgolab report` takes before asking: report/html.h). */
int report_format_parse(const char *s, enum report_format *out);

/* ---- text and markdown */

/* Print a title line and body lines: text indents the body by two spaces, markdown makes the
 * title a heading and the body a list. */
void report_print_header(struct strbuf *out, enum report_format fmt, const char *title,
                         const char *body);

/* Table titles of the seed-000 metrics and of --measure=instructions' (in place of the tps and
 * latency tables). */
const char *report_metric_title(enum experiment_metric m);

/* list[0..n) joined with "," (workload names; thread counts), appended to sb. */
void report_join_strs(struct strbuf *sb, char *const *list, int n);
void report_join_ints(struct strbuf *sb, const int *list, int n);

/* The bootstrap seed of one report cell (workload w, variant v, row, metric m):
 * experiment_cell_seed() (model/cells.h), the formula the seed-000 tables always used, so
 * their CIs do not change and the --output file's summary has the same. */
uint64_t report_cell_seed(const struct experiment_config *cfg, int w, int v, int row,
                          enum experiment_metric m);

/* The "% improvement" cell of a change: its own point estimate (experiment_change_pct(), the
 * same ratio as the change column), "%+.2f"; in parentheses when the change has statistics
 * and is not significant (the change column says "~"), so the two never disagree; "-"
 * without data. Caller frees. */
char *report_improvement_cell(const struct experiment_change *ch);

/* Whether the change's p-value is the test that decides its verdict, so that a report may
 * print it: under --target-ci always (the confidence sequence's anytime p < 0.05 exactly when
 * the sequence excludes 1); otherwise (significant = Mann-Whitney p < alpha AND the bootstrap
 * CI excludes 1) only when the CI excludes 1: where the CI holds 1 the CI alone says "~". */
bool report_p_decides(const struct experiment_change *ch);

/* The bootstrap seed of a change over every cell of variant v in metric m: the one workload's
 * Average row's (report_cell_seed(cfg, 0, v, nthreads, m)), or with several workloads
 * report_cell_seed(cfg, nworkloads, v, nthreads + 1, m): what seed 002's "all" row and the
 * closing verdict use, so that they print the same change. */
uint64_t report_all_cells_seed(const struct experiment_config *cfg, int v,
                               enum experiment_metric m);

/* ---- CSV and JSON */

/* A CSV field (quoted when it holds a comma, quote or line break; nothing for NULL). */
void report_csv_field(struct strbuf *sb, const char *s);
/* ",NUMBER": a number with full precision, empty when not finite. */
void report_csv_num(struct strbuf *sb, double x);

/* x[0..n) as a JSON array of numbers (null where not finite). */
json_t *report_values_json(const double *x, int n);
/* A change as JSON: cells, rounds, ratio and its CI, change % and its CI, p (null where it
 * does not decide the verdict: report_p_decides()), significance and the verdict as printed. */
json_t *report_change_json(const struct experiment_change *ch, const char *verdict);
/* The head of a report's JSON for one experiment: id, kind, completeness, runs, settings
 * (with "measure" and the seed as text), variants and environment. */
json_t *report_experiment_json(const struct experiment_config *cfg,
                               const struct experiment_result *res);

#endif
