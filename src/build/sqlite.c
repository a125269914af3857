/* sqlite: the SQLite PGO target (see sqlite.h): source, amalgamation, library command,
 * training and correctness gate. Every command runs from an argv array, never a shell. */
#include "build/sqlite.h"
#include "util/progress.h"
#include "util/strbuf.h"
#include "util/subprocess.h"
#include "util/util.h"

#include <dirent.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define LOG_TAIL_LINES 15

/* ---- source ------------------------------------------------------------------------- */

static bool has_file(const char *dir, const char *rel)
{
    char *p = path_join(dir, rel);
    bool ok = is_file(p);
    free(p);
    return ok;
}

enum sqlite_source_kind sqlite_source_kind(const char *dir)
{
    if (!is_dir(dir))
        return SQLITE_SRC_NONE;
    if (has_file(dir, "src/sqliteInt.h") && has_file(dir, "tool/mksqlite3c.tcl"))
        return SQLITE_SRC_TREE;
    if (has_file(dir, "sqlite3.c") && has_file(dir, "sqlite3.h"))
        return SQLITE_SRC_AMALGAMATION;
    return SQLITE_SRC_NONE;
}

/* The valid source dir among dir itself and its subdirectories whose names start with prefix
 * (NULL = any); the newest version (strverscmp) wins among subdirectories. */
static char *find_source_in(const char *dir, const char *prefix, enum sqlite_source_kind *kind)
{
    if (!prefix && (*kind = sqlite_source_kind(dir)) != SQLITE_SRC_NONE)
        return xstrdup(dir);
    DIR *d = opendir(dir);
    char *best = NULL, *best_name = NULL;
    enum sqlite_source_kind best_kind = SQLITE_SRC_NONE;
    struct dirent *e;
    if (!d)
        return NULL;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' || (prefix && strncmp(e->d_name, prefix, strlen(prefix))))
            continue;
        char *sub = path_join(dir, e->d_name);
        enum sqlite_source_kind k = sqlite_source_kind(sub);
        if (k != SQLITE_SRC_NONE && (!best || strverscmp(e->d_name, best_name) > 0)) {
            free(best);
            free(best_name);
            best = sub;
            best_name = xstrdup(e->d_name);
            best_kind = k;
        } else {
            free(sub);
        }
    }
    closedir(d);
    free(best_name);
    if (best)
        *kind = best_kind;
    return best;
}

/* Run argv in cwd with its output in log; on failure one error with the command and tail. */
static int run_logged(const char *what, const char *const *argv, const char *cwd,
                      const char *log, const char *hint)
{
    struct subprocess sp = { .argv = argv, .cwd = cwd, .log_path = log };
    int st = subprocess_run(&sp);
    if (st == 0)
        return 0;
    if (st > 0) {
        char *cmd = subprocess_argv_str(argv);
        char *tail = file_tail(log, LOG_TAIL_LINES);
        error("%s failed (exit %d): %s%s\n--- last lines of %s ---\n%s", what, st, cmd,
              hint ? hint : "", log, tail);
        free(cmd);
        free(tail);
    }
    return -1;
}

static int fetch_debian_source(const char *srcdir, char **dir, enum sqlite_source_kind *kind)
{
    *dir = find_source_in(srcdir, "sqlite3-", kind);
    if (*dir)
        return 0;
    char *log = path_join(srcdir, "apt-get-source.log");
    const char *argv[] = { "apt-get", "source", "sqlite3", NULL };
    unlink(log);
    progress("source: apt-get source sqlite3 (in %s)", srcdir);
    int rc = run_logged("fetching the SQLite source", argv, srcdir, log,
                        " (needs deb-src entries: run scripts/install-deps.sh, or pass "
                        "--source=DIR|TARBALL)");
    progress_done();
    free(log);
    if (rc < 0)
        return -1;
    *dir = find_source_in(srcdir, "sqlite3-", kind);
    if (!*dir)
        return error("apt-get source sqlite3 left no sqlite3-* source tree in %s", srcdir);
    return 0;
}

static int unpack_tarball(const char *tarball, const char *opt, const char *srcdir, char **dir,
                          enum sqlite_source_kind *kind)
{
    struct stat st;
    char *real = abs_path(tarball);
    int rc = -1;
    if (stat(real, &st) < 0) {
        free(real);
        return error("--source=%s: cannot read it", opt);
    }
    char *keytext = xasprintf("%s\n%lld\n%lld", real, (long long)st.st_size,
                              (long long)st.st_mtime);
    char *key = path_key(keytext);
    char *name = xasprintf("tarball-%s", key);
    char *dest = path_join(srcdir, name);
    char *stamp = path_join(dest, ".pgolab-unpacked");
    char *log = path_join(srcdir, "tar.log");

    if (!stamp_matches(stamp, keytext)) {
        const char *argv[] = { "tar", "-xf", real, "-C", dest, NULL };
        unlink(log);
        if (remove_tree(dest) < 0 || mkdir_p(dest) < 0)
            goto out;
        progress("source: unpacking %s", tarball);
        int st2 = run_logged("unpacking --source", argv, NULL, log, NULL);
        progress_done();
        if (st2 < 0 || stamp_write(stamp, keytext) < 0)
            goto out;
    }
    *dir = find_source_in(dest, NULL, kind);
    if (!*dir) {
        error("--source=%s: not a SQLite source tree (no src/sqliteInt.h or sqlite3.c)", opt);
        goto out;
    }
    rc = 0;
out:
    free(real);
    free(keytext);
    free(key);
    free(name);
    free(dest);
    free(stamp);
    free(log);
    return rc;
}

int sqlite_source_resolve(const char *source, const char *workdir, char **dir,
                          enum sqlite_source_kind *kind)
{
    char *srcdir = path_join(workdir, "src");
    int rc = -1;
    *dir = NULL;
    *kind = SQLITE_SRC_NONE;
    if (!source) {
        if (mkdir_p(srcdir) == 0)
            rc = fetch_debian_source(srcdir, dir, kind);
    } else if (is_dir(source)) {
        char *abs = abs_path(source);
        *kind = sqlite_source_kind(abs);
        if (*kind == SQLITE_SRC_NONE) {
            error("--source=%s: not a SQLite source tree (no src/sqliteInt.h or sqlite3.c)",
                  source);
            free(abs);
        } else {
            *dir = abs;
            rc = 0;
        }
    } else if (is_file(source)) {
        if (mkdir_p(srcdir) == 0)
            rc = unpack_tarball(source, source, srcdir, dir, kind);
    } else {
        error("--source=%s: no such file or directory", source);
    }
    free(srcdir);
    return rc;
}

/* ---- amalgamation ------------------------------------------------------------------- */

char *sqlite_version_from_header(const char *text)
{
    const char *p = text ? strstr(text, "#define SQLITE_VERSION ") : NULL;
    if (!p)
        return NULL;
    p = strchr(p, '"');
    const char *q = p ? strchr(p + 1, '"') : NULL;
    if (!p || !q || strchr(p + 1, '\n') < q)
        return NULL;
    return xstrndup(p + 1, (size_t)(q - p - 1));
}

static char *read_version(const char *dir)
{
    struct strbuf sb = STRBUF_INIT;
    char *h = path_join(dir, "sqlite3.h");
    char *v = NULL;
    strbuf_init(&sb, 0);
    if (strbuf_read_file(&sb, h) == 0)
        v = sqlite_version_from_header(sb.buf);
    strbuf_release(&sb);
    free(h);
    return v ? v : xstrdup("unknown");
}

int sqlite_amalgamation_build(const char *src, enum sqlite_source_kind kind, const char *workdir,
                              bool force, struct sqlite_amalgamation *out)
{
    memset(out, 0, sizeof(*out));
    if (kind == SQLITE_SRC_AMALGAMATION) {
        out->dir = xstrdup(src);
        out->cached = true;
        goto done;
    }
    if (kind != SQLITE_SRC_TREE)
        return error("%s: not a SQLite source tree (no src/sqliteInt.h or sqlite3.c)", src);

    char *key = path_key(src);
    char *name = xasprintf("amalg-%s", key);
    out->dir = path_join(workdir, name);
    free(key);
    free(name);
    char *stamp_path = path_join(out->dir, ".pgolab-stamp");
    /* the tree's content, not only its path: an edited tree is rebuilt */
    char *content = tree_sha256(src);
    if (!content) {
        free(stamp_path);
        sqlite_amalgamation_release(out);
        return -1;
    }
    char *stamp = xasprintf("source: %s\ncontent: %s\n", src, content);
    free(content);
    char *log = path_join(out->dir, "build.log");
    char *configure = path_join(src, "configure");
    int rc = -1;

    if (!force && stamp_matches(stamp_path, stamp) && has_file(out->dir, "sqlite3.c") &&
        has_file(out->dir, "sqlite3.h")) {
        out->cached = true;
        rc = 0;
        goto out;
    }
    /* Old autoconf trees generate code with a system tclsh; autosetup trees bundle jimsh. */
    if (!has_file(src, "autosetup/jimsh0.c")) {
        char *tclsh = find_in_path("tclsh");
        free(tclsh);
        if (!tclsh) {
            error("building the SQLite amalgamation needs tclsh (Debian package tcl; run "
                  "scripts/install-deps.sh), or pass --source=DIR with sqlite3.c");
            goto out;
        }
    }
    if (remove_tree(out->dir) < 0 || mkdir_p(out->dir) < 0)
        goto out;
    uint64_t t0 = now_ns();
    {
        const char *conf_argv[] = { configure, NULL };
        const char *conf_sh_argv[] = { "sh", configure, NULL };
        const char *make_argv[] = { "make", "sqlite3.c", NULL };
        progress("amalgamation: configure (SQLite source %s)", src);
        if (run_logged("configuring SQLite", access(configure, X_OK) == 0 ? conf_argv
                                                                           : conf_sh_argv,
                       out->dir, log, NULL) < 0)
            goto out;
        progress("amalgamation: make sqlite3.c");
        if (run_logged("building the SQLite amalgamation", make_argv, out->dir, log, NULL) < 0)
            goto out;
        if (!has_file(out->dir, "sqlite3.c") || !has_file(out->dir, "sqlite3.h")) {
            error("make sqlite3.c left no sqlite3.c/sqlite3.h in %s (see %s)", out->dir, log);
            goto out;
        }
    }
    out->seconds = (double)(now_ns() - t0) / 1e9;
    if (stamp_write(stamp_path, stamp) < 0)
        goto out;
    rc = 0;
out:
    progress_done();
    free(stamp_path);
    free(stamp);
    free(log);
    free(configure);
    if (rc < 0) {
        sqlite_amalgamation_release(out);
        return -1;
    }
done:
    out->sqlite3_c = path_join(out->dir, "sqlite3.c");
    out->version = read_version(out->dir);
    return 0;
}

void sqlite_amalgamation_release(struct sqlite_amalgamation *a)
{
    free(a->dir);
    free(a->sqlite3_c);
    free(a->version);
    memset(a, 0, sizeof(*a));
}

/* ---- the library command ------------------------------------------------------------ */

/* The options every phase shares (the brief's shared-library build of the amalgamation:
 * thread-safe, no asserts, -Bsymbolic so its internal calls never bind to another SQLite). */
static const char *const sqlite_lib_common[] = {
    "-fPIC", "-shared", "-DSQLITE_THREADSAFE=1", "-DNDEBUG", "-Wl,-Bsymbolic", NULL,
};
static const char *const sqlite_lib_libs[] = { "-lpthread", "-lm", "-ldl", NULL };

int sqlite_lib_argv(struct argvec *out, const char *cc, enum cc_family family, const char *cflags,
                    enum build_phase phase, const struct pgo_paths *paths, const char *sqlite3_c)
{
    argvec_push(out, cc);
    argvec_split(out, cflags);
    argvec_pushv(out, sqlite_lib_common);
    if (pgo_phase_flags(out, family, phase, paths) < 0)
        return -1;
    argvec_push(out, "-o");
    argvec_push(out, SQLITE_LIB_NAME);
    argvec_push(out, sqlite3_c);
    argvec_pushv(out, sqlite_lib_libs);
    return 0;
}

/* ---- pgolab bench children ---------------------------------------------------------- */

void sqlite_remove_db(const char *db)
{
    static const char *const suffixes[] = { "", "-wal", "-shm", "-journal" };
    for (size_t i = 0; i < ARRAY_SIZE(suffixes); i++) {
        char *p = xasprintf("%s%s", db, suffixes[i]);
        unlink(p);
        free(p);
    }
}

int sqlite_bench_run(const struct sqlite_bench *b, const char *const *args, struct strbuf *out)
{
    struct argvec argv = ARGVEC_INIT;
    argvec_push(&argv, b->pgolab);
    argvec_push(&argv, "bench");
    argvec_pushf(&argv, "--sqlite-library=%s", b->library);
    argvec_pushf(&argv, "--sqlite-db=%s", b->db);
    argvec_pushf(&argv, "--tables=%d", b->tables);
    argvec_pushf(&argv, "--table-size=%d", b->table_size);
    argvec_pushv(&argv, args);
    char *cmd = subprocess_argv_str(argvec_argv(&argv));
    char *header = xasprintf("$ %s\n", cmd);
    FILE *f = fopen(b->log, "a");
    if (f) {
        fputs(header, f);
        fclose(f);
    }
    free(header);
    struct subprocess sp = { .argv = argvec_argv(&argv), .env = b->env, .log_path = b->log,
                             .out = out };
    int st = subprocess_run(&sp);
    if (st == 2 || st >= 128) {
        /* 2: the bench's forced shutdown (sysbench's meaning); 128+N: killed by signal N */
        error("benchmark child stopped by a signal (exit %d): %s", st, cmd);
    } else if (st > 0) {
        char *tail = file_tail(b->log, LOG_TAIL_LINES);
        error("benchmark child failed (exit %d): %s\n--- last lines of %s ---\n%s", st, cmd,
              b->log, tail);
        free(tail);
    }
    free(cmd);
    argvec_clear(&argv);
    return st == 0 ? 0 : -1;
}

int sqlite_train(const struct sqlite_bench *b, char *const *workloads, int nworkloads,
                 double time_s, int threads)
{
    int nsteps = nworkloads + 2, step = 0, rc = -1;
    char *time_arg = xasprintf("--time=%g", time_s);
    char *threads_arg = xasprintf("--threads=%d", threads);
    sqlite_remove_db(b->db);

    const char *prep[] = { "--threads=1", workloads[0], "prepare", NULL };
    progress("training %d/%d: %s prepare", ++step, nsteps, workloads[0]);
    if (sqlite_bench_run(b, prep, NULL) < 0)
        goto out;
    for (int i = 0; i < nworkloads; i++) {
        const char *run[] = { time_arg, threads_arg, workloads[i], "run", NULL };
        progress("training %d/%d: %s run, %s, %g s (instrumented)", ++step, nsteps,
                 workloads[i], threads_arg + 2, time_s);
        if (sqlite_bench_run(b, run, NULL) < 0)
            goto out;
    }
    const char *clean[] = { workloads[0], "cleanup", NULL };
    progress("training %d/%d: %s cleanup", ++step, nsteps, workloads[0]);
    if (sqlite_bench_run(b, clean, NULL) < 0)
        goto out;
    rc = 0;
out:
    progress_done();
    sqlite_remove_db(b->db);
    free(time_arg);
    free(threads_arg);
    return rc;
}

int sqlite_parse_verify(const char *text, char **checksum, long long *rows)
{
    json_error_t jerr;
    const char *start = text ? strchr(text, '{') : NULL;
    json_t *root = start ? json_loads(start, JSON_DISABLE_EOF_CHECK, &jerr) : NULL;
    *checksum = NULL;
    *rows = -1;
    if (!root)
        return error("verify printed no JSON object%s%s", start ? ": " : "",
                     start ? jerr.text : "");
    json_t *c = json_object_get(root, "checksum");
    json_t *r = json_object_get(root, "rows");
    if (!json_is_string(c) || !json_string_value(c)[0]) {
        json_decref(root);
        return error("verify output has no \"checksum\" string");
    }
    *checksum = xstrdup(json_string_value(c));
    if (json_is_integer(r))
        *rows = (long long)json_integer_value(r);
    json_decref(root);
    return 0;
}

static int verify_one(const struct sqlite_bench *b, char **checksum, long long *rows)
{
    struct strbuf out = STRBUF_INIT;
    const char *args[] = { "oltp_read_only", "verify", "--format=json", NULL };
    strbuf_init(&out, 0);
    int rc = sqlite_bench_run(b, args, &out);
    if (rc == 0)
        rc = sqlite_parse_verify(out.buf, checksum, rows);
    strbuf_release(&out);
    return rc;
}

int sqlite_gate(const struct sqlite_bench *b, const char *baseline_lib, const char *pgo_lib,
                char **checksum, long long *rows)
{
    struct sqlite_bench lb = *b;
    char *base_sum = NULL, *pgo_sum = NULL;
    long long base_rows = -1, pgo_rows = -1;
    int rc = -1;
    const char *prep[] = { "--threads=1", "oltp_read_only", "prepare", NULL };

    *checksum = NULL;
    sqlite_remove_db(b->db);
    lb.library = baseline_lib;
    progress("correctness gate: prepare");
    if (sqlite_bench_run(&lb, prep, NULL) < 0)
        goto out;
    progress("correctness gate: verify baseline");
    if (verify_one(&lb, &base_sum, &base_rows) < 0)
        goto out;
    lb.library = pgo_lib;
    progress("correctness gate: verify pgo");
    if (verify_one(&lb, &pgo_sum, &pgo_rows) < 0)
        goto out;
    if (strcmp(base_sum, pgo_sum)) {
        error("correctness gate failed: baseline checksum %s != pgo checksum %s", base_sum,
              pgo_sum);
        goto out;
    }
    if (base_rows != pgo_rows) {
        error("correctness gate failed: baseline read %lld rows != pgo %lld rows", base_rows,
              pgo_rows);
        goto out;
    }
    *checksum = base_sum;
    base_sum = NULL;
    *rows = base_rows;
    rc = 0;
out:
    progress_done();
    sqlite_remove_db(b->db);
    free(base_sum);
    free(pgo_sum);
    return rc;
}
