/* pace: the measurement's progress off a terminal (a log file, CI, nohup), where the status
 * line of util/progress.h draws nothing. experiment_run() prints plain lines (progress_log())
 * at this pace: one when a round ends, and within a round longer than the interval one when
 * a run starts, but never two within the interval (a minute; the test knob
 * PGOLAB_PROGRESS_EVERY=SECONDS changes it). So a log gets at most one line per round or per
 * interval, whichever is rarer, and is never silent for longer than the interval or one run.
 * Owns no state: struct pace is the caller's. */
#ifndef PGOLAB_EXPERIMENT_PACE_H
#define PGOLAB_EXPERIMENT_PACE_H

#include <stdbool.h>

#include "util/strbuf.h"

#define PACE_INTERVAL_DEFAULT_S 60.0
#define PACE_KNOB "PGOLAB_PROGRESS_EVERY"

/* Times are wall_time() seconds. */
struct pace {
    double interval_s;  /* least time between two lines, >= 0 */
    double last_s;      /* when the last line was printed (or the pace began) */
    double round_s;     /* when the current round began */
};

/* The interval: PGOLAB_PROGRESS_EVERY when set to a number of seconds >= 0, else
 * PACE_INTERVAL_DEFAULT_S. */
double pace_interval(void);

/* Begin at now (a line was just printed, e.g. the workload's first) with interval_s. */
void pace_begin(struct pace *p, double now, double interval_s);

/* A round begins at now. */
void pace_round(struct pace *p, double now);

/* Whether a line is due at now: at a round's end (round_end) once the interval has passed
 * since the last line; at a run's start once it has passed since the last line and since the
 * round began (a long round). Pure. */
bool pace_due(const struct pace *p, double now, bool round_end);

/* A line was printed at now. */
void pace_printed(struct pace *p, double now);

/* s seconds as "45s", "3m10s", "1h02m" (rounded; negative or NAN as "0s"), appended to sb. */
void pace_add_duration(struct strbuf *sb, double s);

#endif
