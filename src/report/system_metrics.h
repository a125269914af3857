/* report/system_metrics: the system metrics part of an experiment report (tables.c calls it after
 * every shape's tables in time mode): per cell (variant, workload, thread count) the median
 * over the cell's runs with its spread of the seed-002 summary line, speedup (x) against the
 * baseline (ratio of median tps), intr/s, ctxsw/s, us/sys/idle/iowait/steal %, ctxsw/txn and
 * CPU us/txn of the client and the server, plus how many of the cell's runs are flagged;
 * then the load and trust of every run (run queue, other work's CPU, 1-minute load, steal,
 * iowait and why a run is distrusted: src/metrics/metrics.h's thresholds). Its cells are CSV
 * and JSON records like the other tables' (metric = metrics_field_key(), and
 * "distrusted_runs"); the JSON also gets "runs_metrics", every run's metrics. Reads results
 * only. */
#ifndef PGOLAB_REPORT_SYSTEM_METRICS_H
#define PGOLAB_REPORT_SYSTEM_METRICS_H

struct rep;

/* Append the metrics tables (text, markdown) and records (CSV, JSON) of r's experiment. When
 * no run has metrics, one line says so (and why, from the first run's note). */
void report_metrics(struct rep *r);

#endif
