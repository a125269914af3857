/* report/profile_diff: the CPU profiles of a --profile experiment as data and as a document, for
 * `pgolab report --profile --format=markdown|csv|json` (text is profile/side.c's
 * side-by-side, printed by experiment_profile_report). Per workload, thread count and variant
 * against the baseline, the rows are profile_diff_make()'s: the union of both sides' top-N
 * DSOs and functions, largest change first, each side's pooled share, lowest and highest
 * round, rank, stability mark and (instruction profiles) instructions per transaction.
 *   markdown  one section per pair, a DSO table and a function table (appended to the
 *             markdown report)
 *   csv       one row per DSO or function per pair (kind = dso | function), header first;
 *             columns in docs/results-format.md
 *   json      the experiment's head (report_experiment_json) plus "profiles": one object per
 *             pair with "dsos" and "functions"
 * Reads the folded files only; writes to the caller's strbuf. */
#ifndef PGOLAB_REPORT_PROFILE_DIFF_H
#define PGOLAB_REPORT_PROFILE_DIFF_H

#include "report/common.h"

/* Append the profiles of cfg/res (folded files in dir) to out in fmt (not REPORT_TEXT), `top`
 * rows per side. A file that cannot be read is a warning on stderr and that run is left out;
 * returns how many (0 = all read), as experiment_profile_each. */
int report_profiles(struct strbuf *out, enum report_format fmt,
                    const struct experiment_config *cfg, const struct experiment_result *res,
                    const char *dir, int top);

#endif
