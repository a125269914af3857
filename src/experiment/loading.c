/* loading: rows loaded / total, rate and ETA of an experiment's prepare (see loading.h). */
#include "experiment/loading.h"
#include "oltp/loaded.h"
#include "util/progress.h"
#include "util/util.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void loading_begin(struct loading *l, const char *dir, const char *what, long long total)
{
    memset(l, 0, sizeof(*l));
    l->what = xstrdup(what);
    l->total = total;
    l->path = xasprintf("%s/.prepare-progress", dir);
    l->env = xasprintf("%s=%s", OLTP_LOADED_ENV, l->path);
    unlink(l->path);
    l->t0 = now_ns();
    if (total > 0)
        progress("preparing %s: 0/%lld rows", what, total);
    else
        progress("preparing %s", what);
}

/* "N/T rows, R rows/s, ETA Es" (rate and ETA once some rows are in) */
static void draw(struct loading *l, uint64_t now)
{
    double secs = (double)(now - l->t0) / 1e9;
    if (l->rows <= 0 || secs <= 0) {
        progress("preparing %s: 0/%lld rows", l->what, l->total);
        return;
    }
    double rate = (double)l->rows / secs;
    long long left = l->total > l->rows ? l->total - l->rows : 0;
    progress("preparing %s: %lld/%lld rows, %.0f rows/s, ETA %.0fs", l->what, l->rows,
             l->total, rate, (double)left / rate);
}

void loading_started(int pid, void *ctx)
{
    (void)pid;
    ((struct loading *)ctx)->t0 = now_ns();
}

void loading_tick(void *ctx)
{
    struct loading *l = ctx;
    uint64_t now = now_ns();
    if (l->total <= 0 || now - l->shown < 250000000ull)
        return;
    l->shown = now;
    long long rows = oltp_loaded_read(l->path);
    if (rows >= 0)
        l->rows = rows;
    draw(l, now);
}

void loading_end(struct loading *l, bool ok)
{
    uint64_t now = now_ns();
    double secs = (double)(now - l->t0) / 1e9;
    long long rows = oltp_loaded_read(l->path);
    if (rows >= 0)
        l->rows = rows;
    if (ok && l->total > 0) {
        draw(l, now); /* the count at the end, then the phase's line */
        progress_phase_done("prepared %s: %lld rows in %.1f s (%.0f rows/s)", l->what, l->rows,
                            secs, secs > 0 ? (double)l->rows / secs : 0.0);
    } else if (ok) {
        progress_phase_done("prepared %s in %.1f s", l->what, secs);
    }
    unlink(l->path);
    free(l->what);
    free(l->path);
    free(l->env);
    memset(l, 0, sizeof(*l));
}
