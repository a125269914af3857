/* calibration: the A/A cells of a calibration (see calibration.h). Owns no state. */
#include "model/calibration.h"
#include "util/util.h"

#include <stdint.h>
#include <stdlib.h>

struct calibrate_cell *calibration_cells(const struct experiment_config *cfg,
                                         const struct experiment_result *res, int *ncells)
{
    int n = cfg->nworkloads * cfg->nthreads * METRIC_COUNT, k = 0;
    struct calibrate_cell *cells = xcalloc((size_t)n, sizeof(*cells));
    for (int w = 0; w < cfg->nworkloads; w++)
        for (int t = 0; t < cfg->nthreads; t++)
            for (int m = 0; m < METRIC_COUNT; m++, k++) {
                struct calibrate_cell *c = &cells[k];
                struct stats_opts so = STATS_OPTS_DEFAULT;
                c->w = w;
                c->threads = cfg->threads[t];
                c->m = (enum experiment_metric)m;
                double *a = experiment_cell_values(res, 0, w, c->threads, c->m, &c->n1);
                double *b = experiment_cell_values(res, 1, w, c->threads, c->m, &c->n2);
                /* a distinct, reproducible bootstrap seed per cell */
                so.seed = cfg->seed ^ (0x9E3779B97F4A7C15ull * (uint64_t)(k + 1));
                c->ok = c->n1 >= 2 && c->n2 >= 2 &&
                        stats_calibrate(a, c->n1, b, c->n2, CALIBRATE_POWER, &so, &c->c) == 0;
                free(a);
                free(b);
            }
    *ncells = n;
    return cells;
}
