/* source: finding, fetching and hashing a recipe target's source tree (see source.h). Every
 * command runs from an argv array, never a shell. */
#include "pgo/source.h"
#include "pgo/apt.h"
#include "toolchain/toolchain.h"
#include "util/fs.h"
#include "util/progress.h"
#include "util/strbuf.h"
#include "util/subprocess.h"
#include "util/util.h"

#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define LOG_TAIL_LINES 15

char *pgo_source_debian_version(const char *dir);

const char *pgo_version_without_epoch(const char *version)
{
    size_t n = strspn(version, "0123456789");
    return n && version[n] == ':' ? version + n + 1 : version;
}

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
    error("--source=%s: not a %s source tree (no %s; expected %s%s%s)", opt,
          r->title ? r->title : r->name, missing, list.buf, r->source_hint ? "; " : "",
          r->source_hint ? r->source_hint : "");
    strbuf_release(&list);
    return -1;
}

/* Whether Debian or upstream version is of major ("18" of "18.6-3", "11.8" of
 * "1:11.8.9+ds-4"; not "1" of "18.6"). */
static bool of_major(const char *version, const char *major)
{
    const char *colon = strchr(version, ':');
    const char *v = colon ? colon + 1 : version;
    size_t n = strlen(major);
    return !strncmp(v, major, n) && (v[n] == '.' || v[n] == '-' || v[n] == '+' || v[n] == '~');
}

/* dir itself or the newest subdirectory (strverscmp) whose name starts with prefix (NULL:
 * any) that matches the recipe (and, when the recipe's major is selected, is of it). */
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
        char *version = r->major ? pgo_source_debian_version(sub) : NULL;
        bool major_ok = !r->major || (version && of_major(version, r->major));
        free(version);
        if (major_ok && !missing_file(r, sub) && (!best || strverscmp(e->d_name, best_name) > 0)) {
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

/* Record which suite the tree of pkg=version came from, beside its .dsc. */
static void write_origin(const char *srcdir, const char *pkg, const char *version,
                         const char *suite)
{
    char *name = xasprintf("%s_%s.pgolab-suite", pkg, version);
    char *path = path_join(srcdir, name);
    char *text = xasprintf("%s\n", suite);
    unlink(path);
    file_append(path, text);
    free(text);
    free(path);
    free(name);
}

/* The recipe's selected major is in no suite apt knows: one line naming the majors of the
 * recipe that some suite carries (each major's package asked for in turn). */
static void no_major(const struct recipe *r, const struct apt_conf *apt)
{
    struct strbuf have = STRBUF_INIT;
    strbuf_init(&have, 0);
    for (char **m = r->majors; m && *m; m++) {
        struct recipe_vars v = { .major = *m };
        char *pkg = recipe_expand(r->debian_package_template, &v);
        struct apt_candidate *c = NULL;
        int nc = 0;
        apt_candidates(apt, pkg, &c, &nc);
        bool carried = false;
        for (int i = 0; i < nc && !carried; i++)
            carried = of_major(c[i].version, *m) &&
                      (!r->debian_suite || !strcmp(c[i].suite, r->debian_suite));
        if (carried)
            strbuf_addf(&have, "%s%s", have.len ? ", " : "", *m);
        apt_candidates_free(c, nc);
        free(pkg);
    }
    error("--db-version=%s: no Debian suite pgolab looks in (%s) carries %s %s; %s: %s "
          "(or pass --source=DIR|TARBALL)", r->major, apt->suites, r->debian_package, r->major,
          have.len ? "the majors of the recipe they carry"
                   : "they carry none of the recipe's majors",
          have.len ? have.buf : "check the network, or pgolab's apt lists");
    strbuf_release(&have);
}

/* `apt-get source` of the recipe's package through pgolab's own apt configuration (apt.h):
 * the recipe's suite, else the first suite that carries it (the system's release first);
 * within it the newest version whose files the mirror has (one may answer 404). */
static int fetch_debian(const struct recipe *r, const char *srcdir, char **dir)
{
    const char *pkg = r->debian_package;
    char *prefix = xasprintf("%s-", pkg);
    char *log = path_join(srcdir, "apt-get-source.log");
    struct apt_conf apt;
    struct apt_candidate *c = NULL;
    int nc = 0, rc = -1, st = 1;
    const char *suite = NULL, *tried = NULL;
    struct strbuf tried_in = STRBUF_INIT;
    bool opened = false;
    if ((*dir = find_tree_in(r, srcdir, prefix))) { /* fetched before: works offline */
        rc = 0;
        goto out;
    }
    if (mkdir_p(srcdir) < 0 || apt_conf_open(&apt, NULL) < 0)
        goto out;
    opened = true;
    if (apt_refresh(&apt, false, NULL) < 0)
        goto out;
    apt_candidates(&apt, pkg, &c, &nc);
    if (nc == 0 && apt_refresh(&apt, true, NULL) == 0) /* lists from before the package */
        apt_candidates(&apt, pkg, &c, &nc);
    for (int i = 0; i < nc && !suite; i++)
        if ((!r->debian_suite || !strcmp(c[i].suite, r->debian_suite)) &&
            (!r->major || of_major(c[i].version, r->major)))
            suite = c[i].suite;
    if (!suite && r->major) {
        no_major(r, &apt);
        goto out;
    }
    if (!suite) {
        char *cmd = apt_fetch_command(&apt, pkg, NULL);
        if (r->debian_suite)
            error("the %s recipe's source package %s is not in Debian's %s suite (pgolab's apt "
                  "lists: %s; `%s`; or pass --source=DIR|TARBALL)", r->name, pkg, r->debian_suite,
                  apt.suites, cmd);
        else
            error("no Debian suite pgolab looks in carries the source package %s (%s; `%s`; or "
                  "pass --source=DIR|TARBALL)", pkg, apt.suites, cmd);
        free(cmd);
        goto out;
    }
    unlink(log);
    /* with a major selected, every suite that carries it (the mirror may miss one's files);
     * else the one suite, its versions newest first */
    const char *first = suite;
    strbuf_init(&tried_in, 0);
    for (int i = 0; i < nc && st > 0 && st < 128; i++) {
        bool fits = r->major ? of_major(c[i].version, r->major) &&
                                   (!r->debian_suite || !strcmp(c[i].suite, r->debian_suite))
                             : !strcmp(c[i].suite, first);
        if (!fits)
            continue;
        tried = c[i].version;
        suite = c[i].suite;
        strbuf_addf(&tried_in, "%s%s in %s", tried_in.len ? ", " : "", tried, suite);
        progress("source: apt-get source %s=%s (Debian %s, in %s)", pkg, tried, suite, srcdir);
        st = apt_fetch(&apt, pkg, tried, srcdir, log, NULL);
        if (st == 0)
            write_origin(srcdir, pkg, tried, suite);
    }
    progress_done();
    if (st >= 128)
        goto out; /* killed by a signal (an interruption): the caller says so */
    if (st != 0) {
        char *cmd = apt_fetch_command(&apt, pkg, tried);
        char *e = apt_first_error(log);
        error("cannot fetch the source package %s (tried %s; apt: %s); in %s run `%s`, or "
              "pass --source=DIR|TARBALL (log %s)", pkg, tried_in.buf, e, srcdir, cmd, log);
        free(e);
        free(cmd);
        goto out;
    }
    progress_phase_done("source: %s %s from Debian %s", pkg, tried, suite);
    if (!(*dir = find_tree_in(r, srcdir, prefix))) {
        error("apt-get source %s left no %s* tree matching the %s recipe in %s", pkg, prefix,
              r->name, srcdir);
        goto out;
    }
    rc = 0;
out:
    strbuf_release(&tried_in);
    if (opened)
        apt_conf_release(&apt);
    apt_candidates_free(c, nc);
    free(prefix);
    free(log);
    return rc;
}

/* The tree of pkg=version in its own directory SRCDIR/PKG_VERSION (another revision of the
 * same upstream version unpacks to the same PKG-UPSTREAM name): reused when there, else
 * fetched with `apt-get source PKG=VERSION` from the suite whose lists carry that version. */
static int fetch_exact(const struct recipe *r, const char *srcdir, const char *version, char **dir)
{
    const char *pkg = r->debian_package;
    char *prefix = xasprintf("%s-", pkg);
    /* as the .dsc is named: no epoch (no ':' in a path a build may list) */
    char *name = xasprintf("%s_%s", pkg, pgo_version_without_epoch(version));
    char *into = path_join(srcdir, name);
    char *log = path_join(into, "apt-get-source.log");
    struct apt_conf apt;
    struct apt_candidate *c = NULL;
    int nc = 0, rc = -1;
    bool opened = false;
    if ((*dir = find_tree_in(r, into, prefix))) {
        char *have = pgo_source_debian_version(*dir);
        bool same = have && !strcmp(have, version);
        free(have);
        if (same) { /* fetched before: works offline */
            rc = 0;
            goto out;
        }
        free(*dir);
        *dir = NULL;
    }
    if (remove_tree(into) < 0 || mkdir_p(into) < 0 || apt_conf_open(&apt, NULL) < 0)
        goto out;
    opened = true;
    if (apt_refresh(&apt, false, NULL) < 0)
        goto out;
    apt_candidates(&apt, pkg, &c, &nc);
    const char *suite = NULL;
    for (int i = 0; i < nc && !suite; i++)
        if (!strcmp(c[i].version, version))
            suite = c[i].suite;
    progress("source: apt-get source %s=%s (Debian %s, in %s)", pkg, version,
             suite ? suite : "?", into);
    int st = apt_fetch(&apt, pkg, version, into, log, NULL);
    progress_done();
    if (st >= 128)
        goto out;
    if (st != 0) {
        char *cmd = apt_fetch_command(&apt, pkg, version);
        char *e = apt_first_error(log);
        error("cannot fetch the source package %s at exactly %s%s%s (%s): the suites pgolab "
              "looks in (%s) %s; in %s run `%s`, or pass --source=DIR of that revision (log %s)",
              pkg, version, suite ? " from Debian " : "", suite ? suite : "",
              e, apt.suites,
              suite ? "list it but its files could not be fetched" : "do not list it", into,
              cmd, log);
        free(e);
        free(cmd);
        goto out;
    }
    if (suite)
        write_origin(into, pkg, version, suite);
    progress_phase_done("source: %s %s from Debian %s", pkg, version, suite ? suite : "?");
    if (!(*dir = find_tree_in(r, into, prefix))) {
        error("apt-get source %s=%s left no %s* tree matching the %s recipe in %s", pkg, version,
              prefix, r->name, into);
        goto out;
    }
    rc = 0;
out:
    if (opened)
        apt_conf_release(&apt);
    apt_candidates_free(c, nc);
    free(prefix);
    free(name);
    free(into);
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
    return pgo_source_resolve_at(r, opt, srcdir, NULL, dir);
}

int pgo_source_resolve_at(const struct recipe *r, const char *opt, const char *srcdir,
                          const char *version, char **dir)
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
    return version ? fetch_exact(r, srcdir, version, dir) : fetch_debian(r, srcdir, dir);
}

char *pgo_source_dsc_version(const char *dir)
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

char *pgo_source_debian_suite(const char *dir)
{
    char *version = pgo_source_dsc_version(dir);
    if (!version)
        return NULL;
    char *parent = xstrdup(dir);
    char *slash = strrchr(parent, '/');
    const char *dash = slash ? strrchr(slash + 1, '-') : NULL;
    char *suite = NULL;
    if (dash) {
        *slash = '\0';
        char *name = xasprintf("%.*s_%s.pgolab-suite", (int)(dash - (slash + 1)), slash + 1,
                               version);
        char *path = path_join(parent, name);
        struct strbuf sb = STRBUF_INIT;
        strbuf_init(&sb, 0);
        if (strbuf_read_file(&sb, path) == 0 && sb.len) {
            size_t n = strcspn(sb.buf, "\n");
            if (n)
                suite = xstrndup(sb.buf, n);
        }
        strbuf_release(&sb);
        free(path);
        free(name);
    }
    free(parent);
    free(version);
    return suite;
}

/* The package and version of the first entry of dir/debian/changelog ("postgresql-15
 * (15.18-0+deb12u1) bookworm-security; urgency=medium"). -1 when the tree has none or its
 * first line is not an entry. */
static int changelog_head(const char *dir, char **pkg, char **version)
{
    char *path = path_join(dir, "debian/changelog");
    struct strbuf sb = STRBUF_INIT;
    strbuf_init(&sb, 0);
    int rc = -1;
    *pkg = *version = NULL;
    if (strbuf_read_file(&sb, path) == 0) {
        const char *line = sb.buf;
        size_t name = strcspn(line, " \t\n(");
        const char *open = line + name + strspn(line + name, " \t");
        const char *close = *open == '(' ? strchr(open, ')') : NULL;
        if (name && close && close > open + 1 && !memchr(open, '\n', (size_t)(close - open))) {
            *pkg = xstrndup(line, name);
            *version = xstrndup(open + 1, (size_t)(close - open - 1));
            rc = 0;
        }
    }
    strbuf_release(&sb);
    free(path);
    return rc;
}

char *pgo_source_debian_version(const char *dir)
{
    char *pkg, *version;
    if (changelog_head(dir, &pkg, &version) == 0) {
        free(pkg);
        return version;
    }
    return pgo_source_dsc_version(dir);
}

char *pgo_source_debian_package(const char *dir)
{
    char *pkg, *version;
    if (changelog_head(dir, &pkg, &version) < 0)
        return NULL;
    free(version);
    return pkg;
}

char *pgo_source_version_mismatch(const char *dir)
{
    char *pkg, *version, *dsc = pgo_source_dsc_version(dir), *why = NULL;
    if (dsc && changelog_head(dir, &pkg, &version) == 0) {
        if (strcmp(pgo_version_without_epoch(version), pgo_version_without_epoch(dsc)))
            why = xasprintf("the source tree %s is %s %s by its debian/changelog, but the .dsc "
                            "beside it is of %s: the tree was edited or replaced since it was "
                            "fetched", dir, pkg, version, dsc);
        free(pkg);
        free(version);
    }
    free(dsc);
    return why;
}

char *pgo_source_upstream_version(const struct recipe *r, const char *dir)
{
    if (!r->version_file)
        return NULL;
    char *path = path_join(dir, r->version_file);
    struct strbuf sb = STRBUF_INIT, out = STRBUF_INIT;
    strbuf_init(&sb, 0);
    strbuf_init(&out, 0);
    regex_t re;
    regmatch_t m[10];
    /* the recipe's pattern compiled when the recipe was loaded (recipe.c) */
    int crc = regcomp(&re, r->version_pattern, REG_EXTENDED);
    assert(crc == 0 && re.re_nsub >= 1);
    if (strbuf_read_file(&sb, path) == 0 && regexec(&re, sb.buf, ARRAY_SIZE(m), m, 0) == 0) {
        for (size_t g = 1; g <= re.re_nsub && g < ARRAY_SIZE(m); g++)
            if (m[g].rm_so >= 0)
                strbuf_addf(&out, "%s%.*s", out.len ? "." : "", (int)(m[g].rm_eo - m[g].rm_so),
                            sb.buf + m[g].rm_so);
    }
    regfree(&re);
    strbuf_release(&sb);
    free(path);
    if (!out.len) {
        strbuf_release(&out);
        return NULL;
    }
    return strbuf_detach(&out);
}

int pgo_source_check_major(const struct recipe *r, const char *dir)
{
    if (!r->major)
        return 0;
    char *version = pgo_source_debian_version(dir);
    const char *by = "debian/changelog";
    if (!version) {
        version = pgo_source_upstream_version(r, dir);
        by = r->version_file;
    }
    if (!version || of_major(version, r->major)) {
        free(version);
        return 0;
    }
    assert(by != NULL);
    const char *tree_major = NULL;
    for (char **m = r->majors; m && *m && !tree_major; m++)
        if (of_major(version, *m))
            tree_major = *m;
    char *list = recipe_majors_list(r);
    if (tree_major)
        error("the source %s is %s %s (by its %s), but the %s recipe was set to build %s: pass "
              "--db-version=%s to build this tree", dir, r->title ? r->title : r->name,
              pgo_version_without_epoch(version), by, r->name, r->major, tree_major);
    else
        error("the source %s is %s %s (by its %s), a major the %s recipe does not build (it "
              "builds %s)", dir, r->title ? r->title : r->name,
              pgo_version_without_epoch(version), by, r->name, list);
    free(list);
    free(version);
    return -1;
}
