/* verdict: the closing verdict of an experiment report, the bottom line printed last by
 * `compare`, `pgo` and `report`: per variant against the baseline, the gain in the primary
 * metric (tps; instructions per transaction under --measure=instructions) over every cell
 * pooled, with its 95% CI, and in the secondary metrics where measured (average latency, CPU
 * time per transaction; estimated cycles), how many cells are significant, the noise that
 * limited it (with --exclude-distrusted: how many distrusted runs were left out of every
 * number), and when nothing was resolved the one thing to do next. Every gain is
 * experiment_change_cfg() (model/precision.h), the estimator of the tables' change column and
 * of their Average and "all" rows, with the same bootstrap seed, so the verdict never
 * contradicts a table. Reads results only; owns no state beyond what report_verdict_compute()
 * allocates (report_verdict_release() frees it); output goes to the caller's strbuf. */
#ifndef PGOLAB_REPORT_VERDICT_H
#define PGOLAB_REPORT_VERDICT_H

#include <stdbool.h>
#include <stdio.h>

#include <jansson.h>

#include "model/cells.h"
#include "model/model.h"
#include "report/common.h"
#include "util/strbuf.h"

#define VERDICT_GAINS 3   /* the primary metric and at most two secondary ones */

/* What to do next about a variant whose gain was not resolved. */
enum verdict_next {
    VERDICT_RESOLVED,      /* a significant change (pooled or in some cell): nothing to add */
    VERDICT_MORE_ROUNDS,   /* rounds_needed rounds would resolve a change of the observed size */
    VERDICT_STATISTICS,    /* too few rounds for any statistics: rounds_needed at least */
    VERDICT_INSTRUCTIONS,  /* the change is below what time can resolve on this noise */
    VERDICT_BUSY,          /* the machine was busy (load or distrusted runs): rerun */
    VERDICT_SAME,          /* instruction counts: no difference to resolve */
};

/* One gain: metric m of the variant against the baseline over every cell pooled. */
struct verdict_gain {
    enum experiment_metric m;
    struct experiment_change ch;
};

struct verdict_variant {
    int v;                            /* variant index (>= 1) */
    struct verdict_gain gain[VERDICT_GAINS];  /* [0]: the primary metric */
    int ngain;
    int cells;                        /* cells with data for both in the primary metric */
    int better, worse;                /* of them significantly better / worse */
    int rounds;                       /* paired rounds (the fewest of any cell) */
    double noise_pct;                 /* the largest CV of one run over the primary cells
                                       * (percent; NAN: fewer than 2 rounds) */
    enum verdict_next next;
    int rounds_needed;                /* VERDICT_MORE_ROUNDS / _STATISTICS: total rounds */
};

struct verdict {
    int nvariants;                    /* entries of vars: every variant but the baseline */
    struct verdict_variant *vars;     /* owned */
    int runs_metrics, distrusted;     /* runs with system metrics, of them distrusted (both
                                       * counting the runs --exclude-distrusted left out) */
    bool exclude;                     /* --exclude-distrusted: the gains are without them */
    int excluded;                     /* the runs it left out (res->excluded) */
    double load1;                     /* the 1-minute load at the start (NAN unknown) */
    int cores;                        /* the machine's cores (0 unknown) */
    bool busy;                        /* load1 >= cores / 2 (the header's "busy machine") or
                                       * a quarter of the runs or more distrusted */
    bool max_time_stopped;            /* --target-ci: --max-time ended the rounds (not the
                                       * target, --max-rounds or an interruption) */
};

/* Compute the verdict of every variant of res against the baseline. The pooled gain of the
 * primary metric uses report_all_cells_seed() (common.h), the seed of the Average row of a
 * single workload and of seed 002's "all" row, so its numbers are those rows'. The next step of an
 * unresolved variant, in this order: VERDICT_BUSY on a busy machine from which
 * --exclude-distrusted left runs out; VERDICT_STATISTICS without a CI (the rounds a CI needs:
 * stats_min_rounds(0.05), or STATS_CS_MIN_ROUNDS under --target-ci); VERDICT_SAME in
 * instruction mode; VERDICT_BUSY on a busy machine; else the rounds a change of the observed
 * size needs with 80% power (stats_rounds_needed() of the pooled CV, Mann-Whitney; under
 * --target-ci machine_rounds_for() of the per-round log ratios' sd): VERDICT_MORE_ROUNDS when
 * that is at most max(200, 10 x the rounds run), else VERDICT_INSTRUCTIONS. */
void report_verdict_compute(const struct experiment_config *cfg,
                            const struct experiment_result *res, struct verdict *out);
void report_verdict_release(struct verdict *vd);

/* The verdict block (text or markdown; nothing in CSV) on out: a title line, then per variant
 * its gains with their CIs and the significant cells, its noise, and the next step when not
 * resolved (a few lines: indented in text; in markdown a "### " heading and a flat "- " list,
 * which the HTML page's md_to_html renders). */
void report_verdict_format(struct strbuf *out, const struct experiment_config *cfg,
                           const struct verdict *vd, enum report_format fmt);

/* The verdict as JSON (new reference): {"variants": [{"variant", "gains": [{"metric",
 * "change": report_change_json()}], "cells", "cells_better", "cells_worse", "rounds",
 * "noise_cv_pct", "next", "rounds_needed", "text"}], "runs_with_metrics", "distrusted_runs",
 * "busy"}, and with --exclude-distrusted "distrusted_runs_left_out". */
json_t *report_verdict_json(const struct experiment_config *cfg, const struct verdict *vd);

struct rep;
/* The verdict of the report being built (rep.h): its block in text and markdown, "verdict"
 * in the JSON (nothing in CSV); nothing without a variant besides the baseline. tables.c
 * calls it last. */
void report_verdict_rep(struct rep *r);

/* report_verdict_compute() and _format() in text to out: what compare and pgo print last
 * (nothing without a variant besides the baseline). */
void experiment_report_verdict(FILE *out, const struct experiment_config *cfg,
                               const struct experiment_result *res);

#endif
