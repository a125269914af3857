/* sqlite: the PGO pipeline of library recipes (see sqlite.h), `pgolab pgo sqlite` among
 * them. Every fact about the target (source package, expected files, the prepare steps that
 * make the amalgamation, the compile step, where the PGO flags go, the library's name) comes
 * from the recipe (recipes/sqlite.json); what is the same for every SQLite library (training
 * and the gate with `pgolab bench --sqlite-library`, measurement of library variants) is here
 * and in pgo/library_bench.c. */
#include "pgo/sqlite.h"
#include "toolchain/bolt.h"
#include "toolchain/toolchain.h"
#include "pgo/library_bench.h"
#include "pgo/profile_check.h"
#include "pgo/recipe.h"
#include "pgo/source.h"
#include "experiment/experiment.h"
#include "report/steps.h"
#include "report/tables.h"
#include "store/store.h"
#include "util/fs.h"
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
    const struct recipe *r;
    char *source;                /* the validated source dir */
    struct pgo_prepared prep;    /* the amalgamation (or the source, prepared already) */
    char *version;               /* SQLITE_VERSION of the prepared sqlite3.h */
    struct cc_info cc;
    char *root;                  /* WORKDIR/build-<cc>-<key> */
    char *profile_dir, *profdata;
    char *rundir;                /* database files: a private /dev/shm/pgolab.XXXXXX or WORKDIR/run */
    bool rundir_is_shm;
    char *dir[BUILD_NPHASES];
    struct argvec argv[BUILD_NPHASES];
    char *flags[BUILD_NPHASES];  /* cflags + PGO flags of each build, for the fingerprint */
    struct lib_build build[BUILD_NPHASES];
    struct profile_info profile;
    struct profile_health health;/* the profile check's counts */
    bool trained_now;
    double train_seconds;
    char *checksum;
    long long rows;
    char *stamp_extra, *pgo_stamp_extra, *progress_what;
    int lock_fd;                 /* WORKDIR/.lock, held with flock; -1 = none */
    /* BOLT variants (--variants=...,bolt,pgo+bolt): bolt[i] optimizes the baseline (bolt) or
     * the pgo build (pgo+bolt), in ROOT/<name> */
    struct bolt_variant bolt[2];
    char *bolt_dir[2];
    bool bolt_cached[2];
    double bolt_train_seconds[2];
    int nbolt;
};

static void sqlite_pgo_release(struct sqlite_pgo *p)
{
    free(p->workdir);
    free(p->source);
    pgo_prepared_release(&p->prep);
    free(p->version);
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
    profile_health_release(&p->health);
    free(p->checksum);
    free(p->stamp_extra);
    free(p->pgo_stamp_extra);
    free(p->progress_what);
    if (p->lock_fd >= 0)
        close(p->lock_fd);
    for (int i = 0; i < p->nbolt; i++) {
        bolt_variant_release(&p->bolt[i]);
        free(p->bolt_dir[i]);
    }
}

/* SQLITE_VERSION from dir/sqlite3.h, or "unknown". Caller frees. */
static char *read_version(const char *dir)
{
    struct strbuf sb = STRBUF_INIT;
    char *h = path_join(dir, "sqlite3.h");
    char *v = NULL;
    strbuf_init(&sb, 0);
    if (strbuf_read_file(&sb, h) == 0)
        v = sqlite_version_from_header(sb.buf);
    strbuf_release(&sb);
    free(h);
    return v ? v : xstrdup("unknown");
}

/* The run directory for database files: a private one on tmpfs when /dev/shm is writable. */
static int make_rundir(struct sqlite_pgo *p)
{
    if (access("/dev/shm", W_OK | X_OK) == 0 && (p->rundir = private_tmpdir("/dev/shm", "pgolab"))) {
        p->rundir_is_shm = true;
        return 0;
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

/* The recipe's build step expanded for phase ph into p->argv[ph] (the step runs in the
 * phase's directory, which is also its {prefix}). */
static int expand_build(struct sqlite_pgo *p, const struct pgo_settings *s, int ph,
                        struct argvec *pgo_flags)
{
    const struct recipe *r = p->r;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    char *flags_str = argvec_join(pgo_flags);
    struct recipe_vars v = {
        .source = p->source, .build = p->dir[ph], .prefix = p->dir[ph],
        .profile_dir = p->profile_dir, .phase = build_phase_name((enum build_phase)ph),
        .prepared = p->prep.dir, .cc = s->cc, .cflags = s->cflags, .cxxflags = s->cflags,
        .pgo_flags = flags_str, .pgo_flags_list = argvec_argv(pgo_flags),
        .jobs = ncpu > 0 ? (int)ncpu : 1,
        .phase_options = (const char *const *)r->phase_options[ph],
    };
    struct argvec env = ARGVEC_INIT;
    char *cwd = NULL;
    recipe_expand_step(&r->steps[0], &v, &p->argv[ph], &env, &cwd);
    int rc = 0;
    if (strcmp(cwd, p->dir[ph]) || env.n)
        rc = error("%s: a library recipe's step runs in {build} with no env (steps[0] %s)",
                   r->path, r->steps[0].name);
    free(flags_str);
    free(cwd);
    argvec_clear(&env);
    return rc;
}

static int prepare_builds(struct sqlite_pgo *p, const struct pgo_settings *s)
{
    char *keytext = xasprintf("%s\n%s\n%s\n%s%s", p->prep.main, s->cc, p->cc.version,
                              s->cflags, p->nbolt ? "\nbolt" : "");
    char *key = path_key(keytext);
    char *name = xasprintf("build-%s-%s", cc_family_name(p->cc.family), key);
    p->root = path_join(p->workdir, name);
    free(keytext);
    free(key);
    free(name);
    p->profile_dir = path_join(p->root, "profile");
    if (p->cc.family == CC_CLANG) {
        char *name2 = xasprintf("%s.profdata", p->r->name);
        p->profdata = path_join(p->root, name2);
        free(name2);
    }

    for (int ph = 0; ph < BUILD_NPHASES; ph++) {
        p->dir[ph] = path_join(p->root, build_phase_name((enum build_phase)ph));
        struct pgo_paths paths = { p->profile_dir, p->profdata, p->dir[ph] };
        struct argvec pf = ARGVEC_INIT, fl = ARGVEC_INIT;
        if (p->r->flags == RECIPE_FLAGS_COMPILER &&
            pgo_phase_flags(&pf, p->cc.family, (enum build_phase)ph, &paths) < 0) {
            argvec_clear(&pf);
            return -1;
        }
        /* with a BOLT variant, baseline and pgo are BOLT's inputs: linked the recipe's bolt
         * way, so that each BOLT variant differs from its input by BOLT alone */
        if (p->nbolt && ph != BUILD_INSTRUMENTED) {
            argvec_pushv(&pf, (const char *const *)p->r->bolt_cflags);
            argvec_pushv(&pf, (const char *const *)p->r->bolt_link_flags);
        }
        int erc = expand_build(p, s, ph, &pf);
        argvec_split(&fl, s->cflags);
        argvec_pushv(&fl, argvec_argv(&pf));
        argvec_clear(&pf);
        if (erc < 0) {
            argvec_clear(&fl);
            return -1;
        }
        /* The PGOLAB_PGO_EXTRA_CFLAGS test knob (util/knobs.h): flags for the pgo build only,
         * last on its command line (after pgolab's own, so a -Wno-... can undo one), e.g. a
         * -D that changes a query's answer, so the correctness gate's failure path can be
         * tested. They are in the build's command (its stamp) and its recorded flags. */
        const char *extra = ph == BUILD_PGO ? getenv("PGOLAB_PGO_EXTRA_CFLAGS") : NULL;
        if (extra && *extra) {
            argvec_split(&p->argv[ph], extra);
            argvec_split(&fl, extra);
        }
        p->flags[ph] = argvec_join(&fl);
        argvec_clear(&fl);

        struct lib_build *b = &p->build[ph];
        b->name = build_phase_name((enum build_phase)ph);
        b->phase = (enum build_phase)ph;
        b->dir = p->dir[ph];
        b->output = p->r->library;
        b->argv = argvec_argv(&p->argv[ph]);
        b->force = s->rebuild;
    }
    return mkdir_p(p->root);
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

/* The profile check (profile_check.h): the training ran in pgolab's own children, as this
 * user; log (NULL for a cached profile) is where they printed. */
static int check_health(struct sqlite_pgo *p, const char *log, int64_t start)
{
    char *path = path_join(p->root, "profile.health");
    char *const logs[] = { (char *)log, NULL };
    struct profile_check_in in = {
        .cc = &p->cc, .profile_dir = p->profile_dir, .profdata = p->profdata,
        .notes_dir = p->dir[BUILD_INSTRUMENTED], .hot = p->r->hot_functions, .logs = logs,
        .train_uid = geteuid(), .train_user = NULL, .train_start = start,
    };
    int rc = profile_health_run(&in, "training", path, log != NULL, &p->health);
    free(path);
    return rc;
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
        if (rc == 0)
            rc = check_health(p, NULL, 0);
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
    int64_t start = (int64_t)wall_time();
    if (sqlite_train(&b, s->train, s->ntrain, s->train_time, s->train_threads) < 0)
        goto out;
    p->train_seconds = (double)(now_ns() - t0) / 1e9;
    p->trained_now = true;
    if (profile_collect(&p->cc, p->profile_dir, p->profdata, &p->profile) < 0 ||
        check_health(p, log, start) < 0)
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
    const struct recipe *r = p->r;
    printf("pgolab pgo %s: %s %s, %s, %s\n", r->name, r->title, p->version, p->cc.version,
           *s->cflags ? s->cflags : "(no cflags)");
    printf("  %-13s %s%s%s%s\n", "source", p->source, r->nprepare && !p->prep.ran ? " (" : "",
           r->nprepare && !p->prep.ran ? r->prepare_name : "",
           r->nprepare && !p->prep.ran ? ")" : "");
    if (p->prep.ran) {
        printf("  %-13s %s  ", r->prepare_name, p->prep.main);
        if (p->prep.cached)
            printf("(cached)\n");
        else
            printf("(%.1f s)\n", p->prep.seconds);
    }
    print_build_line("baseline", &p->build[BUILD_BASELINE]);
    print_build_line("instrumented", &p->build[BUILD_INSTRUMENTED]);
    printf("  %-13s", "training");
    for (int i = 0; i < s->ntrain; i++)
        printf("%s%s", i ? "," : " ", s->train[i]);
    char *cov = profile_health_line(&p->health, p->cc.family == CC_GCC);
    printf(", %d s each, %d threads: profile %s (%d %s file%s) ", s->train_time, s->train_threads,
           cov, p->profile.files, p->cc.family == CC_GCC ? ".gcda" : ".profraw",
           p->profile.files == 1 ? "" : "s");
    free(cov);
    if (p->trained_now)
        printf("(%.1f s)\n", p->train_seconds);
    else
        printf("(cached)\n");
    print_build_line("pgo", &p->build[BUILD_PGO]);
    printf("  %-13s pgo flags: %s\n", "", p->flags[BUILD_PGO]);
    for (int i = 0; i < p->nbolt; i++) {
        const struct bolt_variant *v = &p->bolt[i];
        printf("  %-13s %s  ", v->name, v->output);
        if (p->bolt_cached[i])
            printf("(cached)\n");
        else
            printf("(BOLT %.1f s, training %.1f s)\n", v->seconds, p->bolt_train_seconds[i]);
        printf("  %-13s BOLT profile: %d of %d functions with profile, %d .fdata file%s merged "
               "into %lld bytes; dyno-stats: %s\n", "", v->profiled, v->functions,
               v->fdata_files, v->fdata_files == 1 ? "" : "s", (long long)v->fdata_bytes,
               v->dyno_stats);
    }
    printf("  %-13s oltp_read_only verify: checksum %s over %lld rows, identical for ", "gate",
           p->checksum, p->rows);
    for (int i = 0; i < s->nvariants; i++)
        printf("%s%s", i ? ", " : "", s->variants[i]);
    printf("\n");
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
                          "amalgamation_version", p->version ? p->version : "?");
    if (o) /* what the profile holds (the profile check's counts) */
        json_object_set_new(json_object_get(o, "pgo"), "profile", profile_health_json(&p->health));
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
    struct variant v[4];
    int nv = 2 + p->nbolt;
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
    for (int i = 0; i < p->nbolt; i++) {
        v[2 + i].name = p->bolt[i].name;
        v[2 + i].library = p->bolt[i].output;
        v[2 + i].compiler = p->cc.version;
        v[2 + i].cflags = p->flags[strcmp(p->bolt[i].name, "bolt") ? BUILD_PGO : BUILD_BASELINE];
    }

    memset(&cfg, 0, sizeof(cfg));
    cfg.variants = v;
    cfg.nvariants = nv;
    cfg.workloads = s->bench;
    cfg.nworkloads = s->nbench;
    cfg.threads = s->threads;
    cfg.nthreads = s->nthreads;
    cfg.rounds = s->rounds;
    cfg.target_ci = s->target_ci;
    cfg.max_time_s = s->max_time_s;
    cfg.cs_rounds = s->cs_rounds;
    cfg.time_s = s->time_s;
    cfg.tables = s->tables;
    cfg.table_size = s->table_size;
    cfg.workdir = p->rundir;
    cfg.pgolab = pgolab;
    cfg.bench_args = NULL;
    cfg.seed = s->seed;
    cfg.progress = true; /* a status line on a terminal, else a line per phase */
    cfg.no_metrics = s->no_metrics;
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
    for (int i = 0; i < nv; i++) {
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
    if (s->profile && (rc = experiment_profile_setup(&cfg, s->profile_freq)) < 0)
        goto out;
    cfg.keep_run_json = s->output != NULL;
    int run_rc = experiment_run(&cfg, &res);
    if (experiment_record_finish(&cfg, &res, run_rc) < 0 && run_rc == 0)
        run_rc = -1;
    if (res.nruns > 0)
        experiment_report_text(stdout, &cfg, &res);
    if (res.nruns > 0 && nv > 2) {
        struct strbuf sb = STRBUF_INIT;
        strbuf_init(&sb, 0);
        report_steps(&sb, &cfg, &res);
        fputs(sb.buf, stdout);
        strbuf_release(&sb);
    }
    if (cfg.profile && res.nruns > 0)
        experiment_profile_report(stdout, &cfg, &res, cfg.profile_dir, PROFILE_TOP_DEFAULT);
    rc = run_rc == 0 ? 0 : res.signal ? 2 : 1;
    if (s->output && experiment_write_json(s->output, &cfg, &res) < 0 && !rc)
        rc = 1;
    if (rc == 0 && s->fail_pct >= 0 && report_fail_if_slower(&cfg, &res, s->fail_pct))
        rc = 3;
    experiment_profile_release(&cfg);
    experiment_result_release(&res);
out:
    for (int i = 0; i < nv; i++)
        experiment_variant_release(&v[i]);
    return rc < 0 ? 1 : rc;
}

/* Correctness gate on fresh data in the run directory (log: ROOT/gate.log). */
static int gate(struct sqlite_pgo *p, const struct pgo_settings *s, const char *pgolab)
{
    char *db = path_join(p->rundir, "gate.db");
    char *log = path_join(p->root, "gate.log");
    struct sqlite_bench b = { .pgolab = pgolab, .db = db, .tables = s->tables,
                              .table_size = s->table_size, .log = log };
    const char *names[4] = { "baseline", "pgo" };
    const char *libs[4] = { p->build[BUILD_BASELINE].lib, p->build[BUILD_PGO].lib };
    for (int i = 0; i < p->nbolt; i++) {
        names[2 + i] = p->bolt[i].name;
        libs[2 + i] = p->bolt[i].output;
    }
    int rc = stamp_write(log, "");
    if (rc == 0)
        rc = sqlite_gate(&b, names, libs, 2 + p->nbolt, &p->checksum, &p->rows);
    free(db);
    free(log);
    return rc;
}

/* The BOLT variant i: instrument its input, train the instrumented copy with the training
 * workloads of the pgo build, merge, optimize; reused when the stamp (input, training, BOLT
 * options) matches and the optimize log and output are there. */
static int bolt_variant_build(struct sqlite_pgo *p, const struct pgo_settings *s,
                              const char *pgolab, int i)
{
    struct bolt_variant *v = &p->bolt[i];
    const struct lib_build *in = &p->build[strcmp(v->name, "bolt") ? BUILD_PGO : BUILD_BASELINE];
    struct strbuf stamp = STRBUF_INIT;
    char *stamp_path = path_join(v->dir, "bolt.stamp");
    char *db = path_join(p->rundir, "train-bolt.db");
    char *log = path_join(v->dir, "training.log");
    const char *opt[] = { BOLT_OPT_OPTIONS, NULL };
    int rc = -1;

    strbuf_init(&stamp, 0);
    strbuf_addf(&stamp, "input-sha256: %s\ntrain:", in->sha256);
    for (int k = 0; k < s->ntrain; k++)
        strbuf_addf(&stamp, " %s", s->train[k]);
    strbuf_addf(&stamp, "\ntime: %d\nthreads: %d\ntables: %d\ntable-size: %d\noptions:",
                s->train_time, s->train_threads, s->tables, s->table_size);
    for (int k = 0; opt[k]; k++)
        strbuf_addf(&stamp, " %s", opt[k]);
    strbuf_addf(&stamp, "\n");
    v->input = in->lib;
    if (!s->rebuild && stamp_matches(stamp_path, stamp.buf) && bolt_read_log(v) == 0) {
        p->bolt_cached[i] = true;
        rc = 0;
        goto out;
    }
    unlink(stamp_path);
    if (bolt_instrument(v) < 0 || stamp_write(log, "") < 0)
        goto out;
    struct sqlite_bench b = {
        .pgolab = pgolab, .library = v->instrumented, .db = db,
        .tables = s->tables, .table_size = s->table_size, .log = log,
    };
    uint64_t t0 = now_ns();
    if (sqlite_train(&b, s->train, s->ntrain, s->train_time, s->train_threads) < 0)
        goto out;
    p->bolt_train_seconds[i] = (double)(now_ns() - t0) / 1e9;
    if (bolt_merge(v) < 0 || bolt_optimize(v) < 0)
        goto out;
    rc = stamp_write(stamp_path, stamp.buf);
out:
    strbuf_release(&stamp);
    free(stamp_path);
    free(db);
    free(log);
    return rc;
}

/* Stop with exit code 2 when a signal arrived (the children died with it). */
#define CHECK_INTERRUPT()                                                   \
    do {                                                                    \
        if (interrupted) {                                                  \
            progress_done();                                                \
            error("interrupted (signal %d); the same command continues "    \
                  "(what finished is reused)", (int)interrupted);           \
            rc = 2;                                                         \
            goto out;                                                       \
        }                                                                   \
    } while (0)

int pgo_sqlite_run(const struct pgo_settings *s)
{
    struct sqlite_pgo p;
    struct sig_saved saved;
    struct store *store = NULL;
    char *pgolab = abs_path("/proc/self/exe");
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    int rc = 1;

    memset(&p, 0, sizeof(p));
    p.lock_fd = -1;
    p.r = s->recipe;
    interrupted = 0;
    sig_catch(on_signal, &saved);

    for (int i = 2; i < s->nvariants && p.nbolt < 2; i++) {
        int k = p.nbolt++;
        p.bolt[k].name = s->variants[i];
        p.bolt[k].append_pid = true; /* every process that loads the library writes its own */
    }
    if (p.nbolt && bolt_tools_check() < 0)
        goto out;
    if (p.r->nsteps != 1 || !p.r->strict_profile || p.r->build_dir != RECIPE_BUILD_DIR_PER_VARIANT ||
        p.r->nlog_errors) {
        error("%s: a library recipe has one step (the library's compile), a strict profile "
              "check, and no build_dir or log_errors (docs/recipes.md)", p.r->path);
        goto out;
    }
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
    if (cc_probe(s->cc, &p.cc) < 0 ||
        recipe_check_tools(p.r, p.r->tools, p.r->ntools, NULL, NULL) < 0)
        goto fail;
    /* a source directory is checked before anything is written */
    if (s->source && is_dir(s->source) && pgo_source_resolve(p.r, s->source, NULL, &p.source) < 0)
        goto fail;
    if ((p.lock_fd = workdir_lock(p.workdir, s->workdir_opt)) < 0)
        goto fail;
    /* 1. source, 2. amalgamation (the recipe's prepare steps) */
    char *srcdir = path_join(p.workdir, "src");
    int src_rc = p.source ? 0 : pgo_source_resolve(p.r, s->source, srcdir, &p.source);
    free(srcdir);
    if (src_rc < 0)
        goto fail;
    CHECK_INTERRUPT();
    progress_phase_done("source: %s", p.source);
    struct recipe_vars pv = { .cc = s->cc, .cflags = s->cflags, .cxxflags = s->cflags,
                              .jobs = ncpu > 0 ? (int)ncpu : 1 };
    if (pgo_prepare(p.r, p.source, p.workdir, &pv, s->rebuild, &p.prep) < 0)
        goto fail;
    CHECK_INTERRUPT();
    p.version = read_version(p.prep.dir);
    if (p.prep.cached || !p.prep.ran)
        progress_phase_done("%s: %s (%s)", p.r->prepare_name, p.prep.main,
                            p.prep.cached ? "cached" : "prepared already");
    else
        progress_phase_done("%s: %s made in %.0f s", p.r->prepare_name, p.prep.main,
                            p.prep.seconds);

    /* 3. baseline + instrumented in parallel */
    if (prepare_builds(&p, s) < 0)
        goto fail;
    for (int i = 0; i < p.nbolt; i++) {
        p.bolt_dir[i] = path_join(p.root, !strcmp(p.bolt[i].name, "bolt") ? "bolt" : "pgo-bolt");
        p.bolt[i].dir = p.bolt_dir[i];
    }
    char *src_sha = sha256_file(p.prep.main);
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
    if (p.trained_now)
        progress_phase_done("training: %d workload%s on the instrumented build in %.0f s",
                            s->ntrain, s->ntrain == 1 ? "" : "s", p.train_seconds);
    else
        progress_phase_done("training: the profile of an earlier training (cached)");

    /* the pgo build reads the profile: its identity is part of the stamp */
    p.pgo_stamp_extra = xasprintf("%s\nprofile: %s", p.stamp_extra, p.profile.id);
    p.build[BUILD_PGO].stamp_extra = p.pgo_stamp_extra;
    free(p.progress_what);
    p.progress_what = xasprintf("build: pgo (%s %s)", s->cc, s->cflags);
    if (lib_build_parallel(&p.build[BUILD_PGO], 1, 1, p.progress_what) < 0)
        goto fail;
    CHECK_INTERRUPT();

    /* 5. BOLT variants, on the baseline and pgo builds */
    for (int i = 0; i < p.nbolt; i++) {
        uint64_t bolt_t0 = now_ns();
        if (bolt_variant_build(&p, s, pgolab, i) < 0)
            goto fail;
        CHECK_INTERRUPT();
        if (p.bolt_cached[i])
            progress_phase_done("bolt: %s from an earlier run (cached)", p.bolt[i].name);
        else
            progress_phase_done("bolt: %s made in %.0f s (BOLT profile for %d of %d functions)",
                                p.bolt[i].name, (double)(now_ns() - bolt_t0) / 1e9,
                                p.bolt[i].profiled, p.bolt[i].functions);
    }

    /* 6. correctness gate (every variant against the baseline) */
    uint64_t gate_t0 = now_ns();
    if (gate(&p, s, pgolab) < 0)
        goto fail;
    CHECK_INTERRUPT();
    progress_phase_done(p.nbolt ? "correctness gate: every variant returns the baseline's results "
                                  "(%.0f s)"
                                : "correctness gate: baseline and pgo return the same results (%.0f s)",
                        (double)(now_ns() - gate_t0) / 1e9);
    print_summary(&p, s);

    /* 7. measurement (the engine's catch nests in this one and
     * takes over a signal that arrived before it) */
    rc = 0;
    if (s->measure) {
        printf("\n");
        rc = measure(&p, s, pgolab, store);
        if (rc == 1)
            CHECK_INTERRUPT(); /* stopped before the engine's own catch */
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

