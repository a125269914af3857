/* mpi: several client processes under mpirun (see mpi.h). Built with -DPGOLAB_MPI and
 * Open MPI's flags by the Makefile when libopenmpi-dev is installed; otherwise only the stub
 * at the end is compiled. */
#include "bench/mpi.h"
#include "util/util.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The job's size as the launcher announced it in the environment (Open MPI's mpirun, or a
 * PMI launcher), 1 when none did. */
static int env_int(const char *const *names, int dflt)
{
    for (int i = 0; names[i]; i++) {
        const char *v = getenv(names[i]);
        if (v && *v)
            return atoi(v);
    }
    return dflt;
}

static const char *const size_vars[] = { "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", NULL };

uint64_t ranks_share(uint64_t n)
{
    uint64_t size = (uint64_t)ranks_size(), rank = (uint64_t)ranks_rank();
    return n / size + (rank < n % size ? 1 : 0);
}

#ifdef PGOLAB_MPI
#include <mpi.h>

static int g_rank, g_size = 1;
static bool g_active, g_finished;

/* The per-rank figures (rank 0, after ranks_reduce). */
struct rank_figures {
    char host[64];
    int32_t threads;
    uint64_t events;
    double total_time_s;
};
static struct rank_figures *g_figs;

bool ranks_active(void) { return g_active; }
bool ranks_built(void) { return true; }
int ranks_rank(void) { return g_rank; }
int ranks_size(void) { return g_size; }

/* argv as one buffer of NUL-terminated strings */
static char *join_args(int argc, char **argv, int *len)
{
    size_t n = 0;
    for (int i = 0; i < argc; i++)
        n += strlen(argv[i]) + 1;
    char *b = xcalloc(n + 1, 1), *p = b;
    for (int i = 0; i < argc; i++)
        p = stpcpy(p, argv[i]) + 1;
    *len = (int)n;
    return b;
}

/* The first argument where mine (a, an bytes) differs from rank 0's (b, bn bytes): *ma and *mb
 * point at the two (NULL: that list ended). Returns whether they differ. */
static bool first_difference(const char *a, int an, const char *b, int bn, const char **ma,
                             const char **mb)
{
    const char *pa = a, *pb = b;
    while (pa < a + an || pb < b + bn) {
        *ma = pa < a + an ? pa : NULL;
        *mb = pb < b + bn ? pb : NULL;
        if (!*ma || !*mb || strcmp(*ma, *mb))
            return true;
        pa += strlen(pa) + 1;
        pb += strlen(pb) + 1;
    }
    return false;
}

/* An argument as the refusal shows it: a password option by its name only. */
static const char *shown(const char *arg)
{
    static char buf[2][96];
    static int k;
    if (!arg)
        return "(nothing)";
    if (!strstr(arg, "password"))
        return arg;
    const char *eq = strchr(arg, '=');
    int n = eq ? (int)(eq - arg) : (int)strlen(arg);
    k ^= 1;
    snprintf(buf[k], sizeof(buf[k]), "%.*s=(hidden)", n > 80 ? 80 : n, arg);
    return buf[k];
}

int ranks_start(int argc, char **argv)
{
    if (env_int(size_vars, 1) <= 1)
        return 0;
    int provided;
    MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    g_active = g_size > 1;
    if (!g_active)
        return 0;
    if (g_rank > 0 && !freopen("/dev/null", "w", stdout))  /* rank 0 alone prints */
        warning("rank %d: cannot send its stdout to /dev/null", g_rank);
    /* the options: rank 0's, compared with each rank's own */
    int len, len0;
    char *mine = join_args(argc, argv, &len);
    len0 = len;
    MPI_Bcast(&len0, 1, MPI_INT, 0, MPI_COMM_WORLD);
    char *theirs = g_rank == 0 ? mine : xcalloc((size_t)len0 + 1, 1);
    MPI_Bcast(theirs, len0, MPI_CHAR, 0, MPI_COMM_WORLD);
    const char *ma = NULL, *mb = NULL;
    bool differs = g_rank > 0 && first_difference(mine, len, theirs, len0, &ma, &mb);
    int me = differs ? g_rank : g_size, first;
    MPI_Allreduce(&me, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (differs && first == g_rank)
        error("rank %d of %d was given other options than rank 0: '%s' here, '%s' on rank 0 "
              "(every rank must run the same command)", g_rank, g_size, shown(ma), shown(mb));
    if (theirs != mine)
        free(theirs);
    free(mine);
    return first < g_size ? -1 : 0;
}

void ranks_finish(void)
{
    if (!g_active || g_finished)
        return;
    g_finished = true;
    fflush(stdout);
    MPI_Finalize();
}

void ranks_abort(int rc, const char *why)
{
    fflush(stdout);
    if (g_active && !g_finished) {
        char host[64] = "";
        gethostname(host, sizeof(host) - 1);
        error("rank %d of %d (host %s): %s: stopping every rank", g_rank, g_size, host, why);
        fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, rc);
    }
    exit(rc);
}

int ranks_bcast_int(int v)
{
    if (g_active)
        MPI_Bcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return v;
}

bool ranks_all_ok(bool ok, const char *what)
{
    if (!g_active)
        return ok;
    int me = ok ? g_size : g_rank, first;
    MPI_Allreduce(&me, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (first < g_size && g_rank == 0)
        error("rank %d of %d could not %s (that rank says why): all %d ranks stop", first, g_size,
              what, g_size);
    return first == g_size;
}

/* ---- intervals: each rank sends its lines to rank 0, one message per slot ---- */

#define TAG_INTERVAL 15

/* One interval line of one rank, then its histogram's bucket counts. */
struct iv_msg {
    int32_t end;          /* 1: the rank is done, no more lines (nothing follows) */
    int32_t threads, concurrency, rate_mode;
    int64_t slot;         /* time_s / interval */
    uint64_t queue_length;
    double tps, reads, writes, other, errors, reconnects, length_s;
    uint64_t total, min_ns, max_ns;
    double sum_ns;
};

static size_t msg_bytes(void)
{
    return sizeof(struct iv_msg) + histogram_nbuckets() * sizeof(uint64_t);
}

static void *pack(const struct interval_stats *iv, double interval)
{
    struct iv_msg *m = xcalloc(1, msg_bytes());
    const struct histogram *h = iv->hist;
    *m = (struct iv_msg){
        .threads = iv->threads, .concurrency = iv->concurrency, .rate_mode = iv->rate_mode,
        .slot = llround(iv->time_s / interval), .queue_length = iv->queue_length, .tps = iv->tps,
        .reads = iv->reads_per_s, .writes = iv->writes_per_s, .other = iv->other_per_s,
        .errors = iv->errors_per_s, .reconnects = iv->reconnects_per_s, .length_s = iv->length_s,
        .total = h->total, .min_ns = h->min_ns, .max_ns = h->max_ns, .sum_ns = h->sum_ns,
    };
    memcpy(m + 1, h->counts, histogram_nbuckets() * sizeof(uint64_t));
    return m;
}

/* Add a line (m) into the merged one (acc, hist). */
static void add_line(struct interval_stats *acc, struct histogram *hist, const struct iv_msg *m)
{
    acc->threads += m->threads;
    acc->concurrency += m->concurrency;
    acc->rate_mode |= m->rate_mode != 0;
    acc->queue_length += m->queue_length;
    acc->tps += m->tps;
    acc->reads_per_s += m->reads;
    acc->writes_per_s += m->writes;
    acc->other_per_s += m->other;
    acc->errors_per_s += m->errors;
    acc->reconnects_per_s += m->reconnects;
    if (m->length_s > acc->length_s)
        acc->length_s = m->length_s;
    const uint64_t *c = (const uint64_t *)(m + 1);
    for (size_t i = 0; i < hist->nbuckets; i++)
        hist->counts[i] += c[i];
    hist->total += m->total;
    hist->sum_ns += m->sum_ns;
    if (m->total && m->min_ns < hist->min_ns)
        hist->min_ns = m->min_ns;
    if (m->total && m->max_ns > hist->max_ns)
        hist->max_ns = m->max_ns;
}

/* The PGOLAB_MPI_MERGE_TIMES knob (bench/mpi-scaling): rank 0 times each merged line, the
 * receiving (waiting for the ranks' lines included) apart from the merging (sums and the
 * percentile), and says so in one stderr line after the run. */
static struct {
    bool on;
    uint64_t lines, recv_ns, recv_max_ns, merge_ns, merge_max_ns;
} g_mt;

static int64_t g_last_slot;  /* rank 0: its last slot */
static bool *g_done;      /* rank 0: rank r sent its end */
static void *g_buf;       /* rank 0: receive buffer */

/* Rank 0: the line of slot `slot` merged from `own` (may be NULL: rank 0 is done) and every
 * other rank still running; printed when any rank had one. */
static void merge_slot(const void *own, int64_t slot, double interval, double percentile,
                       void (*print)(const struct interval_stats *, void *), void *ud)
{
    struct interval_stats acc = { .time_s = (double)slot * interval };
    struct histogram hist;
    bool any = own != NULL;
    histogram_init(&hist);
    if (own)
        add_line(&acc, &hist, own);
    if (!g_done) {
        g_done = xcalloc((size_t)g_size, sizeof(bool));
        g_buf = xcalloc(1, msg_bytes());
        g_mt.on = getenv("PGOLAB_MPI_MERGE_TIMES") && *getenv("PGOLAB_MPI_MERGE_TIMES");
    }
    uint64_t recv_ns = 0, t0 = now_ns();
    for (int r = 1; r < g_size; r++) {
        if (g_done[r])
            continue;
        uint64_t t = now_ns();
        MPI_Recv(g_buf, (int)msg_bytes(), MPI_BYTE, r, TAG_INTERVAL, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
        recv_ns += now_ns() - t;
        const struct iv_msg *m = g_buf;
        if (m->end) {
            g_done[r] = true;
            continue;
        }
        if (!any)  /* rank 0 is done: the stamp is the others' */
            acc.time_s = (double)m->slot * interval;
        add_line(&acc, &hist, m);
        any = true;
    }
    if (any) {
        acc.qps = acc.reads_per_s + acc.writes_per_s + acc.other_per_s;
        bool over = false;
        acc.lat_ms = histogram_percentile_ex(&hist, percentile, &over) / 1e6;
        acc.lat_overflow = over;
        acc.hist = &hist;
        if (g_mt.on) {
            uint64_t merge_ns = now_ns() - t0 - recv_ns;
            g_mt.lines++;
            g_mt.recv_ns += recv_ns;
            g_mt.merge_ns += merge_ns;
            g_mt.recv_max_ns = recv_ns > g_mt.recv_max_ns ? recv_ns : g_mt.recv_max_ns;
            g_mt.merge_max_ns = merge_ns > g_mt.merge_max_ns ? merge_ns : g_mt.merge_max_ns;
        }
        print(&acc, ud);
    }
    histogram_release(&hist);
}

void ranks_interval(const struct interval_stats *iv, double interval, double percentile,
                    void (*print)(const struct interval_stats *iv, void *ud), void *ud)
{
    if (!g_active) {
        print(iv, ud);
        return;
    }
    struct iv_msg *m = pack(iv, interval);
    if (g_rank == 0) {
        merge_slot(m, m->slot, interval, percentile, print, ud);
        g_last_slot = m->slot;
    }
    else
        MPI_Send(m, (int)msg_bytes(), MPI_BYTE, 0, TAG_INTERVAL, MPI_COMM_WORLD);
    free(m);
}


void ranks_intervals_end(double interval, double percentile,
                         void (*print)(const struct interval_stats *iv, void *ud), void *ud)
{
    if (!g_active || interval <= 0)
        return;
    if (g_rank > 0) {
        struct iv_msg end = { .end = 1 };
        MPI_Send(&end, (int)sizeof(end), MPI_BYTE, 0, TAG_INTERVAL, MPI_COMM_WORLD);
        return;
    }
    /* the slots after rank 0's last, until every other rank has ended */
    for (;;) {
        bool all = true;
        for (int r = 1; r < g_size; r++)
            all = all && g_done && g_done[r];
        if (all)
            break;
        int64_t slot = g_last_slot + 1;
        merge_slot(NULL, slot, interval, percentile, print, ud);
        g_last_slot = slot;
    }
    if (g_mt.on && g_mt.lines)
        fprintf(stderr, "mpi merge: %" PRIu64 " interval lines of %d ranks, %zu bytes a rank's "
                "line; receiving: mean %.1f us, max %.1f us; merging: mean %.1f us, max %.1f us\n",
                g_mt.lines, g_size, msg_bytes(), g_mt.recv_ns / 1e3 / (double)g_mt.lines,
                g_mt.recv_max_ns / 1e3, g_mt.merge_ns / 1e3 / (double)g_mt.lines,
                g_mt.merge_max_ns / 1e3);
    free(g_done);
    free(g_buf);
    g_done = NULL;
    g_buf = NULL;
}

/* ---- the final block ---- */

void ranks_reduce(struct run_stats *st)
{
    if (!g_active)
        return;
    MPI_Comm w = MPI_COMM_WORLD;
    bool root = g_rank == 0;
    /* per-rank figures first, from this rank's own st */
    struct rank_figures mine = { .threads = st->nthreads, .events = st->events,
                                 .total_time_s = st->total_time_s };
    gethostname(mine.host, sizeof(mine.host) - 1);
    free(g_figs);
    g_figs = root ? xcalloc((size_t)g_size, sizeof(*g_figs)) : NULL;
    MPI_Gather(&mine, (int)sizeof(mine), MPI_BYTE, g_figs, (int)sizeof(mine), MPI_BYTE, 0, w);

    /* counters: sums */
    uint64_t sums[8] = { st->events, st->cnt.reads, st->cnt.writes, st->cnt.others,
                         st->cnt.errors, st->cnt.reconnects, st->unfinished, st->hist.total };
    uint64_t tot[8];
    MPI_Reduce(sums, tot, 8, MPI_UINT64_T, MPI_SUM, 0, w);
    int flags[4] = { st->interrupted, st->failed, st->forced, st->queue_full }, any[4];
    MPI_Reduce(flags, any, 4, MPI_INT, MPI_MAX, 0, w);
    double tmax, hsum;
    MPI_Reduce(&st->total_time_s, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, w);
    MPI_Reduce(&st->hist.sum_ns, &hsum, 1, MPI_DOUBLE, MPI_SUM, 0, w);
    uint64_t hmin, hmax;
    MPI_Reduce(&st->hist.min_ns, &hmin, 1, MPI_UINT64_T, MPI_MIN, 0, w);
    MPI_Reduce(&st->hist.max_ns, &hmax, 1, MPI_UINT64_T, MPI_MAX, 0, w);
    /* the histogram: bucket counts summed (exact: the histogram of every rank's samples) */
    size_t nb = histogram_nbuckets();
    uint64_t *counts = root ? xcalloc(nb, sizeof(uint64_t)) : NULL;
    MPI_Reduce(st->hist.counts, counts, (int)nb, MPI_UINT64_T, MPI_SUM, 0, w);
    /* per-thread figures, rank by rank (every rank runs the same --threads) */
    int n = st->nthreads, all = n * g_size;
    uint64_t *tev = root ? xcalloc((size_t)all, sizeof(uint64_t)) : NULL;
    double *ttm = root ? xcalloc((size_t)all, sizeof(double)) : NULL;
    MPI_Gather(st->thread_events, n, MPI_UINT64_T, tev, n, MPI_UINT64_T, 0, w);
    MPI_Gather(st->thread_time_s, n, MPI_DOUBLE, ttm, n, MPI_DOUBLE, 0, w);
    if (!root)
        return;
    st->events = tot[0];
    st->cnt.reads = tot[1];
    st->cnt.writes = tot[2];
    st->cnt.others = tot[3];
    st->cnt.errors = tot[4];
    st->cnt.reconnects = tot[5];
    st->unfinished = tot[6];
    st->hist.total = tot[7];
    st->hist.sum_ns = hsum;
    st->hist.min_ns = hmin;
    st->hist.max_ns = hmax;
    memcpy(st->hist.counts, counts, nb * sizeof(uint64_t));
    free(counts);
    st->interrupted = any[0];
    st->failed = any[1];
    st->forced = any[2];
    st->queue_full = any[3];
    st->total_time_s = tmax;
    free(st->thread_events);
    free(st->thread_time_s);
    st->thread_events = tev;
    st->thread_time_s = ttm;
    st->nthreads = all;
}

json_t *ranks_json(void)
{
    if (!g_active || !g_figs)
        return NULL;
    json_t *a = json_array();
    for (int r = 0; r < g_size; r++) {
        const struct rank_figures *f = &g_figs[r];
        double t = f->total_time_s > 0 ? f->total_time_s : 1e-9;
        json_array_append_new(
            a, json_pack("{s:i,s:s,s:i,s:I,s:f,s:f}", "rank", r, "host", f->host, "threads",
                         (int)f->threads, "events", (json_int_t)f->events, "tps",
                         (double)f->events / t, "total_time_s", f->total_time_s));
    }
    return a;
}

#else /* one process: the stub */

static const char *const rank_vars[] = { "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", NULL };

bool ranks_active(void) { return false; }
bool ranks_built(void) { return false; }
int ranks_rank(void) { return 0; }
int ranks_size(void) { return 1; }

int ranks_start(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    int size = env_int(size_vars, 1);
    if (size <= 1)
        return 0;
    if (env_int(rank_vars, 0) == 0)
        error("started as one of %d ranks by mpirun, but this pgolab was built without MPI: "
              "install libopenmpi-dev and rebuild (make) to run one job across ranks", size);
    return -1;
}

void ranks_finish(void) {}

void ranks_abort(int rc, const char *why)
{
    (void)why;
    fflush(stdout);
    exit(rc);
}

int ranks_bcast_int(int v) { return v; }
bool ranks_all_ok(bool ok, const char *what)
{
    (void)what;
    return ok;
}

void ranks_interval(const struct interval_stats *iv, double interval, double percentile,
                    void (*print)(const struct interval_stats *iv, void *ud), void *ud)
{
    (void)interval;
    (void)percentile;
    print(iv, ud);
}

void ranks_intervals_end(double interval, double percentile,
                         void (*print)(const struct interval_stats *iv, void *ud), void *ud)
{
    (void)interval;
    (void)percentile;
    (void)print;
    (void)ud;
}

void ranks_reduce(struct run_stats *st) { (void)st; }
json_t *ranks_json(void) { return NULL; }

#endif
