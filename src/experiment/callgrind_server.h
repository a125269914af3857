/* callgrind_server: --measure=instructions for a managed server (MariaDB, PostgreSQL). The
 * server runs under valgrind callgrind with cache and branch simulation, the benchmark client
 * outside it; every server process (PostgreSQL: the postmaster and what it forks) or thread
 * (MariaDB: --separate-threads=yes) writes its own file into one directory per server start.
 * This file owns the wrapper's command line and the reading of that directory: the files of
 * the processes or threads that served the client (PostgreSQL: a backend that ran a
 * statement, the file names PortalRun; MariaDB: a connection thread, the file names
 * do_command) are summed as the serving cost, every other file (checkpointer, WAL writer,
 * autovacuum, InnoDB's purge and page cleaner, the server's main thread, the backend of a
 * start-up probe that ran no statement) as background, reported beside it and never mixed
 * in. PostgreSQL's children inherit the postmaster's counts at fork, so the wrapper zeroes the
 * counts on entering fork_process (--zero-before): a backend's file then holds its own work
 * only. The connection set-up (fork, authentication, the server's account checks) is the same
 * for both run lengths of a run and cancels out of the marginal cost (src/experiment/callgrind.h).
 * No state. */
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
 * MariaDB: no automatic statistics recalculation) and the ones valgrind needs
 * (MariaDB: a bounded buffer pool reservation, no native AIO), then the user's (user, n:
 * --server-option values), which come later on the
 * command line and so override them. */
void callgrind_server_options(enum server_kind kind, char *const *user, int n,
                              struct argvec *out);

/* What callgrind_server_read found in a directory. */
struct callgrind_server_counts {
    struct callgrind_counts serving;     /* the processes or threads that served connections */
    struct callgrind_counts background;  /* everything else the server ran */
    int nserving, nbackground;           /* how many files each */
};

/* Read every callgrind file in dir (cg.*) of a server of kind into out; with profile
 * non-NULL, the serving files' instructions per function too (profile_callgrind_read, merged;
 * the caller releases it). -1 with a message when a file cannot be read or has no totals (a
 * server killed before it wrote them), or when no file served a connection. */
int callgrind_server_read(const char *dir, enum server_kind kind,
                          struct callgrind_server_counts *out, struct profile_counts *profile);

/* Whether the callgrind output text names function fn as a defined name ("fn=(N) FN" or
 * "cfn=(N) FN" with name compression, "fn=FN" without); a name ending in '(' matches any C++
 * signature of it ("do_command(" matches "do_command(THD*, bool)"). */
bool callgrind_text_names(const char *text, const char *fn);

/* The function whose presence marks a serving process or thread of a server of kind. */
const char *callgrind_server_marker(enum server_kind kind);

#endif
