/* step_gains: "what each step added" of an experiment with several variants that build on each
 * other (pgo, lto, bolt, pgo+lto, pgo+bolt): a line per variant with its tps change (with
 * --measure=instructions: instructions per transaction) over the variant it adds one step to,
 * pooled over every workload and thread count, with the 95% CI; then the same block for the
 * server's user CPU time per transaction (time runs of a managed server: the part a build can
 * change) or the estimated cycles per transaction (instruction runs: where a layout step such
 * as BOLT shows, which leaves the instruction count nearly as it was), when runs have them.
 * The step a variant adds is read from its name: "a+b" adds b to variant a when a was
 * measured, any other variant adds itself to the baseline (variant 0). Reads results only. */
#ifndef PGOLAB_REPORT_STEP_GAINS_H
#define PGOLAB_REPORT_STEP_GAINS_H

#include "model/model.h"
#include "util/strbuf.h"

/* The variant that variant v builds on (see above): an index < cfg->nvariants, 0 for the
 * baseline; -1 for the baseline itself. */
int report_step_base(const struct experiment_config *cfg, int v);

/* Append the "what each step added" block to out (nothing with fewer than 3 variants). */
void report_steps(struct strbuf *out, const struct experiment_config *cfg,
                  const struct experiment_result *res);

#endif
