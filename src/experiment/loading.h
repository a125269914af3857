/* loading: the progress of an experiment's prepare (one workload's tables for one variant):
 * on a terminal "preparing W for V: rows loaded / total, rows/s, ETA" updated in place from
 * the count the prepare child keeps (oltp/loaded.h); off a terminal one line when it is done. */
#ifndef PGOLAB_EXPERIMENT_LOADING_H
#define PGOLAB_EXPERIMENT_LOADING_H

#include <stdbool.h>
#include <stdint.h>

struct loading {
    char *what;         /* "oltp_read_only for baseline" */
    long long total;    /* rows the prepare inserts (tables x table size; 0: none) */
    char *path;         /* the child's count file */
    char *env;          /* "PGOLAB_PREPARE_PROGRESS=path", for the child's environment */
    uint64_t t0, shown; /* when the child started, when the line was last drawn (ns) */
    long long rows;     /* the count last read */
};

/* Start watching a prepare of `total` rows whose count file lives in dir (removed first). */
void loading_begin(struct loading *l, const char *dir, const char *what, long long total);
/* The prepare child started (a subprocess started hook): its rate counts from now. */
void loading_started(int pid, void *ctx);
/* Redraw the status line (at most 4 times a second); a subprocess tick hook (ctx: loading). */
void loading_tick(void *ctx);
/* The prepare ended: when ok, say so with the rows and the rate (the phase's line); free all. */
void loading_end(struct loading *l, bool ok);

#endif
