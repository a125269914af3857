/* files: directory and hashing helpers of the build pipeline (mkdir -p, rm -rf,
 * sha256 via sha256sum, cache keys) and stamp files. Strings returned are owned by the caller. */
#include "toolchain/toolchain.h"
#include "util/fs.h"
#include "util/signals.h"
#include "util/strbuf.h"
#include "util/subprocess.h"
#include "util/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>


char *path_key(const char *text)
{
    /* FNV-1a, 64 bit (Fowler/Noll/Vo; offset basis and prime from the published parameters). */
    uint64_t h = 0xcbf29ce484222325ULL;
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
        h ^= *p;
        h *= 0x100000001b3ULL;
    }
    return xasprintf("%016llx", (unsigned long long)h);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void list_files(struct argvec *out, const char *dir, const char *suffix)
{
    DIR *d = opendir(dir);
    struct argvec names = ARGVEC_INIT;
    struct dirent *e;
    size_t ls = strlen(suffix);
    if (!d)
        return;
    while ((e = readdir(d))) {
        size_t ln = strlen(e->d_name);
        if (e->d_name[0] == '.' && (ln == 1 || (ln == 2 && e->d_name[1] == '.')))
            continue;
        if (ln < ls || strcmp(e->d_name + ln - ls, suffix))
            continue;
        char *full = path_join(dir, e->d_name);
        if (is_file(full))
            argvec_push(&names, full);
        free(full);
    }
    closedir(d);
    if (names.n)
        qsort(names.v, (size_t)names.n, sizeof(char *), cmp_str);
    for (int i = 0; i < names.n; i++)
        argvec_push(out, names.v[i]);
    argvec_clear(&names);
}

char *sha256_files(const char *const *paths)
{
    struct argvec argv = ARGVEC_INIT;
    struct strbuf out = STRBUF_INIT, res = STRBUF_INIT;
    argvec_push(&argv, "sha256sum");
    argvec_push(&argv, "--");
    argvec_pushv(&argv, paths);
    struct subprocess sp = { .argv = argvec_argv(&argv), .out = &out };
    strbuf_init(&out, 0);
    strbuf_init(&res, 0);
    int rc = subprocess_run(&sp);
    if (rc != 0) {
        char *cmd = subprocess_argv_str(argvec_argv(&argv));
        if (rc > 0 &&
            !sig_child_interrupted(rc)) /* else the user's interrupt: the caller says so */
            error("%s failed (exit %d)", cmd, rc);
        free(cmd);
        argvec_clear(&argv);
        strbuf_release(&out);
        strbuf_release(&res);
        return NULL;
    }
    argvec_clear(&argv);
    /* Lines are "<64 hex>  <name>" (a leading '\' marks an escaped name). */
    for (const char *line = out.buf; *line;) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        const char *h = line[0] == '\\' ? line + 1 : line;
        if (len >= 64) {
            if (res.len)
                strbuf_addch(&res, '\n');
            strbuf_add(&res, h, 64);
        }
        line += len + (nl ? 1 : 0);
    }
    strbuf_release(&out);
    return strbuf_detach(&res);
}

char *sha256_file(const char *path)
{
    const char *paths[] = { path, NULL };
    return sha256_files(paths);
}

int stamp_matches(const char *path, const char *text)
{
    struct strbuf sb = STRBUF_INIT;
    strbuf_init(&sb, 0);
    int ok = strbuf_read_file(&sb, path) == 0 && !strcmp(sb.buf, text);
    strbuf_release(&sb);
    return ok;
}

int stamp_write(const char *path, const char *text)
{
    char *tmp = xasprintf("%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f) {
        error("cannot write %s: %s", tmp, strerror(errno));
        free(tmp);
        return -1;
    }
    int bad = fputs(text, f) < 0;
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, path) < 0) {
        error("cannot write %s: %s", path, strerror(errno));
        unlink(tmp);
        free(tmp);
        return -1;
    }
    free(tmp);
    return 0;
}

#define HASH_BATCH 400   /* files per sha256sum child (well below ARG_MAX) */

/* ---- tree hashing ------------------------------------------------------------------- */

static struct {
    size_t root_len;
    struct argvec *files;
    struct strbuf *links;
} walk;

static int walk_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    const char *rel = path + walk.root_len;
    if (*rel == '/')
        rel++;
    if (type == FTW_F) {
        argvec_push(walk.files, rel);
    } else if (type == FTW_SL || type == FTW_SLN) {
        char target[PATH_MAX];
        ssize_t n = readlink(path, target, sizeof(target) - 1);
        target[n > 0 ? n : 0] = '\0';
        strbuf_addf(walk.links, "link %s -> %s\n", rel, target);
    }
    return 0;
}

char *tree_sha256(const char *dir)
{
    return tree_sha256_list(dir, NULL);
}

char *tree_sha256_list(const char *dir, char **list)
{
    struct argvec files = ARGVEC_INIT;
    struct strbuf all = STRBUF_INIT, links = STRBUF_INIT;
    char *out = NULL, *tmp = NULL;
    strbuf_init(&all, 0);
    strbuf_init(&links, 0);
    walk.root_len = strlen(dir);
    walk.files = &files;
    walk.links = &links;
    if (nftw(dir, walk_one, 32, FTW_PHYS) < 0) {
        error("hashing the source tree %s: %s", dir, strerror(errno));
        goto out;
    }
    if (files.n)
        qsort(files.v, (size_t)files.n, sizeof(*files.v), cmp_str);
    for (int i = 0; i < files.n; i += HASH_BATCH) {
        if (sig_caught())
            goto out; /* interrupted: the caller says so */
        struct argvec argv = ARGVEC_INIT;
        argvec_push(&argv, "sha256sum");
        argvec_push(&argv, "--");
        for (int j = i; j < files.n && j < i + HASH_BATCH; j++)
            argvec_push(&argv, files.v[j]);
        struct subprocess sp = { .argv = argvec_argv(&argv), .cwd = dir, .out = &all };
        int st = subprocess_run(&sp);
        argvec_clear(&argv);
        if (st != 0) {
            if (!sig_child_interrupted(st)) /* else the user's interrupt: the caller says so */
                error("hashing the source tree %s: sha256sum failed (exit %d)", dir, st);
            goto out;
        }
    }
    strbuf_addstr(&all, links.buf);
    int fd = private_tmpfile("pgolab-treehash", &tmp);
    if (fd < 0)
        goto out;
    FILE *f = fdopen(fd, "w");
    if (!f) {
        close(fd);
    } else {
        int bad_write = fputs(all.buf, f) < 0;
        int bad_close = fclose(f) != 0; /* always closed, whatever the write did */
        if (bad_write || bad_close)
            error("cannot write %s: %s", tmp, strerror(errno));
        else
            out = sha256_file(tmp);
    }
    unlink(tmp);
    if (out && list)
        *list = strbuf_detach(&all);
out:
    free(tmp);
    argvec_clear(&files);
    strbuf_release(&all);
    strbuf_release(&links);
    return out;
}

int workdir_lock(const char *dir, const char *opt)
{
    if (mkdir_p(dir) < 0)
        return -1;
    char *path = path_join(dir, ".lock");
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    free(path);
    if (fd < 0)
        return error("--workdir=%s: cannot create its lock file: %s", opt, strerror(errno));
    if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
        close(fd);
        return error("--workdir=%s is in use by another pgolab pgo run (wait for it or pass "
                     "another --workdir)", opt);
    }
    return fd;
}

/* ---- naming what changed in a tree ------------------------------------------------- */

struct tree_entry {
    const char *path, *hash; /* into a copy of the list; hash: the digest or the link target */
};

static int cmp_entry(const void *a, const void *b)
{
    return strcmp(((const struct tree_entry *)a)->path, ((const struct tree_entry *)b)->path);
}

/* The entries of a tree_sha256_list() list (text is cut into strings in place). */
static struct tree_entry *tree_entries(char *text, size_t *n)
{
    size_t cap = 64, k = 0;
    struct tree_entry *e = xcalloc(cap, sizeof(*e));
    for (char *line = text, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        char *path = NULL, *hash = NULL, *arrow;
        if (!strncmp(line, "link ", 5) && (arrow = strstr(line + 5, " -> "))) {
            *arrow = '\0';
            path = line + 5;
            hash = arrow + 4;
        } else if ((arrow = strstr(line, "  "))) {
            *arrow = '\0';
            hash = line[0] == '\\' ? line + 1 : line; /* sha256sum's escaped-name mark */
            path = arrow + 2;
        }
        if (!path)
            continue;
        if (k == cap)
            e = xrealloc(e, (cap *= 2) * sizeof(*e));
        e[k].path = path;
        e[k++].hash = hash;
    }
    qsort(e, k, sizeof(*e), cmp_entry);
    *n = k;
    return e;
}

#define DIFF_NAMED 5 /* paths named per kind of change */

static void diff_kind(struct strbuf *sb, const char *what, struct argvec *paths)
{
    if (paths->n == 0)
        return;
    strbuf_addf(sb, "%s%s: ", sb->len ? "; " : "", what);
    for (int i = 0; i < paths->n && i < DIFF_NAMED; i++)
        strbuf_addf(sb, "%s%s", i ? ", " : "", paths->v[i]);
    if (paths->n > DIFF_NAMED)
        strbuf_addf(sb, " and %d more", paths->n - DIFF_NAMED);
}

char *source_diff(const char *old_list, const char *new_list)
{
    char *a_text = xstrdup(old_list), *b_text = xstrdup(new_list);
    size_t na, nb, i = 0, j = 0;
    struct tree_entry *a = tree_entries(a_text, &na), *b = tree_entries(b_text, &nb);
    struct argvec edited = ARGVEC_INIT, added = ARGVEC_INIT, removed = ARGVEC_INIT;
    while (i < na || j < nb) {
        int c = i == na ? 1 : j == nb ? -1 : strcmp(a[i].path, b[j].path);
        if (c < 0) {
            argvec_push(&removed, a[i++].path);
        } else if (c > 0) {
            argvec_push(&added, b[j++].path);
        } else {
            if (strcmp(a[i].hash, b[j].hash))
                argvec_push(&edited, a[i].path);
            i++;
            j++;
        }
    }
    char *out = NULL;
    int total = edited.n + added.n + removed.n;
    if (total) {
        struct strbuf kinds = STRBUF_INIT;
        strbuf_init(&kinds, 0);
        diff_kind(&kinds, "edited", &edited);
        diff_kind(&kinds, "added", &added);
        diff_kind(&kinds, "removed", &removed);
        out = xasprintf("%d file%s changed (%s)", total, total == 1 ? "" : "s", kinds.buf);
        strbuf_release(&kinds);
    }
    argvec_clear(&edited);
    argvec_clear(&added);
    argvec_clear(&removed);
    free(a);
    free(b);
    free(a_text);
    free(b_text);
    return out;
}

/* The line of text that starts with key (key + ':'), its length in *n; NULL when none. */
static const char *key_line(const char *text, const char *key, size_t klen, size_t *n)
{
    for (const char *at = text; at && *at;) {
        size_t len = strcspn(at, "\n");
        if (len > klen && !strncmp(at, key, klen) && at[klen] == ':') {
            *n = len;
            return at;
        }
        at += len + (at[len] == '\n');
    }
    return NULL;
}

char *stamp_first_change(const char *path, const char *text)
{
    struct strbuf old = STRBUF_INIT;
    strbuf_init(&old, 0);
    if (strbuf_read_file(&old, path) < 0 || !strcmp(old.buf, text)) {
        strbuf_release(&old);
        return NULL;
    }
    char *key = NULL;
    const char *const sides[] = { text, old.buf };
    for (int s = 0; s < 2 && !key; s++)
        for (const char *at = sides[s]; *at && !key;) {
            size_t len = strcspn(at, "\n"), klen = strcspn(at, ":\n");
            if (klen < len) {
                size_t n1 = 0, n2 = 0;
                char *k = xstrndup(at, klen);
                const char *a = key_line(old.buf, k, klen, &n1), *b = key_line(text, k, klen, &n2);
                if (!a || !b || n1 != n2 || strncmp(a, b, n1))
                    key = k;
                else
                    free(k);
            }
            at += len + (at[len] == '\n');
        }
    strbuf_release(&old);
    return key ? key : xstrdup("");
}
