/* experiment: runs variants x workloads x thread counts x rounds as child processes and
 * reports them (see experiment.h). Owned by the experiment engine; used by pgo and compare. */
#include "util/argvec.h"
#include "util/fmt.h"
#include "util/fs.h"
#include "experiment/experiment.h"
#include "experiment/callgrind.h"
#include "experiment/plan.h"
#include "util/progress.h"
#include "util/signals.h"
#include "util/strbuf.h"
#include "util/subprocess.h"
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "server/server.h"
#include "stats/compare.h"
#include "store/store.h"
#include "version.h"

/* ---------------------------------------------------------------- small helpers */

/* Make dir and its parents (mode 0755); 0, or -1 with errno set. */
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

/* The child's argv: PGOLAB bench TARGET --tables=T --table-size=N --threads=K [extra...]
 * [bench_args...] WORKLOAD COMMAND, where TARGET is --sqlite-library=L --sqlite-db=DB, or the
 * client options of the variant's running server (srv), or of its external server. cg_out:
 * run the child under `valgrind --tool=callgrind` writing its profile there (NULL: run it
 * directly). */
static void child_argv_init(struct argvec *a, const struct experiment_config *cfg,
                            const struct variant *var, const char *db, const struct server *srv,
                            int threads, const char *cg_out)
{
    memset(a, 0, sizeof(*a));
    if (cg_out)
        callgrind_argv(a, cfg, cg_out);
    argvec_push(a, cfg->pgolab);
    argvec_push(a, "bench");
    if (var->kind == VARIANT_SERVER) {
        server_client_args(srv, a);
        /* the managed account has no password: an empty one, so that a MYSQL_PWD / PGPASSWORD
         * meant for running servers (or set by the user) is not tried on it */
        argvec_pushf(a, "--%s-password=", server_kind_name(var->server_kind));
    } else if (var->kind == VARIANT_EXTERNAL) {
        const char *k = server_kind_name(var->server_kind);
        size_t klen = strlen(k);
        argvec_pushf(a, "--db-driver=%s", k);
        argvec_pushf(a, "--%s-host=%s", k, var->host);
        argvec_pushf(a, "--%s-port=%d", k, var->port);
        for (const char *const *e = cfg->external_args; e && *e; e++)
            if (!strncmp(*e + 2, k, klen) && (*e)[2 + klen] == '-')
                argvec_push(a, *e);
    } else {
        argvec_pushf(a, "--sqlite-library=%s", var->library);
        argvec_pushf(a, "--sqlite-db=%s", db);
    }
    argvec_pushf(a, "--tables=%d", cfg->tables);
    argvec_pushf(a, "--table-size=%d", cfg->table_size);
    argvec_pushf(a, "--threads=%d", threads);
}

static void child_argv_finish(struct argvec *a, const struct experiment_config *cfg,
                              const char *workload, const char *command)
{
    for (char **b = cfg->bench_args; b && *b; b++)
        argvec_push(a, *b);
    argvec_push(a, workload);
    argvec_push(a, command);
}

/* ---- a variant's data: a SQLite file, or a managed server's datadir ---- */

/* Remove a variant's data at path (SQLite files, or a datadir tree). */
static void remove_data(const struct variant *var, const char *path)
{
    if (var->kind == VARIANT_SERVER)
        remove_tree(path);
    else
        remove_db(path);
}

static int fresh_copy(struct experiment_result *res, const char *template, const char *rundb);

/* Make work a fresh copy of template: the SQLite file (and -wal), or the stopped server's
 * whole datadir (cp -a: owners and modes kept, as PostgreSQL wants). 0, or -1 after fail(). */
static int copy_data(struct experiment_result *res, const struct variant *var,
                     const char *template, const char *work)
{
    if (var->kind != VARIANT_SERVER)
        return fresh_copy(res, template, work);
    remove_tree(work);
    const char *argv[] = { "cp", "-a", "--", template, work, NULL };
    struct strbuf out = STRBUF_INIT;  /* cp prints nothing on stdout; its stderr is ours */
    struct subprocess sp = { .argv = argv, .out = &out, .timeout_s = 3600 };
    int st = subprocess_run(&sp);
    strbuf_release(&out);
    if (st != 0 && got_signal) {  /* Ctrl-C reaches cp too: an interruption, not a failure */
        res->signal = got_signal;
        return fail(res, "interrupted by %s while copying the datadir %s; keeping the %d finished runs",
                    signal_name(got_signal), template, res->nruns);
    }
    if (st != 0)
        return fail(res, "cannot copy the datadir %s to %s (cp exit %d)", template, work, st);
    return 0;
}

/* The tail of the last managed server's log after a failed run (for the run's message). */
static char *last_server_tail;

/* Start variant var's server on datadir (initialized there when new). 0, or -1 after fail()
 * (server_start printed why, with the server's log tail). */
static int start_server(const struct experiment_config *cfg, struct experiment_result *res,
                        const struct variant *var, const char *datadir, struct server *srv)
{
    struct server_config sc = {
        .kind = var->server_kind, .datadir = datadir, .options = cfg->server_options,
        .stop_with_parent = true,
        .noptions = cfg->nserver_options,
    };
    if (is_dir(var->library))
        sc.prefix = var->library;
    else
        sc.server = var->library;
    if (server_start(srv, &sc) == 0)
        return 0;
    if (got_signal) {
        res->signal = got_signal;
        return fail(res, "interrupted by %s while starting the server of %s",
                    signal_name(got_signal), var->name);
    }
    return fail(res, "variant %s: the server %s did not start on %s (see above)", var->name,
                var->library, datadir);
}

/* Stop a server started by start_server (cleanly; server_stop reports a failure). */
static void stop_server(struct server *srv)
{
    if (srv->pid)
        server_stop(srv, 120);
    server_release(srv);
}

/* Prepare the workload's data once, with variant v's build, into template (a managed server:
 * its own datadir, with the server started for it and stopped after; an external server: in
 * place, after a cleanup). */
static int prepare_template(const struct experiment_config *cfg, struct experiment_result *res,
                            int w, int v, const char *template)
{
    const struct variant *var = &cfg->variants[v];
    const char *workload = cfg->workloads[w];
    struct argvec a = ARGVEC_INIT;
    struct server srv;
    char *log = xasprintf("%s/prepare-%d-%d-%s.log", cfg->workdir, w, v, workload);
    int st = 0, rc = 0;
    memset(&srv, 0, sizeof(srv));
    unlink(log);
    if (cfg->progress)
        progress("preparing %s (%d x %d rows) for %s", workload, cfg->tables, cfg->table_size,
                 var->name);
    if (var->kind == VARIANT_SERVER) {
        remove_tree(template);
        if (start_server(cfg, res, var, template, &srv) < 0) {
            free(log);
            return -1;
        }
    }
    /* bulk_insert's tables are one per thread (sbtest1..N): prepare for the most threads */
    int threads = 1;
    for (int i = 0; !strcmp(workload, "bulk_insert") && i < cfg->nthreads; i++)
        if (cfg->threads[i] > threads)
            threads = cfg->threads[i];
    if (var->kind == VARIANT_EXTERNAL) { /* sysbench's way: cleanup, then prepare */
        child_argv_init(&a, cfg, var, template, &srv, threads, NULL);
        child_argv_finish(&a, cfg, workload, "cleanup");
        struct subprocess sp = { .argv = argvec_argv(&a), .log_path = log };
        st = subprocess_run(&sp);
        argvec_clear(&a);
    }
    if (st == 0 && !got_signal) {
        child_argv_init(&a, cfg, var, template, &srv, threads, NULL);
        child_argv_finish(&a, cfg, workload, "prepare");
        struct subprocess sp = { .argv = argvec_argv(&a), .log_path = log };
        st = subprocess_run(&sp);
    }
    stop_server(&srv);
    if (got_signal) {
        res->signal = got_signal;
        rc = fail(res, "interrupted by %s while preparing %s", signal_name(got_signal), workload);
    } else if (st != 0 || (var->kind == VARIANT_SQLITE && !file_exists(template))) {
        char *tail = log_tail_line(log, 3);
        rc = fail(res, "prepare of %s with %s failed (exit %d): %s", workload, var->name, st,
                  tail);
        free(tail);
    }
    argvec_clear(&a);
    free(log);
    return rc;
}

/* A fresh copy of the template (and its -wal) at rundb. 0, or -1 after fail(). */
static int fresh_copy(struct experiment_result *res, const char *template, const char *rundb)
{
    static const char *const sfx[] = { "", "-wal" };
    remove_db(rundb);
    for (size_t i = 0; i < ARRAY_SIZE(sfx); i++) {
        char *src = xasprintf("%s%s", template, sfx[i]);
        char *dst = xasprintf("%s%s", rundb, sfx[i]);
        int cr = (i == 0 || file_exists(src)) ? copy_file(src, dst) : 0;
        if (cr < 0)
            fail(res, "cannot copy %s to %s: %s", src, dst, strerror(errno));
        free(src);
        free(dst);
        if (cr < 0)
            return -1;
    }
    return 0;
}

/* true when the child options already fix the bench's random seed. */
static bool has_rand_seed(const struct experiment_config *cfg)
{
    for (char **b = cfg->bench_args; b && *b; b++)
        if (!strncmp(*b, "--rand-seed", 11))
            return true;
    return false;
}

/* One child of a run: a fresh copy of the template at rundb (template NULL: rundb as the
 * previous run left it), then `pgolab bench ... run` with its JSON report into out, stderr
 * into log. Time mode: --time and a report every second. Instruction
 * mode (cg_out set): under callgrind, 1 thread, --events=events --time=0, and a fixed
 * --rand-seed unless the options give one, so every variant does the same work. Returns the
 * child's exit status, or -2 after fail() when the copy failed. */
static int run_child(const struct experiment_config *cfg, struct experiment_result *res,
                     const struct variant *var, const char *workload, int threads,
                     const char *template, const char *rundb, const char *log,
                     const char *cg_out, int events, struct strbuf *out)
{
    struct argvec a = ARGVEC_INIT;
    struct server srv;
    memset(&srv, 0, sizeof(srv));
    if (template && copy_data(res, var, template, rundb) < 0)
        return -2;
    /* A managed server is started for this run alone (restarted between runs, seed 001's
     * method) and stopped cleanly after it. */
    if (var->kind == VARIANT_SERVER && start_server(cfg, res, var, rundb, &srv) < 0)
        return -2;
    unlink(log);
    strbuf_reset(out);
    child_argv_init(&a, cfg, var, rundb, &srv, threads, cg_out);
    if (cg_out) {
        argvec_pushf(&a, "--events=%d", events);
        argvec_push(&a, "--time=0");
        if (!has_rand_seed(cfg))
            argvec_push(&a, "--rand-seed=1");
    } else {
        char *time_arg = fmt_num(cfg->time_s);
        argvec_pushf(&a, "--time=%s", time_arg);
        free(time_arg);
        argvec_push(&a, "--report-interval=1");
    }
    argvec_push(&a, "--format=json");
    child_argv_finish(&a, cfg, workload, "run");
    /* A run ends itself after --time (or its events); the timeout only guards against a hung
     * child (callgrind runs some 50-100 times slower than the program alone). */
    struct subprocess sp = { .argv = argvec_argv(&a), .log_path = log, .out = out,
                             .timeout_s = cg_out ? 3600 + events * 0.5 : cfg->time_s * 3 + 60 };
    int st = subprocess_run(&sp);
    argvec_clear(&a);
    if (var->kind == VARIANT_SERVER) {
        free(last_server_tail);
        last_server_tail = NULL;
        if (st != 0) { /* e.g. the server died: its own last words go with the run's error */
            char *tail = log_tail_line(srv.log, 3);
            last_server_tail = xasprintf("%s; server log %s: %s",
                                         server_status(&srv, NULL) == SERVER_GONE
                                             ? "the server is gone" : "the server is running",
                                         srv.log, tail);
            free(tail);
        }
        stop_server(&srv);
    }
    return st;
}

/* The two callgrind children of an instruction-mode run (N/5 events, then N): fills r from
 * the big child's report plus instr_per_txn and the "callgrind" JSON; the time metrics are
 * set to NaN (they were slowed down by valgrind and mean nothing). 0, or -1 after fail(). */
static int run_instructions(const struct experiment_config *cfg, struct experiment_result *res,
                            int v, const char *workload, int round, const char *template,
                            const char *rundb, const char *log, struct strbuf *out,
                            struct run_result *r)
{
    const struct variant *var = &cfg->variants[v];
    int seq = res->nruns;
    int counts[2] = { cfg->events / 5, cfg->events };
    struct callgrind_counts cc[2];
    uint64_t txns[2] = { 0, 0 };
    for (int k = 0; k < 2; k++) {
        char *cg = xasprintf("%s/cg.%03d.%s.out", cfg->workdir, seq + 1, k ? "n" : "n5");
        unlink(cg);
        int st = run_child(cfg, res, var, workload, 1, template, rundb, log, cg, counts[k], out);
        int rc = 0;
        if (st == -2) {
            rc = -1;
        } else if (got_signal) {
            rc = -1; /* the caller reports it */
        } else if (st != 0) {
            char *tail = log_tail_line(log, 3);
            rc = fail(res, "run failed under callgrind: variant %s, %s, %d events, round %d/%d: "
                           "exit %d: %s", var->name, workload, counts[k], round, cfg->rounds, st,
                      tail);
            free(tail);
        } else {
            struct run_result tmp;
            memset(&tmp, 0, sizeof(tmp));
            strbuf_rtrim(out);
            if (experiment_parse_run(out->buf, &tmp) < 0) {
                rc = fail(res, "run failed under callgrind: variant %s, %s: unusable report",
                          var->name, workload);
            } else if (experiment_callgrind_counts(cg, &cc[k]) < 0) {
                rc = fail(res, "run %d (variant %s, %s): no instruction count from callgrind",
                          seq + 1, var->name, workload);
                free(tmp.json);
            } else {
                txns[k] = tmp.transactions;
                if (k) {
                    free(r->json);
                    *r = tmp;
                } else {
                    free(tmp.json);
                }
            }
        }
        unlink(cg);
        free(cg);
        if (rc < 0)
            return -1;
    }
    if (txns[1] <= txns[0] || cc[1].ir <= cc[0].ir)
        return fail(res, "run %d (variant %s, %s): no marginal cost: %llu instructions for %llu "
                         "transactions vs %llu for %llu", seq + 1, var->name, workload,
                    (unsigned long long)cc[1].ir, (unsigned long long)txns[1],
                    (unsigned long long)cc[0].ir, (unsigned long long)txns[0]);
    callgrind_marginal(r, cfg->events, cc, txns);
    return 0;
}

/* One run: child bench run on rundb (a fresh copy of template first unless template is NULL;
 * instruction mode always copies), parse, append to res. */
static int run_once(const struct experiment_config *cfg, struct experiment_result *res, int w,
                    int t, int round, int v, const char *template, const char *rundb)
{
    const struct variant *var = &cfg->variants[v];
    const char *workload = cfg->workloads[w];
    int threads = cfg->threads[t];
    int seq = res->nruns;
    struct strbuf out = STRBUF_INIT;
    struct run_result r;
    int rc = -1, st = 0;
    char *log = xasprintf("%s/run-%03d.log", cfg->workdir, seq + 1);
    bool instr = cfg->measure == MEASURE_INSTRUCTIONS;

    memset(&r, 0, sizeof(r));
    r.instr_per_txn = r.i1_miss_per_txn = r.branch_miss_per_txn = NAN;
    double started_at = wall_time();
    uint64_t t0 = now_ns();
    if (instr) {
        int ir = run_instructions(cfg, res, v, workload, round, template, rundb, log, &out, &r);
        if (ir < 0 && !got_signal)
            goto out;
    } else {
        st = run_child(cfg, res, var, workload, threads, template, rundb, log, NULL, 0, &out);
        if (st == -2)
            goto out;
    }
    double duration_s = (double)(now_ns() - t0) / 1e9;

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
        fail(res, "run failed: variant %s, %s, threads=%d, round %d/%d: exit %d: %s%s%s",
             var->name, workload, threads, round, cfg->rounds, st, tail,
             last_server_tail ? "; " : "", last_server_tail ? last_server_tail : "");
        free(tail);
        goto out;
    }
    strbuf_rtrim(&out);
    if (!instr && experiment_parse_run(out.buf, &r) < 0) {
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
            goto out;
        }
        json_decref(root);
    }
    r.variant = v;
    r.workload = w;
    r.threads = threads;
    r.round = round;
    r.started_at = started_at;
    r.duration_s = duration_s;
    /* Committed before the next run starts: an interruption loses at most the run in
     * progress. A run that cannot be recorded stops the experiment (it would be lost). */
    if (cfg->store && cfg->experiment_id > 0) {
        struct store_run sr = {
            .variant_idx = v, .workload = workload, .threads = threads, .round = round,
            .seq = STORE_SEQ_NEXT, .started_at = started_at, .duration_s = duration_s,
            .tps = r.tps, .qps = r.qps, .lat_min_ms = r.lat_min_ms, .lat_avg_ms = r.lat_avg_ms,
            .lat_p95_ms = r.lat_p95_ms, .lat_max_ms = r.lat_max_ms,
            .transactions = r.transactions, .errors = r.errors, .report_json = r.json,
        };
        if (store_run_add(cfg->store, cfg->experiment_id, &sr) < 0) {
            fail(res, "run %d (%s, %s, threads=%d, round %d/%d) could not be recorded; "
                      "stopping", seq + 1, var->name, workload, threads, round, cfg->rounds);
            goto out;
        }
    }
    res->runs = xrealloc(res->runs, sizeof(*res->runs) * (size_t)(res->nruns + 1));
    res->runs[res->nruns++] = r;
    r.json = NULL; /* now res's */
    rc = 0;
out:
    free(r.json);
    if (cfg->reset == RESET_RUN && var->kind != VARIANT_EXTERNAL)
        remove_data(var, rundb);
    strbuf_release(&out);
    free(log);
    return rc;
}

/* --warmup-runs: before round 1 of workload w, every variant runs each thread count
 * cfg->warmup_runs times (in a shuffled order of its own); the results are discarded, only a
 * failure counts. Like measured runs they start from a copy of the template under
 * --reset=run; otherwise they run on (and warm) the variant's working copy. 0, or -1 after
 * fail(). */
static int warmup(const struct experiment_config *cfg, struct experiment_result *res, int w,
                  char **template, char **rundb, bool *fresh, int *order)
{
    struct strbuf out = STRBUF_INIT;
    int rc = 0;
    for (int k = 1; k <= cfg->warmup_runs && rc == 0; k++)
        for (int t = 0; t < cfg->nthreads && rc == 0; t++) {
            experiment_order(cfg->seed, -k, w * cfg->nthreads + t, cfg->nvariants, order);
            for (int i = 0; i < cfg->nvariants && rc == 0; i++) {
                const struct variant *var = &cfg->variants[order[i]];
                char *log = xasprintf("%s/warmup-%d-%d-%d-%s.log", cfg->workdir, w, t, k, var->name);
                if (cfg->progress)
                    progress("warm-up %d/%d  %s  threads=%d  %s (discarded)", k, cfg->warmup_runs,
                             cfg->workloads[w], cfg->threads[t], var->name);
                int v = order[i];
                int st = run_child(cfg, res, var, cfg->workloads[w], cfg->threads[t],
                                   (cfg->reset == RESET_RUN || fresh[v]) && var->kind != VARIANT_EXTERNAL
                                       ? template[v] : NULL,
                                   rundb[v], log, NULL, 0, &out);
                fresh[v] = false;
                if (got_signal) {
                    res->signal = got_signal;
                    rc = fail(res, "interrupted by %s during a warm-up run", signal_name(got_signal));
                } else if (st == -2) {
                    rc = -1;
                } else if (st != 0) {
                    char *tail = log_tail_line(log, 3);
                    rc = fail(res, "warm-up run failed: variant %s, %s, threads=%d: exit %d: %s",
                              var->name, cfg->workloads[w], cfg->threads[t], st, tail);
                    free(tail);
                }
                if (cfg->reset == RESET_RUN && var->kind != VARIANT_EXTERNAL)
                    remove_data(var, rundb[v]);
                free(log);
            }
        }
    strbuf_release(&out);
    return rc;
}

/* Index of name in list[0..n), or -1. */
static int find_name(char *const *list, int n, const char *name)
{
    for (int i = 0; name && i < n; i++)
        if (!strcmp(list[i], name))
            return i;
    return -1;
}

/* Copy a stored run into a run_result (indices from the config); -1 if it does not fit it. */
static int run_from_store(const struct experiment_config *cfg, const struct store_run *sr,
                          struct run_result *r)
{
    memset(r, 0, sizeof(*r));
    r->workload = find_name(cfg->workloads, cfg->nworkloads, sr->workload);
    if (r->workload < 0 || sr->variant_idx < 0 || sr->variant_idx >= cfg->nvariants)
        return -1;
    r->variant = sr->variant_idx;
    r->threads = sr->threads;
    r->round = sr->round;
    r->tps = sr->tps;
    r->qps = sr->qps;
    r->lat_avg_ms = sr->lat_avg_ms;
    r->lat_p95_ms = sr->lat_p95_ms;
    r->lat_min_ms = sr->lat_min_ms;
    r->lat_max_ms = sr->lat_max_ms;
    r->transactions = sr->transactions;
    r->errors = sr->errors;
    r->json = sr->report_json ? xstrdup(sr->report_json) : NULL;
    r->started_at = sr->started_at;
    r->duration_s = sr->duration_s;
    callgrind_from_json(sr->report_json, r);
    return 0;
}

struct load_ctx {
    const struct experiment_config *cfg;
    struct experiment_result *res;
    int skipped;
};

static int load_run_cb(const struct store_run *sr, void *ctx)
{
    struct load_ctx *lc = ctx;
    struct run_result r;
    if (run_from_store(lc->cfg, sr, &r) < 0) {
        lc->skipped++;
        return 0;
    }
    lc->res->runs = xrealloc(lc->res->runs, sizeof(*lc->res->runs) * (size_t)(lc->res->nruns + 1));
    lc->res->runs[lc->res->nruns++] = r;
    return 0;
}

/* Append the runs recorded in s for cfg->experiment_id to res (in the order they ran). */
static int load_recorded_runs(struct store *s, const struct experiment_config *cfg,
                              struct experiment_result *res)
{
    struct load_ctx lc = { cfg, res, 0 };
    if (store_runs_load(s, cfg->experiment_id, load_run_cb, &lc) < 0)
        return -1;
    if (lc.skipped)
        warning("experiment %lld: %d recorded run%s outside its settings ignored",
                (long long)cfg->experiment_id, lc.skipped, lc.skipped == 1 ? "" : "s");
    return 0;
}

/* *done = 1 when run (variant v, workload w, thread count, round) is recorded already. */
static int run_recorded(const struct experiment_config *cfg, int v, int w, int threads,
                        int round, int *done)
{
    *done = 0;
    if (!cfg->store || cfg->experiment_id <= 0)
        return 0;
    return store_run_exists(cfg->store, cfg->experiment_id, v, cfg->workloads[w], threads,
                            round, done);
}

/* *pending = 1 when some run of workload w is not recorded yet. */
static int workload_pending(const struct experiment_config *cfg, int w, int *pending)
{
    *pending = 1;
    if (!cfg->store || cfg->experiment_id <= 0)
        return 0;
    for (int round = 1; round <= cfg->rounds; round++)
        for (int t = 0; t < cfg->nthreads; t++)
            for (int v = 0; v < cfg->nvariants; v++) {
                int done;
                if (run_recorded(cfg, v, w, cfg->threads[t], round, &done) < 0)
                    return -1;
                if (!done)
                    return 0;
            }
    *pending = 0;
    return 0;
}

int experiment_run(const struct experiment_config *cfg, struct experiment_result *res)
{
    struct sig_saved saved;
    int total = experiment_runs_planned(cfg);
    int *order = xcalloc((size_t)cfg->nvariants + 1, sizeof(int));
    char **rundb = xcalloc((size_t)cfg->nvariants, sizeof(char *));
    char **template = xcalloc((size_t)cfg->nvariants, sizeof(char *));
    bool *fresh = xcalloc((size_t)cfg->nvariants, sizeof(bool));
    bool instr_mode = cfg->measure == MEASURE_INSTRUCTIONS; /* same data for every count */
    uint64_t run_ns = 0;
    int rc = 0, ran = 0;

    memset(res, 0, sizeof(*res));
    res->started_at = wall_time();
    res->env_json = experiment_environment_json();
    if (cfg->nvariants < 1 || cfg->nworkloads < 1 || cfg->nthreads < 1 || cfg->rounds < 1) {
        rc = fail(res, "experiment: nothing to run (need variants, workloads, threads, rounds)");
        goto done;
    }
    if (cfg->store && cfg->experiment_id > 0) {
        if (load_recorded_runs(cfg->store, cfg, res) < 0) {
            rc = fail(res, "cannot read the runs of experiment %lld",
                      (long long)cfg->experiment_id);
            goto done;
        }
        res->resumed = res->nruns;
        /* The experiment's environment is the one recorded when it began, so this report
         * and one rebuilt from the store later (`pgolab report`) are the same. */
        struct store_experiment e;
        if (store_experiment_get(cfg->store, cfg->experiment_id, &e) == 0) {
            if (e.environment_json) {
                free(res->env_json);
                res->env_json = xstrdup(e.environment_json);
            }
            store_experiment_release(&e);
        }
    }
    if (mkdir_p(cfg->workdir) < 0) {
        rc = fail(res, "cannot create the work directory %s: %s", cfg->workdir, strerror(errno));
        goto done;
    }

    got_signal = 0;
    sig_catch(on_signal, &saved);

    for (int w = 0; w < cfg->nworkloads && rc == 0; w++) {
        int pending;
        if (workload_pending(cfg, w, &pending) < 0) {
            rc = fail(res, "cannot read the runs of experiment %lld",
                      (long long)cfg->experiment_id);
            break;
        }
        if (!pending)
            continue; /* every run of this workload is recorded: no data to prepare */
        /* The data: one template prepared by the baseline, or (--reset=variant) one per
         * variant prepared by that variant; each variant runs on its own working copy. */
        for (int v = 0; v < cfg->nvariants && rc == 0; v++) {
            const struct variant *var = &cfg->variants[v];
            free(template[v]);
            free(rundb[v]);
            template[v] = rundb[v] = NULL;
            fresh[v] = var->kind != VARIANT_EXTERNAL;
            if (var->kind == VARIANT_EXTERNAL) { /* data in place, prepared once */
                rc = prepare_template(cfg, res, w, v, NULL);
                continue;
            }
            /* A server's datadir is its own (another build may not read it); SQLite
             * variants share the baseline's file unless --reset=variant. */
            bool own = cfg->reset == RESET_VARIANT || var->kind == VARIANT_SERVER ||
                       cfg->variants[0].kind != VARIANT_SQLITE || v == 0;
            const char *sfx = var->kind == VARIANT_SERVER ? "d" : "db";
            template[v] = own ? xasprintf("%s/template-%d-%d.%s", cfg->workdir, w, v, sfx)
                              : xstrdup(template[0]);
            rundb[v] = xasprintf("%s/run-%d.%s", cfg->workdir, v, sfx);
            if (own) {
                remove_data(var, template[v]);
                rc = prepare_template(cfg, res, w, v, template[v]);
            }
        }
        if (rc == 0 && cfg->warmup_runs && cfg->measure == MEASURE_TIME)
            rc = warmup(cfg, res, w, template, rundb, fresh, order);
        for (int round = 1; round <= cfg->rounds && rc == 0; round++) {
            if (cfg->reset == RESET_ROUND)
                for (int v = 0; v < cfg->nvariants; v++)
                    fresh[v] = true;
            for (int t = 0; t < cfg->nthreads && rc == 0; t++) {
                /* The order depends only on (seed, round, block): a resumed experiment
                 * keeps it and runs what is missing in the same order. */
                experiment_order(cfg->seed, round, w * cfg->nthreads + t, cfg->nvariants, order);
                for (int i = 0; i < cfg->nvariants && rc == 0; i++) {
                    int done = res->nruns, recorded;
                    if (run_recorded(cfg, order[i], w, cfg->threads[t], round, &recorded) < 0) {
                        rc = fail(res, "cannot read the runs of experiment %lld",
                                  (long long)cfg->experiment_id);
                        break;
                    }
                    if (recorded)
                        continue;
                    if (cfg->progress) {
                        /* ETA: mean duration of the runs made so far (before any: --time +
                         * 1 s) times the runs left, this one included. */
                        double per = ran ? run_ns / 1e9 / ran : cfg->time_s + 1.0;
                        struct strbuf eta = STRBUF_INIT;
                        add_duration(&eta, per * (total - done));
                        progress("round %d/%d  %s  threads=%d  %s  [run %d/%d, ETA %s]", round,
                                 cfg->rounds, cfg->workloads[w], cfg->threads[t],
                                 cfg->variants[order[i]].name, done + 1, total, eta.buf);
                        strbuf_release(&eta);
                    }
                    uint64_t t0 = now_ns();
                    int v = order[i];
                    /* A copy of the template when the data is reset (every run; or the
                     * variant's first run of the workload or of the round). */
                    const char *tpl = (cfg->reset == RESET_RUN || fresh[v] || instr_mode) &&
                                      cfg->variants[v].kind != VARIANT_EXTERNAL
                                          ? template[v] : NULL;
                    fresh[v] = false;
                    rc = run_once(cfg, res, w, t, round, v, tpl, rundb[v]);
                    run_ns += now_ns() - t0;
                    ran++;
                }
            }
        }
        for (int v = 0; v < cfg->nvariants; v++) {
            if (template[v])
                remove_data(&cfg->variants[v], template[v]);
            if (rundb[v])
                remove_data(&cfg->variants[v], rundb[v]);
        }
    }
    progress_done();
    sig_restore(&saved);
done:
    res->finished_at = wall_time();
    for (int v = 0; v < cfg->nvariants; v++) {
        free(template[v]);
        free(rundb[v]);
    }
    free(template);
    free(rundb);
    free(fresh);
    free(order);
    return rc;
}

/* ---------------------------------------------------------------- fingerprint */

/* A running server's product and version (VARIANT_EXTERNAL) from `pgolab bench CLIENT-OPTIONS
 * info --format=json` ("library"."server"); left unknown when the server cannot be reached
 * now (the first run then says why). */
static void external_info(const struct experiment_config *cfg, struct variant *v)
{
    struct strbuf out = STRBUF_INIT;
    struct argvec a;
    child_argv_init(&a, cfg, v, NULL, NULL, 1, NULL);
    argvec_push(&a, "--format=json");
    argvec_push(&a, "info");
    struct subprocess sp = { .argv = argvec_argv(&a), .out = &out, .quiet_stderr = 1, .timeout_s = 60 };
    if (subprocess_run(&sp) == 0) {
        json_t *root = json_loads(out.buf, 0, NULL);
        const char *s = json_string_value(json_object_get(json_object_get(root, "library"), "server"));
        if (s && !v->version)
            v->version = xstrdup(s);
        json_decref(root);
    }
    argvec_clear(&a);
    strbuf_release(&out);
}

static int library_info(const struct experiment_config *cfg, struct variant *v)
{
    struct strbuf out = STRBUF_INIT;
    struct argvec a = ARGVEC_INIT;
    json_error_t je;
    int rc = -1;

    memset(&a, 0, sizeof(a));
    argvec_push(&a, cfg->pgolab);
    argvec_push(&a, "bench");
    argvec_pushf(&a, "--sqlite-library=%s", v->library);
    argvec_push(&a, "--format=json");
    argvec_push(&a, "info");
    struct subprocess sp = { .argv = argvec_argv(&a), .out = &out };
    int st = subprocess_run(&sp);
    argvec_clear(&a);
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

/* A managed server variant: the binary (given, or found in the prefix) and the flavor and
 * version its --version prints, as "MariaDB 10.11.19". -1 with a message. */
static int server_info(struct variant *v)
{
    static const char *const mysql_bins[] = { "sbin/mariadbd", "bin/mariadbd", "sbin/mysqld",
                                              "bin/mysqld", "libexec/mysqld", NULL };
    static const char *const pgsql_bins[] = { "bin/postgres", "sbin/postgres", NULL };
    char *bin = NULL;
    if (is_dir(v->library)) {
        for (const char *const *b = v->server_kind == SERVER_MYSQL ? mysql_bins : pgsql_bins;
             *b && !bin; b++) {
            char *p = xasprintf("%s/%s", v->library, *b);
            if (access(p, X_OK) == 0)
                bin = p;
            else
                free(p);
        }
        if (!bin)
            return error("variant %s: no %s server binary under %s", v->name,
                         server_kind_name(v->server_kind), v->library);
    } else {
        bin = xstrdup(v->library);
    }
    struct strbuf out = STRBUF_INIT;
    const char *argv[] = { bin, "--version", NULL };
    struct subprocess sp = { .argv = argv, .out = &out, .timeout_s = 30 };
    int st = subprocess_run(&sp), rc = 0;
    char *version = NULL, *flavor = NULL;
    if (st != 0 || server_parse_version(v->server_kind, out.buf, &version, &flavor) < 0) {
        size_t first = strcspn(out.buf, "\n");
        rc = error("variant %s: %s is not a %s server (its --version says '%.*s')", v->name, bin,
                   v->server_kind == SERVER_MYSQL ? "MariaDB/MySQL" : "PostgreSQL",
                   (int)(first > 80 ? 80 : first), first ? out.buf : "nothing");
    } else {
        if (!v->version)
            v->version = xasprintf("%s %s", flavor, version);
        if (!v->loaded_from)
            v->loaded_from = xstrdup(bin);
        if (!v->sha256) {
            const char *lib = v->library;
            v->library = bin; /* sha256 of the binary itself */
            rc = library_sha256(v);
            v->library = lib;
        }
    }
    free(version);
    free(flavor);
    free(bin);
    strbuf_release(&out);
    return rc;
}

int experiment_fingerprint(const struct experiment_config *cfg)
{
    for (int i = 0; i < cfg->nvariants; i++) {
        struct variant *v = &cfg->variants[i];
        if (v->kind == VARIANT_EXTERNAL) {
            external_info(cfg, v); /* no file of ours to hash: the server's own word only */
            continue;
        }
        if (v->kind == VARIANT_SERVER) {
            if (server_info(v) < 0)
                return -1;
            continue;
        }
        if (!v->sha256 && library_sha256(v) < 0)
            return -1;
        if ((!v->version || !v->source_id || !v->loaded_from) && library_info(cfg, v) < 0)
            return -1;
    }
    return 0;
}

char *experiment_default_workdir(void)
{
    if (access("/dev/shm", W_OK) == 0)
        return xasprintf("/dev/shm/pgolab-%ld", (long)getpid());
    return xasprintf("./.pgolab/run-%ld", (long)getpid());
}

/* ---------------------------------------------------------------- results store */

char *experiment_settings_json(const struct experiment_config *cfg, const char *extra_json)
{
    json_t *set = json_object(), *a = json_array();
    for (int v = 0; v < cfg->nvariants; v++)
        json_array_append_new(a, jstr(cfg->variants[v].name));
    json_object_set_new(set, "variants", a);
    for (int v = 0; v < cfg->nvariants; v++) {
        const struct variant *var = &cfg->variants[v];
        json_t *o = json_object();
        char *key = xasprintf("variant.%s", var->name);
        json_object_set_new(o, "library", jstr(var->library));
        json_object_set_new(o, "sha256", jstr(var->sha256));
        if (var->kind != VARIANT_SQLITE) /* only then: SQLite settings unchanged */
            json_object_set_new(o, "driver", json_string(server_kind_name(var->server_kind)));
        if (var->compiler)
            json_object_set_new(o, "compiler", jstr(var->compiler));
        if (var->cflags)
            json_object_set_new(o, "cflags", jstr(var->cflags));
        json_object_set_new(set, key, o);
        free(key);
    }
    experiment_measurement_json(set, cfg);
    a = json_array();
    for (char **b = cfg->bench_args; b && *b; b++)
        json_array_append_new(a, jstr(*b));
    json_object_set_new(set, "bench_args", a);
    if (extra_json) {
        json_error_t je;
        json_t *extra = json_loads(extra_json, 0, &je);
        if (json_is_object(extra))
            json_object_update(set, extra);
        else
            warning("extra experiment settings are not a JSON object; left out");
        json_decref(extra);
    }
    char *text = json_dumps(set, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(set);
    if (!text)
        die("out of memory");
    return text;
}

/* {"loaded_from": ...} of a variant, or NULL (caller frees). */
static char *variant_fingerprint_json(const struct variant *v)
{
    if (!v->loaded_from)
        return NULL;
    json_t *o = json_object();
    json_object_set_new(o, "loaded_from", jstr(v->loaded_from));
    char *text = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    return text;
}

int experiment_record_begin(struct experiment_config *cfg, struct store *s, const char *kind,
                            const char *extra_json)
{
    char *settings = experiment_settings_json(cfg, extra_json);
    char *env = experiment_environment_json();
    int64_t id = 0;
    int rc = store_experiment_begin(s, kind, settings, env, cfg->seed, &id);
    for (int v = 0; rc == 0 && v < cfg->nvariants; v++) {
        const struct variant *var = &cfg->variants[v];
        char *fp = variant_fingerprint_json(var);
        struct store_variant sv = {
            .idx = v, .name = var->name, .library = var->library, .sha256 = var->sha256,
            .version = var->version, .source_id = var->source_id, .compiler = var->compiler,
            .cflags = var->cflags, .fingerprint_json = fp,
        };
        rc = store_variant_add(s, id, &sv);
        free(fp);
    }
    if (rc < 0 && id > 0)
        store_experiment_finish(s, id, "failed");
    if (rc == 0) {
        cfg->store = s;
        cfg->experiment_id = id;
        cfg->kind = kind;
        progress_done();
        fprintf(stderr, "experiment %lld recorded in %s\n", (long long)id, store_path(s));
    }
    free(settings);
    free(env);
    return rc;
}

struct find_ctx {
    int64_t id;
    int found;
};

static int find_cb(const struct store_experiment *e, void *ctx)
{
    struct find_ctx *fc = ctx;
    if (e->id != fc->id)
        return 0;
    fc->found = 1;
    return 1;
}

int experiment_lookup(struct store *s, int64_t id, struct store_experiment *out)
{
    struct find_ctx fc = { id, 0 };
    memset(out, 0, sizeof(*out));
    if (store_experiments_list(s, find_cb, &fc) < 0)
        return -1;
    if (!fc.found)
        return error("no experiment %lld in %s (see pgolab history)", (long long)id,
                     store_path(s));
    return store_experiment_get(s, id, out);
}

/* The lines of sb joined with "; " (for one-line messages), in place. */
static void one_line(struct strbuf *sb)
{
    struct strbuf t = STRBUF_INIT;
    strbuf_rtrim(sb);
    for (size_t i = 0; i < sb->len; i++) {
        if (sb->buf[i] == '\n')
            strbuf_addstr(&t, "; ");
        else
            strbuf_addch(&t, sb->buf[i]);
    }
    strbuf_reset(sb);
    strbuf_addstr(sb, t.buf);
    strbuf_release(&t);
}

int experiment_record_resume(struct experiment_config *cfg, struct store *s, int64_t id,
                             const char *kind, const char *extra_json)
{
    struct store_experiment e;
    struct strbuf diff = STRBUF_INIT;
    char *settings = NULL, *env = NULL;
    int rc = -1;

    if (experiment_lookup(s, id, &e) < 0)
        return -1;
    if (strcmp(e.kind, kind)) {
        error("experiment %lld was recorded by `pgolab %s`, not `pgolab %s`; resume it with "
              "`pgolab %s --resume=%lld` and the options it started with",
              (long long)id, e.kind, kind, e.kind, (long long)id);
        goto out;
    }
    if (!strcmp(e.status, "complete")) {
        error("experiment %lld is complete; nothing to resume", (long long)id);
        goto out;
    }
    settings = experiment_settings_json(cfg, extra_json);
    if (store_settings_diff(e.settings_json, settings, &diff) < 0)
        goto out;
    if (diff.len) {
        one_line(&diff);
        error("cannot resume experiment %lld: its settings differ (recorded -> now): %s",
              (long long)id, diff.buf);
        goto out;
    }
    env = experiment_environment_json();
    strbuf_reset(&diff);
    if (experiment_env_diff(e.environment_json, env, false, &diff) > 0) {
        one_line(&diff);
        warning("experiment %lld started in another environment; its runs will mix two "
                "machines or systems: %s",
                (long long)id, diff.buf);
    }
    if (!strcmp(e.status, "running"))
        warning("experiment %lld is marked running: stopped by a crash or power cut, or still "
                "running in another pgolab (if so, stop one of them)",
                (long long)id);
    if (store_experiment_finish(s, id, "running") < 0)
        goto out;
    cfg->seed = e.seed;
    cfg->store = s;
    cfg->experiment_id = id;
    cfg->kind = kind;
    progress_done();
    fprintf(stderr, "resuming experiment %lld in %s: %lld of %d runs recorded\n", (long long)id,
            store_path(s), (long long)e.nruns, experiment_runs_planned(cfg));
    rc = 0;
out:
    store_experiment_release(&e);
    strbuf_release(&diff);
    free(settings);
    free(env);
    return rc;
}

int experiment_record_finish(const struct experiment_config *cfg,
                             const struct experiment_result *res, int run_rc)
{
    if (!cfg->store || cfg->experiment_id <= 0)
        return 0;
    const char *status = run_rc == 0 ? "complete" : res->signal ? "interrupted" : "failed";
    return store_experiment_finish(cfg->store, cfg->experiment_id, status);
}

/* ---- reading an experiment back */

/* Workloads and thread counts of the runs, in order of first appearance (when the settings
 * lack them). */
struct scan_ctx {
    char **workloads;
    int nworkloads;
    int *threads;
    int nthreads;
    int max_round;
};

static int scan_cb(const struct store_run *r, void *ctx)
{
    struct scan_ctx *sc = ctx;
    if (find_name(sc->workloads, sc->nworkloads, r->workload) < 0) {
        sc->workloads = xrealloc(sc->workloads, sizeof(char *) * (size_t)(sc->nworkloads + 2));
        sc->workloads[sc->nworkloads++] = xstrdup(r->workload);
        sc->workloads[sc->nworkloads] = NULL;
    }
    int t;
    for (t = 0; t < sc->nthreads && sc->threads[t] != r->threads; t++)
        ;
    if (t == sc->nthreads) {
        sc->threads = xrealloc(sc->threads, sizeof(int) * (size_t)(sc->nthreads + 1));
        sc->threads[sc->nthreads++] = r->threads;
    }
    if (r->round > sc->max_round)
        sc->max_round = r->round;
    return 0;
}

static char *own(struct experiment_loaded *l, const char *s)
{
    l->owned = xrealloc(l->owned, sizeof(char *) * (size_t)(l->nowned + 1));
    return l->owned[l->nowned++] = xstrdup(s);
}

int experiment_load(struct store *s, int64_t id, struct experiment_loaded *out)
{
    struct experiment_config *cfg = &out->cfg;
    struct experiment_result *res = &out->res;
    struct scan_ctx sc;
    json_t *set = NULL, *a;
    size_t i;
    int rc = -1;

    memset(out, 0, sizeof(*out));
    memset(&sc, 0, sizeof(sc));
    if (experiment_lookup(s, id, &out->exp) < 0)
        return -1;
    const struct store_experiment *e = &out->exp;
    set = json_loads(e->settings_json ? e->settings_json : "{}", 0, NULL);
    if (store_runs_load(s, id, scan_cb, &sc) < 0)
        goto out;

    cfg->variants = xcalloc((size_t)e->nvariants + 1, sizeof(struct variant));
    for (int v = 0; v < e->nvariants; v++) {
        const struct store_variant *sv = &e->variants[v];
        struct variant *var = &cfg->variants[v];
        if (sv->idx != v) {
            error("experiment %lld: its variants are not numbered 0..%d", (long long)id,
                  e->nvariants - 1);
            goto out;
        }
        var->name = sv->name;
        var->library = sv->library ? sv->library : "?";
        var->sha256 = sv->sha256 ? xstrdup(sv->sha256) : NULL;
        var->version = sv->version ? xstrdup(sv->version) : NULL;
        var->source_id = sv->source_id ? xstrdup(sv->source_id) : NULL;
        var->compiler = sv->compiler;
        var->cflags = sv->cflags;
        /* the kind: a server variant's settings name its driver; a running one's "library"
         * is its KIND://HOST:PORT */
        char *key = xasprintf("variant.%s", var->name);
        const char *drv = json_string_value(json_object_get(json_object_get(set, key), "driver"));
        free(key);
        if (drv && server_kind_parse(drv, &var->server_kind) == 0)
            var->kind = strstr(var->library, "://") ? VARIANT_EXTERNAL : VARIANT_SERVER;
        json_t *fp = sv->fingerprint_json ? json_loads(sv->fingerprint_json, 0, NULL) : NULL;
        const char *lf = json_string_value(json_object_get(fp, "loaded_from"));
        var->loaded_from = lf ? xstrdup(lf) : NULL;
        json_decref(fp);
        cfg->nvariants++;
    }
    if (cfg->nvariants < 1) {
        error("experiment %lld has no variants recorded", (long long)id);
        goto out;
    }

    a = json_object_get(set, "workloads");
    if (json_is_array(a) && json_array_size(a) > 0) {
        cfg->workloads = xcalloc(json_array_size(a) + 1, sizeof(char *));
        for (i = 0; i < json_array_size(a); i++) {
            const char *w = json_string_value(json_array_get(a, i));
            cfg->workloads[cfg->nworkloads++] = own(out, w ? w : "?");
        }
    } else {
        cfg->workloads = xcalloc((size_t)sc.nworkloads + 1, sizeof(char *));
        for (int w = 0; w < sc.nworkloads; w++)
            cfg->workloads[cfg->nworkloads++] = own(out, sc.workloads[w]);
    }
    a = json_object_get(set, "threads");
    if (json_is_array(a) && json_array_size(a) > 0) {
        cfg->threads = xcalloc(json_array_size(a), sizeof(int));
        for (i = 0; i < json_array_size(a); i++)
            cfg->threads[cfg->nthreads++] = (int)json_integer_value(json_array_get(a, i));
    } else {
        cfg->threads = xcalloc((size_t)sc.nthreads + 1, sizeof(int));
        for (int t = 0; t < sc.nthreads; t++)
            cfg->threads[cfg->nthreads++] = sc.threads[t];
    }
    json_t *r = json_object_get(set, "rounds");
    cfg->rounds = json_is_integer(r) ? (int)json_integer_value(r) : sc.max_round;
    const char *reset = json_string_value(json_object_get(set, "reset"));
    for (i = 0; reset && i <= RESET_VARIANT; i++)  /* absent: the default, run */
        if (!strcmp(reset, experiment_reset_name((enum experiment_reset)i)))
            cfg->reset = (enum experiment_reset)i;
    cfg->warmup_runs = (int)json_integer_value(json_object_get(set, "warmup_runs"));
    a = json_object_get(set, "server_options");
    cfg->server_options = xcalloc(json_array_size(a) + 1, sizeof(char *));
    for (i = 0; i < json_array_size(a); i++) {
        const char *o = json_string_value(json_array_get(a, i));
        cfg->server_options[cfg->nserver_options++] = own(out, o ? o : "");
    }
    cfg->time_s = json_number_value(json_object_get(set, "time_s"));
    cfg->tables = (int)json_integer_value(json_object_get(set, "tables"));
    cfg->table_size = (int)json_integer_value(json_object_get(set, "table_size"));
    const char *measure = json_string_value(json_object_get(set, "measure"));
    if (measure && !strcmp(measure, "instructions")) {
        cfg->measure = MEASURE_INSTRUCTIONS;
        cfg->events = (int)json_integer_value(json_object_get(set, "events"));
    }
    a = json_object_get(set, "bench_args");
    cfg->bench_args = xcalloc(json_array_size(a) + 1, sizeof(char *));
    for (i = 0; i < json_array_size(a); i++) {
        const char *b = json_string_value(json_array_get(a, i));
        cfg->bench_args[i] = own(out, b ? b : "");
    }
    cfg->seed = e->seed;
    cfg->experiment_id = e->id;
    cfg->kind = e->kind;
    cfg->workdir = "";
    cfg->pgolab = "pgolab";

    res->env_json = xstrdup(e->environment_json ? e->environment_json : "{}");
    res->started_at = e->created_at;
    res->finished_at = e->finished_at;
    if (load_recorded_runs(s, cfg, res) < 0)
        goto out;
    res->resumed = res->nruns;
    if (strcmp(e->status, "complete")) {
        if (!strcmp(e->status, "running"))
            res->error = xasprintf("experiment %lld is still running, or was stopped by a crash "
                                   "or power cut (`pgolab %s --resume=%lld` continues it)",
                                   (long long)id, e->kind, (long long)id);
        else
            res->error = xasprintf("experiment %lld %s (`pgolab %s --resume=%lld` with the "
                                   "same options continues it)",
                                   (long long)id, e->status, e->kind, (long long)id);
    }
    rc = 0;
out:
    for (int w = 0; w < sc.nworkloads; w++)
        free(sc.workloads[w]);
    free(sc.workloads);
    free(sc.threads);
    json_decref(set);
    if (rc < 0)
        experiment_loaded_release(out);
    return rc;
}

