/* cmd_compare: `pgolab compare`, is build B faster than A? Parses the variants and settings,
 * records and runs the experiment (src/experiment, src/store) and prints its report. */
#include "bench/mpi.h"
#include "cli/cli.h"
#include "cli/shared.h"
#include "cli/resume.h"
#include "experiment/profiling.h"
#include "experiment/experiment.h"
#include "experiment/callgrind.h"
#include "experiment/conduct.h"
#include "experiment/results_json.h"
#include "experiment/variant_options.h"
#include "model/profiles.h"
#include "report/tables.h"
#include "server/server.h"
#include "store/store.h"
#include "oltp/oltp.h"
#include "util/argvec.h"
#include "util/fs.h"
#include "util/opts.h"
#include "util/strbuf.h"
#include "util/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

static const struct opt_def compare_options[] = {
    { "variant", OPT_MULTI, NULL,
      "a build to measure: NAME=sqlite:/path/to/libsqlite3.so, NAME=mysql:/path/to/mariadbd, "
      "NAME=pgsql:/path/to/postgres (binary or install prefix: pgolab starts it on a private "
      "datadir on tmpfs for each run), or NAME=mysql://HOST:PORT / NAME=pgsql://HOST:PORT (a "
      "running server); two or more, the first is the baseline" },
    { "mysql-user", OPT_STRING, "sbtest",
      "running MySQL/MariaDB servers (mysql://HOST:PORT): user" },
    { "mysql-password", OPT_STRING, NULL,
      "running MySQL/MariaDB servers: password (default: $MYSQL_PWD; handed to the bench children "
      "in their environment, never on a command line)" },
    { "mysql-db", OPT_STRING, "sbtest",
      "running MySQL/MariaDB servers: database (it must exist; its sbtest tables are dropped and "
      "prepared again)" },
    { "pgsql-user", OPT_STRING, "sbtest", "running PostgreSQL servers (pgsql://HOST:PORT): user" },
    { "pgsql-password", OPT_STRING, NULL,
      "running PostgreSQL servers: password (default: $PGPASSWORD; in the children's "
      "environment)" },
    { "pgsql-db", OPT_STRING, "sbtest", "running PostgreSQL servers: database (as for mysql)" },
    { "server-option", OPT_MULTI, NULL,
      "an option for the managed servers' command line, NAME=VALUE (mysql: --NAME=VALUE; pgsql: -c "
      "NAME=VALUE), e.g. innodb_buffer_pool_size=1G" },
    CLI_VARIANT_SERVER_OPTION,
    { "bench", OPT_LIST, "oltp_read_only,oltp_read_write", "workloads to run" },
    { "threads", OPT_LIST, "1,2", "thread counts to run each workload with" },
    { "rounds", OPT_INT, "5",
      "rounds: each round runs every variant once per workload and thread count" },
    CLI_TARGET_CI_OPTIONS,
    CLI_PRECISION_OPTIONS,
    { "from-calibration", OPT_BOOL, "off",
      "--target-ci: start from the latest `pgolab calibrate` of this host in --results: its "
      "recommended run length (--time), rounds (--max-rounds) and CPU placement for the target" },
    { "time", OPT_INT, "10", "seconds per run" },
    { "reset", OPT_STRING, "run",
      "when a variant's data returns to the prepared state: run (every run starts from a fresh "
      "copy), round (at each round), variant (each variant prepares its own data with its own "
      "build, once per workload)" },
    { "warmup-runs", OPT_INT, "0",
      "runs per variant, workload and thread count made before round 1 and discarded (warms "
      "caches, the page cache and the CPU clock)" },
    { "measure", OPT_STRING, "time",
      "what to measure: time (tps and latency) or instructions (instructions, simulated cache and "
      "branch misses and estimated cycles per transaction under valgrind callgrind, of the bench "
      "child or of a managed server: deterministic, for noisy machines; 1 thread)" },
    { "metrics", OPT_BOOL, "on",
      "system metrics of every run (/proc: intr/s, ctxsw/s, us/sys/idle/iowait/steal %, CPU per "
      "transaction of client and server; the report's metrics table): on, or off (no sampling, "
      "e.g. to measure its overhead)" },
    { "trust-table", OPT_BOOL, "off",
      "also the \"Load and trust per run\" table, a row per run (run queue, other work's CPU, "
      "load, steal, iowait, why a run is distrusted); without it one line counts the distrusted "
      "runs (JSON and HTML always have every run's)" },
    CLI_EXCLUDE_DISTRUSTED_OPTION,
    { "events", OPT_INT, "2000",
      "--measure=instructions: transactions per run (each run is repeated with EVENTS/5 so the "
      "start-up cost cancels out)" },
    { "tables", OPT_INT, "1", "number of tables" },
    { "table-size", OPT_INT, "10000", "rows per table" },
    { "output", OPT_STRING, NULL,
      "also write every run, the fingerprints and the summary to this JSON file" },
    { "rand-seed", OPT_INT, NULL,
      "seed of the run-order shuffle, also passed to every bench child (default: from the clock)" },
    { "workdir", OPT_STRING, NULL,
      "directory for databases and logs (default a new private /dev/shm/pgolab.XXXXXX, else "
      "./.pgolab/run.XXXXXX; removed at the end)" },
    { "results", OPT_STRING, STORE_DEFAULT_PATH,
      "results database: the experiment and every run are recorded here as they finish" },
    { "resume", OPT_INT, NULL,
      "continue experiment ID of the results database with the settings it recorded (variants, "
      "workloads, threads, rounds, time, tables, ...): `pgolab compare --resume=ID --results=FILE` "
      "alone; an option given again must agree with the recorded one; finished runs are not "
      "redone" },
    { "fail-if-slower", OPT_DOUBLE, NULL,
      "exit 3 when a variant is significantly slower than the baseline (tps) by more than PCT "
      "percent" },
    { "profile", OPT_BOOL, "off",
      "CPU profile of every run (perf_event_open; with --measure=instructions: callgrind's "
      "instructions per function), kept in RESULTS.profiles/ID; the report adds the top-30 "
      "functions of each variant against the baseline side by side, with their spread across "
      "rounds" },
    { "profile-frequency", OPT_INT, "999", "--profile: samples per second per CPU" },
    { "clients", OPT_STRING, NULL,
      "each measured run's client side as one MPI job (Open MPI's mpirun; pgolab built with MPI): "
      "mpirun:N = N ranks of --threads workers each on this host (--oversubscribe), "
      "mpirun:N:HOSTFILE = on the hosts of an Open MPI hostfile (every host needs the same pgolab "
      "path and must reach the server); the merged run is what is recorded" },
    OPT_END,
};

/* --clients=mpirun:N[:HOSTFILE] into cfg (clients_np, clients_hostfile, clients); refused with
 * a build without MPI, without mpirun on PATH, with --measure=instructions or --profile (one
 * client process each). 0 or -1 (said). */
static int parse_clients(const char *v, enum experiment_measure measure, const struct opts *o,
                         struct experiment_config *cfg)
{
    char *end = NULL;
    long n = strncmp(v, "mpirun:", 7) ? 0 : strtol(v + 7, &end, 10);
    if (n < 1 || n > 4096 || !end || (*end && *end != ':') || (*end == ':' && !end[1]))
        return error("invalid --clients=%s (expected mpirun:N or mpirun:N:HOSTFILE, N >= 1)", v);
    if (!ranks_built())
        return error("--clients=%s needs a pgolab built with MPI: install libopenmpi-dev and "
                     "rebuild (make)", v);
    char *mpirun = find_in_path("mpirun");
    free(mpirun);
    if (!mpirun)
        return error("--clients=%s: no mpirun on PATH (Debian's openmpi-bin)", v);
    if (measure == MEASURE_INSTRUCTIONS || opt_bool(o, "profile"))
        return error("--clients=%s runs several client processes; --measure=instructions and "
                     "--profile measure one", v);
    if (*end == ':' && access(end + 1, R_OK) != 0)
        return error("--clients=%s: cannot read the hostfile %s: %s", v, end + 1, strerror(errno));
    cfg->clients_np = (int)n;
    cfg->clients_hostfile = *end == ':' ? xstrdup(end + 1) : NULL;
    cfg->clients = xstrdup(v);
    return 0;
}

static void compare_usage(void)
{
    printf("Usage: pgolab compare --variant NAME=KIND:WHAT --variant NAME=KIND:WHAT [options]\n"
           "  KIND:WHAT = sqlite:/path/to/libsqlite3.so | mysql:/path/to/mariadbd-or-prefix |\n"
           "              pgsql:/path/to/postgres-or-prefix | mysql://HOST:PORT | "
           "pgsql://HOST:PORT\n"
           "\n"
           "Is build B faster than A? Every variant runs every workload at every thread count\n"
           "once per round, in an order shuffled per round, each run a separate\n"
           "`pgolab bench` process on a fresh copy of the same prepared data. The first\n"
           "variant is the baseline. The report gives, per workload, transactions per second\n"
           "and the average and 95th percentile response times: the median over rounds with\n"
           "the min-max spread, the %% improvement over the baseline and the change with its\n"
           "95%% confidence interval (\"~\" = no significant difference).\n"
           "\n"
           "A configuration A/B is a variant like a build: --variant-server-option=B:NAME=VALUE\n"
           "gives managed variant B's server an option of its own (after the --server-option\n"
           "values, replacing one of the same name), e.g. the same binary twice:\n"
           "  --variant A=pgsql:/usr/lib/postgresql/15/bin/postgres \\\n"
           "  --variant B=pgsql:/usr/lib/postgresql/15/bin/postgres \\\n"
           "  --variant-server-option=B:shared_buffers=256MB\n"
           "\n"
           "--target-ci=PCT stops when the answer is known instead of after --rounds: rounds\n"
           "are added until every tps cell's 95%% CI half-width is at most PCT percent (or\n"
           "--max-rounds / --max-time is reached). Its CIs are confidence sequences of the\n"
           "per-round log ratios, valid however often they are looked at, so stopping early\n"
           "does not make false positives more likely; the report says per cell whether the\n"
           "target was reached. Every report also gives each cell's noise: the CV of one run\n"
           "and the change the rounds could detect, and the same for CPU time per\n"
           "transaction (client + managed server) with its own change and CI; with\n"
           "--target-metric=cpu the target applies to that steadier metric instead of tps.\n"
           "--from-calibration starts from the latest `pgolab calibrate` of this host in\n"
           "--results: its recommended run length and rounds for the target. A report says\n"
           "when the machine was busier than at that calibration (load, steal, other work,\n"
           "the client's CPU share, CV).\n"
           "\n"
           "--cpu-placement=auto runs the bench child on one CPU and a managed server's\n"
           "processes on the others (sched_setaffinity), when there are 2 or more; the\n"
           "report header says where they ran. The default is off; for a managed server\n"
           "at 1 thread, auto made the per-round ratio 1.1-3.2 times steadier on a 2-CPU\n"
           "machine (BENCHMARKS.md).\n"
           "\n"
           "On a noisy machine, --measure=instructions counts instructions per transaction\n"
           "instead of time, and simulates the caches and branch predictors: every run is\n"
           "`pgolab bench` at 1 thread with --events=N, repeated with N/5 events, and the\n"
           "value is the marginal cost (I(N) - I(N/5)) / (transactions(N) - transactions(N/5)),\n"
           "so start-up, library loading and statement preparation cancel out. SQLite: the\n"
           "bench child runs under valgrind callgrind. A managed server (mysql:, pgsql:): the\n"
           "server runs under callgrind, started for each child, the client outside it; the\n"
           "processes or threads that served the connections are counted, the server's\n"
           "background (checkpointer, InnoDB's threads) is reported beside. The report adds\n"
           "estimated cycles, Ir + 10 Bm + 10 L1m + 100 LLm. The counts are deterministic for\n"
           "identical inputs (tiny CIs), but they are a simulation, not time.\n"
           "\n"
           "The experiment is recorded in the results database (--results) as it runs: it\n"
           "prints \"experiment N recorded in FILE\" first, and each run is committed when it\n"
           "ends, so Ctrl-C, a crash or a power cut loses at most the run in progress.\n"
           "`pgolab compare --resume=N --results=FILE` continues experiment N with the\n"
           "settings it recorded and runs only what is missing (an option given again must\n"
           "agree with the recorded one; a stopped experiment prints this command).\n"
           "`pgolab report --experiment=N` prints it again (other shapes and formats),\n"
           "`pgolab history` lists the experiments.\n"
           "\n"
           "Options:\n");
    opts_print_help(compare_options);
    printf("\nExit status: 0 ok; 1 error or bad input; 2 interrupted (the finished runs are\n"
           "recorded; --resume continues); 3 --fail-if-slower: a variant is significantly\n"
           "slower than the baseline by more than PCT percent in some tps cell.\n");
    printf("\nExample (an A/A run: the same library twice measures the noise):\n"
           "  pgolab compare --variant A=sqlite:/usr/lib/x86_64-linux-gnu/libsqlite3.so.0 \\\n"
           "                 --variant B=sqlite:/usr/lib/x86_64-linux-gnu/libsqlite3.so.0 \\\n"
           "                 --time=2 --rounds=2\n");
}

#define VARIANT_FORMS                                                                           \
    "NAME=sqlite:/path/to/libsqlite3.so, NAME=mysql:/path/to/mariadbd (or an install prefix), "  \
    "NAME=pgsql:/path/to/postgres (or a prefix), or NAME=mysql://HOST:PORT / pgsql://HOST:PORT "  \
    "for a running server"

/* Parse "NAME=KIND:WHAT" into v (name, library and host point into spec, which must outlive
 * v): sqlite:LIB, mysql|pgsql:BINARY-or-PREFIX (a managed server), mysql|pgsql://HOST:PORT
 * (a running server). */
static int parse_variant(char *spec, struct variant *v)
{
    char *eq = strchr(spec, '=');
    if (!eq || eq == spec)
        return error("--variant wants " VARIANT_FORMS ", not '%s'", spec);
    *eq = '\0';
    char *kind = eq + 1, *colon = strchr(kind, ':');
    if (!colon)
        return error("variant %s: '%s' is not KIND:PATH (" VARIANT_FORMS ")", spec, kind);
    *colon = '\0';
    char *path = colon + 1;
    struct stat st;
    memset(v, 0, sizeof(*v));
    v->name = spec;
    v->library = path;
    if (!strcmp(kind, "sqlite")) {
        if (!*path || stat(path, &st) < 0)
            return error("variant %s: library %s: %s", spec, *path ? path : "(empty path)",
                         *path ? strerror(errno) : "missing");
        if (!S_ISREG(st.st_mode))
            return error("variant %s: library %s is not a regular file", spec, path);
        return 0;
    }
    if (server_kind_parse(kind, &v->server_kind) < 0)
        return error("variant %s: unknown kind '%s' (" VARIANT_FORMS ")", spec, kind);
    if (!strncmp(path, "//", 2)) {
        /* mysql://HOST:PORT: keep "KIND://HOST:PORT" as the variant's identity */
        char *host = path + 2, *pc = strrchr(host, ':'), *end = NULL;
        long port = pc ? strtol(pc + 1, &end, 10) : 0;
        if (strchr(host, '@'))
            /* not echoed: it may hold a password */
            return error("variant %s: an account in the address is not taken; use --%s-user and "
                         "--%s-password (or %s) with %s://HOST:PORT", spec, kind, kind,
                         strcmp(kind, "pgsql") ? "MYSQL_PWD" : "PGPASSWORD", kind);
        if (!pc || pc == host || !end || *end || port < 1 || port > 65535)
            return error("variant %s: '%s:%s' is not %s://HOST:PORT", spec, kind, path, kind);
        if (v->server_kind == SERVER_MYSQL && (size_t)(pc - host) == 9 && !strncmp(host,
            "localhost", 9))
            /* libmariadb takes "localhost" for its default unix socket and ignores the port */
            return error("variant %s: mysql://localhost:%ld would connect to the default unix "
                         "socket, "
                         "not port %ld; use mysql://127.0.0.1:%ld", spec, port, port, port);
        colon[0] = ':';                      /* library = "mysql://host:port" */
        v->library = kind;
        v->host = xstrndup(host, (size_t)(pc - host));
        v->port = (int)port;
        v->kind = VARIANT_EXTERNAL;
        return 0;
    }
    if (!*path || stat(path, &st) < 0)
        return error("variant %s: server %s: %s", spec, *path ? path : "(empty path)",
                     *path ? strerror(errno) : "missing");
    if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
        return error("variant %s: %s is neither a server binary nor an install prefix", spec, path);
    v->kind = VARIANT_SERVER;
    return 0;
}

/* What cmd_compare() sets up and releases: the options, the experiment, what they own. */
struct compare {
    struct opts o;
    struct experiment_config cfg;
    struct experiment_result res;
    struct cli_experiment x;
    struct cli_calibration cal;
    char **specs, **workloads;
    int nspecs;
    struct argvec external;
    int64_t resume_id;
    double fail_pct;
};

/* --variant (two or more, unique names) into cfg->variants. -1 after a message. */
static int compare_variants(struct compare *c)
{
    struct experiment_config *cfg = &c->cfg;
    const char *const *given = opt_multi(&c->o, "variant", &c->nspecs);
    if (c->nspecs < 2)
        return error("compare needs at least two --variant NAME=KIND:PATH, e.g. "
                     "NAME=sqlite:/path/to/libsqlite3.so (the first is the baseline; see `pgolab "
                     "compare help`)");
    c->specs = xcalloc((size_t)c->nspecs, sizeof(char *));
    cfg->variants = xcalloc((size_t)c->nspecs, sizeof(struct variant));
    for (int i = 0; i < c->nspecs; i++) {
        c->specs[i] = xstrdup(given[i]);
        if (parse_variant(c->specs[i], &cfg->variants[i]) < 0)
            return -1;
        cfg->nvariants++;
        for (int j = 0; j < i; j++)
            if (!strcmp(cfg->variants[j].name, cfg->variants[i].name))
                return error("variant name '%s' is given twice; names must be unique",
                             cfg->variants[i].name);
    }
    return 0;
}

/* --server-option (checked against each managed server's kind now), each variant's
 * --variant-server-option, and the account on
 * running servers: user and database on the children's command lines, the password in their
 * environment (inherited; MYSQL_PWD / PGPASSWORD as the drivers read it). -1 after a
 * message. */
static int compare_servers(struct compare *c)
{
    struct experiment_config *cfg = &c->cfg;
    int nsopt = 0;
    const char *const *sopts = opt_multi(&c->o, "server-option", &nsopt);
    bool managed = false;
    for (int v = 0; v < cfg->nvariants; v++)
        managed = managed || cfg->variants[v].kind == VARIANT_SERVER;
    if (nsopt > 0 && !managed)
        return error("--server-option=%s: no variant is a server pgolab starts (it applies to "
                     "NAME=mysql:/path/to/mariadbd and NAME=pgsql:/path/to/postgres variants)",
                     sopts[0]);
    for (int i = 0; i < nsopt; i++) {
        for (int v = 0; v < cfg->nvariants; v++) {
            struct argvec tmp = ARGVEC_INIT;
            int bad = cfg->variants[v].kind == VARIANT_SERVER &&
                      server_option_args(cfg->variants[v].server_kind, sopts[i], &tmp) < 0;
            argvec_clear(&tmp);
            if (bad)
                return -1;
        }
    }
    cfg->server_options = (char **)sopts;
    cfg->nserver_options = nsopt;
    int nvopt = 0;
    const char *const *vopts = opt_multi(&c->o, "variant-server-option", &nvopt);
    if (experiment_variant_server_options(vopts, nvopt, cfg->variants, cfg->nvariants, true) < 0)
        return -1;
    for (int k = 0; k < 2; k++) {
        const char *kind = k ? "pgsql" : "mysql";
        char name[32];
        snprintf(name, sizeof(name), "%s-user", kind);
        argvec_pushf(&c->external, "--%s=%s", name, opt_str(&c->o, name));
        snprintf(name, sizeof(name), "%s-db", kind);
        argvec_pushf(&c->external, "--%s=%s", name, opt_str(&c->o, name));
        snprintf(name, sizeof(name), "%s-password", kind);
        if (opt_is_set(&c->o, name) &&
            setenv(k ? "PGPASSWORD" : "MYSQL_PWD", opt_str(&c->o, name), 1) < 0)
            return error("--%s: cannot put it in the environment: %s", name, strerror(errno));
    }
    cfg->external_args = argvec_argv(&c->external);
    return 0;
}

/* --bench, --output, --threads, --rounds, --time, --tables, --table-size, --warmup-runs,
 * --reset (bulk_insert needs fresh tables every run), --metrics. -1 after a message. */
static int compare_runs(struct compare *c)
{
    struct experiment_config *cfg = &c->cfg;
    const struct opts *o = &c->o;
    c->workloads = opt_list(o, "bench", &cfg->nworkloads);
    if (workload_check_list("bench", c->workloads, cfg->nworkloads) < 0)
        return -1;
    if (opt_str(o, "output") && check_writable("--output", opt_str(o, "output")) < 0)
        return -1;
    cfg->workloads = c->workloads;
    if (cli_threads(o, "--threads=1,2", cfg) < 0)
        return -1;
    int64_t rounds = opt_int(o, "rounds");
    if (rounds < 1 || rounds > EXPERIMENT_ROUNDS_MAX)
        return error("invalid --rounds=%s (expected an integer >= 1)", opt_str(o, "rounds"));
    if (cli_time_tables(o, cfg) < 0)
        return -1;
    int64_t warmups = opt_int(o, "warmup-runs");
    if (warmups < 0 || warmups > 100)
        return error("invalid --warmup-runs=%s (expected 0..100)", opt_str(o, "warmup-runs"));
    if (experiment_reset_parse(opt_str(o, "reset"), &cfg->reset) < 0)
        return -1;
    for (int w = 0; w < cfg->nworkloads; w++) {
        if (strcmp(cfg->workloads[w], "bulk_insert"))
            continue;
        /* its ids start at 1 in every run: a table that already has them fails (or, on
         * PostgreSQL, retries the duplicate key until --time) */
        if (cfg->reset != RESET_RUN)
            return error("--bench=bulk_insert needs empty tables for every run: use --reset=run "
                         "(the default), "
                         "not --reset=%s", opt_str(o, "reset"));
        for (int v = 0; v < cfg->nvariants; v++)
            if (cfg->variants[v].kind == VARIANT_EXTERNAL)
                return error("--bench=bulk_insert needs empty tables for every run, and variant %s "
                             "is a running "
                             "server whose tables pgolab does not reset between runs",
                             cfg->variants[v].name);
    }
    cfg->rounds = (int)rounds;
    cfg->warmup_runs = (int)warmups;
    cfg->no_metrics = !opt_bool(o, "metrics");
    return 0;
}

/* --measure (instructions: 1 thread by default, SQLite variants only), --clients,
 * --target-ci and the precision options, --resume, --fail-if-slower, --results. -1 after a
 * message. */
static int compare_measure(struct compare *c)
{
    struct experiment_config *cfg = &c->cfg;
    const struct opts *o = &c->o;
    enum experiment_measure measure;
    if (experiment_measure_parse(opt_str(o, "measure"), &measure) < 0)
        return -1;
    if (opt_str(o, "clients") && parse_clients(opt_str(o, "clients"), measure, o, cfg) < 0)
        return -1;
    if (measure == MEASURE_INSTRUCTIONS && !opt_is_set(o, "threads"))
        cfg->nthreads = 1; /* the default 1,2: 1 without a warning */
    for (int v = 0; measure == MEASURE_INSTRUCTIONS && v < cfg->nvariants; v++)
        if (cfg->variants[v].kind == VARIANT_EXTERNAL)
            return error("--measure=instructions counts a server pgolab starts under valgrind; "
                         "variant %s is a running server at %s:%d (give its binary or prefix, "
                         "e.g. pgsql:/usr/lib/postgresql/15/bin/postgres, or use --measure=time)",
                         cfg->variants[v].name, cfg->variants[v].host, cfg->variants[v].port);
    if (measure == MEASURE_INSTRUCTIONS &&
        experiment_instructions_setup(cfg, opt_int(o, "events")) < 0)
        return -1;
    if (cli_target_ci(o, cfg) < 0 || cli_precision(o, cfg) < 0)
        return -1;
    if (opt_is_set(o, "resume")) {
        c->resume_id = opt_int(o, "resume");
        if (c->resume_id < 1)
            return error("invalid --resume=%s (expected an experiment id; see pgolab history)",
                         opt_str(o, "resume"));
    }
    if (cli_fail_if_slower(o, &c->fail_pct) < 0)
        return -1;
    if (!opt_str(o, "results") || !*opt_str(o, "results"))
        return error("--results: empty path");
    return 0;
}

/* After the experiment ran (run_rc): the report, the profiles, --output, --fail-if-slower;
 * the exit code. */
static int compare_finish(struct compare *c, int run_rc)
{
    const struct experiment_config *cfg = &c->cfg;
    const struct experiment_result *res = &c->res;
    const char *output = opt_str(&c->o, "output");
    struct report_options ro = { .trust_table = opt_bool(&c->o, "trust-table"),
                                 .no_verdict = true };
    bool report = res->nruns > 0 || run_rc == 0, profiles = cfg->profile && res->nruns > 0;
    /* --exclude-distrusted: everything below without the distrusted runs (the store has all) */
    if (opt_bool(&c->o, "exclude-distrusted"))
        experiment_result_exclude_distrusted(&c->res);
    if (report)
        experiment_report_text_opts(stdout, cfg, res, &ro);
    if (profiles)
        experiment_profile_report(stdout, cfg, res, cfg->profile_dir, PROFILE_TOP_DEFAULT);
    if (report)
        experiment_report_verdict(stdout, cfg, res);  /* last: the bottom line */
    int rc = run_rc == 0 ? 0 : res->signal ? 2 : 1;
    if (output) {
        if (experiment_write_json(output, cfg, res) < 0)
            rc = rc ? rc : 1;
        else
            fprintf(stderr, "%d runs written to %s\n", res->nruns, output);
    }
    if (rc == 0 && c->fail_pct >= 0 && report_fail_if_slower(cfg, res, c->fail_pct))
        rc = 3;
    return rc;
}

/* --profile-frequency is checked before the experiment is recorded (experiment_profile_setup
 * checks it again, later). */
static int compare_profile_option(const struct compare *c)
{
    int64_t f = opt_int(&c->o, "profile-frequency");
    if (opt_bool(&c->o, "profile") && (f < 1 || f > 100000))
        return error("--profile-frequency=%s: expected 1..100000 samples per second",
                     opt_str(&c->o, "profile-frequency"));
    return 0;
}

static void compare_release(struct compare *c, bool ran)
{
    struct experiment_config *cfg = &c->cfg;
    cli_calibration_release(&c->cal);
    experiment_profile_release(cfg);
    cli_experiment_release(&c->x, ran);
    experiment_result_release(&c->res);
    for (int i = 0; i < cfg->nvariants; i++) {
        experiment_variant_release(&cfg->variants[i]);
        free((char *)cfg->variants[i].host);
    }
    free(cfg->variants);
    free(cfg->threads);
    free(cfg->clients);
    free(cfg->clients_hostfile);
    for (int i = 0; c->specs && i < c->nspecs; i++)
        free(c->specs[i]);
    free(c->specs);
    argvec_clear(&c->external);
    opt_list_free(c->workloads);
    opts_release(&c->o);
}

int cmd_compare(int argc, char **argv)
{
    const struct opt_def *tables[] = { compare_options };
    struct compare c = { .external = ARGVEC_INIT, .fail_pct = -1 };
    bool ran = false;
    int rc = 1;

    if (cli_help(argc, argv, compare_usage))
        return 0;
    /* --resume=ID: the options it recorded, unless given (then they must agree) */
    if (cli_parse(&c.o, tables, 1, argc, argv, "compare") == 0 &&
        cli_resume_settings(&c.o, "compare") == 0 && compare_variants(&c) == 0 &&
        compare_servers(&c) == 0 && compare_runs(&c) == 0 && compare_measure(&c) == 0 &&
        compare_profile_option(&c) == 0 && cli_experiment_setup(&c.o, &c.cfg, &c.x) == 0 &&
        cli_calibration_apply(&c.o, &c.cfg, c.x.store, &c.cal) == 0) {
        c.cfg.keep_run_json = opt_str(&c.o, "output") != NULL; /* else read back from the store */
        int run_rc = experiment_conduct(&c.cfg, c.x.store, "compare", c.resume_id,
                                        opt_bool(&c.o, "profile"),
                                        opt_int(&c.o, "profile-frequency"), &c.res, &ran);
        if (ran)
            rc = compare_finish(&c, run_rc);
    }
    compare_release(&c, ran);
    return rc;
}
