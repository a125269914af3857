/* pipeline: the phases of a recipe target's PGO pipeline in order (see pipeline.h): checks
 * of everything cheap first (recipe, results file, compiler, tools, work directory), then
 * source, builds, training, pgo builds, gate, summary, measurement. The stages live in
 * steps.c, train.c, gate.c and measure.c; this file owns their shared state. */
#include "pgo/major.h"
#include "pgo/pipeline.h"
#include "pgo/exam.h"
#include "toolchain/bolt.h"
#include "experiment/experiment.h"
#include "experiment/record.h"
#include "experiment/variant_options.h"
#include "pgo/source.h"
#include "pgo/stages.h"
#include "report/trainers.h"
#include "server/server.h"
#include "store/store.h"
#include "util/fs.h"
#include "util/progress.h"
#include "util/signals.h"
#include "util/strbuf.h"
#include "util/util.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

static volatile sig_atomic_t caught_signal;

static void on_signal(int sig)
{
    caught_signal = sig;
}

/* ---- setup -------------------------------------------------------------------------- */

/* The C++ compiler of the same family and version: gcc-12 -> g++-12, clang-14 -> clang++-14. */
static char *cxx_for(const char *cc)
{
    const char *base = strrchr(cc, '/') ? strrchr(cc, '/') + 1 : cc;
    size_t dir = (size_t)(base - cc);
    if (!strncmp(base, "gcc", 3))
        return xasprintf("%.*sg++%s", (int)dir, cc, base + 3);
    if (!strncmp(base, "clang", 5))
        return xasprintf("%.*sclang++%s", (int)dir, cc, base + 5);
    if (!strcmp(base, "cc"))
        return xasprintf("%.*sc++", (int)dir, cc);
    return NULL;
}

static bool recipe_uses(const struct recipe *r, const char *placeholder)
{
    for (int i = 0; i < r->nsteps; i++)
        for (char **a = r->steps[i].argv; *a; a++)
            if (strstr(*a, placeholder))
                return true;
    return false;
}

/* The C++ compiler of p's compiler, where the recipe builds C++. */
static int check_cxx(const struct pgo_pipeline *p)
{
    if (recipe_uses(&p->recipe, "{cxx}")) {
        char *path = p->cxx ? find_in_path(p->cxx) : NULL;
        free(path);
        if (!path)
            return error("--cxx=%s: C++ compiler not found (the %s recipe builds C++; Debian "
                         "package %s)", p->cxx ? p->cxx : "(none for this --cc)", p->recipe.name,
                         p->cc.family == CC_CLANG ? "clang" : "g++");
    }
    return 0;
}

static int check_tools(const struct pgo_pipeline *p)
{
    if (recipe_check_tools(&p->recipe, p->recipe.tools, p->recipe.ntools, NULL, NULL) < 0)
        return -1;
    return check_cxx(p);
}

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
            for (char *save = NULL, *x = strtok_r(copy, "+", &save); x; x = strtok_r(NULL, "+", &save))
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

/* baseline, instrumented, [lto], pgo per trainer, [pgo+lto per trainer], [bolt], [pgo+bolt],
 * [pgo+lto+bolt], [official] (BOLT variants: one trainer, checked by pgo_bolt_check). */
static void setup_builds(struct pgo_pipeline *p)
{
    const struct pgo_request *rq = p->rq;
    p->builds = xcalloc((size_t)(4 + ARRAY_SIZE(bolt_kinds) + 2 * p->ntrainers),
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

static void release(struct pgo_pipeline *p);

/* A group's pipeline: what it shares with the default one is not its own to free. */
static void release_group(struct pgo_pipeline *g)
{
    free((void *)g->rq);
    g->rq = NULL;
    memset(&g->recipe, 0, sizeof(g->recipe));
    g->pgolab = g->source = g->source_sha = g->source_version = g->rundir = NULL;
    g->source_files = NULL;
    memset(&g->prov, 0, sizeof(g->prov));
    release(g);
}

static void release(struct pgo_pipeline *p)
{
    for (int i = 0; i < p->ngroups; i++)
        release_group(&p->groups[i]);
    free(p->groups);
    recipe_release(&p->recipe);
    cc_info_release(&p->cc);
    free(p->cxx);
    free(p->pgolab);
    free(p->source);
    free(p->source_sha);
    free(p->source_files);
    pgo_provenance_release(&p->prov);
    free(p->source_version);
    free(p->root);
    free(p->profile_raw);
    free(p->rundir);
    for (int i = 0; i < p->ntrainers; i++) {
        struct pgo_trainer *t = &p->trainers[i];
        free(t->name);
        for (char **w = t->workloads; w && *w; w++)
            free(*w);
        free(t->workloads);
        free(t->key);
        free(t->profile_dir);
        free(t->profdata);
        profile_info_release(&t->profile);
        profile_health_release(&t->health);
    }
    for (int i = 0; i < p->nexams; i++)
        pgo_exam_release(&p->exams[i]);
    free(p->exams);
    free(p->trainers);
    for (int i = 0; i < p->nbuilds; i++) {
        struct pgo_build *b = &p->builds[i];
        free(b->name);
        free(b->dir);
        free(b->build_dir);
        free(b->prefix);
        free(b->log);
        free(b->pgo_flags);
        free(b->flags);
        free(b->product);
        free(b->sha256);
        free(b->why);
        free(b->bolt_flags);
        profile_corrections_release(&b->corrections);
        pgo_bolt_release(b);
    }
    free(p->builds);
    free(p->gate_checksum);
    free(p->official_bin);
    free(p->official_version);
    free(p->official_number);
    free(p->official_package);
    free(p->official_debversion);
}

/* ---- summary ------------------------------------------------------------------------ */

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

/* ---- the pipeline ------------------------------------------------------------------- */

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

/* ---- the server branch of the stages --------------------------------------------- */

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

/* The Debian package of compiler cc: its name (clang, clang-14, gcc-12), g++ for gcc's C++. */
static const char *debian_package(const char *cc)
{
    const char *base = strrchr(cc, '/') ? strrchr(cc, '/') + 1 : cc;
    return base;
}

/* Before anything is fetched or built: a pipeline per other group of build settings of
 * --variants, its compiler probed (a missing one named with its Debian package). 0 or -1. */
static int groups_probe(struct pgo_pipeline *p)
{
    const struct pgo_request *rq = p->rq;
    if (rq->ngroups <= 1)
        return 0;
    p->groups = xcalloc((size_t)rq->ngroups - 1, sizeof(*p->groups));
    for (int k = 1; k < rq->ngroups; k++) {
        const struct variant_group *vg = &rq->groups[k];
        struct pgo_pipeline *g = &p->groups[p->ngroups++];
        struct pgo_request *grq = xmalloc(sizeof(*grq));
        *grq = *rq;
        grq->variants = vg->kinds;
        grq->nvariants = vg->nkinds;
        grq->official = NULL;
        g->rq = grq;
        g->recipe = p->recipe; /* shared: release_group() */
        g->interrupted = p->interrupted;
        g->cc_name = vg->cc;
        g->cflags = vg->cflags;
        g->label = vg->label;
        char *found = find_in_path(vg->cc);
        free(found);
        bool clang = strstr(vg->cc, "clang") != NULL;
        if (!found)
            return error("--variants: %s:%s: compiler %s not found%s (Debian package %s%s)",
                         vg->label, vg->kinds[0], vg->cc, strchr(vg->cc, '/') ? "" : " on PATH",
                         debian_package(vg->cc),
                         clang ? "; its ThinLTO and profile merging need lld and llvm too" : "");
        if (cc_probe(vg->cc, &g->cc) < 0)
            return -1;
        g->cxx = cxx_for(vg->cc);
        if (check_cxx(g) < 0)
            return -1;
    }
    return 0;
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

/* ---- the pipeline ------------------------------------------------------------------- */

/* The stages after the source is there, in order, each with its library branch (library.c):
 * 0 or -1 (also when interrupted). */
static const struct {
    int (*server)(struct pgo_pipeline *p);
    int (*library)(struct pgo_pipeline *p);
    bool gate;                    /* timed for its phase line */
    bool per_group;               /* a server's: run again for each group of build settings */
} stages[] = {
    /* 1. the source hashed by content; a library's prepare steps (the amalgamation) */
    { server_source, pgo_library_prepare, false, false },
    /* 2. the builds that read no profile: baseline, instrumented (lto; bolt) */
    { server_builds, pgo_library_builds, false, true },
    /* 3. training */
    { server_train, pgo_library_train, false, true },
    /* 4. the pgo builds (pgo+bolt; a library: then every BOLT variant) */
    { server_pgo_builds, pgo_library_pgo_build, false, true },
    /* 5. the correctness gate (of every group's builds) */
    { pgo_gate, pgo_library_gate, true, false },
};

/* --resume=ID of a library: refused before anything is built when the experiment is
 * complete. */
static int check_resumable(struct store *store, int64_t id)
{
    struct store_experiment e;
    if (experiment_lookup(store, id, &e) < 0)
        return -1;
    int done = !strcmp(e.status, "complete");
    store_experiment_release(&e);
    if (done)
        return error("experiment %lld is complete; nothing to resume", (long long)id);
    return 0;
}

/* The one line of an interruption before the measurement (the source, the builds, the
 * training, the gate): what the next run does about it. No experiment is recorded yet, so
 * --resume has nothing to continue; the same command reuses every finished build and step and
 * resumes a cut-off build after its last finished step (steps.c). An interrupted measurement
 * says its own (the engine's --resume=ID line, or search.c's). */
static void say_interrupted(const struct pgo_pipeline *p, int sig)
{
    (void)p;
    error("interrupted (signal %d); the same command continues (what finished is reused)", sig);
}

/* Stop with exit code 2 when a signal arrived (the children died with it). */
#define CHECK_INTERRUPT()                                                   \
    do {                                                                    \
        if (caught_signal) {                                                \
            progress_done();                                                \
            say_interrupted(&p, (int)caught_signal);                        \
            rc = 2;                                                         \
            goto out;                                                       \
        }                                                                   \
    } while (0)

int pgo_pipeline_run(const struct pgo_request *rq)
{
    struct pgo_pipeline p;
    struct sig_saved saved;
    struct store *store = NULL;
    int lock_fd = -1, rc = 1;

    memset(&p, 0, sizeof(p));
    p.rq = rq;
    p.interrupted = &caught_signal;
    p.cc_name = rq->cc;
    p.cflags = rq->cflags;
    /* The recipe's builds are top-level builds: a make that started pgolab (make check) would
     * hand its jobserver and MAKELEVEL down, and PostgreSQL's make, seeing MAKELEVEL > 0,
     * skips generating its headers. */
    static const char *const make_vars[] = { "MAKEFLAGS", "MAKELEVEL", "MFLAGS", "MAKEOVERRIDES",
                                              "GNUMAKEFLAGS" };
    for (size_t i = 0; i < ARRAY_SIZE(make_vars); i++)
        unsetenv(make_vars[i]);
    /* Each compile's messages right after its own command, whatever runs beside it: the log
     * check attributes clang's unnamed out-of-date warnings by it (build_log.h). */
    setenv("GNUMAKEFLAGS", "--output-sync=target", 1);
    caught_signal = 0;
    sig_catch(on_signal, &saved);

    /* checks of everything cheap first; directories are created as each phase needs them,
     * so bad input leaves nothing behind */
    if (recipe_load(rq->recipe_path, &p.recipe) < 0 ||
        pgo_major_select(&p.recipe, rq->db_version, rq->official) < 0)
        goto fail;
    p.library = p.recipe.product == RECIPE_LIBRARY;
    if (p.library ? pgo_library_check(&p) < 0 : pgo_official_check(&p) < 0)
        goto fail;
    if (file_size(rq->workdir) >= 0 && !is_dir(rq->workdir)) {
        error("--workdir=%s: not a directory", rq->workdir_opt);
        goto fail;
    }
    /* the results file (a foreign or newer one is refused untouched), then the compiler */
    if (rq->measure && store_open(rq->results, &store) < 0)
        goto fail;
    if (p.library && rq->measure && rq->resume_id > 0 && check_resumable(store, rq->resume_id) < 0)
        goto fail;
    if (cc_probe(rq->cc, &p.cc) < 0)
        goto fail;
    p.cxx = rq->cxx ? xstrdup(rq->cxx) : cxx_for(rq->cc);
    p.pgolab = self_exe();
    if (check_tools(&p) < 0 || groups_probe(&p) < 0 ||
        (!p.library && (check_reachable(&p) < 0 || pgo_bolt_check(&p) < 0)))
        goto fail;
    for (int g = 0; !p.library && g < p.ngroups; g++)
        if (pgo_bolt_check(&p.groups[g]) < 0)
            goto fail;
    /* a source directory is checked before anything is written */
    if (rq->source && is_dir(rq->source) &&
        pgo_source_resolve(&p.recipe, rq->source, NULL, &p.source) < 0)
        goto fail;
    /* (a library's messages name the --workdir as given) */
    if ((lock_fd = workdir_lock(rq->workdir, p.library ? rq->workdir_opt : rq->workdir)) < 0)
        goto fail;

    /* the source, then the stages */
    char *srcdir = path_join(rq->workdir, "src");
    /* with official, Debian's source at exactly the installed package's revision */
    const char *exact = p.official_bin && !rq->source && p.official_package &&
                        p.recipe.debian_package ? p.official_debversion : NULL;
    int src_rc = p.source ? 0 : pgo_source_resolve_at(&p.recipe, rq->source, srcdir, exact, &p.source);
    free(srcdir);
    if (src_rc < 0)
        goto fail;
    CHECK_INTERRUPT();
    uint64_t gate_t0 = 0;
    for (size_t i = 0; i < ARRAY_SIZE(stages); i++) {
        if (stages[i].gate)
            gate_t0 = now_ns();
        if ((p.library ? stages[i].library : stages[i].server)(&p) < 0)
            goto fail;
        CHECK_INTERRUPT();
        for (int g = 0; stages[i].per_group && g < p.ngroups; g++) {
            if (p.library)
                pgo_library_share(&p.groups[g], &p);
            if ((p.library ? stages[i].library : stages[i].server)(&p.groups[g]) < 0)
                goto fail;
            CHECK_INTERRUPT();
        }
    }
    if (p.library && !p.nbolt && !p.ngroups)
        progress_phase_done("correctness gate: baseline and pgo return the same results "
                            "(%.0f s)", (double)(now_ns() - gate_t0) / 1e9);
    else
        progress_phase_done("correctness gate: every variant returns the baseline's results%s "
                            "(%.0f s)", p.suite_ran ? ", and the regression suite passed" : "",
                            (double)(now_ns() - gate_t0) / 1e9);
    if (p.library)
        pgo_library_summary(&p);
    else
        print_summary(&p);

    /* 6. measurement (the engine's catch nests in this one and
     * takes over a signal that arrived before it) */
    rc = 0;
    if (rq->measure) {
        printf("\n");
        rc = rq->search ? pgo_search(&p, store) : pgo_measure(&p, store);
        if (rc == 0) /* beside the gain table */
            pgo_exam_warn(&p);
        if (rc == 1)
            CHECK_INTERRUPT(); /* stopped before the engine's own catch */
    }
    goto out;
fail:
    CHECK_INTERRUPT();
out:
    progress_done();
    for (int g = 0; p.library && g < p.ngroups; g++)
        pgo_library_release(&p.groups[g]);
    if (p.library)
        pgo_library_release(&p); /* keeps the run directory's logs */
    else if (p.rundir)
        remove_tree(p.rundir);
    sig_restore(&saved);
    if (lock_fd >= 0)
        close(lock_fd);
    release(&p);
    store_close(store);
    return rc;
}
