/* train: one trainer's run on the instrumented build and the profile check after it. The
 * instrumented server writes its profile data (GCC .gcda, clang .profraw) into the raw
 * profile directory compiled into it when its processes exit cleanly — PostgreSQL's forked
 * backends each add to the same files — so training ends with a clean shutdown, never a
 * SIGKILL. The raw data is then moved to the trainer's own directory (clang: merged into its
 * .profdata), which its pgo build reads. */
#include "pgo/stages.h"
#include "server/server.h"
#include "util/fs.h"
#include "util/progress.h"
#include "util/strbuf.h"
#include "util/util.h"

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- counting files ----------------------------------------------------------------- */

static struct {
    const char *suffix;
    int count;
    off_t bytes;
} cnt;

static int count_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)ftw;
    size_t n = strlen(path), ls = strlen(cnt.suffix);
    if (type == FTW_F && n > ls && !strcmp(path + n - ls, cnt.suffix) && st->st_size > 0) {
        cnt.count++;
        cnt.bytes += st->st_size;
    }
    return 0;
}

/* Non-empty files ending in suffix anywhere under dir. */
static int count_files(const char *dir, const char *suffix, off_t *bytes)
{
    cnt.suffix = suffix;
    cnt.count = 0;
    cnt.bytes = 0;
    if (is_dir(dir))
        nftw(dir, count_one, 32, FTW_PHYS);
    if (bytes)
        *bytes = cnt.bytes;
    return cnt.count;
}

/* ---- training ----------------------------------------------------------------------- */

static char *train_stamp(const struct pgo_pipeline *p, const struct pgo_trainer *t)
{
    /* what of the recipe training reads: the server options, and the suite for "suite" */
    struct strbuf r = STRBUF_INIT;
    strbuf_init(&r, 0);
    for (char **o = p->recipe.train_options; o && *o; o++)
        strbuf_addf(&r, "option %s\n", *o);
    for (int i = 0; t->suite && i < p->recipe.nsuite; i++)
        for (char **a = p->recipe.suite[i].argv; *a; a++)
            strbuf_addf(&r, "suite %d %s\n", i, *a);
    char *rkey = path_key(r.buf);
    strbuf_release(&r);
    char *stamp = xasprintf("instrumented-sha256: %s\ntrainer: %s\ntime: %d\nthreads: %d\n"
                            "tables: %d\ntable-size: %d\nrecipe-training: %s\n",
                            p->builds[1].sha256, t->name, p->rq->train_time,
                            p->rq->train_threads, p->rq->tables, p->rq->table_size, rkey);
    free(rkey);
    return stamp;
}

/* The raw profile directory must be writable by the server's user (PostgreSQL runs as
 * postgres when pgolab is root), and so must every file in it: the instrumented processes
 * create the files themselves, and each later process that runs the same object adds its
 * counts to the same file. A default ACL makes every file created there rw for all users
 * whatever the creator's umask; where the file system has none, the profile check after the
 * training (profile_check.c) still finds any file the server's user could not update. */
static int open_raw_dir(const char *raw)
{
    if (profile_wipe(raw) < 0)
        return -1;
    return dir_share_files(raw) < 0 ? -1 : 0;
}

/* Where the counts of a cached training are kept (the instrumented build directory of a
 * shared-build-dir recipe is gone by then). */
static char *counts_path(const struct pgo_trainer *t)
{
    return xasprintf("%s.counts", t->profile_dir);
}

/* Whether a GCC-built program has profiling code at all (libgcov: its __gcov_ symbols and
 * "profiling:" messages). 1 yes, 0 no, -1 unreadable. */
static int has_gcov(const char *path)
{
    struct strbuf sb = STRBUF_INIT;
    strbuf_init(&sb, 0);
    int rc = -1;
    if (strbuf_read_file(&sb, path) == 0)
        rc = memmem(sb.buf, sb.len, "__gcov_", 7) || memmem(sb.buf, sb.len, "profiling:", 10);
    strbuf_release(&sb);
    return rc;
}

/* The profile check (profile_check.h) of t's profile: read the counters, refuse an unhealthy
 * profile with its one line, and keep the counts beside the profile for a cached run. A
 * fresh training (log: its bench log; the server logs are LOG.server) is checked in full; a
 * cached one reads the saved counts back, or, saved by an older pgolab, is read again (its
 * logs are gone, its files are still checked). */
static int health_check(struct pgo_pipeline *p, struct pgo_trainer *t, const char *log,
                        int64_t start)
{
    uid_t uid = geteuid();
    char *user = NULL;
    if (p->recipe.product == RECIPE_SERVER &&
        server_run_user(p->recipe.server_kind, &uid, &user) < 0)
        return -1;
    char *path = xasprintf("%s.health", t->profile_dir);
    char *server_log = log ? xasprintf("%s.server", log) : NULL;
    char *const logs[] = { server_log, NULL };
    /* the instrumented build's notes as steps.c kept them (an older pgolab kept none: then
     * its build directory, while it is there) */
    char *notes = path_join(p->builds[1].dir, "notes");
    struct profile_check_in in = {
        .cc = &p->cc, .profile_dir = t->profile_dir, .profdata = t->profdata,
        .notes_dir = is_dir(notes) ? notes : p->builds[1].build_dir,
        .hot = p->recipe.hot_functions, .logs = logs,
        .train_uid = uid, .train_user = user, .train_start = start,
    };
    int rc = profile_health_run(&in, t->name, path, log != NULL, &t->health);
    free(notes);
    free(server_log);
    free(user);
    free(path);
    return rc;
}

static int check_profile(struct pgo_pipeline *p, struct pgo_trainer *t, const char *log,
                         int64_t start)
{
    if (p->cc.family == CC_GCC) {
        off_t bytes = 0;
        t->objects_profiled = count_files(t->profile_dir, ".gcda", &bytes);
        t->profile.files = t->objects_profiled;
        t->profile.bytes = bytes;
        if (t->objects_profiled == 0 && has_gcov(p->builds[1].product) == 0)
            return error("training with %s wrote no profile data in %s: the instrumented "
                         "server %s has no profiling code (no libgcov in it), so the "
                         "recipe's instrumentation flags never reached its compiler and "
                         "linker; see %s", t->name, t->profile_dir, p->builds[1].product,
                         p->builds[1].log);
        if (t->objects_profiled == 0)
            return error("training with %s wrote no profile data in %s: the instrumented "
                         "server writes it when its processes exit cleanly (a server that was "
                         "killed, crashed, or could not write to that directory writes nothing); "
                         "see %s/train-%s.log", t->name, t->profile_dir, p->root, t->key);
        struct argvec files = ARGVEC_INIT;
        list_files(&files, t->profile_dir, ".gcda");
        char *list = sha256_files((const char *const *)files.v);
        argvec_clear(&files);
        if (!list)
            return -1;
        free(t->profile.id);
        t->profile.id = path_key(list);
        free(list);
        return health_check(p, t, log, start);
    }
    /* clang: merge the raw files; profile_collect checks they are there and non-zero */
    profile_info_release(&t->profile);
    if (profile_collect(&p->cc, t->profile_dir, t->profdata, &t->profile) < 0)
        return -1;
    return health_check(p, t, log, start);
}

/* Why t is trained again although an earlier training left a stamp at stamp_path (or
 * NULL: nothing to say, a first training): the first key of the stamp that differs, in
 * words. Caller frees. */
static char *train_why(const struct pgo_pipeline *p, const struct pgo_trainer *t,
                       const char *stamp_path, const char *stamp)
{
    static const struct {
        const char *key, *words;
    } names[] = {
        { "instrumented-sha256", "its profile is from another instrumented build" },
        { "trainer", "the trainer changed" },
        { "time", "--train-time changed" },
        { "threads", "--train-threads changed" },
        { "tables", "--tables changed" },
        { "table-size", "--table-size changed" },
        { "recipe-training", "the recipe's training server options or suite changed" },
    };
    if (p->rq->rebuild)
        return xstrdup("--rebuild was given");
    struct strbuf old = STRBUF_INIT;
    strbuf_init(&old, 0);
    if (strbuf_read_file(&old, stamp_path) < 0) {
        strbuf_release(&old);
        /* a profile without its stamp: the training that made it did not finish */
        return is_dir(t->profile_dir)
                   ? xasprintf("the last training did not finish, so its profile %s was never "
                               "kept", t->profile_dir)
                   : NULL;
    }
    char *why = NULL;
    for (size_t i = 0; i < ARRAY_SIZE(names) && !why; i++) {
        char *k = xasprintf("%s: ", names[i].key);
        const char *a = strstr(old.buf, k), *b = strstr(stamp, k);
        size_t la = a ? strcspn(a, "\n") : 0, lb = b ? strcspn(b, "\n") : 0;
        if (!a != !b || (a && (la != lb || strncmp(a, b, la))))
            why = xasprintf("%s since the last training (was \"%.*s\", now \"%.*s\")",
                            names[i].words, a ? (int)(la - strlen(k)) : 0, a ? a + strlen(k) : "",
                            b ? (int)(lb - strlen(k)) : 0, b ? b + strlen(k) : "");
        free(k);
    }
    strbuf_release(&old);
    return why ? why : xstrdup("its stamp differs from the last training's");
}

/* After a training that failed or was interrupted before its profile was kept: nothing of it
 * stays (the raw data, whatever was moved or merged of it, the counts), so no later build can
 * read a half-written profile; one line names what was lost and how to go on. */
static void drop_partial(struct pgo_pipeline *p, struct pgo_trainer *t, const char *cpath)
{
    profile_wipe(p->profile_raw);
    remove_tree(t->profile_dir);
    if (t->profdata)
        unlink(t->profdata);
    unlink(cpath);
    progress_done();
    if (*p->interrupted)
        error("training %s interrupted: its profile %s is lost (the partial data was discarded, "
              "nothing merged from it); the same command trains it again", t->name,
              t->profile_dir);
    else
        error("training %s failed: its profile %s is lost (the partial data was discarded, "
              "nothing merged from it); the same command trains it again once the cause above "
              "is fixed", t->name, t->profile_dir);
}

int pgo_train(struct pgo_pipeline *p, struct pgo_trainer *t)
{
    char *stamp = train_stamp(p, t);
    char *stamp_path = xasprintf("%s.stamp", t->profile_dir);
    char *log = xasprintf("%s/train-%s.log", p->root, t->key);
    const char *raw = p->profile_raw;
    char *cpath = counts_path(t);
    int rc = -1;
    bool partial = false; /* training ran and its profile is not kept yet */

    bool same = !p->rq->rebuild && stamp_matches(stamp_path, stamp);
    if (same && !is_dir(t->profile_dir))
        fprintf(stderr, "retraining %s: its profile %s was removed\n", t->name, t->profile_dir);
    if (same && is_dir(t->profile_dir)) {
        struct strbuf c = STRBUF_INIT;
        strbuf_init(&c, 0);
        if (strbuf_read_file(&c, cpath) == 0)
            t->objects = atoi(c.buf);
        strbuf_release(&c);
        t->cached = true;
        rc = check_profile(p, t, NULL, 0);
        goto out;
    }
    if (!same) {
        char *why = train_why(p, t, stamp_path, stamp);
        if (why) {
            progress_done();
            fprintf(stderr, "retraining %s: %s\n", t->name, why);
        }
        free(why);
    }
    unlink(stamp_path);
    if (open_raw_dir(raw) < 0 || stamp_write(log, "") < 0)
        goto out;
    partial = true;
    uint64_t t0 = now_ns();
    int64_t start = (int64_t)wall_time();
    const struct pgo_build *ins = &p->builds[1];
    if (t->suite) {
        progress("training %s: the regression suite on the instrumented build", t->name);
        rc = pgo_run_suite(p, ins, p->recipe.train_options, log);
        progress_done();
        if (rc < 0)
            goto out;
        rc = -1;
    } else if (pgo_train_server(p, t, ins->prefix, log) < 0) {
        goto out;
    }
    t->seconds = (double)(now_ns() - t0) / 1e9;
    if (profile_move(raw, t->profile_dir) < 0)
        goto out;
    /* the objects compiled (GCC writes .gcno notes only with --coverage, never with
     * -fprofile-generate) */
    t->objects = count_files(ins->build_dir, ".o", NULL);
    char num[32];
    snprintf(num, sizeof(num), "%d\n", t->objects);
    stamp_write(cpath, num);
    /* complete from here: a profile the check refuses is kept to be looked at (no stamp: the
     * next run trains again), unless the check was interrupted (clang's merge) */
    partial = false;
    if (check_profile(p, t, log, start) < 0) {
        partial = *p->interrupted;
        goto out;
    }
    rc = stamp_write(stamp_path, stamp);
out:
    if (rc < 0 && (partial || *p->interrupted) && !t->cached)
        drop_partial(p, t, cpath);
    free(stamp);
    free(stamp_path);
    free(log);
    free(cpath);
    return rc;
}
