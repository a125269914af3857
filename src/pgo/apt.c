/* apt: pgolab's own apt configuration for Debian source packages (see apt.h). apt-get and
 * apt-cache run from argv arrays, never a shell; the system's /etc/apt is only read. */
#include "pgo/apt.h"
#include "util/fs.h"
#include "util/progress.h"
#include "util/strbuf.h"
#include "util/subprocess.h"
#include "util/util.h"

#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_MIRROR "http://deb.debian.org/debian"
#define DEFAULT_SECURITY "http://deb.debian.org/debian-security"
#define KEYRING "/usr/share/keyrings/debian-archive-keyring.gpg"
#define LISTS_MAX_AGE_S (24 * 3600)

/* Debian's releases, oldest first, and what follows each: the suites newer than the
 * system's release that a recipe's package may come from (sid is always last). */
static const char *const releases[] = { "bookworm", "trixie", "forky", "sid" };
/* Newer suites pgolab looks in (each costs a list download of about 12 MB); forky, today's
 * testing, is left out: what it carries is in sid as well. */
static const char *const newer_suites[] = { "trixie", "sid" };

char *apt_root(void)
{
    const char *env = getenv("PGOLAB_APT_DIR");
    if (env && *env)
        return abs_path(env);
    const char *xdg = getenv("XDG_CACHE_HOME");
    if (xdg && *xdg == '/')
        return xasprintf("%s/pgolab/apt", xdg);
    const char *home = getenv("HOME");
    if (home && *home == '/')
        return xasprintf("%s/.cache/pgolab/apt", home);
    return xasprintf("/var/tmp/pgolab-apt-%u", (unsigned)getuid());
}

/* The system's release codename (/etc/os-release VERSION_CODENAME), or "bookworm". */
static char *system_codename(void)
{
    struct strbuf sb = STRBUF_INIT;
    strbuf_init(&sb, 0);
    char *name = NULL;
    if (strbuf_read_file(&sb, "/etc/os-release") == 0) {
        const char *k = strstr(sb.buf, "VERSION_CODENAME=");
        if (k) {
            k += strlen("VERSION_CODENAME=");
            size_t n = strcspn(k, "\n\"");
            if (n)
                name = xstrndup(k, n);
        }
    }
    strbuf_release(&sb);
    return name ? name : xstrdup("bookworm");
}

/* The first URI in text (not in a comment) that ends in /SUFFIX (optionally with a '/'). */
static char *uri_ending(const char *text, const char *suffix)
{
    for (const char *line = text; line && *line;) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        const char *s = line + strspn(line, " \t");
        if (*s != '#')
            for (const char *p = s; p < line + len;) {
                size_t w = strcspn(p, " \t\n");
                if (w && (!strncmp(p, "http://", 7) || !strncmp(p, "https://", 8) ||
                          !strncmp(p, "file:", 5))) {
                    size_t e = w, sl = strlen(suffix);
                    if (e && p[e - 1] == '/')
                        e--;
                    if (e > sl && p[e - sl - 1] == '/' && !strncmp(p + e - sl, suffix, sl))
                        return xstrndup(p, e);
                }
                p += w ? w : 1;
                p += strspn(p, " \t");
                if (p > line + len)
                    break;
            }
        line = nl ? nl + 1 : NULL;
    }
    return NULL;
}

/* The system's apt sources (/etc/apt/sources.list and sources.list.d), read only. */
static void system_sources(struct strbuf *out)
{
    strbuf_read_file(out, "/etc/apt/sources.list");
    DIR *d = opendir("/etc/apt/sources.list.d");
    struct dirent *e;
    while (d && (e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if ((n > 5 && !strcmp(e->d_name + n - 5, ".list")) ||
            (n > 8 && !strcmp(e->d_name + n - 8, ".sources"))) {
            struct strbuf f = STRBUF_INIT;
            char *p = path_join("/etc/apt/sources.list.d", e->d_name);
            strbuf_init(&f, 0);
            if (strbuf_read_file(&f, p) == 0) {
                strbuf_addch(out, '\n');
                strbuf_addstr(out, f.buf);
            }
            strbuf_release(&f);
            free(p);
        }
    }
    if (d)
        closedir(d);
}

static void stanza(struct strbuf *sb, const char *uri, const char *suites)
{
    strbuf_addf(sb, "Types: deb-src\nURIs: %s\nSuites: %s\nComponents: main\n", uri, suites);
    if (is_file(KEYRING))
        strbuf_addf(sb, "Signed-By: %s\n", KEYRING);
    strbuf_addch(sb, '\n');
}

/* Write path with text unless it already holds exactly that: 1 written, 0 unchanged, -1. */
static int write_if_changed(const char *path, const char *text)
{
    struct strbuf old = STRBUF_INIT;
    strbuf_init(&old, 0);
    bool same = strbuf_read_file(&old, path) == 0 && !strcmp(old.buf, text);
    strbuf_release(&old);
    if (same)
        return 0;
    char *tmp = xasprintf("%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    int rc = f && fputs(text, f) >= 0 ? 0 : -1;
    if (f && fclose(f) != 0)
        rc = -1;
    if (rc == 0 && rename(tmp, path) < 0)
        rc = -1;
    if (rc < 0) {
        error("cannot write %s: %s", path, strerror(errno));
        unlink(tmp);
    }
    free(tmp);
    return rc < 0 ? -1 : 1;
}

int apt_conf_open(struct apt_conf *a, const char *root)
{
    memset(a, 0, sizeof(*a));
    a->root = root ? abs_path(root) : apt_root();
    char *parts = path_join(a->root, "sources.list.d");
    char *lists = path_join(a->root, "lists");
    char *partial = path_join(lists, "partial");
    char *cache = path_join(a->root, "cache");
    char *archives = path_join(cache, "archives/partial");
    char *prefs = path_join(a->root, "preferences.d");
    int rc = -1;
    if (mkdir_p(parts) < 0 || mkdir_p(partial) < 0 || mkdir_p(archives) < 0 || mkdir_p(prefs) < 0)
        goto out;

    /* the system's release on its own mirrors, then the newer suites on the main mirror */
    struct strbuf sys = STRBUF_INIT, text = STRBUF_INIT, names = STRBUF_INIT;
    strbuf_init(&sys, 0);
    strbuf_init(&text, 0);
    strbuf_init(&names, 0);
    system_sources(&sys);
    char *code = system_codename();
    char *mirror = uri_ending(sys.buf, "debian");
    char *security = uri_ending(sys.buf, "debian-security");
    if (!mirror)
        mirror = xstrdup(DEFAULT_MIRROR);
    if (!security)
        security = xstrdup(DEFAULT_SECURITY);
    strbuf_addstr(&text, "# pgolab's own apt configuration for source packages (deb-src only);\n"
                         "# written by pgolab from the system's release and mirrors.\n");
    char *own = xasprintf("%s %s-updates", code, code);
    stanza(&text, mirror, own);
    char *sec = xasprintf("%s-security", code);
    stanza(&text, security, sec);
    strbuf_addf(&names, "%s, %s-updates, %s-security", code, code, code);
    /* the suites newer than the system's release */
    int at = -1;
    for (size_t i = 0; i < ARRAY_SIZE(releases); i++)
        if (!strcmp(releases[i], code))
            at = (int)i;
    for (size_t i = 0; i < ARRAY_SIZE(newer_suites); i++) {
        int idx = -1;
        for (size_t k = 0; k < ARRAY_SIZE(releases); k++)
            if (!strcmp(releases[k], newer_suites[i]))
                idx = (int)k;
        if (at >= 0 && idx <= at)
            continue; /* the system's own release, or older */
        stanza(&text, mirror, newer_suites[i]);
        strbuf_addf(&names, ", %s", newer_suites[i]);
    }
    a->suites = strbuf_detach(&names);
    char *file = path_join(parts, "pgolab.sources");
    int w = write_if_changed(file, text.buf);
    if (w > 0) { /* another release or mirror: the old lists do not describe it */
        char *stamp = path_join(a->root, "updated");
        unlink(stamp);
        free(stamp);
    }
    free(file);
    free(own);
    free(sec);
    free(code);
    free(mirror);
    free(security);
    strbuf_release(&sys);
    strbuf_release(&text);
    if (w < 0)
        goto out;

    const char *kv[][2] = {
        { "Dir::Etc::sourcelist", "/dev/null" }, { "Dir::Etc::sourceparts", parts },
        { "Dir::Etc::preferences", "/dev/null" }, { "Dir::Etc::preferencesparts", prefs },
        { "Dir::State::Lists", lists }, { "Dir::Cache", cache },
        { "Dir::State::status", "/dev/null" },
    };
    for (size_t i = 0; i < ARRAY_SIZE(kv); i++) {
        argvec_push(&a->opts, "-o");
        argvec_pushf(&a->opts, "%s=%s", kv[i][0], kv[i][1]);
    }
    if (geteuid() == 0) { /* root: the download directory is not _apt's to write */
        argvec_push(&a->opts, "-o");
        argvec_push(&a->opts, "APT::Sandbox::User=root");
    }
    rc = 0;
out:
    free(parts);
    free(lists);
    free(partial);
    free(cache);
    free(archives);
    free(prefs);
    return rc;
}

void apt_conf_release(struct apt_conf *a)
{
    free(a->root);
    free(a->suites);
    argvec_clear(&a->opts);
    memset(a, 0, sizeof(*a));
}

/* argv = PROGRAM, the configuration's options, then the rest (NULL-terminated). */
static void apt_argv(const struct apt_conf *a, const char *program, const char *const *rest,
                     struct argvec *argv)
{
    argvec_push(argv, program);
    for (int i = 0; i < a->opts.n; i++)
        argvec_push(argv, a->opts.v[i]);
    argvec_pushv(argv, rest);
}

/* Seconds since the last successful update (-1: never). */
static long lists_age(const struct apt_conf *a)
{
    char *stamp = path_join(a->root, "updated");
    struct stat st;
    long age = stat(stamp, &st) == 0 ? (long)(time(NULL) - st.st_mtime) : -1;
    free(stamp);
    return age;
}

int apt_refresh(struct apt_conf *a, bool force, const volatile sig_atomic_t *stop)
{
    long age = lists_age(a);
    if (!force && age >= 0 && age < LISTS_MAX_AGE_S)
        return 0;
    /* one update at a time per configuration (apt's own lock would make the second fail) */
    char *lockp = path_join(a->root, "pgolab.lock");
    int fd = open(lockp, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    free(lockp);
    if (fd >= 0)
        flock(fd, LOCK_EX);
    age = lists_age(a); /* another process may have updated while we waited */
    int rc = 0;
    if (force || age < 0 || age >= LISTS_MAX_AGE_S) {
        char *log = path_join(a->root, "update.log");
        unlink(log);
        struct argvec argv = ARGVEC_INIT;
        apt_argv(a, "apt-get", (const char *const[]){ "-q", "update", NULL }, &argv);
        progress("source: apt-get update of pgolab's apt configuration (%s)", a->suites);
        struct subprocess sp = { .argv = argvec_argv(&argv), .log_path = log, .stop = stop };
        int st = subprocess_run(&sp);
        progress_done();
        /* apt-get update exits 0 even when a suite could not be reached ("W: Failed to
         * fetch"): the log's "Err:" lines say so */
        struct strbuf out = STRBUF_INIT;
        strbuf_init(&out, 0);
        strbuf_read_file(&out, log);
        bool failed = st != 0 || strstr(out.buf, "\nErr:") || !strncmp(out.buf, "Err:", 4);
        if (st >= 128) {
            rc = -1;
        } else if (!failed) {
            char *stamp = path_join(a->root, "updated");
            rc = write_if_changed(stamp, "") < 0 ? -1 : 0;
            utimensat(AT_FDCWD, stamp, NULL, 0);
            free(stamp);
        } else if (age >= 0) {
            warning("could not refresh pgolab's apt lists (%s): using those of %ld hours ago",
                    log, age / 3600);
        } else {
            const char *e = strstr(out.buf, "Err:");
            size_t n = e ? strcspn(e, "\n") : 0;
            char *cmd = argvec_join(&argv);
            rc = error("cannot read the Debian archive's source lists (%s)%s%.*s: `%s` failed "
                       "(log %s)", a->suites, n ? ": " : "", (int)n, e ? e : "", cmd, log);
            free(cmd);
        }
        strbuf_release(&out);
        argvec_clear(&argv);
        free(log);
    }
    if (fd >= 0)
        close(fd); /* releases the lock */
    return rc;
}

/* Position of suite s in the configuration's order (unknown suites last). */
static int suite_rank(const struct apt_conf *a, const char *s)
{
    int rank = 0;
    for (const char *p = a->suites; p && *p; rank++) {
        size_t n = strcspn(p, ",");
        if (n == strlen(s) && !strncmp(p, s, n))
            return rank;
        p += n;
        p += strspn(p, ", ");
    }
    return 1000;
}

int apt_candidates(const struct apt_conf *a, const char *pkg, struct apt_candidate **out, int *n)
{
    *out = NULL;
    *n = 0;
    struct strbuf sb = STRBUF_INIT;
    strbuf_init(&sb, 0);
    struct argvec argv = ARGVEC_INIT;
    apt_argv(a, "apt-cache", (const char *const[]){ "madison", pkg, NULL }, &argv);
    struct subprocess sp = { .argv = argvec_argv(&argv), .out = &sb, .quiet_stderr = 1 };
    int st = subprocess_run(&sp);
    argvec_clear(&argv);
    /* "   PKG |    VERSION | URI SUITE/COMPONENT Sources" (binary lines end in "Packages";
     * the configuration has none, but a line of another kind is skipped all the same) */
    for (char *line = st == 0 ? sb.buf : NULL; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        char *b1 = strchr(line, '|'), *b2 = b1 ? strchr(b1 + 1, '|') : NULL;
        size_t ll = strlen(line);
        if (b2 && ll > 8 && !strcmp(line + ll - 8, " Sources")) {
            char *v = b1 + 1 + strspn(b1 + 1, " ");
            size_t vn = strcspn(v, " |");
            char *where = b2 + 1 + strspn(b2 + 1, " ");
            char *sp1 = strchr(where, ' ');
            char *suite = sp1 ? sp1 + 1 : NULL;
            size_t sn = suite ? strcspn(suite, "/ ") : 0;
            if (vn && sn) {
                *out = xrealloc(*out, (size_t)(*n + 1) * sizeof(**out));
                (*out)[*n].version = xstrndup(v, vn);
                (*out)[*n].suite = xstrndup(suite, sn);
                (*n)++;
            }
        }
        line = nl ? nl + 1 : NULL;
    }
    strbuf_release(&sb);
    /* preference order: suite rank, then the newest version (insertion sort: a handful) */
    for (int i = 1; i < *n; i++)
        for (int j = i; j > 0; j--) {
            struct apt_candidate *x = &(*out)[j - 1], *y = &(*out)[j];
            int rx = suite_rank(a, x->suite), ry = suite_rank(a, y->suite);
            if (rx < ry || (rx == ry && strverscmp(x->version, y->version) >= 0))
                break;
            struct apt_candidate t = *x;
            *x = *y;
            *y = t;
        }
    return st == 0 ? 0 : -1;
}

void apt_candidates_free(struct apt_candidate *c, int n)
{
    for (int i = 0; i < n; i++) {
        free(c[i].version);
        free(c[i].suite);
    }
    free(c);
}

int apt_fetch(const struct apt_conf *a, const char *pkg, const char *version, const char *dir,
              const char *log, const volatile sig_atomic_t *stop)
{
    assert(pkg && version && dir);
    char *spec = xasprintf("%s=%s", pkg, version);
    struct argvec argv = ARGVEC_INIT;
    apt_argv(a, "apt-get", (const char *const[]){ "-q", "source", spec, NULL }, &argv);
    struct subprocess sp = { .argv = argvec_argv(&argv), .cwd = dir, .log_path = log,
                             .stop = stop };
    int st = subprocess_run(&sp);
    argvec_clear(&argv);
    free(spec);
    return st;
}

char *apt_first_error(const char *log)
{
    struct strbuf text = STRBUF_INIT;
    strbuf_init(&text, 0);
    strbuf_read_file(&text, log);
    const char *e = text.buf ? strstr(text.buf, "\nE: ") : NULL;
    e = text.buf && !strncmp(text.buf, "E: ", 3) ? text.buf
        : e                                        ? e + 1
                                                   : "E: apt-get source failed";
    char *line = xstrndup(e, strcspn(e, "\n"));
    strbuf_release(&text);
    return line;
}

char *apt_fetch_command(const struct apt_conf *a, const char *pkg, const char *version)
{
    struct strbuf sb = STRBUF_INIT;
    strbuf_init(&sb, 0);
    strbuf_addstr(&sb, "apt-get");
    for (int i = 0; i < a->opts.n; i++)
        strbuf_addf(&sb, " %s", a->opts.v[i]);
    strbuf_addf(&sb, " source %s%s%s", pkg, version ? "=" : "", version ? version : "");
    return strbuf_detach(&sb);
}
