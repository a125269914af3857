/* callgrind_server: --measure=instructions for a managed server (MariaDB, PostgreSQL). The
 * server runs under valgrind callgrind with cache and branch simulation, the benchmark client
 * outside it; every server process (PostgreSQL: the postmaster and what it forks) or thread
 * (MariaDB: --separate-threads=yes) writes its own file into one directory per server start.
 * This file owns the wrapper's command line and the reading of that directory: the files of
 * the benchmark's own connections, as each reported its server identity (PostgreSQL: its
 * backend's PID, the file cg.PID; MariaDB: the callgrind thread of the server thread serving
 * it, mapped by the bench child through vgdb, bench/vgdb.h) are summed as the serving cost,
 * every other file (checkpointer, WAL writer, InnoDB's purge and page cleaner, the server's
 * main thread, the start-up probe's and the table check's connections, and another client's
 * connection, named as a stranger) as background, reported beside it and never mixed in.
 * PostgreSQL's children inherit the postmaster's counts at fork, so the wrapper zeroes the counts
 * on entering fork_process (--zero-before): a backend's file then holds its own work only. The
 * connection set-up (fork, authentication, the server's account checks) is the same for both run
 * lengths of a run and cancels out of the marginal cost (src/experiment/callgrind.h). No state. */
#ifndef PGOLAB_EXPERIMENT_CALLGRIND_SERVER_H
#define PGOLAB_EXPERIMENT_CALLGRIND_SERVER_H

#include "experiment/callgrind.h"
#include "model/model.h"
#include "profile/profile.h"
#include "util/argvec.h"

/* The argv prefix a server of kind runs under, appended to a: valgrind (cfg->valgrind, else
 * "valgrind" on PATH, as an absolute path) --tool=callgrind with cache and branch simulation,
 * writing DIR/cg.PID (MariaDB: DIR/cg.PID-THREAD); reading from the client's socket
 * (PostgreSQL's secure_read, MariaDB's vio_read: recv and the wait for the next request, whose
 * count depends on timing) is left out of the counts. -1 with a message when valgrind is not found.
 * */
int callgrind_server_wrapper(struct argvec *a, const struct experiment_config *cfg,
                             enum server_kind kind, const char *dir);

/* The signal that stops a measured server of kind (server_config.stop_signal): PostgreSQL's
 * smart shutdown (SIGTERM), so that every backend ends by itself, on the same path whatever the
 * timing; 0 (the family's own) for MariaDB/MySQL. */
int callgrind_server_stop_signal(enum server_kind kind);

/* Make dir (mode 0700) for the callgrind files of a server of kind, owned by the user the
 * server runs as (server_run_user) so that it can write there. 0, or -1 with a message. */
int callgrind_server_dir(const char *dir, enum server_kind kind);

/* The server options of a measured server of kind under callgrind, into out: first the ones
 * that take timer-driven work off the counted path (PostgreSQL: autovacuum=off: an ANALYZE
 * that lands during a run invalidates the backend's caches and plans, by how much depends on
 * when it ran; track_counts=off: the table statistics a backend flushes once a second;
 * MariaDB/MySQL: no automatic statistics recalculation) and the ones valgrind needs
 * (MariaDB: a bounded buffer pool reservation, which Oracle MySQL, version "MySQL 9.7.4",
 * has no option for and does not need; both: no native AIO), then the user's (user, n:
 * --server-option values), which come later on the command line and so override them.
 * version: the variant's "FLAVOR VERSION" (NULL: unknown, taken as MariaDB). */
void callgrind_server_options(enum server_kind kind, const char *version, char *const *user,
                              int n, struct argvec *out);

/* One benchmark connection as its bench child reported it (`--server-identity`, the JSON's
 * "server_connections"): PostgreSQL: pid, its backend (the file cg.PID); MariaDB/MySQL:
 * thread, the callgrind thread number of the server thread serving it (the file
 * cg.PID.1-NN of the dump the child had made after its last event, bench/vgdb.h). */
struct callgrind_server_conn {
    int64_t pid;
    int thread;
};

/* The benchmark connections of a bench child's report JSON into *out (n of them; the caller
 * frees it): each must name its backend (PostgreSQL) or callgrind thread (MariaDB/MySQL).
 * -1 with a message naming the driver when one does not, or when the child reconnected (the
 * new connection's identity is unknown). */
int callgrind_server_conns(const char *report_json, enum server_kind kind,
                           struct callgrind_server_conn **out, int *n);

/* How many of the background files that served another client's connection are named. */
#define CALLGRIND_STRANGERS_MAX 8

/* What callgrind_server_read found in a directory. */
struct callgrind_server_counts {
    struct callgrind_counts serving;     /* the benchmark's connections */
    struct callgrind_counts background;  /* everything else the server ran */
    int nserving, nbackground;           /* how many files each */
    /* of the background, the files that served a connection not the benchmark's (they name
     * the marker): how many, and the first CALLGRIND_STRANGERS_MAX as "PID 123" (PostgreSQL)
     * or "thread 12" (MariaDB/MySQL) */
    int nstrangers;
    char strangers[CALLGRIND_STRANGERS_MAX][32];
};

/* Read the callgrind files in dir of a server of kind into out: the files of the benchmark's
 * connections conns[0..nconns) as the serving cost, every other file of the run as background
 * (PostgreSQL: every cg.* file; MariaDB/MySQL: the files of the dump, cg.PID.1-*; the files of
 * the server's exit are after the run). With profile non-NULL, the serving files'
 * instructions per function too (profile_callgrind_read, merged; the caller releases it).
 * -1 with a message naming the file when a connection's file is missing, a file cannot be
 * read or has no totals (cut short: a server killed before it wrote them). */
int callgrind_server_read(const char *dir, enum server_kind kind,
                          const struct callgrind_server_conn *conns, int nconns,
                          struct callgrind_server_counts *out, struct profile_counts *profile);

/* Whether the callgrind output text names function fn as a defined name ("fn=(N) FN" or
 * "cfn=(N) FN" with name compression, "fn=FN" without); a name ending in '(' matches any C++
 * signature of it ("do_command(" matches "do_command(THD*, bool)"). */
bool callgrind_text_names(const char *text, const char *fn);

/* The function whose presence marks a process or thread that served a connection (the
 * benchmark's or another client's) on a server of kind. */
const char *callgrind_server_marker(enum server_kind kind);

#endif
