/* report/ceiling: what a build could change, beside what it did, in a time-mode experiment
 * report of a managed server (tables.c calls it after the server CPU tables): a compiler
 * (PGO, LTO, BOLT) changes the server's code and so only the server's user CPU time; the
 * client, the kernel's work for the server and the waiting stay. Per workload one table, per
 * thread count a row per variant: the time a transaction holds (X = min(threads, cores) / tps:
 * a thread's time per transaction, or with more threads than cores the CPU time the machine
 * gives one), the server's user time in it (u, median over the rounds) and its share u / X,
 * the ceiling X / (X - u) - 1 (the tps gain if the server's code took no time at all), and for
 * each variant against the baseline the change in u, the tps change that change alone would
 * give, X_b / (X_b + du) - 1, and the measured tps change (the tps table's estimate and
 * verdict, rep_change_cell()). So "pgo cut the server's user time by 8% but that is 17% of a
 * transaction: expect +1.4%, measured ~" is one row. Shown only when every variant's runs have
 * the server's user / system split (model/cells.h METRIC_SERVER_USER_US). CSV and JSON get its
 * cells as records: "server_user_share_pct", "ceiling_tps_pct" and, per variant,
 * "expected_tps_change_pct". Reads results only; owns no state. */
#ifndef PGOLAB_REPORT_CEILING_H
#define PGOLAB_REPORT_CEILING_H

#include <stdbool.h>

struct rep;

/* The line under each table (and the JSON's "ceiling_note"). */
#define REPORT_CEILING_NOTE                                                                  \
    "X = min(threads, cores) / tps, the time a transaction holds; u = the server's user CPU " \
    "time per transaction, the only part a build changes; ceiling = X / (X - u) - 1, the tps " \
    "gain if the server's code took no time; expected = X_b / (X_b + du) - 1, what the "      \
    "variant's change of u alone would give. A measured change far from the expected one "   \
    "is noise or a change outside the server's code (client, kernel, I/O)."

/* The ceiling model's two formulas (units: any, the same for x and u / du). The tps gain, as
 * a fraction, if a transaction holding x lost its server user time u: x / (x - u) - 1 (NAN
 * unless 0 <= u < x); the tps change a change du of that time alone gives: x / (x + du) - 1
 * (NAN unless x > 0 and x + du > 0). */
double report_ceiling_gain(double x, double u);
double report_expected_change(double x, double du);

/* Append the ceiling tables (text, markdown) and records (CSV, JSON) of r's experiment;
 * nothing without a managed server's user-time split or with one variant. */
void report_ceiling(struct rep *r);

#endif
