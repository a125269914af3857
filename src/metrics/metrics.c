/* metrics: the arithmetic of a run's system metrics, its trust flags and their JSON (see
 * metrics.h). */
#include "metrics/metrics.h"
#include "util/fmt.h"
#include "util/util.h"

#include <assert.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* b - a of a counter, 0 when it went backwards (a counter reset or wrapped). */
static double delta(uint64_t a, uint64_t b)
{
    return b >= a ? (double)(b - a) : 0.0;
}

static double per(double x, double d)
{
    return d > 0 ? x / d : NAN;
}

/* Whether the split (user, sys) of total holds: both NAN with it, else user + sys = total. */
static bool split_holds(double total, double user, double sys)
{
    if (!isfinite(total))
        return true;
    return isfinite(user) && isfinite(sys) && fabs(user + sys - total) <= 1e-9 * (1 + total);
}

/* The user / system split of the client's and the server's CPU between snapshots a and b:
 * seconds and microseconds per transaction (see metrics.h). The server's two parts are
 * clamped as its total is (a tree that lost a process unreaped), so user + sys = total. */
static void cpu_split(const struct metrics_snapshot *a, const struct metrics_snapshot *b,
                      const struct metrics_run_info *in, double hz, struct run_metrics *out)
{
    double txn = in->transactions ? (double)in->transactions : NAN;
    bool rusage = isfinite(in->client_cpu_s);

    assert(!rusage || split_holds(in->client_cpu_s, in->client_user_s, in->client_sys_s));
    assert(rusage || !isfinite(out->client_cpu_s) ||
           (split_holds(a->client_ticks, a->client_user_ticks, a->client_sys_ticks) &&
            split_holds(b->client_ticks, b->client_user_ticks, b->client_sys_ticks)));
    out->client_user_cpu_s = rusage ? in->client_user_s
                             : isfinite(out->client_cpu_s)
                                 ? (b->client_user_ticks - a->client_user_ticks) / hz : NAN;
    out->client_sys_cpu_s = rusage ? in->client_sys_s
                            : isfinite(out->client_cpu_s)
                                ? (b->client_sys_ticks - a->client_sys_ticks) / hz : NAN;
    out->server_user_cpu_s = out->server_sys_cpu_s = NAN;
    if (isfinite(out->server_cpu_s)) {
        assert(split_holds(a->server_ticks, a->server_user_ticks, a->server_sys_ticks));
        assert(split_holds(b->server_ticks, b->server_user_ticks, b->server_sys_ticks));
        double u = fmax(0, b->server_user_ticks - a->server_user_ticks) / hz;
        double y = fmax(0, b->server_sys_ticks - a->server_sys_ticks) / hz;
        /* the total was clamped at 0 as a whole: scale the parts to it (a no-op unless a
         * part went backwards, which only a vanished unreaped process can do) */
        double sum = u + y;
        out->server_user_cpu_s = sum > 0 ? out->server_cpu_s * (u / sum) : 0;
        out->server_sys_cpu_s = sum > 0 ? out->server_cpu_s * (y / sum) : 0;
    }
    out->client_user_us_per_txn = out->client_user_cpu_s * 1e6 / txn;
    out->client_sys_us_per_txn = out->client_sys_cpu_s * 1e6 / txn;
    out->server_user_us_per_txn = out->server_user_cpu_s * 1e6 / txn;
    out->server_sys_us_per_txn = out->server_sys_cpu_s * 1e6 / txn;
}

void metrics_compute(const struct metrics_snapshot *s, int n, const struct metrics_run_info *in,
                     struct run_metrics *out)
{
    const struct metrics_snapshot *a = &s[0], *b = &s[n - 1];
    const struct proc_cpu *c0 = &a->stat.cpu, *c1 = &b->stat.cpu;
    double hz = in->clk_tck > 0 ? (double)in->clk_tck : 100.0;
    double wall = b->t - a->t;
    double total = delta(proc_cpu_total(c0), proc_cpu_total(c1));
    double txn = in->transactions ? (double)in->transactions : NAN;

    memset(out, 0, sizeof(*out));
    out->available = true;
    out->wall_s = wall;
    out->nsamples = n;
    out->ncpu = b->stat.ncpu > 0 ? b->stat.ncpu : 1;
    int want = in->threads * (in->server ? 2 : 1);
    out->cores_used = want < out->ncpu ? want : out->ncpu;
    out->intr_per_s = per(delta(a->stat.intr, b->stat.intr), wall);
    out->ctxsw_per_s = per(delta(a->stat.ctxt, b->stat.ctxt), wall);
    out->us_pct = 100 * per(delta(c0->user, c1->user) + delta(c0->nice, c1->nice), total);
    out->sys_pct = 100 * per(delta(c0->system, c1->system) + delta(c0->irq, c1->irq) +
                                 delta(c0->softirq, c1->softirq), total);
    out->idle_pct = 100 * per(delta(c0->idle, c1->idle), total);
    out->iowait_pct = 100 * per(delta(c0->iowait, c1->iowait), total);
    out->steal_pct = 100 * per(delta(c0->steal, c1->steal), total);
    out->pgfault_per_s = per(delta(a->vm.pgfault, b->vm.pgfault), wall);
    out->pgmajfault_per_s = per(delta(a->vm.pgmajfault, b->vm.pgmajfault), wall);
    out->swapin_per_s = per(delta(a->vm.pswpin, b->vm.pswpin), wall);
    out->swapout_per_s = per(delta(a->vm.pswpout, b->vm.pswpout), wall);
    out->ctxsw_per_txn = delta(a->stat.ctxt, b->stat.ctxt) / txn;

    out->client_cpu_s = isfinite(in->client_cpu_s) ? in->client_cpu_s
                        : isfinite(a->client_ticks) && isfinite(b->client_ticks)
                            ? (b->client_ticks - a->client_ticks) / hz : NAN;
    out->server_cpu_s = in->server && isfinite(a->server_ticks) && isfinite(b->server_ticks)
                            ? fmax(0, b->server_ticks - a->server_ticks) / hz : NAN;
    out->client_us_per_txn = out->client_cpu_s * 1e6 / txn;
    out->server_us_per_txn = out->server_cpu_s * 1e6 / txn;
    cpu_split(a, b, in, hz, out);
    out->server_procs = in->server ? in->server_procs_busy : 0;

    double idle = delta(c0->idle, c1->idle) + delta(c0->iowait, c1->iowait);
    out->busy_cores = per((total - idle) / hz, wall);
    double ours = (isfinite(out->client_cpu_s) ? out->client_cpu_s : 0) +
                  (isfinite(out->server_cpu_s) ? out->server_cpu_s : 0);
    out->other_cores = fmax(0, out->busy_cores - per(ours, wall));
    out->other_pct = 100 * out->other_cores / out->ncpu;

    /* the run queue: mean and max over the snapshots after the first (the first is taken
     * as the child starts), the sampler's own running entry not counted */
    double rq_sum = 0, rq_max = 0;
    int rq_n = 0;
    for (int i = n > 1 ? 1 : 0; i < n; i++) {
        double rq = s[i].load.running > 0 ? s[i].load.running - 1 : 0;
        rq_sum += rq;
        rq_max = fmax(rq_max, rq);
        rq_n++;
    }
    out->runq_avg = rq_n ? rq_sum / rq_n : NAN;
    out->runq_max = rq_n ? rq_max : NAN;
    out->load1 = b->load.load1;

    out->npoints = n - 1;
    out->points = xcalloc((size_t)(n > 1 ? n - 1 : 1), sizeof(*out->points));
    for (int i = 1; i < n; i++) {
        const struct metrics_snapshot *p = &s[i - 1], *q = &s[i];
        struct metrics_point *pt = &out->points[i - 1];
        double dt = q->t - p->t;
        double tot = delta(proc_cpu_total(&p->stat.cpu), proc_cpu_total(&q->stat.cpu));
        double idl = delta(p->stat.cpu.idle, q->stat.cpu.idle) +
                     delta(p->stat.cpu.iowait, q->stat.cpu.iowait);
        pt->t = q->t - a->t;
        pt->busy_pct = 100 * per(tot - idl, tot);
        pt->client_cores = per((q->client_ticks - p->client_ticks) / hz, dt);
        pt->server_cores = in->server ? per((q->server_ticks - p->server_ticks) / hz, dt) : NAN;
        pt->server_procs = in->server ? q->server_procs : 0;
        pt->runq = q->load.running > 0 ? q->load.running - 1 : 0;
    }
    out->flags = metrics_flags(out);
}

unsigned metrics_flags(const struct run_metrics *m)
{
    unsigned f = 0;
    if (!m->available)
        return 0;
    if (m->steal_pct > METRICS_STEAL_PCT_MAX)
        f |= METRICS_FLAG_STEAL;
    if (m->iowait_pct > METRICS_IOWAIT_PCT_MAX)
        f |= METRICS_FLAG_IOWAIT;
    if (m->runq_avg > m->cores_used)
        f |= METRICS_FLAG_RUNQ;
    if (m->other_pct > METRICS_OTHER_PCT_MAX)
        f |= METRICS_FLAG_OTHER;
    return f;
}

void metrics_flags_format(struct strbuf *sb, const struct run_metrics *m)
{
    const char *sep = "";
    if (m->flags & METRICS_FLAG_STEAL) {
        strbuf_addf(sb, "%ssteal %.1f%% > %g%%", sep, m->steal_pct, METRICS_STEAL_PCT_MAX);
        sep = "; ";
    }
    if (m->flags & METRICS_FLAG_IOWAIT) {
        strbuf_addf(sb, "%siowait %.1f%% > %g%%", sep, m->iowait_pct, METRICS_IOWAIT_PCT_MAX);
        sep = "; ";
    }
    if (m->flags & METRICS_FLAG_RUNQ) {
        strbuf_addf(sb, "%srun queue %.1f > %d core%s", sep, m->runq_avg, m->cores_used,
                    m->cores_used == 1 ? "" : "s");
        sep = "; ";
    }
    if (m->flags & METRICS_FLAG_OTHER)
        strbuf_addf(sb, "%sother CPU %.1f%% > %g%%", sep, m->other_pct, METRICS_OTHER_PCT_MAX);
}

/* ---------------------------------------------------------------- JSON */

struct num_field {
    const char *key;
    size_t off;
};
#define NF(f) { #f, offsetof(struct run_metrics, f) }
static const struct num_field num_fields[] = {
    NF(wall_s), NF(intr_per_s), NF(ctxsw_per_s), NF(us_pct), NF(sys_pct), NF(idle_pct),
    NF(iowait_pct), NF(steal_pct), NF(pgfault_per_s), NF(pgmajfault_per_s), NF(swapin_per_s),
    NF(swapout_per_s), NF(ctxsw_per_txn), NF(client_cpu_s), NF(server_cpu_s),
    NF(client_us_per_txn), NF(server_us_per_txn), NF(busy_cores), NF(other_cores),
    NF(other_pct), NF(runq_avg), NF(runq_max), NF(load1),
    /* the user / system split: absent (NAN) in runs recorded before it */
    NF(client_user_cpu_s), NF(client_sys_cpu_s), NF(server_user_cpu_s), NF(server_sys_cpu_s),
    NF(client_user_us_per_txn), NF(client_sys_us_per_txn), NF(server_user_us_per_txn),
    NF(server_sys_us_per_txn),
};

static double *num_at(struct run_metrics *m, size_t off)
{
    return (double *)((char *)m + off);
}

json_t *metrics_to_json(const struct run_metrics *m)
{
    json_t *o = json_object();
    json_object_set_new(o, "available", json_boolean(m->available));
    if (!m->available) {
        json_object_set_new(o, "note", jstr(m->note ? m->note : "not sampled"));
        return o;
    }
    for (size_t i = 0; i < ARRAY_SIZE(num_fields); i++)
        json_object_set_new(o, num_fields[i].key,
                            jreal(*num_at((struct run_metrics *)m, num_fields[i].off)));
    json_object_set_new(o, "nsamples", json_integer(m->nsamples));
    json_object_set_new(o, "interval_s", json_real(METRICS_INTERVAL_S));
    json_object_set_new(o, "ncpu", json_integer(m->ncpu));
    json_object_set_new(o, "cores_used", json_integer(m->cores_used));
    json_object_set_new(o, "server_procs", json_integer(m->server_procs));
    json_t *fl = json_array();
    static const char *const names[] = { "steal", "iowait", "runq", "other" };
    for (int b = 0; b < 4; b++)
        if (m->flags & (1u << b))
            json_array_append_new(fl, json_string(names[b]));
    json_object_set_new(o, "flags", fl);
    json_t *pts = json_array();
    for (int i = 0; i < m->npoints; i++) {
        const struct metrics_point *p = &m->points[i];
        json_t *row = json_array();
        json_array_append_new(row, jreal(p->t));
        json_array_append_new(row, jreal(p->busy_pct));
        json_array_append_new(row, jreal(p->client_cores));
        json_array_append_new(row, jreal(p->server_cores));
        json_array_append_new(row, json_integer(p->server_procs));
        json_array_append_new(row, jreal(p->runq));
        json_array_append_new(pts, row);
    }
    json_object_set_new(o, "points", pts);
    return o;
}

char *metrics_json_text(const struct run_metrics *m)
{
    json_t *o = metrics_to_json(m);
    char *text = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    if (!text)
        die("out of memory");
    return text;
}

static double num_or_nan(json_t *v)
{
    return json_is_number(v) ? json_number_value(v) : NAN;
}

int metrics_from_json(const char *text, struct run_metrics *out)
{
    memset(out, 0, sizeof(*out));
    json_t *o = text ? json_loads(text, 0, NULL) : NULL;
    if (!json_is_object(o) || !json_is_boolean(json_object_get(o, "available"))) {
        json_decref(o);
        return -1;
    }
    out->available = json_is_true(json_object_get(o, "available"));
    if (!out->available) {
        const char *note = json_string_value(json_object_get(o, "note"));
        out->note = xstrdup(note ? note : "not sampled");
        json_decref(o);
        return 0;
    }
    for (size_t i = 0; i < ARRAY_SIZE(num_fields); i++)
        *num_at(out, num_fields[i].off) = num_or_nan(json_object_get(o, num_fields[i].key));
    out->nsamples = (int)json_integer_value(json_object_get(o, "nsamples"));
    out->ncpu = (int)json_integer_value(json_object_get(o, "ncpu"));
    out->cores_used = (int)json_integer_value(json_object_get(o, "cores_used"));
    out->server_procs = (int)json_integer_value(json_object_get(o, "server_procs"));
    json_t *pts = json_object_get(o, "points");
    size_t np = json_array_size(pts);
    out->points = xcalloc(np ? np : 1, sizeof(*out->points));
    for (size_t i = 0; i < np; i++) {
        json_t *row = json_array_get(pts, i);
        struct metrics_point *p = &out->points[out->npoints++];
        p->t = num_or_nan(json_array_get(row, 0));
        p->busy_pct = num_or_nan(json_array_get(row, 1));
        p->client_cores = num_or_nan(json_array_get(row, 2));
        p->server_cores = num_or_nan(json_array_get(row, 3));
        p->server_procs = (int)json_integer_value(json_array_get(row, 4));
        p->runq = num_or_nan(json_array_get(row, 5));
    }
    /* the flags are recomputed: the thresholds are this build's */
    out->flags = metrics_flags(out);
    json_decref(o);
    return 0;
}

void metrics_release(struct run_metrics *m)
{
    free(m->note);
    free(m->points);
    memset(m, 0, sizeof(*m));
}

void metrics_copy(struct run_metrics *dst, const struct run_metrics *src)
{
    *dst = *src;
    dst->note = src->note ? xstrdup(src->note) : NULL;
    dst->points = xcalloc((size_t)(src->npoints ? src->npoints : 1), sizeof(*dst->points));
    if (src->npoints)
        memcpy(dst->points, src->points, sizeof(*dst->points) * (size_t)src->npoints);
}

/* ---------------------------------------------------------------- report fields */

static const char *const field_key[] = {
    "intr_per_s", "ctxsw_per_s", "us_pct", "sys_pct", "idle_pct", "iowait_pct", "steal_pct",
    "ctxsw_per_txn", "client_cpu_us_per_txn", "server_cpu_us_per_txn", "pgfault_per_s",
    "swapin_per_s", "swapout_per_s", "other_cpu_pct", "runq",
    "client_user_cpu_us_per_txn", "client_sys_cpu_us_per_txn", "server_user_cpu_us_per_txn",
    "server_sys_cpu_us_per_txn",
};
static const char *const field_title[] = {
    "intr/s", "ctxsw/s", "us%", "sys%", "idle%", "iowait%", "steal%", "ctxsw/txn",
    "CPU us/txn client", "CPU us/txn server", "faults/s", "swap in/s", "swap out/s",
    "other CPU%", "run queue",
    "CPU us/txn client user", "CPU us/txn client sys", "CPU us/txn server user",
    "CPU us/txn server sys",
};

_Static_assert(ARRAY_SIZE(field_key) == MF_COUNT, "a key per field");
_Static_assert(ARRAY_SIZE(field_title) == MF_COUNT, "a title per field");

const char *metrics_field_key(enum metrics_field f)
{
    return (int)f >= 0 && f < MF_COUNT ? field_key[f] : "?";
}

const char *metrics_field_title(enum metrics_field f)
{
    return (int)f >= 0 && f < MF_COUNT ? field_title[f] : "?";
}

double metrics_field_value(const struct run_metrics *m, enum metrics_field f)
{
    if (!m->available)
        return NAN;
    switch (f) {
    case MF_INTR_S: return m->intr_per_s;
    case MF_CTXSW_S: return m->ctxsw_per_s;
    case MF_US: return m->us_pct;
    case MF_SYS: return m->sys_pct;
    case MF_IDLE: return m->idle_pct;
    case MF_IOWAIT: return m->iowait_pct;
    case MF_STEAL: return m->steal_pct;
    case MF_CTXSW_TXN: return m->ctxsw_per_txn;
    case MF_CLIENT_US_TXN: return m->client_us_per_txn;
    case MF_SERVER_US_TXN: return m->server_us_per_txn;
    case MF_PGFAULT_S: return m->pgfault_per_s;
    case MF_SWAPIN_S: return m->swapin_per_s;
    case MF_SWAPOUT_S: return m->swapout_per_s;
    case MF_OTHER_PCT: return m->other_pct;
    case MF_RUNQ: return m->runq_avg;
    case MF_CLIENT_USER_US_TXN: return m->client_user_us_per_txn;
    case MF_CLIENT_SYS_US_TXN: return m->client_sys_us_per_txn;
    case MF_SERVER_USER_US_TXN: return m->server_user_us_per_txn;
    case MF_SERVER_SYS_US_TXN: return m->server_sys_us_per_txn;
    case MF_COUNT: break;
    }
    return NAN;
}

void metrics_warn_unavailable(const char *why)
{
    static bool warned;
    if (warned)
        return;
    warned = true;
    warning("metrics unavailable: %s; runs are recorded without them", why);
}
