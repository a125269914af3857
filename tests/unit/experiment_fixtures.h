/* experiment_fixtures.h: what the unit tests of the experiment engine and its reports share
 * (tests/unit/test_cells.c, test_tables.c, test_record.c, ...), header only (each test is built
 * from its one .c file; the functions are static inline so that a test uses only what it
 * needs). Include it after <cmocka.h>.
 *
 *   synthetic_config(), synthetic_runs(), synth_make(), slow_runs(), add_run()
 *                       a config of variants base and pgo, one workload, threads 1,4,16, and
 *                       runs with known medians (no process runs)
 *   report_string(), shape_string()
 *                       the report of an experiment as text (experiment_report_text(),
 *                       report_experiment())
 *   count_rows(), assert_row(), line_with(), assert_line(), count_lines()
 *                       checks on report text
 *   fake_dir_make(), fake_config(), run_logged()
 *                       a directory with a fake `pgolab` shell script (fake_pgolab) to run
 *                       whole experiments against
 *   write_file(), count_files(), stderr_begin(), stderr_end()
 *                       files and captured stderr */
#ifndef PGOLAB_EXPERIMENT_FIXTURES_H
#define PGOLAB_EXPERIMENT_FIXTURES_H

#include "experiment/experiment.h"
#include "report/tables.h"
#include "util/strbuf.h"
#include "util/util.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* (unused: not every test needs all three) */
static char *workloads1[] __attribute__((unused)) = { "oltp_read_only", NULL };
static int threads2[] __attribute__((unused)) = { 1, 2 };
static int threads3[] __attribute__((unused)) = { 1, 4, 16 };

/* A config with variants base and pgo, one workload, threads 1,4,16. */
static inline void synthetic_config(struct experiment_config *cfg, struct variant *v, int rounds)
{
    memset(cfg, 0, sizeof(*cfg));
    memset(v, 0, 2 * sizeof(*v));
    v[0].name = "base";
    v[0].library = "/opt/base/libsqlite3.so";
    v[1].name = "pgo";
    v[1].library = "/opt/pgo/libsqlite3.so";
    cfg->variants = v;
    cfg->nvariants = 2;
    cfg->workloads = workloads1;
    cfg->nworkloads = 1;
    cfg->threads = threads3;
    cfg->nthreads = 3;
    cfg->rounds = rounds;
    cfg->time_s = 10;
    cfg->tables = 1;
    cfg->table_size = 10000;
    cfg->workdir = "/nonexistent";
    cfg->pgolab = "pgolab";
    cfg->seed = 7;
}

static inline void add_run(struct experiment_result *res, int variant, int threads, int round,
                           double tps, double avg, double p95)
{
    res->runs = xrealloc(res->runs, sizeof(*res->runs) * (size_t)(res->nruns + 1));
    struct run_result *r = &res->runs[res->nruns++];
    memset(r, 0, sizeof(*r));
    r->variant = variant;
    r->workload = 0;
    r->threads = threads;
    r->round = round;
    r->tps = tps;
    r->qps = tps * 16;
    r->lat_avg_ms = avg;
    r->lat_p95_ms = p95;
    r->lat_min_ms = avg / 2;
    r->lat_max_ms = p95 * 2;
    r->transactions = (uint64_t)(tps * 10);
    r->json = xasprintf("{\"tps\":%g,\"qps\":%g,\"latency_ms\":{\"avg\":%g,\"p95\":%g},"
                        "\"threads\":%d}",
                        tps, tps * 16, avg, p95, threads);
}

/* Per thread count t (1, 4, 16) and round k (1..3):
 *   base tps = 100*t + {0, +10, -10}[k-1],  pgo tps = 120*t + {-5, +5, 0}[k-1]
 *   base avg = 2.0 + {0, .2, .4}[k-1] ms,   pgo avg = 1.5 + {.1, 0, .2}[k-1] ms
 *   p95 = 2 * avg. */
static inline void synthetic_runs(struct experiment_result *res, int rounds)
{
    static const double bt[] = { 0, 10, -10 }, pt[] = { -5, 5, 0 };
    static const double ba[] = { 0, .2, .4 }, pa[] = { .1, 0, .2 };
    memset(res, 0, sizeof(*res));
    res->env_json = xstrdup("{\"kernel\":\"6.1.0-test\",\"cores\":2}");
    res->started_at = 1700000000.0;
    res->finished_at = 1700000100.0;
    for (int k = 1; k <= rounds; k++)
        for (int i = 0; i < 3; i++) {
            int t = threads3[i];
            add_run(res, 0, t, k, 100.0 * t + bt[k - 1], 2.0 + ba[k - 1], 2 * (2.0 + ba[k - 1]));
            add_run(res, 1, t, k, 120.0 * t + pt[k - 1], 1.5 + pa[k - 1], 2 * (1.5 + pa[k - 1]));
        }
}

/* The synthetic experiment of the report tests: synthetic_config() and synthetic_runs() with
 * `rounds` rounds, as experiment id (0: none). */
struct synth {
    struct experiment_config cfg;
    struct variant v[2];
    struct experiment_result res;
};

static inline void synth_make(struct synth *x, int rounds, int64_t id)
{
    synthetic_config(&x->cfg, x->v, rounds);
    synthetic_runs(&x->res, rounds);
    x->cfg.experiment_id = id;
}

/* threads 1, 4, 16 and `rounds` rounds; base tps 100 t (+-2%), the variant factor times that
 * (with other +-2% noise). */
static inline void slow_runs(struct experiment_result *res, int rounds, double factor)
{
    static const double nb[] = { 0, .02, -.02, .01, -.01, .015 }, nv[] = { .01, -.02, 0, .02, -.01, .005 };
    memset(res, 0, sizeof(*res));
    for (int k = 1; k <= rounds; k++)
        for (int i = 0; i < 3; i++) {
            int t = threads3[i];
            add_run(res, 0, t, k, 100.0 * t * (1 + nb[k - 1]), 2, 4);
            add_run(res, 1, t, k, 100.0 * t * factor * (1 + nv[k - 1]), 2, 4);
        }
}

static inline char *report_string(const struct experiment_config *cfg,
                                  const struct experiment_result *res)
{
    struct strbuf sb = STRBUF_INIT;
    char chunk[4096];
    size_t n;
    FILE *f = tmpfile();
    assert_non_null(f);
    experiment_report_text(f, cfg, res);
    rewind(f);
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
        strbuf_add(&sb, chunk, n);
    fclose(f);
    return strbuf_detach(&sb);
}

static inline char *shape_string(const struct experiment_config *cfg,
                                 const struct experiment_result *res, enum report_shape shape,
                                 enum report_format fmt)
{
    struct strbuf sb = STRBUF_INIT;
    report_experiment(&sb, cfg, res, shape, fmt);
    return strbuf_detach(&sb);
}

/* Number of table lines whose first cell is exactly label. */
static inline int count_rows(const char *text, const char *label)
{
    int n = 0;
    for (const char *line = text; line && *line;) {
        const char *nl = strchr(line, '\n');
        if (line[0] == '|') {
            const char *p = line + 1;
            while (*p == ' ')
                p++;
            size_t l = strlen(label);
            if (!strncmp(p, label, l) && p[l] == ' ' && p[l + 1] == '|')
                n++;
        }
        line = nl ? nl + 1 : NULL;
    }
    return n;
}

/* The table line whose first cell is label, within the table titled title (caller frees). */
static inline char *table_row(const char *text, const char *title, const char *label)
{
    const char *t = strstr(text, title);
    assert_non_null(t);
    for (const char *line = t; line && *line;) {
        const char *nl = strchr(line, '\n');
        if (line != t && !strncmp(line, "Table ", 6))
            break;
        if (line[0] == '|') {
            const char *p = line + 1;
            while (*p == ' ')
                p++;
            size_t l = strlen(label);
            if (!strncmp(p, label, l) && p[l] == ' ')
                return nl ? xstrndup(line, (size_t)(nl - line)) : xstrdup(line);
        }
        line = nl ? nl + 1 : NULL;
    }
    fail_msg("no row '%s' in table '%s'", label, title);
    return NULL;
}

/* assert_row(text, title, label, needle...): the row label of the table titled title holds each
 * needle (a check per needle, failing at the caller's line). */
#define assert_row(text, title, label, ...) \
    row_holds(text, title, label, __FILE__, __LINE__, __VA_ARGS__, (const char *)NULL)

static inline void row_holds(const char *text, const char *title, const char *label,
                             const char *file, int line, ...)
{
    char *row = table_row(text, title, label);
    va_list ap;
    va_start(ap, line);
    for (const char *needle; (needle = va_arg(ap, const char *));)
        if (!strstr(row, needle)) {
            print_error("no '%s' in row '%s' of '%s': %s\n", needle, label, title, row);
            _fail(file, line);
        }
    va_end(ap);
    free(row);
}

/* The first line of text holding every one of the NULL-terminated needles (caller frees). */
static inline char *line_with(const char *text, ...)
{
    for (const char *line = text; line && *line;) {
        const char *nl = strchr(line, '\n');
        char *l = nl ? xstrndup(line, (size_t)(nl - line)) : xstrdup(line);
        va_list ap;
        const char *needle;
        int all = 1;
        va_start(ap, text);
        while ((needle = va_arg(ap, const char *)))
            all &= strstr(l, needle) != NULL;
        va_end(ap);
        if (all)
            return l;
        free(l);
        line = nl ? nl + 1 : NULL;
    }
    return NULL;
}

/* assert_line(text, key1, key2, needle...): some line of text holds key1 and key2 (NULL: only
 * key1), and that line holds each needle (a check for the line, one per needle, failing at the
 * caller's line). */
#define assert_line(text, key1, key2, ...) \
    line_holds(text, key1, key2, __FILE__, __LINE__, __VA_ARGS__, (const char *)NULL)

static inline void line_holds(const char *text, const char *key1, const char *key2,
                              const char *file, int line, ...)
{
    char *l = line_with(text, key1, key2, (const char *)NULL);
    if (!l) {
        print_error("no line with '%s' and '%s' in:\n%s\n", key1, key2 ? key2 : "", text);
        _fail(file, line);
    }
    va_list ap;
    va_start(ap, line);
    for (const char *needle; (needle = va_arg(ap, const char *));)
        if (!strstr(l, needle)) {
            print_error("no '%s' in the line: %s\n", needle, l);
            _fail(file, line);
        }
    va_end(ap);
    free(l);
}

static inline int count_lines(const char *text)
{
    int n = 0;
    for (const char *c = text; *c; c++)
        n += *c == '\n';
    return n;
}

/* A stand-in for the pgolab binary: prepare touches the db, info describes the library,
 * run prints a report whose tps depends on the library name (…fast… = 125, else 100),
 * and a library named …broken… fails like a crashing child. */
static const char fake_pgolab[] =
    "#!/bin/sh\n"
    "lib= db= threads= cmd=\n"
    "for a in \"$@\"; do\n"
    "  case \"$a\" in\n"
    "    --sqlite-library=*) lib=${a#*=} ;;\n"
    "    --sqlite-db=*) db=${a#*=} ;;\n"
    "    --threads=*) threads=${a#*=} ;;\n"
    "  esac\n"
    "  cmd=$a\n"
    "done\n"
    "case \"$cmd\" in\n"
    "  prepare) echo \"prepared $lib\" > \"$db\"; exit 0 ;;\n"
    "  info) printf '{\"library\":{\"path\":\"%s\",\"version\":\"3.99.0\",\"source_id\":\"fake-id\","
    "\"loaded_from\":\"%s\"}}\\n' \"$lib\" \"$lib\"; exit 0 ;;\n"
    "esac\n"
    "grep -q prepared \"$db\" || { echo \"not a copy of the template: $db\" >&2; exit 1; }\n"
    /* FAKE_STOP_AT=N: the Nth run (counted in $FAKE_COUNT) sends SIGINT to the experiment,
     * like Ctrl-C, and still finishes normally (the experiment must discard it) */
    "if [ -n \"$FAKE_STOP_AT\" ]; then\n"
    "  n=$(( $(cat \"$FAKE_COUNT\" 2>/dev/null || echo 0) + 1 )); echo $n > \"$FAKE_COUNT\"\n"
    "  [ \"$n\" -eq \"$FAKE_STOP_AT\" ] && kill -INT $PPID\n"
    "fi\n"
    /* FAKE_RUNLOG=FILE: every run appends "LIBRARY THREADS SEEN PREPARED-BY", SEEN = the runs
     * the database had seen before (each run appends "ran" to it) */
    "if [ -n \"$FAKE_RUNLOG\" ]; then\n"
    "  seen=$(grep -c '^ran' \"$db\"); prep=$(head -1 \"$db\" | cut -d' ' -f2); echo ran >> \"$db\"\n"
    "  echo \"${lib##*/} $threads $seen ${prep##*/}\" >> \"$FAKE_RUNLOG\"\n"
    "fi\n"
    "case \"$lib\" in *broken*) echo 'FATAL: boom' >&2; exit 1 ;; esac\n"
    "tps=100; case \"$lib\" in *fast*) tps=125 ;; esac\n"
    "printf '{\"tps\":%s,\"qps\":%s0,\"transactions\":10,\"ignored_errors\":0,\"threads\":%s,"
    "\"library\":{\"source_id\":\"fake-id\"},"
    "\"latency_ms\":{\"min\":1,\"avg\":2,\"max\":9,\"p95\":4},\"interrupted\":false}\\n' "
    "\"$tps\" \"$tps\" \"$threads\"\n";

static inline char *write_file(const char *dir, const char *name, const char *text, mode_t mode)
{
    char *path = xasprintf("%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    chmod(path, mode);
    return path;
}

static inline int count_files(const char *dir, const char *suffix)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    if (!d)
        return -1;
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name), s = strlen(suffix);
        n += l >= s && !strcmp(e->d_name + l - s, suffix);
    }
    closedir(d);
    return n;
}

/* A temporary directory with the fake pgolab (exe), its run log's path (runlog, see
 * FAKE_RUNLOG) and two libraries: lib_base (empty) and lib_fast. */
struct fake_dir {
    char dir[sizeof("/tmp/pgolab-test-XXXXXX")];
    char *exe, *lib_base, *lib_fast, *runlog;
};

static inline void fake_dir_make(struct fake_dir *fd)
{
    strcpy(fd->dir, "/tmp/pgolab-test-XXXXXX");
    assert_non_null(mkdtemp(fd->dir));
    fd->exe = write_file(fd->dir, "pgolab", fake_pgolab, 0755);
    fd->lib_base = write_file(fd->dir, "lib-base.so", "", 0644);
    fd->lib_fast = write_file(fd->dir, "lib-fast.so", "x", 0644);
    fd->runlog = xasprintf("%s/runs.log", fd->dir);
}

/* Removes the directory and all in it (rm -rf); returns rm's exit status. */
static inline int fake_dir_remove(struct fake_dir *fd)
{
    char *cmd = xasprintf("rm -rf %s", fd->dir);
    int rc = system(cmd);
    free(cmd);
    free(fd->exe);
    free(fd->lib_base);
    free(fd->lib_fast);
    free(fd->runlog);
    return rc;
}

/* A config for the fake pgolab of fd: variants base (lib_base) and fast (lib_fast), one
 * workload, threads 1 and 2, `rounds` rounds of 1 s on one table of 100 rows, in workdir. */
static inline void fake_config(struct experiment_config *cfg, struct variant *v,
                               const struct fake_dir *fd, const char *workdir, int rounds,
                               uint64_t seed)
{
    v[0] = (struct variant){ .name = "base", .library = fd->lib_base };
    v[1] = (struct variant){ .name = "fast", .library = fd->lib_fast };
    *cfg = (struct experiment_config){
        .variants = v, .nvariants = 2, .workloads = workloads1, .nworkloads = 1,
        .threads = threads2, .nthreads = 2, .rounds = rounds, .time_s = 1, .tables = 1,
        .table_size = 100, .workdir = workdir, .pgolab = fd->exe, .seed = seed,
    };
}

/* Runs cfg's experiment into res with the fake's run log (FAKE_RUNLOG) in fd: checks it
 * succeeds with nruns runs; returns the log, open for reading. */
static inline FILE *run_logged(struct experiment_config *cfg, struct experiment_result *res,
                               const struct fake_dir *fd, int nruns)
{
    setenv("FAKE_RUNLOG", fd->runlog, 1);
    assert_int_equal(experiment_run(cfg, NULL, res), 0);
    unsetenv("FAKE_RUNLOG");
    assert_int_equal(res->nruns, nruns);
    FILE *f = fopen(fd->runlog, "r");
    assert_non_null(f);
    return f;
}

/* Redirect stderr to a file until stderr_end(), which returns what was written (caller
 * frees). */
static inline int stderr_begin(const char *path)
{
    fflush(stderr);
    int saved = dup(2), fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(saved >= 0 && fd >= 0);
    dup2(fd, 2);
    close(fd);
    return saved;
}

static inline char *stderr_end(int saved, const char *path)
{
    struct strbuf sb = STRBUF_INIT;
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    strbuf_read_file(&sb, path);
    return strbuf_detach(&sb);
}

#endif
