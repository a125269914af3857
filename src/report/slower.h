/* slower: --fail-if-slower=PCT of compare, pgo and report: the cells where a variant is
 * significantly slower than the baseline (the tables' verdict) by more than PCT percent, or,
 * for two stored experiments (report --compare), where a cell of B is significantly slower
 * than the same cell of A; the verdict goes to stderr and the command exits 3 when some cell
 * is slower. In instruction mode "slower" means significantly more instructions per
 * transaction. Reads results only; owns no state. */
#ifndef PGOLAB_REPORT_SLOWER_H
#define PGOLAB_REPORT_SLOWER_H

#include "model/model.h"
#include "util/strbuf.h"

/* --fail-if-slower=pct (percent >= 0): the tps cells (each workload and thread count, and
 * each workload's Average over thread counts) where a variant is significantly slower than
 * the baseline (the tables' verdict) by more than pct percent, i.e. change < -pct. Appends
 * one line per such cell to why ("B vs A, oltp_read_only, 1 thread: -25.3% (95% CI ...)")
 * and returns how many there are. */
int report_slower(const struct experiment_config *cfg, const struct experiment_result *res,
                  double pct, struct strbuf *why);

/* The --fail-if-slower=pct check of compare and pgo: report_slower(), with the verdict on
 * stderr (each slower cell, or one line saying none is). 1 when some cell is slower (the
 * command then exits 3), else 0. */
int report_fail_if_slower(const struct experiment_config *cfg, const struct experiment_result *res,
                          double pct);

/* The same for two stored experiments: cells where B is significantly slower than A (tps,
 * or instructions per transaction when both measured instructions; 0 when they differ). */
int report_compare_slower(const struct experiment_loaded *a, const struct experiment_loaded *b,
                          double pct, struct strbuf *why);
/* report_compare_slower() with the verdict on stderr; 1 when some cell is slower, else 0. */
int report_compare_fail_if_slower(const struct experiment_loaded *a,
                                  const struct experiment_loaded *b, double pct);

#endif
