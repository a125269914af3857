/* cmd_bench: `pgolab bench [options] TESTNAME prepare|run|cleanup|help|verify|info`, the
 * sysbench-compatible front end: its options, help and checks; bench/commands.c does the
 * command. */
#include "cli/cli.h"
#include "bench/commands.h"
#include "bench/mpi.h"
#include "db/driver.h"
#include "oltp/oltp.h"
#include "util/opts.h"
#include "util/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct opt_def general_options[] = {
    { "threads", OPT_INT, "1", "number of threads to use" },
    { "events", OPT_INT, "0", "limit for total number of events" },
    { "time", OPT_INT, "10", "limit for total execution time in seconds" },
    { "warmup-time", OPT_INT, "0",
      "execute events for this many seconds with statistics disabled before the actual benchmark "
      "run with statistics enabled (then --time more)" },
    { "forced-shutdown", OPT_STRING, "off",
      "number of seconds to wait after the --time limit before forcing shutdown, N% of --time, on "
      "(5%), or 'off' to disable" },
    { "thread-init-timeout", OPT_INT, "30",
      "wait time in seconds for worker threads to connect and prepare" },
    { "rate", OPT_INT, "0", "average transactions rate. 0 for unlimited rate" },
    { "report-interval", OPT_INT, "0",
      "periodically report intermediate statistics with a specified interval in seconds. 0 "
      "disables intermediate reports" },
    { "percentile", OPT_INT, "95",
      "percentile to calculate in latency statistics (1-100). Use the special value of 0 to "
      "disable percentile calculations" },
    { "histogram", OPT_BOOL, "off", "print latency histogram in report" },
    { "verbosity", OPT_INT, "3", "verbosity level {5 - debug, 0 - only critical messages}" },
    { "format", OPT_STRING, "text", "output format: text (sysbench 1.0.20 layout) or json" },
    { "latency-unit", OPT_STRING, "ms",
      "unit of the text output's latencies: ms (sysbench's two decimals) or us (for "
      "sub-millisecond latencies that print as 0.00 ms)" },
    { "db-driver", OPT_STRING, "sqlite",
      "specifies database driver to use (sqlite, mysql, pgsql)" },
    { "profile", OPT_BOOL, "off",
      "pgolab: sample this process's CPU (perf_event_open) during run and print the top functions "
      "(JSON: a \"profile\" object)" },
    { "profile-file", OPT_STRING, NULL,
      "pgolab: keep the raw profile of --profile in this file (default: a temporary file, "
      "removed)" },
    { "profile-frequency", OPT_INT, "999", "pgolab: --profile samples per second per CPU" },
    { "server-identity", OPT_BOOL, "off",
      "pgolab: each connection reports who serves it on the server (PostgreSQL: the backend's "
      "PID; MariaDB/MySQL: the connection id and the server thread's OS id), in the JSON's "
      "\"server_connections\"" },
    { "callgrind-server", OPT_STRING, NULL,
      "pgolab: the server runs under valgrind callgrind with this --vgdb-prefix (set by "
      "--measure=instructions): with --server-identity each connection's callgrind thread is "
      "reported too, the counts are zeroed before the first event and dumped after the last" },
    OPT_END
};

static const struct opt_def rand_options[] = {
    { "rand-type", OPT_STRING, "uniform",
      "random numbers distribution {uniform, gaussian, special, pareto, zipfian} to use by "
      "default. "
      "Note: sysbench 1.0's default is special (a hot spot); pgolab defaults to uniform" },
    { "rand-seed", OPT_INT, "0",
      "seed for random number generator. When 0, the current time is used as an RNG seed." },
    { "rand-spec-iter", OPT_INT, "12", "number of iterations for the special distribution" },
    { "rand-spec-pct", OPT_DOUBLE, "1",
      "percentage of the entire range where 'special' values will fall in the special "
      "distribution" },
    { "rand-spec-res", OPT_DOUBLE, "75",
      "percentage of 'special' values to use for the special distribution" },
    { "rand-pareto-h", OPT_DOUBLE, "0.2", "shape parameter for the Pareto distribution" },
    { "rand-zipfian-exp", OPT_DOUBLE, "0.8",
      "shape parameter (exponent, theta) for the Zipfian distribution" },
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

/* The option tables of bench into tables (general, random numbers, OLTP, the databases' and
 * every driver's); how many. */
static int option_tables(const struct opt_def **tables)
{
    int nt = 0, ndt;
    const struct opt_def *const *dt = db_driver_option_tables(&ndt);
    tables[nt++] = general_options;
    tables[nt++] = rand_options;
    tables[nt++] = oltp_options;
    tables[nt++] = db_common_options;
    for (int i = 0; i < ndt && nt < OPTS_MAX_TABLES; i++)
        tables[nt++] = dt[i];
    return nt;
}

/* argv into opts (initialized here either way), the test *wl (NULL for a bare `info`) and
 * *command. --help / -h as sysbench takes it: the general usage, or with a test name that
 * test's options (as the command "help"). 0 to go on, 1 when the help was printed (exit 0),
 * -1 after a message. */
static int parse_command(int argc, char **argv, struct opts *opts, const struct workload **wl,
                         const char **command)
{
    const struct opt_def *tables[OPTS_MAX_TABLES];
    int nt = option_tables(tables);
    bool want_help = false;
    char **av = xcalloc((size_t)argc + 1, sizeof(char *));
    int ac = 0;
    for (int i = 0; i < argc; i++) {
        if (i > 0 && (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")))
            want_help = true;
        else
            av[ac++] = argv[i];
    }
    opts_init(opts, tables, nt);
    opts->cmd = "bench";
    int rc = opts_parse(opts, ac - 1, av + 1);
    free(av);  /* opts copied what it keeps */
    if (rc < 0)
        return -1;
    if (opts->nargs == 0 && !want_help)
        return error("a test name and a command are required (see `pgolab bench help`)");
    if (opts->nargs == 0 || (opts->nargs == 1 && !strcmp(opts->args[0], "help"))) {
        usage();
        return 1;
    }
    if (opts->nargs > 2)
        return error("too many arguments: '%s' (expected: pgolab bench [options] TESTNAME COMMAND)",
                     opts->args[2]);
    const char *test = opts->args[0];
    *command = opts->nargs > 1 ? opts->args[1] : NULL;
    if (want_help)
        *command = "help";
    if (!strcmp(test, "info") && !*command) {
        *command = "info";
        test = NULL;
    } else if (!(*wl = workload_find(test))) {
        return error("unknown test '%s' (known tests: %s)", test, workload_names());
    }
    if (!*command)
        return error("Command is required. Supported commands: prepare, prewarm, run, cleanup, "
                     "help, verify, info");
    if (!strcmp(*command, "help")) {
        printf("%s options:\n", (*wl)->name);
        opts_print_help(oltp_options);
        return 1;
    }
    static const char *const commands[] = { "prepare", "prewarm", "warmup", "run", "cleanup",
                                            "verify", "info" };
    bool known = false;
    for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
        known |= !strcmp(*command, commands[i]);
    if (!known)
        return error("unknown command '%s' for test %s (expected prepare, prewarm, run, cleanup, "
                     "help, verify or info)",
                     *command, test);
    return 0;
}

/* --format and --latency-unit: *json, and bi's settings of the run from the general options
 * (threads, limits, interval, percentile, rate, warm-up, forced shutdown). -1 after a
 * message. */
static int run_settings(const struct opts *opts, const struct workload *wl, const char *command,
                        struct bench_info *bi, bool *json)
{
    const char *fmt = opt_str(opts, "format");
    if (strcmp(fmt, "text") && strcmp(fmt, "json"))
        return error("--format=%s: expected text or json", fmt);
    *json = !strcmp(fmt, "json");
    const char *unit = opt_str(opts, "latency-unit");
    if (strcmp(unit, "ms") && strcmp(unit, "us"))
        return error("--latency-unit=%s: expected ms (sysbench's, the default) or us", unit);
    *bi = (struct bench_info){
        .test = wl ? wl->name : "", .command = command, .driver = opt_str(opts, "db-driver"),
        .threads = (int)opt_int(opts, "threads"), .time_s = (double)opt_int(opts, "time"),
        .events = (uint64_t)opt_int(opts, "events"),
        .report_interval = (double)opt_int(opts, "report-interval"),
        .percentile = (int)opt_int(opts, "percentile"), .opts = opts,
        .latency_us = !strcmp(unit, "us"),
    };
    if (opt_int(opts, "threads") < 1 || opt_int(opts, "threads") > 100000)
        return error("--threads=%s: expected a number of threads from 1 to 100000",
                     opt_str(opts, "threads"));
    if (opt_int(opts, "verbosity") < 0 || opt_int(opts, "verbosity") > 5)
        return error("--verbosity=%s: expected a level from 0 (only critical messages) to 5 "
                     "(debug)", opt_str(opts, "verbosity"));
    static const char *const nonneg[] = { "time", "events", "report-interval", "rate",
                                          "warmup-time" };
    for (size_t i = 0; i < ARRAY_SIZE(nonneg); i++)
        if (opt_int(opts, nonneg[i]) < 0)
            return error("--%s=%s: expected a number >= 0", nonneg[i], opt_str(opts, nonneg[i]));
    bi->rate = (double)opt_int(opts, "rate");
    bi->warmup_s = (double)opt_int(opts, "warmup-time");
    if (opt_int(opts, "thread-init-timeout") < 1)
        return error("--thread-init-timeout=%s: expected a number of seconds >= 1",
                     opt_str(opts, "thread-init-timeout"));
    bi->forced_shutdown_s = forced_shutdown_grace(opt_str(opts, "forced-shutdown"), bi->time_s);
    if (bi->forced_shutdown_s < -1.5)
        return -1;
    if (bi->forced_shutdown_s >= 0 && bi->time_s <= 0)
        return error("--forced-shutdown=%s needs a --time limit to count from",
                     opt_str(opts, "forced-shutdown"));
    if (bi->percentile < 0 || bi->percentile > 100)
        return error("--percentile=%d: expected 0..100", bi->percentile);
    if (bi->percentile == 0 && opt_bool(opts, "histogram"))
        return error("--histogram cannot be used with --percentile=0");
    return 0;
}

/* The driver (--db-driver) into *drv and the OLTP settings into o (bi->seed from them), once
 * the run's settings are in bi. -1 after a message. */
static int db_settings(const struct opts *opts, const struct workload *wl, struct bench_info *bi,
                       const struct db_driver **drv, struct oltp_opts *o)
{
    if (!(*drv = db_driver_find(bi->driver)))
        return error("Unsupported database driver: %s (known: %s)", bi->driver, db_driver_names());
    if (bi->events && bi->events < (uint64_t)ranks_size())
        return error("--events=%llu is fewer than the %d ranks (each runs its share of the events)",
                     (unsigned long long)bi->events, ranks_size());
    if (oltp_opts_load(o, opts, wl) < 0)
        return -1;
    bi->seed = o->seed;
    if ((opt_bool(opts, "server-identity") || opt_str(opts, "callgrind-server")) &&
        !(*drv)->server_identity)
        return error("--server-identity: the %s driver has no server connection to identify "
                     "(an embedded engine)", bi->driver);
    return 0;
}

int cmd_bench(int argc, char **argv)
{
    struct opts opts;
    struct oltp_opts o;
    struct bench_info bi;
    const struct workload *wl = NULL;
    const struct db_driver *drv = NULL;
    const char *command = NULL;
    bool json = false;

    if (ranks_start(argc, argv) < 0) {  /* under mpirun: the ranks' options agree */
        ranks_finish();
        return 1;
    }
    int st = parse_command(argc, argv, &opts, &wl, &command);  /* 1: help printed */
    if (st == 0 && (run_settings(&opts, wl, command, &bi, &json) < 0 ||
                    db_settings(&opts, wl, &bi, &drv, &o) < 0))
        st = -1;
    int rc = st < 0 ? 1 : st > 0 ? 0 : bench_command(&bi, drv, wl, &o, json);
    opts_release(&opts);
    ranks_finish();
    return rc;
}
