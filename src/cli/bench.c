/* bench: `pgolab bench [options] TESTNAME prepare|run|cleanup|help|verify|info`, the
 * sysbench-compatible front end: option parsing, prepare/cleanup, and run via the runner. */
#include "cli/cli.h"
#include "bench/mpi.h"
#include "bench/runner.h"
#include "db/driver.h"
#include "oltp/oltp.h"
#include "profile/profile.h"
#include "profile/session.h"
#include "bench/output.h"
#include "util/fs.h"
#include "util/knobs.h"
#include "util/options.h"
#include "util/util.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const struct opt_def general_options[] = {
    { "threads", OPT_INT, "1", "number of threads to use" },
    { "events", OPT_INT, "0", "limit for total number of events" },
    { "time", OPT_INT, "10", "limit for total execution time in seconds" },
    { "warmup-time", OPT_INT, "0",
      "execute events for this many seconds with statistics disabled before the actual benchmark run with statistics enabled (then --time more)" },
    { "forced-shutdown", OPT_STRING, "off",
      "number of seconds to wait after the --time limit before forcing shutdown, N% of --time, on (5%), or 'off' to disable" },
    { "thread-init-timeout", OPT_INT, "30",
      "wait time in seconds for worker threads to connect and prepare" },
    { "rate", OPT_INT, "0", "average transactions rate. 0 for unlimited rate" },
    { "report-interval", OPT_INT, "0",
      "periodically report intermediate statistics with a specified interval in seconds. 0 disables intermediate reports" },
    { "percentile", OPT_INT, "95",
      "percentile to calculate in latency statistics (1-100). Use the special value of 0 to disable percentile calculations" },
    { "histogram", OPT_BOOL, "off", "print latency histogram in report" },
    { "verbosity", OPT_INT, "3", "verbosity level {5 - debug, 0 - only critical messages}" },
    { "format", OPT_STRING, "text", "output format: text (sysbench 1.0.20 layout) or json" },
    { "latency-unit", OPT_STRING, "ms",
      "unit of the text output's latencies: ms (sysbench's two decimals) or us (for sub-millisecond latencies that print as 0.00 ms)" },
    { "db-driver", OPT_STRING, "sqlite", "specifies database driver to use (sqlite, mysql, pgsql)" },
    { "profile", OPT_BOOL, "off",
      "pgolab: sample this process's CPU (perf_event_open) during run and print the top functions (JSON: a \"profile\" object)" },
    { "profile-file", OPT_STRING, NULL, "pgolab: keep the raw profile of --profile in this file (default: a temporary file, removed)" },
    { "profile-frequency", OPT_INT, "999", "pgolab: --profile samples per second per CPU" },
    OPT_END
};

static const struct opt_def rand_options[] = {
    { "rand-type", OPT_STRING, "uniform",
      "random numbers distribution {uniform, gaussian, special, pareto, zipfian} to use by default. "
      "Note: sysbench 1.0's default is special (a hot spot); pgolab defaults to uniform" },
    { "rand-seed", OPT_INT, "0",
      "seed for random number generator. When 0, the current time is used as an RNG seed." },
    { "rand-spec-iter", OPT_INT, "12", "number of iterations for the special distribution" },
    { "rand-spec-pct", OPT_DOUBLE, "1", "percentage of the entire range where 'special' values will fall in the special distribution" },
    { "rand-spec-res", OPT_DOUBLE, "75", "percentage of 'special' values to use for the special distribution" },
    { "rand-pareto-h", OPT_DOUBLE, "0.2", "shape parameter for the Pareto distribution" },
    { "rand-zipfian-exp", OPT_DOUBLE, "0.8", "shape parameter (exponent, theta) for the Zipfian distribution" },
    OPT_END
};

static void usage(void)
{
    printf("Usage:\n  pgolab bench [options]... testname [command]\n\n");
    printf("Commands implemented by most tests: prepare run cleanup help\n"
           "prewarm (alias warmup): load the tables into the buffer pool (MySQL only)\n"
           "pgolab additions: verify (correctness-gate checksum), info (library identity)\n\n");
    printf("General options:\n");
    opts_print_help(general_options);
    printf("\nPseudo-Random Numbers Generator options:\n");
    opts_print_help(rand_options);
    int n;
    const struct opt_def *const *dt = db_driver_option_tables(&n);
    printf("\nGeneral database options:\n");
    opts_print_help(db_common_options);
    for (int i = 0; i < n; i++)
        opts_print_help(dt[i]);
    printf("\nCompiled-in tests:\n");
    const struct workload *w;
    for (int i = 0; (w = workload_at(i, &n)); i++)
        printf("  %-22s %s\n", w->name, w->descr);
    printf("\nSee 'pgolab bench <testname> help' for a list of test-specific options.\n");
}

struct json_ctx {
    struct interval_stats *ivs;
    int n, cap;
    int percentile;
    double interval, line_percentile;  /* --report-interval, and the lines' percentile */
    bool text;
    bool us;  /* --latency-unit=us */
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

/* --forced-shutdown=N|N%|on|off: the grace after --time in seconds (on = 5% of --time, as
 * the bare flag in sysbench), -1 for off; -2 (message printed) when malformed. */
static double forced_shutdown_grace(const char *v, double time_s)
{
    char *end;
    if (!strcmp(v, "off") || !strcmp(v, "0%"))
        return -1;
    if (!strcmp(v, "on"))
        return time_s * 0.05;
    double x = strtod(v, &end);
    if (end == v || x < 0 || (*end && strcmp(end, "%")))
        return error("--forced-shutdown=%s: expected seconds after --time (N), a percentage of "
                     "--time (N%%), on (5%%) or off", v), -2;
    return *end ? time_s * x / 100 : x;
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
 * known factor: 1/F times the work per transaction, see runner.h). 0 when unset or for another library, -1 (message printed) when malformed. */
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

static int do_run(struct bench_info *bi, const struct db_driver *drv, const struct workload *wl,
                  const struct oltp_opts *o, const struct opts *opts, bool json)
{
    struct db_conn c = { .drv = drv };
    struct json_ctx jc = { .percentile = bi->percentile, .text = !json, .us = bi->latency_us };
    struct run_stats st;
    int rc;

    rc = with_conn(drv, &c);
    if (rc == 0) {
        rc = oltp_check_tables(&c, o);
        note_server(bi, &c);
        drv->disconnect(&c);
    }
    if (!ranks_all_ok(rc == 0, "reach the server and its tables"))
        return 1;
    int threads = bi->threads;  /* this rank's; the job's in the reports */
    bi->threads *= ranks_size();
    if (!bi->time_s && !bi->events)
        warning("Both event and time limits are disabled, running an endless test");
    if (!json)
        bench_text_run_header(bi);

    double throttle = throttle_knob(opts);
    if (throttle < 0)
        return 1;
    uint64_t seed = o->seed;
    if (!seed) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        seed = (uint64_t)ts.tv_sec * 1000000007ull ^ (uint64_t)ts.tv_nsec;
    }
    seed += 0xD1B54A32D192ED03ull * (uint64_t)ranks_rank();  /* each rank its own streams */
    /* under mpirun --rate and --events are the job's: each rank runs its share (independent
     * Poisson arrivals at rate/N add up to a Poisson process at the rate) */
    jc.interval = bi->report_interval;
    jc.line_percentile = bi->percentile > 0 ? bi->percentile : 95;
    struct runner_config rc_cfg = {
        .drv = drv, .wl = wl, .o = o, .threads = threads, .time_s = bi->time_s,
        .events = ranks_share(bi->events), .report_interval = bi->report_interval,
        .percentile = bi->percentile > 0 ? bi->percentile : 95, .seed = seed, .throttle = throttle,
        .rate = bi->rate / ranks_size(), .warmup_s = bi->warmup_s, .forced_shutdown_s = bi->forced_shutdown_s,
        .init_timeout_s = (double)opt_int(opts, "thread-init-timeout"),
        .conn_limit = conn_limit,
        .on_interval = on_interval, .on_start = on_start, .ud = &jc,
        .keep_latencies = getenv("PGOLAB_LATENCY_FILE") && *getenv("PGOLAB_LATENCY_FILE"),
        .agree_start = ranks_active() ? agree_start : NULL,
    };
    /* --profile: the sampler (a child process) follows this process and the worker threads
     * it creates from here on */
    struct profile_session ps;
    bool profiling = opt_bool(opts, "profile");
    char *raw = NULL, *raw_dir = NULL; /* raw_dir: the private directory of a temporary raw */
    if (profiling) {
        int64_t freq = opt_int(opts, "profile-frequency");
        if (freq < 1 || freq > 100000) {
            free(jc.ivs);
            return error("--profile-frequency=%s: expected 1..100000 samples per second",
                         opt_str(opts, "profile-frequency")), 1;
        }
        const char *tmp = getenv("TMPDIR");
        if (opt_str(opts, "profile-file")) {
            raw = xstrdup(opt_str(opts, "profile-file"));
        } else if ((raw_dir = private_tmpdir(tmp && *tmp ? tmp : "/tmp", "pgolab-profile"))) {
            raw = path_join(raw_dir, "profile.raw"); /* and profile.raw.folded beside it */
        } else {
            free(jc.ivs);
            return 1;
        }
        profile_session_start(&ps, getpid(), raw, (int)freq, false);
    }
    rc = runner_run(&rc_cfg, &st);
    if (profiling)
        profile_session_stop(&ps);
    if (rc < 0 && !st.thread_events) {
        free(jc.ivs);
        if (profiling)
            profile_session_release(&ps);
        if (raw_dir)
            remove_tree(raw_dir);
        free(raw_dir);
        free(raw);
        if (st.abandoned) {  /* a worker is still blocked in connect */
            fflush(stdout);
            fflush(stderr);
            _exit(rc == 2 ? 2 : 1);
        }
        return 1; /* workers never started: nothing measured */
    }
    if (rc == 2 && !st.thread_events) {  /* the start timed out */
        fflush(stdout);
        fflush(stderr);
        _exit(2);
    }
    /* under mpirun a rank stopped by an error stops the job (its message printed) */
    if (st.failed && ranks_active())
        ranks_abort(1, "its run failed (the error above)");
    write_latencies(&st);
    ranks_intervals_end(bi->report_interval, jc.line_percentile, keep_interval, &jc);
    ranks_reduce(&st);
    if (json) {
        json_t *j = bench_json(bi, &st, jc.ivs, jc.n);
        json_object_set_new(j, "forced_shutdown", json_boolean(st.forced));
        if (st.forced)
            json_object_set_new(j, "unfinished_events", json_integer((json_int_t)st.unfinished));
        if (st.queue_full)
            json_object_set_new(j, "queue_full", json_true());
        if (profiling) {
            json_t *pj = profile_session_json(&ps);
            if (raw_dir) /* a temporary raw file, removed below: keep it with --profile-file */
                json_object_set_new(pj, "raw", json_null());
            json_object_set_new(j, "profile", pj);
        }
        json_t *ranks = ranks_json();
        if (ranks)
            json_object_set_new(j, "ranks", ranks);
        bench_json_print(j);
        json_decref(j);
    } else {
        if (st.failed)
            printf("\nFAILED: the run was stopped by the error above; partial summary of what "
                   "ran before it.\n\n");
        else if (st.forced)
            printf("\nFORCED SHUTDOWN: --time and the --forced-shutdown grace passed with "
                   "events still running; summary of what ran.\n\n");
        else if (st.interrupted && ranks_active())
            printf("\nInterrupted (mpirun's SIGTERM, e.g. after Ctrl-C): summary of what "
                   "ran.\n\n");
        else if (st.interrupted)
            printf("\nInterrupted (SIGINT): summary of what ran.\n\n");
        bench_text_final(bi, &st, opt_bool(opts, "histogram"));
        if (profiling && ps.written) {
            char *folded = xasprintf("%s.folded", raw);
            struct profile_run pr;
            if (profile_symbolize(raw, folded) == 0 && profile_read(folded, &pr) == 0) {
                profile_print_top(stdout, &pr, PROFILE_TOP_DEFAULT);
                profile_run_release(&pr);
            }
            if (!opt_str(opts, "profile-file")) {
                unlink(raw);
                unlink(folded);
            } else {
                printf("\nraw profile: %s, folded stacks: %s\n", raw, folded);
            }
            free(folded);
        }
    }
    if (profiling)
        profile_session_release(&ps);
    if (raw_dir)
        remove_tree(raw_dir);
    free(raw_dir);
    free(raw);
    if (st.abandoned) {
        /* workers still blocked in the client library: end the process here, without the
         * driver's teardown under their feet (the kernel closes their sockets) */
        fflush(stdout);
        fflush(stderr);
        _exit(2);
    }
    run_stats_release(&st);
    free(jc.ivs);
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
        printf("verify checksum: %016llx (%llu rows)\n", (unsigned long long)sum, (unsigned long long)rows);
    }
    return 0;
}

int cmd_bench(int argc, char **argv)
{
    const struct opt_def *tables[OPTS_MAX_TABLES];
    int nt = 0, ndt, rc = 1;
    const struct opt_def *const *dt = db_driver_option_tables(&ndt);
    struct opts opts;
    struct oltp_opts o;
    const struct workload *wl = NULL;
    const struct db_driver *drv;
    const char *test = NULL, *command = NULL;

    if (ranks_start(argc, argv) < 0) {  /* under mpirun: the ranks' options agree */
        ranks_finish();
        return 1;
    }
    tables[nt++] = general_options;
    tables[nt++] = rand_options;
    tables[nt++] = oltp_options;
    tables[nt++] = db_common_options;
    for (int i = 0; i < ndt && nt < OPTS_MAX_TABLES; i++)
        tables[nt++] = dt[i];
    /* --help / -h as sysbench takes it: the general usage, or with a test name that test's
     * options (as the command "help") */
    bool want_help = false;
    char **av = xcalloc((size_t)argc + 1, sizeof(char *));
    int ac = 0;
    for (int i = 0; i < argc; i++) {
        if (i > 0 && (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")))
            want_help = true;
        else
            av[ac++] = argv[i];
    }
    opts_init(&opts, tables, nt);
    opts.cmd = "bench";
    rc = opts_parse(&opts, ac - 1, av + 1) < 0 ? 1 : 0;
    free(av);  /* opts copied what it keeps */
    if (rc)
        goto out;
    rc = 1;
    if (opts.nargs == 0 && !want_help) {
        error("a test name and a command are required (see `pgolab bench help`)");
        goto out;
    }
    if (opts.nargs == 0 || (opts.nargs == 1 && !strcmp(opts.args[0], "help"))) {
        usage();
        rc = 0;
        goto out;
    }
    if (opts.nargs > 2) {
        error("too many arguments: '%s' (expected: pgolab bench [options] TESTNAME COMMAND)", opts.args[2]);
        goto out;
    }
    test = opts.args[0];
    command = opts.nargs > 1 ? opts.args[1] : NULL;
    if (want_help)
        command = "help";
    if (!strcmp(test, "info") && !command) {
        command = "info";
        test = NULL;
    } else if (!(wl = workload_find(test))) {
        error("unknown test '%s' (known tests: %s)", test, workload_names());
        goto out;
    }
    if (!command) {
        error("Command is required. Supported commands: prepare, prewarm, run, cleanup, help, verify, info");
        goto out;
    }
    if (!strcmp(command, "help")) {
        printf("%s options:\n", wl->name);
        opts_print_help(oltp_options);
        rc = 0;
        goto out;
    }
    static const char *const commands[] = { "prepare", "prewarm", "warmup", "run", "cleanup",
                                            "verify", "info" };
    bool known = false;
    for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
        known |= !strcmp(command, commands[i]);
    if (!known) {
        error("unknown command '%s' for test %s (expected prepare, prewarm, run, cleanup, help, "
              "verify or info)",
              command, test);
        goto out;
    }

    const char *fmt = opt_str(&opts, "format");
    if (strcmp(fmt, "text") && strcmp(fmt, "json")) {
        error("--format=%s: expected text or json", fmt);
        goto out;
    }
    bool json = !strcmp(fmt, "json");
    const char *unit = opt_str(&opts, "latency-unit");
    if (strcmp(unit, "ms") && strcmp(unit, "us")) {
        error("--latency-unit=%s: expected ms (sysbench's, the default) or us", unit);
        goto out;
    }
    struct bench_info bi = {
        .test = wl ? wl->name : "", .command = command, .driver = opt_str(&opts, "db-driver"),
        .threads = (int)opt_int(&opts, "threads"), .time_s = (double)opt_int(&opts, "time"),
        .events = (uint64_t)opt_int(&opts, "events"),
        .report_interval = (double)opt_int(&opts, "report-interval"),
        .percentile = (int)opt_int(&opts, "percentile"), .opts = &opts,
        .latency_us = !strcmp(unit, "us"),
    };
    if (opt_int(&opts, "threads") < 1 || opt_int(&opts, "threads") > 100000) {
        error("--threads=%s: expected a number of threads from 1 to 100000", opt_str(&opts, "threads"));
        goto out;
    }
    static const char *const nonneg[] = { "time", "events", "report-interval", "rate",
                                          "warmup-time" };
    for (size_t i = 0; i < ARRAY_SIZE(nonneg); i++)
        if (opt_int(&opts, nonneg[i]) < 0) {
            error("--%s=%s: expected a number >= 0", nonneg[i], opt_str(&opts, nonneg[i]));
            goto out;
        }
    bi.rate = (double)opt_int(&opts, "rate");
    bi.warmup_s = (double)opt_int(&opts, "warmup-time");
    if (opt_int(&opts, "thread-init-timeout") < 1) {
        error("--thread-init-timeout=%s: expected a number of seconds >= 1",
              opt_str(&opts, "thread-init-timeout"));
        goto out;
    }
    bi.forced_shutdown_s = forced_shutdown_grace(opt_str(&opts, "forced-shutdown"), bi.time_s);
    if (bi.forced_shutdown_s < -1.5)
        goto out;
    if (bi.forced_shutdown_s >= 0 && bi.time_s <= 0) {
        error("--forced-shutdown=%s needs a --time limit to count from",
              opt_str(&opts, "forced-shutdown"));
        goto out;
    }
    if (bi.percentile < 0 || bi.percentile > 100) {
        error("--percentile=%d: expected 0..100", bi.percentile);
        goto out;
    }
    if (bi.percentile == 0 && opt_bool(&opts, "histogram")) {
        error("--histogram cannot be used with --percentile=0");
        goto out;
    }
    if (!(drv = db_driver_find(bi.driver))) {
        error("Unsupported database driver: %s (known: %s)", bi.driver, db_driver_names());
        goto out;
    }
    if (bi.events && bi.events < (uint64_t)ranks_size()) {
        error("--events=%llu is fewer than the %d ranks (each runs its share of the events)",
              (unsigned long long)bi.events, ranks_size());
        goto out;
    }
    if (oltp_opts_load(&o, &opts, wl) < 0)
        goto out;
    bi.seed = o.seed;
    if (drv->init(&opts) < 0)
        goto out;
    drv->libinfo(&bi.lib);

    if (!strcmp(command, "info")) {
        if (drv->server_version) {
            struct db_conn c = { .drv = drv };
            if (with_conn(drv, &c) < 0)
                goto out;
            note_server(&bi, &c);
            drv->disconnect(&c);
        }
        if (json) {
            json_t *j = json_pack("{s:o}", "library", bench_json_libinfo(&bi.lib));
            bench_json_print(j);
            json_decref(j);
        } else {
            /* what a driver does not know (a server's client library has no source id) is
             * left out */
            const char *const rows[][2] = {
                { "library", bi.lib.path }, { "version", bi.lib.version },
                { "source id", bi.lib.source_id }, { "engine source id", bi.lib.engine_source_id },
                { "loaded from", bi.lib.loaded_from }, { "isolation", bi.lib.isolation },
                { "server", bi.lib.server },
            };
            for (size_t i = 0; i < ARRAY_SIZE(rows); i++)
                if (rows[i][1])
                    printf("%s:%*s %s\n", rows[i][0], 16 - (int)strlen(rows[i][0]), "", rows[i][1]);
        }
        rc = 0;
    } else if (!strcmp(command, "verify")) {
        rc = do_verify(drv, &o, &bi, json);
    } else if (!strcmp(command, "run")) {
        if (!json)
            bench_text_banner(&bi);
        rc = do_run(&bi, drv, wl, &o, &opts, json);
    } else if (ranks_rank() > 0) {
        rc = ranks_bcast_int(0);  /* prepare and cleanup run once, on rank 0: wait for it */
    } else {
        struct db_conn c = { 0 };
        if (!json)
            bench_text_banner(&bi);
        if (!strcmp(command, "prepare") || !strcmp(command, "prewarm") || !strcmp(command, "warmup")) {
            rc = do_prepare(drv, &o, bi.threads, strcmp(command, "prepare") != 0);
            rc = rc < 0 ? 1 : rc;
        } else if (with_conn(drv, &c) == 0) {
            rc = oltp_cleanup(&c, &o) < 0 ? 1 : 0;
            drv->disconnect(&c);
        }
        rc = ranks_bcast_int(rc);
    }
    drv->done();
out:
    opts_release(&opts);
    ranks_finish();
    return rc;
}
