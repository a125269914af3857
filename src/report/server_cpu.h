/* report/server_cpu: the managed server's CPU time per transaction split into user and system
 * time, in a time-mode experiment report (tables.c calls it after every shape's tables): per
 * workload one table, per thread count a row for user and a row for system microseconds per
 * transaction (METRIC_SERVER_USER_US, METRIC_SERVER_SYS_US of model/cells.h), the columns of
 * the tps table (threads | baseline | variants | % improvement | change (95% CI), medians over
 * the rounds with their min-max spread, an Average row per part), each change computed as the
 * tps table's (rep_change_cell(): experiment_change_cfg()). Under each table one line says
 * that PGO and BOLT can move only the user time. Shown only when some run has the split (a
 * managed server's runs recorded with it; remote servers, SQLite and runs recorded before the
 * split have none). Its cells are CSV and JSON records like the other tables' (metric =
 * experiment_metric_key(): "server_user_us_per_txn", "server_sys_us_per_txn"); the JSON also
 * gets "server_cpu_note", the line. Reads results only; owns no state. */
#ifndef PGOLAB_REPORT_SERVER_CPU_H
#define PGOLAB_REPORT_SERVER_CPU_H

struct rep;

/* The line under each table (and the JSON's "server_cpu_note"). */
#define REPORT_SERVER_CPU_NOTE                                                               \
    "PGO and BOLT change the server's code: only its user time can move; a change in system " \
    "time is the machine or the I/O, not the build."

/* Append the server CPU tables (text, markdown) and records (CSV, JSON) of r's experiment;
 * nothing when no run has the server's user / system split. */
void report_server_cpu(struct rep *r);

#endif
