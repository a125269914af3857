/* cmd_pgo: `pgolab pgo TARGET [options]`: build baseline, instrumented and PGO variants from one
 * source with one compiler, train, gate on equal results, measure with the experiment engine.
 * Every target is a recipe file (recipes/NAME.json, or a file given as TARGET), a library
 * (sqlite) or a server; both take one path here (pgo_run: a library takes fewer options and
 * other variant kinds) into the one pipeline (pgo/pipeline.h), which gets the options
 * validated. */
#include "toolchain/bolt.h"
#include "toolchain/toolchain.h"
#include "cli/cli.h"
#include "cli/shared.h"
#include "cli/resume.h"
#include "experiment/experiment.h"
#include "experiment/variant_options.h"
#include "oltp/oltp.h"
#include "pgo/major.h"
#include "pgo/pipeline.h"
#include "pgo/recipe.h"
#include "pgo/source.h"
#include "pgo/variant_spec.h"
#include "report/tables.h"
#include "store/store.h"
#include "util/argvec.h"
#include "util/fs.h"
#include "util/opts.h"
#include "util/progress.h"
#include "util/signals.h"
#include "util/strbuf.h"
#include "util/subprocess.h"
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

static const struct opt_def pgo_options[] = {
    { "source", OPT_STRING, NULL,
      "source: a source tree (SQLite: or an amalgamation directory) or a tarball "
      "(default: the recipe's Debian source package, `apt-get source` into WORKDIR/src; "
      "SQLite: sqlite3)" },
    { "workdir", OPT_STRING, ".pgolab", "cache directory for sources, builds and profile data" },
    { "cc", OPT_STRING, "gcc",
      "compiler of the builds: gcc or clang (or a versioned name); a variant may name its own "
      "(--variants=clang:pgo)" },
    { "cxx", OPT_STRING, NULL,
      "server targets: the C++ compiler (default: the one matching --cc, e.g. g++ for gcc)" },
    { "jobs", OPT_INT, "0",
      "server targets: parallel build jobs ({jobs} in the recipe; 0: one per CPU)" },
    { "variants", OPT_LIST, "baseline,pgo",
      "what to build and measure: baseline (always), pgo, bolt (baseline + BOLT) and pgo+bolt (the "
      "pgo build + BOLT), which need the recipe's \"bolt\" key (docs/recipes.md), and for server "
      "targets lto, pgo+lto, pgo+lto+bolt (the pgo+lto build + BOLT) and official (the "
      "distribution's own server binary of the same major version, the recipe's server.official or "
      "--official: measured and gated like the builds, never built) and distro (built the way the "
      "Debian source package builds it: the options of its debian/rules, the flags of "
      "dpkg-buildflags; not the distribution's binary; the recipe's \"distro\" key). "
      "[DIMENSION:]...KIND builds "
      "baseline, pgo (server targets: every kind but official and distro) with other settings "
      "than --cc and "
      "--cflags: a compiler (gcc, clang, gcc-12, clang-14; cc=PATH) and compiler flags replacing "
      "--cflags (-O3, '-O3 -march=native'; cflags=...), e.g. "
      "--variants=baseline,pgo,clang:pgo+lto,-O3:pgo; each set of settings is built in its own "
      "work directory, all measured together" },
    CLI_VARIANT_SERVER_OPTION,
    { "db-version", OPT_STRING, NULL,
      "server targets: the major version to build (postgresql: 15, 16, 17, 18; mariadb: 10.11, "
      "11.8: the recipe's \"versions\"), fetched from the Debian suite that carries it; default: "
      "the installed official binary's, else Debian 12's" },
    { "official", OPT_STRING, NULL,
      "server targets: the official variant's server binary instead of the recipe's "
      "server.official (e.g. /usr/sbin/mariadbd); it must be of the source's major version" },
    { "bolt-profile", OPT_STRING, "instrument",
      "BOLT's profile: instrument (llvm-bolt -instrument, trained with --train like pgo) or perf "
      "(perf record -j any,u + perf2bolt; needs LBR branch sampling, refused with the reason when "
      "missing)" },
    { "gate", OPT_STRING, "checksum",
      "server targets: correctness gate: checksum (bench verify on the same data), or suite (also "
      "the database's own regression tests on every pgo build)" },
    { "cflags", OPT_STRING, "-O2", "compiler flags shared by the three builds" },
    { "train", OPT_LIST, "oltp_read_write",
      "training workloads, run on the instrumented build (SQLite: all of them train one profile; "
      "server targets: each is a trainer with its own pgo build: a workload, a mix such as "
      "oltp_read_only+oltp_write_only, or suite, the database's regression tests)" },
    { "train-time", OPT_INT, "20", "seconds of training per training workload" },
    { "train-threads", OPT_INT, "2", "threads during training" },
    { "bench", OPT_LIST, "oltp_read_only,oltp_read_write", "measured workloads" },
    { "threads", OPT_LIST, "1,2", "measured thread counts" },
    { "rounds", OPT_INT, "5", "rounds (each runs every variant once, in shuffled order)" },
    CLI_TARGET_CI_OPTIONS,
    { "time", OPT_INT, "10", "seconds per measured run" },
    { "tables", OPT_INT, "1", "number of tables (training, gate and measurement)" },
    { "table-size", OPT_INT, "10000", "rows per table" },
    { "rand-seed", OPT_INT, "0", "seed of the run-order shuffle (0: from the clock)" },
    { "output", OPT_STRING, NULL,
      "also write every run and the fingerprints as JSON to this file" },
    { "measure", OPT_STRING, "time",
      "measure baseline against pgo by time (tps and latency; also 'on'), by instructions "
      "(instructions, simulated cache and branch misses and estimated cycles per transaction under "
      "valgrind callgrind; a server target's server runs under it: deterministic, for noisy "
      "machines; 1 thread), or off (stop after the gate)" },
    { "events", OPT_INT, "2000",
      "--measure=instructions: transactions per run (each run is repeated with EVENTS/5 so the "
      "start-up cost cancels out)" },
    { "metrics", OPT_BOOL, "on",
      "system metrics of every run (/proc: intr/s, ctxsw/s, us/sys/idle/iowait/steal %, CPU per "
      "transaction of client and server; the report's metrics table): on, or off (no sampling, "
      "e.g. to measure its overhead)" },
    { "trust-table", OPT_BOOL, "off",
      "also the \"Load and trust per run\" table, a row per run (run queue, other work's CPU, "
      "load, steal, iowait, why a run is distrusted); without it one line counts the distrusted "
      "runs (JSON and HTML always have every run's)" },
    CLI_EXCLUDE_DISTRUSTED_OPTION,
    { "fetch", OPT_BOOL, "off",
      "find or fetch the source and stop: prints the tree, and for a Debian source package its "
      "exact version and the suite it came from (pgolab's own apt configuration: the system's "
      "release first, then trixie and sid; docs/recipes.md)" },
    { "rebuild", OPT_BOOL, "off", "ignore cached amalgamation, builds and profile data" },
    { "results", OPT_STRING, STORE_DEFAULT_PATH,
      "results database: the measurement and every run are recorded here as they finish" },
    { "resume", OPT_STRING, NULL,
      "continue the measurement of experiment ID with the measurement and training settings it "
      "recorded (--bench, --threads, --rounds or --target-ci, --time, --tables, --table-size, "
      "--measure, --train, --train-time, --train-threads, --gate; one given again must agree): "
      "`pgolab pgo TARGET --resume=ID --results=FILE` plus the build options it had (--cc, "
      "--cflags, --source, --variants, --workdir: builds are reused from the cache); finished runs "
      "are not redone (the command an interrupted measurement prints has them all); --resume "
      "alone: the newest unfinished pgo experiment of --results, as if its ID were given" },
    { "search", OPT_BOOL, "off",
      "find the fastest of --variants (default with --search: baseline,pgo,lto,pgo+lto; SQLite: "
      "baseline,pgo,-O3:baseline,-O3:pgo): after the builds and the gate, screen every candidate "
      "(each variant but baseline and official) by estimated cycles per transaction (the server, "
      "or SQLite's benchmark process, under callgrind, --bench, 1 thread, --events (default here "
      "300), 1 round: a pgo experiment of its own), confirm the best --search-keep against "
      "baseline and official by time with --time, --rounds or --target-ci and --threads (a second "
      "one), and end with the winner: its variant spec, compiler, flags, the tps gain over "
      "baseline and official with 95% CIs and the install prefix (also as \"search\" in --output). "
      "When no kept variant is significantly faster by time it names the best by the simulation "
      "and what would resolve it. An interrupted search keeps every finished run; the same command "
      "again continues it: the builds are cached, a finished screen of the same builds and "
      "settings is reused, an unfinished screen or confirmation continues without redoing its "
      "finished runs" },
    { "search-keep", OPT_INT, "2",
      "--search: how many of the screen's best candidates the confirmation by time measures" },
    { "fail-if-slower", OPT_DOUBLE, NULL,
      "exit 3 when pgo is significantly slower than baseline (tps) by more than PCT percent" },
    { "profile", OPT_BOOL, "off",
      "CPU profile of every run (perf_event_open; with --measure=instructions: callgrind's "
      "instructions per function), kept in RESULTS.profiles/ID; the report adds the top-30 "
      "functions of each variant against the baseline side by side, with their spread across "
      "rounds" },
    { "profile-frequency", OPT_INT, "999", "--profile: samples per second per CPU" },
    OPT_END
};

static void usage(void)
{
    printf("Usage:\n  pgolab pgo TARGET [options]\n\n"
           "Builds TARGET three ways from one source with one compiler and the same flags\n"
           "(baseline, instrumented, pgo), trains the instrumented build with pgolab bench,\n"
           "checks that baseline and pgo return identical results, then measures baseline\n"
           "against pgo in interleaved rounds and prints the tables on stdout.\n"
           "The measurement is recorded in the results database (--results) run by run;\n"
           "`pgolab pgo TARGET --resume=ID --results=FILE` (with the build options it had)\n"
           "continues an interrupted one with the settings it recorded; `pgolab report`\n"
           "prints it again. Server targets: --variants=baseline,pgo,official also measures\n"
           "the distribution's own server binary (the recipe's server.official, or --official;\n"
           "never built, refused when of another major version than the source);\n"
           "--variants=distro,official adds a build made the way the Debian package builds\n"
           "it (debian/rules' options, dpkg-buildflags' flags), where no official binary\n"
           "installs too (MySQL on Debian 12).\n\n"
           "Targets (recipes/NAME.json, $PGOLAB_RECIPES; or a recipe file):\n");
    char *names = recipe_names();
    printf("  %s\n  (sqlite is the SQLite library, the embedded default; the others are "
           "servers)\n\nOptions:\n", *names ? names : "(none found)");
    free(names);
    opts_print_help(pgo_options);
    printf("\nExit status: 0 ok; 1 error or bad input; 2 interrupted; 3 --fail-if-slower: pgo\n"
           "is significantly slower than baseline by more than PCT percent in some tps cell.\n");
}

/* The options both kinds of target share, validated by settings_load(); strings point into
 * the opts or are its lists. */
struct pgo_settings {
    const char *source, *workdir_opt, *cc, *cflags, *output, *results;
    int64_t resume_id;         /* 0 = a new experiment */
    double fail_pct;           /* < 0 = no --fail-if-slower */
    bool trust_table;          /* --trust-table */
    bool exclude_distrusted;   /* --exclude-distrusted */
    char **train, **bench, **threads_list;
    int ntrain, nbench, nthreads;
    int *threads;
    int train_time, train_threads, rounds, time_s, tables, table_size;
    uint64_t seed;
    bool measure, rebuild;
    bool no_metrics;                      /* --metrics=off */
    enum experiment_measure measure_kind; /* --measure=time|instructions */
    int64_t events;                       /* --events (instructions) */
    bool threads_set;                     /* --threads given (not the default) */
    bool profile;                         /* --profile (src/experiment/profiling.h) */
    int64_t profile_freq;                 /* --profile-frequency, Hz */
    double target_ci, max_time_s;         /* --target-ci, --max-time (cli_target_ci; rounds
                                           * is then --max-rounds) */
    int cs_rounds;
    char **variants;                      /* a library's --variants: baseline first, then
                                           * pgo, bolt, pgo+bolt in the order given */
    int nvariants;
};

static void settings_release(struct pgo_settings *s)
{
    opt_list_free(s->train);
    opt_list_free(s->bench);
    opt_list_free(s->threads_list);
    free(s->threads);
    opt_list_free(s->variants);
}

static int check_min(const struct opts *o, const char *name, int64_t min, int *out)
{
    int64_t v = opt_int(o, name);
    if (v < min || v > 1000000000)
        return error("--%s=%s: must be an integer %s %lld", name, opt_str(o, name),
                     min == 1 ? ">" : ">=", (long long)(min == 1 ? 0 : min));
    *out = (int)v;
    return 0;
}

/* server: trainers may be mixes or suite (checked by check_trainers) and --resume may come
 * without an id. */
static int settings_load(const struct opts *o, struct pgo_settings *s, bool server)
{
    memset(s, 0, sizeof(*s));
    s->source = opt_str(o, "source");
    s->workdir_opt = opt_str(o, "workdir");
    s->cc = opt_str(o, "cc");
    s->cflags = opt_str(o, "cflags");
    s->output = opt_str(o, "output");
    if (s->output && check_writable("--output", s->output) < 0)
        return -1;
    s->results = opt_str(o, "results");
    s->fail_pct = -1;
    const char *ms = opt_str(o, "measure");
    s->measure = !(ms && (!strcmp(ms, "off") || !strcmp(ms, "no") || !strcmp(ms, "false")));
    s->measure_kind = MEASURE_TIME;
    if (ms && !strcmp(ms, "instructions"))
        s->measure_kind = MEASURE_INSTRUCTIONS;
    else if (s->measure && !(ms && (!strcmp(ms, "time") || !strcmp(ms, "on") ||
                                    !strcmp(ms, "yes") || !strcmp(ms, "true"))))
        return error("invalid --measure=%s (expected time, instructions, off, or on = time)",
                     ms ? ms : "");
    s->events = opt_int(o, "events");
    s->profile = opt_bool(o, "profile");
    s->profile_freq = opt_int(o, "profile-frequency");
    if (s->profile_freq < 1 || s->profile_freq > 100000)
        return error("--profile-frequency=%s: expected 1..100000 samples per second",
                     opt_str(o, "profile-frequency"));
    s->threads_set = opt_is_set(o, "threads");
    s->rebuild = opt_bool(o, "rebuild");
    s->no_metrics = !opt_bool(o, "metrics");
    s->trust_table = opt_bool(o, "trust-table");
    s->exclude_distrusted = opt_bool(o, "exclude-distrusted");
    s->train = opt_list(o, "train", &s->ntrain);
    s->bench = opt_list(o, "bench", &s->nbench);
    s->threads_list = opt_list(o, "threads", &s->nthreads);

    if (s->source && !*s->source)
        return error("--source: empty path");
    if (!s->workdir_opt || !*s->workdir_opt)
        return error("--workdir: empty path");
    if (!s->cc || !*s->cc)
        return error("--cc: empty compiler name");
    if (!s->cflags)
        s->cflags = "";
    if (strstr(s->cflags, "-fprofile") || strstr(s->cflags, "-fauto-profile"))
        return error("--cflags=%s: must not contain profile flags (pgolab adds them per build)",
                     s->cflags);
    if (s->output && !*s->output)
        return error("--output: empty path");
    if (!s->results || !*s->results)
        return error("--results: empty path");
    if (opt_is_set(o, "resume") && !(server && !strcmp(opt_str(o, "resume"), "on")) &&
        (parse_int64(opt_str(o, "resume"), &s->resume_id) < 0 ||
                                     s->resume_id < 1))
        return error("--resume=%s: expected an experiment id (see pgolab history)",
                     opt_str(o, "resume"));
    if (opt_is_set(o, "fail-if-slower")) {
        s->fail_pct = opt_double(o, "fail-if-slower");
        if (!(s->fail_pct >= 0) || s->fail_pct >= 100)
            return error("--fail-if-slower=%s: expected a percentage, 0 <= PCT < 100",
                         opt_str(o, "fail-if-slower"));
    }
    if ((!server && workload_check_list("train", s->train, s->ntrain) < 0) ||
        workload_check_list("bench", s->bench, s->nbench) < 0)
        return -1;
    if (s->nthreads == 0)
        return error("--threads: needs at least one thread count");
    s->threads = xcalloc((size_t)s->nthreads, sizeof(int));
    if (parse_thread_list(s->threads_list, s->nthreads, s->threads) < 0)
        return -1;
    /* before any build: instruction mode counts one client thread (experiment/callgrind.h) */
    if (s->measure_kind == MEASURE_INSTRUCTIONS && s->threads_set &&
        (s->nthreads != 1 || s->threads[0] != 1))
        return error("--measure=instructions runs 1 client thread (with more, instruction "
                     "counts include lock spinning and scheduling): drop --threads or give "
                     "--threads=1");
    if (check_min(o, "rounds", 1, &s->rounds) < 0 || check_min(o, "time", 1, &s->time_s) < 0 ||
        check_min(o, "train-time", 1, &s->train_time) < 0 ||
        check_min(o, "train-threads", 1, &s->train_threads) < 0 ||
        check_min(o, "tables", 1, &s->tables) < 0 ||
        check_min(o, "table-size", 1, &s->table_size) < 0)
        return -1;
    struct experiment_config tc = { .rounds = s->rounds, .measure = s->measure_kind };
    if (cli_target_ci(o, &tc) < 0)
        return -1;
    s->rounds = tc.rounds;
    s->target_ci = tc.target_ci;
    s->max_time_s = tc.max_time_s;
    s->cs_rounds = tc.cs_rounds;
    int64_t seed = opt_int(o, "rand-seed");
    if (seed < 0)
        return error("--rand-seed=%s: must be >= 0", opt_str(o, "rand-seed"));
    s->seed = seed ? (uint64_t)seed : (now_ns() ^ ((uint64_t)getpid() << 32));
    return 0;
}

/* ---- every target (recipes): options in, src/pgo/pipeline.c does the rest ----------- */

/* The server-only options a library (SQLite) run must not get. */
static int sqlite_refuses(const struct opts *o)
{
    static const char *const server_only[] = { "cxx", "jobs", "gate", "official",
                                               "variant-server-option", "db-version" };
    for (size_t i = 0; i < ARRAY_SIZE(server_only); i++)
        if (opt_is_set(o, server_only[i]))
            return error("--%s is for server targets (recipes); pgolab pgo sqlite (a library "
                         "recipe) builds baseline and pgo", server_only[i]);
    return 0;
}

/* --bolt-profile: instrument, or perf where LBR exists (refused with the reason). */
static int check_bolt_profile(const struct opts *o, bool bolt)
{
    const char *bp = opt_str(o, "bolt-profile");
    if (strcmp(bp, "instrument") && strcmp(bp, "perf"))
        return error("--bolt-profile=%s: expected instrument or perf", bp);
    if (bolt && !strcmp(bp, "perf"))
        return bolt_perf_check() < 0 ? -1 : error("--bolt-profile=perf: LBR sampling works "
                                                  "here, but pgolab trains BOLT only by "
                                                  "instrumentation yet; use "
                                                  "--bolt-profile=instrument");
    return 0;
}

/* --variants of a server target, parsed (check_variants). */
struct pgo_variants {
    char **names;                 /* canonical names, as given (NULL-terminated) */
    int nnames;
    struct variant_group *groups; /* [0]: --cc and --cflags' kinds */
    int ngroups;
};

/* Each trainer: suite, or workloads joined by '+'. */
static int check_trainers(char **train, int n)
{
    if (n == 0)
        return error("--train: needs at least one trainer");
    for (int i = 0; i < n; i++) {
        if (!strcmp(train[i], "suite"))
            continue;
        char *copy = xstrdup(train[i]);
        int rc = 0, parts = 0;
        for (char *save = NULL, *w = strtok_r(copy, "+", &save); w && rc == 0;
             w = strtok_r(NULL, "+", &save), parts++)
            if (!workload_find(w))
                rc = error("--train: unknown workload '%s' in trainer '%s' (known: %s; mix them "
                           "with '+', or use suite)", w, train[i], workload_names());
        free(copy);
        if (rc == 0 && (parts == 0 || train[i][0] == '+' || train[i][strlen(train[i]) - 1] == '+' ||
                        strstr(train[i], "++")))
            rc = error("--train: '%s' is not a workload, a mix a+b, or suite", train[i]);
        for (int j = 0; j < i && rc == 0; j++)
            if (!strcmp(train[j], train[i]))
                rc = error("--train: trainer '%s' is given twice", train[i]);
        if (rc < 0)
            return -1;
    }
    return 0;
}

/* The variant kinds of a server target and which take build settings (variant_spec.h). */
static const struct variant_spec_kind server_kinds[] = {
    { "baseline", NULL }, { "pgo", NULL }, { "lto", NULL }, { "pgo+lto", NULL },
    { "bolt", NULL }, { "pgo+bolt", NULL }, { "pgo+lto+bolt", NULL },
    { "distro", "it is built with Debian's own options and flags (debian/rules, dpkg-buildflags)" },
    { "official", "it is the distribution's binary, never built" },
};

void cli_pgo_variant_kinds(void (*fn)(const char *kind))
{
    for (size_t i = 0; i < sizeof(server_kinds) / sizeof(server_kinds[0]); i++)
        fn(server_kinds[i].name);
}

/* --variants as [DIMENSION:]...KIND specs (variant_spec.h) of kinds[0..nkinds) into *names
 * (their canonical names, the measured variants' names) and groups by build settings; --cc and
 * --cflags are the defaults. need_pgo: refused without pgo, pgo+lto or distro (a build of
 * its own to set beside the baseline). 0 or -1 (one line). */
static int check_variants(char **v, int n, const struct variant_spec_kind *kinds, int nkinds,
                          bool need_pgo, const char *cc, const char *cflags,
                          struct pgo_variants *out)
{
    const struct variant_spec defaults = { .cc = (char *)cc, .cflags = (char *)cflags };
    struct variant_spec *specs = xcalloc((size_t)n + 1, sizeof(*specs));
    int rc = 0, parsed = 0;
    for (; parsed < n && rc == 0; parsed++)
        rc = variant_spec_parse(v[parsed], kinds, nkinds, &defaults, &specs[parsed]);
    if (rc == 0)
        parsed = n;
    else
        parsed--;
    bool pgo = false;
    for (int i = 0; i < parsed; i++)
        pgo = pgo || !strcmp(specs[i].kind, "pgo") || !strcmp(specs[i].kind, "pgo+lto") ||
              !strcmp(specs[i].kind, "distro");
    if (rc == 0)
        rc = variant_specs_group(specs, n, &defaults, &out->groups, &out->ngroups);
    if (rc == 0 && need_pgo && !pgo)
        rc = error("--variants: needs pgo, pgo+lto or distro (baseline is always built and "
                   "measured)");
    if (rc == 0) {
        out->names = xcalloc((size_t)n + 1, sizeof(char *));
        for (int i = 0; i < n; i++)
            out->names[i] = xstrdup(specs[i].name);
        out->nnames = n;
    }
    for (int i = 0; i < parsed; i++)
        variant_spec_release(&specs[i]);
    free(specs);
    return rc;
}

/* The variant kinds of a library recipe: baseline and pgo take build settings. */
static const struct variant_spec_kind library_kinds[] = {
    { "baseline", NULL }, { "pgo", NULL },
    { "bolt", "a BOLT variant is built with --cc and --cflags (its input is their build)" },
    { "pgo+bolt", "a BOLT variant is built with --cc and --cflags (its input is their build)" },
};

/* --variants of a library recipe: [DIMENSION:]...KIND of baseline and pgo (--cc and --cflags'
 * baseline and pgo are always built and measured: the pipeline's own pair, and pgo+bolt's
 * input), bolt, pgo+bolt; lto and pgo+lto are refused (one translation unit). s->variants gets
 * --cc and --cflags' kinds, baseline first, pgo second, the BOLT variants after in the order
 * given (caller frees with opt_list_free), *pv the groups of build settings. */
static int library_variants(const struct opts *o, const struct recipe *r, struct pgo_settings *s,
                            char **v, int n, struct pgo_variants *pv)
{
    bool bolt = false;
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        const char *kind = strrchr(v[i], ':') ? strrchr(v[i], ':') + 1 : v[i];
        bool known = false;
        for (size_t k = 0; k < ARRAY_SIZE(library_kinds) && !known; k++)
            known = !strcmp(kind, library_kinds[k].name);
        if (!strcmp(kind, "lto") || !strcmp(kind, "pgo+lto"))
            rc = error("--variants: '%s': %s is a library recipe compiled from one translation "
                       "unit (the amalgamation), where link-time optimization has nothing to "
                       "add; accepted: baseline, pgo, bolt, pgo+bolt, with a compiler or flags "
                       "before baseline or pgo (clang:pgo, -O3:pgo)", v[i], r->name);
        else if (!known && !strchr(v[i], ':') && !strchr(v[i], '='))
            rc = error("--variants: unknown variant '%s' for %s (known: baseline, pgo, bolt, "
                       "pgo+bolt; baseline and pgo may have a compiler or flags before them, "
                       "e.g. clang:pgo)", v[i], r->name);
        bolt = bolt || strstr(kind, "bolt");
    }
    if (rc == 0)
        rc = check_variants(v, n, library_kinds, (int)ARRAY_SIZE(library_kinds), false, s->cc,
                            s->cflags, pv);
    if (rc == 0 && bolt && !r->has_bolt)
        rc = error("--variants: %s has no \"bolt\" key (how to link for BOLT, e.g. "
                   "\"bolt\": {\"link_flags\": [\"-Wl,--emit-relocs\"]}; docs/recipes.md)",
                   r->path);
    if (rc == 0)
        rc = check_bolt_profile(o, bolt);
    if (rc < 0)
        return -1;
    /* baseline first, pgo second, the BOLT variants after in the order given */
    const struct variant_group *def = &pv->groups[0];
    char **out = xcalloc((size_t)def->nkinds + 3, sizeof(char *));
    int k = 0;
    out[k++] = xstrdup("baseline");
    out[k++] = xstrdup("pgo");
    for (int i = 0; i < def->nkinds; i++)
        if (strstr(def->kinds[i], "bolt"))
            out[k++] = xstrdup(def->kinds[i]);
    s->variants = out;
    s->nvariants = k;
    return 0;
}

/* --variant-server-option against the variants' names before anything runs, where they are
 * known here: with one trainer they are --variants' own (baseline always; canonical, as
 * "clang:pgo"); with several the pgo builds are named per trainer, and the pipeline checks
 * them once it has named them. */
static int early_variant_options(const struct pgo_request *rq, const struct recipe *r,
                                 char **variants, int nvariants)
{
    if (rq->nvariant_options == 0 || rq->ntrain != 1)
        return 0;
    struct variant *v = xcalloc((size_t)nvariants + 1, sizeof(*v));
    int nv = 0;
    v[nv++].name = "baseline";
    for (int i = 0; i < nvariants; i++)
        if (strcmp(variants[i], "baseline"))
            v[nv++].name = variants[i];
    for (int i = 0; i < nv; i++) {
        v[i].kind = VARIANT_SERVER;
        v[i].server_kind = r->server_kind;
    }
    int rc = experiment_variant_server_options(rq->variant_options, rq->nvariant_options, v, nv,
                                               false);
    free(v);
    return rc;
}

/* The request of the options both kinds of target share (cli/cmd_pgo.c keeps the strings). */
static void request_fill(struct pgo_request *rq, const struct pgo_settings *s, const char *target,
                         const char *recipe, const char *workdir)
{
    rq->target = target;
    rq->recipe_path = recipe;
    rq->source = s->source;
    rq->workdir = workdir;
    rq->workdir_opt = s->workdir_opt;
    rq->cc = s->cc;
    rq->cflags = s->cflags;
    rq->train = s->train;
    rq->ntrain = s->ntrain;
    rq->train_time = s->train_time;
    rq->train_threads = s->train_threads;
    rq->bench = s->bench;
    rq->nbench = s->nbench;
    rq->threads = s->threads;
    rq->nthreads = s->nthreads;
    rq->rounds = s->rounds;
    rq->target_ci = s->target_ci;
    rq->max_time_s = s->max_time_s;
    rq->cs_rounds = s->cs_rounds;
    rq->time_s = s->time_s;
    rq->tables = s->tables;
    rq->table_size = s->table_size;
    rq->measure = s->measure;
    rq->measure_kind = s->measure_kind;
    rq->events = s->events;
    rq->threads_set = s->threads_set;
    rq->rebuild = s->rebuild;
    rq->no_metrics = s->no_metrics;
    rq->trust_table = s->trust_table;
    rq->exclude_distrusted = s->exclude_distrusted;
    rq->seed = s->seed;
    rq->results = s->results;
    rq->output = s->output;
    rq->resume_id = s->resume_id;
    rq->fail_pct = s->fail_pct;
    rq->profile = s->profile;
    rq->profile_freq = s->profile_freq;
}

/* The screen's transactions per run without --events. */
#define SEARCH_EVENTS 300

/* --search and --search-keep against the other options: --search measures by itself (by
 * instructions, then by time) and continues by itself (no --resume). 0 or -1 (one line). */
static int check_search(const struct opts *o, const struct pgo_settings *s, bool search)
{
    if (!search)
        return opt_is_set(o, "search-keep")
                   ? error("--search-keep=%s: the number of candidates --search confirms; add "
                           "--search", opt_str(o, "search-keep")) : 0;
    int64_t keep = opt_int(o, "search-keep");
    if (keep < 1 || keep > 100)
        return error("--search-keep=%s: expected 1 to 100 candidates", opt_str(o, "search-keep"));
    if (!s->measure || s->measure_kind != MEASURE_TIME)
        return error("--search with --measure=%s: a search measures by itself (a screen by "
                     "instructions, then a confirmation by time); leave --measure out",
                     opt_str(o, "measure"));
    if (opt_is_set(o, "resume"))
        return error("--search with --resume: a search continues by itself; run the same "
                     "command again without --resume (a finished screen is reused, an unfinished "
                     "experiment continued)");
    if (opt_is_set(o, "events") && (s->events < 5 || s->events > 1000000000))
        return error("--events=%s: the screen's transactions per run, expected 5 or more",
                     opt_str(o, "events"));
    return 0;
}

/* --search's candidates in --variants' canonical names (each but baseline and official; a pgo
 * kind once per trainer) plus extra ones built without being named (a library's pgo): at least
 * 2. 0 or -1 (one line). */
static int check_candidates(char **names, int n, int ntrain, int extra, const char *example)
{
    int cand = extra;
    for (int i = 0; i < n; i++) {
        const char *colon = strrchr(names[i], ':');
        const char *kind = colon ? colon + 1 : names[i];
        if (strcmp(kind, "baseline") || colon)
            cand += !strcmp(kind, "official") ? 0 : strstr(kind, "pgo") ? ntrain : 1;
    }
    if (cand < 2)
        return error("--search: --variants has %d candidate%s besides baseline and official; a "
                     "search needs at least 2 (e.g. --variants=%s)", cand, cand == 1 ? "" : "s",
                     example);
    return 0;
}

/* What both kinds of target add to a filled request (the groups of build settings, --search's
 * settings), then the pipeline: its exit code. */
static int run_request(struct pgo_request *rq, const struct opts *o, const struct pgo_settings *s,
                       const struct pgo_variants *pv, bool search)
{
    rq->groups = pv->groups;
    rq->ngroups = pv->ngroups;
    rq->search = search;
    rq->search_keep = (int)opt_int(o, "search-keep");
    rq->search_events = opt_is_set(o, "events") ? s->events : SEARCH_EVENTS;
    return pgo_pipeline_run(rq);
}

/* --variants as given, or --search's default set without it: a server's --cc builds; a
 * library's --cc pgo, and baseline and pgo with other flags. Caller frees (opt_list_free). */
static char **variants_or_default(const struct opts *o, const struct pgo_settings *s,
                                  bool server, bool search, int *n)
{
    if (!search || opt_is_set(o, "variants"))
        return opt_list(o, "variants", n);
    if (server)
        return split_list("baseline,pgo,lto,pgo+lto", n);
    const char *alt = strcmp(s->cflags, "-O3") ? "-O3" : "-O2";
    char *list = xasprintf("baseline,pgo,%s:baseline,%s:pgo", alt, alt);
    char **v = split_list(list, n);
    free(list);
    return v;
}

/* A server target's --variants into *pv, and the options only a server takes (--official,
 * --bolt-profile, --gate, --jobs), checked; with --search, its candidates. 0 or -1. */
static int server_variants(const struct opts *o, const struct pgo_settings *s, char **variants,
                           int nvariants, bool search, struct pgo_variants *pv)
{
    if (check_variants(variants, nvariants, server_kinds, (int)ARRAY_SIZE(server_kinds), true,
                       s->cc, s->cflags, pv) < 0)
        return -1;
    /* official takes no build settings: it is --cc's group's kind; BOLT variants may be in
     * any group (clang:pgo+lto+bolt) */
    const struct variant_group *def = &pv->groups[0];
    bool bolt = false, official = false, distro = false;
    for (int i = 0; i < def->nkinds; i++) {
        official = official || !strcmp(def->kinds[i], "official");
        distro = distro || !strcmp(def->kinds[i], "distro");
    }
    /* --search ranks candidate builds; distro is a reference (the distribution's way), which
     * it does not handle as it does official */
    if (search && distro)
        return error("--search: distro is a reference, not a candidate: measure it without "
                     "--search (e.g. --variants=pgo,distro)");
    for (int g = 0; g < pv->ngroups; g++)
        for (int i = 0; i < pv->groups[g].nkinds; i++)
            bolt = bolt || strstr(pv->groups[g].kinds[i], "bolt");
    if (opt_is_set(o, "official") && (!official || !*opt_str(o, "official")))
        return error(!official ? "--official=%s: names the official variant's binary; add "
                                 "official to --variants (e.g. --variants=baseline,pgo,official)"
                               : "--official=%s: empty path (the official variant's server binary)",
                     opt_str(o, "official"));
    if (check_bolt_profile(o, bolt) < 0 ||
        (search && check_candidates(pv->names, pv->nnames, s->ntrain, 0,
                                     "baseline,pgo,pgo+lto,clang:pgo+lto,official") < 0))
        return -1;
    const char *gate = opt_str(o, "gate");
    if (strcmp(gate, "checksum") && strcmp(gate, "suite"))
        return error("--gate=%s: expected checksum or suite", gate);
    int64_t jobs = opt_int(o, "jobs");
    if (jobs < 0 || jobs > 1024)
        return error("--jobs=%s: expected 0 (one per CPU) to 1024", opt_str(o, "jobs"));
    return 0;
}

/* A library target's --variants into *pv and s->variants (library_variants); with --search,
 * its candidates (--cc's pgo is always built and measured). 0 or -1. */
static int library_search_variants(const struct opts *o, const struct recipe *r,
                                   struct pgo_settings *s, char **variants, int nvariants,
                                   bool search, struct pgo_variants *pv)
{
    if (library_variants(o, r, s, variants, nvariants, pv) < 0)
        return -1;
    if (!search)
        return 0;
    bool pgo = false;
    for (int i = 0; i < pv->nnames; i++)
        pgo = pgo || !strcmp(pv->names[i], "pgo");
    return check_candidates(pv->names, pv->nnames, 1, !pgo, "baseline,pgo,clang:pgo,-O3:pgo");
}

/* What a server target's request has beyond the shared options (checked by server_variants):
 * --cxx, --official, --db-version, --variant-server-option (checked here where the variants'
 * names are known), --jobs, --cc's kinds, --gate, --resume. 0 or -1. */
static int server_request(struct pgo_request *rq, const struct opts *o, const struct recipe *r,
                          const struct pgo_settings *s, const struct pgo_variants *pv)
{
    rq->cxx = opt_str(o, "cxx");
    rq->official = opt_str(o, "official");
    rq->db_version = opt_str(o, "db-version");
    rq->variant_options = opt_multi(o, "variant-server-option", &rq->nvariant_options);
    if (early_variant_options(rq, r, pv->names, pv->nnames) < 0)
        return -1;
    int64_t jobs = opt_int(o, "jobs");
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    rq->jobs = jobs ? (int)jobs : (ncpu > 0 ? (int)ncpu : 1);
    rq->variants = pv->groups[0].kinds;
    rq->nvariants = pv->groups[0].nkinds;
    rq->gate = !strcmp(opt_str(o, "gate"), "suite") ? PGO_GATE_SUITE : PGO_GATE_CHECKSUM;
    const char *resume = opt_str(o, "resume");
    rq->resume_id = !resume ? 0 : !strcmp(resume, "on") ? -1 : s->resume_id;
    return 0;
}

/* The build options as given (and the work directory, absolute), as shell words: what an
 * interrupted measurement's --resume command must repeat, as the store does not describe
 * the build cache. Caller frees. */
static char *build_options(const struct opts *o, const char *workdir)
{
    static const char *const names[] = { "source", "cc", "cxx", "cflags", "variants",
                                         "db-version", "official" };
    struct argvec a = ARGVEC_INIT;
    argvec_pushf(&a, "--workdir=%s", workdir);
    for (size_t i = 0; i < ARRAY_SIZE(names); i++)
        if (opt_is_set(o, names[i]))
            argvec_pushf(&a, "--%s=%s", names[i], opt_str(o, names[i]));
    char *words = subprocess_argv_str(argvec_argv(&a));
    argvec_clear(&a);
    return words;
}

/* `pgolab pgo TARGET` for a server or a library recipe (sqlite): the options a library does
 * not take refused, the shared settings, --search's checks, --variants (the kinds differ by
 * target), the request, then the pipeline. Its exit code. */
static int pgo_run(const struct opts *o, const struct recipe *r, const char *target,
                   const char *recipe)
{
    bool server = r->product != RECIPE_LIBRARY;
    struct pgo_settings s;
    struct pgo_request rq;
    struct pgo_variants pv = { 0 };
    char **variants = NULL;
    int nvariants = 0, rc = 1;
    memset(&rq, 0, sizeof(rq));
    if (!server && sqlite_refuses(o) < 0)
        return 1;
    /* a server's trainers may be mixes and suite (check_trainers); a library's are checked
     * by settings_load, as are --resume's */
    if (settings_load(o, &s, server) < 0 || (server && check_trainers(s.train, s.ntrain) < 0))
        goto out;
    bool search = opt_bool(o, "search");
    if (check_search(o, &s, search) < 0)
        goto out;
    variants = variants_or_default(o, &s, server, search, &nvariants);
    if (server ? server_variants(o, &s, variants, nvariants, search, &pv) < 0
               : library_search_variants(o, r, &s, variants, nvariants, search, &pv) < 0)
        goto out;
    char *workdir = abs_path(s.workdir_opt);
    request_fill(&rq, &s, target, recipe, workdir);
    char *words = build_options(o, workdir);
    rq.build_options = words;
    if (!server) {
        rq.variants = s.variants;
        rq.nvariants = s.nvariants;
    }
    if (!server || server_request(&rq, o, r, &s, &pv) == 0)
        rc = run_request(&rq, o, &s, &pv, search);
    free(words);
    free(workdir);
out:
    opt_list_free(variants);
    opt_list_free(pv.names);
    variant_groups_free(pv.groups, pv.ngroups);
    settings_release(&s);
    return rc;
}

/* --fetch: the source tree only (pgo/source.h), printed with its origin. */
static int pgo_fetch(const struct opts *o, const struct recipe *r)
{
    char *srcdir = path_join(opt_str(o, "workdir"), "src");
    char *dir = NULL;
    /* with official in --variants: exactly the installed package's revision, as the pipeline */
    int nv = 0;
    char **variants = opt_list(o, "variants", &nv), *pkg = NULL, *exact = NULL;
    bool official = false;
    for (int i = 0; i < nv; i++)
        official = official || !strcmp(variants[i], "official");
    opt_list_free(variants);
    const char *bin = opt_str(o, "official") ? opt_str(o, "official") : r->official_binary;
    if (official && bin && !opt_str(o, "source"))
        pgo_official_package_of(bin, &pkg, &exact);
    int rc = pgo_source_resolve_at(r, opt_str(o, "source"), srcdir, exact, &dir) < 0 ? 1 : 0;
    free(pkg);
    free(exact);
    if (rc == 0) {
        char *version = pgo_source_debian_version(dir), *suite = pgo_source_debian_suite(dir);
        printf("source:  %s\n", dir);
        if (version && r->debian_package && !opt_str(o, "source"))
            printf("package: %s %s%s%s%s\n", r->debian_package, version, suite ? " (Debian " : "",
                   suite ? suite : "", suite ? ")" : "");
        free(version);
        free(suite);
    }
    free(dir);
    free(srcdir);
    return rc;
}

int cmd_pgo(int argc, char **argv)
{
    const struct opt_def *tables[] = { pgo_options };
    struct opts o;
    int rc = 1;

    /* Each phase line as it ends, also when stdout is a pipe or a log file. */
    setvbuf(stdout, NULL, _IOLBF, 0);

    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage();
            return 0;
        }
    /* a bare --resume (server targets: the newest unfinished pgo experiment) is --resume=on;
     * the option parser wants a value for a string option */
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--resume"))
            argv[i] = (char *)"--resume=on";
    opts_init(&o, tables, 1);
    o.cmd = "pgo";
    if (opts_parse(&o, argc - 1, argv + 1) < 0 || cli_results_env(&o) < 0 ||
        cli_resume_settings(&o, "pgo") < 0)
        goto out;
    if (o.nargs == 0) {
        usage();
        goto out;
    }
    const char *target = o.args[0];
    if (!strcmp(target, "help") || (o.nargs == 2 && !strcmp(o.args[1], "help"))) {
        usage();
        rc = 0;
        goto out;
    }
    if (o.nargs > 1) {
        error("unexpected argument '%s' (usage: pgolab pgo TARGET [options])", o.args[1]);
        goto out;
    }
    char *path = recipe_find(target);
    if (!path) {
        if (!strchr(target, '/') && !strstr(target, ".json")) {
            char *names = recipe_names();
            error("unknown PGO target '%s' (known: %s; or a recipe file, or a directory of them "
                  "in PGOLAB_RECIPES)", target, *names ? names : "none found");
            free(names);
        }
        goto out;
    }
    struct recipe r;
    if (recipe_load(path, &r) == 0) {
        if (opt_bool(&o, "fetch") &&
            pgo_major_select(&r, opt_str(&o, "db-version"), opt_str(&o, "official")) < 0)
            rc = 1;
        else if (opt_bool(&o, "fetch"))
            rc = pgo_fetch(&o, &r);
        else
            rc = pgo_run(&o, &r, target, path);
        recipe_release(&r);
    }
    free(path);
out:
    opts_release(&o);
    return rc;
}
