/* vgdb: a server that runs under valgrind callgrind, seen from its benchmark client (the
 * `--callgrind-server=PREFIX` of `pgolab bench run`, given by --measure=instructions). MariaDB
 * and MySQL serve each connection on a thread of one process, and callgrind writes a file per
 * valgrind thread number (--separate-threads=yes), a number it gives the next thread when one
 * ends; which number serves a connection is known only while it runs. So, once every worker
 * is connected, the client asks valgrind's gdbserver (vgdb, through the FIFOs under PREFIX)
 * for its threads (`v.info scheduler`: "Thread N: ... (lwpid L)"), maps each connection's
 * server thread (its OS id, db_identity.os_thread) to its number, and zeroes callgrind's
 * counts; after the last event, before any connection closes, it has callgrind dump them (the
 * files PID.1-NN). The dump then holds exactly the run: no earlier or later user of a thread
 * number is in it. Owns no state. */
#ifndef PGOLAB_BENCH_VGDB_H
#define PGOLAB_BENCH_VGDB_H

#include <stdint.h>

/* The valgrind thread number of OS thread lwpid in the text of `v.info scheduler`, or 0 when
 * the text names no such thread. */
int vgdb_thread_of(const char *scheduler_text, int64_t lwpid);

/* The process (its thread group id, /proc/TID/status "Tgid:") that OS thread tid belongs to,
 * or 0 when it cannot be read: the valgrind process to talk to when one server runs another
 * process under valgrind as well (valgrind --trace-children: a wrapper, the PGO stand-in),
 * where vgdb without --pid finds several and stops. */
long vgdb_process_of(int64_t tid);

/* Map os[0..n) (server threads' OS ids) to their valgrind thread numbers into out[0..n):
 * runs `vgdb --vgdb-prefix=PREFIX [--pid=PID] v.info scheduler` (pid 0: no --pid). 0, or -1
 * with a message naming the thread that valgrind does not run. */
int vgdb_threads(const char *prefix, long pid, const int64_t *os, int n, int *out);

/* Send callgrind's monitor command cmd ("zero", "dump") to the valgrind process pid (0: the
 * one) under prefix. 0, or -1 with a message. */
int vgdb_command(const char *prefix, long pid, const char *cmd);

#endif
