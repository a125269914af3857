/* stored: what `pgolab report` writes of experiments read back from the results store (the
 * caller loads them, cli/cmd_report.c): one experiment in a shape and format (a pgo experiment's
 * trainer matrix after its tables), its CPU profiles as data, one HTML page, or two
 * experiments compared; and --profile's text after the report. */
#ifndef PGOLAB_REPORT_STORED_H
#define PGOLAB_REPORT_STORED_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "model/model.h"
#include "report/common.h"
#include "report/tables.h"
#include "util/strbuf.h"

/* What to write. */
struct report_stored_request {
    enum report_format fmt;   /* text, markdown, csv or json; REPORT_TEXT with html, folded */
    enum report_shape shape;
    bool html;                /* --format=html: one page (chartjs: Chart.js's source) */
    bool folded;              /* --format=folded: only --profile's stacks, printed afterwards */
    bool profile;             /* --profile */
    bool trust_table;         /* --trust-table (struct report_options) */
    const char *results;      /* the results file (its profiles directory) */
    int64_t id;               /* the experiment a is */
    const char *chartjs;
};

/* The report of a (b NULL), or of b against a, into out. With --profile and markdown, csv or
 * json the profiles go into out too (csv, json: they alone) and *profile_done is set. 0; 1 when
 * a profile file was missing or truncated (said, the rest written); -1 after a message when
 * --profile asks for profiles a does not have. */
int report_stored(struct strbuf *out, const struct report_stored_request *rq,
                  const struct experiment_loaded *a, const struct experiment_loaded *b,
                  bool *profile_done);

/* Whether the caller prints the closing verdict itself, after --profile's text (one
 * experiment, text, --profile): report_stored() then leaves it out so that it stays last. */
bool report_stored_verdict_after(const struct report_stored_request *rq, bool compare);

/* --profile's text after the report on out: a's profiles side by side, or (rq->folded) the
 * folded stacks. 0; 1 after a message when a has no profiles or a file was missing or
 * truncated (the rest printed). */
int report_stored_profiles_text(FILE *out, const struct report_stored_request *rq,
                                const struct experiment_loaded *a);

#endif
