/* cmd_calibrate: `pgolab calibrate`, an A/A experiment (one library run as variants A and A') that
 * measures this machine's noise floor and what a given number of rounds can detect. */
#include "cli/cli.h"
#include "cli/shared.h"
#include "experiment/experiment.h"
#include "experiment/record.h"
#include "experiment/results_json.h"
#include "experiment/run.h"
#include "experiment/variants.h"
#include "model/calibration.h"
#include "report/calibrate.h"
#include "oltp/oltp.h"
#include "stats/compare.h"
#include "store/store.h"
#include "util/fs.h"
#include "util/opts.h"
#include "util/signals.h"
#include "util/util.h"

#include <dlfcn.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SYSTEM_LIBRARY "libsqlite3.so.0"

static const struct opt_def calibrate_options[] = {
    { "variant", OPT_STRING, NULL,
      "the build to measure: sqlite:/path/to/libsqlite3.so (NAME=sqlite:PATH is accepted too)" },
    { "sqlite-library", OPT_STRING, NULL,
      "the same as a plain path (default: the system's " SYSTEM_LIBRARY
          ", as the dynamic loader finds it)" },
    { "bench", OPT_LIST, "oltp_read_only", "workloads to run" },
    { "threads", OPT_LIST, "1", "thread counts to run each workload with" },
    { "rounds", OPT_INT, "5",
      "rounds per variant (the rounds you plan to use with `pgolab compare`); at least 2" },
    CLI_TARGET_CI_OPTIONS,
    CLI_PRECISION_OPTIONS,
    { "time", OPT_INT, "10", "seconds per run" },
    { "tables", OPT_INT, "1", "number of tables" },
    { "table-size", OPT_INT, "10000", "rows per table" },
    { "rand-seed", OPT_INT, NULL,
      "seed of the run-order shuffle, also passed to every bench child (default: from the clock)" },
    { "workdir", OPT_STRING, NULL,
      "directory for databases and logs (default a new private /dev/shm/pgolab.XXXXXX, else "
      "./.pgolab/run.XXXXXX; removed at the end)" },
    { "output", OPT_STRING, NULL, "also write every run and the calibration to this JSON file" },
    { "results", OPT_STRING, STORE_DEFAULT_PATH,
      "results database: the A/A experiment and every run are recorded here as they finish (kind "
      "calibrate; `pgolab report` shows it as a comparison)" },
    OPT_END,
};

static void calibrate_usage(void)
{
    printf("Usage: pgolab calibrate [--sqlite-library=LIB] [options]\n"
           "\n"
           "How noisy is this machine? An A/A experiment: the same library runs as two variants,\n"
           "A and A', exactly like a `pgolab compare` of two builds (every run a separate\n"
           "`pgolab bench` process on a fresh copy of the same data, the order shuffled per\n"
           "round). For every workload, thread count and metric (tps, average and 95th\n"
           "percentile latency) it prints:\n"
           "  CV             the coefficient of variation of a single run (pooled within-group\n"
           "                 standard deviation over the mean): the noise floor\n"
           "  A/A            the A vs A' verdict, which should be \"~\" (no significant change)\n"
           "  detectable     the smallest change --rounds rounds per variant detect "
           "(Mann-Whitney,\n"
           "                 alpha 0.05, power 0.8):\n"
           "                   delta = (z_0.975 + z_0.8) * CV * sqrt(2/n) / sqrt(3/pi)\n"
           "  rounds for 5%% / 2%%  the rounds per variant a 5%% / 2%% change needs\n"
           "A CV from few rounds is itself rough (relative standard error about\n"
           "1/sqrt(2(N-2)) for N runs): plan with margin.\n"
           "Then the machine state (load, steal, other work, the client's CPU share: `pgolab\n"
           "compare` warns when its runs are busier) and a recommendation for --target-ci\n"
           "(its value, else 2%%): the runs cut to their first L seconds give, per run length,\n"
           "the sd of the per-round log ratio, the rounds the confidence sequence needs and\n"
           "the wall time; the cheapest is recommended, and `pgolab compare --target-ci=PCT\n"
           "--from-calibration` starts from it.\n"
           "\n"
           "Options:\n");
    opts_print_help(calibrate_options);
    printf("\nExample:\n"
           "  pgolab calibrate --bench=oltp_read_only,oltp_point_select --rounds=5 --time=10\n"
           "\nExit status: 0 done, 1 bad input or a failed run, 2 interrupted.\n");
}

/* ---------------------------------------------------------------- setup */

static volatile sig_atomic_t got_signal;

static void on_signal(int sig)
{
    got_signal = sig;
}

/* The system SQLite as a user would name it: the file the dynamic loader picks for
 * libsqlite3.so.0 (dladdr of one of its symbols). Caller frees; NULL after a message. */
static char *system_library(void)
{
    void *h = dlopen(SYSTEM_LIBRARY, RTLD_LAZY | RTLD_LOCAL);
    if (!h) {
        const char *why = dlerror();
        error("no --sqlite-library given and the system SQLite cannot be loaded (%s); install "
              "libsqlite3-0 or give --sqlite-library=PATH", why ? why : SYSTEM_LIBRARY);
        return NULL;
    }
    char *path = NULL;
    Dl_info di;
    void *sym = dlsym(h, "sqlite3_libversion");
    if (sym && dladdr(sym, &di) && di.dli_fname && di.dli_fname[0] == '/')
        path = xstrdup(di.dli_fname);
    dlclose(h);
    if (!path)
        error("no --sqlite-library given and the file behind the system's %s cannot be "
              "found; give --sqlite-library=PATH", SYSTEM_LIBRARY);
    return path;
}

/* The library to calibrate, from --variant, --sqlite-library or the system. *name gets the
 * variant name given with NAME=sqlite:PATH, else NULL. Both heap strings; -1 after a message. */
static int choose_library(const struct opts *o, char **name, char **library)
{
    const char *spec = opt_str(o, "variant"), *plain = opt_str(o, "sqlite-library");
    *name = *library = NULL;
    int nspec = opt_given(o, "variant");
    if (nspec > 1)
        return error("--variant given %d times: calibrate measures one build (pgolab compare "
                     "measures several)", nspec);
    if (spec && plain)
        return error("give either --variant or --sqlite-library, not both");
    if (spec) {
        const char *colon = strchr(spec, ':'), *eq = strchr(spec, '=');
        const char *kind = spec;
        if (eq && (!colon || eq < colon)) {
            if (eq == spec)
                return error("--variant=%s: empty name before '='", spec);
            *name = xstrndup(spec, (size_t)(eq - spec));
            kind = eq + 1;
        }
        colon = strchr(kind, ':');
        size_t klen = colon ? (size_t)(colon - kind) : 0;
        if (!colon) {
            error("--variant=%s: expected sqlite:/path/to/libsqlite3.so", spec);
        } else if (klen == 6 && !strncmp(kind, "sqlite", 6)) {
            *library = xstrdup(colon + 1);
        } else {
            char *k = xstrndup(kind, klen);
            error("--variant=%s: %s is not supported by calibrate (expected "
                  "sqlite:/path/to/libsqlite3.so)", spec, k);
            free(k);
        }
        if (!*library) {
            free(*name);
            *name = NULL;
            return -1;
        }
    } else if (plain) {
        *library = xstrdup(plain);
    } else if (!(*library = system_library())) {
        return -1;
    }
    struct stat st;
    int rc = 0;
    if (!**library)
        rc = error("the library path is empty (expected sqlite:/path/to/libsqlite3.so)");
    else if (stat(*library, &st) < 0)
        rc = error("library %s: %s", *library, strerror(errno));
    else if (!S_ISREG(st.st_mode))
        rc = error("library %s is not a regular file", *library);
    if (rc < 0) {
        free(*name);
        free(*library);
        *name = *library = NULL;
    }
    return rc;
}

/* The experiment's own JSON (every run, fingerprints, environment) plus a "calibration"
 * object, written via path.tmp + rename. -1 after a message. */
static int write_output(const char *path, const struct experiment_config *cfg,
                        const struct experiment_result *res, const struct calibrate_cell *cells,
                        int ncells)
{
    char *exp_path = xasprintf("%s.experiment", path), *tmp = xasprintf("%s.tmp", path);
    json_error_t je;
    json_t *root = NULL;
    int rc = -1;

    if (experiment_write_json(exp_path, cfg, res) < 0)
        goto out;
    root = json_load_file(exp_path, 0, &je);
    unlink(exp_path);
    if (!root) {
        error("cannot read back %s: %s", exp_path, je.text);
        goto out;
    }
    json_object_set_new(root, "calibration", report_calibrate_json(cfg, res, cells, ncells));
    if (json_dump_file(root, tmp, JSON_INDENT(2)) < 0) {
        error("cannot write %s: %s", tmp, strerror(errno));
        unlink(tmp);
    } else if (rename(tmp, path) < 0) {
        error("cannot rename %s to %s: %s", tmp, path, strerror(errno));
        unlink(tmp);
    } else {
        rc = 0;
    }
out:
    json_decref(root);
    free(exp_path);
    free(tmp);
    return rc;
}

/* ---------------------------------------------------------------- command */

/* One `pgolab calibrate`: what its steps share; calibrate_release() frees it. */
struct calibrate_cmd {
    struct opts o;
    struct experiment_config cfg;
    struct experiment_result res;
    struct variant variants[2];   /* A and A', the same library */
    struct calibrate_cell *cells;
    int ncells;
    struct cli_experiment x;
    char **workloads, *name, *library;
    int ran;                      /* the experiment row was written */
};

/* Options -> config: everything is checked before the experiment row is written (compare
 * does the same). 0, or -1 after one error line. */
static int calibrate_config(struct calibrate_cmd *c, int argc, char **argv)
{
    const struct opt_def *tables[] = { calibrate_options };
    struct experiment_config *cfg = &c->cfg;
    if (cli_parse(&c->o, tables, 1, argc, argv, "calibrate") < 0)
        return -1;
    int64_t rounds = opt_int(&c->o, "rounds");
    if (rounds < 2 || rounds > 100000)
        return error("invalid --rounds=%s (calibrate needs at least 2 rounds per variant to "
                     "measure the variation; %d or more can detect a change)",
                     opt_str(&c->o, "rounds"), stats_min_rounds(CALIBRATE_ALPHA));
    if (cli_time_tables(&c->o, cfg) < 0)
        return -1;
    c->workloads = opt_list(&c->o, "bench", &cfg->nworkloads);
    if (workload_check_list("bench", c->workloads, cfg->nworkloads) < 0)
        return -1;
    if (opt_str(&c->o, "output") && check_writable("--output", opt_str(&c->o, "output")) < 0)
        return -1;
    cfg->workloads = c->workloads;
    if (cli_threads(&c->o, "--threads=1", cfg) < 0)
        return -1;
    if (choose_library(&c->o, &c->name, &c->library) < 0)
        return -1;
    /* One library, two variants: A' is A under another name, so the order shuffle and the
     * per-run processes are exactly those of a real comparison. */
    c->variants[0].name = "A";
    c->variants[1].name = "A'";
    c->variants[0].library = c->variants[1].library = c->library;
    cfg->variants = c->variants;
    cfg->nvariants = 2;
    cfg->rounds = (int)rounds;
    if (cli_target_ci(&c->o, cfg) < 0 || cli_precision(&c->o, cfg) < 0)
        return -1;
    return cli_experiment_setup(&c->o, cfg, &c->x);
}

/* Fingerprint the library once (A' is the same file: its fingerprint is a copy) and write
 * the experiment row. 0; 1 on an error; 2 when a signal came before the first run. */
static int calibrate_begin(struct calibrate_cmd *c)
{
    struct experiment_config *cfg = &c->cfg;
    struct variant *v = c->variants;
    cfg->nvariants = 1;
    int fp = experiment_fingerprint(cfg);
    cfg->nvariants = 2;
    if (fp < 0)
        return got_signal ? 2 : 1;
    if (got_signal) {
        error("interrupted by %s before the first run", run_signal_name(got_signal));
        return 2;
    }
    v[1].sha256 = v[0].sha256 ? xstrdup(v[0].sha256) : NULL;
    v[1].version = v[0].version ? xstrdup(v[0].version) : NULL;
    v[1].source_id = v[0].source_id ? xstrdup(v[0].source_id) : NULL;
    v[1].loaded_from = v[0].loaded_from ? xstrdup(v[0].loaded_from) : NULL;
    if (experiment_record_begin(cfg, c->x.store, "calibrate", NULL) < 0)
        return 1;
    if (stderr_is_tty()) {
        int total = cfg->nworkloads * cfg->nthreads * cfg->rounds * 2;
        fprintf(stderr, "calibrate: %s%s%s, %d runs of %g s (about %.0f min); Ctrl-C stops "
                        "and reports what ran\n",
                c->name ? c->name : "", c->name ? " = " : "", c->library, total, cfg->time_s,
                ceil(total * (cfg->time_s + 1) / 60));
    }
    c->ran = 1;
    return 0;
}

/* Run the A/A experiment, record its end, print the calibration and write --output. The
 * exit code: 0, 1 (a failure), 2 (interrupted; what ran is reported). */
static int calibrate_measure(struct calibrate_cmd *c)
{
    struct experiment_config *cfg = &c->cfg;
    const char *output = opt_str(&c->o, "output");
    cfg->keep_run_json = true; /* the recommendation cuts every run's per-second series */
    int run_rc = experiment_run(cfg, c->x.store, &c->res);
    if (experiment_record_finish(cfg, c->x.store, &c->res, run_rc) < 0 && run_rc == 0)
        run_rc = -1;
    c->cells = calibration_cells(cfg, &c->res, &c->ncells);
    if (c->res.nruns > 0)
        report_calibrate_text(stdout, cfg, &c->res, c->cells, c->ncells);
    int rc = run_rc == 0 ? 0 : c->res.signal ? 2 : 1;
    if (output) {
        if (write_output(output, cfg, &c->res, c->cells, c->ncells) < 0)
            rc = rc ? rc : 1;
        else
            fprintf(stderr, "%d runs and the calibration written to %s\n", c->res.nruns, output);
    }
    return rc == 0 && got_signal ? 2 : rc;
}

static void calibrate_release(struct calibrate_cmd *c)
{
    cli_experiment_release(&c->x, c->ran);
    free(c->cells);
    experiment_result_release(&c->res);
    experiment_variant_release(&c->variants[0]);
    experiment_variant_release(&c->variants[1]);
    free(c->cfg.threads);
    opt_list_free(c->workloads);
    free(c->name);
    free(c->library);
    opts_release(&c->o);
}

int cmd_calibrate(int argc, char **argv)
{
    struct calibrate_cmd c;
    struct sig_saved saved;
    int rc = 1;

    memset(&c, 0, sizeof(c));
    if (cli_help(argc, argv, calibrate_usage))
        return 0;
    /* Ctrl-C before or after the experiment (which catches it itself while it runs) also
     * ends with exit 2 and whatever was measured. */
    got_signal = 0;
    sig_catch(on_signal, &saved);
    if (calibrate_config(&c, argc, argv) == 0 && (rc = calibrate_begin(&c)) == 0)
        rc = calibrate_measure(&c);
    calibrate_release(&c);
    sig_restore(&saved);
    return rc;
}
