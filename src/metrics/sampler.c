/* sampler: /proc snapshots of one run and the server's process tree (see sampler.h). */
#include "metrics/sampler.h"
#include "metrics/procstat.h"
#include "util/pidstat.h"
#include "util/strbuf.h"
#include "util/util.h"

#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One server process seen at some snapshot. */
struct track {
    int pid, ppid;
    uint64_t first_own;   /* utime + stime when first seen (0 if it appeared after start) */
    uint64_t last_own;    /* utime + stime at the last snapshot that saw it */
    uint64_t last_total;  /* utime + stime + cutime + cstime then */
    uint64_t last_user;   /* of which user time: utime + cutime */
    int live;             /* 1: seen at the last snapshot (2 while a snapshot runs: not
                           * seen yet), 0: gone */
};

struct metrics_sampler {
    char *root;
    int threads;
    pid_t client, server;
    long clk_tck;
    struct metrics_snapshot *snaps;
    int nsnaps, cap;
    uint64_t next_ns;
    char *failed;         /* why the metrics are unavailable, or NULL */
    bool scan;            /* no children files: find the tree by scanning the procfs root */
    struct track *procs;
    int nprocs;
    double gone_ticks;    /* last totals of processes nobody in the tree reaped */
    double gone_user;     /* of which user time */
    struct rusage ru;
    bool have_ru;
    struct strbuf buf;
};

struct metrics_sampler *metrics_sampler_new(const char *proc_root, int threads)
{
    struct metrics_sampler *ms = xcalloc(1, sizeof(*ms));
    const char *env = getenv("PGOLAB_METRICS_PROC");
    ms->root = xstrdup(proc_root ? proc_root : env && *env ? env : "/proc");
    ms->threads = threads > 0 ? threads : 1;
    ms->clk_tck = sysconf(_SC_CLK_TCK);
    strbuf_init(&ms->buf, 4096);
    return ms;
}

void metrics_sampler_set_server(struct metrics_sampler *ms, pid_t root)
{
    ms->server = root;
}

void metrics_sampler_free(struct metrics_sampler *ms)
{
    if (!ms)
        return;
    free(ms->root);
    free(ms->snaps);
    free(ms->failed);
    free(ms->procs);
    strbuf_release(&ms->buf);
    free(ms);
}

/* Read and parse ROOT/REL with parse into out; on failure the sampler fails (why). */
static int read_machine(struct metrics_sampler *ms, const char *rel,
                        int (*parse)(const char *, void *), void *out)
{
    if (procstat_read(ms->root, rel, &ms->buf) < 0) {
        ms->failed = xasprintf("cannot read %s/%s: %s", ms->root, rel, strerror(errno));
        return -1;
    }
    if (parse(ms->buf.buf, out) < 0) {
        ms->failed = xasprintf("cannot parse %s/%s (not the Linux format)", ms->root, rel);
        return -1;
    }
    return 0;
}

static int parse_stat(const char *t, void *o) { return procstat_parse_stat(t, o); }
static int parse_vmstat(const char *t, void *o) { return procstat_parse_vmstat(t, o); }
static int parse_loadavg(const char *t, void *o) { return procstat_parse_loadavg(t, o); }

struct pidlist {
    int *pid;
    struct proc_pid_stat *st;
    int n, cap;
};

static void pidlist_add(struct pidlist *l, int pid, const struct proc_pid_stat *st)
{
    for (int i = 0; i < l->n; i++)
        if (l->pid[i] == pid)
            return;
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 32;
        l->pid = xrealloc(l->pid, sizeof(int) * (size_t)l->cap);
        l->st = xrealloc(l->st, sizeof(*l->st) * (size_t)l->cap);
    }
    l->pid[l->n] = pid;
    if (st)
        l->st[l->n] = *st;
    l->n++;
}

/* The children of pid from ROOT/PID/task/TID/children (every thread's) into l. -1 when the
 * kernel has no such files (the task directory is there, the children files are not). */
static int children_files(struct metrics_sampler *ms, int pid, struct pidlist *l)
{
    char *dir = xasprintf("%s/%d/task", ms->root, pid);
    DIR *d = opendir(dir);
    int files = 0;
    if (!d) { /* no task directory (an old or a fake procfs, or the process just left) */
        free(dir);
        return -1;
    }
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        char rel[320];
        snprintf(rel, sizeof(rel), "%d/task/%s/children", pid, e->d_name);
        if (procstat_read(ms->root, rel, &ms->buf) < 0)
            continue;
        files++;
        for (char *p = ms->buf.buf; *p;) {
            char *end;
            long c = strtol(p, &end, 10);
            if (end == p)
                break;
            pidlist_add(l, (int)c, NULL);
            p = end;
        }
    }
    closedir(d);
    free(dir);
    return files ? 0 : -1;
}

/* Every process of the procfs root with its stat (the scan fallback). */
static void scan_all(struct metrics_sampler *ms, struct pidlist *all)
{
    DIR *d = opendir(ms->root);
    if (!d)
        return;
    for (struct dirent *e; (e = readdir(d));) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        struct proc_pid_stat st;
        if (*end || end == e->d_name || pid <= 0)
            continue;
        if (pidstat_read(ms->root, pid, &st) == 0)
            pidlist_add(all, (int)pid, &st);
    }
    closedir(d);
}

/* The server's tree now into tree (pids with their stat), root first. */
static void server_tree(struct metrics_sampler *ms, struct pidlist *tree)
{
    struct proc_pid_stat st;
    if (pidstat_read(ms->root, ms->server, &st) < 0)
        return; /* the server is gone */
    pidlist_add(tree, ms->server, &st);
    if (!ms->scan) {
        struct pidlist kids = { 0 };
        for (int i = 0; i < tree->n; i++) {
            kids.n = 0;
            if (children_files(ms, tree->pid[i], &kids) < 0 && i == 0) {
                ms->scan = true;
                break;
            }
            for (int k = 0; k < kids.n; k++)
                if (pidstat_read(ms->root, kids.pid[k], &st) == 0)
                    pidlist_add(tree, kids.pid[k], &st);
        }
        free(kids.pid);
        free(kids.st);
        if (!ms->scan)
            return;
        tree->n = 1;
    }
    struct pidlist all = { 0 };
    scan_all(ms, &all);
    for (bool grew = true; grew;) { /* add children of tree members until nothing is added */
        grew = false;
        for (int i = 0; i < all.n; i++) {
            bool in = false, parent = false;
            for (int k = 0; k < tree->n && !in; k++) {
                in = tree->pid[k] == all.pid[i];
                parent = parent || tree->pid[k] == all.st[i].ppid;
            }
            if (!in && parent) {
                pidlist_add(tree, all.pid[i], &all.st[i]);
                grew = true;
            }
        }
    }
    free(all.pid);
    free(all.st);
}

static struct track *track_get(struct metrics_sampler *ms, int pid, bool *is_new)
{
    for (int i = 0; i < ms->nprocs; i++)
        if (ms->procs[i].pid == pid) {
            *is_new = false;
            return &ms->procs[i];
        }
    ms->procs = xrealloc(ms->procs, sizeof(*ms->procs) * (size_t)(ms->nprocs + 1));
    struct track *t = &ms->procs[ms->nprocs++];
    memset(t, 0, sizeof(*t));
    t->pid = pid;
    *is_new = true;
    return t;
}

/* The server tree's CPU ticks now (live totals + what vanished unreaped), of which *user
 * are user time (the rest system time), and its size. */
static double server_ticks(struct metrics_sampler *ms, double *user, int *nlive)
{
    struct pidlist tree = { 0 };
    server_tree(ms, &tree);
    double sum = 0, usum = 0;
    for (int i = 0; i < ms->nprocs; i++)
        ms->procs[i].live = ms->procs[i].live ? 2 : 0; /* 2 = live before, not yet seen */
    for (int i = 0; i < tree.n; i++) {
        const struct proc_pid_stat *st = &tree.st[i];
        bool is_new;
        struct track *t = track_get(ms, tree.pid[i], &is_new);
        uint64_t own = st->utime + st->stime;
        if (is_new)
            t->first_own = ms->nsnaps == 0 ? own : 0;
        t->ppid = st->ppid;
        t->last_own = own;
        t->last_total = own + st->cutime + st->cstime;
        t->last_user = st->utime + st->cutime;
        t->live = 1;
        sum += (double)t->last_total;
        usum += (double)t->last_user;
    }
    for (int i = 0; i < ms->nprocs; i++) {
        struct track *t = &ms->procs[i];
        if (t->live != 2)
            continue;
        t->live = 0; /* vanished since the last snapshot */
        bool reaped_inside = false;
        for (int k = 0; k < tree.n && !reaped_inside; k++)
            reaped_inside = tree.pid[k] == t->ppid;
        if (!reaped_inside) { /* nobody in the tree accounts for it: keep its last values */
            ms->gone_ticks += (double)t->last_total;
            ms->gone_user += (double)t->last_user;
        }
    }
    *nlive = tree.n;
    free(tree.pid);
    free(tree.st);
    *user = usum + ms->gone_user;
    assert(*user <= sum + ms->gone_ticks);  /* user time is part of the total */
    return sum + ms->gone_ticks;
}

static void snapshot(struct metrics_sampler *ms)
{
    if (ms->failed)
        return;
    if (ms->nsnaps == ms->cap) {
        ms->cap = ms->cap ? 2 * ms->cap : 64;
        ms->snaps = xrealloc(ms->snaps, sizeof(*ms->snaps) * (size_t)ms->cap);
    }
    struct metrics_snapshot *s = &ms->snaps[ms->nsnaps];
    memset(s, 0, sizeof(*s));
    s->t = (double)now_ns() / 1e9;
    if (read_machine(ms, "stat", parse_stat, &s->stat) < 0 ||
        read_machine(ms, "vmstat", parse_vmstat, &s->vm) < 0 ||
        read_machine(ms, "loadavg", parse_loadavg, &s->load) < 0)
        return;
    struct proc_pid_stat st;
    if (ms->client > 0 && pidstat_read(ms->root, ms->client, &st) == 0) {
        s->client_user_ticks = (double)st.utime;
        s->client_sys_ticks = (double)st.stime;
    } else if (ms->nsnaps) { /* gone: keep its last values */
        s->client_user_ticks = ms->snaps[ms->nsnaps - 1].client_user_ticks;
        s->client_sys_ticks = ms->snaps[ms->nsnaps - 1].client_sys_ticks;
    } else { /* not started */
        s->client_user_ticks = s->client_sys_ticks = NAN;
    }
    s->client_ticks = s->client_user_ticks + s->client_sys_ticks;
    s->server_ticks = s->server_user_ticks = s->server_sys_ticks = NAN;
    if (ms->server > 0) {
        s->server_ticks = server_ticks(ms, &s->server_user_ticks, &s->server_procs);
        s->server_sys_ticks = s->server_ticks - s->server_user_ticks;
    }
    ms->nsnaps++;
}

void metrics_sampler_start(struct metrics_sampler *ms, pid_t client)
{
    ms->client = client;
    snapshot(ms);
    ms->next_ns = now_ns() + (uint64_t)(METRICS_INTERVAL_S * 1e9);
}

void metrics_sampler_tick(struct metrics_sampler *ms)
{
    uint64_t now = now_ns();
    if (!ms->nsnaps || now < ms->next_ns)
        return;
    snapshot(ms);
    ms->next_ns += (uint64_t)(METRICS_INTERVAL_S * 1e9);
    if (ms->next_ns < now) /* fell behind (a stopped process): no burst of snapshots */
        ms->next_ns = now + (uint64_t)(METRICS_INTERVAL_S * 1e9);
}

void metrics_sampler_stop(struct metrics_sampler *ms, const struct rusage *ru)
{
    if (ru) {
        ms->ru = *ru;
        ms->have_ru = true;
    }
    if (ms->nsnaps)
        snapshot(ms);
}

void metrics_sampler_result(struct metrics_sampler *ms, uint64_t transactions,
                            struct run_metrics *out)
{
    memset(out, 0, sizeof(*out));
    if (!ms->failed && ms->nsnaps < 2)
        ms->failed = xstrdup(ms->nsnaps ? "the run ended before a second snapshot"
                                        : "the sampler was not started");
    if (ms->failed) {
        out->note = xstrdup(ms->failed);
        metrics_warn_unavailable(ms->failed);
        return;
    }
    double user = ms->have_ru ? (double)ms->ru.ru_utime.tv_sec +
                                    (double)ms->ru.ru_utime.tv_usec / 1e6 : NAN;
    double sys = ms->have_ru ? (double)ms->ru.ru_stime.tv_sec +
                                   (double)ms->ru.ru_stime.tv_usec / 1e6 : NAN;
    struct metrics_run_info in = {
        .transactions = transactions,
        .client_cpu_s = user + sys,
        .client_user_s = user,
        .client_sys_s = sys,
        .threads = ms->threads,
        .server = ms->server > 0,
        .clk_tck = ms->clk_tck,
    };
    for (int i = 0; i < ms->nprocs; i++)
        if (ms->procs[i].last_own > ms->procs[i].first_own)
            in.server_procs_busy++;
    metrics_compute(ms->snaps, ms->nsnaps, &in, out);
}
