/* pipeline: the one PGO pipeline of every recipe target (see pipeline.h), written once over
 * the target interface (target.h): checks of everything cheap first (recipe, major version,
 * the target's own checks, work directory, results file, compilers, tools), then the source,
 * the target's stages in order (source, builds, training, pgo builds, gate; the middle three
 * again for each other group of build settings of --variants), its summary, and the
 * measurement (measure.c, or search.c with --search). This file owns struct pgo_pipeline
 * (stages.h) for the run and frees its common fields; the target frees its own. */
#include "pgo/major.h"
#include "pgo/pipeline.h"
#include "pgo/exam.h"
#include "pgo/source.h"
#include "pgo/stages.h"
#include "pgo/target.h"
#include "store/store.h"
#include "util/fs.h"
#include "util/progress.h"
#include "util/signals.h"
#include "util/util.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>
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
    pgo_distro_release(&p->distro);
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

/* ---- groups of build settings ------------------------------------------------------- */

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
        g->target = p->target;
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

/* ---- the pipeline ------------------------------------------------------------------- */

/* The stages after the source is there, in order: each is an operation of the target
 * (target.h). */
enum stage { STAGE_SOURCE, STAGE_BUILDS, STAGE_TRAIN, STAGE_PGO_BUILDS, STAGE_GATE, NSTAGES };

static const struct {
    bool gate;                    /* timed for its phase line */
    bool per_group;               /* run again for each other group of build settings */
} stages[NSTAGES] = {
    /* the source hashed by content; a library's prepare steps (the amalgamation) */
    [STAGE_SOURCE] = { false, false },
    /* the builds that read no profile: baseline, instrumented (lto; bolt) */
    [STAGE_BUILDS] = { false, true },
    [STAGE_TRAIN] = { false, true },
    /* the pgo builds (pgo+bolt; a library: then every BOLT variant) */
    [STAGE_PGO_BUILDS] = { false, true },
    /* the correctness gate (of every group's builds) */
    [STAGE_GATE] = { true, false },
};

/* Stage i of p's target on p (the pipeline's, or one of its groups). 0 or -1. */
static int run_stage(enum stage i, struct pgo_pipeline *p)
{
    const struct pgo_target *t = p->target;
    assert(t);
    switch (i) {
    case STAGE_SOURCE:
        return t->source(p);
    case STAGE_BUILDS:
        return t->builds(p);
    case STAGE_TRAIN:
        return t->train(p);
    case STAGE_PGO_BUILDS:
        return t->pgo_builds(p);
    case STAGE_GATE:
        return t->gate(p);
    case NSTAGES:
        break;
    }
    assert(!"a stage of the table");
    return -1;
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
    p.target = p.recipe.product == RECIPE_LIBRARY ? &pgo_target_sqlite : &pgo_target_server;
    /* every operation target.h does not say may be NULL */
    assert(p.target->check && p.target->source && p.target->builds && p.target->train &&
           p.target->pgo_builds && p.target->gate && p.target->summary && p.target->variant &&
           p.target->settings && p.target->release);
    p.library = p.target->embedded;
    if (p.target->check(&p) < 0)
        goto fail;
    if (file_size(rq->workdir) >= 0 && !is_dir(rq->workdir)) {
        error("--workdir=%s: not a directory", rq->workdir_opt);
        goto fail;
    }
    /* the results file (a foreign or newer one is refused untouched), then the compiler */
    if (rq->measure && store_open(rq->results, &store) < 0)
        goto fail;
    if (p.target->check_store && p.target->check_store(&p, store) < 0)
        goto fail;
    if (cc_probe(rq->cc, &p.cc) < 0)
        goto fail;
    p.cxx = rq->cxx ? xstrdup(rq->cxx) : cxx_for(rq->cc);
    p.pgolab = self_exe();
    if (check_tools(&p) < 0 || groups_probe(&p) < 0 ||
        (p.target->check_tools && p.target->check_tools(&p) < 0))
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
    int src_rc = p.source ? 0
                          : pgo_source_resolve_at(&p.recipe, rq->source, srcdir, exact, &p.source);
    free(srcdir);
    if (src_rc < 0)
        goto fail;
    CHECK_INTERRUPT();
    uint64_t gate_t0 = 0;
    for (enum stage i = 0; i < NSTAGES; i++) {
        if (stages[i].gate)
            gate_t0 = now_ns();
        if (run_stage(i, &p) < 0)
            goto fail;
        CHECK_INTERRUPT();
        for (int g = 0; stages[i].per_group && g < p.ngroups; g++) {
            if (p.target->share)
                p.target->share(&p.groups[g], &p);
            if (run_stage(i, &p.groups[g]) < 0)
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
    p.target->summary(&p);

    /* the measurement (the engine's catch nests in this one and
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
    if (p.target)
        p.target->release(&p); /* a library's keeps the run directory's logs */
    sig_restore(&saved);
    if (lock_fd >= 0)
        close(lock_fd);
    release(&p);
    store_close(store);
    return rc;
}
