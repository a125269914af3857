/* rep: private to src/report (tables.c and the parts it calls: system_metrics.c, server_cpu.c,
 * ceiling.c, noise.c, trainers.c, verdict.c), implemented in rep.c below all of them:
 * one report being built (struct rep) and the cells it shows as CSV and JSON records (struct
 * rec), so that every table of an experiment report, the tps tables and the system metrics
 * table alike, lands in the same CSV rows and JSON cells, with its changes computed one way
 * (rep_change_cell()). Owned by tables.c (report_experiment() makes and frees them). */
#ifndef PGOLAB_REPORT_REP_H
#define PGOLAB_REPORT_REP_H

#include <stdbool.h>
#include <stdint.h>

#include "model/cells.h"
#include "model/model.h"
#include "report/common.h"
#include "report/text_table.h"
#include "stats/compare.h"
#include "util/strbuf.h"

enum report_shape;

/* One cell of a report as CSV and JSON print it. */
struct rec {
    int table;                /* 1-based table number */
    int w;                    /* workload index, -1 = every workload */
    int threads;              /* thread count, 0 = every thread count (Average / all rows) */
    const char *metric;       /* experiment_metric_key(), metrics_field_key() or "speedup" */
    int v;                    /* variant index */
    double value;             /* the number the table shows */
    double base_value;        /* the baseline's number in the same row */
    double improvement_pct;   /* value vs base_value, positive = better (NAN for the baseline) */
    double *values;           /* the rounds (owned), for a single cell; else NULL */
    int n;
    struct stats_summary sum; /* of values, when n > 0 */
    bool has_change;
    struct experiment_change ch;
    char *verdict;            /* the change as printed (owned), or NULL */
};

struct rep {
    const struct experiment_config *cfg;
    const struct experiment_result *res;
    int shape;                /* enum report_shape */
    enum report_format fmt;
    struct strbuf *out;
    int tableno;
    struct rec *recs;
    int nrecs;
    json_t *extra;            /* more top-level keys of the JSON format (owned), or NULL */
    bool trust_table;         /* struct report_options (tables.h) */
};

/* A new record of the current table (improvement_pct is NAN for the baseline, v == 0). */
struct rec *rep_rec_add(struct rep *r, int w, int threads, const char *metric, int v,
                        double value, double base_value, double improvement);
/* Attach the rounds of (c's variant, workload, threads, metric m) to c, with their summary. */
void rep_rec_values(struct rep *r, struct rec *c, enum experiment_metric m);
/* Attach a change against the baseline and its printed form (copied) to c. */
void rep_rec_change(struct rec *c, const struct experiment_change *ch, const char *verdict);
/* The change of variant v in metric m over the cells (ws[i], ts[i]), i < n, as every table
 * computes it (experiment_change_cfg(), model/precision.h: bootstrap CI and Mann-Whitney U,
 * or the paired confidence sequence under --target-ci) into ch, and its printed form
 * (experiment_change_format(); caller frees). Unusable values give "-". */
char *rep_change_cell(const struct experiment_config *cfg, const struct experiment_result *res,
                      enum experiment_metric m, int v, const int *ws, const int *ts, int n,
                      uint64_t seed, struct experiment_change *ch);
/* Free the records of r (their rounds and verdicts) and leave r without any. */
void rep_recs_release(struct rep *r);
/* Start a table: its title in text or markdown (and the next table number). */
void rep_table_title(struct rep *r, const char *title);
/* The environment's 1-minute load at the start and its cores (res->env_json; NAN / 0 when
 * unknown). verdict.c owns it. */
void rep_env_load(const struct experiment_result *res, double *load1, int *cores);
/* Render t in text or markdown, then release it. */
void rep_table_emit(struct rep *r, struct table *t);

#endif
