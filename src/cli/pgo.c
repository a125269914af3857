/* pgo: `pgolab pgo TARGET [options]`: build baseline, instrumented and PGO variants from one
 * source with one compiler, train, gate on equal results, measure with the experiment engine.
 * TARGET sqlite is the embedded library's pipeline below; every other target is a recipe
 * file (recipes/NAME.json) run by the target-agnostic pipeline in src/pgo/, to which this
 * file hands validated options. */
#include "build/build.h"
#include "build/sqlite.h"
#include "cli/cli.h"
#include "experiment/experiment.h"
#include "oltp/oltp.h"
#include "pgo/pipeline.h"
#include "pgo/recipe.h"
#include "report/tables.h"
#include "store/store.h"
#include "util/fs.h"
#include "util/options.h"
#include "util/progress.h"
#include "util/signals.h"
#include "util/strbuf.h"
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
    { "cc", OPT_STRING, "gcc", "compiler for all three builds: gcc or clang (or a versioned name)" },
    { "cxx", OPT_STRING, NULL, "server targets: the C++ compiler (default: the one matching --cc, e.g. g++ for gcc)" },
    { "jobs", OPT_INT, "0", "server targets: parallel build jobs ({jobs} in the recipe; 0: one per CPU)" },
    { "variants", OPT_LIST, "baseline,pgo", "server targets: what to build and measure: baseline (always), pgo, lto, pgo+lto" },
    { "gate", OPT_STRING, "checksum", "server targets: correctness gate: checksum (bench verify on the same data), or suite (also the database's own regression tests on every pgo build)" },
    { "cflags", OPT_STRING, "-O2", "compiler flags shared by the three builds" },
    { "train", OPT_LIST, "oltp_read_write", "training workloads, run on the instrumented build (SQLite: all of them train one profile; server targets: each is a trainer with its own pgo build: a workload, a mix such as oltp_read_only+oltp_write_only, or suite, the database's regression tests)" },
    { "train-time", OPT_INT, "20", "seconds of training per training workload" },
    { "train-threads", OPT_INT, "2", "threads during training" },
    { "bench", OPT_LIST, "oltp_read_only,oltp_read_write", "measured workloads" },
    { "threads", OPT_LIST, "1,2", "measured thread counts" },
    { "rounds", OPT_INT, "5", "rounds (each runs every variant once, in shuffled order)" },
    { "time", OPT_INT, "10", "seconds per measured run" },
    { "tables", OPT_INT, "1", "number of tables (training, gate and measurement)" },
    { "table-size", OPT_INT, "10000", "rows per table" },
    { "rand-seed", OPT_INT, "0", "seed of the run-order shuffle (0: from the clock)" },
    { "output", OPT_STRING, NULL, "also write every run and the fingerprints as JSON to this file" },
    { "measure", OPT_STRING, "time", "measure baseline against pgo by time (tps and latency; also 'on'), by instructions (instructions per transaction under valgrind callgrind: deterministic, for noisy machines; 1 thread), or off (stop after the gate)" },
    { "events", OPT_INT, "2000", "--measure=instructions: transactions per run (each run is repeated with EVENTS/5 so the start-up cost cancels out)" },
    { "rebuild", OPT_BOOL, "off", "ignore cached amalgamation, builds and profile data" },
    { "results", OPT_STRING, STORE_DEFAULT_PATH, "results database: the measurement and every run are recorded here as they finish" },
    { "resume", OPT_STRING, NULL, "continue the measurement of experiment ID (same options; builds are reused, finished runs not redone); server targets: --resume alone continues the newest unfinished pgo experiment" },
    { "fail-if-slower", OPT_DOUBLE, NULL, "exit 3 when pgo is significantly slower than baseline (tps) by more than PCT percent" },
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
           "--resume=ID continues an interrupted one, `pgolab report` prints it again.\n\n"
           "Targets:\n  sqlite                 the SQLite library (the embedded default)\n");
    char *names = recipe_names();
    printf("  %-22s server recipes found (recipes/NAME.json, $PGOLAB_RECIPES); or a recipe "
           "file\n\nOptions:\n", *names ? names : "(none)");
    free(names);
    opts_print_help(pgo_options);
    printf("\nExit status: 0 ok; 1 error or bad input; 2 interrupted; 3 --fail-if-slower: pgo\n"
           "is significantly slower than baseline by more than PCT percent in some tps cell.\n");
}

/* Validated options. Strings point into the opts or are owned lists. */
struct pgo_settings {
    const char *source, *workdir_opt, *cc, *cflags, *output, *results;
    int64_t resume_id;         /* 0 = a new experiment */
    double fail_pct;           /* < 0 = no --fail-if-slower */
    char **train, **bench, **threads_list;
    int ntrain, nbench, nthreads;
    int *threads;
    int train_time, train_threads, rounds, time_s, tables, table_size;
    uint64_t seed;
    bool measure, rebuild;
    enum experiment_measure measure_kind; /* --measure=time|instructions */
    int64_t events;                       /* --events (instructions) */
    bool threads_set;                     /* --threads given (not the default) */
};

static void settings_release(struct pgo_settings *s)
{
    opt_list_free(s->train);
    opt_list_free(s->bench);
    opt_list_free(s->threads_list);
    free(s->threads);
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
    s->threads_set = opt_is_set(o, "threads");
    s->rebuild = opt_bool(o, "rebuild");
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
    if (check_min(o, "rounds", 1, &s->rounds) < 0 || check_min(o, "time", 1, &s->time_s) < 0 ||
        check_min(o, "train-time", 1, &s->train_time) < 0 ||
        check_min(o, "train-threads", 1, &s->train_threads) < 0 ||
        check_min(o, "tables", 1, &s->tables) < 0 ||
        check_min(o, "table-size", 1, &s->table_size) < 0)
        return -1;
    int64_t seed = opt_int(o, "rand-seed");
    if (seed < 0)
        return error("--rand-seed=%s: must be >= 0", opt_str(o, "rand-seed"));
    s->seed = seed ? (uint64_t)seed : (now_ns() ^ ((uint64_t)getpid() << 32));
    return 0;
}

/* ---- interruption ------------------------------------------------------------------- */

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
    interrupted = sig;
}


/* ---- the SQLite pipeline ------------------------------------------------------------ */

/* Everything the pipeline made; released by sqlite_pgo_release(). */
struct sqlite_pgo {
    char *workdir;               /* absolute */
    char *source;                /* the validated source dir */
    enum sqlite_source_kind kind;
    struct sqlite_amalgamation amalg;
    struct cc_info cc;
    char *root;                  /* WORKDIR/build-<cc>-<key> */
    char *profile_dir, *profdata;
    char *rundir;                /* database files: /dev/shm/pgolab-PID or WORKDIR/run */
    bool rundir_is_shm;
    char *dir[BUILD_NPHASES];
    struct argvec argv[BUILD_NPHASES];
    char *flags[BUILD_NPHASES];  /* cflags + PGO flags of each build, for the fingerprint */
    struct lib_build build[BUILD_NPHASES];
    struct profile_info profile;
    bool trained_now;
    double train_seconds;
    char *checksum;
    long long rows;
    char *stamp_extra, *pgo_stamp_extra, *progress_what;
    int lock_fd;                 /* WORKDIR/.lock, held with flock; -1 = none */
};

static void sqlite_pgo_release(struct sqlite_pgo *p)
{
    free(p->workdir);
    free(p->source);
    sqlite_amalgamation_release(&p->amalg);
    cc_info_release(&p->cc);
    free(p->root);
    free(p->profile_dir);
    free(p->profdata);
    free(p->rundir);
    for (int i = 0; i < BUILD_NPHASES; i++) {
        free(p->dir[i]);
        argvec_clear(&p->argv[i]);
        free(p->flags[i]);
        lib_build_release(&p->build[i]);
    }
    profile_info_release(&p->profile);
    free(p->checksum);
    free(p->stamp_extra);
    free(p->pgo_stamp_extra);
    free(p->progress_what);
    if (p->lock_fd >= 0)
        close(p->lock_fd);
}

/* The run directory for database files: tmpfs when it is writable. */
static int make_rundir(struct sqlite_pgo *p)
{
    if (access("/dev/shm", W_OK) == 0) {
        p->rundir = xasprintf("/dev/shm/pgolab-%d", (int)getpid());
        if (remove_tree(p->rundir) == 0 && mkdir_p(p->rundir) == 0) {
            p->rundir_is_shm = true;
            return 0;
        }
        free(p->rundir);
    }
    p->rundir = path_join(p->workdir, "run");
    return mkdir_p(p->rundir);
}

/* Copy the *.log files of the run directory to WORKDIR/last-run before it is removed. */
static void save_run_logs(const struct sqlite_pgo *p)
{
    struct argvec logs = ARGVEC_INIT;
    list_files(&logs, p->rundir, ".log");
    if (logs.n) {
        char *dest = path_join(p->workdir, "last-run");
        if (remove_tree(dest) == 0 && mkdir_p(dest) == 0) {
            for (int i = 0; i < logs.n; i++) {
                struct strbuf sb = STRBUF_INIT;
                strbuf_init(&sb, 0);
                const char *base = strrchr(logs.v[i], '/') + 1;
                char *to = path_join(dest, base);
                if (strbuf_read_file(&sb, logs.v[i]) == 0)
                    stamp_write(to, sb.buf);
                free(to);
                strbuf_release(&sb);
            }
        }
        free(dest);
    }
    argvec_clear(&logs);
}

static int prepare_builds(struct sqlite_pgo *p, const struct pgo_settings *s)
{
    char *keytext = xasprintf("%s\n%s\n%s\n%s", p->amalg.sqlite3_c, s->cc, p->cc.version,
                              s->cflags);
    char *key = path_key(keytext);
    char *name = xasprintf("build-%s-%s", cc_family_name(p->cc.family), key);
    p->root = path_join(p->workdir, name);
    free(keytext);
    free(key);
    free(name);
    p->profile_dir = path_join(p->root, "profile");
    if (p->cc.family == CC_CLANG)
        p->profdata = path_join(p->root, "sqlite.profdata");

    for (int ph = 0; ph < BUILD_NPHASES; ph++) {
        p->dir[ph] = path_join(p->root, build_phase_name((enum build_phase)ph));
        struct pgo_paths paths = { p->profile_dir, p->profdata, p->dir[ph] };
        if (sqlite_lib_argv(&p->argv[ph], s->cc, p->cc.family, s->cflags, (enum build_phase)ph,
                            &paths, p->amalg.sqlite3_c) < 0)
            return -1;
        struct argvec fl = ARGVEC_INIT;
        argvec_split(&fl, s->cflags);
        if (pgo_phase_flags(&fl, p->cc.family, (enum build_phase)ph, &paths) < 0) {
            argvec_clear(&fl);
            return -1;
        }
        p->flags[ph] = argvec_join(&fl);
        argvec_clear(&fl);

        struct lib_build *b = &p->build[ph];
        b->name = build_phase_name((enum build_phase)ph);
        b->phase = (enum build_phase)ph;
        b->dir = p->dir[ph];
        b->output = SQLITE_LIB_NAME;
        b->argv = argvec_argv(&p->argv[ph]);
        b->force = s->rebuild;
    }
    return mkdir_p(p->root);
}

/* Hold WORKDIR/.lock (flock) for the whole run: two runs on one workdir would build into,
 * and wipe, the same directories. The lock goes away with the process. */
static int lock_workdir(struct sqlite_pgo *p, const char *opt)
{
    if (mkdir_p(p->workdir) < 0)
        return -1;
    char *path = path_join(p->workdir, ".lock");
    p->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    free(path);
    if (p->lock_fd < 0)
        return error("--workdir=%s: cannot create its lock file: %s", opt, strerror(errno));
    if (flock(p->lock_fd, LOCK_EX | LOCK_NB) < 0)
        return error("--workdir=%s is in use by another pgolab pgo run (wait for it or pass "
                     "another --workdir)", opt);
    return 0;
}

/* 1 if the profile dir holds non-empty raw profile data (checked quietly). */
static bool profile_present(const struct sqlite_pgo *p)
{
    struct argvec files = ARGVEC_INIT;
    bool found = false;
    list_files(&files, p->profile_dir, p->cc.family == CC_GCC ? ".gcda" : ".profraw");
    for (int i = 0; i < files.n && !found; i++)
        found = file_size(files.v[i]) > 0;
    argvec_clear(&files);
    return found;
}

/* Train unless the profile data of an identical training is already there. */
static int train(struct sqlite_pgo *p, const struct pgo_settings *s, const char *pgolab)
{
    struct strbuf stamp = STRBUF_INIT;
    char *stamp_path = path_join(p->root, "training.stamp");
    char *db = path_join(p->rundir, "train.db");
    char *log = path_join(p->root, "training.log");
    char *env_profile = xasprintf("LLVM_PROFILE_FILE=%s/%%p-%%m.profraw", p->profile_dir);
    const char *env[] = { env_profile, NULL };
    int rc = -1;

    strbuf_init(&stamp, 0);
    strbuf_addf(&stamp, "instrumented-sha256: %s\ntrain:", p->build[BUILD_INSTRUMENTED].sha256);
    for (int i = 0; i < s->ntrain; i++)
        strbuf_addf(&stamp, " %s", s->train[i]);
    strbuf_addf(&stamp, "\ntime: %d\nthreads: %d\ntables: %d\ntable-size: %d\n", s->train_time,
                s->train_threads, s->tables, s->table_size);

    if (!s->rebuild && stamp_matches(stamp_path, stamp.buf) && profile_present(p)) {
        rc = profile_collect(&p->cc, p->profile_dir, p->profdata, &p->profile);
        goto out;
    }
    unlink(stamp_path);
    if (profile_wipe(p->profile_dir) < 0 || stamp_write(log, "") < 0)
        goto out;
    struct sqlite_bench b = {
        .pgolab = pgolab, .library = p->build[BUILD_INSTRUMENTED].lib, .db = db,
        .tables = s->tables, .table_size = s->table_size,
        .env = p->cc.family == CC_CLANG ? env : NULL, .log = log,
    };
    uint64_t t0 = now_ns();
    if (sqlite_train(&b, s->train, s->ntrain, s->train_time, s->train_threads) < 0)
        goto out;
    p->train_seconds = (double)(now_ns() - t0) / 1e9;
    p->trained_now = true;
    if (profile_collect(&p->cc, p->profile_dir, p->profdata, &p->profile) < 0)
        goto out;
    rc = stamp_write(stamp_path, stamp.buf);
out:
    strbuf_release(&stamp);
    free(stamp_path);
    free(db);
    free(log);
    free(env_profile);
    return rc;
}

static void print_build_line(const char *label, const struct lib_build *b)
{
    printf("  %-13s %s  sha256 %.16s  ", label, b->lib, b->sha256);
    if (b->skipped)
        printf("(cached)\n");
    else
        printf("(%.1f s)\n", b->seconds);
}

/* The pipeline summary that opens the report (stdout). */
static void print_summary(const struct sqlite_pgo *p, const struct pgo_settings *s)
{
    printf("pgolab pgo sqlite: SQLite %s, %s, %s\n", p->amalg.version, p->cc.version,
           *s->cflags ? s->cflags : "(no cflags)");
    printf("  %-13s %s%s\n", "source", p->source,
           p->kind == SQLITE_SRC_AMALGAMATION ? " (amalgamation)" : "");
    if (p->kind == SQLITE_SRC_TREE) {
        printf("  %-13s %s  ", "amalgamation", p->amalg.sqlite3_c);
        if (p->amalg.cached)
            printf("(cached)\n");
        else
            printf("(%.1f s)\n", p->amalg.seconds);
    }
    print_build_line("baseline", &p->build[BUILD_BASELINE]);
    print_build_line("instrumented", &p->build[BUILD_INSTRUMENTED]);
    printf("  %-13s", "training");
    for (int i = 0; i < s->ntrain; i++)
        printf("%s%s", i ? "," : " ", s->train[i]);
    printf(", %d s each, %d threads: %d %s file%s, %lld bytes ", s->train_time, s->train_threads,
           p->profile.files, p->cc.family == CC_GCC ? ".gcda" : ".profraw",
           p->profile.files == 1 ? "" : "s", (long long)p->profile.bytes);
    if (p->trained_now)
        printf("(%.1f s)\n", p->train_seconds);
    else
        printf("(cached)\n");
    print_build_line("pgo", &p->build[BUILD_PGO]);
    printf("  %-13s pgo flags: %s\n", "", p->flags[BUILD_PGO]);
    printf("  %-13s oltp_read_only verify: checksum %s over %lld rows, identical\n", "gate",
           p->checksum, p->rows);
    fflush(stdout);
}

/* The pgo-specific settings recorded with the experiment (JSON object text; caller frees). */
static char *pgo_extra_settings(const struct sqlite_pgo *p, const struct pgo_settings *s)
{
    json_t *train = json_array();
    for (int i = 0; i < s->ntrain; i++)
        json_array_append_new(train, json_string(s->train[i]));
    json_t *o = json_pack("{s:{s:o,s:i,s:i,s:s}}", "pgo", "train", train, "train_time",
                          s->train_time, "train_threads", s->train_threads,
                          "amalgamation_version", p->amalg.version ? p->amalg.version : "?");
    char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    if (!text)
        die("out of memory");
    return text;
}

/* Measure baseline against pgo, recorded in store; returns the exit code (0, 1, 2 when
 * interrupted, 3 when --fail-if-slower trips). */
static int measure(struct sqlite_pgo *p, const struct pgo_settings *s, const char *pgolab,
                   struct store *store)
{
    struct variant v[2];
    struct experiment_config cfg;
    struct experiment_result res;
    int rc = 0;

    memset(v, 0, sizeof(v));
    memset(&res, 0, sizeof(res));
    v[0].name = "baseline";
    v[0].library = p->build[BUILD_BASELINE].lib;
    v[0].compiler = p->cc.version;
    v[0].cflags = p->flags[BUILD_BASELINE];
    v[1].name = "pgo";
    v[1].library = p->build[BUILD_PGO].lib;
    v[1].compiler = p->cc.version;
    v[1].cflags = p->flags[BUILD_PGO];

    memset(&cfg, 0, sizeof(cfg));
    cfg.variants = v;
    cfg.nvariants = 2;
    cfg.workloads = s->bench;
    cfg.nworkloads = s->nbench;
    cfg.threads = s->threads;
    cfg.nthreads = s->nthreads;
    cfg.rounds = s->rounds;
    cfg.time_s = s->time_s;
    cfg.tables = s->tables;
    cfg.table_size = s->table_size;
    cfg.workdir = p->rundir;
    cfg.pgolab = pgolab;
    cfg.bench_args = NULL;
    cfg.seed = s->seed;
    cfg.progress = stderr_is_tty();
    int one_thread[1] = { s->threads[0] };
    if (s->measure_kind == MEASURE_INSTRUCTIONS) {
        cfg.threads = one_thread; /* s->threads stays as given */
        cfg.nthreads = s->threads_set ? s->nthreads : 1; /* default 1,2: 1, no warning */
        if (experiment_instructions_setup(&cfg, s->events) < 0) {
            rc = -1;
            goto out;
        }
    }

    if (experiment_fingerprint(&cfg) < 0) {
        rc = -1;
        goto out;
    }
    /* The isolation proof: the child must have mapped the variant's own file. */
    for (int i = 0; i < 2; i++) {
        char *want = abs_path(v[i].library);
        char *got = v[i].loaded_from ? abs_path(v[i].loaded_from) : NULL;
        if (got && strcmp(want, got))
            rc = error("variant %s: the benchmark loaded %s instead of %s", v[i].name, got, want);
        free(want);
        free(got);
    }
    if (rc < 0)
        goto out;
    char *extra = pgo_extra_settings(p, s);
    rc = s->resume_id ? experiment_record_resume(&cfg, store, s->resume_id, "pgo", extra)
                      : experiment_record_begin(&cfg, store, "pgo", extra);
    free(extra);
    if (rc < 0)
        goto out;
    int run_rc = experiment_run(&cfg, &res);
    if (experiment_record_finish(&cfg, &res, run_rc) < 0 && run_rc == 0)
        run_rc = -1;
    if (res.nruns > 0)
        experiment_report_text(stdout, &cfg, &res);
    rc = run_rc == 0 ? 0 : res.signal ? 2 : 1;
    if (s->output && experiment_write_json(s->output, &cfg, &res) < 0 && !rc)
        rc = 1;
    if (rc == 0 && s->fail_pct >= 0 && report_fail_if_slower(&cfg, &res, s->fail_pct))
        rc = 3;
    experiment_result_release(&res);
out:
    experiment_variant_release(&v[0]);
    experiment_variant_release(&v[1]);
    return rc < 0 ? 1 : rc;
}

/* Correctness gate on fresh data in the run directory (log: ROOT/gate.log). */
static int gate(struct sqlite_pgo *p, const struct pgo_settings *s, const char *pgolab)
{
    char *db = path_join(p->rundir, "gate.db");
    char *log = path_join(p->root, "gate.log");
    struct sqlite_bench b = { .pgolab = pgolab, .db = db, .tables = s->tables,
                              .table_size = s->table_size, .log = log };
    int rc = stamp_write(log, "");
    if (rc == 0)
        rc = sqlite_gate(&b, p->build[BUILD_BASELINE].lib, p->build[BUILD_PGO].lib, &p->checksum,
                         &p->rows);
    free(db);
    free(log);
    return rc;
}

/* Stop with exit code 2 when a signal arrived (the children died with it). */
#define CHECK_INTERRUPT()                                                   \
    do {                                                                    \
        if (interrupted) {                                                  \
            progress_done();                                                \
            error("interrupted (signal %d)", (int)interrupted);             \
            rc = 2;                                                         \
            goto out;                                                       \
        }                                                                   \
    } while (0)

static int pgo_sqlite(const struct pgo_settings *s)
{
    struct sqlite_pgo p;
    struct sig_saved saved;
    struct store *store = NULL;
    char *pgolab = abs_path("/proc/self/exe");
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    int rc = 1;

    memset(&p, 0, sizeof(p));
    p.lock_fd = -1;
    interrupted = 0;
    sig_catch(on_signal, &saved);

    /* directories are created as each phase needs them, so bad input leaves nothing behind */
    p.workdir = abs_path(s->workdir_opt);
    if (file_size(p.workdir) >= 0 && !is_dir(p.workdir)) {
        error("--workdir=%s: not a directory", s->workdir_opt);
        goto out;
    }

    /* the results file first (a foreign or newer one is refused untouched), then the
     * compiler: the cheapest things to get wrong */
    if (s->measure && store_open(s->results, &store) < 0)
        goto fail;
    if (s->measure && s->resume_id) {
        struct store_experiment e;
        if (experiment_lookup(store, s->resume_id, &e) < 0)
            goto fail;
        int done = !strcmp(e.status, "complete");
        store_experiment_release(&e);
        if (done) {
            error("experiment %lld is complete; nothing to resume", (long long)s->resume_id);
            goto fail;
        }
    }
    if (cc_probe(s->cc, &p.cc) < 0)
        goto fail;
    /* a source directory is checked before anything is written */
    if (s->source && is_dir(s->source) &&
        sqlite_source_resolve(s->source, p.workdir, &p.source, &p.kind) < 0)
        goto fail;
    if (lock_workdir(&p, s->workdir_opt) < 0)
        goto fail;
    /* 1. source, 2. amalgamation */
    if (!p.source && sqlite_source_resolve(s->source, p.workdir, &p.source, &p.kind) < 0)
        goto fail;
    if (sqlite_amalgamation_build(p.source, p.kind, p.workdir, s->rebuild, &p.amalg) < 0)
        goto fail;

    /* 3. baseline + instrumented in parallel */
    if (prepare_builds(&p, s) < 0)
        goto fail;
    char *src_sha = sha256_file(p.amalg.sqlite3_c);
    if (!src_sha)
        goto fail;
    p.stamp_extra = xasprintf("source-sha256: %s\ncompiler: %s", src_sha, p.cc.version);
    free(src_sha);
    p.build[BUILD_BASELINE].stamp_extra = p.stamp_extra;
    p.build[BUILD_INSTRUMENTED].stamp_extra = p.stamp_extra;
    p.progress_what = xasprintf("build: baseline + instrumented (%s %s)", s->cc, s->cflags);
    if (lib_build_parallel(&p.build[BUILD_BASELINE], 2, ncpu >= 2 ? 2 : 1, p.progress_what) < 0)
        goto fail;
    CHECK_INTERRUPT();

    /* 4. training on the instrumented build */
    if (make_rundir(&p) < 0 || train(&p, s, pgolab) < 0)
        goto fail;
    CHECK_INTERRUPT();

    /* the pgo build reads the profile: its identity is part of the stamp */
    p.pgo_stamp_extra = xasprintf("%s\nprofile: %s", p.stamp_extra, p.profile.id);
    p.build[BUILD_PGO].stamp_extra = p.pgo_stamp_extra;
    free(p.progress_what);
    p.progress_what = xasprintf("build: pgo (%s %s)", s->cc, s->cflags);
    if (lib_build_parallel(&p.build[BUILD_PGO], 1, 1, p.progress_what) < 0)
        goto fail;
    CHECK_INTERRUPT();

    /* 5. correctness gate */
    if (gate(&p, s, pgolab) < 0)
        goto fail;
    CHECK_INTERRUPT();
    print_summary(&p, s);

    /* 6. measurement (the engine catches SIGINT/SIGTERM itself) */
    rc = 0;
    if (s->measure) {
        sig_restore(&saved);
        printf("\n");
        rc = measure(&p, s, pgolab, store);
        sig_catch(on_signal, &saved);
    }
    goto out;
fail:
    CHECK_INTERRUPT();
out:
    progress_done();
    if (p.rundir && p.rundir_is_shm) {
        save_run_logs(&p);
        remove_tree(p.rundir);
    }
    sig_restore(&saved);
    sqlite_pgo_release(&p);
    store_close(store);
    free(pgolab);
    return rc;
}

/* ---- server targets (recipes): options in, src/pgo/pipeline.c does the rest ---------- */

/* The server-only options a SQLite run must not get. */
static int sqlite_refuses(const struct opts *o)
{
    static const char *const server_only[] = { "cxx", "jobs", "variants", "gate" };
    for (size_t i = 0; i < ARRAY_SIZE(server_only); i++)
        if (opt_is_set(o, server_only[i]))
            return error("--%s is for server targets (recipes); pgolab pgo sqlite builds "
                         "baseline and pgo", server_only[i]);
    return 0;
}

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

static int check_variants(char **v, int n)
{
    static const char *const known[] = { "baseline", "pgo", "lto", "pgo+lto" };
    bool pgo = false;
    for (int i = 0; i < n; i++) {
        bool ok = false;
        for (size_t k = 0; k < ARRAY_SIZE(known) && !ok; k++)
            ok = !strcmp(v[i], known[k]);
        if (!ok)
            return error("--variants: unknown variant '%s' (known: baseline, pgo, lto, pgo+lto)",
                         v[i]);
        pgo = pgo || !strncmp(v[i], "pgo", 3);
    }
    if (!pgo)
        return error("--variants: needs pgo or pgo+lto (baseline is always built and measured)");
    return 0;
}

static int pgo_server(const struct opts *o, const char *target)
{
    struct pgo_settings s;
    struct pgo_request rq;
    char **variants = NULL;
    int nvariants = 0, rc = 1;
    char *recipe = recipe_find(target);
    memset(&rq, 0, sizeof(rq));
    if (!recipe)
        return 1;
    /* the SQLite checks apply, except --train's (trainers are mixes here) and --resume's */
    if (settings_load(o, &s, true) < 0 || check_trainers(s.train, s.ntrain) < 0)
        goto out;
    variants = opt_list(o, "variants", &nvariants);
    if (check_variants(variants, nvariants) < 0)
        goto out;
    const char *gate = opt_str(o, "gate");
    if (strcmp(gate, "checksum") && strcmp(gate, "suite")) {
        error("--gate=%s: expected checksum or suite", gate);
        goto out;
    }
    if (s.measure_kind == MEASURE_INSTRUCTIONS) {
        error("--measure=instructions is for pgolab pgo sqlite (a server runs in other "
              "processes than the one callgrind would count)");
        goto out;
    }
    int64_t jobs = opt_int(o, "jobs");
    if (jobs < 0 || jobs > 1024) {
        error("--jobs=%s: expected 0 (one per CPU) to 1024", opt_str(o, "jobs"));
        goto out;
    }
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    const char *resume = opt_str(o, "resume");
    rq.target = target;
    rq.recipe_path = recipe;
    rq.source = s.source;
    char *workdir = abs_path(s.workdir_opt);
    rq.workdir = workdir;
    if (file_size(workdir) >= 0 && !is_dir(workdir)) {
        error("--workdir=%s: not a directory", s.workdir_opt);
        free(workdir);
        goto out;
    }
    rq.cc = s.cc;
    rq.cxx = opt_str(o, "cxx");
    rq.cflags = s.cflags;
    rq.train = s.train;
    rq.ntrain = s.ntrain;
    rq.train_time = s.train_time;
    rq.train_threads = s.train_threads;
    rq.bench = s.bench;
    rq.nbench = s.nbench;
    rq.threads = s.threads;
    rq.nthreads = s.nthreads;
    rq.rounds = s.rounds;
    rq.time_s = s.time_s;
    rq.tables = s.tables;
    rq.table_size = s.table_size;
    rq.jobs = jobs ? (int)jobs : (ncpu > 0 ? (int)ncpu : 1);
    rq.variants = variants;
    rq.nvariants = nvariants;
    rq.gate = !strcmp(gate, "suite") ? PGO_GATE_SUITE : PGO_GATE_CHECKSUM;
    rq.measure = s.measure;
    rq.rebuild = s.rebuild;
    rq.seed = s.seed;
    rq.results = s.results;
    rq.output = s.output;
    rq.resume_id = !resume ? 0 : !strcmp(resume, "on") ? -1 : s.resume_id;
    rq.fail_pct = s.fail_pct;
    rc = pgo_pipeline_run(&rq);
    free(workdir);
out:
    opt_list_free(variants);
    settings_release(&s);
    free(recipe);
    return rc;
}

int cmd_pgo(int argc, char **argv)
{
    const struct opt_def *tables[] = { pgo_options };
    struct opts o;
    struct pgo_settings s;
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
    if (opts_parse(&o, argc - 1, argv + 1) < 0)
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
    if (strcmp(target, "sqlite")) {
        rc = pgo_server(&o, target);
        goto out;
    }
    if (sqlite_refuses(&o) < 0)
        goto out;
    if (settings_load(&o, &s, false) < 0) {
        settings_release(&s);
        goto out;
    }
    rc = pgo_sqlite(&s);
    settings_release(&s);
out:
    opts_release(&o);
    return rc;
}
