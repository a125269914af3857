/* sqlite_bench: the bench children of the SQLite target's pipeline (see sqlite_bench.h): the
 * library's version, and the training and correctness-gate runs of `pgolab bench`. Every command
 * runs from an argv array, never a shell. */
#include "pgo/sqlite_bench.h"
#include "util/progress.h"
#include "util/signals.h"
#include "util/strbuf.h"
#include "util/subprocess.h"
#include "util/util.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LOG_TAIL_LINES 15

/* ---- the version ---------------------------------------------------------------- */

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
    if (sig_caught())
        return -1; /* interrupted between children: start no other (the caller says so) */
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
    /* a child the user's interrupt reached too is not a failure: the caller says "interrupted" */
    bool failed = st != 0 && !sig_child_interrupted(st);
    if (failed && (st == 2 || st >= 128)) {
        /* 2: the bench's forced shutdown (sysbench's meaning); 128+N: killed by signal N */
        error("benchmark child stopped by a signal (exit %d): %s", st, cmd);
    } else if (failed && st > 0) {
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

int sqlite_gate(const struct sqlite_bench *b, const char *const *names, const char *const *libs,
                int n, char **checksum, long long *rows)
{
    struct sqlite_bench lb = *b;
    char *base_sum = NULL;
    long long base_rows = -1;
    int rc = -1;
    const char *prep[] = { "--threads=1", "oltp_read_only", "prepare", NULL };

    *checksum = NULL;
    sqlite_remove_db(b->db);
    lb.library = libs[0];
    progress("correctness gate: prepare");
    if (sqlite_bench_run(&lb, prep, NULL) < 0)
        goto out;
    progress("correctness gate: verify %s", names[0]);
    if (verify_one(&lb, &base_sum, &base_rows) < 0)
        goto out;
    for (int i = 1; i < n; i++) {
        char *sum = NULL;
        long long nrows = -1;
        lb.library = libs[i];
        progress("correctness gate: verify %s", names[i]);
        if (verify_one(&lb, &sum, &nrows) < 0)
            goto out;
        int bad = strcmp(base_sum, sum) ? error("correctness gate failed: %s checksum %s != %s "
                                                "checksum %s", names[0], base_sum, names[i], sum)
                  : base_rows != nrows ? error("correctness gate failed: %s read %lld rows != %s "
                                               "%lld rows", names[0], base_rows, names[i], nrows)
                                       : 0;
        free(sum);
        if (bad)
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
    return rc;
}
