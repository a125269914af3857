/* machine: how busy the machine was during an experiment, compared with its latest
 * calibration, and what a calibration recommends for a target precision. A layer beside
 * precision.h (pure functions of configs and results; finding the calibration in the results
 * store is machine_calibration_find() of experiment/record.h, as it loads an experiment);
 * used by calibrate (it prints the state and the recommendation), compare
 * (--from-calibration; the warning) and the reports (report/noise.c).
 *
 * A calibration's machine state is computed from its recorded runs (their system metrics and
 * tps, stored in the results database by `pgolab calibrate`), so nothing beyond the runs is
 * stored and an older calibration works too. */
#ifndef PGOLAB_MODEL_MACHINE_H
#define PGOLAB_MODEL_MACHINE_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "model/model.h"
#include "util/strbuf.h"

/* The state of the machine over an experiment's time-mode runs: medians over the runs with
 * metrics (NAN without), and the pooled CV of one run's tps (root mean square over the cells
 * (variant, workload, threads) of sd / mean). */
struct machine_state {
    int64_t experiment_id;  /* the experiment it is of (0 = this one, not recorded) */
    double created_at;      /* when that experiment began, s since the epoch */
    int nruns;              /* runs with metrics */
    double load1;           /* 1-minute load average at the end of a run */
    double steal_pct;       /* steal, % of the machine's CPU time */
    double other_pct;       /* other work's CPU, % of the machine */
    double cv_tps_pct;      /* CV of one run's tps, % (NAN with < 2 runs per cell) */
    double client_share;    /* CPU the client got per second of its run (client_cpu_s /
                             * wall_s), over the runs of a single-threaded SQLite client (which
                             * is always runnable: less than 1 CPU is time the scheduler gave
                             * to others); NAN without such runs */
};

/* Thresholds of "busier than at calibration" (any one is enough): the load average higher by
 * more than MACHINE_LOAD_MORE (absolute) and by a quarter; steal or other work higher by more
 * than MACHINE_PCT_MORE percentage points; the CV of tps at least 1.5 times the calibration's
 * and higher by more than 1 point; the client's CPU share below MACHINE_SHARE_LESS of the
 * calibration's (a co-tenant on the client's CPU). Chosen to ignore the wobble of a quiet machine
 * (load1 moves
 * by ~0.3 between runs of one experiment here) and to name a co-tenant that takes a core. */
#define MACHINE_LOAD_MORE 0.5
#define MACHINE_PCT_MORE 5.0
#define MACHINE_SHARE_LESS 0.75

/* The state of res's runs (of cfg) into *out (experiment_id 0, created_at res->started_at). */
void machine_state_of(const struct experiment_config *cfg, const struct experiment_result *res,
                      struct machine_state *out);

/* Is now busier than cal? The reasons ("load1 2.4 vs 0.3 at calibration") are appended to
 * why (may be NULL), "; "-separated. Returns the number of reasons (0 = not busier; also when
 * a quantity is unknown on either side). */
int machine_busier(const struct machine_state *cal, const struct machine_state *now,
                   struct strbuf *why);

/* The report's part: NULL cal -> JSON null / no text. Else JSON {"calibration_experiment",
 * "busier", "reasons": [...], "now": {...}, "calibration": {...}} (each state: "load1",
 * "steal_pct", "other_pct", "cv_tps_pct", "client_cpu_share", "runs"), and in text one line: a
 * WARNING naming the
 * reasons, or that the machine was no busier than at calibration N. */
json_t *machine_busier_json(const struct machine_state *cal, const struct experiment_config *cfg,
                            const struct experiment_result *res);
void machine_busier_text(struct strbuf *out, const struct machine_state *cal,
                         const struct experiment_config *cfg, const struct experiment_result *res);

/* What a calibration recommends for a 95% CI half-width of target_pct on the tps ratio:
 * for each run length L (seconds; the candidates up to the calibration's --time), the sd of
 * the per-round log ratio A'/A of runs cut to their first L seconds (from the per-second
 * intervals every run records; the worst cell), the rounds n the confidence sequence needs
 * (the least n >= STATS_CS_MIN_ROUNDS with sd * stats_cs_factor(n, 0.05, n) <= log(1 +
 * target/100): a sequence tuned for n, i.e. --max-rounds=2n), and the wall time
 * n x variants x (L + the per-run overhead measured between the calibration's runs). The
 * recommendation is the L with the least wall time. */
struct machine_recommendation {
    bool ok;                /* false: too little data (why says so) */
    char why[160];
    double target_pct;
    double run_s;           /* recommended --time */
    int rounds;             /* expected rounds to the target */
    int max_rounds;         /* --max-rounds to give (2 x rounds: the sequence is tuned for half
                             * the cap) */
    double sd_log;          /* sd of the per-round log ratio at run_s */
    double overhead_s;      /* per run, besides --time */
    double wall_s;          /* expected measurement wall time */
    bool placement;         /* the calibration ran with CPU placement */
    char placement_desc[300];
    int ncand;              /* candidates considered */
    struct { double run_s, sd_log, wall_s; int rounds; } cand[16];
};

/* Compute the recommendation from a calibration's config and runs. Never fails: ok false with
 * why when it cannot (fewer than 3 paired rounds, no per-second intervals). */
void machine_recommend(const struct experiment_config *cfg, const struct experiment_result *res,
                       double target_pct, struct machine_recommendation *out);

/* The rounds the sequence needs for a per-round log-ratio sd of sd_log to reach target_pct
 * (the formula above); INT32_MAX when MACHINE_ROUNDS_MAX rounds are not enough. */
#define MACHINE_ROUNDS_MAX 100000
int machine_rounds_for(double sd_log, double target_pct);

#endif
