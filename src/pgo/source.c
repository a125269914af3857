/* source: finding, fetching and hashing a recipe target's source tree (see source.h). Every
 * command runs from an argv array, never a shell. */
#include "pgo/source.h"
#include "toolchain/toolchain.h"
#include "util/fs.h"
#include "util/progress.h"
#include "util/strbuf.h"
#include "util/subprocess.h"
#include "util/util.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define LOG_TAIL_LINES 15

/* The first of files (NULL-terminated) that dir lacks, or NULL when it has them all. */
static const char *missing_of(char *const *files, const char *dir)
{
    if (!is_dir(dir))
        return files[0];
    for (char *const *e = files; *e; e++) {
        char *p = path_join(dir, *e);
        bool ok = file_size(p) >= 0;
        free(p);
        if (!ok)
            return *e;
    }
    return NULL;
}

bool pgo_source_is_prepared(const struct recipe *r, const char *dir)
{
    return r->prepared && missing_of(r->expect, dir) && !missing_of(r->prepared, dir);
}

/* The first expected file dir lacks, or NULL when dir matches the recipe (a full tree, or
 * for a library recipe an already prepared one). */
static const char *missing_file(const struct recipe *r, const char *dir)
{
    const char *miss = missing_of(r->expect, dir);
    return miss && pgo_source_is_prepared(r, dir) ? NULL : miss;
}

static void add_list(struct strbuf *sb, char *const *files)
{
    for (char *const *e = files; *e; e++)
        strbuf_addf(sb, "%s%s", e == files ? "" : ", ", *e);
}

static int not_a_tree(const struct recipe *r, const char *opt, const char *missing)
{
    struct strbuf list = STRBUF_INIT;
    strbuf_init(&list, 0);
    add_list(&list, r->expect);
    if (r->prepared) {
        strbuf_addf(&list, "; or, prepared%s%s: ", r->prepare_name ? " as the " : "",
                    r->prepare_name ? r->prepare_name : "");
        add_list(&list, r->prepared);
    }
    error("--source=%s: not a %s source tree (no %s; expected %s%s%s)", opt, r->title ? r->title : r->name, missing,
          list.buf, r->source_hint ? "; " : "", r->source_hint ? r->source_hint : "");
    strbuf_release(&list);
    return -1;
}

/* dir itself or the newest subdirectory (strverscmp) whose name starts with prefix (NULL:
 * any) that matches the recipe. */
static char *find_tree_in(const struct recipe *r, const char *dir, const char *prefix)
{
    if (!prefix && !missing_file(r, dir))
        return abs_path(dir);
    DIR *d = opendir(dir);
    char *best = NULL, *best_name = NULL;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.' || (prefix && strncmp(e->d_name, prefix, strlen(prefix))))
            continue;
        char *sub = path_join(dir, e->d_name);
        if (!missing_file(r, sub) && (!best || strverscmp(e->d_name, best_name) > 0)) {
            free(best);
            free(best_name);
            best = sub;
            best_name = xstrdup(e->d_name);
        } else {
            free(sub);
        }
    }
    if (d)
        closedir(d);
    free(best_name);
    char *out = best ? abs_path(best) : NULL;
    free(best);
    return out;
}

static int run_logged(const char *what, const char *const *argv, const char *cwd,
                      const char *log, bool report)
{
    struct subprocess sp = { .argv = argv, .cwd = cwd, .log_path = log };
    int st = subprocess_run(&sp);
    if (st == 0)
        return 0;
    if (st > 0 && report) {
        char *cmd = subprocess_argv_str(argv);
        char *tail = file_tail(log, LOG_TAIL_LINES);
        error("%s failed (exit %d): %s\n--- last lines of %s ---\n%s", what, st, cmd, log, tail);
        free(cmd);
        free(tail);
    }
    return -1;
}

/* Versions `apt-cache showsrc PKG` lists, newest first (strverscmp: Debian's versions of one
 * package compare the same way here). */
static void source_versions(const char *pkg, struct argvec *out)
{
    struct strbuf sb = STRBUF_INIT;
    strbuf_init(&sb, 0);
    const char *argv[] = { "apt-cache", "showsrc", pkg, NULL };
    struct subprocess sp = { .argv = argv, .out = &sb, .quiet_stderr = 1 };
    if (subprocess_run(&sp) == 0) {
        for (char *line = sb.buf; line && *line;) {
            char *nl = strchr(line, '\n');
            if (nl)
                *nl = '\0';
            if (!strncmp(line, "Version: ", 9)) {
                bool dup = false;
                for (int i = 0; i < out->n && !dup; i++)
                    dup = !strcmp(out->v[i], line + 9);
                if (!dup)
                    argvec_push(out, line + 9);
            }
            line = nl ? nl + 1 : NULL;
        }
    }
    strbuf_release(&sb);
    for (int i = 1; i < out->n; i++)
        for (int j = i; j > 0 && strverscmp(out->v[j - 1], out->v[j]) < 0; j--) {
            char *t = out->v[j];
            out->v[j] = out->v[j - 1];
            out->v[j - 1] = t;
        }
}

static int fetch_debian(const struct recipe *r, const char *srcdir, char **dir)
{
    char *prefix = xasprintf("%s-", r->debian_package);
    char *log = path_join(srcdir, "apt-get-source.log");
    int rc = -1;
    if ((*dir = find_tree_in(r, srcdir, prefix))) {
        rc = 0;
        goto out;
    }
    if (mkdir_p(srcdir) < 0)
        goto out;
    unlink(log);
    progress("source: apt-get source %s (in %s)", r->debian_package, srcdir);
    const char *argv[] = { "apt-get", "source", r->debian_package, NULL };
    struct subprocess sp = { .argv = argv, .cwd = srcdir, .log_path = log };
    int st = subprocess_run(&sp);
    if (st > 0 && st < 128) {
        /* the candidate's files may be missing on the mirror: try every listed version */
        struct argvec versions = ARGVEC_INIT;
        source_versions(r->debian_package, &versions);
        for (int i = 0; i < versions.n && st > 0 && st < 128; i++) {
            char *spec = xasprintf("%s=%s", r->debian_package, versions.v[i]);
            progress("source: apt-get source %s (in %s)", spec, srcdir);
            const char *av[] = { "apt-get", "source", spec, NULL };
            struct subprocess sv = { .argv = av, .cwd = srcdir, .log_path = log };
            st = subprocess_run(&sv);
            free(spec);
        }
        argvec_clear(&versions);
    }
    progress_done();
    rc = st == 0 ? 0 : -1;
    if (st >= 128)
        goto out; /* killed by a signal (an interruption): the caller says so */
    if (rc < 0) {
        char *tail = file_tail(log, LOG_TAIL_LINES);
        error("apt-get source %s failed for every version apt-cache lists (needs deb-src "
              "entries: add deb-src to Types: in /etc/apt/sources.list.d/debian.sources and "
              "run apt-get update, or run scripts/install-deps.sh from pgolab's source tree; "
              "or pass --source=DIR|TARBALL)\n"
              "--- last lines of %s ---\n%s", r->debian_package, log, tail);
        free(tail);
        goto out;
    }
    if (!(*dir = find_tree_in(r, srcdir, prefix)))
        rc = error("apt-get source %s left no %s* tree matching the %s recipe in %s",
                   r->debian_package, prefix, r->name, srcdir);
out:
    free(prefix);
    free(log);
    return rc;
}

static int unpack_tarball(const struct recipe *r, const char *opt, const char *srcdir, char **dir)
{
    char *real = abs_path(opt);
    /* keyed by the tarball's content: a new tarball at the same path is unpacked anew */
    char *sha = sha256_file(real);
    char *key = sha ? xstrndup(sha, 16) : NULL;
    free(sha);
    if (!key) {
        free(real);
        return -1;
    }
    char *name = xasprintf("tarball-%s", key);
    char *into = path_join(srcdir, name);
    char *log = path_join(srcdir, "tar.log");
    int rc = -1;
    if (!(*dir = find_tree_in(r, into, NULL))) {
        if (remove_tree(into) < 0 || mkdir_p(into) < 0)
            goto out;
        const char *argv[] = { "tar", "-xf", real, "-C", into, NULL };
        if (run_logged("unpacking the source tarball", argv, NULL, log, true) < 0) {
            remove_tree(into);
            goto out;
        }
        if (!(*dir = find_tree_in(r, into, NULL))) {
            DIR *d = opendir(into);
            struct dirent *e;
            while (d && !*dir && (e = readdir(d)))
                if (e->d_name[0] != '.') {
                    char *sub = path_join(into, e->d_name);
                    *dir = find_tree_in(r, sub, NULL);
                    free(sub);
                }
            if (d)
                closedir(d);
        }
        if (!*dir) {
            not_a_tree(r, opt, missing_file(r, into));
            remove_tree(into);
            goto out;
        }
    }
    rc = 0;
out:
    free(real);
    free(key);
    free(name);
    free(into);
    free(log);
    return rc;
}

int pgo_source_resolve(const struct recipe *r, const char *opt, const char *srcdir, char **dir)
{
    *dir = NULL;
    if (opt) {
        struct stat st;
        if (stat(opt, &st) < 0)
            return error("--source=%s: %s", opt, strerror(errno));
        if (S_ISDIR(st.st_mode)) {
            const char *miss = missing_file(r, opt);
            if (miss)
                return not_a_tree(r, opt, miss);
            *dir = abs_path(opt);
            return 0;
        }
        return unpack_tarball(r, opt, srcdir, dir);
    }
    if (!r->debian_package)
        return error("the %s recipe needs --source=DIR or TARBALL (it names no Debian source "
                     "package%s%s)", r->name, r->source_hint ? "; " : "",
                     r->source_hint ? r->source_hint : "");
    return fetch_debian(r, srcdir, dir);
}

char *pgo_source_debian_version(const char *dir)
{
    /* apt-get source unpacks PKG_VERSION.dsc's tree as PKG-UPSTREAM beside the .dsc */
    char *parent = xstrdup(dir);
    char *slash = strrchr(parent, '/');
    char *version = NULL;
    if (!slash) {
        free(parent);
        return NULL;
    }
    const char *base = slash + 1;
    const char *dash = strrchr(base, '-');
    *slash = '\0';
    if (dash) {
        size_t plen = (size_t)(dash - base);
        DIR *d = opendir(parent);
        struct dirent *e;
        while (d && (e = readdir(d))) {
            size_t n = strlen(e->d_name);
            if (n > plen + 5 && !strncmp(e->d_name, base, plen) && e->d_name[plen] == '_' &&
                !strcmp(e->d_name + n - 4, ".dsc") &&
                !strncmp(e->d_name + plen + 1, dash + 1, strlen(dash + 1))) {
                free(version);
                version = xstrndup(e->d_name + plen + 1, n - plen - 5);
            }
        }
        if (d)
            closedir(d);
    }
    free(parent);
    return version;
}
