/* prepare: the prepare stage of a library recipe (see source.h): the recipe's "prepare"
 * steps make the prepared files (SQLite: the amalgamation) from a full source tree, once per
 * tree, out of tree. Every command runs from an argv array, never a shell. */
#include "pgo/source.h"
#include "toolchain/toolchain.h"
#include "util/fs.h"
#include "util/progress.h"
#include "util/signals.h"
#include "util/strbuf.h"
#include "util/subprocess.h"
#include "util/util.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LOG_TAIL_LINES 15

/* The first prepared file dir lacks, or NULL. */
static const char *prepared_missing(const struct recipe *r, const char *dir)
{
    for (char **f = r->prepared; *f; f++) {
        char *p = path_join(dir, *f);
        bool ok = is_file(p);
        free(p);
        if (!ok)
            return *f;
    }
    return NULL;
}

/* The prepare steps as expanded for this tree: what the stamp records besides the tree. */
static void stamp_steps(const struct recipe *r, const struct recipe_vars *v, struct strbuf *stamp)
{
    for (int i = 0; i < r->nprepare; i++) {
        struct argvec argv = ARGVEC_INIT, env = ARGVEC_INIT;
        char *cwd = NULL;
        recipe_expand_step(&r->prepare[i], v, &argv, &env, &cwd);
        char *cmd = subprocess_argv_str(argvec_argv(&argv));
        char *envs_str = env.n ? subprocess_argv_str(argvec_argv(&env)) : xstrdup("");
        strbuf_addf(stamp, "step: cd %s && %s%s%s\n", cwd, envs_str, env.n ? " " : "", cmd);
        free(cmd);
        free(cwd);
        free(envs_str);
        argvec_clear(&argv);
        argvec_clear(&env);
    }
}

/* Run prepare step i (expanded again: argv arrays, not the stamp's text) with its output
 * appended to log after a "$ cd DIR && COMMAND" line. */
static int run_one(const struct recipe *r, int i, const struct recipe_vars *v, const char *log,
                   const volatile sig_atomic_t *stop)
{
    if (sig_caught())
        return -1; /* interrupted between steps: start no other (the caller says so) */
    struct argvec argv = ARGVEC_INIT, env = ARGVEC_INIT;
    char *cwd = NULL;
    recipe_expand_step(&r->prepare[i], v, &argv, &env, &cwd);
    char *cmd = subprocess_argv_str(argvec_argv(&argv));
    char *head = xasprintf("$ cd %s && %s\n", cwd, cmd);
    int rc = -1;
    progress("%s: %s (%s source %s)", r->prepare_name, r->prepare[i].name, r->title, v->source);
    if (mkdir_p(cwd) == 0 && file_append(log, head) == 0) {
        struct subprocess sp = { .argv = argvec_argv(&argv), .cwd = cwd,
                                 .env = env.n ? argvec_argv(&env) : NULL, .log_path = log,
                                 .stop = stop };
        int st = subprocess_run(&sp);
        if (st == 0) {
            rc = 0;
        } else if (st > 0 && !sig_child_interrupted(st)) { /* else interrupted: said by caller */
            char *tail = file_tail(log, LOG_TAIL_LINES);
            error("%s: step %s failed (exit %d): %s\n--- last lines of %s ---\n%s",
                  r->prepare_name, r->prepare[i].name, st, cmd, log, tail);
            free(tail);
        }
    }
    free(cmd);
    free(head);
    free(cwd);
    argvec_clear(&argv);
    argvec_clear(&env);
    return rc;
}

int pgo_prepare(const struct recipe *r, const char *source, const char *workdir,
                const struct recipe_vars *vars, bool force, const volatile sig_atomic_t *stop,
                struct pgo_prepared *out)
{
    memset(out, 0, sizeof(*out));
    if (!r->nprepare || pgo_source_is_prepared(r, source)) {
        out->dir = xstrdup(source);
        out->cached = true;
        goto done;
    }
    out->ran = true;
    char *key = path_key(source);
    char *name = xasprintf("amalg-%s", key);
    out->dir = path_join(workdir, name);
    free(key);
    free(name);
    struct recipe_vars v = *vars;
    v.source = source;
    v.build = out->dir;
    v.prepared = out->dir;
    struct strbuf stamp = STRBUF_INIT;
    char *stamp_path = path_join(out->dir, ".pgolab-stamp");
    char *log = path_join(out->dir, "build.log");
    int rc = -1;
    /* the tree's content, not only its path: an edited tree is prepared again */
    char *content = tree_sha256(source);
    strbuf_init(&stamp, 0);
    if (!content)
        goto out;
    strbuf_addf(&stamp, "source: %s\ncontent: %s\n", source, content);
    free(content);
    stamp_steps(r, &v, &stamp);

    if (!force && stamp_matches(stamp_path, stamp.buf) && !prepared_missing(r, out->dir)) {
        out->cached = true;
        rc = 0;
        goto out;
    }
    if (recipe_check_tools(r, r->prepare_tools, r->nprepare_tools, r->prepare_name, source) < 0)
        goto out;
    if (remove_tree(out->dir) < 0 || mkdir_p(out->dir) < 0)
        goto out;
    uint64_t t0 = now_ns();
    for (int i = 0; i < r->nprepare; i++)
        if (run_one(r, i, &v, log, stop) < 0)
            goto out;
    const char *miss = prepared_missing(r, out->dir);
    if (miss) {
        error("%s: the steps left no %s in %s (see %s)", r->prepare_name, miss, out->dir, log);
        goto out;
    }
    out->seconds = (double)(now_ns() - t0) / 1e9;
    rc = stamp_write(stamp_path, stamp.buf);
out:
    progress_done();
    strbuf_release(&stamp);
    free(stamp_path);
    free(log);
    if (rc < 0) {
        pgo_prepared_release(out);
        return -1;
    }
done:
    out->main = path_join(out->dir, r->prepared ? r->prepared[0] : r->expect[0]);
    return 0;
}

void pgo_prepared_release(struct pgo_prepared *p)
{
    free(p->dir);
    free(p->main);
    memset(p, 0, sizeof(*p));
}
