/* calibration: the statistics of an A/A experiment (`pgolab calibrate`: one library measured
 * as two variants, A and A'): per workload, thread count and seed-000 metric, the noise of one
 * run (CV), the A/A verdict, the change the rounds can detect and the rounds a given change
 * needs (stats_calibrate(), src/stats/compare.h), from the experiment's runs. A pure function
 * of a config and a result; report/calibrate.h prints the cells. The caller owns them. */
#ifndef PGOLAB_MODEL_CALIBRATION_H
#define PGOLAB_MODEL_CALIBRATION_H

#include <stdbool.h>

#include "model/cells.h"
#include "model/model.h"
#include "stats/compare.h"

#define CALIBRATE_ALPHA STATS_ALPHA_DEFAULT
#define CALIBRATE_POWER STATS_POWER_DEFAULT

/* One cell: a metric at one workload and thread count. */
struct calibrate_cell {
    int w, threads;
    enum experiment_metric m;
    int n1, n2;                 /* runs of A and of A' */
    bool ok;                    /* c is filled (n1, n2 >= 2) */
    struct stats_calibration c;
};

/* The cells of the A/A experiment res (variants 0 and 1): every workload x thread count x
 * seed-000 metric, *ncells of them (heap array, the caller frees it). A cell with fewer than
 * 2 runs on a side is not ok. Each cell's bootstrap is seeded from cfg->seed. */
struct calibrate_cell *calibration_cells(const struct experiment_config *cfg,
                                         const struct experiment_result *res, int *ncells);

#endif
