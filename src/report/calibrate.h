/* calibrate: `pgolab calibrate`'s report of an A/A experiment (one library measured as two
 * variants, A and A'): per workload, thread count and metric the noise of one run (CV), the
 * A/A verdict, the change --rounds rounds can detect and the rounds a 5% / 2% change needs
 * (struct calibrate_cell, computed by model/calibration.h), then the machine state and the
 * recommendation for --target-ci; as text (what calibrate prints) and as the "calibration"
 * object of its --output JSON. Reads results only (src/model); the caller owns the cells. */
#ifndef PGOLAB_REPORT_CALIBRATE_H
#define PGOLAB_REPORT_CALIBRATE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "model/calibration.h"
#include "model/model.h"

/* The text report on out: the header (library, rounds, --target-ci's outcome), the table of
 * the cells, what the rows say together, a closing line per tps cell in plain words, the
 * machine state and the recommendation for --target-ci (its value, else 2%). */
void report_calibrate_text(FILE *out, const struct experiment_config *cfg,
                           const struct experiment_result *res,
                           const struct calibrate_cell *cells, int ncells);

/* The "calibration" object of calibrate's --output JSON: alpha, power, the cells, the machine
 * state and the recommendation (new reference; non-finite numbers are null). */
json_t *report_calibrate_json(const struct experiment_config *cfg,
                              const struct experiment_result *res,
                              const struct calibrate_cell *cells, int ncells);

#endif
