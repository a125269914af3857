/* steps: one build of a recipe target — the phase flags, the stamp that decides whether the
 * cached build is still right (and says why not), the recipe's steps run in order with their
 * output in one log, resumption after an interruption, progress from the build tool's own
 * counts, and the checks after it (the product exists; a pgo build used its profile). Just
 * over 1,000 lines: the stamp, the resume decision and the steps all read one struct
 * pgo_build and its stamp text; the stamp (build_stamp, stamp_why) is the part to move out
 * next. */
#include "pgo/build_log.h"
#include "pgo/config_check.h"
#include "pgo/distro.h"
#include "pgo/stages.h"
#include "util/fs.h"
#include "util/progress.h"
#include "util/strbuf.h"
#include "util/subprocess.h"
#include "util/util.h"

#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define LOG_TAIL_LINES 20
#define PROGRESS_POLL_MS 500

/* ---- flags -------------------------------------------------------------------------- */

/* Missing profile data is normal for a server (programs training never runs: pg_dump, the
 * client tools); these errors stay only for strict recipes. A stale profile stays an error,
 * but for clang it is made one by the log check (check_pgo_log: "profile data may be out of
 * date" in the build's log) instead of -Werror: clang's profile is keyed by function name, so
 * every configure check program's main() is "out of date" against the server's main(), and
 * with the -Werror every check under the pgo flags failed (config_check.h). */
static bool lenient_drop(const char *flag)
{
    return !strcmp(flag, "-Werror=missing-profile") ||
           !strcmp(flag, "-Werror=profile-instr-unprofiled") ||
           !strcmp(flag, "-Werror=profile-instr-missing") ||
           !strcmp(flag, "-Werror=profile-instr-out-of-date");
}

char **pgo_bolt_cflags(const struct pgo_pipeline *p)
{
    assert(p->recipe.has_bolt);
    return p->cc.family == CC_CLANG ? p->recipe.bolt_clang_cflags : p->recipe.bolt_cflags;
}

/* What a lenient recipe gets instead: the warning stays a warning even where a configure
 * check adds -Werror (MariaDB's HAVE_VFORK check), so every check program decides as in the
 * baseline (config_check.h): GCC warns that it has no profile, clang that its main() is out
 * of date. Clang does not warn about unprofiled code unless asked: those flags are dropped. */
static const char *lenient_instead(const char *flag)
{
    if (!strcmp(flag, "-Werror=missing-profile"))
        return "-Wno-error=missing-profile";
    if (!strcmp(flag, "-Werror=profile-instr-out-of-date"))
        return "-Wno-error=profile-instr-out-of-date";
    return NULL;
}

int pgo_build_flags(struct pgo_pipeline *p, struct pgo_build *b)
{
    struct argvec fl = ARGVEC_INIT, all = ARGVEC_INIT;
    if (b->distro) { /* Debian's flags, in its configure step's environment (distro.h) */
        assert(p->distro.via);
        free(b->pgo_flags);
        free(b->flags);
        b->pgo_flags = xstrdup("");
        b->flags = xstrdup(p->distro.cflags);
        return 0;
    }
    if (p->recipe.flags == RECIPE_FLAGS_COMPILER) {
        struct argvec raw = ARGVEC_INIT;
        struct pgo_paths paths = {
            b->trainer ? b->trainer->profile_dir : p->profile_raw,
            b->trainer ? b->trainer->profdata : NULL, b->build_dir,
        };
        if (pgo_phase_flags(&raw, p->cc.family, b->phase, &paths) < 0) {
            argvec_clear(&raw);
            return -1;
        }
        for (int i = 0; i < raw.n; i++)
            if (p->recipe.strict_profile || !lenient_drop(raw.v[i]))
                argvec_push(&fl, raw.v[i]);
            else if (lenient_instead(raw.v[i]))
                argvec_push(&fl, lenient_instead(raw.v[i]));
        argvec_clear(&raw);
    } else if (p->cc.family == CC_GCC && b->phase == BUILD_INSTRUMENTED) {
        /* the recipe's own options instrument (MySQL's FPROFILE_GENERATE); the notes files
         * that name the counted functions for the profile check and the exam come only with
         * -ftest-coverage (the same instrumentation, see toolchain/flags.c) */
        argvec_push(&fl, "-ftest-coverage");
    }
    /* clang 14 writes DWARF 5 where a build asks for -g (MariaDB's RelWithDebInfo), which
     * valgrind 3.19 cannot read: on mariadbd it gives up ("Possibly corrupted debuginfo
     * file") and the screen's server exits at start. DWARF 4 it reads; the flag alone does
     * not turn -g on where a build has none. */
    if (p->cc.family == CC_CLANG)
        argvec_push(&fl, "-fdebug-default-version=4");
    /* clang's ThinLTO links with lld: through GNU ld's plugin, an archive of bitcode members
     * that share a name fails ("Expected at most one ThinLTO module per bitcode file":
     * PostgreSQL's libpgcommon.a in initdb's link). -fuse-ld is a link flag that a target
     * may pass while compiling too ({pgo_flags} in CFLAGS): clang's "argument unused" warning
     * would then fail a configure check compiled with -Werror (config_check.h) */
    if (b->lto && p->cc.family == CC_CLANG) {
        argvec_push(&fl, "-flto=thin");
        argvec_push(&fl, "-fuse-ld=lld");
        argvec_push(&fl, "-Wno-unused-command-line-argument");
    } else if (b->lto) {
        argvec_push(&fl, "-flto=auto");
    }
    /* with a BOLT variant, baseline and pgo are BOLT's inputs: built the recipe's bolt way
     * (-Wl,--emit-relocs, ...), so that each BOLT variant differs from its input by BOLT
     * alone and baseline against pgo stays a like-for-like pair; lto and pgo+lto too when
     * pgo+lto+bolt is asked for */
    free(b->bolt_flags);
    b->bolt_flags = NULL;
    if (p->nbolt && (!b->lto || p->bolt_lto) && b->phase != BUILD_INSTRUMENTED) {
        struct argvec bf = ARGVEC_INIT;
        argvec_pushv(&bf, (const char *const *)pgo_bolt_cflags(p));
        argvec_pushv(&bf, (const char *const *)p->recipe.bolt_link_flags);
        for (int i = 0; i < bf.n; i++)
            argvec_push(&fl, bf.v[i]);
        b->bolt_flags = argvec_join(&bf);
        argvec_clear(&bf);
        /* the link flags reach the compile lines too ({pgo_flags} in CFLAGS): as for
         * -fuse-ld above, clang's "argument unused" warning would fail a configure check
         * compiled with -Werror (MariaDB's vfork and pthread_once checks) */
        if (p->cc.family == CC_CLANG && !b->lto)
            argvec_push(&fl, "-Wno-unused-command-line-argument");
    }
    free(b->pgo_flags);
    b->pgo_flags = argvec_join(&fl);
    argvec_split(&all, p->cflags);
    for (int i = 0; i < fl.n; i++)
        argvec_push(&all, fl.v[i]);
    if (p->recipe.flags == RECIPE_FLAGS_OPTIONS) {
        /* as the steps get them: -DFPROFILE_DIR=/the/dir, not {profile_dir} */
        struct recipe_vars v;
        pgo_build_vars(p, b, &v);
        for (char **o = p->recipe.phase_options[b->phase]; o && *o; o++) {
            char *x = recipe_expand(*o, &v);
            argvec_push(&all, x);
            free(x);
        }
    }
    free(b->flags);
    b->flags = argvec_join(&all);
    argvec_clear(&fl);
    argvec_clear(&all);
    return 0;
}

/* ---- the steps as they run ---------------------------------------------------------- */

/* Step i of build b expanded into argv, env and cwd: the recipe's, except the distro variant's
 * configure, which is the recipe's distro.run, Debian's options (distro.h), distro.paths, with
 * Debian's flags and pgolab's compiler in the environment. */
static void expand_build_step(const struct pgo_pipeline *p, const struct pgo_build *b, int i,
                              const struct recipe_vars *v, struct argvec *argv,
                              struct argvec *env, char **cwd)
{
    const struct recipe *r = &p->recipe;
    recipe_expand_step(&r->steps[i], v, argv, env, cwd);
    int first = 0;
    while (first < r->nsteps && strcmp(r->steps[first].name, "configure"))
        first++;
    if (!b->distro || i != first)
        return;
    assert(p->distro.via && r->has_distro);
    argvec_clear(argv);
    for (char **a = r->distro_run; *a; a++) {
        char *x = recipe_expand(*a, v);
        argvec_push(argv, x);
        free(x);
    }
    for (int k = 0; k < p->distro.options.n; k++)
        argvec_push(argv, p->distro.options.v[k]);
    for (char **a = r->distro_paths; *a; a++) {
        char *x = recipe_expand(*a, v);
        argvec_push(argv, x);
        free(x);
    }
    for (int k = 0; k < p->distro.env.n; k++)
        argvec_push(env, p->distro.env.v[k]);
    argvec_pushf(env, "CC=%s", p->cc_name);
    argvec_pushf(env, "CXX=%s", p->cxx);
}

/* ---- the stamp ---------------------------------------------------------------------- */

/* The stamp's format: a stamp without this line was written by an older pgolab. */
#define STAMP_FORMAT "stamp: 2\n"

/* text with the trainer's profile directory of a pgo build written "{profile_dir}" (its
 * .profdata too: it starts with the same path), so that the steps and the flags stay the same
 * when only the trainer changes; the trainer and its profile are keys of their own. Caller
 * frees. */
static char *without_profile_dir(const struct pgo_build *b, const char *text)
{
    struct strbuf sb = STRBUF_INIT;
    strbuf_init(&sb, 0);
    const char *dir = b->trainer ? b->trainer->profile_dir : NULL;
    size_t n = dir ? strlen(dir) : 0;
    for (const char *at = text ? text : ""; *at;) {
        const char *hit = n ? strstr(at, dir) : NULL;
        if (!hit) {
            strbuf_addstr(&sb, at);
            break;
        }
        strbuf_add(&sb, at, (size_t)(hit - at));
        strbuf_addstr(&sb, "{profile_dir}");
        at = hit + n;
    }
    return strbuf_detach(&sb);
}

/* The build's commands as they will run (every step expanded), one "cwd\nenv\nargv\n" text
 * per step into texts[i] (caller frees each): what of the recipe a build depends on (its
 * description or requirements do not rebuild anything). */
static void steps_texts(const struct pgo_pipeline *p, const struct pgo_build *b, bool normalize,
                        char **texts)
{
    struct recipe_vars v;
    pgo_build_vars(p, b, &v);
    /* how many jobs build it does not change what is built: {jobs} takes the default's
     * value (one per CPU), so a cache built by default stays valid under --jobs=N */
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    v.jobs = ncpu > 0 ? (int)ncpu : 1;
    /* which trainer's profile is the "trainer" and "profile" keys' business */
    char *flags = without_profile_dir(b, b->pgo_flags);
    if (b->trainer && normalize) {
        v.profile_dir = "{profile_dir}";
        v.pgo_flags = flags;
    }
    for (int i = 0; i < p->recipe.nsteps; i++) {
        struct argvec argv = ARGVEC_INIT, env = ARGVEC_INIT;
        char *cwd = NULL;
        expand_build_step(p, b, i, &v, &argv, &env, &cwd);
        char *a = argvec_join(&argv), *e = argvec_join(&env);
        texts[i] = xasprintf("%s\n%s\n%s\n", cwd, e, a);
        free(a);
        free(e);
        free(cwd);
        argvec_clear(&argv);
        argvec_clear(&env);
    }
    free(flags);
}

/* A key of all the build's steps (steps_texts()). Caller frees. */
static char *steps_key(const struct pgo_pipeline *p, const struct pgo_build *b, bool normalize)
{
    struct strbuf sb = STRBUF_INIT;
    strbuf_init(&sb, 0);
    char **texts = xcalloc((size_t)p->recipe.nsteps + 1, sizeof(*texts));
    steps_texts(p, b, normalize, texts);
    for (int i = 0; i < p->recipe.nsteps; i++) {
        strbuf_addstr(&sb, texts[i]);
        free(texts[i]);
    }
    free(texts);
    char *key = path_key(sb.buf);
    strbuf_release(&sb);
    return key;
}

/* A key per step, space-separated ("K0 K1 ..."): kept beside an unfinished build so that a
 * resume can tell which steps a recipe change touched. Caller frees. */
static char *step_keys(const struct pgo_pipeline *p, const struct pgo_build *b)
{
    struct strbuf sb = STRBUF_INIT;
    strbuf_init(&sb, 0);
    char **texts = xcalloc((size_t)p->recipe.nsteps + 1, sizeof(*texts));
    steps_texts(p, b, true, texts);
    for (int i = 0; i < p->recipe.nsteps; i++) {
        char *k = path_key(texts[i]);
        strbuf_addf(&sb, "%s%s", i ? " " : "", k);
        free(k);
        free(texts[i]);
    }
    free(texts);
    return strbuf_detach(&sb);
}

/* Everything the build reads, one "key: value" line each, so a mismatch can be named. */
static char *build_stamp(const struct pgo_pipeline *p, const struct pgo_build *b)
{
    struct strbuf sb = STRBUF_INIT;
    char *steps = steps_key(p, b, true);
    char *flags = without_profile_dir(b, b->pgo_flags);
    strbuf_init(&sb, 0);
    strbuf_addf(&sb, STAMP_FORMAT "steps: %s\nsource: %s\ncompiler: %s\ncflags: %s\n"
                "phase-flags: %s\n", steps, p->source_sha, p->cc.version, p->cflags, flags);
    free(steps);
    free(flags);
    if (b->bolt_flags)
        strbuf_addf(&sb, "bolt-flags: %s\n", b->bolt_flags);
    if (p->recipe.flags == RECIPE_FLAGS_OPTIONS) {
        strbuf_addstr(&sb, "phase-options:");
        for (char **o = p->recipe.phase_options[b->phase]; o && *o; o++)
            strbuf_addf(&sb, " %s", *o);
        strbuf_addch(&sb, '\n');
    }
    if (b->phase == BUILD_PGO)
        strbuf_addf(&sb, "trainer: %s\nprofile: %s\nprofile-dir: %s\n", b->trainer->name,
                    b->trainer->profile.id, b->trainer->profile_dir);
    return strbuf_detach(&sb);
}

/* The stamp an older pgolab (stamp format 1) wrote for the same inputs: the steps and flags
 * with the trainer's own profile directory, no trainer or profile-dir line. A build whose
 * stamp is this one is the same build: it is kept, its stamp rewritten (a MariaDB build takes
 * 20-60 minutes). */
static char *legacy_stamp(const struct pgo_pipeline *p, const struct pgo_build *b)
{
    struct strbuf sb = STRBUF_INIT;
    char *steps = steps_key(p, b, false);
    strbuf_init(&sb, 0);
    strbuf_addf(&sb, "steps: %s\nsource: %s\ncompiler: %s\ncflags: %s\nphase-flags: %s\n",
                steps, p->source_sha, p->cc.version, p->cflags, b->pgo_flags);
    free(steps);
    if (b->bolt_flags)
        strbuf_addf(&sb, "bolt-flags: %s\n", b->bolt_flags);
    if (p->recipe.flags == RECIPE_FLAGS_OPTIONS) {
        strbuf_addstr(&sb, "phase-options:");
        for (char **o = p->recipe.phase_options[b->phase]; o && *o; o++)
            strbuf_addf(&sb, " %s", *o);
        strbuf_addch(&sb, '\n');
    }
    if (b->phase == BUILD_PGO)
        strbuf_addf(&sb, "profile: %s\n", b->trainer->profile.id);
    return strbuf_detach(&sb);
}

bool pgo_stamp_names_profile(const char *dir, const char *profile_dir)
{
    struct strbuf sb = STRBUF_INIT;
    strbuf_init(&sb, 0);
    char *path = path_join(dir, "stamp");
    bool named = false;
    /* "profile-dir:" since stamp format 2; before, the directory was in the phase flags */
    static const char *const keys[] = { "\nprofile-dir: ", "\nphase-flags: " };
    if (strbuf_read_file(&sb, path) == 0)
        for (size_t k = 0; k < ARRAY_SIZE(keys) && !named; k++) {
            const char *line = strstr(sb.buf, keys[k]);
            size_t end = line ? strcspn(line + 1, "\n") + 1 : 0, n = strlen(profile_dir);
            for (const char *at = line;
                 at && (at = strstr(at + 1, profile_dir)) && at < line + end;)
                if (strchr(" ./\n", at[n])) /* the whole name: profile-A is not profile-A+B */
                    named = true;
        }
    free(path);
    strbuf_release(&sb);
    return named;
}

/* The value of key's line in a stamp ("" when it has none). Caller frees. */
static char *stamp_value(const char *stamp, const char *key)
{
    char *k = xasprintf("\n%s: ", key);
    const char *at = NULL;
    if (!strncmp(stamp, k + 1, strlen(k + 1)))
        at = stamp + strlen(k + 1);
    else if ((at = strstr(stamp, k)))
        at += strlen(k);
    char *v = at ? xstrndup(at, strcspn(at, "\n")) : xstrdup("");
    free(k);
    return v;
}

/* Where a build keeps the source tree's file list of its stamp (source_diff()). */
static char *files_path(const struct pgo_build *b)
{
    return path_join(b->dir, "source-files");
}

/* Why the source of b's cached build differs: the files, named from the list kept beside its
 * stamp. */
static char *source_why(const struct pgo_pipeline *p, const struct pgo_build *b)
{
    char *path = files_path(b);
    struct strbuf old = STRBUF_INIT;
    strbuf_init(&old, 0);
    char *diff = NULL;
    if (p->source_files && strbuf_read_file(&old, path) == 0)
        diff = source_diff(old.buf, p->source_files);
    char *why = diff ? xasprintf("the source tree changed since the cached build: %s", diff)
                     : xstrdup("the source tree changed since the cached build (its content "
                               "hash; the cached build kept no file list to name the files)");
    free(diff);
    free(path);
    strbuf_release(&old);
    return why;
}

/* The first key in which the stamp text old differs from want (b's), in words, with what it
 * was and what it is where that fits in a line; NULL when they agree. since names the build
 * old belongs to ("the cached build"); skip_steps leaves the steps key out (a resume checks
 * them step by step). */
static char *stamp_diff_why(const struct pgo_pipeline *p, const struct pgo_build *b,
                            const char *old, const char *want, const char *since,
                            bool skip_steps)
{
    static const struct {
        const char *key, *words;
        bool values; /* name the old and the new value */
    } names[] = {
        /* first: BOLT's flags also change the expanded steps */
        { "bolt-flags", "the BOLT build flags changed (a bolt variant was added or dropped)",
          false },
        { "steps", "the recipe's build steps changed", false },
        { "source", NULL, false },
        { "compiler", "the compiler changed", true },
        { "cflags", "--cflags changed", true },
        { "phase-flags", "the PGO flags changed", true },
        { "phase-options", "the recipe's phase options changed", true },
        { "trainer", "the trainer changed", true },
        { "profile", "its profile changed (the trainer's profile was made again)", false },
    };
    char *why = NULL;
    for (size_t i = 0; i < ARRAY_SIZE(names) && !why; i++) {
        if (skip_steps && !strcmp(names[i].key, "steps"))
            continue;
        char *a = stamp_value(old, names[i].key), *w = stamp_value(want, names[i].key);
        if (strcmp(a, w) && b->distro && !strcmp(names[i].key, "steps")) /* distro.h */
            why = xasprintf("Debian's configure or the recipe's steps changed since %s "
                            "(debian/rules' options, dpkg-buildflags' flags)", since);
        else if (strcmp(a, w)) {
            if (!names[i].words && !strcmp(since, "the cached build"))
                why = source_why(p, b);
            else if (!names[i].words)
                why = xasprintf("the source tree changed since %s (its content hash)", since);
            else if (names[i].values)
                why = xasprintf("%s since %s (was \"%s\", now \"%s\")", names[i].words, since,
                                a, w);
            else
                why = xasprintf("%s since %s", names[i].words, since);
        }
        free(a);
        free(w);
    }
    return why;
}

/* Why the stamp at path does not match want (b's): stamp_diff_why() against the cached
 * build, or "not built before" when there is none. */
static char *stamp_why(const struct pgo_pipeline *p, const struct pgo_build *b, const char *path,
                       const char *want)
{
    struct strbuf old = STRBUF_INIT;
    strbuf_init(&old, 0);
    if (strbuf_read_file(&old, path) < 0) {
        strbuf_release(&old);
        return xstrdup("not built before");
    }
    char *why = NULL;
    if (strncmp(old.buf, STAMP_FORMAT, strlen(STAMP_FORMAT)))
        why = xstrdup("the cached build was made by an older pgolab, whose stamp does not "
                      "name every input this one checks");
    else
        why = stamp_diff_why(p, b, old.buf, want, "the cached build", false);
    strbuf_release(&old);
    return why ? why : xstrdup("its stamp differs from the cached build's");
}

/* ---- resuming an interrupted build ---------------------------------------------------- */

/* The progress file of an unfinished build (BUILD_DIR/.pgolab-building) holds its owner: the
 * build's name, its stamp, then "step-keys: K0 K1 ..." (step_keys()). */
static char *progress_text(const struct pgo_build *b, const char *stamp, const char *keys)
{
    return xasprintf("%s\n%sstep-keys: %s\n", b->name, stamp, keys);
}

/* Which steps an interrupted build finished ("I COMMAND" lines of its steps-done file):
 * an array of nsteps flags, all false without the file. Caller frees. */
static bool *steps_finished(const char *done_path, int nsteps)
{
    bool *finished = xcalloc((size_t)nsteps + 1, sizeof(*finished));
    struct strbuf done = STRBUF_INIT;
    strbuf_init(&done, 0);
    if (strbuf_read_file(&done, done_path) == 0)
        for (const char *line = done.buf; *line;) {
            int i = atoi(line);
            if (i >= 0 && i < nsteps)
                finished[i] = true;
            const char *nl = strchr(line, '\n');
            line = nl ? nl + 1 : line + strlen(line);
        }
    strbuf_release(&done);
    return finished;
}

/* Index of the first step an interrupted build had not finished, or nsteps. */
static int first_unfinished_step(const char *done_path, int nsteps)
{
    bool *finished = steps_finished(done_path, nsteps);
    int k = 0;
    while (k < nsteps && finished[k])
        k++;
    free(finished);
    return k;
}

/* May the unfinished build in b's build directory be continued by this one (stamp, keys)?
 * Only one of the same name whose inputs are the same, except steps it has not begun: the
 * steps it finished and the one it was running must read as now (a recipe whose install
 * step was changed during a two-hour compile resumes the compile). When it may not and one
 * was there, *why says why it starts again (caller frees); when it may, with other later
 * steps, *why says that. */
static bool may_resume(const struct pgo_pipeline *p, const struct pgo_build *b,
                       const char *progress_path, const char *done_path, const char *stamp,
                       const char *keys, char **why)
{
    *why = NULL;
    struct strbuf sb = STRBUF_INIT;
    strbuf_init(&sb, 0);
    if (p->rq->rebuild || strbuf_read_file(&sb, progress_path) < 0) {
        strbuf_release(&sb);
        return false;
    }
    char *owner = xasprintf("%s\n%s", b->name, stamp);
    size_t n = strlen(owner);
    bool same = !strncmp(sb.buf, owner, n) &&
                (!sb.buf[n] || !strncmp(sb.buf + n, "step-keys: ", 11)); /* older: no keys */
    free(owner);
    const char *nl = strchr(sb.buf, '\n');
    bool ours = nl && (size_t)(nl - sb.buf) == strlen(b->name) &&
                !strncmp(sb.buf, b->name, strlen(b->name));
    if (same || !ours) {
        strbuf_release(&sb);
        return same;
    }
    const char *old = nl + 1;
    const char *since = "the interrupted build began";
    char *d = strncmp(old, STAMP_FORMAT, strlen(STAMP_FORMAT))
                  ? xstrdup("it was begun by an older pgolab")
                  : stamp_diff_why(p, b, old, stamp, since, true);
    bool resume = false;
    if (!d) { /* only the steps differ: those begun must not */
        char *was = stamp_value(old, "step-keys");
        int k = first_unfinished_step(done_path, p->recipe.nsteps);
        struct argvec a = ARGVEC_INIT, w = ARGVEC_INIT;
        argvec_split(&a, was);
        argvec_split(&w, keys);
        assert(w.n == p->recipe.nsteps);
        int changed = -1;
        for (int i = 0; i <= k && i < w.n && changed < 0; i++)
            if (i >= a.n || strcmp(a.v[i], w.v[i]))
                changed = i;
        if (!*was)
            d = xasprintf("the recipe's build steps changed since %s", since);
        else if (changed >= 0)
            d = xasprintf("the recipe's step %s changed since %s", p->recipe.steps[changed].name,
                          since);
        else {
            resume = true;
            *why = xasprintf("the recipe's steps after %s changed since %s; they run as now "
                             "written", p->recipe.steps[k < w.n ? k : w.n - 1].name, since);
        }
        argvec_clear(&a);
        argvec_clear(&w);
        free(was);
    }
    if (!resume)
        *why = d;
    strbuf_release(&sb);
    return resume;
}

/* ---- progress ----------------------------------------------------------------------- */

struct watch {
    const char *log, *what;
    off_t from;            /* log offset where this step's output begins */
    int expected;          /* compiles the same step made last time (0 = unknown) */
    atomic_int stop;
    int compiles;          /* compiler invocations seen (make's echoed command lines) */
    int pct, done, total;  /* cmake "[ 45%]", ninja "[12/300]" */
    uint64_t t0;
};

/* Count what the build tool says in the part of the log written since the last look
 * (complete lines only; w->from advances). */
static void watch_scan(struct watch *w)
{
    FILE *f = fopen(w->log, "r");
    char line[4096];
    if (!f)
        return;
    if (fseeko(f, w->from, SEEK_SET) == 0) {
        while (fgets(line, sizeof(line), f)) {
            size_t len = strlen(line);
            if (len == 0 || line[len - 1] != '\n') {
                if (len < sizeof(line) - 1)
                    break; /* a line still being written: read it next time */
            }
            w->from += (off_t)len;
            int a, b;
            if (line[0] == '[' && sscanf(line, "[%d/%d]", &a, &b) == 2 && b > 0) {
                w->done = a;
                w->total = b;
            } else if (line[0] == '[' && sscanf(line, "[%d%%]", &a) == 1) {
                w->pct = a;
            } else if (strstr(line, " -c ") && strstr(line, " -o ")) {
                w->compiles++;
            }
        }
    }
    fclose(f);
}

static void *watch_main(void *arg)
{
    struct watch *w = arg;
    while (!atomic_load(&w->stop)) {
        watch_scan(w);
        double el = (double)(now_ns() - w->t0) / 1e9;
        double frac = -1;
        char count[64] = "";
        if (w->total > 0) {
            frac = (double)w->done / w->total;
            snprintf(count, sizeof(count), " [%d/%d]", w->done, w->total);
        } else if (w->pct > 0) {
            frac = w->pct / 100.0;
            snprintf(count, sizeof(count), " [%d%%]", w->pct);
        } else if (w->compiles > 0) {
            if (w->expected > 0) {
                frac = (double)w->compiles / w->expected;
                snprintf(count, sizeof(count), " [%d/~%d compiled]", w->compiles, w->expected);
            } else {
                snprintf(count, sizeof(count), " [%d compiled]", w->compiles);
            }
        }
        if (frac > 0.02 && frac < 1)
            progress("%s%s %.0f s, ETA %.0f s", w->what, count, el, el / frac - el);
        else
            progress("%s%s %.0f s", w->what, count, el);
        for (int i = 0; i < PROGRESS_POLL_MS / 50 && !atomic_load(&w->stop); i++) {
            struct timespec ts = { 0, 50 * 1000 * 1000 };
            nanosleep(&ts, NULL);
        }
    }
    return NULL;
}

/* ---- running steps ------------------------------------------------------------------ */

void pgo_build_vars(const struct pgo_pipeline *p, const struct pgo_build *b,
                    struct recipe_vars *v)
{
    memset(v, 0, sizeof(*v));
    v->source = p->source;
    v->build = b->build_dir;
    v->prefix = b->prefix;
    v->profile_dir = b->trainer ? b->trainer->profile_dir : p->profile_raw;
    v->phase = build_phase_name(b->phase);
    v->cc = p->cc_name;
    v->cxx = p->cxx;
    v->cflags = b->distro ? p->distro.cflags : p->cflags;
    v->cxxflags = v->cflags;
    v->pgo_flags = b->pgo_flags;
    v->lto = b->lto ? "ON" : "OFF";
    v->jobs = p->rq->jobs;
    v->major = p->recipe.major;
    v->phase_options = p->recipe.flags == RECIPE_FLAGS_OPTIONS
                           ? (const char *const *)p->recipe.phase_options[b->phase] : NULL;
}

/* The recipe's log_errors that match the text: one error each; true if any did. */
static bool log_errors(const struct recipe *r, const char *text)
{
    bool hit = false;
    for (int i = 0; i < r->nlog_errors; i++)
        if (strstr(text, r->log_errors[i].contains)) {
            error("%s", r->log_errors[i].message);
            hit = true;
        }
    return hit;
}

/* Run step i; 0 or -1 (with the command and the log tail). */
/* Below this many free bytes in the work directory a failed step is called a full disk. */
#define DISK_FULL_BYTES (16LL << 20)

/* After a failed step: if the work directory's file system is (nearly) full, say so in one
 * line, since the step's own message may not have reached its log (written there too). */
static void disk_full_hint(const struct pgo_pipeline *p, const struct pgo_build *b)
{
    long long free_b = fs_free_bytes(b->build_dir);
    if (free_b < 0)
        free_b = fs_free_bytes(p->root);
    if (free_b >= 0 && free_b < DISK_FULL_BYTES)
        error("the file system of %s is full (%lld KiB free): free space there (or pass another "
              "--workdir) and run again with --resume; %s left no variant in the cache",
              p->root, free_b / 1024, b->name);
}

/* A pgo build that stopped on GCC's "source locations for function F have changed" while it
 * compiled in another directory than the instrumented build: the usual cause is a generated
 * source whose #line names its absolute build path (recipe.h, enum recipe_build_dir). */
static void moved_source_hint(const struct pgo_pipeline *p, const struct pgo_build *b,
                              const char *log_text)
{
    if (b->phase != BUILD_PGO || !strcmp(b->build_dir, p->builds[1].build_dir))
        return;
    /* GCC's message only: no echoed command line holds the phrase */
    if (strstr(log_text, "source locations for function"))
        error("the profile's source locations do not match because %s compiled in %s and the "
              "instrumented build in %s: a generated source (a bison parser, say) names its "
              "build directory in #line; set the recipe's \"build_dir\" to "
              "\"pgo-reuses-instrumented\" (docs/recipes.md)", b->name, b->build_dir,
              p->builds[1].build_dir);
}

static int run_step(struct pgo_pipeline *p, struct pgo_build *b, int i, const char *done_path)
{
    const struct recipe_step *st = &p->recipe.steps[i];
    struct argvec argv = ARGVEC_INIT, env = ARGVEC_INIT;
    struct recipe_vars v;
    char *cwd = NULL;
    int rc = -1;
    pgo_build_vars(p, b, &v);
    expand_build_step(p, b, i, &v, &argv, &env, &cwd);
    char *cmd = subprocess_argv_str(argvec_argv(&argv));
    struct strbuf head = STRBUF_INIT, logtext = STRBUF_INIT;
    strbuf_init(&head, 0);
    strbuf_init(&logtext, 0);
    off_t from = file_size(b->log); /* where this step's part of the log begins */
    if (from < 0)
        from = 0;
    strbuf_addf(&head, "$ cd %s && %s%s", cwd, env.n ? "env " : "", "");
    for (int e = 0; e < env.n; e++)
        strbuf_addf(&head, "%s ", env.v[e]);
    strbuf_addf(&head, "%s\n", cmd);
    if (mkdir_p(cwd) < 0 || file_append(b->log, head.buf) < 0)
        goto out;

    char *count_path = xasprintf("%s/%s.count", p->root, st->name);
    struct strbuf cnt = STRBUF_INIT;
    strbuf_init(&cnt, 0);
    struct watch w = { .log = b->log, .from = from, .t0 = now_ns() };
    if (strbuf_read_file(&cnt, count_path) == 0)
        w.expected = atoi(cnt.buf);
    strbuf_release(&cnt);
    char *what = xasprintf("build %s: %s (step %d/%d)", b->name, st->name, i + 1, p->recipe.nsteps);
    w.what = what;
    atomic_init(&w.stop, 0);
    pthread_t tid;
    bool watching = stderr_is_tty() && pthread_create(&tid, NULL, watch_main, &w) == 0;
    struct subprocess sp = { .argv = argvec_argv(&argv), .cwd = cwd,
                             .env = env.n ? argvec_argv(&env) : NULL, .log_path = b->log,
                             .stop = p->interrupted };
    int status = subprocess_run(&sp);
    if (watching) {
        atomic_store(&w.stop, 1);
        pthread_join(tid, NULL);
        progress_done();
    }
    free(what);
    if (strbuf_read_file(&logtext, b->log) == 0 && (off_t)logtext.len >= from &&
        log_errors(&p->recipe, logtext.buf + from)) {
        free(count_path);
        goto out;
    }
    if (status != 0) {
        if (status > 0 && !*p->interrupted) {
            char *tail = file_tail(b->log, LOG_TAIL_LINES);
            error("build %s: step %s failed (exit %d): %s\n--- last lines of %s ---\n%s", b->name,
                  st->name, status, cmd, b->log, tail);
            free(tail);
            disk_full_hint(p, b);
            if ((off_t)logtext.len >= from)
                moved_source_hint(p, b, logtext.buf + from);
        }
        free(count_path);
        goto out;
    }
    watch_scan(&w);
    if (w.compiles > 0 && !is_file(count_path)) {
        char num[32];
        snprintf(num, sizeof(num), "%d\n", w.compiles);
        stamp_write(count_path, num);
    }
    free(count_path);
    /* this step is done for these inputs: an interrupted build resumes after it */
    struct strbuf done = STRBUF_INIT;
    strbuf_init(&done, 0);
    strbuf_read_file(&done, done_path);
    strbuf_addf(&done, "%d %s\n", i, cmd);
    rc = stamp_write(done_path, done.buf);
    strbuf_release(&done);
out:
    strbuf_release(&head);
    strbuf_release(&logtext);
    free(cmd);
    free(cwd);
    argvec_clear(&argv);
    argvec_clear(&env);
    return rc;
}

/* The pgo build must have used its profile (build_log.h): stale data is an error, except
 * clang's out-of-date functions outside the hot objects (counted); missing data is counted
 * (an error for strict recipes); so are the objects whose counts GCC corrected, when the
 * flags asked GCC to say so (correction.h). */
static int check_pgo_log(struct pgo_pipeline *p, struct pgo_build *b)
{
    struct strbuf sb = STRBUF_INIT;
    strbuf_init(&sb, 0);
    int rc = 0;
    b->profile_missing = 0;
    b->profile_stale_objects = b->profile_stale_functions = 0;
    profile_corrections_release(&b->corrections);
    if (strbuf_read_file(&sb, b->log) == 0) {
        if (b->pgo_flags && strstr(b->pgo_flags, "-fopt-info-note-ipa"))
            profile_corrections_read(sb.buf, &b->corrections);
        struct argvec hot = ARGVEC_INIT;
        for (char **h = p->recipe.hot_functions; h && *h; h++)
            argvec_pushf(&hot, "%.*s", (int)strcspn(*h, ":"), *h);
        struct build_log_scan scan;
        if (build_log_scan(sb.buf, p->recipe.strict_profile, argvec_argv(&hot), &scan) < 0) {
            char *tail = file_tail(b->log, LOG_TAIL_LINES);
            rc = error("build %s did not use the profile data (%s in %s)\n--- last lines of "
                       "%s ---\n%s", b->name, scan.problem, b->log, b->log, tail);
            free(tail);
        }
        b->profile_missing = scan.missing;
        b->profile_stale_objects = scan.nstale;
        b->profile_stale_functions = scan.stale_functions;
        build_log_scan_release(&scan);
        argvec_clear(&hot);
    }
    strbuf_release(&sb);
    return rc;
}

/* Before b's steps run: whether the interrupted build in b's build directory is resumed
 * (*resumed, may_resume()), saying why it is or is not where that is news, then the build
 * directory's progress file written with b's owner text (progress_text()); a build that is
 * not resumed starts from a clean build directory, steps-done file and log. 0 or -1. */
static int begin_build(const struct pgo_pipeline *p, struct pgo_build *b, const char *stamp,
                       const char *progress_path, const char *done_path, bool *resumed)
{
    /* resume: the same build (same inputs, same build directory owner) continues after its
     * last finished step; anything else starts from a clean build directory */
    char *keys = step_keys(p, b), *resume_why = NULL;
    bool resume = *resumed = may_resume(p, b, progress_path, done_path, stamp, keys, &resume_why);
    char *owner = progress_text(b, stamp, keys);
    free(keys);
    if (!resume) {
        if (resume_why) {
            progress_done();
            fprintf(stderr, "starting %s's interrupted build again from a clean build directory: "
                    "%s\n", b->name, resume_why);
        }
        /* b->dir first: with a shared build directory it is not build_dir's parent */
        if (mkdir_p(b->dir) < 0 || remove_tree(b->build_dir) < 0 || mkdir_p(b->build_dir) < 0 ||
            stamp_write(progress_path, owner) < 0) {
            free(owner);
            free(resume_why);
            return -1;
        }
        unlink(done_path);
        if (stamp_write(b->log, "") < 0) {
            free(owner);
            free(resume_why);
            return -1;
        }
    } else {
        progress_done();
        if (resume_why) {
            fprintf(stderr, "resuming %s's interrupted build: %s\n", b->name, resume_why);
        } else {
            /* k == nsteps: cut off after its last step, before it was recorded as built */
            int k = first_unfinished_step(done_path, p->recipe.nsteps);
            fprintf(stderr, "resuming %s's interrupted build at its step %s (%d of %d steps "
                    "done; what the build tool finished is kept)\n", b->name,
                    k < p->recipe.nsteps ? p->recipe.steps[k].name : "after the last", k,
                    p->recipe.nsteps);
        }
        free(b->why);
        b->why = xstrdup("resumed after an interruption");
        if (stamp_write(progress_path, owner) < 0) {
            free(owner);
            free(resume_why);
            return -1;
        }
    }
    free(resume_why);
    free(owner);
    return 0;
}

int pgo_build_run(struct pgo_pipeline *p, struct pgo_build *b)
{
    char *stamp = build_stamp(p, b);
    char *stamp_path = path_join(b->dir, "stamp");
    char *progress_path = path_join(b->build_dir, ".pgolab-building");
    char *done_path = path_join(b->dir, "steps-done");
    int rc = -1;

    b->cached = false;
    b->seconds = 0;
    free(b->sha256);
    b->sha256 = NULL;
    char *legacy = legacy_stamp(p, b);
    bool old_format = !stamp_matches(stamp_path, stamp) && stamp_matches(stamp_path, legacy);
    free(legacy);
    if (!p->rq->rebuild && is_file(b->product) && old_format) {
        /* the same build under an older pgolab's stamp: kept, its stamp and file list
         * written as this pgolab's */
        char *files = files_path(b);
        if ((p->source_files && stamp_write(files, p->source_files) < 0) ||
            stamp_write(stamp_path, stamp) < 0) {
            free(files);
            goto out;
        }
        free(files);
    }
    if (!p->rq->rebuild && is_file(b->product) && stamp_matches(stamp_path, stamp)) {
        b->sha256 = sha256_file(b->product);
        b->cached = b->sha256 != NULL;
        rc = b->cached ? 0 : -1;
        /* the summary's "N objects had no profile data" of a cached build: from its log */
        if (rc == 0 && b->phase == BUILD_PGO)
            rc = check_pgo_log(p, b);
        if (rc == 0)
            rc = config_check_build(p, b, false);
        goto out;
    }
    free(b->why);
    b->why = p->rq->rebuild ? xstrdup("--rebuild was given") : stamp_why(p, b, stamp_path, stamp);
    if (strcmp(b->why, "not built before")) {
        progress_done();
        fprintf(stderr, "rebuilding %s: %s\n", b->name, b->why);
    }
    unlink(stamp_path);

    bool resume;
    if (begin_build(p, b, stamp, progress_path, done_path, &resume) < 0)
        goto out;
    /* the prefix is rebuilt whole: no half variant is ever left where the cache looks */
    if (remove_tree(b->prefix) < 0 || mkdir_p(b->dir) < 0)
        goto out;

    /* steps finished by an interrupted run with the same inputs */
    bool *finished = resume ? steps_finished(done_path, p->recipe.nsteps)
                            : xcalloc((size_t)p->recipe.nsteps + 1, sizeof(bool));
    uint64_t t0 = now_ns();
    bool skipping = resume;
    for (int i = 0; i < p->recipe.nsteps; i++) {
        /* skip the finished steps up to the first unfinished one; install steps always run
         * again (the prefix was removed above) */
        if (skipping && finished[i] && strcmp(p->recipe.steps[i].name, "install"))
            continue;
        skipping = false;
        if (run_step(p, b, i, done_path) < 0 || *p->interrupted) {
            free(finished);
            remove_tree(b->prefix);
            goto out;
        }
    }
    free(finished);
    b->seconds = (double)(now_ns() - t0) / 1e9;
    if (!is_file(b->product)) {
        char *tail = file_tail(b->log, LOG_TAIL_LINES);
        error("build %s finished but made no %s (the recipe's %s)\n--- last lines of %s ---\n%s",
              b->name, b->product, p->recipe.product == RECIPE_SERVER ? "server.binary" : "library",
              b->log, tail);
        free(tail);
        remove_tree(b->prefix);
        goto out;
    }
    if (b->phase == BUILD_PGO && check_pgo_log(p, b) < 0) {
        remove_tree(b->prefix);
        goto out;
    }
    if (b->phase == BUILD_PGO && b->corrections.objects > 0) {
        char *line = profile_corrections_line(&b->corrections);
        progress_done();
        warning("build %s: %s", b->name, line);
        free(line);
    }
    /* before anything is kept: a build configured otherwise than its baseline is refused */
    if (config_check_build(p, b, true) < 0) {
        remove_tree(b->prefix);
        goto out;
    }
    b->sha256 = sha256_file(b->product);
    if (!b->sha256)
        goto out;
    if (b->phase == BUILD_INSTRUMENTED) { /* the notes outlive a reused build directory */
        char *notes = path_join(b->dir, "notes");
        int nrc = profile_notes_keep(b->build_dir, notes, p->recipe.hot_functions);
        free(notes);
        if (nrc < 0)
            goto out;
    }
    /* the file list first: a stamp is never without the list that names its files */
    char *files = files_path(b);
    int frc = p->source_files ? stamp_write(files, p->source_files) : 0;
    free(files);
    if (frc < 0 || stamp_write(stamp_path, stamp) < 0)
        goto out;
    unlink(progress_path);
    unlink(done_path);
    rc = 0;
out:
    free(stamp);
    free(stamp_path);
    free(progress_path);
    free(done_path);
    return rc;
}
