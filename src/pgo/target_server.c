/* target_server: the server target of the pipeline (struct pgo_target, target.h): a
 * database server built from its recipe's steps (PostgreSQL, MariaDB, MySQL, the test
 * stand-in), one build per variant under WORKDIR/TARGET[-MAJOR]-CC-KEY/NAME, trained and
 * gated on managed servers (src/server) started from each build's install prefix. This file
 * sets up a pipeline's trainers and builds from the request (baseline, instrumented, lto, a
 * pgo build per trainer, pgo+lto, the BOLT variants, official), runs the stages over them
 * with the files below it (steps.c builds, train.c trains, bolt_server.c makes the BOLT
 * variants, gate.c gates), prints the summary and says what the experiment records. What it
 * allocates is in struct pgo_pipeline's common fields, freed by the pipeline; its release
 * removes the run directory. */
#include "pgo/exam.h"
#include "pgo/source.h"
#include "pgo/stages.h"
#include "pgo/target.h"
#include "experiment/experiment.h"
#include "experiment/variant_options.h"
#include "report/trainers.h"
#include "server/server.h"
#include "toolchain/bolt.h"
#include "util/fs.h"
#include "util/progress.h"
#include "util/strbuf.h"
#include "util/util.h"

#include <assert.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- checks ------------------------------------------------------------------------- */

/* As root, PostgreSQL runs as user postgres (src/server): it must reach the builds and write
 * the profile. Every directory above the work directory needs search permission for others. */
static int check_reachable(const struct pgo_pipeline *p)
{
    if (geteuid() != 0 || p->recipe.server_kind != SERVER_PGSQL)
        return 0;
    char *path = xstrdup(p->rq->workdir);
    int rc = 0;
    for (char *slash = path; rc == 0 && slash;) {
        slash = strchr(slash + 1, '/');
        if (slash)
            *slash = '\0';
        struct stat st;
        if (stat(*path ? path : "/", &st) == 0 && !(st.st_mode & S_IXOTH))
            rc = error("--workdir=%s: PostgreSQL runs as user postgres when pgolab is root, and "
                       "cannot enter %s (mode %04o): pass a --workdir others can reach (e.g. "
                       "--workdir=/var/tmp/pgolab) or run pgolab as a normal user",
                       p->rq->workdir, path, (unsigned)(st.st_mode & 07777));
        if (slash)
            *slash = '/';
    }
    free(path);
    return rc;
}

/* ---- setup: the trainers and builds of a pipeline -------------------------------------------- */

/* A directory-safe form of a build's or trainer's name: letters, digits, '_', '-' and '+' stay
 * ("pgo+lto", "oltp_read_only+oltp_write_only"), anything else becomes '_'. Never a ',': the
 * directory ends up in linker options (PostgreSQL links with -Wl,-rpath,PREFIX/lib, where a
 * comma splits the path) and in llvm-bolt's comma-separated lists. */
static char *safe_key(const char *name)
{
    char *k = xstrdup(name);
    for (char *c = k; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_' || *c == '-' ||
              *c == '+'))
            *c = '_';
    assert(!strchr(k, ','));
    return k;
}

static bool wants(const struct pgo_request *rq, const char *variant);

/* A pipeline with a pgo variant: one that trains. */
static bool wants_pgo(const struct pgo_request *rq)
{
    return wants(rq, "pgo") || wants(rq, "pgo+lto");
}

/* The trainers (none for a group of build settings without a pgo variant). */
static void setup_trainers(struct pgo_pipeline *p)
{
    const struct pgo_request *rq = p->rq;
    if (!wants_pgo(rq))
        return;
    p->ntrainers = rq->ntrain;
    p->trainers = xcalloc((size_t)rq->ntrain, sizeof(*p->trainers));
    for (int i = 0; i < rq->ntrain; i++) {
        struct pgo_trainer *t = &p->trainers[i];
        struct argvec w = ARGVEC_INIT;
        t->name = xstrdup(rq->train[i]);
        t->suite = !strcmp(t->name, "suite");
        if (!t->suite) {
            char *copy = xstrdup(t->name);
            for (char *save = NULL, *x = strtok_r(copy, "+", &save); x;
                 x = strtok_r(NULL, "+", &save))
                argvec_push(&w, x);
            free(copy);
        }
        argvec_argv(&w);
        t->workloads = w.v;
        t->key = safe_key(t->name);
        char *dir = xasprintf("profile-%s", t->key);
        t->profile_dir = path_join(p->root, dir);
        free(dir);
        /* clang's merged profile; a recipe that passes the profile directory through the
         * project's own options (MySQL's FPROFILE_DIR) gets -fprofile-use=DIR from them,
         * which clang reads as DIR/default.profdata (MySQL's cmake/fprofile.cmake, pgo.md 1.2) */
        if (p->cc.family == CC_CLANG)
            t->profdata = p->recipe.flags == RECIPE_FLAGS_OPTIONS
                              ? path_join(t->profile_dir, "default.profdata")
                              : xasprintf("%s.profdata", t->profile_dir);
    }
}

static void build_set_dir(struct pgo_pipeline *p, struct pgo_build *b, const char *name);

static struct pgo_build *add_build(struct pgo_pipeline *p, const char *name,
                                   enum build_phase phase, bool lto, struct pgo_trainer *t)
{
    struct pgo_build *b = &p->builds[p->nbuilds++];
    b->name = p->label ? xasprintf("%s:%s", p->label, name) : xstrdup(name);
    b->pipeline = p;
    b->phase = phase;
    b->lto = lto;
    b->trainer = t;
    build_set_dir(p, b, name);
    return b;
}

/* b's directory ROOT/NAME (name made safe) and the paths under it: its build tree (unless
 * the recipe shares one), install prefix, log and product. */
static void build_set_dir(struct pgo_pipeline *p, struct pgo_build *b, const char *name)
{
    free(b->dir);
    free(b->build_dir);
    free(b->prefix);
    free(b->log);
    free(b->product);
    char *safe = safe_key(name);
    b->dir = path_join(p->root, safe);
    free(safe);
    if (p->recipe.build_dir == RECIPE_BUILD_DIR_SHARED)
        b->build_dir = path_join(p->root, "build");
    else if (p->recipe.build_dir == RECIPE_BUILD_DIR_PGO_REUSES && b->phase == BUILD_PGO)
        b->build_dir = xstrdup(p->builds[1].build_dir); /* setup_builds: [1] = instrumented */
    else
        b->build_dir = path_join(b->dir, "build");
    b->prefix = path_join(b->dir, "prefix");
    b->log = path_join(b->dir, "build.log");
    b->product = path_join(b->prefix, p->recipe.product == RECIPE_SERVER ? p->recipe.server_binary
                                                                          : p->recipe.library);
}

/* A trainer's pgo build is named "pgo" (or "pgo+lto") with one trainer and "pgo-TRAINER"
 * with several. Where its own directory was never built but the other name's was, with this
 * trainer's profile, b stays there: an install cannot move (its prefix is compiled in), and
 * adding or dropping a second trainer must not rebuild an identical build (a MariaDB build
 * takes 20-60 minutes). Its stamp then decides as for any build. */
static void reuse_other_trainer_dir(struct pgo_pipeline *p, struct pgo_build *b, const char *kind)
{
    assert(b->trainer);
    char *own_stamp = path_join(b->dir, "stamp");
    bool own = is_file(own_stamp);
    free(own_stamp);
    if (own)
        return;
    char *other = p->ntrainers == 1 ? xasprintf("%s-%s", kind, b->trainer->name) : xstrdup(kind);
    char *safe = safe_key(other);
    char *dir = path_join(p->root, safe);
    if (pgo_stamp_names_profile(dir, b->trainer->profile_dir))
        build_set_dir(p, b, other);
    free(dir);
    free(safe);
    free(other);
}

static bool wants(const struct pgo_request *rq, const char *variant)
{
    for (int i = 0; i < rq->nvariants; i++)
        if (!strcmp(rq->variants[i], variant))
            return true;
    return false;
}

/* The BOLT variants of a server target: each kind, the build it optimizes and its directory
 * under ROOT (no ',' or '+' in the paths given to llvm-bolt). */
static const struct {
    const char *kind, *from, *dir;
} bolt_kinds[] = {
    { "bolt", "baseline", "bolt" },
    { "pgo+bolt", "pgo", "pgo-bolt" },
    { "pgo+lto+bolt", "pgo+lto", "pgo-lto-bolt" },
};

/* p's build of kind name (its name without the group's label), or NULL. */
static struct pgo_build *build_of_kind(struct pgo_pipeline *p, const char *name)
{
    size_t skip = p->label ? strlen(p->label) + 1 : 0;
    for (int i = 0; i < p->nbuilds; i++)
        if (!strcmp(p->builds[i].name + skip, name))
            return &p->builds[i];
    return NULL;
}

/* baseline, instrumented, [lto], [distro], pgo per trainer, [pgo+lto per trainer], [bolt],
 * [pgo+bolt], [pgo+lto+bolt], [official] (BOLT variants: one trainer, checked by
 * pgo_bolt_check). */
static void setup_builds(struct pgo_pipeline *p)
{
    const struct pgo_request *rq = p->rq;
    p->builds = xcalloc((size_t)(5 + ARRAY_SIZE(bolt_kinds) + 2 * p->ntrainers),
                        sizeof(*p->builds));
    p->nbolt = 0;
    for (size_t k = 0; k < ARRAY_SIZE(bolt_kinds); k++)
        p->nbolt += wants(rq, bolt_kinds[k].kind);
    p->bolt_lto = wants(rq, "pgo+lto+bolt");
    /* another group's baseline is built when asked for (the comparison's is --cc's) */
    add_build(p, "baseline", BUILD_BASELINE, false, NULL)->skip =
        p->label && !wants(rq, "baseline");
    add_build(p, "instrumented", BUILD_INSTRUMENTED, false, NULL)->skip = !wants_pgo(rq);
    if (wants(rq, "lto"))
        add_build(p, "lto", BUILD_BASELINE, true, NULL);
    if (wants(rq, "distro")) {
        struct pgo_build *b = add_build(p, "distro", BUILD_BASELINE, false, NULL);
        b->distro = true;
        /* always a build tree of its own: in a shared one, cmake's cache would keep the
         * options of the build before it that Debian's command does not name */
        free(b->build_dir);
        b->build_dir = path_join(b->dir, "build");
    }
    for (int pass = 0; pass < 2; pass++) {
        const char *kind = pass ? "pgo+lto" : "pgo";
        if (!wants(rq, kind))
            continue;
        for (int i = 0; i < p->ntrainers; i++) {
            char *name = p->ntrainers == 1 ? xstrdup(kind)
                                           : xasprintf("%s-%s", kind, p->trainers[i].name);
            reuse_other_trainer_dir(p, add_build(p, name, BUILD_PGO, pass == 1, &p->trainers[i]),
                                    kind);
            free(name);
        }
    }
    /* BOLT variants: their input's build tree and flags (the suite gate builds its client
     * there; the fingerprint's cflags), their own prefix */
    for (size_t k = 0; k < ARRAY_SIZE(bolt_kinds); k++) {
        if (!wants(rq, bolt_kinds[k].kind))
            continue;
        struct pgo_build *in = build_of_kind(p, bolt_kinds[k].from);
        if (!in)
            continue; /* pgo+bolt without pgo: pgo_bolt_check says so */
        struct pgo_build *b = add_build(p, bolt_kinds[k].kind, in->phase, in->lto, NULL);
        /* ROOT/bolt, ROOT/pgo-bolt, ROOT/pgo-lto-bolt as for SQLite */
        free(b->dir);
        free(b->prefix);
        free(b->log);
        free(b->product);
        b->dir = path_join(p->root, bolt_kinds[k].dir);
        b->prefix = path_join(b->dir, "prefix");
        b->log = path_join(b->dir, "build.log");
        b->product = path_join(b->prefix, p->recipe.server_binary);
        b->bolt_input = in;
        b->bolt = xcalloc(1, sizeof(*b->bolt));
        free(b->build_dir);
        b->build_dir = xstrdup(in->build_dir);
    }
    /* the official binary: measured and gated like a build, last; nothing of it is built, so
     * it has no directory, build tree or prefix */
    if (p->official_bin) {
        struct pgo_build *b = add_build(p, "official", BUILD_BASELINE, false, NULL);
        free(b->dir);
        free(b->build_dir);
        free(b->prefix);
        free(b->log);
        free(b->product);
        b->dir = b->build_dir = b->prefix = b->log = NULL;
        b->product = xstrdup(p->official_bin);
        b->official = true; /* its compiler and flags: unknown (flags NULL) */
    }
}

/* --variant-server-option against the measured variants' names (every build but the
 * instrumented one), before anything is built. 0 or -1 (one line). */
static int check_variant_options(const struct pgo_pipeline *p)
{
    const struct pgo_request *rq = p->rq;
    if (rq->nvariant_options == 0)
        return 0;
    const struct pgo_build **m;
    int nv = pgo_measured_builds(p, &m);
    struct variant *v = xcalloc((size_t)nv, sizeof(*v));
    for (int i = 0; i < nv; i++) {
        v[i].name = m[i]->name;
        v[i].kind = VARIANT_SERVER;
        v[i].server_kind = p->recipe.server_kind;
    }
    int rc = experiment_variant_server_options(rq->variant_options, rq->nvariant_options, v, nv,
                                               false);
    free(v);
    free(m);
    return rc;
}

static int make_rundir(struct pgo_pipeline *p)
{
    if (!(p->rundir = private_tmpdir(NULL, "pgolab-pgo")))
        return -1;
    /* the server's own user (postgres when pgolab is root) creates datadirs here: sticky and
     * world-writable like /tmp, under a name nobody could create first */
    if (geteuid() == 0 && chmod(p->rundir, 01777) < 0)
        return error("chmod %s: %s", p->rundir, strerror(errno));
    return 0;
}

/* ---- summary --------------------------------------------------------------------------------- */

static void print_build(const struct pgo_build *b)
{
    printf("  %-13s %s  sha256 %.16s  ", b->name, b->product, b->sha256 ? b->sha256 : "?");
    if (b->cached)
        printf("(cached)\n");
    else
        printf("(%.1f s; built: %s)\n", b->seconds, b->why ? b->why : "not built before");
}

static void print_training(const struct pgo_pipeline *p, const struct pgo_trainer *t)
{
    const struct pgo_request *rq = p->rq;
    printf("  %-13s %s", "training", t->name);
    if (!t->suite)
        printf(", %d s each, %d threads", rq->train_time, rq->train_threads);
    char *cov = profile_health_line(&t->health, p->cc.family == CC_GCC);
    if (p->cc.family == CC_GCC)
        printf(": profile %s (%d objects compiled) ", cov, t->objects);
    else
        printf(": profile %s (%d .profraw files merged) ", cov, t->profile.files);
    free(cov);
    if (t->cached)
        printf("(cached)\n");
    else
        printf("(%.1f s)\n", t->seconds);
}

/* The builds and trainings of one group of build settings (not official, printed last). */
static void print_builds(const struct pgo_pipeline *p)
{
    for (int i = 0; i < 2; i++)
        if (!p->builds[i].skip)
            print_build(&p->builds[i]);
    for (int i = 0; i < p->ntrainers; i++)
        print_training(p, &p->trainers[i]);
    for (int i = 2; i < p->nbuilds; i++) {
        const struct pgo_build *b = &p->builds[i];
        if (b->bolt_input) {
            pgo_bolt_print(b);
            continue;
        }
        if (b->official)
            continue;
        print_build(b);
        if (b->distro) {
            pgo_distro_print(&p->distro);
            continue;
        }
        printf("  %-13s flags: %s\n", "", b->flags);
        if (b->phase == BUILD_PGO)
            printf("  %-13s %d objects had no profile data (code the trainer never ran)\n", "",
                   b->profile_missing);
        if (b->phase == BUILD_PGO && p->cc.family == CC_GCC) {
            char *corr = profile_corrections_line(&b->corrections);
            printf("  %-13s %s\n", "", corr);
            free(corr);
        }
        if (b->phase == BUILD_PGO && p->cc.family == CC_CLANG && b->profile_stale_objects)
            printf("  %-13s %d objects compiled %d functions without their profile data (same "
                   "names built twice, the trained copy differs; no hot object among them)\n", "",
                   b->profile_stale_objects, b->profile_stale_functions);
    }
}

static void print_summary(const struct pgo_pipeline *p)
{
    const struct pgo_request *rq = p->rq;
    printf("pgolab pgo %s: %s%s%s, %s, %s\n", p->recipe.name,
           p->recipe.debian_package && !rq->source ? p->recipe.debian_package : "source",
           p->source_version ? " " : "", p->source_version ? p->source_version : "",
           p->cc.version, *rq->cflags ? rq->cflags : "(no cflags)");
    printf("  %-13s %s\n", "recipe", p->recipe.path);
    printf("  %-13s %s  content sha256 %.16s\n", "source", p->source, p->source_sha);
    pgo_provenance_print(p);
    print_builds(p);
    for (int g = 0; g < p->ngroups; g++) {
        const struct pgo_pipeline *gp = &p->groups[g];
        printf("  %-13s %s, %s\n", gp->label, gp->cc.version,
               *gp->cflags ? gp->cflags : "(no cflags)");
        print_builds(gp);
    }
    for (int i = 2; i < p->nbuilds; i++)
        if (p->builds[i].official)
            pgo_official_print(p, &p->builds[i]);
    const struct pgo_build **m;
    int nm = pgo_measured_builds(p, &m);
    printf("  %-13s checksum: oltp_read_only verify, %s over %lld rows, identical for baseline",
           "gate", p->gate_checksum, p->gate_rows);
    for (int i = 1; i < nm; i++)
        printf(", %s", m[i]->name);
    free(m);
    printf("\n");
    if (p->suite_ran)
        printf("  %-13s suite: the %s regression suite passed on every pgo%s build\n", "",
               p->recipe.name, p->nbolt ? " and BOLT" : "");
    for (int i = 0; i < p->ntrainers; i++)
        for (int w = 0; w < rq->nbench; w++)
            if (trainer_includes(p->trainers[i].name, rq->bench[w]))
                printf("  %-13s note: trainer %s includes the measured workload %s (a profile "
                       "trained on the exam flatters the result)\n", "", p->trainers[i].name,
                       rq->bench[w]);
    pgo_exam_print(p);
    fflush(stdout);
}

/* ---- the stages ------------------------------------------------------------------------------ */

/* Off a terminal, one line per finished phase (util/progress.h): a build, made or cached. */
static void build_phase_line(const struct pgo_build *b)
{
    if (b->cached)
        progress_phase_done("build: %s (cached)", b->name);
    else if (b->bolt_input)
        progress_phase_done("bolt: %s made in %.0f s (BOLT profile for %d of %d functions)",
                            b->name, b->seconds, b->bolt ? b->bolt->profiled : 0,
                            b->bolt ? b->bolt->functions : 0);
    else
        progress_phase_done("build: %s made in %.0f s (%s)", b->name, b->seconds,
                            b->why ? b->why : "not built before");
}

/* The BOLT variants whose input is the finished build in (their flags are the input's: the
 * fingerprint's cflags, the suite's client build). 0 or -1. */
static int run_bolt(struct pgo_pipeline *p, const struct pgo_build *in)
{
    for (int i = 0; i < p->nbuilds; i++) {
        struct pgo_build *b = &p->builds[i];
        if (b->bolt_input != in)
            continue;
        free(b->pgo_flags);
        free(b->flags);
        b->pgo_flags = xstrdup(in->pgo_flags);
        b->flags = xstrdup(in->flags);
        if (pgo_bolt_build(p, b) < 0 || *p->interrupted)
            return -1;
        build_phase_line(b);
    }
    return 0;
}

/* ROOT, WORKDIR/TARGET-CC-KEY, of p's builds: KEY from its compiler and flags. */
static void set_root(struct pgo_pipeline *p)
{
    char *keytext = xasprintf("%s\n%s\n%s", p->cc_name, p->cc.version, p->cflags);
    char *key = path_key(keytext);
    /* another major than the recipe's default builds beside it: postgresql-18-gcc-KEY */
    const struct recipe *r = &p->recipe;
    bool other = r->major && strcmp(r->major, r->major_default);
    char *name = xasprintf("%s%s%s-%s-%s", r->name, other ? "-" : "", other ? r->major : "",
                           cc_family_name(p->cc.family), key);
    p->root = path_join(p->rq->workdir, name);
    free(keytext);
    free(key);
    free(name);
    p->profile_raw = path_join(p->root, "profile-raw");
}

/* After the source: every group shares it, the run directory and the pgolab binary with p
 * and has a root of its own; its builds and trainers are set up (names known before any
 * build: --variant-server-option). */
static int groups_setup(struct pgo_pipeline *p)
{
    for (int i = 0; i < p->ngroups; i++) {
        struct pgo_pipeline *g = &p->groups[i];
        g->pgolab = p->pgolab;
        g->source = p->source;
        g->source_sha = p->source_sha;
        g->source_files = p->source_files;
        g->source_version = p->source_version;
        g->rundir = p->rundir;
        set_root(g);
        if (mkdir_p(g->root) < 0)
            return -1;
        setup_trainers(g);
        setup_builds(g);
    }
    return 0;
}

/* After the source: its content hash and Debian version, then the root of every build. */
static int server_source(struct pgo_pipeline *p)
{
    progress("source: hashing %s", p->source);
    p->source_sha = tree_sha256_list(p->source, &p->source_files);
    progress_done();
    if (!p->source_sha)
        return -1;
    p->source_version = pgo_source_debian_version(p->source);
    progress_phase_done("source: %s (sha256 %.12s)", p->source, p->source_sha);
    set_root(p);
    if (p->source_version) { /* refused before anything is built */
        char *what = xasprintf("the source %s", p->source);
        int rc = pgo_official_same_major(p, what, p->source_version);
        free(what);
        if (rc < 0 || pgo_official_same_revision(p, p->source, p->source_version) < 0)
            return -1;
    }
    if (pgo_source_check_major(&p->recipe, p->source) < 0)
        return -1;
    /* the distro variant's configure from the tree's debian/rules, its packages checked
     * before anything is built */
    if (wants(p->rq, "distro") && (pgo_distro_read(p->source, &p->recipe, &p->distro) < 0 ||
                                   pgo_distro_check(&p->distro, &p->recipe) < 0))
        return -1;
    pgo_provenance_make(p);
    /* without official the build goes on, but its recorded version is the changelog's */
    char *mismatch = p->official_bin ? NULL : pgo_source_version_mismatch(p->source);
    if (mismatch) {
        progress_done();
        warning("%s; the variants are recorded as %s", mismatch, p->source_version);
        free(mismatch);
    }
    return mkdir_p(p->root);
}

/* baseline, instrumented (and lto): each build uses every core; the bolt variant right after
 * the baseline, its only input (a failing BOLT step fails before the long builds); the
 * official binary is checked against the baseline's version before the other builds and is
 * never built */
static int server_builds(struct pgo_pipeline *p)
{
    if (!p->builds) { /* a group's were set up with the default one's */
        setup_trainers(p);
        setup_builds(p);
        if (make_rundir(p) < 0 || groups_setup(p) < 0 || check_variant_options(p) < 0)
            return -1;
    }
    for (int i = 0; i < p->nbuilds; i++)
        if (p->builds[i].phase != BUILD_PGO && !p->builds[i].bolt_input &&
            !p->builds[i].official && !p->builds[i].skip &&
            pgo_build_flags(p, &p->builds[i]) < 0)
            return -1;
    for (int i = 0; i < p->nbuilds; i++) {
        struct pgo_build *b = &p->builds[i];
        if (b->skip)
            continue;
        if (b->official) {
            if (pgo_official_hash(p, b) < 0)
                return -1;
            continue;
        }
        if (b->phase == BUILD_PGO || b->bolt_input)
            continue;
        if (pgo_build_run(p, b) < 0 || *p->interrupted)
            return -1;
        build_phase_line(b);
        if (i == 0 && pgo_official_against(p, b) < 0)
            return -1;
        if (run_bolt(p, b) < 0 || *p->interrupted)
            return -1;
    }
    return 0;
}

/* Training, one profile per trainer. */
static int server_train(struct pgo_pipeline *p)
{
    for (int i = 0; i < p->ntrainers; i++) {
        if (pgo_train(p, &p->trainers[i]) < 0 || *p->interrupted)
            return -1;
        if (p->trainers[i].cached)
            progress_phase_done("training: %s, the profile of an earlier training (cached)",
                                p->trainers[i].name);
        else
            progress_phase_done("training: %s on the instrumented build in %.0f s",
                                p->trainers[i].name, p->trainers[i].seconds);
    }
    /* the measured workloads' hot code against each trainer's profile (before the pgo
     * builds: a recipe that builds every phase in one directory still has the notes) */
    return pgo_exam_run(p);
}

/* The pgo builds (the profile's identity is part of their stamp), each followed by its BOLT
 * variant (pgo+bolt). */
static int server_pgo_builds(struct pgo_pipeline *p)
{
    for (int i = 0; i < p->nbuilds; i++) {
        if (p->builds[i].phase != BUILD_PGO || p->builds[i].bolt_input)
            continue;
        if (pgo_build_flags(p, &p->builds[i]) < 0 || pgo_build_run(p, &p->builds[i]) < 0 ||
            *p->interrupted)
            return -1;
        build_phase_line(&p->builds[i]);
        if (run_bolt(p, &p->builds[i]) < 0 || *p->interrupted)
            return -1;
    }
    return 0;
}

/* ---- the experiment's settings ----------------------------------------------------- */

/* Into o, per pgo build of p (its group's too) of a gcc pipeline: what GCC corrected in
 * its profile (correction.h), keyed by the build's name. */
static void add_corrections(json_t *o, const struct pgo_pipeline *p)
{
    for (int i = 0; i < p->nbuilds; i++) {
        const struct pgo_build *b = &p->builds[i];
        if (b->phase == BUILD_PGO && !b->bolt_input && !b->official && !b->skip &&
            p->cc.family == CC_GCC)
            json_object_set_new(o, b->name, profile_corrections_json(&b->corrections));
    }
}

/* The pgo-specific settings recorded with the experiment (JSON object text; caller frees). */
static char *extra_settings(const struct pgo_pipeline *p)
{
    const struct pgo_request *rq = p->rq;
    json_t *train = json_array();
    for (int i = 0; i < rq->ntrain; i++)
        json_array_append_new(train, json_string(rq->train[i]));
    json_t *o = json_pack("{s:{s:s,s:s,s:s,s:s,s:o,s:i,s:i,s:s}}", "pgo",
                          "target", p->recipe.name, "recipe_sha256", p->recipe.sha256,
                          "source_sha256", p->source_sha,
                          "source_version", p->source_version ? p->source_version : "?",
                          "train", train, "train_time", rq->train_time,
                          "train_threads", rq->train_threads,
                          "gate", rq->gate == PGO_GATE_SUITE ? "suite" : "checksum");
    /* what each trainer's profile holds (the profile check's counts) */
    json_t *profiles = json_object();
    for (int i = 0; i < p->ntrainers; i++)
        json_object_set_new(profiles, p->trainers[i].name,
                            profile_health_json(&p->trainers[i].health));
    for (int g = 0; g < p->ngroups; g++) /* another group's: "clang:oltp_read_write" */
        for (int i = 0; i < p->groups[g].ntrainers; i++) {
            const struct pgo_trainer *t = &p->groups[g].trainers[i];
            char *key = xasprintf("%s:%s", p->groups[g].label, t->name);
            json_object_set_new(profiles, key, profile_health_json(&t->health));
            free(key);
        }
    if (o && p->measure_only) /* --search's two experiments (search.c) */
        json_object_set_new(json_object_get(o, "pgo"), "search",
                            json_string(rq->measure_kind == MEASURE_INSTRUCTIONS ? "screen"
                                                                                 : "confirm"));
    /* what GCC's -fprofile-correction corrected in each pgo build's profile */
    json_t *corrections = json_object();
    add_corrections(corrections, p);
    for (int g = 0; g < p->ngroups; g++)
        add_corrections(corrections, &p->groups[g]);
    /* each measured workload's hottest functions against each trainer's profile */
    json_t *exam = pgo_exam_json(p);
    if (o && json_array_size(exam))
        json_object_set_new(json_object_get(o, "pgo"), "exam", json_incref(exam));
    json_decref(exam);
    if (o) {
        json_object_set_new(json_object_get(o, "pgo"), "profiles", profiles);
        json_object_set_new(json_object_get(o, "pgo"), "profile_corrections", corrections);
    } else {
        json_decref(profiles);
        json_decref(corrections);
    }
    char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    if (!text)
        die("out of memory");
    return text;
}

/* ---- the measurement -------------------------------------------------------------- */

/* A server variant: its install prefix, or official's binary; where it comes from. */
static void server_variant(const struct pgo_pipeline *p, const struct pgo_build *b,
                           struct variant *v)
{
    v->kind = VARIANT_SERVER;
    v->library = b->official ? b->product : b->prefix;
    v->provenance = b->official ? p->prov.official : b->distro ? p->prov.distro : p->prov.built;
}

/* ---- the target --------------------------------------------------------------------- */

/* Before the results file: the official variant's binary, when --variants names it; the
 * recipe's "distro" key, when it names distro. */
static int server_target_check(struct pgo_pipeline *p)
{
    if (wants(p->rq, "distro") && !p->recipe.has_distro)
        return error("--variants: distro: %s has no \"distro\" key (how Debian's configure "
                     "replaces the recipe's, docs/recipes.md)", p->recipe.path);
    return pgo_official_check(p);
}

/* Once the compilers are probed: the work directory reachable by the server's user, and
 * every group's BOLT options. */
static int server_target_tools(struct pgo_pipeline *p)
{
    if (wants(p->rq, "distro") && p->cc.family != CC_GCC)
        return error("--variants: distro is built as Debian builds it, with GCC, and --cc=%s is "
                     "%s: give --cc=gcc (other compilers as variants: clang:pgo)", p->cc_name,
                     p->cc.version);
    if (check_reachable(p) < 0 || pgo_bolt_check(p) < 0)
        return -1;
    for (int g = 0; g < p->ngroups; g++)
        if (pgo_bolt_check(&p->groups[g]) < 0)
            return -1;
    return 0;
}

/* The run directory (shared by the groups) on tmpfs: the datadirs of the stopped servers. */
static void server_target_release(struct pgo_pipeline *p)
{
    if (p->rundir)
        remove_tree(p->rundir);
}

const struct pgo_target pgo_target_server = {
    .name = "server",
    .embedded = false,
    .check = server_target_check,
    .check_store = NULL,
    .check_tools = server_target_tools,
    .source = server_source,
    .builds = server_builds,
    .train = server_train,
    .pgo_builds = server_pgo_builds,
    .gate = pgo_gate,
    .share = NULL,
    .summary = print_summary,
    .variant = server_variant,
    .settings = extra_settings,
    .release = server_target_release,
};
