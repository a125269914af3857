/* target_sqlite: the embedded-library target of the pipeline (struct pgo_target, target.h;
 * pipeline.c runs its stages in order) for a recipe whose product is a library: `pgolab pgo
 * sqlite`, recipes/sqlite.json, or a copy. The library is measured inside the benchmark
 * process (`pgolab bench --sqlite-library`), so this target is SQLite's. The facts of the
 * recipe (source package, expected files, the prepare steps that make the amalgamation, the
 * compile step, where the PGO flags go, the library's name) come from the recipe; this file
 * has the rest: the prepare steps run, the baseline and instrumented libraries compiled in
 * parallel (toolchain/compile.c), training and the gate with `pgolab bench --sqlite-library`
 * children (sqlite_bench.c), the profile check, the pgo build, the BOLT variants of a
 * library, the summary, and the settings measure.c records. The cache layout under the work
 * directory is this file's: WORKDIR/amalg-KEY,
 * WORKDIR/build-CC-KEY/{baseline,instrumented,pgo,profile,bolt,pgo-bolt}. Another group of
 * build settings of --variants (clang:pgo, -O3:baseline) is a pipeline of its own with this
 * target's state (library_share()), building only what its kinds need in its own
 * build-CC-KEY; every pipeline's measured libraries become its p->builds. struct pgo_library
 * is this target's part of the pipeline's state; pipeline.c owns the rest (recipe, compiler,
 * source, root, run directory, gate result). */
#include "pgo/sqlite_bench.h"
#include "experiment/record.h"
#include "pgo/source.h"
#include "pgo/stages.h"
#include "pgo/target.h"
#include "store/store.h"
#include "toolchain/bolt.h"
#include "util/fs.h"
#include "util/progress.h"
#include "util/strbuf.h"
#include "util/util.h"

#include <assert.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* What the library branch made; library_release() frees it. */
struct pgo_library {
    struct pgo_prepared prep;    /* the amalgamation (or the source, prepared already) */
    char *version;               /* SQLITE_VERSION of the prepared sqlite3.h */
    char *profile_dir, *profdata;
    bool rundir_is_shm;          /* p->rundir is a private /dev/shm/pgolab.XXXXXX, else
                                  * WORKDIR/run */
    char *dir[BUILD_NPHASES];
    struct argvec argv[BUILD_NPHASES];
    char *flags[BUILD_NPHASES];  /* cflags + PGO flags of each build, for the fingerprint */
    struct lib_build build[BUILD_NPHASES];
    struct profile_info profile;
    struct profile_health health;/* the profile check's counts */
    struct profile_corrections corrections; /* what GCC corrected in the pgo build's profile */
    bool trained_now;
    double train_seconds;
    char *stamp_extra, *pgo_stamp_extra, *progress_what;
    /* BOLT variants (--variants=...,bolt,pgo+bolt): bolt[i] optimizes the baseline (bolt) or
     * the pgo build (pgo+bolt), in ROOT/bolt, ROOT/pgo-bolt */
    struct bolt_variant bolt[2];
    char *bolt_dir[2];
    bool bolt_cached[2];
    double bolt_train_seconds[2];
};

/* Whether p builds and measures variant kind: --cc and --cflags' pipeline always baseline and
 * pgo (and its BOLT variants), another group of build settings (p->label) its own kinds. */
static bool library_wants(const struct pgo_pipeline *p, const char *kind)
{
    if (!p->label && (!strcmp(kind, "baseline") || !strcmp(kind, "pgo")))
        return true;
    for (int i = 0; i < p->rq->nvariants; i++)
        if (!strcmp(p->rq->variants[i], kind))
            return true;
    return false;
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
static int make_rundir(struct pgo_pipeline *p)
{
    struct pgo_library *l = p->lib;
    const struct pgo_request *rq = p->rq;
    if (access("/dev/shm", W_OK | X_OK) == 0 &&
        (p->rundir = private_tmpdir("/dev/shm", "pgolab"))) {
        l->rundir_is_shm = true;
        return 0;
    }
    p->rundir = path_join(rq->workdir, "run");
    return mkdir_p(p->rundir);
}

/* Copy the *.log files of the run directory to WORKDIR/last-run before it is removed. */
static void save_run_logs(const struct pgo_pipeline *p)
{
    const struct pgo_request *rq = p->rq;
    struct argvec logs = ARGVEC_INIT;
    list_files(&logs, p->rundir, ".log");
    if (logs.n) {
        char *dest = path_join(rq->workdir, "last-run");
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

/* The recipe's build step expanded for phase ph into l->argv[ph] (the step runs in the
 * phase's directory, which is also its {prefix}). */
static int expand_build(struct pgo_pipeline *p, int ph,
                        struct argvec *pgo_flags)
{
    struct pgo_library *l = p->lib;
    const struct recipe *r = &p->recipe;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    char *flags_str = argvec_join(pgo_flags);
    struct recipe_vars v = {
        .source = p->source, .build = l->dir[ph], .prefix = l->dir[ph],
        .profile_dir = l->profile_dir, .phase = build_phase_name((enum build_phase)ph),
        .prepared = l->prep.dir, .cc = p->cc_name, .cflags = p->cflags, .cxxflags = p->cflags,
        .pgo_flags = flags_str, .pgo_flags_list = argvec_argv(pgo_flags),
        .jobs = ncpu > 0 ? (int)ncpu : 1,
        .phase_options = (const char *const *)r->phase_options[ph],
    };
    struct argvec env = ARGVEC_INIT;
    char *cwd = NULL;
    recipe_expand_step(&r->steps[0], &v, &l->argv[ph], &env, &cwd);
    int rc = 0;
    if (strcmp(cwd, l->dir[ph]) || env.n)
        rc = error("%s: a library recipe's step runs in {build} with no env (steps[0] %s)",
                   r->path, r->steps[0].name);
    free(flags_str);
    free(cwd);
    argvec_clear(&env);
    return rc;
}

static int prepare_builds(struct pgo_pipeline *p)
{
    struct pgo_library *l = p->lib;
    const struct pgo_request *rq = p->rq;
    char *keytext = xasprintf("%s\n%s\n%s\n%s%s", l->prep.main, p->cc_name, p->cc.version,
                              p->cflags, p->nbolt ? "\nbolt" : "");
    char *key = path_key(keytext);
    char *name = xasprintf("build-%s-%s", cc_family_name(p->cc.family), key);
    p->root = path_join(rq->workdir, name);
    free(keytext);
    free(key);
    free(name);
    l->profile_dir = path_join(p->root, "profile");
    if (p->cc.family == CC_CLANG) {
        char *name2 = xasprintf("%s.profdata", p->recipe.name);
        l->profdata = path_join(p->root, name2);
        free(name2);
    }

    for (int ph = 0; ph < BUILD_NPHASES; ph++) {
        l->dir[ph] = path_join(p->root, build_phase_name((enum build_phase)ph));
        struct pgo_paths paths = { l->profile_dir, l->profdata, l->dir[ph] };
        struct argvec pf = ARGVEC_INIT, fl = ARGVEC_INIT;
        if (p->recipe.flags == RECIPE_FLAGS_COMPILER &&
            pgo_phase_flags(&pf, p->cc.family, (enum build_phase)ph, &paths) < 0) {
            argvec_clear(&pf);
            return -1;
        }
        /* with a BOLT variant, baseline and pgo are BOLT's inputs: linked the recipe's bolt
         * way, so that each BOLT variant differs from its input by BOLT alone */
        if (p->nbolt && ph != BUILD_INSTRUMENTED) {
            argvec_pushv(&pf, (const char *const *)pgo_bolt_cflags(p));
            argvec_pushv(&pf, (const char *const *)p->recipe.bolt_link_flags);
        }
        int erc = expand_build(p, ph, &pf);
        argvec_split(&fl, p->cflags);
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
            argvec_split(&l->argv[ph], extra);
            argvec_split(&fl, extra);
        }
        l->flags[ph] = argvec_join(&fl);
        argvec_clear(&fl);

        struct lib_build *b = &l->build[ph];
        b->name = build_phase_name((enum build_phase)ph);
        b->phase = (enum build_phase)ph;
        b->dir = l->dir[ph];
        b->output = p->recipe.library;
        b->argv = argvec_argv(&l->argv[ph]);
        b->force = rq->rebuild;
        b->stop = p->interrupted;
    }
    return mkdir_p(p->root);
}

/* 1 if the profile dir holds non-empty raw profile data (checked quietly). */
static bool profile_present(const struct pgo_pipeline *p)
{
    struct pgo_library *l = p->lib;
    struct argvec files = ARGVEC_INIT;
    bool found = false;
    list_files(&files, l->profile_dir, p->cc.family == CC_GCC ? ".gcda" : ".profraw");
    for (int i = 0; i < files.n && !found; i++)
        found = file_size(files.v[i]) > 0;
    argvec_clear(&files);
    return found;
}

/* The profile check (profile_check.h): the training ran in pgolab's own children, as this
 * user; log (NULL for a cached profile) is where they printed. */
static int check_health(struct pgo_pipeline *p, const char *log, int64_t start)
{
    struct pgo_library *l = p->lib;
    char *path = path_join(p->root, "profile.health");
    char *const logs[] = { (char *)log, NULL };
    struct profile_check_in in = {
        .cc = &p->cc, .profile_dir = l->profile_dir, .profdata = l->profdata,
        .notes_dir = l->dir[BUILD_INSTRUMENTED], .hot = p->recipe.hot_functions, .logs = logs,
        .train_uid = geteuid(), .train_user = NULL, .train_start = start,
    };
    int rc = profile_health_run(&in, "training", path, log != NULL, &l->health);
    free(path);
    return rc;
}

/* The training's lines of a stamp: the workloads and how they ran. */
static void stamp_training(struct strbuf *sb, const struct pgo_request *rq)
{
    strbuf_addstr(sb, "train:");
    for (int i = 0; i < rq->ntrain; i++)
        strbuf_addf(sb, " %s", rq->train[i]);
    strbuf_addf(sb, "\ntime: %d\nthreads: %d\ntables: %d\ntable-size: %d\n", rq->train_time,
                rq->train_threads, rq->tables, rq->table_size);
}

/* The training workloads on library (an instrumented build, or BOLT's instrumented copy) in
 * `pgolab bench` children with env added, their output in log; *seconds its wall time. */
static int train_library(const struct pgo_pipeline *p, const char *library, const char *db,
                         const char *const *env, const char *log, double *seconds)
{
    const struct pgo_request *rq = p->rq;
    struct sqlite_bench b = {
        .pgolab = p->pgolab, .library = library, .db = db, .tables = rq->tables,
        .table_size = rq->table_size, .env = env, .log = log,
    };
    uint64_t t0 = now_ns();
    if (sqlite_train(&b, rq->train, rq->ntrain, rq->train_time, rq->train_threads) < 0)
        return -1;
    *seconds = (double)(now_ns() - t0) / 1e9;
    return 0;
}

/* Why an earlier training is not reused, one line on stderr ("retraining sqlite: --train-time
 * changed since the last training"); nothing for a first training. */
static void train_why(const struct pgo_pipeline *p, const char *stamp_path, const char *stamp)
{
    static const struct {
        const char *key, *words;
    } causes[] = {
        { "instrumented-sha256", "the instrumented build changed" }, { "train", "--train changed" },
        { "time", "--train-time changed" }, { "threads", "--train-threads changed" },
        { "tables", "--tables changed" }, { "table-size", "--table-size changed" },
    };
    char *changed = p->rq->rebuild ? NULL : stamp_first_change(stamp_path, stamp);
    const char *words = NULL;
    for (size_t i = 0; changed && i < ARRAY_SIZE(causes) && !words; i++)
        if (!strcmp(changed, causes[i].key))
            words = causes[i].words;
    progress_done();
    if (p->rq->rebuild)
        fprintf(stderr, "retraining %s: --rebuild was given\n", p->recipe.name);
    else if (changed)
        fprintf(stderr, "retraining %s: %s since the last training\n", p->recipe.name,
                words ? words : "its stamp changed");
    else if (is_file(stamp_path)) /* the same training, its data gone */
        fprintf(stderr, "retraining %s: its profile data in %s was removed\n", p->recipe.name,
                p->lib->profile_dir);
    free(changed);
}

/* Train unless the profile data of an identical training is already there. */
static int train_profile(struct pgo_pipeline *p)
{
    struct pgo_library *l = p->lib;
    const struct pgo_request *rq = p->rq;
    struct strbuf stamp = STRBUF_INIT;
    char *stamp_path = path_join(p->root, "training.stamp");
    char *db = path_join(p->rundir, "train.db");
    char *log = path_join(p->root, "training.log");
    char *env_profile = xasprintf("LLVM_PROFILE_FILE=%s/%%p-%%m.profraw", l->profile_dir);
    const char *env[] = { env_profile, NULL };
    int rc = -1;

    strbuf_init(&stamp, 0);
    strbuf_addf(&stamp, "instrumented-sha256: %s\n", l->build[BUILD_INSTRUMENTED].sha256);
    stamp_training(&stamp, rq);

    if (!rq->rebuild && stamp_matches(stamp_path, stamp.buf) && profile_present(p)) {
        rc = profile_collect(&p->cc, l->profile_dir, l->profdata, &l->profile);
        if (rc == 0)
            rc = check_health(p, NULL, 0);
        goto out;
    }
    train_why(p, stamp_path, stamp.buf);
    unlink(stamp_path);
    if (profile_wipe(l->profile_dir) < 0 || stamp_write(log, "") < 0)
        goto out;
    int64_t start = (int64_t)wall_time();
    if (train_library(p, l->build[BUILD_INSTRUMENTED].lib, db,
                      p->cc.family == CC_CLANG ? env : NULL, log, &l->train_seconds) < 0)
        goto out;
    l->trained_now = true;
    if (profile_collect(&p->cc, l->profile_dir, l->profdata, &l->profile) < 0 ||
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

static void print_build_line(const char *prefix, const char *label, const struct lib_build *b)
{
    char *name = xasprintf("%s%s", prefix, label);
    printf("  %-13s %s  sha256 %.16s  ", name, b->lib, b->sha256);
    free(name);
    if (b->skipped)
        printf("(cached)\n");
    else
        printf("(%.1f s)\n", b->seconds);
}

/* The builds and the training of p, their names after prefix ("" for --cc and --cflags' own,
 * "clang:" for another group of build settings). */
static void print_builds(const struct pgo_pipeline *p, const char *prefix)
{
    struct pgo_library *l = p->lib;
    const struct pgo_request *rq = p->rq;
    if (library_wants(p, "baseline"))
        print_build_line(prefix, "baseline", &l->build[BUILD_BASELINE]);
    if (!library_wants(p, "pgo"))
        return;
    print_build_line(prefix, "instrumented", &l->build[BUILD_INSTRUMENTED]);
    char *name = xasprintf("%straining", prefix);
    printf("  %-13s", name);
    free(name);
    for (int i = 0; i < rq->ntrain; i++)
        printf("%s%s", i ? "," : " ", rq->train[i]);
    char *cov = profile_health_line(&l->health, p->cc.family == CC_GCC);
    printf(", %d s each, %d threads: profile %s (%d %s file%s) ", rq->train_time, rq->train_threads,
           cov, l->profile.files, p->cc.family == CC_GCC ? ".gcda" : ".profraw",
           l->profile.files == 1 ? "" : "s");
    free(cov);
    if (l->trained_now)
        printf("(%.1f s)\n", l->train_seconds);
    else
        printf("(cached)\n");
    print_build_line(prefix, "pgo", &l->build[BUILD_PGO]);
    printf("  %-13s pgo flags: %s\n", "", l->flags[BUILD_PGO]);
    if (p->cc.family == CC_GCC) {
        char *corr = profile_corrections_line(&l->corrections);
        printf("  %-13s %s\n", "", corr);
        free(corr);
    }
}

/* The summary that opens the report (stdout). */
static void library_summary(const struct pgo_pipeline *p)
{
    struct pgo_library *l = p->lib;
    const struct recipe *r = &p->recipe;
    printf("pgolab pgo %s: %s %s, %s, %s\n", r->name, r->title, l->version, p->cc.version,
           *p->cflags ? p->cflags : "(no cflags)");
    printf("  %-13s %s%s%s%s\n", "source", p->source, r->nprepare && !l->prep.ran ? " (" : "",
           r->nprepare && !l->prep.ran ? r->prepare_name : "",
           r->nprepare && !l->prep.ran ? ")" : "");
    if (l->prep.ran) {
        printf("  %-13s %s  ", r->prepare_name, l->prep.main);
        if (l->prep.cached)
            printf("(cached)\n");
        else
            printf("(%.1f s)\n", l->prep.seconds);
    }
    print_builds(p, "");
    for (int i = 0; i < p->nbolt; i++) {
        const struct bolt_variant *v = &l->bolt[i];
        printf("  %-13s %s  ", v->name, v->output);
        if (l->bolt_cached[i])
            printf("(cached)\n");
        else
            printf("(BOLT %.1f s, training %.1f s)\n", v->seconds, l->bolt_train_seconds[i]);
        printf("  %-13s BOLT profile: %d of %d functions with profile, %d .fdata file%s merged "
               "into %lld bytes; dyno-stats: %s\n", "", v->profiled, v->functions,
               v->fdata_files, v->fdata_files == 1 ? "" : "s", (long long)v->fdata_bytes,
               v->dyno_stats);
    }
    /* the other groups of build settings (--variants=clang:pgo,-O3:pgo) */
    for (int g = 0; g < p->ngroups; g++) {
        const struct pgo_pipeline *gp = &p->groups[g];
        char *prefix = xasprintf("%s:", gp->label);
        printf("  %-13s %s, %s\n", prefix, gp->cc.version, *gp->cflags ? gp->cflags
                                                                          : "(no cflags)");
        print_builds(gp, prefix);
        free(prefix);
    }
    printf("  %-13s oltp_read_only verify: checksum %s over %lld rows, identical for ", "gate",
           p->gate_checksum, p->gate_rows);
    const struct pgo_build **m;
    int n = pgo_measured_builds(p, &m);
    for (int i = 0; i < n; i++)
        printf("%s%s", i ? ", " : "", m[i]->name);
    free(m);
    printf("\n");
    fflush(stdout);
}

/* The pgo-specific settings recorded with the experiment (JSON object text; caller frees):
 * the training, the amalgamation's version, the profile check's counts (of every group's
 * training, "clang:-O3" for another group's), and --search's phase. */
static char *library_settings(const struct pgo_pipeline *p)
{
    struct pgo_library *l = p->lib;
    const struct pgo_request *rq = p->rq;
    json_t *train = json_array();
    for (int i = 0; i < rq->ntrain; i++)
        json_array_append_new(train, json_string(rq->train[i]));
    json_t *o = json_pack("{s:{s:o,s:i,s:i,s:s}}", "pgo", "train", train, "train_time",
                          rq->train_time, "train_threads", rq->train_threads,
                          "amalgamation_version", l->version ? l->version : "?");
    json_t *pgo = json_object_get(o, "pgo");
    if (o) /* what the profile holds (the profile check's counts) */
        json_object_set_new(pgo, "profile", profile_health_json(&l->health));
    if (o) /* the target, as the servers record it (pgolab export finds the experiment by it) */
        json_object_set_new(pgo, "target", json_string(p->recipe.name));
    if (o && l->version) /* the version a package of the build is named for */
        json_object_set_new(pgo, "source_version", json_string(l->version));
    if (o && rq->ntrain == 1) { /* and the profile by its trainer, as the servers' "profiles" */
        json_t *by = json_object();
        json_object_set_new(by, rq->train[0], profile_health_json(&l->health));
        for (int g = 0; g < p->ngroups; g++)
            if (library_wants(&p->groups[g], "pgo")) {
                char *key = xasprintf("%s:%s", p->groups[g].label, rq->train[0]);
                json_object_set_new(by, key, profile_health_json(&p->groups[g].lib->health));
                free(key);
            }
        json_object_set_new(pgo, "profiles", by);
    }
    if (o && p->cc.family == CC_GCC) /* and what GCC corrected in it, as the servers' */
        json_object_set_new(pgo, "profile_corrections",
                            json_pack("{s:o}", "pgo", profile_corrections_json(&l->corrections)));
    if (o && p->ngroups) { /* only then: the settings of a run without groups unchanged */
        json_t *profiles = json_object();
        for (int g = 0; g < p->ngroups; g++)
            if (library_wants(&p->groups[g], "pgo"))
                json_object_set_new(profiles, p->groups[g].label,
                                    profile_health_json(&p->groups[g].lib->health));
        json_object_set_new(pgo, "group_profiles", profiles);
    }
    if (o && p->measure_only) /* --search's two experiments (search.c) */
        json_object_set_new(pgo, "search", json_string(rq->measure_kind == MEASURE_INSTRUCTIONS
                                                           ? "screen" : "confirm"));
    char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    if (!text)
        die("out of memory");
    return text;
}

/* Correctness gate on fresh data in the run directory (log: ROOT/gate.log): every measured
 * library of every group against --cc's baseline. */
static int library_gate(struct pgo_pipeline *p)
{
    const struct pgo_request *rq = p->rq;
    char *db = path_join(p->rundir, "gate.db");
    char *log = path_join(p->root, "gate.log");
    struct sqlite_bench b = { .pgolab = p->pgolab, .db = db, .tables = rq->tables,
                              .table_size = rq->table_size, .log = log };
    const struct pgo_build **m;
    int n = pgo_measured_builds(p, &m);
    const char **names = xcalloc((size_t)n + 1, sizeof(*names));
    const char **libs = xcalloc((size_t)n + 1, sizeof(*libs));
    for (int i = 0; i < n; i++) {
        names[i] = m[i]->name;
        libs[i] = m[i]->product;
    }
    assert(n >= 2 && !strcmp(names[0], "baseline"));
    int rc = stamp_write(log, "");
    if (rc == 0)
        rc = sqlite_gate(&b, names, libs, n, &p->gate_checksum, &p->gate_rows);
    free(names);
    free(libs);
    free(m);
    free(db);
    free(log);
    return rc;
}

/* The BOLT variant i: instrument its input, train the instrumented copy with the training
 * workloads of the pgo build, merge, optimize; reused when the stamp (input, training, BOLT
 * options) matches and the optimize log and output are there. */
static int bolt_variant_build(struct pgo_pipeline *p, int i)
{
    struct pgo_library *l = p->lib;
    const struct pgo_request *rq = p->rq;
    struct bolt_variant *v = &l->bolt[i];
    const struct lib_build *in = &l->build[strcmp(v->name, "bolt") ? BUILD_PGO : BUILD_BASELINE];
    struct strbuf stamp = STRBUF_INIT;
    char *stamp_path = path_join(v->dir, "bolt.stamp");
    char *db = path_join(p->rundir, "train-bolt.db");
    char *log = path_join(v->dir, "training.log");
    const char *opt[] = { BOLT_OPT_OPTIONS, NULL };
    int rc = -1;

    strbuf_init(&stamp, 0);
    strbuf_addf(&stamp, "input-sha256: %s\n", in->sha256);
    stamp_training(&stamp, rq);
    strbuf_addstr(&stamp, "options:");
    for (int k = 0; opt[k]; k++)
        strbuf_addf(&stamp, " %s", opt[k]);
    strbuf_addf(&stamp, "\n");
    v->input = in->lib;
    if (!rq->rebuild && stamp_matches(stamp_path, stamp.buf) && bolt_read_log(v) == 0) {
        l->bolt_cached[i] = true;
        rc = 0;
        goto out;
    }
    unlink(stamp_path);
    if (bolt_instrument(v) < 0 || stamp_write(log, "") < 0)
        goto out;
    if (train_library(p, v->instrumented, db, NULL, log, &l->bolt_train_seconds[i]) < 0)
        goto out;
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


/* ---- the stages ----------------------------------------------------------------------- */

/* Before the results file is opened: p->lib allocated, the BOLT variants' tools, the recipe's
 * shape (one compile step, a strict profile check). */
static int library_check(struct pgo_pipeline *p)
{
    const struct pgo_request *rq = p->rq;
    struct pgo_library *l = p->lib = xcalloc(1, sizeof(*p->lib));
    /* --variants of a library (cli/cmd_pgo.c): baseline, pgo, then the BOLT variants */
    for (int i = 2; i < rq->nvariants && p->nbolt < 2; i++) {
        int k = p->nbolt++;
        l->bolt[k].name = rq->variants[i];
        l->bolt[k].append_pid = true; /* every process that loads the library writes its own */
    }
    if (p->nbolt && bolt_tools_check() < 0)
        return -1;
    const struct recipe *r = &p->recipe;
    if (r->nsteps != 1 || !r->strict_profile || r->build_dir != RECIPE_BUILD_DIR_PER_VARIANT ||
        r->nlog_errors)
        return error("%s: a library recipe has one step (the library's compile), a strict "
                     "profile check, and no build_dir or log_errors (docs/recipes.md)", r->path);
    return 0;
}

/* After the source: the recipe's prepare steps (the amalgamation, cached), phase lines. */
static int library_prepare(struct pgo_pipeline *p)
{
    const struct pgo_request *rq = p->rq;
    struct pgo_library *l = p->lib;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    progress_phase_done("source: %s", p->source);
    struct recipe_vars pv = { .cc = rq->cc, .cflags = rq->cflags, .cxxflags = rq->cflags,
                              .jobs = ncpu > 0 ? (int)ncpu : 1 };
    if (pgo_prepare(&p->recipe, p->source, rq->workdir, &pv, rq->rebuild, p->interrupted,
                    &l->prep) < 0 ||
        *p->interrupted)
        return -1;
    l->version = read_version(l->prep.dir);
    if (l->prep.cached || !l->prep.ran)
        progress_phase_done("%s: %s (%s)", p->recipe.prepare_name, l->prep.main,
                            l->prep.cached ? "cached" : "prepared already");
    else
        progress_phase_done("%s: %s made in %.0f s", p->recipe.prepare_name, l->prep.main,
                            l->prep.seconds);
    return 0;
}

/* p->root and every build's command; the baseline and instrumented libraries in parallel
 * (another group: those its kinds need). */
static int library_builds(struct pgo_pipeline *p)
{
    struct pgo_library *l = p->lib;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    if (prepare_builds(p) < 0)
        return -1;
    for (int i = 0; i < p->nbolt; i++) {
        l->bolt_dir[i] = path_join(p->root, !strcmp(l->bolt[i].name, "bolt") ? "bolt" : "pgo-bolt");
        l->bolt[i].dir = l->bolt_dir[i];
    }
    char *src_sha = sha256_file(l->prep.main);
    if (!src_sha)
        return -1;
    l->stamp_extra = xasprintf("source-sha256: %s\ncompiler: %s", src_sha, p->cc.version);
    free(src_sha);
    l->build[BUILD_BASELINE].stamp_extra = l->stamp_extra;
    l->build[BUILD_INSTRUMENTED].stamp_extra = l->stamp_extra;
    /* another group's baseline only when asked for, the instrumented build for its pgo */
    bool want_base = library_wants(p, "baseline"), want_pgo = library_wants(p, "pgo");
    assert(want_base || want_pgo);
    l->progress_what = xasprintf("build: %s%s (%s %s)", want_base ? "baseline" : "",
                                 want_pgo ? want_base ? " + instrumented" : "instrumented" : "",
                                 p->cc_name, p->cflags);
    struct lib_build *first = &l->build[want_base ? BUILD_BASELINE : BUILD_INSTRUMENTED];
    int n = want_base + want_pgo;
    return lib_build_parallel(first, n, ncpu >= 2 ? n : 1, l->progress_what);
}

/* The run directory (unless shared), then training with `bench --sqlite-library` children
 * (cached when the stamp of an identical training matches) and the profile check; nothing for
 * a group without pgo. */
static int library_train(struct pgo_pipeline *p)
{
    const struct pgo_request *rq = p->rq;
    struct pgo_library *l = p->lib;
    if ((!p->rundir && make_rundir(p) < 0))
        return -1;
    if (!library_wants(p, "pgo"))
        return 0;
    if (train_profile(p) < 0 || *p->interrupted)
        return -1;
    char *of = p->label ? xasprintf(" (%s)", p->label) : xstrdup("");
    if (l->trained_now)
        progress_phase_done("training%s: %d workload%s on the instrumented build in %.0f s", of,
                            rq->ntrain, rq->ntrain == 1 ? "" : "s", l->train_seconds);
    else
        progress_phase_done("training%s: the profile of an earlier training (cached)", of);
    free(of);
    return 0;
}

/* A measured build of p's (the struct pgo_build that pgo_measured_builds(), the measurement
 * and --search read): name (after the group's label), the library, its directory (the
 * recipe's {prefix}), sha256 and flags. */
static void add_view(struct pgo_pipeline *p, const char *kind, enum build_phase phase,
                     const char *lib, const char *dir, const char *sha256, const char *flags)
{
    struct pgo_build *b = &p->builds[p->nbuilds++];
    b->name = p->label ? xasprintf("%s:%s", p->label, kind) : xstrdup(kind);
    b->pipeline = p;
    b->phase = phase;
    b->product = xstrdup(lib);
    b->prefix = xstrdup(dir);
    b->sha256 = sha256 ? xstrdup(sha256) : NULL;
    b->flags = xstrdup(flags);
    b->cached = true;
}

/* p->builds: its measured libraries, baseline first (another group's only when asked for),
 * then pgo and the BOLT variants. */
static void set_views(struct pgo_pipeline *p)
{
    struct pgo_library *l = p->lib;
    assert(!p->builds);
    p->builds = xcalloc(2 + (size_t)p->nbolt, sizeof(*p->builds));
    const struct lib_build *b = &l->build[BUILD_BASELINE];
    if (library_wants(p, "baseline"))
        add_view(p, "baseline", BUILD_BASELINE, b->lib, b->dir, b->sha256,
                 l->flags[BUILD_BASELINE]);
    b = &l->build[BUILD_PGO];
    if (library_wants(p, "pgo"))
        add_view(p, "pgo", BUILD_PGO, b->lib, b->dir, b->sha256, l->flags[BUILD_PGO]);
    for (int i = 0; i < p->nbolt; i++) {
        bool on_pgo = strcmp(l->bolt[i].name, "bolt") != 0;
        add_view(p, l->bolt[i].name, on_pgo ? BUILD_PGO : BUILD_BASELINE, l->bolt[i].output,
                 l->bolt[i].dir, NULL, l->flags[on_pgo ? BUILD_PGO : BUILD_BASELINE]);
    }
    assert(p->label || (p->nbuilds >= 2 && p->builds[0].phase == BUILD_BASELINE));
}

/* The pgo build (the profile's identity in its stamp), then the BOLT variants; then p->builds:
 * the measured libraries as builds (name, product, prefix, flags), which pgo_measured_builds()
 * returns for the gate, the measurement and --search as for a server. */
static int library_pgo_build(struct pgo_pipeline *p)
{
    struct pgo_library *l = p->lib;
    if (!library_wants(p, "pgo")) {
        set_views(p);
        return 0;
    }
    /* the pgo build reads the profile: its identity is part of the stamp */
    l->pgo_stamp_extra = xasprintf("%s\nprofile: %s", l->stamp_extra, l->profile.id);
    l->build[BUILD_PGO].stamp_extra = l->pgo_stamp_extra;
    free(l->progress_what);
    l->progress_what = xasprintf("build: pgo (%s %s)", p->cc_name, p->cflags);
    if (lib_build_parallel(&l->build[BUILD_PGO], 1, 1, l->progress_what) < 0 || *p->interrupted)
        return -1;
    /* what GCC's -fprofile-correction corrected (the log of a cached build is its own) */
    profile_corrections_release(&l->corrections);
    struct strbuf log = STRBUF_INIT;
    strbuf_init(&log, 0);
    if (strstr(l->flags[BUILD_PGO], "-fopt-info-note-ipa") &&
        strbuf_read_file(&log, l->build[BUILD_PGO].log) == 0 &&
        profile_corrections_read(log.buf, &l->corrections) > 0 && !l->build[BUILD_PGO].skipped) {
        char *line = profile_corrections_line(&l->corrections);
        warning("build pgo: %s", line);
        free(line);
    }
    strbuf_release(&log);
    /* the BOLT variants, on the baseline and pgo builds */
    for (int i = 0; i < p->nbolt; i++) {
        uint64_t bolt_t0 = now_ns();
        if (bolt_variant_build(p, i) < 0 || *p->interrupted)
            return -1;
        if (l->bolt_cached[i])
            progress_phase_done("bolt: %s from an earlier run (cached)", l->bolt[i].name);
        else
            progress_phase_done("bolt: %s made in %.0f s (BOLT profile for %d of %d functions)",
                                l->bolt[i].name, (double)(now_ns() - bolt_t0) / 1e9,
                                l->bolt[i].profiled, l->bolt[i].functions);
    }
    set_views(p);
    return 0;
}

/* Another group of build settings g of --variants (clang:pgo, -O3:baseline) shares p's
 * source, prepared amalgamation, run directory and pgolab binary; g->lib allocated on the first
 * call. Called before each of g's stages (p's stage has run first). */
static void library_share(struct pgo_pipeline *g, const struct pgo_pipeline *p)
{
    assert(p->library && p->lib && g->label);
    g->library = true;
    if (!g->lib)
        g->lib = xcalloc(1, sizeof(*g->lib));
    g->pgolab = p->pgolab;
    g->source = p->source;
    g->rundir = p->rundir;
    struct pgo_library *l = g->lib;
    if (!l->prep.main && p->lib->prep.main) { /* (not ran: the default's summary says it) */
        l->prep.dir = xstrdup(p->lib->prep.dir);
        l->prep.main = xstrdup(p->lib->prep.main);
        l->version = xstrdup(p->lib->version);
    }
}

/* Keep the run directory's logs in WORKDIR/last-run and remove it (tmpfs), free p->lib. */
static void library_release(struct pgo_pipeline *p)
{
    struct pgo_library *l = p->lib;
    if (!l)
        return;
    if (p->rundir && l->rundir_is_shm) {
        save_run_logs(p);
        remove_tree(p->rundir);
    }
    pgo_prepared_release(&l->prep);
    free(l->version);
    free(l->profile_dir);
    free(l->profdata);
    for (int i = 0; i < BUILD_NPHASES; i++) {
        free(l->dir[i]);
        argvec_clear(&l->argv[i]);
        free(l->flags[i]);
        lib_build_release(&l->build[i]);
    }
    profile_info_release(&l->profile);
    profile_health_release(&l->health);
    profile_corrections_release(&l->corrections);
    free(l->stamp_extra);
    free(l->pgo_stamp_extra);
    free(l->progress_what);
    for (int i = 0; i < p->nbolt; i++) {
        bolt_variant_release(&l->bolt[i]);
        free(l->bolt_dir[i]);
    }
    free(l);
    p->lib = NULL;
}

/* ---- the target --------------------------------------------------------------------- */

/* --resume=ID of a library: refused before anything is built when the experiment is
 * complete. */
static int check_resumable(struct store *store, int64_t id)
{
    assert(store && id > 0);
    struct store_experiment e;
    if (experiment_lookup(store, id, &e) < 0)
        return -1;
    int done = !strcmp(e.status, "complete");
    store_experiment_release(&e);
    if (done)
        return error("experiment %lld is complete; nothing to resume", (long long)id);
    return 0;
}

/* A library variant: its libsqlite3 file, loaded by the bench child (VARIANT_SQLITE). */
static void library_variant(const struct pgo_pipeline *p, const struct pgo_build *b,
                            struct variant *v)
{
    v->kind = VARIANT_SQLITE;
    v->library = b->product;
    v->provenance = b->official ? p->prov.official : NULL;
}

/* After the results file is opened: --resume=ID checked before anything is built. */
static int library_check_store(struct pgo_pipeline *p, struct store *store)
{
    const struct pgo_request *rq = p->rq;
    if (rq->measure && rq->resume_id > 0)
        return check_resumable(store, rq->resume_id);
    return 0;
}

/* Every group's state, then p's (the run directory's logs kept, the directory removed). */
static void library_release_all(struct pgo_pipeline *p)
{
    for (int g = 0; g < p->ngroups; g++)
        library_release(&p->groups[g]);
    library_release(p);
}

const struct pgo_target pgo_target_sqlite = {
    .name = "sqlite",
    .embedded = true,
    .check = library_check,
    .check_store = library_check_store,
    .check_tools = NULL,
    .source = library_prepare,
    .builds = library_builds,
    .train = library_train,
    .pgo_builds = library_pgo_build,
    .gate = library_gate,
    .share = library_share,
    .summary = library_summary,
    .variant = library_variant,
    .settings = library_settings,
    .release = library_release_all,
};
