/* report/noise: the noise and precision part of an experiment report (tables.c calls it
 * after every shape's tables in time mode, before the metrics): per tps cell of a variant
 * against the baseline, the rounds, the CV of one run of each, the change those rounds could
 * detect, the CI half-width of the ratio and, under --target-ci, whether the target was
 * reached; then one plain sentence on the noise (text and markdown: in the default shape,
 * seed000, only). The JSON format gets the same as
 * "precision" (experiment_precision_json(), src/model/precision.h), CSV the same
 * numbers as rows of their own table in every shape. Reads results only. */
#ifndef PGOLAB_REPORT_NOISE_H
#define PGOLAB_REPORT_NOISE_H

struct rep;

/* Append the precision table (text, markdown), its rows (CSV) or the "precision" key (JSON)
 * of r's experiment. */
void report_precision(struct rep *r);

#endif
