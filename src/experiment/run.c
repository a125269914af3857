/* run: one run of an experiment and the data under it (see run.h). The signal that stops an
 * experiment is caught into this file's flag while experiment_run() runs. */
#include "experiment/run.h"
#include "experiment/callgrind.h"
#include "experiment/callgrind_server.h"
#include "experiment/loading.h"
#include "experiment/pinning.h"
#include "experiment/profiling.h"
#include "metrics/sampler.h"
#include "server/server.h"
#include "store/store.h"
#include "util/argvec.h"
#include "util/fmt.h"
#include "util/fs.h"
#include "util/pidstat.h"
#include "util/progress.h"
#include "util/signals.h"
#include "util/strbuf.h"
#include "util/subprocess.h"
#include "util/util.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---------------------------------------------------------------- small helpers */


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

char *run_log_tail(const char *path, int lines)
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

/* ---------------------------------------------------------------- signals and failures */

static volatile sig_atomic_t got_signal;

static void on_signal(int sig)
{
    got_signal = sig;
}

void run_catch_signals(struct sig_saved *saved)
{
    got_signal = 0;
    sig_catch(on_signal, saved);
    /* a signal that reached an enclosing catch (pgo's, before its measurement) counts too */
    if (sig_caught())
        got_signal = sig_caught();
}

bool run_keeps_json(const struct experiment_engine *en)
{
    const struct experiment_config *cfg = en->cfg;
    return cfg->keep_run_json || cfg->profile || cfg->measure != MEASURE_TIME ||
           !en->store || cfg->experiment_id <= 0;
}

int run_signal(void)
{
    return got_signal;
}

const char *run_signal_name(int sig)
{
    return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : sig == SIGHUP ? "SIGHUP" :
        "a signal";
}

/* "keeping the N finished runs" for an interruption's message, in buf (64 bytes): none and
 * one said as such. */
static const char *kept_runs(char *buf, int n)
{
    assert(n >= 0);
    if (n == 0)
        return "no run had finished";
    snprintf(buf, 64, "keeping the %d finished run%s", n, n == 1 ? "" : "s");
    return buf;
}

int run_fail(struct experiment_result *res, const char *fmt, ...)
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

/* ---------------------------------------------------------------- the child */

/* The number at obj.key into *out; -1 if it is missing or not a number. */
static int get_num(json_t *obj, const char *key, double *out)
{
    json_t *v = json_object_get(obj, key);
    if (!json_is_number(v))
        return -1;
    *out = json_number_value(v);
    return 0;
}

/* The count at obj.key: 0 when it is missing, not a number, negative or beyond uint64_t (a
 * double outside [0, 2^64) has no uint64_t value: converting it is undefined behaviour). */
static uint64_t get_count(json_t *obj, const char *key)
{
    double x;
    if (get_num(obj, key, &x) < 0 || !(x >= 0 && x < 18446744073709551616.0))
        return 0;
    return (uint64_t)x;
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
    r->transactions = get_count(root, "transactions");
    r->errors = get_count(root, "ignored_errors");
    r->json = xstrdup(json);
    rc = 0;
out:
    json_decref(root);
    return rc;
}

/* The child's argv: PGOLAB bench TARGET --tables=T --table-size=N --threads=K [extra...]
 * [bench_args...] WORKLOAD COMMAND, where TARGET is --sqlite-library=L --sqlite-db=DB, or the
 * client options of the variant's running server (srv), or of its external server. cg_out:
 * run the child under `valgrind --tool=callgrind` writing its profile there (NULL: run it
 * directly). */
void run_child_argv(struct argvec *a, const struct experiment_config *cfg,
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

/* true when the child options already fix the bench's random seed. */
static bool has_rand_seed(const struct experiment_config *cfg)
{
    for (char **b = cfg->bench_args; b && *b; b++)
        if (!strncmp(*b, "--rand-seed", 11))
            return true;
    return false;
}

/* ---- a variant's data: a SQLite file, or a managed server's datadir ---- */

void run_remove_data(const struct variant *var, const char *path)
{
    if (var->kind == VARIANT_SERVER)
        remove_tree(path);
    else
        remove_db(path);
}

static int fresh_copy(struct experiment_result *res, const char *template, const char *rundb);

/* Make work a fresh copy of template: the SQLite file (and -wal), or the stopped server's
 * whole datadir (cp -a: owners and modes kept, as PostgreSQL wants). 0, or -1 after run_fail(). */
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
        char kept[64];
        res->signal = got_signal;
        return run_fail(res, "interrupted by %s while copying the datadir %s; %s",
                        run_signal_name(got_signal), template, kept_runs(kept, res->nruns));
    }
    if (st != 0)
        return run_fail(res, "cannot copy the datadir %s to %s (cp exit %d)", template, work, st);
    return 0;
}

/* The tail of the last managed server's log after a failed run (for the run's message). */
static char *last_server_tail;
/* --profile: the sampler of the last managed server's run (run_once finishes it). */
static struct profile_session server_profile;
/* The last failed run's server was gone (it died): a cause that may not repeat. */
static bool last_server_gone;

/* Where a server log named in a message is kept, as the work directory goes:
 * RESULTS.logs/experiment-N-WHAT.log beside the results database (the directory made here);
 * NULL without a store or when the directory cannot be made (then the server's default). */
static char *keep_log_path(const struct experiment_engine *en, const char *what)
{
    const struct experiment_config *cfg = en->cfg;
    if (!en->store || cfg->experiment_id <= 0)
        return NULL;
    char *dir = xasprintf("%s.logs", store_path(en->store));
    char *path = NULL;
    if (mkdir_p(dir) == 0)
        path = xasprintf("%s/experiment-%lld-%s.log", dir, (long long)cfg->experiment_id, what);
    free(dir);
    return path;
}

/* Start variant var's server on datadir (initialized there when new); with cg_dir, under
 * valgrind callgrind writing its files there (callgrind_server.h). 0, or -1 after run_fail()
 * (server_start printed why, with the server's log tail). */
static int start_server(const struct experiment_engine *en, struct experiment_result *res,
                        const struct variant *var, const char *datadir, struct server *srv,
                        const char *cg_dir)
{
    const struct experiment_config *cfg = en->cfg;
    struct argvec wrapper = ARGVEC_INIT;
    if (cg_dir && (callgrind_server_dir(cg_dir, var->server_kind) < 0 ||
                   callgrind_server_wrapper(&wrapper, cfg, var->server_kind, cg_dir) < 0)) {
        argvec_clear(&wrapper);
        return run_fail(res, "variant %s: cannot run its server under callgrind", var->name);
    }
    /* the global --server-option values, each replaced by the variant's own of its name */
    struct argvec own = ARGVEC_INIT;
    server_options_merge(cfg->server_options, cfg->nserver_options, var->server_options,
                         var->nserver_options, &own);
    argvec_argv(&own);
    struct argvec options = ARGVEC_INIT;  /* under callgrind: the deterministic defaults */
    if (cg_dir)
        callgrind_server_options(var->server_kind, var->version, own.v, own.n, &options);
    struct server_config sc = {
        .kind = var->server_kind, .datadir = datadir, .options = own.v,
        .stop_with_parent = true,
        .noptions = own.n,
        .cpus = cpu_placement_server(&cfg->placement),
    };
    if (cg_dir) {
        sc.options = options.v;
        sc.noptions = options.n;
    }
    char *what = xasprintf("%s-server-start", var->name);
    char *keep = keep_log_path(en, what);
    free(what);
    sc.keep_log = keep;
    if (is_dir(var->library))
        sc.prefix = var->library;
    else
        sc.server = var->library;
    if (cg_dir) {  /* valgrind starts a server some 20-50 times slower */
        sc.wrapper = argvec_argv(&wrapper);
        sc.start_timeout_s = 600;
        sc.stop_signal = callgrind_server_stop_signal(var->server_kind);
    }
    int st = server_start(srv, &sc);
    argvec_clear(&wrapper);
    argvec_clear(&options);
    argvec_clear(&own);
    free(keep);
    if (st == 0)
        return 0;
    if (got_signal) {
        res->signal = got_signal;
        return run_fail(res, "interrupted by %s while starting the server of %s: stopped it, "
                        "nothing left running", run_signal_name(got_signal), var->name);
    }
    return run_fail(res, "variant %s: the server %s did not start on %s (see above)", var->name,
                    var->library, datadir);
}

/* Whether process pid is stopped by a signal (state T in /proc/PID/stat). */
static bool process_paused(pid_t pid)
{
    struct proc_pid_stat st;
    return pidstat_read(NULL, pid, &st) == 0 && st.state == 'T';
}

/* Stop a server started by start_server (cleanly; server_stop reports a failure). */
static void stop_server(struct server *srv)
{
    if (srv->pid) {
        kill(srv->pid, SIGCONT); /* a paused server (SIGSTOP) could not act on its SIGTERM */
        server_stop(srv, 120);
    }
    server_release(srv);
}

int run_prepare_template(const struct experiment_engine *en, struct experiment_result *res,
                         int w, int v, const char *template)
{
    const struct experiment_config *cfg = en->cfg;
    const struct variant *var = &cfg->variants[v];
    const char *workload = cfg->workloads[w];
    struct argvec a = ARGVEC_INIT;
    struct server srv;
    char *log = xasprintf("%s/prepare-%d-%d-%s.log", cfg->workdir, w, v, workload);
    int st = 0, rc = 0;
    struct loading load;
    memset(&srv, 0, sizeof(srv));
    memset(&load, 0, sizeof(load));
    unlink(log);
    if (cfg->progress) {
        /* bulk_insert prepares empty tables; sysbench (external) keeps no count */
        long long rows = !strcmp(workload, "bulk_insert") || var->kind == VARIANT_EXTERNAL
                             ? 0 : (long long)cfg->tables * cfg->table_size;
        char *what = xasprintf("%s for %s", workload, var->name);
        loading_begin(&load, cfg->workdir, what, rows);
        free(what);
    }
    if (var->kind == VARIANT_SERVER) {
        remove_tree(template);
        if (start_server(en, res, var, template, &srv, NULL) < 0) {
            if (cfg->progress)
                loading_end(&load, false);
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
        run_child_argv(&a, cfg, var, template, &srv, threads, NULL);
        child_argv_finish(&a, cfg, workload, "cleanup");
        struct subprocess sp = { .argv = argvec_argv(&a), .log_path = log };
        st = subprocess_run(&sp);
        argvec_clear(&a);
    }
    if (st == 0 && !got_signal) {
        run_child_argv(&a, cfg, var, template, &srv, threads, NULL);
        child_argv_finish(&a, cfg, workload, "prepare");
        const char *env[] = { load.env, NULL };
        struct subprocess sp = { .argv = argvec_argv(&a), .log_path = log,
                                 .env = load.env ? env : NULL,
                                 .started = load.env ? loading_started : NULL,
                                 .tick = load.env ? loading_tick : NULL, .hook_ctx = &load };
        st = subprocess_run(&sp);
    }
    stop_server(&srv);
    if (cfg->progress)
        loading_end(&load, st == 0 && !got_signal);
    if (got_signal) {
        res->signal = got_signal;
        rc = run_fail(res, "interrupted by %s while preparing %s", run_signal_name(got_signal),
                      workload);
    } else if (st != 0 || (var->kind == VARIANT_SQLITE && !file_exists(template))) {
        char *tail = run_log_tail(log, 3);
        rc = run_fail(res, "prepare of %s with %s failed (exit %d): %s", workload, var->name, st,
                      tail);
        free(tail);
    }
    argvec_clear(&a);
    free(log);
    return rc;
}

/* A fresh copy of the template (and its -wal) at rundb. 0, or -1 after run_fail(). */
static int fresh_copy(struct experiment_result *res, const char *template, const char *rundb)
{
    static const char *const sfx[] = { "", "-wal" };
    remove_db(rundb);
    for (size_t i = 0; i < ARRAY_SIZE(sfx); i++) {
        char *src = xasprintf("%s%s", template, sfx[i]);
        char *dst = xasprintf("%s%s", rundb, sfx[i]);
        int cr = (i == 0 || file_exists(src)) ? file_copy(src, dst) : 0;
        if (cr < 0)
            run_fail(res, "cannot copy %s to %s: %s", src, dst, strerror(errno));
        free(src);
        free(dst);
        if (cr < 0)
            return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------- one run */

static void run_metrics_started(int pid, void *ms)
{
    metrics_sampler_start(ms, pid);
}

static void run_metrics_tick(void *ms)
{
    metrics_sampler_tick(ms);
}

int run_child(const struct experiment_engine *en, struct experiment_result *res,
              const struct variant *var, const char *workload, int threads,
              const char *template, const char *rundb, const char *log,
              const char *cg_out, int events, struct strbuf *out, struct metrics_sampler *ms)
{
    const struct experiment_config *cfg = en->cfg;
    struct argvec a = ARGVEC_INIT;
    struct server srv;
    memset(&srv, 0, sizeof(srv));
    if (template && copy_data(res, var, template, rundb) < 0)
        return -2;
    /* A managed server is started for this run alone (restarted between runs, seed 001's
     * method) and stopped cleanly after it. */
    /* --measure=instructions on a server: the server runs under callgrind (cg_out is then the
     * directory of its files), the client outside it */
    bool server_cg = cg_out && var->kind == VARIANT_SERVER;
    if (var->kind == VARIANT_SERVER &&
        start_server(en, res, var, rundb, &srv, server_cg ? cg_out : NULL) < 0)
        return -2;
    unlink(log);
    strbuf_reset(out);
    if (cfg->clients_np > 0 && !cg_out) {
        /* --clients=mpirun:N: the measured run is one MPI job; rank 0 prints its JSON */
        struct argvec c = ARGVEC_INIT;
        argvec_push(&a, "mpirun");
        argvec_pushf(&a, "-np");
        argvec_pushf(&a, "%d", cfg->clients_np);
        if (cfg->clients_hostfile) {
            argvec_push(&a, "--hostfile");
            argvec_push(&a, cfg->clients_hostfile);
        } else {
            argvec_push(&a, "--oversubscribe");
        }
        if (geteuid() == 0)
            argvec_push(&a, "--allow-run-as-root");
        run_child_argv(&c, cfg, var, rundb, &srv, threads, NULL);
        argvec_pushv(&a, argvec_argv(&c));
        argvec_clear(&c);
    } else {
        run_child_argv(&a, cfg, var, rundb, &srv, threads, server_cg ? NULL : cg_out);
    }
    if (server_cg) {  /* the benchmark's connections say who serves them (callgrind_server.h) */
        argvec_push(&a, "--server-identity");
        if (var->server_kind != SERVER_PGSQL)
            argvec_pushf(&a, "--callgrind-server=%s/vgdb", cg_out);
    }
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
        /* A server that stops answering (paused, stalled) must not hold the run past --time:
         * the child ends by --time + grace with what it measured and exit 2 (the subprocess
         * timeout below is only the backstop). The grace (10 s + 5% of --time) is far above
         * any query's latency in a healthy run. */
        argvec_pushf(&a, "--forced-shutdown=%d", 10 + (int)ceil(cfg->time_s * 0.05));
        if (cfg->profile && var->kind == VARIANT_SQLITE)  /* the child samples itself */
            profile_child_args(cfg, res->nruns + 1, &a);
        else if (cfg->profile && var->kind == VARIANT_SERVER)  /* the server's processes */
            profile_server_start(cfg, res->nruns + 1, srv.pid, &server_profile);
    }
    argvec_push(&a, "--format=json");
    child_argv_finish(&a, cfg, workload, "run");
    /* A run ends itself after --time (or its events); the timeout only guards against a hung
     * child (callgrind runs some 50-100 times slower than the program alone). */
    struct subprocess sp = { .argv = argvec_argv(&a), .log_path = log, .out = out,
                             .timeout_s = cg_out ? 3600 + events * 0.5 : cfg->time_s * 3 + 60 };
    sp.cpus = cpu_placement_client(&cfg->placement, var->kind == VARIANT_SQLITE, threads);
    struct rusage ru;
    if (ms) { /* system metrics: the sampler watches the child and the server as it runs */
        metrics_sampler_set_server(ms, srv.pid);
        sp.started = run_metrics_started, sp.tick = run_metrics_tick, sp.hook_ctx = ms;
        sp.tick_s = METRICS_INTERVAL_S, sp.rusage = &ru;
    }
    int st = subprocess_run(&sp);
    if (ms)
        metrics_sampler_stop(ms, st >= 0 ? &ru : NULL); /* the server is still up */
    argvec_clear(&a);
    profile_session_stop(&server_profile);
    if (var->kind == VARIANT_SERVER) {
        free(last_server_tail);
        last_server_tail = NULL;
        last_server_gone = false;
        if (st != 0) { /* e.g. the server died: its own last words go with the run's error, and
                        * its log is kept (the run's datadir goes) */
            char *tail = run_log_tail(srv.log, 3);
            char *what = xasprintf("run-%03d-%s-server", res->nruns + 1, var->name);
            char *keep = keep_log_path(en, what);
            const char *name = keep && file_copy(srv.log, keep) == 0 ? keep : srv.log;
            last_server_gone = server_status(&srv, NULL) == SERVER_GONE;
            last_server_tail = xasprintf("%s; server log %s: %s",
                                         last_server_gone       ? "the server is gone"
                                         : process_paused(srv.pid) ?
                                             "the server is paused (SIGSTOP)"
                                                                 : "the server is running",
                                         name, tail);
            free(what);
            free(keep);
            free(tail);
        }
        stop_server(&srv);
    }
    return st;
}

/* A server child's counts: its connections from its report (json) matched to the callgrind
 * files in dir (callgrind_server.h). 0, or -1 with a message. */
static int server_counts(const char *dir, enum server_kind kind, const char *json,
                         struct callgrind_server_counts *sc, struct profile_counts *pc)
{
    struct callgrind_server_conn *conns;
    int n;
    if (callgrind_server_conns(json, kind, &conns, &n) < 0)
        return -1;
    int rc = callgrind_server_read(dir, kind, conns, n, sc, pc);
    free(conns);
    return rc;
}

/* The two callgrind children of an instruction-mode run (N/5 events, then N): fills r from
 * the big child's report plus instr_per_txn and the "callgrind" JSON; the time metrics are
 * set to NaN (they were slowed down by valgrind and mean nothing). A managed server's variant:
 * each child runs outside valgrind against a server started for it alone under callgrind,
 * and the counts are its serving processes' or threads' (callgrind_server.h), the rest of
 * the server beside them. 0, or -1 after run_fail(). */
static int run_instructions(const struct experiment_engine *en, struct experiment_result *res,
                            int v, const char *workload, int round, const char *template,
                            const char *rundb, const char *log, struct strbuf *out,
                            struct run_result *r)
{
    const struct experiment_config *cfg = en->cfg;
    const struct variant *var = &cfg->variants[v];
    int seq = res->nruns;
    int counts[2] = { cfg->events / 5, cfg->events };
    struct callgrind_counts cc[2], bg[2];
    struct profile_counts pc[2] = { { 0 }, { 0 } };  /* --profile: per function */
    uint64_t txns[2] = { 0, 0 };
    bool server = var->kind == VARIANT_SERVER;
    struct callgrind_server_counts sc[2];
    for (int k = 0; k < 2; k++) {
        char *cg = xasprintf("%s/cg.%03d.%s.%s", cfg->workdir, seq + 1, k ? "n" : "n5",
                             server ? "d" : "out");
        remove_tree(cg);
        int st = run_child(en, res, var, workload, 1, template, rundb, log, cg, counts[k], out,
                           NULL);
        int rc = 0;
        if (st == -2) {
            rc = -1;
        } else if (got_signal) {
            rc = -1; /* the caller reports it */
        } else if (st != 0) {
            char *tail = run_log_tail(log, 3);
            rc = run_fail(res, "run failed under callgrind: variant %s, %s, %d events, round "
                               "%d/%d: exit %d: %s", var->name, workload, counts[k], round,
                          cfg->rounds, st, tail);
            free(tail);
        } else {
            struct run_result tmp;
            memset(&tmp, 0, sizeof(tmp));
            strbuf_rtrim(out);
            if (experiment_parse_run(out->buf, &tmp) < 0) {
                rc = run_fail(res, "run failed under callgrind: variant %s, %s: unusable report",
                              var->name, workload);
            } else if (server ? server_counts(cg, var->server_kind, tmp.json, &sc[k],
                                              cfg->profile ? &pc[k] : NULL) < 0
                              : experiment_callgrind_counts(cg, &cc[k]) < 0) {
                rc = run_fail(res, "run %d (variant %s, %s): no instruction count from callgrind",
                              seq + 1, var->name, workload);
                free(tmp.json);
            } else if (!server && cfg->profile && profile_callgrind_read(cg, &pc[k]) < 0) {
                rc = run_fail(res, "run %d (variant %s, %s): no profile from callgrind",
                              seq + 1, var->name, workload);
                free(tmp.json);
            } else {
                txns[k] = tmp.transactions;
                if (server) {
                    cc[k] = sc[k].serving;
                    bg[k] = sc[k].background;
                }
                if (k) {
                    free(r->json);
                    *r = tmp;
                } else {
                    free(tmp.json);
                }
            }
        }
        remove_tree(cg);
        free(cg);
        if (rc < 0) {
            profile_counts_release(&pc[0]);
            profile_counts_release(&pc[1]);
            return -1;
        }
    }
    if (cfg->profile) {  /* the exact profile: instructions per function, N - N/5 */
        char *folded = profile_run_path(cfg, seq + 1, "folded");
        if (txns[1] > txns[0])
            profile_write_instructions(folded, &pc[0], &pc[1], txns[1] - txns[0]);
        free(folded);
        profile_counts_release(&pc[0]);
        profile_counts_release(&pc[1]);
    }
    if (txns[1] <= txns[0] || cc[1].ir <= cc[0].ir)
        return run_fail(res, "run %d (variant %s, %s): no marginal cost: %llu instructions for "
                             "%llu transactions vs %llu for %llu", seq + 1, var->name, workload,
                        (unsigned long long)cc[1].ir, (unsigned long long)txns[1],
                        (unsigned long long)cc[0].ir, (unsigned long long)txns[0]);
    char *counted = NULL;
    if (server) {
        struct strbuf sb = STRBUF_INIT;
        bool pg = var->server_kind == SERVER_PGSQL;
        strbuf_addf(&sb, "server: the benchmark's %d connection%s (matched by %s), %d more "
                    "%s beside as background", sc[1].nserving, sc[1].nserving == 1 ? "" : "s",
                    pg ? "backend PID" : "server thread", sc[1].nbackground,
                    pg ? "processes" : "threads");
        for (int k = 0; k < 2; k++) {  /* another client's connections: named */
            if (!sc[k].nstrangers)
                continue;
            strbuf_addf(&sb, "; %s run: %d other client connection%s in the background (",
                        k ? "N" : "N/5", sc[k].nstrangers, sc[k].nstrangers == 1 ? "" : "s");
            for (int i = 0; i < sc[k].nstrangers && i < CALLGRIND_STRANGERS_MAX; i++)
                strbuf_addf(&sb, "%s%s", i ? ", " : "", sc[k].strangers[i]);
            strbuf_addf(&sb, "%s)", sc[k].nstrangers > CALLGRIND_STRANGERS_MAX ? ", ..." : "");
        }
        counted = strbuf_detach(&sb);
    }
    callgrind_marginal(r, cfg->events, cc, txns, server ? bg : NULL, counted);
    free(counted);
    return 0;
}

int run_once(const struct experiment_engine *en, struct experiment_result *res, int w,
             int t, int round, int v, const char *template, const char *rundb)
{
    const struct experiment_config *cfg = en->cfg;
    const struct variant *var = &cfg->variants[v];
    const char *workload = cfg->workloads[w];
    int threads = cfg->threads[t];
    int seq = res->nruns;
    struct strbuf out = STRBUF_INIT;
    struct run_result r;
    int rc = -1, st = 0;
    struct metrics_sampler *ms = NULL;
    char *metrics_json = NULL;
    char *log = xasprintf("%s/run-%03d.log", cfg->workdir, seq + 1);
    bool instr = cfg->measure == MEASURE_INSTRUCTIONS;

    memset(&r, 0, sizeof(r));
    r.instr_per_txn = r.i1_miss_per_txn = r.branch_miss_per_txn = NAN;
    r.d1_miss_per_txn = r.ll_miss_per_txn = r.est_cycles_per_txn = NAN;
    r.bg_instr_per_txn = r.bg_est_cycles_per_txn = NAN;
    double started_at = wall_time();
    uint64_t t0 = now_ns();
    if (instr) {
        int ir = run_instructions(en, res, v, workload, round, template, rundb, log, &out, &r);
        if (ir < 0 && !got_signal)
            goto out;
    } else {
        /* system metrics of every time-mode run (not under valgrind: 50x slower) */
        ms = cfg->no_metrics ? NULL : metrics_sampler_new(NULL, threads);
        st = run_child(en, res, var, workload, threads, template, rundb, log, NULL, 0, &out, ms);
        if (st == -2)
            goto out;
    }
    double duration_s = (double)(now_ns() - t0) / 1e9;

    if (got_signal) {
        res->signal = got_signal;
        char kept[64];
        run_fail(res, "interrupted by %s during run %d (%s, %s, threads=%d, round %d/%d); %s",
                 run_signal_name(got_signal), seq + 1, var->name, workload, threads, round,
                 cfg->rounds, kept_runs(kept, res->nruns));
        goto out;
    }
    if (st != 0) {
        char *tail = run_log_tail(log, 3);
        /* a hung or killed child, or a server that died or stopped answering (the child's
         * forced shutdown): may not happen again */
        res->transient = st >= 128 || (var->kind == VARIANT_SERVER &&
                                       (last_server_gone || strstr(tail, "forcing shutdown")));
        run_fail(res, "run failed: variant %s, %s, threads=%d, round %d/%d: exit %d: %s%s%s",
                 var->name, workload, threads, round, cfg->rounds, st, tail,
                 last_server_tail ? "; " : "", last_server_tail ? last_server_tail : "");
        free(tail);
        goto out;
    }
    strbuf_rtrim(&out);
    if (!instr && experiment_parse_run(out.buf, &r) < 0) {
        char *tail = run_log_tail(log, 3);
        run_fail(res, "run failed: variant %s, %s, threads=%d, round %d/%d: unusable report "
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
            run_fail(res, "run %d measured the wrong library: variant %s is SQLite %s but the "
                          "child ran %s", seq + 1, var->name, var->source_id, sid);
            json_decref(root);
            goto out;
        }
        json_decref(root);
    }
    if (cfg->profile && var->kind != VARIANT_EXTERNAL)  /* RUN.folded + "profile" in r.json */
        profile_run_finish(cfg, seq + 1, var->kind == VARIANT_SERVER ? &server_profile : NULL,
                           &r);
    r.variant = v;
    r.workload = w;
    r.threads = threads;
    r.round = round;
    r.started_at = started_at;
    r.duration_s = duration_s;
    if (ms)
        metrics_sampler_result(ms, r.transactions, &r.metrics);
    metrics_json = ms ? metrics_json_text(&r.metrics) : NULL;
    /* Committed before the next run starts: an interruption loses at most the run in
     * progress. A run that cannot be recorded stops the experiment (it would be lost). */
    if (en->store && cfg->experiment_id > 0) {
        struct store_run sr = {
            .variant_idx = v, .workload = workload, .threads = threads, .round = round,
            .seq = STORE_SEQ_NEXT, .started_at = started_at, .duration_s = duration_s,
            .tps = r.tps, .qps = r.qps, .lat_min_ms = r.lat_min_ms, .lat_avg_ms = r.lat_avg_ms,
            .lat_p95_ms = r.lat_p95_ms, .lat_max_ms = r.lat_max_ms,
            .transactions = r.transactions, .errors = r.errors, .report_json = r.json,
            .metrics_json = metrics_json,
        };
        if (store_run_add(en->store, cfg->experiment_id, &sr) < 0) {
            run_fail(res, "run %d (%s, %s, threads=%d, round %d/%d) could not be recorded; "
                          "stopping (the runs recorded before it are kept: --resume=%lld runs "
                          "the rest once the results file can be written)",
                     seq + 1, var->name, workload, threads, round, cfg->rounds,
                     (long long)cfg->experiment_id);
            goto out;
        }
    }
    if (!run_keeps_json(en)) { /* recorded: the store has it */
        free(r.json);
        r.json = NULL;
    }
    res->runs = xrealloc(res->runs, sizeof(*res->runs) * (size_t)(res->nruns + 1));
    res->runs[res->nruns++] = r;
    r.json = NULL; /* now res's */
    memset(&r.metrics, 0, sizeof(r.metrics)); /* now res's */
    rc = 0;
out:
    profile_session_release(&server_profile);
    free(metrics_json);
    metrics_sampler_free(ms);
    metrics_release(&r.metrics);
    free(r.json);
    if (cfg->reset == RESET_RUN && var->kind != VARIANT_EXTERNAL)
        run_remove_data(var, rundb);
    strbuf_release(&out);
    free(log);
    return rc;
}

char *experiment_default_workdir(void)
{
    char *d = NULL;
    if (access("/dev/shm", W_OK | X_OK) == 0)
        d = private_tmpdir("/dev/shm", "pgolab");
    else if (mkdir_p("./.pgolab") == 0)
        d = private_tmpdir("./.pgolab", "run");
    /* traversable by a managed server's own user (postgres when pgolab is root), not listable */
    if (d && chmod(d, 0711) < 0) {
        error("chmod %s: %s", d, strerror(errno));
        remove_tree(d);
        free(d);
        d = NULL;
    }
    return d;
}
