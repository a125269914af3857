/* commands: what `pgolab bench` does once its options are checked (cli/cmd_bench.c parses them):
 * prepare / prewarm in parallel, cleanup, run through the runner (with --profile's sampler,
 * the interval lines and the final output), verify and info. Output goes to stdout as
 * bench/output.h prints it, errors to stderr. */
#include "bench/commands.h"
#include "bench/mpi.h"
#include "bench/vgdb.h"
#include "profile/profile.h"
#include "profile/session.h"
#include "util/fs.h"
#include "util/util.h"

#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct json_ctx {
    struct interval_stats *ivs;
    int n, cap;
    int percentile;
    double interval, line_percentile;  /* --report-interval, and the lines' percentile */
    bool text;
    bool us;  /* --latency-unit=us */
    const char *vgdb_prefix;  /* --callgrind-server: the server's valgrind (bench/vgdb.h) */
    int *cg_threads;          /* with it: each connection's callgrind thread number */
    int ncg;
    long cg_pid;              /* the valgrind process that serves them (0: unknown) */
};

/* A line of the whole job (merged over the ranks by ranks_interval): kept and printed. */
static void keep_interval(const struct interval_stats *iv, void *ud)
{
    struct json_ctx *jc = ud;
    if (jc->n == jc->cap) {
        jc->cap = jc->cap ? jc->cap * 2 : 64;
        jc->ivs = xrealloc(jc->ivs, sizeof(*jc->ivs) * (size_t)jc->cap);
    }
    jc->ivs[jc->n++] = *iv;
    jc->ivs[jc->n - 1].hist = NULL;  /* valid during the call only */
    if (jc->text)
        bench_text_interval(iv, jc->percentile, jc->us);
}

static void on_interval(const struct interval_stats *iv, void *ud)
{
    struct json_ctx *jc = ud;
    ranks_interval(iv, jc->interval, jc->line_percentile, keep_interval, jc);
}

/* runner_config.agree_start under mpirun: every rank's workers ready, or no rank starts. */
static bool agree_start(bool ok, void *ud)
{
    (void)ud;
    return ranks_all_ok(ok, "start its workers");
}

/* The PGOLAB_LATENCY_FILE test knob: every counted event's latency in ns, one a line, in
 * PATH.RANK (rank 0 without mpirun), for the tests that check merged histograms. */
static void write_latencies(const struct run_stats *st)
{
    const char *path = getenv("PGOLAB_LATENCY_FILE");
    if (!path || !*path)
        return;
    char *p = xasprintf("%s.%d", path, ranks_rank());
    FILE *f = fopen(p, "w");
    if (!f) {
        error("PGOLAB_LATENCY_FILE: cannot write %s", p);
    } else {
        for (size_t i = 0; i < st->nlatencies; i++)
            fprintf(f, "%llu\n", (unsigned long long)st->latencies[i]);
        fclose(f);
    }
    free(p);
}

/* runner_config.on_ready under --callgrind-server: each connection's server thread to its
 * callgrind thread number, then callgrind's counts zeroed (bench/vgdb.h). */
static int callgrind_ready(const struct db_identity *ids, int n, void *ud)
{
    struct json_ctx *jc = ud;
    int64_t *os = xcalloc((size_t)n, sizeof(*os));
    for (int i = 0; i < n; i++)
        os[i] = ids[i].os_thread;
    jc->cg_threads = xcalloc((size_t)n, sizeof(*jc->cg_threads));
    jc->ncg = n;
    int rc = 0;
    /* PostgreSQL's backends are processes, each its own file: nothing to map or zero */
    if (n && os[0]) {
        jc->cg_pid = vgdb_process_of(os[0]);
        rc = vgdb_threads(jc->vgdb_prefix, jc->cg_pid, os, n, jc->cg_threads) < 0 ||
             vgdb_command(jc->vgdb_prefix, jc->cg_pid, "zero") < 0 ? -1 : 0;
    }
    free(os);
    return rc;
}

/* runner_config.on_finished under --callgrind-server: callgrind's per-thread counts of the
 * run dumped while every connection is still open. */
static int callgrind_finished(void *ud)
{
    struct json_ctx *jc = ud;
    if (jc->ncg && jc->cg_threads[0])
        return vgdb_command(jc->vgdb_prefix, jc->cg_pid, "dump");
    return 0;
}

static void on_start(void *ud)
{
    struct json_ctx *jc = ud;
    if (jc->text) {
        printf("Threads started!\n\n");
        fflush(stdout);
    }
}

struct prep_arg {
    const struct db_driver *drv;
    const struct oltp_opts *o;
    int first, step, rc;
    bool prewarm;
};

static void *prepare_worker(void *arg)
{
    struct prep_arg *a = arg;
    struct db_conn c = { .drv = a->drv, .create = true };
    if (a->drv->connect(&c) < 0) {
        error("cannot connect: %s", c.err.msg);
        a->rc = -1;
        return NULL;
    }
    a->rc = a->prewarm ? oltp_prewarm_tables(&c, a->o, a->first, a->step)
                       : oltp_prepare_tables(&c, a->o, a->first, a->step);
    a->drv->disconnect(&c);
    return NULL;
}

static void on_prepare_sigint(int sig)
{
    (void)sig;
    oltp_prepare_interrupted = 1;
}

/* sysbench's parallel prepare (and prewarm): worker t loads tables t+1, t+1+T, ...
 * SIGINT stops it between two bulk INSERTs (returns 2: interrupted). */
static int do_prepare(const struct db_driver *drv, const struct oltp_opts *o, int threads,
                      bool prewarm)
{
    struct sigaction sa = { 0 };
    sa.sa_handler = on_prepare_sigint;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    int n = threads < o->tables ? threads : o->tables;
    struct prep_arg *args = xcalloc((size_t)n, sizeof(*args));
    pthread_t *tids = xcalloc((size_t)n, sizeof(*tids));
    int rc = 0;
    /* Create the database (and switch it to WAL) once, before the workers connect. */
    struct db_conn first = { .drv = drv, .create = true };
    if (drv->connect(&first) < 0) {
        error("%s", first.err.msg);
        free(args);
        free(tids);
        return -1;
    }
    if (threads > 1)
        printf("Initializing worker threads...\n\n");
    for (int i = 0; i < n; i++) {
        args[i] = (struct prep_arg){ drv, o, i + 1, threads, 0, prewarm };
        if (n == 1)
            prepare_worker(&args[i]);
        else
            pthread_create(&tids[i], NULL, prepare_worker, &args[i]);
    }
    for (int i = 0; i < n; i++) {
        if (n > 1)
            pthread_join(tids[i], NULL);
        if (args[i].rc < 0)
            rc = -1;
    }
    drv->disconnect(&first);
    free(args);
    free(tids);
    return oltp_prepare_interrupted ? 2 : rc;
}

static int with_conn(const struct db_driver *drv, struct db_conn *c)
{
    char buf[256];
    c->drv = drv;
    if (drv->connect(c) < 0) {
        const char *hint = runner_error_hint(&c->err, 1, buf, sizeof(buf));
        return error("%s%s%s", c->err.msg, hint ? "; " : "", hint ? hint : "");
    }
    return 0;
}

/* The runner's throttle test knob from PGOLAB_THROTTLE=F:LIBRARY: run at fraction F of full
 * speed when --sqlite-library is LIBRARY (so one variant of an experiment can be slowed by a
 * known factor: 1/F times the work per transaction, see runner.h). 0 when unset or for another
 * library, -1 (message printed) when malformed. */
static double throttle_knob(const struct opts *opts)
{
    const char *e = getenv("PGOLAB_THROTTLE");
    char *end;
    if (!e || !*e)
        return 0;
    double f = strtod(e, &end);
    if (*end != ':' || !(f > 0 && f < 1))
        return error("PGOLAB_THROTTLE=%s: expected F:LIBRARY with 0 < F < 1", e);
    const char *lib = opt_str(opts, "sqlite-library");
    return lib && !strcmp(lib, end + 1) ? f : 0;
}

/* bi->lib.server from the connection c (server drivers only). */
static void note_server(struct bench_info *bi, struct db_conn *c)
{
    static char buf[160];
    if (!c->drv->server_version)
        return;
    c->drv->server_version(c, buf, sizeof(buf));
    bi->lib.server = buf;
}

/* How many connections the server allows this user (0: unknown), and why into limit:
 * max_connections, less PostgreSQL's superuser_reserved_connections. For the one line of a
 * start refused for too many connections. */
static int server_conn_limit(struct db_conn *c, char *limit, size_t n)
{
    char v[32], r[32];
    *limit = '\0';
    if (!c->drv->server_setting || c->drv->server_setting(c, "max_connections", v, sizeof(v)) < 0)
        return 0;
    int max = atoi(v), reserved = 0;
    if (!strcmp(c->drv->name, "pgsql") &&
        c->drv->server_setting(c, "superuser_reserved_connections", r, sizeof(r)) == 0)
        reserved = atoi(r);
    if (reserved > 0)
        snprintf(limit, n, "max_connections=%d, %d reserved for superusers", max, reserved);
    else
        snprintf(limit, n, "max_connections=%d", max);
    return max - reserved > 0 ? max - reserved : 0;
}

/* `run`'s check before the workers: connect, the tables exist, the server's version into bi.
 * 0, or -1 (said). */
static int check_server(struct bench_info *bi, const struct db_driver *drv,
                        const struct oltp_opts *o)
{
    struct db_conn c = { .drv = drv };
    int rc = with_conn(drv, &c);
    if (rc == 0) {
        rc = oltp_check_tables(&c, o);
        note_server(bi, &c);
        drv->disconnect(&c);
    }
    return rc;
}

/* check_server on its own thread, waited for under a time limit. */
struct bounded_check {
    struct bench_info *bi;
    const struct db_driver *drv;
    const struct oltp_opts *o;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool done;  /* under mu */
    int rc;     /* check_server's, once done */
};

static void *check_thread(void *arg)
{
    struct bounded_check *k = arg;
    int rc = check_server(k->bi, k->drv, k->o);
    pthread_mutex_lock(&k->mu);
    k->rc = rc;
    k->done = true;
    pthread_cond_signal(&k->cv);
    pthread_mutex_unlock(&k->mu);
    return NULL;
}

/* check_server bounded by tmo seconds, the first part of --thread-init-timeout: a server that
 * accepts the connection and never answers (a frozen process) would hold it for the client's
 * own connect timeout (10 s, or --mysql-connect-timeout / --pgsql-connect-timeout). 0, -1
 * (said), or -2 when tmo passed first (nothing said): the check's thread is then left blocked
 * in the client library, with what it uses, and the caller ends the process. An in-process
 * engine is checked on this thread (no server to wait for, and a thread would end glibc's
 * single-threaded fast path for the inline worker, see runner_run). */
static int check_server_bounded(struct bench_info *bi, const struct db_driver *drv,
                                const struct oltp_opts *o, double tmo)
{
    assert(tmo > 0);
    if (drv->in_process)
        return check_server(bi, drv, o);
    struct bounded_check *k = xcalloc(1, sizeof(*k));
    *k = (struct bounded_check){ .bi = bi, .drv = drv, .o = o };
    pthread_mutex_init(&k->mu, NULL);
    pthread_cond_init(&k->cv, NULL);
    pthread_t tid;
    int e = pthread_create(&tid, NULL, check_thread, k);
    if (e) {
        free(k);
        return error("cannot create the thread of the table check: %s", strerror(e));
    }
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    uint64_t ns = (uint64_t)until.tv_nsec + (uint64_t)((tmo - (double)(uint64_t)tmo) * 1e9);
    until.tv_sec += (time_t)tmo + (time_t)(ns / 1000000000ull);
    until.tv_nsec = (long)(ns % 1000000000ull);
    pthread_mutex_lock(&k->mu);
    while (!k->done && pthread_cond_timedwait(&k->cv, &k->mu, &until) != ETIMEDOUT)
        ;
    bool done = k->done;
    int rc = k->rc;
    pthread_mutex_unlock(&k->mu);
    if (!done)
        return -2;  /* k stays with the blocked thread */
    pthread_join(tid, NULL);
    pthread_mutex_destroy(&k->mu);
    pthread_cond_destroy(&k->cv);
    free(k);
    return rc;
}

/* runner_config.conn_limit: a fresh connection asks (after a refused start). */
static int conn_limit(const struct runner_config *cfg, char *buf, size_t n)
{
    struct db_conn c = { .drv = cfg->drv };
    *buf = '\0';
    if (!cfg->drv->server_setting || cfg->drv->connect(&c) < 0)
        return 0;
    int allowed = server_conn_limit(&c, buf, n);
    cfg->drv->disconnect(&c);
    return allowed;
}

/* --profile of a run: the sampler (a child process) that follows this process and the worker
 * threads it creates from its start on, and where its raw file goes. */
struct run_profile {
    bool on;                 /* started */
    struct profile_session ps;
    char *raw, *raw_dir;     /* raw_dir: the private directory of a temporary raw */
};

/* Start --profile (nothing without it): 0, or 1 after a message. */
static int profile_begin(struct run_profile *p, const struct opts *opts)
{
    if (!opt_bool(opts, "profile"))
        return 0;
    int64_t freq = opt_int(opts, "profile-frequency");
    if (freq < 1 || freq > 100000)
        return error("--profile-frequency=%s: expected 1..100000 samples per second",
                     opt_str(opts, "profile-frequency")), 1;
    const char *tmp = getenv("TMPDIR");
    if (opt_str(opts, "profile-file")) {
        p->raw = xstrdup(opt_str(opts, "profile-file"));
    } else if ((p->raw_dir = private_tmpdir(tmp && *tmp ? tmp : "/tmp", "pgolab-profile"))) {
        p->raw = path_join(p->raw_dir, "profile.raw"); /* and profile.raw.folded beside it */
    } else {
        return 1;
    }
    profile_session_start(&p->ps, getpid(), p->raw, (int)freq, false);
    p->on = true;
    return 0;
}

/* Release the profile and remove a temporary raw file's directory. */
static void profile_end(struct run_profile *p)
{
    if (p->on)
        profile_session_release(&p->ps);
    if (p->raw_dir)
        remove_tree(p->raw_dir);
    free(p->raw_dir);
    free(p->raw);
}

/* The runner's settings for this rank: its threads, its share of --events and --rate, its own
 * random streams. */
static struct runner_config run_config(const struct bench_info *bi, const struct db_driver *drv,
                                       const struct workload *wl, const struct oltp_opts *o,
                                       const struct opts *opts, int threads, double throttle,
                                       struct json_ctx *jc)
{
    uint64_t seed = o->seed;
    if (!seed) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        seed = (uint64_t)ts.tv_sec * 1000000007ull ^ (uint64_t)ts.tv_nsec;
    }
    seed += 0xD1B54A32D192ED03ull * (uint64_t)ranks_rank();  /* each rank its own streams */
    /* under mpirun --rate and --events are the job's: each rank runs its share (independent
     * Poisson arrivals at rate/N add up to a Poisson process at the rate) */
    return (struct runner_config){
        .drv = drv,
        .wl = wl,
        .o = o,
        .threads = threads,
        .time_s = bi->time_s,
        .events = ranks_share(bi->events),
        .report_interval = bi->report_interval,
        .percentile = bi->percentile > 0 ? bi->percentile : 95,
        .seed = seed,
        .throttle = throttle,
        .rate = bi->rate / ranks_size(),
        .warmup_s = bi->warmup_s,
        .forced_shutdown_s = bi->forced_shutdown_s,
        .init_timeout_s = (double)opt_int(opts, "thread-init-timeout"),
        .conn_limit = conn_limit,
        .on_interval = on_interval,
        .on_start = on_start,
        .ud = jc,
        .keep_latencies = getenv("PGOLAB_LATENCY_FILE") && *getenv("PGOLAB_LATENCY_FILE"),
        .agree_start = ranks_active() ? agree_start : NULL,
    };
}

/* The run's JSON on stdout: bench_json() plus the shutdown, the profile and the ranks. */
static void print_run_json(const struct bench_info *bi, const struct run_stats *st,
                           const struct json_ctx *jc, struct run_profile *p)
{
    json_t *j = bench_json(bi, st, jc->ivs, jc->n);
    json_object_set_new(j, "forced_shutdown", json_boolean(st->forced));
    if (st->forced)
        json_object_set_new(j, "unfinished_events", json_integer((json_int_t)st->unfinished));
    if (st->queue_full)
        json_object_set_new(j, "queue_full", json_true());
    if (p->on) {
        json_t *pj = profile_session_json(&p->ps);
        if (p->raw_dir) /* a temporary raw file, removed below: keep it with --profile-file */
            json_object_set_new(pj, "raw", json_null());
        json_object_set_new(j, "profile", pj);
    }
    json_t *ranks = ranks_json();
    if (ranks)
        json_object_set_new(j, "ranks", ranks);
    if (st->identities) {  /* --server-identity: who served each connection */
        json_t *a = json_array();
        for (int i = 0; i < st->nthreads; i++) {
            const struct db_identity *id = &st->identities[i];
            json_t *o = json_object();
            if (id->pid)
                json_object_set_new(o, "pid", json_integer((json_int_t)id->pid));
            if (id->conn_id)
                json_object_set_new(o, "connection_id", json_integer((json_int_t)id->conn_id));
            if (id->os_thread)
                json_object_set_new(o, "os_thread", json_integer((json_int_t)id->os_thread));
            if (i < jc->ncg && jc->cg_threads[i])
                json_object_set_new(o, "callgrind_thread", json_integer(jc->cg_threads[i]));
            json_array_append_new(a, o);
        }
        json_object_set_new(j, "server_connections", a);
    }
    bench_json_print(j);
    json_decref(j);
}

/* The run's text on stdout: why it ended early, sysbench's final block, the top functions of
 * --profile. */
static void print_run_text(const struct bench_info *bi, const struct run_stats *st,
                           struct run_profile *p, const struct opts *opts)
{
    if (st->failed)
        printf("\nFAILED: the run was stopped by the error above; partial summary of what "
               "ran before it.\n\n");
    else if (st->forced)
        printf("\nFORCED SHUTDOWN: --time and the --forced-shutdown grace passed with "
               "events still running; summary of what ran.\n\n");
    else if (st->interrupted && ranks_active())
        printf("\nInterrupted (mpirun's SIGTERM, e.g. after Ctrl-C): summary of what "
               "ran.\n\n");
    else if (st->interrupted)
        printf("\nInterrupted (SIGINT): summary of what ran.\n\n");
    bench_text_final(bi, st, opt_bool(opts, "histogram"));
    if (p->on && p->ps.written) {
        char *folded = xasprintf("%s.folded", p->raw);
        struct profile_run pr;
        if (profile_symbolize(p->raw, folded) == 0 && profile_read(folded, &pr) == 0) {
            profile_print_top(stdout, &pr, PROFILE_TOP_DEFAULT);
            profile_run_release(&pr);
        }
        if (!opt_str(opts, "profile-file")) {
            unlink(p->raw);
            unlink(folded);
        } else {
            printf("\nraw profile: %s, folded stacks: %s\n", p->raw, folded);
        }
        free(folded);
    }
}

/* End the process now, stdout and stderr flushed, without the driver's teardown (workers are
 * still blocked in the client library: the kernel closes their sockets). */
static void exit_now(int code)
{
    fflush(stdout);
    fflush(stderr);
    _exit(code);
}

/* `run`: check the tables, print the header, run (with --profile's sampler), print the
 * result. The exit code: 0, 1 (nothing measured or an error), 2 (interrupted, forced). */
static int do_run(struct bench_info *bi, const struct db_driver *drv, const struct workload *wl,
                  const struct oltp_opts *o, const struct opts *opts, bool json)
{
    struct json_ctx jc = { .percentile = bi->percentile, .text = !json, .us = bi->latency_us };
    struct run_profile prof = { 0 };
    struct run_stats st;
    int threads = bi->threads;  /* this rank's; the job's in the reports */
    int rc;

    /* --thread-init-timeout bounds everything before "Threads started!": from here */
    uint64_t init_since = now_ns();
    double init_tmo = (double)opt_int(opts, "thread-init-timeout");
    rc = check_server_bounded(bi, drv, o, init_tmo);
    if (rc == -2) {
        runner_print_init_timeout(init_tmo, 0, threads, "the server does not answer the "
                                  "first connection (the table check, before any worker)");
        exit_now(2);  /* the check's thread is blocked in the client library */
    }
    if (!ranks_all_ok(rc == 0, "reach the server and its tables"))
        return 1;
    bi->threads *= ranks_size();
    if (!bi->time_s && !bi->events)
        warning("Both event and time limits are disabled, running an endless test");
    if (!json)
        bench_text_run_header(bi);

    double throttle = throttle_knob(opts);
    if (throttle < 0)
        return 1;
    jc.interval = bi->report_interval;
    jc.line_percentile = bi->percentile > 0 ? bi->percentile : 95;
    struct runner_config rc_cfg = run_config(bi, drv, wl, o, opts, threads, throttle, &jc);
    rc_cfg.init_since_ns = init_since;
    jc.vgdb_prefix = opt_str(opts, "callgrind-server");
    rc_cfg.server_identity = opt_bool(opts, "server-identity") || jc.vgdb_prefix;
    if (jc.vgdb_prefix) {
        rc_cfg.on_ready = callgrind_ready;
        rc_cfg.on_finished = callgrind_finished;
    }
    if (profile_begin(&prof, opts)) {
        free(jc.ivs);
        return 1;
    }
    rc = runner_run(&rc_cfg, &st);
    if (prof.on)
        profile_session_stop(&prof.ps);
    if (rc < 0 && !st.thread_events) {
        free(jc.ivs);
        profile_end(&prof);
        if (st.abandoned)  /* a worker is still blocked in connect */
            exit_now(rc == 2 ? 2 : 1);
        return 1; /* workers never started: nothing measured */
    }
    if (rc == 2 && !st.thread_events)  /* the start timed out */
        exit_now(2);
    /* under mpirun a rank stopped by an error stops the job (its message printed) */
    if (st.failed && ranks_active())
        ranks_abort(1, "its run failed (the error above)");
    write_latencies(&st);
    ranks_intervals_end(bi->report_interval, jc.line_percentile, keep_interval, &jc);
    ranks_reduce(&st);
    if (json)
        print_run_json(bi, &st, &jc, &prof);
    else
        print_run_text(bi, &st, &prof, opts);
    profile_end(&prof);
    if (st.abandoned)
        /* workers still blocked in the client library: end the process here, without the
         * driver's teardown under their feet (the kernel closes their sockets) */
        exit_now(2);
    run_stats_release(&st);
    free(jc.ivs);
    free(jc.cg_threads);
    return rc == 0 ? 0 : rc == 1 || rc == 2 ? 2 : 1;
}

static int do_verify(const struct db_driver *drv, const struct oltp_opts *o, struct bench_info *bi,
                     bool json)
{
    struct db_conn c = { 0 };
    uint64_t sum, rows;
    int rc;
    if (with_conn(drv, &c) < 0)
        return 1;
    rc = oltp_check_tables(&c, o);
    if (rc == 0)
        rc = oltp_verify(&c, o, &sum, &rows);
    drv->disconnect(&c);
    if (rc < 0)
        return 1;
    if (json) {
        json_t *j = json_pack("{s:s,s:I,s:o}", "checksum", "", "rows", (json_int_t)rows, "library",
                              bench_json_libinfo(&bi->lib));
        char hex[17];
        snprintf(hex, sizeof(hex), "%016llx", (unsigned long long)sum);
        json_object_set_new(j, "checksum", json_string(hex));
        bench_json_print(j);
        json_decref(j);
    } else {
        printf("verify checksum: %016llx (%llu rows)\n", (unsigned long long)sum,
               (unsigned long long)rows);
    }
    return 0;
}

/* `info`: the library's identity (and a server's version), as text or JSON. -1 when the
 * server cannot be reached (said). */
static int print_info(struct bench_info *bi, const struct db_driver *drv, bool json)
{
    if (drv->server_version) {
        struct db_conn c = { .drv = drv };
        if (with_conn(drv, &c) < 0)
            return -1;
        note_server(bi, &c);
        drv->disconnect(&c);
    }
    if (json) {
        json_t *j = json_pack("{s:o}", "library", bench_json_libinfo(&bi->lib));
        bench_json_print(j);
        json_decref(j);
    } else {
        /* what a driver does not know (a server's client library has no source id) is
         * left out */
        const char *const rows[][2] = {
            { "library", bi->lib.path }, { "version", bi->lib.version },
            { "source id", bi->lib.source_id }, { "engine source id", bi->lib.engine_source_id },
            { "loaded from", bi->lib.loaded_from }, { "isolation", bi->lib.isolation },
            { "server", bi->lib.server },
        };
        for (size_t i = 0; i < ARRAY_SIZE(rows); i++)
            if (rows[i][1])
                printf("%s:%*s %s\n", rows[i][0], 16 - (int)strlen(rows[i][0]), "", rows[i][1]);
    }
    return 0;
}

/* `prepare`, `prewarm` (`warmup`) or `cleanup`, on rank 0: the exit code. */
static int prepare_or_cleanup(const struct bench_info *bi, const struct db_driver *drv,
                              const struct oltp_opts *o, bool json)
{
    struct db_conn c = { 0 };
    const char *command = bi->command;
    int rc = 1;
    if (!json)
        bench_text_banner(bi);
    if (!strcmp(command, "prepare") || !strcmp(command, "prewarm") || !strcmp(command, "warmup")) {
        rc = do_prepare(drv, o, bi->threads, strcmp(command, "prepare") != 0);
        rc = rc < 0 ? 1 : rc;
    } else if (with_conn(drv, &c) == 0) {
        rc = oltp_cleanup(&c, o) < 0 ? 1 : 0;
        drv->disconnect(&c);
    }
    return rc;
}

int bench_command(struct bench_info *bi, const struct db_driver *drv, const struct workload *wl,
                  const struct oltp_opts *o, bool json)
{
    const char *command = bi->command;
    int rc;

    if (drv->init(bi->opts) < 0)
        return 1;
    drv->libinfo(&bi->lib);
    if (!strcmp(command, "info")) {
        if (print_info(bi, drv, json) < 0)
            return 1;  /* the driver's done() is not called then */
        rc = 0;
    } else if (!strcmp(command, "verify")) {
        rc = do_verify(drv, o, bi, json);
    } else if (!strcmp(command, "run")) {
        if (!json)
            bench_text_banner(bi);
        rc = do_run(bi, drv, wl, o, bi->opts, json);
    } else if (ranks_rank() > 0) {
        rc = ranks_bcast_int(0);  /* prepare and cleanup run once, on rank 0: wait for it */
    } else {
        rc = ranks_bcast_int(prepare_or_cleanup(bi, drv, o, json));
    }
    drv->done();
    return rc;
}
