/* experiment: runs variants x workloads x thread counts x rounds as child processes and
 * reports them (see experiment.h). Owned by the experiment engine; used by pgo and compare. */
#include "experiment/experiment.h"
#include "util/progress.h"
#include "util/strbuf.h"
#include "util/subprocess.h"
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "stats/compare.h"
#include "version.h"

static const char *const metric_title[METRIC_COUNT] = {
    "Transactions per second",
    "Average response time (ms)",
    "95th percentile response time (ms)",
};
static const char *const metric_key[METRIC_COUNT] = { "tps", "lat_avg_ms", "lat_p95_ms" };

/* ---------------------------------------------------------------- small helpers */

/* Make dir and its parents (mode 0755); 0, or -1 with errno set. */
static int mkdir_p(const char *dir)
{
    char *p = xstrdup(dir);
    for (char *s = p + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = '\0';
        if (mkdir(p, 0755) < 0 && errno != EEXIST) {
            free(p);
            return -1;
        }
        *s = '/';
    }
    int rc = mkdir(p, 0755) < 0 && errno != EEXIST ? -1 : 0;
    free(p);
    return rc;
}

/* Copy the file src to dst (created or truncated). 0, or -1 with errno set. */
static int copy_file(const char *src, const char *dst)
{
    char buf[1 << 16];
    int in = open(src, O_RDONLY | O_CLOEXEC);
    if (in < 0)
        return -1;
    int out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (out < 0) {
        int e = errno;
        close(in);
        errno = e;
        return -1;
    }
    ssize_t n;
    int rc = 0;
    while ((n = read(in, buf, sizeof(buf))) != 0) {
        if (n < 0) {
            if (errno == EINTR)
                continue;
            rc = -1;
            break;
        }
        for (ssize_t off = 0; off < n;) {
            ssize_t w = write(out, buf + off, (size_t)(n - off));
            if (w < 0) {
                if (errno == EINTR)
                    continue;
                rc = -1;
                break;
            }
            off += w;
        }
        if (rc < 0)
            break;
    }
    int e = errno;
    close(in);
    if (close(out) < 0 && rc == 0) {
        e = errno;
        rc = -1;
    }
    errno = e;
    return rc;
}

/* Remove a SQLite database file and its -wal, -shm and -journal companions. */
static void remove_db(const char *path)
{
    static const char *const sfx[] = { "", "-wal", "-shm", "-journal" };
    for (size_t i = 0; i < ARRAY_SIZE(sfx); i++) {
        char *p = xasprintf("%s%s", path, sfx[i]);
        unlink(p);
        free(p);
    }
}

static int file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* Last `lines` lines of a log file as one line ("a | b | c"); caller frees. */
static char *log_tail_line(const char *path, int lines)
{
    char *t = file_tail(path, lines);
    for (char *c = t; *c; c++)
        if (*c == '\n')
            *c = '|';
    if (!*t) {
        free(t);
        return xstrdup("(nothing on stderr)");
    }
    return t;
}

/* "45s", "3m10s", "1h02m". */
static void add_duration(struct strbuf *sb, double s)
{
    long t = s > 0 ? (long)(s + 0.5) : 0;
    if (t >= 3600)
        strbuf_addf(sb, "%ldh%02ldm", t / 3600, t / 60 % 60);
    else if (t >= 60)
        strbuf_addf(sb, "%ldm%02lds", t / 60, t % 60);
    else
        strbuf_addf(sb, "%lds", t);
}

/* "%g" without exponent surprises for run times and seeds. */
static char *fmt_num(double x)
{
    return xasprintf("%.15g", x);
}

static void iso_time(struct strbuf *sb, double t)
{
    char buf[64];
    time_t s = (time_t)t;
    struct tm tm;
    gmtime_r(&s, &tm);
    strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
    strbuf_addstr(sb, buf);
}

/* A JSON number, or null when x is not finite (jansson refuses NAN/inf). */
static json_t *jreal(double x)
{
    return isfinite(x) ? json_real(x) : json_null();
}

static json_t *jstr(const char *s)
{
    json_t *j = s ? json_string(s) : NULL;
    return j ? j : json_null();
}

/* ---------------------------------------------------------------- environment */

static char *read_first_line(const char *path)
{
    struct strbuf sb = STRBUF_INIT;
    if (strbuf_read_file(&sb, path) < 0) {
        strbuf_release(&sb);
        return NULL;
    }
    char *nl = strchr(sb.buf, '\n');
    if (nl)
        *nl = '\0';
    char *r = xstrdup(sb.buf);
    strbuf_release(&sb);
    return r;
}

/* The "model name" of the first CPU in /proc/cpuinfo, or NULL; caller frees. */
static char *cpu_model(void)
{
    struct strbuf sb = STRBUF_INIT;
    char *model = NULL;
    if (strbuf_read_file(&sb, "/proc/cpuinfo") == 0) {
        for (char *line = sb.buf; line && *line;) {
            char *nl = strchr(line, '\n');
            if (nl)
                *nl = '\0';
            if (!strncmp(line, "model name", 10)) {
                char *colon = strchr(line, ':');
                if (colon) {
                    colon++;
                    while (*colon == ' ' || *colon == '\t')
                        colon++;
                    model = xstrdup(colon);
                    break;
                }
            }
            line = nl ? nl + 1 : NULL;
        }
    }
    strbuf_release(&sb);
    return model;
}

/* The environment as JSON object text: kernel, CPU, cores, memory, host, load, version. */
static char *environment_json(double started_at)
{
    json_t *env = json_object();
    struct utsname u;
    struct sysinfo si;
    char host[256];
    struct strbuf sb = STRBUF_INIT;

    json_object_set_new(env, "pgolab_version", json_string(PGOLAB_VERSION));
    iso_time(&sb, started_at);
    json_object_set_new(env, "started_at", json_string(sb.buf));
    if (gethostname(host, sizeof(host)) == 0) {
        host[sizeof(host) - 1] = '\0';
        json_object_set_new(env, "hostname", jstr(host));
    }
    if (uname(&u) == 0) {
        json_object_set_new(env, "kernel", jstr(u.release));
        json_object_set_new(env, "kernel_version", jstr(u.version));
        json_object_set_new(env, "machine", jstr(u.machine));
    }
    char *model = cpu_model();
    json_object_set_new(env, "cpu_model", jstr(model));
    free(model);
    json_object_set_new(env, "cores", json_integer(sysconf(_SC_NPROCESSORS_ONLN)));
    if (sysinfo(&si) == 0) {
        json_object_set_new(env, "memory_bytes",
                            json_integer((json_int_t)si.totalram * (json_int_t)si.mem_unit));
        json_object_set_new(env, "loadavg_1m", json_real(si.loads[0] / 65536.0));
    }
    char *gov = read_first_line("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor");
    json_object_set_new(env, "cpufreq_governor", jstr(gov));
    free(gov);

    char *text = json_dumps(env, JSON_COMPACT);
    json_decref(env);
    strbuf_release(&sb);
    return text ? text : xstrdup("{}");
}

/* ---------------------------------------------------------------- run order */

/* splitmix64 step (Steele, Lea and Flood, "Fast splittable pseudorandom number generators",
 * OOPSLA 2014): a good 64-bit mixer for deriving independent seeds. */
static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

void experiment_order(uint64_t seed, int round, int block, int n, int *order)
{
    uint64_t st = seed;
    uint64_t h = splitmix64(&st);
    st = h + (uint64_t)(uint32_t)round;
    h = splitmix64(&st);
    st = h + (uint64_t)(uint32_t)block;
    h = splitmix64(&st);

    for (int i = 0; i < n; i++)
        order[i] = i;
    if (n < 2)
        return;
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (!rng)
        die("out of memory");
    gsl_rng_set(rng, (unsigned long)(h ^ (h >> 32)));
    gsl_ran_shuffle(rng, order, (size_t)n, sizeof(int));
    gsl_rng_free(rng);
}

/* ---------------------------------------------------------------- child reports */

/* The number at obj.key into *out; -1 if it is missing or not a number. */
static int get_num(json_t *obj, const char *key, double *out)
{
    json_t *v = json_object_get(obj, key);
    if (!json_is_number(v))
        return -1;
    *out = json_number_value(v);
    return 0;
}

int experiment_parse_run(const char *json, struct run_result *r)
{
    json_error_t je;
    json_t *root = json_loads(json, 0, &je);
    double x;
    if (!root)
        return error("the child's report is not JSON: %s (line %d, column %d)", je.text, je.line,
                     je.column);
    int rc = -1;
    json_t *lat = json_object_get(root, "latency_ms");
    if (!json_is_object(root) || !json_is_object(lat)) {
        error("the child's report has no \"latency_ms\" object");
        goto out;
    }
    if (json_is_true(json_object_get(root, "interrupted")) ||
        json_is_true(json_object_get(root, "failed"))) {
        error("the child's run was %s", json_is_true(json_object_get(root, "failed"))
                                            ? "stopped by a fatal error" : "interrupted");
        goto out;
    }
    if (get_num(root, "tps", &r->tps) < 0 || get_num(root, "qps", &r->qps) < 0 ||
        get_num(lat, "avg", &r->lat_avg_ms) < 0) {
        error("the child's report lacks tps, qps or latency_ms.avg");
        goto out;
    }
    if (get_num(lat, "p95", &r->lat_p95_ms) < 0 &&
        get_num(lat, "percentile_value", &r->lat_p95_ms) < 0) {
        error("the child's report lacks latency_ms.p95");
        goto out;
    }
    r->lat_min_ms = get_num(lat, "min", &x) == 0 ? x : NAN;
    r->lat_max_ms = get_num(lat, "max", &x) == 0 ? x : NAN;
    r->transactions = get_num(root, "transactions", &x) == 0 && x >= 0 ? (uint64_t)x : 0;
    r->errors = get_num(root, "ignored_errors", &x) == 0 && x >= 0 ? (uint64_t)x : 0;
    r->json = xstrdup(json);
    rc = 0;
out:
    json_decref(root);
    return rc;
}

/* ---------------------------------------------------------------- running */

static volatile sig_atomic_t got_signal;

static void on_signal(int sig)
{
    got_signal = sig;
}

static const char *signal_name(int sig)
{
    return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "a signal";
}

/* Record why the experiment stops, print it, return -1. */
static int fail(struct experiment_result *res, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static int fail(struct experiment_result *res, const char *fmt, ...)
{
    struct strbuf sb = STRBUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    strbuf_vaddf(&sb, fmt, ap);
    va_end(ap);
    progress_done();
    error("%s", sb.buf);
    free(res->error);
    res->error = strbuf_detach(&sb);
    return -1;
}

/* The child's argv: PGOLAB bench --sqlite-library=L --sqlite-db=DB --tables=T
 * --table-size=N --threads=K [extra...] [bench_args...] WORKLOAD COMMAND. */
struct child_argv {
    const char *v[64];
    char *own[16];
    int n, nown;
};

static void argv_add(struct child_argv *a, const char *s)
{
    if (a->n >= (int)ARRAY_SIZE(a->v) - 1)
        die("too many arguments for a child process");
    a->v[a->n++] = s;
    a->v[a->n] = NULL;
}

static void argv_addf(struct child_argv *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void argv_addf(struct child_argv *a, const char *fmt, ...)
{
    struct strbuf sb = STRBUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    strbuf_vaddf(&sb, fmt, ap);
    va_end(ap);
    if (a->nown >= (int)ARRAY_SIZE(a->own))
        die("too many arguments for a child process");
    a->own[a->nown] = strbuf_detach(&sb);
    argv_add(a, a->own[a->nown++]);
}

static void argv_release(struct child_argv *a)
{
    for (int i = 0; i < a->nown; i++)
        free(a->own[i]);
    a->nown = a->n = 0;
}

static void child_argv_init(struct child_argv *a, const struct experiment_config *cfg,
                            const char *library, const char *db, int threads)
{
    memset(a, 0, sizeof(*a));
    argv_add(a, cfg->pgolab);
    argv_add(a, "bench");
    argv_addf(a, "--sqlite-library=%s", library);
    argv_addf(a, "--sqlite-db=%s", db);
    argv_addf(a, "--tables=%d", cfg->tables);
    argv_addf(a, "--table-size=%d", cfg->table_size);
    argv_addf(a, "--threads=%d", threads);
}

static void child_argv_finish(struct child_argv *a, const struct experiment_config *cfg,
                              const char *workload, const char *command)
{
    for (char **b = cfg->bench_args; b && *b; b++)
        argv_add(a, *b);
    argv_add(a, workload);
    argv_add(a, command);
}

/* Prepare the workload's data once, with the baseline library, into template. */
static int prepare_template(const struct experiment_config *cfg, struct experiment_result *res,
                            int w, const char *template)
{
    const char *workload = cfg->workloads[w];
    struct child_argv a;
    char *log = xasprintf("%s/prepare-%d-%s.log", cfg->workdir, w, workload);
    unlink(log);
    child_argv_init(&a, cfg, cfg->variants[0].library, template, 1);
    child_argv_finish(&a, cfg, workload, "prepare");
    struct subprocess sp = { .argv = a.v, .log_path = log };
    if (cfg->progress)
        progress("preparing %s (%d x %d rows)", workload, cfg->tables, cfg->table_size);
    int st = subprocess_run(&sp);
    int rc = 0;
    if (got_signal) {
        res->signal = got_signal;
        rc = fail(res, "interrupted by %s while preparing %s", signal_name(got_signal), workload);
    } else if (st != 0 || !file_exists(template)) {
        char *tail = log_tail_line(log, 3);
        rc = fail(res, "prepare of %s with %s failed (exit %d): %s", workload,
                  cfg->variants[0].name, st, tail);
        free(tail);
    }
    argv_release(&a);
    free(log);
    return rc;
}

/* One run: fresh copy of the template, child bench run, parse, append to res. */
static int run_once(const struct experiment_config *cfg, struct experiment_result *res, int w,
                    int t, int round, int v, const char *template, const char *rundb)
{
    const struct variant *var = &cfg->variants[v];
    const char *workload = cfg->workloads[w];
    int threads = cfg->threads[t];
    int seq = res->nruns;
    struct strbuf out = STRBUF_INIT;
    struct run_result r;
    struct child_argv a;
    int rc = -1;
    char *log = xasprintf("%s/run-%03d.log", cfg->workdir, seq + 1);
    char *time_arg = fmt_num(cfg->time_s);

    memset(&r, 0, sizeof(r));
    remove_db(rundb);
    unlink(log);
    static const char *const sfx[] = { "", "-wal" };
    for (size_t i = 0; i < ARRAY_SIZE(sfx); i++) {
        char *src = xasprintf("%s%s", template, sfx[i]);
        char *dst = xasprintf("%s%s", rundb, sfx[i]);
        int cr = (i == 0 || file_exists(src)) ? copy_file(src, dst) : 0;
        if (cr < 0)
            fail(res, "cannot copy %s to %s: %s", src, dst, strerror(errno));
        free(src);
        free(dst);
        if (cr < 0)
            goto out;
    }

    child_argv_init(&a, cfg, var->library, rundb, threads);
    argv_addf(&a, "--time=%s", time_arg);
    argv_add(&a, "--report-interval=1");
    argv_add(&a, "--format=json");
    child_argv_finish(&a, cfg, workload, "run");
    /* A run ends itself after --time; the timeout only guards against a hung child. */
    struct subprocess sp = { .argv = a.v, .log_path = log, .out = &out,
                             .timeout_s = cfg->time_s * 3 + 60 };
    int st = subprocess_run(&sp);
    argv_release(&a);

    if (got_signal) {
        res->signal = got_signal;
        fail(res, "interrupted by %s during run %d (%s, %s, threads=%d, round %d/%d); "
                  "keeping the %d finished runs",
             signal_name(got_signal), seq + 1, var->name, workload, threads, round, cfg->rounds,
             res->nruns);
        goto out;
    }
    if (st != 0) {
        char *tail = log_tail_line(log, 3);
        fail(res, "run failed: variant %s, %s, threads=%d, round %d/%d: exit %d: %s", var->name,
             workload, threads, round, cfg->rounds, st, tail);
        free(tail);
        goto out;
    }
    strbuf_rtrim(&out);
    if (experiment_parse_run(out.buf, &r) < 0) {
        char *tail = log_tail_line(log, 3);
        fail(res, "run failed: variant %s, %s, threads=%d, round %d/%d: unusable report "
                  "(%zu bytes on stdout); stderr: %s",
             var->name, workload, threads, round, cfg->rounds, out.len, tail);
        free(tail);
        goto out;
    }
    /* The run must have measured this variant's library, not another SQLite. */
    if (var->source_id) {
        json_t *root = json_loads(r.json, 0, NULL);
        json_t *lib = json_object_get(root, "library");
        const char *sid = json_string_value(json_object_get(lib, "engine_source_id"));
        if (!sid) /* the engine's own id (catches interposition), else the exported one */
            sid = json_string_value(json_object_get(lib, "source_id"));
        if (sid && strcmp(sid, var->source_id)) {
            fail(res, "run %d measured the wrong library: variant %s is SQLite %s but the child "
                      "ran %s", seq + 1, var->name, var->source_id, sid);
            json_decref(root);
            free(r.json);
            goto out;
        }
        json_decref(root);
    }
    r.variant = v;
    r.workload = w;
    r.threads = threads;
    r.round = round;
    res->runs = xrealloc(res->runs, sizeof(*res->runs) * (size_t)(res->nruns + 1));
    res->runs[res->nruns++] = r;
    rc = 0;
out:
    remove_db(rundb);
    strbuf_release(&out);
    free(time_arg);
    free(log);
    return rc;
}

int experiment_run(const struct experiment_config *cfg, struct experiment_result *res)
{
    struct sigaction sa, old_int, old_term;
    int total = cfg->nworkloads * cfg->rounds * cfg->nthreads * cfg->nvariants;
    int *order = xcalloc((size_t)cfg->nvariants + 1, sizeof(int));
    char *rundb = xasprintf("%s/run.db", cfg->workdir);
    char *template = NULL;
    uint64_t run_ns = 0;
    int rc = 0;

    memset(res, 0, sizeof(*res));
    res->started_at = wall_time();
    res->env_json = environment_json(res->started_at);
    if (cfg->nvariants < 1 || cfg->nworkloads < 1 || cfg->nthreads < 1 || cfg->rounds < 1) {
        rc = fail(res, "experiment: nothing to run (need variants, workloads, threads, rounds)");
        goto done;
    }
    if (mkdir_p(cfg->workdir) < 0) {
        rc = fail(res, "cannot create the work directory %s: %s", cfg->workdir, strerror(errno));
        goto done;
    }

    got_signal = 0;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);

    for (int w = 0; w < cfg->nworkloads && rc == 0; w++) {
        free(template);
        template = xasprintf("%s/template-%d.db", cfg->workdir, w);
        remove_db(template);
        rc = prepare_template(cfg, res, w, template);
        for (int round = 1; round <= cfg->rounds && rc == 0; round++) {
            for (int t = 0; t < cfg->nthreads && rc == 0; t++) {
                experiment_order(cfg->seed, round, w * cfg->nthreads + t, cfg->nvariants, order);
                for (int i = 0; i < cfg->nvariants && rc == 0; i++) {
                    int done = res->nruns;
                    if (cfg->progress) {
                        /* ETA: mean duration of the runs so far (before any: --time + 1 s)
                         * times the runs left, this one included. */
                        double per = done ? run_ns / 1e9 / done : cfg->time_s + 1.0;
                        struct strbuf eta = STRBUF_INIT;
                        add_duration(&eta, per * (total - done));
                        progress("round %d/%d  %s  threads=%d  %s  [run %d/%d, ETA %s]", round,
                                 cfg->rounds, cfg->workloads[w], cfg->threads[t],
                                 cfg->variants[order[i]].name, done + 1, total, eta.buf);
                        strbuf_release(&eta);
                    }
                    uint64_t t0 = now_ns();
                    rc = run_once(cfg, res, w, t, round, order[i], template, rundb);
                    run_ns += now_ns() - t0;
                }
            }
        }
        remove_db(template);
    }
    progress_done();
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
done:
    res->finished_at = wall_time();
    free(template);
    free(rundb);
    free(order);
    return rc;
}

/* ---------------------------------------------------------------- fingerprint */

static int library_info(const struct experiment_config *cfg, struct variant *v)
{
    struct strbuf out = STRBUF_INIT;
    struct child_argv a;
    json_error_t je;
    int rc = -1;

    memset(&a, 0, sizeof(a));
    argv_add(&a, cfg->pgolab);
    argv_add(&a, "bench");
    argv_addf(&a, "--sqlite-library=%s", v->library);
    argv_add(&a, "--format=json");
    argv_add(&a, "info");
    struct subprocess sp = { .argv = a.v, .out = &out };
    int st = subprocess_run(&sp);
    argv_release(&a);
    if (st != 0) {
        error("variant %s: `pgolab bench --sqlite-library=%s info` failed (exit %d)", v->name,
              v->library, st);
        goto out;
    }
    json_t *root = json_loads(out.buf, 0, &je);
    json_t *lib = json_object_get(root, "library");
    if (!json_is_object(lib)) {
        error("variant %s: the library info is not the expected JSON (%s)", v->name,
              root ? "no \"library\" object" : je.text);
        json_decref(root);
        goto out;
    }
    const char *s;
    if (!v->version && (s = json_string_value(json_object_get(lib, "version"))))
        v->version = xstrdup(s);
    if (!v->source_id && (s = json_string_value(json_object_get(lib, "source_id"))))
        v->source_id = xstrdup(s);
    if (!v->loaded_from && (s = json_string_value(json_object_get(lib, "loaded_from"))))
        v->loaded_from = xstrdup(s);
    json_decref(root);
    rc = 0;
out:
    strbuf_release(&out);
    return rc;
}

static int library_sha256(struct variant *v)
{
    struct strbuf out = STRBUF_INIT;
    const char *argv[] = { "sha256sum", "--", v->library, NULL };
    struct subprocess sp = { .argv = argv, .out = &out };
    int st = subprocess_run(&sp);
    size_t hex = strspn(out.buf, "0123456789abcdef");
    int rc = 0;
    if (st != 0 || hex != 64)
        rc = error("variant %s: sha256sum %s failed (exit %d)", v->name, v->library, st);
    else
        v->sha256 = xstrndup(out.buf, 64);
    strbuf_release(&out);
    return rc;
}

int experiment_fingerprint(const struct experiment_config *cfg)
{
    for (int i = 0; i < cfg->nvariants; i++) {
        struct variant *v = &cfg->variants[i];
        if (!v->sha256 && library_sha256(v) < 0)
            return -1;
        if ((!v->version || !v->source_id || !v->loaded_from) && library_info(cfg, v) < 0)
            return -1;
    }
    return 0;
}

void experiment_variant_release(struct variant *v)
{
    free(v->sha256);
    free(v->version);
    free(v->source_id);
    free(v->loaded_from);
    v->sha256 = v->version = v->source_id = v->loaded_from = NULL;
}

/* ---------------------------------------------------------------- statistics */

double experiment_metric_value(const struct run_result *r, enum experiment_metric m)
{
    switch (m) {
    case METRIC_TPS: return r->tps;
    case METRIC_LAT_AVG_MS: return r->lat_avg_ms;
    case METRIC_LAT_P95_MS: return r->lat_p95_ms;
    }
    return NAN;
}

/* The values of metric m over the rounds of (variant, workload, thread count), in run order
 * (caller frees; *n = 0 and an empty array when there are none). */
static double *cell_values(const struct experiment_result *res, int variant, int workload,
                           int threads, enum experiment_metric m, int *n)
{
    double *x = xcalloc((size_t)res->nruns + 1, sizeof(double));
    *n = 0;
    for (int i = 0; i < res->nruns; i++) {
        const struct run_result *r = &res->runs[i];
        if (r->variant == variant && r->workload == workload && r->threads == threads)
            x[(*n)++] = experiment_metric_value(r, m);
    }
    return x;
}

struct cell_stats experiment_cell(const struct experiment_result *res, int variant, int workload,
                                  int threads, enum experiment_metric m)
{
    struct cell_stats c = { 0, 0, 0, 0 };
    double *x = cell_values(res, variant, workload, threads, m, &c.n);
    if (c.n) {
        gsl_sort(x, 1, (size_t)c.n);
        c.median = gsl_stats_median_from_sorted_data(x, 1, (size_t)c.n);
        c.min = x[0];
        c.max = x[c.n - 1];
    }
    free(x);
    return c;
}

double experiment_improvement(enum experiment_metric m, double base, double value)
{
    if (base == 0 || isnan(base) || isnan(value))
        return NAN;
    if (m == METRIC_TPS)
        return (value - base) / base * 100.0;
    return (base - value) / base * 100.0;
}

/* ---------------------------------------------------------------- text report */

/* A text table: each cell a main part (right-aligned) and an optional spread (left-aligned
 * after it), so the medians line up on the decimal point. Rendered as a pipe table that
 * reads well in a terminal and as Markdown. */
struct table {
    int ncols, nrows;
    char **head;          /* ncols */
    char **main, **spread; /* nrows * ncols, NULL = empty */
};

static void table_init(struct table *t, int ncols, int nrows)
{
    t->ncols = ncols;
    t->nrows = nrows;
    t->head = xcalloc((size_t)ncols, sizeof(char *));
    t->main = xcalloc((size_t)(ncols * nrows), sizeof(char *));
    t->spread = xcalloc((size_t)(ncols * nrows), sizeof(char *));
}

static void table_release(struct table *t)
{
    for (int i = 0; i < t->ncols; i++)
        free(t->head[i]);
    for (int i = 0; i < t->ncols * t->nrows; i++) {
        free(t->main[i]);
        free(t->spread[i]);
    }
    free(t->head);
    free(t->main);
    free(t->spread);
}

static size_t slen(const char *s)
{
    return s ? strlen(s) : 0;
}

static void pad(struct strbuf *sb, size_t n)
{
    while (n--)
        strbuf_addch(sb, ' ');
}

static void table_render(const struct table *t, struct strbuf *sb)
{
    size_t *wm = xcalloc((size_t)t->ncols, sizeof(size_t));
    size_t *ws = xcalloc((size_t)t->ncols, sizeof(size_t));
    size_t *w = xcalloc((size_t)t->ncols, sizeof(size_t));
    for (int c = 0; c < t->ncols; c++) {
        for (int r = 0; r < t->nrows; r++) {
            size_t m = slen(t->main[r * t->ncols + c]), s = slen(t->spread[r * t->ncols + c]);
            wm[c] = m > wm[c] ? m : wm[c];
            ws[c] = s > ws[c] ? s : ws[c];
        }
        w[c] = wm[c] + (ws[c] ? ws[c] + 1 : 0);
        if (slen(t->head[c]) > w[c]) {
            wm[c] += slen(t->head[c]) - w[c];
            w[c] = slen(t->head[c]);
        }
    }
    /* Header: right-aligned with the main parts (the medians), then padded to the width. */
    for (int c = 0; c < t->ncols; c++) {
        size_t h = slen(t->head[c]), left = wm[c] > h ? wm[c] - h : 0;
        strbuf_addstr(sb, c ? " | " : "| ");
        pad(sb, left);
        strbuf_addstr(sb, t->head[c]);
        pad(sb, w[c] - left - h);
    }
    strbuf_addstr(sb, " |\n");
    /* Markdown separator, right-aligned columns: "|---------:|" is as wide as "| cell |". */
    for (int c = 0; c < t->ncols; c++) {
        strbuf_addch(sb, '|');
        for (size_t i = 0; i < w[c] + 1; i++)
            strbuf_addch(sb, '-');
        strbuf_addch(sb, ':');
    }
    strbuf_addstr(sb, "|\n");
    for (int r = 0; r < t->nrows; r++) {
        for (int c = 0; c < t->ncols; c++) {
            const char *m = t->main[r * t->ncols + c], *s = t->spread[r * t->ncols + c];
            strbuf_addstr(sb, c ? " | " : "| ");
            pad(sb, wm[c] - slen(m));
            strbuf_addstr(sb, m ? m : "");
            if (ws[c]) {
                strbuf_addch(sb, ' ');
                strbuf_addstr(sb, s ? s : "");
                pad(sb, ws[c] - slen(s));
            }
        }
        strbuf_addstr(sb, " |\n");
    }
    free(wm);
    free(ws);
    free(w);
}

/* Decimals for a table whose smallest value is minv: about four significant digits, 2..4
 * places (TPS 1234.56, latency 0.1234 ms). */
static int decimals_for(double minv)
{
    if (!(minv > 0) || !isfinite(minv))
        return 2;
    int d = 3 - (int)floor(log10(minv));
    return d < 2 ? 2 : d > 4 ? 4 : d;
}

static int run_count_planned(const struct experiment_config *cfg)
{
    return cfg->nworkloads * cfg->rounds * cfg->nthreads * cfg->nvariants;
}

/* The significance cell of variant v against the baseline: for a thread row, Mann-Whitney U
 * plus a bootstrap CI of the ratio of medians over the rounds ("~" when not significant, the
 * benchstat convention); for the Average row (row == nthreads), the geometric mean of the
 * per-thread ratios with its bootstrap CI ("~" when the CI contains no change). Caller frees. */
static char *verdict_cell(const struct experiment_config *cfg, const struct experiment_result *res,
                          int w, enum experiment_metric m, int v, int row)
{
    struct stats_opts so = STATS_OPTS_DEFAULT;
    struct strbuf sb = STRBUF_INIT;
    bool lower = m != METRIC_TPS;
    int nt = cfg->nthreads, first = row < nt ? row : 0, last = row < nt ? row : nt - 1;
    struct stats_cell *cells = xcalloc((size_t)nt, sizeof(*cells));
    double **vals = xcalloc((size_t)nt * 2, sizeof(*vals));
    int nc = 0, small = 0;

    so.seed = cfg->seed ^ ((uint64_t)(w * 131 + v * 17 + row) << 20 | (uint64_t)m);
    for (int t = first; t <= last; t++) {
        struct stats_cell *c = &cells[nc];
        vals[2 * nc] = cell_values(res, 0, w, cfg->threads[t], m, &c->n1);
        vals[2 * nc + 1] = cell_values(res, v, w, cfg->threads[t], m, &c->n2);
        c->a = vals[2 * nc];
        c->b = vals[2 * nc + 1];
        if (c->n1 < 1 || c->n2 < 1)
            continue; /* a row without data for both: left out of the Average */
        small |= c->n1 < 2 || c->n2 < 2;
        nc++;
    }
    if (!nc) {
        strbuf_addstr(&sb, "-");
    } else if (small) {
        strbuf_addstr(&sb, "no statistics with 1 round");
    } else if (row < nt) {
        struct stats_verdict vd;
        if (stats_compare(cells[0].a, cells[0].n1, cells[0].b, cells[0].n2, &so, &vd) == 0)
            stats_format_change(&sb, &vd, lower);
        else
            strbuf_addstr(&sb, "-");
    } else {
        /* Significance of the Average: Mann-Whitney on every round pooled over the rows,
         * each divided by its row's baseline median (so rows of different scale mix). */
        struct stats_interval iv;
        struct stats_mw mw;
        int na = 0, nb = 0;
        for (int i = 0; i < nc; i++) {
            na += cells[i].n1;
            nb += cells[i].n2;
        }
        double *pa = xcalloc((size_t)na, sizeof(double)), *pb = xcalloc((size_t)nb, sizeof(double));
        na = nb = 0;
        for (int i = 0; i < nc; i++) {
            double *sorted = xmalloc(sizeof(double) * (size_t)cells[i].n1);
            memcpy(sorted, cells[i].a, sizeof(double) * (size_t)cells[i].n1);
            gsl_sort(sorted, 1, (size_t)cells[i].n1);
            double med = gsl_stats_median_from_sorted_data(sorted, 1, (size_t)cells[i].n1);
            free(sorted);
            for (int k = 0; k < cells[i].n1; k++)
                pa[na++] = cells[i].a[k] / med;
            for (int k = 0; k < cells[i].n2; k++)
                pb[nb++] = cells[i].b[k] / med;
        }
        if (stats_geomean_ratio(cells, nc, &so, &iv) < 0 || stats_mann_whitney(pa, na, pb, nb, &mw) < 0)
            strbuf_addstr(&sb, "-");
        else if (mw.p >= so.alpha || (iv.ci_lo <= 1.0 && iv.ci_hi >= 1.0))
            strbuf_addstr(&sb, "~");
        else
            stats_format_interval(&sb, &iv, lower);
        free(pa);
        free(pb);
    }
    for (int i = 0; i < 2 * nt; i++)
        free(vals[i]);
    free(vals);
    free(cells);
    return strbuf_detach(&sb);
}

/* Render one metric table of one workload into sb. */
static void report_table(struct strbuf *sb, const struct experiment_config *cfg,
                         const struct experiment_result *res, int w, enum experiment_metric m)
{
    int nv = cfg->nvariants, nt = cfg->nthreads;
    int ncols = 1 + nv + 2 * (nv - 1);
    struct table t;
    struct cell_stats *cs = xcalloc((size_t)(nv * nt), sizeof(*cs));
    double *avg = xcalloc((size_t)nv, sizeof(double));
    double *col = xcalloc((size_t)nt + 1, sizeof(double));
    double minv = INFINITY;
    int navg = 0;

    for (int ti = 0; ti < nt; ti++)
        for (int v = 0; v < nv; v++) {
            struct cell_stats *c = &cs[ti * nv + v];
            *c = experiment_cell(res, v, w, cfg->threads[ti], m);
            if (c->n && c->min < minv)
                minv = c->min;
        }
    /* Average row: thread rows where every variant has data; mean of their medians. */
    for (int v = 0; v < nv; v++) {
        navg = 0;
        for (int ti = 0; ti < nt; ti++) {
            int full = 1;
            for (int u = 0; u < nv; u++)
                full &= cs[ti * nv + u].n > 0;
            if (full)
                col[navg++] = cs[ti * nv + v].median;
        }
        avg[v] = navg ? gsl_stats_mean(col, 1, (size_t)navg) : NAN;
    }
    int dec = decimals_for(minv);

    table_init(&t, ncols, nt + 1);
    t.head[0] = xstrdup("threads");
    for (int v = 0; v < nv; v++)
        t.head[1 + v] = xstrdup(cfg->variants[v].name);
    for (int v = 1; v < nv; v++) {
        t.head[nv + v] = nv == 2 ? xstrdup("% improvement")
                                 : xasprintf("%% improvement %s", cfg->variants[v].name);
        t.head[2 * nv - 1 + v] = nv == 2 ? xstrdup("change (95% CI)")
                                         : xasprintf("change %s (95%% CI)", cfg->variants[v].name);
    }
    for (int r = 0; r <= nt; r++) {
        char **rm = &t.main[r * ncols], **rs = &t.spread[r * ncols];
        rm[0] = r < nt ? xasprintf("%d", cfg->threads[r]) : xstrdup("Average");
        for (int v = 0; v < nv; v++) {
            if (r == nt) {
                rm[1 + v] = isnan(avg[v]) ? xstrdup("-") : xasprintf("%.*f", dec, avg[v]);
                continue;
            }
            const struct cell_stats *c = &cs[r * nv + v];
            if (!c->n) {
                rm[1 + v] = xstrdup("-");
                continue;
            }
            rm[1 + v] = xasprintf("%.*f", dec, c->median);
            if (cfg->rounds > 1)
                rs[1 + v] = c->n > 1 ? xasprintf("(%.*f-%.*f)", dec, c->min, dec, c->max)
                                     : xstrdup("(1 run)");
        }
        for (int v = 1; v < nv; v++) {
            double base = r < nt ? (cs[r * nv].n ? cs[r * nv].median : NAN) : avg[0];
            double val = r < nt ? (cs[r * nv + v].n ? cs[r * nv + v].median : NAN) : avg[v];
            double p = experiment_improvement(m, base, val);
            rm[nv + v] = isnan(p) ? xstrdup("-") : xasprintf("%+.2f", p);
            rm[2 * nv - 1 + v] = verdict_cell(cfg, res, w, m, v, r);
        }
    }
    table_render(&t, sb);
    table_release(&t);
    free(cs);
    free(avg);
    free(col);
}

void experiment_report_text(FILE *out, const struct experiment_config *cfg,
                            const struct experiment_result *res)
{
    struct strbuf sb = STRBUF_INIT;
    const struct variant *base = &cfg->variants[0];
    size_t namew = 0;
    char *time_s = fmt_num(cfg->time_s);

    for (int v = 0; v < cfg->nvariants; v++)
        if (strlen(cfg->variants[v].name) > namew)
            namew = strlen(cfg->variants[v].name);

    strbuf_addf(&sb, "pgolab experiment: %d variants, workloads ", cfg->nvariants);
    for (int w = 0; w < cfg->nworkloads; w++)
        strbuf_addf(&sb, "%s%s", w ? "," : "", cfg->workloads[w]);
    strbuf_addstr(&sb, ", threads ");
    for (int t = 0; t < cfg->nthreads; t++)
        strbuf_addf(&sb, "%s%d", t ? "," : "", cfg->threads[t]);
    strbuf_addf(&sb, ", %d round%s x %s s per run\n", cfg->rounds, cfg->rounds == 1 ? "" : "s",
                time_s);
    for (int v = 0; v < cfg->nvariants; v++) {
        const struct variant *var = &cfg->variants[v];
        strbuf_addf(&sb, "  %-8s %-*s  %s", v ? "variant" : "baseline", (int)namew, var->name,
                    var->library);
        strbuf_addf(&sb, " (SQLite %s", var->version ? var->version : "?");
        if (var->sha256)
            strbuf_addf(&sb, ", sha256 %.12s", var->sha256);
        if (var->compiler)
            strbuf_addf(&sb, ", %s", var->compiler);
        if (var->cflags) /* briefly: the JSON output has them whole */
            strbuf_addf(&sb, ", %.48s%s", var->cflags, strlen(var->cflags) > 48 ? "..." : "");
        if (v && var->sha256 && base->sha256 && !strcmp(var->sha256, base->sha256))
            strbuf_addf(&sb, "; same file as %s: an A/A run, differences are noise", base->name);
        strbuf_addstr(&sb, ")\n");
    }
    strbuf_addf(&sb, "  data: %d table%s x %d rows, a fresh copy per run; variant order "
                     "shuffled per round (seed %llu)\n",
                cfg->tables, cfg->tables == 1 ? "" : "s", cfg->table_size,
                (unsigned long long)cfg->seed);
    if (cfg->rounds > 1)
        strbuf_addf(&sb, "  cells: median of %d rounds (min-max); ", cfg->rounds);
    else
        strbuf_addstr(&sb, "  cells: one round; ");
    strbuf_addf(&sb, "%% improvement vs %s: TPS (v-%s)/%s*100, latency (%s-v)/%s*100\n",
                base->name, base->name, base->name, base->name, base->name);
    strbuf_addf(&sb, "  change (95%% CI): ratio of medians, bootstrap CI, Mann-Whitney U at alpha "
                     "0.05; \"~\" = no significant difference; Average = geometric mean of the "
                     "ratios, tested on all rounds pooled\n");
    if (cfg->rounds >= 2 && stats_mw_min_p(cfg->rounds, cfg->rounds) >= 0.05)
        strbuf_addf(&sb, "  WARNING: with %d rounds per variant no difference can ever be "
                         "significant (smallest possible p = %.3f); use --rounds=%d or more\n",
                    cfg->rounds, stats_mw_min_p(cfg->rounds, cfg->rounds), stats_min_rounds(0.05));
    json_t *env = res->env_json ? json_loads(res->env_json, 0, NULL) : NULL;
    if (env) {
        const char *cpu = json_string_value(json_object_get(env, "cpu_model"));
        const char *kernel = json_string_value(json_object_get(env, "kernel"));
        json_int_t cores = json_integer_value(json_object_get(env, "cores"));
        json_t *load = json_object_get(env, "loadavg_1m");
        strbuf_addf(&sb, "  host: %s, %lld cores, Linux %s", cpu ? cpu : "unknown CPU",
                    (long long)cores, kernel ? kernel : "?");
        if (json_is_number(load)) {
            double l = json_number_value(load);
            strbuf_addf(&sb, ", load %.2f at start", l);
            /* Other work on half the cores or more moves the numbers more than most builds. */
            if (cores > 0 && l >= cores / 2.0)
                strbuf_addstr(&sb, " (busy machine: expect noise)");
        }
        strbuf_addch(&sb, '\n');
        json_decref(env);
    }
    if (res->nruns < run_count_planned(cfg))
        strbuf_addf(&sb, "  INCOMPLETE: %d of %d runs finished%s%s\n", res->nruns,
                    run_count_planned(cfg), res->error ? ": " : "", res->error ? res->error : "");

    int tableno = 0;
    for (int w = 0; w < cfg->nworkloads; w++)
        for (int m = 0; m < METRIC_COUNT; m++) {
            strbuf_addf(&sb, "\nTable %d. %s, %s\n\n", ++tableno, metric_title[m],
                        cfg->workloads[w]);
            report_table(&sb, cfg, res, w, (enum experiment_metric)m);
        }
    fputs(sb.buf, out);
    fflush(out);
    strbuf_release(&sb);
    free(time_s);
}

/* ---------------------------------------------------------------- JSON output */

static json_t *summary_json(const struct experiment_config *cfg,
                            const struct experiment_result *res)
{
    json_t *arr = json_array();
    for (int w = 0; w < cfg->nworkloads; w++)
        for (int t = 0; t < cfg->nthreads; t++)
            for (int m = 0; m < METRIC_COUNT; m++) {
                json_t *row = json_object(), *cells = json_array();
                struct cell_stats base = experiment_cell(res, 0, w, cfg->threads[t],
                                                         (enum experiment_metric)m);
                json_object_set_new(row, "workload", json_string(cfg->workloads[w]));
                json_object_set_new(row, "threads", json_integer(cfg->threads[t]));
                json_object_set_new(row, "metric", json_string(metric_key[m]));
                for (int v = 0; v < cfg->nvariants; v++) {
                    struct cell_stats c = experiment_cell(res, v, w, cfg->threads[t],
                                                          (enum experiment_metric)m);
                    json_t *cell = json_object();
                    json_object_set_new(cell, "variant", jstr(cfg->variants[v].name));
                    json_object_set_new(cell, "n", json_integer(c.n));
                    json_object_set_new(cell, "median", c.n ? jreal(c.median) : json_null());
                    json_object_set_new(cell, "min", c.n ? jreal(c.min) : json_null());
                    json_object_set_new(cell, "max", c.n ? jreal(c.max) : json_null());
                    if (v)
                        json_object_set_new(
                            cell, "improvement_pct",
                            c.n && base.n ? jreal(experiment_improvement(
                                                (enum experiment_metric)m, base.median, c.median))
                                          : json_null());
                    json_array_append_new(cells, cell);
                }
                json_object_set_new(row, "cells", cells);
                json_array_append_new(arr, row);
            }
    return arr;
}

static json_t *experiment_json(const struct experiment_config *cfg,
                               const struct experiment_result *res)
{
    json_t *root = json_object();
    struct strbuf sb = STRBUF_INIT;

    json_object_set_new(root, "pgolab_version", json_string(PGOLAB_VERSION));
    json_object_set_new(root, "kind", json_string("experiment"));
    json_object_set_new(root, "complete",
                        json_boolean(!res->error && res->nruns == run_count_planned(cfg)));
    json_object_set_new(root, "error", jstr(res->error));
    iso_time(&sb, res->started_at);
    json_object_set_new(root, "started_at", json_string(sb.buf));
    strbuf_reset(&sb);
    iso_time(&sb, res->finished_at ? res->finished_at : wall_time());
    json_object_set_new(root, "finished_at", json_string(sb.buf));
    strbuf_release(&sb);

    json_t *set = json_object(), *a;
    a = json_array();
    for (int w = 0; w < cfg->nworkloads; w++)
        json_array_append_new(a, jstr(cfg->workloads[w]));
    json_object_set_new(set, "workloads", a);
    a = json_array();
    for (int t = 0; t < cfg->nthreads; t++)
        json_array_append_new(a, json_integer(cfg->threads[t]));
    json_object_set_new(set, "threads", a);
    json_object_set_new(set, "rounds", json_integer(cfg->rounds));
    json_object_set_new(set, "time_s", jreal(cfg->time_s));
    json_object_set_new(set, "tables", json_integer(cfg->tables));
    json_object_set_new(set, "table_size", json_integer(cfg->table_size));
    /* As a string: a 64-bit seed does not fit a JSON integer (json_int_t is signed). */
    char *seed = xasprintf("%llu", (unsigned long long)cfg->seed);
    json_object_set_new(set, "seed", json_string(seed));
    free(seed);
    a = json_array();
    for (char **b = cfg->bench_args; b && *b; b++)
        json_array_append_new(a, jstr(*b));
    json_object_set_new(set, "bench_args", a);
    json_object_set_new(set, "pgolab", jstr(cfg->pgolab));
    json_object_set_new(set, "workdir", jstr(cfg->workdir));
    json_object_set_new(root, "settings", set);

    a = json_array();
    for (int v = 0; v < cfg->nvariants; v++) {
        const struct variant *var = &cfg->variants[v];
        json_t *o = json_object();
        json_object_set_new(o, "name", jstr(var->name));
        json_object_set_new(o, "baseline", json_boolean(v == 0));
        json_object_set_new(o, "library", jstr(var->library));
        json_object_set_new(o, "sha256", jstr(var->sha256));
        json_object_set_new(o, "version", jstr(var->version));
        json_object_set_new(o, "source_id", jstr(var->source_id));
        json_object_set_new(o, "loaded_from", jstr(var->loaded_from));
        json_object_set_new(o, "compiler", jstr(var->compiler));
        json_object_set_new(o, "cflags", jstr(var->cflags));
        json_array_append_new(a, o);
    }
    json_object_set_new(root, "variants", a);

    json_t *env = res->env_json ? json_loads(res->env_json, 0, NULL) : NULL;
    json_object_set_new(root, "environment", env ? env : json_object());

    /* Run order: consecutive runs of the same (workload, round, threads) form one block. */
    json_t *blocks = json_array(), *cur = NULL;
    for (int i = 0; i < res->nruns; i++) {
        const struct run_result *r = &res->runs[i], *p = i ? &res->runs[i - 1] : NULL;
        if (!p || p->workload != r->workload || p->round != r->round || p->threads != r->threads) {
            json_t *b = json_object();
            json_object_set_new(b, "workload", jstr(cfg->workloads[r->workload]));
            json_object_set_new(b, "round", json_integer(r->round));
            json_object_set_new(b, "threads", json_integer(r->threads));
            cur = json_array();
            json_object_set_new(b, "order", cur);
            json_array_append_new(blocks, b);
        }
        json_array_append_new(cur, jstr(cfg->variants[r->variant].name));
    }
    json_object_set_new(root, "run_order", blocks);

    a = json_array();
    for (int i = 0; i < res->nruns; i++) {
        const struct run_result *r = &res->runs[i];
        json_t *o = json_object(), *lat = json_object();
        json_object_set_new(o, "seq", json_integer(i + 1));
        json_object_set_new(o, "round", json_integer(r->round));
        json_object_set_new(o, "workload", jstr(cfg->workloads[r->workload]));
        json_object_set_new(o, "workload_index", json_integer(r->workload));
        json_object_set_new(o, "threads", json_integer(r->threads));
        json_object_set_new(o, "variant", jstr(cfg->variants[r->variant].name));
        json_object_set_new(o, "variant_index", json_integer(r->variant));
        json_object_set_new(o, "tps", jreal(r->tps));
        json_object_set_new(o, "qps", jreal(r->qps));
        json_object_set_new(lat, "avg", jreal(r->lat_avg_ms));
        json_object_set_new(lat, "p95", jreal(r->lat_p95_ms));
        json_object_set_new(lat, "min", jreal(r->lat_min_ms));
        json_object_set_new(lat, "max", jreal(r->lat_max_ms));
        json_object_set_new(o, "latency_ms", lat);
        json_object_set_new(o, "transactions", json_integer((json_int_t)r->transactions));
        json_object_set_new(o, "errors", json_integer((json_int_t)r->errors));
        json_t *rep = r->json ? json_loads(r->json, 0, NULL) : NULL;
        json_object_set_new(o, "report", rep ? rep : json_null());
        json_array_append_new(a, o);
    }
    json_object_set_new(root, "runs", a);
    json_object_set_new(root, "summary", summary_json(cfg, res));
    return root;
}

int experiment_write_json(const char *path, const struct experiment_config *cfg,
                          const struct experiment_result *res)
{
    json_t *root = experiment_json(cfg, res);
    char *tmp = xasprintf("%s.tmp", path);
    int rc = 0;
    if (json_dump_file(root, tmp, JSON_INDENT(2)) < 0) {
        rc = error("cannot write %s: %s", tmp, strerror(errno));
        unlink(tmp);
    } else if (rename(tmp, path) < 0) {
        rc = error("cannot rename %s to %s: %s", tmp, path, strerror(errno));
        unlink(tmp);
    }
    json_decref(root);
    free(tmp);
    return rc;
}

void experiment_result_release(struct experiment_result *res)
{
    for (int i = 0; i < res->nruns; i++)
        free(res->runs[i].json);
    free(res->runs);
    free(res->env_json);
    free(res->error);
    memset(res, 0, sizeof(*res));
}
