/* bolt: instrument, merge and optimize one binary with LLVM BOLT (see bolt.h). */
#include "toolchain/bolt.h"
#include "toolchain/toolchain.h"
#include "util/argvec.h"
#include "util/fs.h"
#include "util/progress.h"
#include "util/strbuf.h"
#include "util/subprocess.h"
#include "util/util.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TAIL_LINES 3

static char *bolt_prog, *merge_prog;

/* The real path of a bolt-16 program, or NULL. */
static char *resolve(const char *name)
{
    char *p = find_in_path(name);
    char *real = p ? realpath(p, NULL) : NULL;
    free(p);
    return real;
}

int bolt_tools_check(void)
{
    if (!bolt_prog)
        bolt_prog = resolve("llvm-bolt-16");
    if (!merge_prog)
        merge_prog = resolve("merge-fdata-16");
    if (!bolt_prog || !merge_prog)
        return error("BOLT needs %s (Debian package bolt-16: apt-get install bolt-16)",
                     bolt_prog ? "merge-fdata-16" : "llvm-bolt-16");
    return 0;
}

/* Run argv with its output in log (emptied first); on failure one line: the step, the
 * command, the last lines of the log joined with " | ". */
static int run_step(const struct bolt_variant *v, const char *step, const char *const *argv,
                    const char *log)
{
    struct subprocess sp = { .argv = argv, .log_path = log };
    if (stamp_write(log, "") < 0)
        return -1;
    int st = subprocess_run(&sp);
    if (st == 0)
        return 0;
    char *cmd = subprocess_argv_str(argv);
    char *tail = file_tail(log, TAIL_LINES);
    for (char *c = tail; *c; c++)
        if (*c == '\n')
            *c = c[1] ? '|' : '\0';
    error("%s: BOLT %s failed (exit %d): %s; log %s: %s", v->name, step, st, cmd, log, tail);
    free(cmd);
    free(tail);
    return -1;
}

/* Fill the result paths of v (idempotent). */
static void set_paths(struct bolt_variant *v)
{
    if (v->output)
        return;
    const char *slash = strrchr(v->input, '/');
    const char *base = slash ? slash + 1 : v->input;
    char *idir = path_join(v->dir, "instrumented");
    v->instrumented = path_join(idir, base);
    free(idir);
    v->profile_dir = path_join(v->dir, "profile");
    v->fdata = path_join(v->dir, "merged.fdata");
    v->output = path_join(v->dir, base);
    v->dyno_stats = path_join(v->dir, "dyno-stats.txt");
}

int bolt_instrument(struct bolt_variant *v)
{
    if (bolt_tools_check() < 0)
        return -1;
    set_paths(v);
    char *idir = path_join(v->dir, "instrumented");
    char *log = path_join(v->dir, "instrument.log");
    char *file_opt = xasprintf("--instrumentation-file=%s/prof.fdata", v->profile_dir);
    char *sleep_opt = xasprintf("--instrumentation-sleep-time=%d", v->sleep_s);
    struct argvec a = ARGVEC_INIT;
    int rc = -1;
    uint64_t t0 = now_ns();
    if (mkdir_p(idir) < 0 || remove_tree(v->profile_dir) < 0 || mkdir_p(v->profile_dir) < 0)
        goto out;
    argvec_pushv(&a, (const char *const[]){ bolt_prog, v->input, "-instrument", "-o",
                                            v->instrumented, file_opt, NULL });
    if (v->append_pid)
        argvec_push(&a, "--instrumentation-file-append-pid");
    if (v->sleep_s > 0)
        argvec_push(&a, sleep_opt);
    if (v->instrument_options)
        argvec_pushv(&a, (const char *const *)v->instrument_options);
    progress("%s: BOLT instrument", v->name);
    rc = run_step(v, "instrument", argvec_argv(&a), log);
    v->seconds += (double)(now_ns() - t0) / 1e9;
out:
    progress_done();
    argvec_clear(&a);
    free(idir);
    free(log);
    free(file_opt);
    free(sleep_opt);
    return rc;
}

int bolt_merge(struct bolt_variant *v)
{
    struct argvec files = ARGVEC_INIT, a = ARGVEC_INIT;
    char *log = path_join(v->dir, "merge.log");
    int rc = -1;
    uint64_t t0 = now_ns();
    set_paths(v);
    list_files(&files, v->profile_dir, ".fdata");
    argvec_push(&a, merge_prog);
    v->fdata_files = 0;
    for (int i = 0; i < files.n; i++)
        if (file_size(files.v[i]) > 0) {
            argvec_push(&a, files.v[i]);
            v->fdata_files++;
        }
    if (!v->fdata_files) {
        error("%s: training produced no BOLT profile in %s (the instrumented binary wrote "
              "nothing at exit)", v->name, v->profile_dir);
        goto out;
    }
    argvec_pushv(&a, (const char *const[]){ "-o", v->fdata, NULL });
    rc = run_step(v, "merge-fdata", argvec_argv(&a), log);
    v->fdata_bytes = file_size(v->fdata);
    if (rc == 0 && v->fdata_bytes <= 0)
        rc = error("%s: merge-fdata wrote an empty profile %s", v->name, v->fdata);
    v->seconds += (double)(now_ns() - t0) / 1e9;
out:
    argvec_clear(&files);
    argvec_clear(&a);
    free(log);
    return rc;
}

int bolt_parse_profiled(const char *text, int *profiled, int *functions)
{
    for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        int n, m;
        if (sscanf(l, "BOLT-INFO: %d out of %d functions in the binary", &n, &m) == 2 &&
            strstr(l, "non-empty execution profile") &&
            (!strchr(l, '\n') || strstr(l, "non-empty execution profile") < strchr(l, '\n'))) {
            *profiled = n;
            *functions = m;
            return 0;
        }
    }
    return -1;
}

char *bolt_dyno_stats(const char *text)
{
    const char *start = strstr(text, "dynostats");
    if (!start)
        return NULL;
    while (start > text && start[-1] != '\n')
        start--;
    /* the last line of the form "<spaces><number> : <what>" */
    const char *end = start;
    for (const char *l = start; *l; ) {
        const char *nl = strchr(l, '\n');
        long long n;
        char c;
        if (sscanf(l, " %lld %c", &n, &c) == 2 && c == ':')
            end = nl ? nl + 1 : l + strlen(l);
        if (!nl)
            break;
        l = nl + 1;
    }
    if (end == start)
        return NULL;
    return xasprintf("%.*s", (int)(end - start), start);
}

int bolt_dyno_figure(const char *dyno, const char *what, long long *before, long long *after)
{
    long long seen[2];
    int n = 0;
    size_t lw = strlen(what);
    for (const char *l = dyno; l && *l && n < 2; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        char line[256];
        size_t len = strcspn(l, "\n");
        if (len >= sizeof(line))
            continue;
        memcpy(line, l, len);
        line[len] = '\0'; /* sscanf's spaces must not run into the next line */
        long long x;
        int off = 0;
        if (sscanf(line, " %lld : %n", &x, &off) != 1 || off == 0)
            continue;
        const char *name = line + off;
        if (strncmp(name, what, lw) || (name[lw] && strncmp(name + lw, " (", 2)))
            continue;
        seen[n++] = x;
    }
    if (n < 2)
        return -1;
    *before = seen[0];
    *after = seen[1];
    return 0;
}

int bolt_read_log(struct bolt_variant *v)
{
    struct strbuf sb = STRBUF_INIT;
    set_paths(v);
    char *log = path_join(v->dir, "optimize.log");
    strbuf_init(&sb, 0);
    int rc = strbuf_read_file(&sb, log) == 0 &&
                     bolt_parse_profiled(sb.buf, &v->profiled, &v->functions) == 0 &&
                     file_size(v->output) > 0 ? 0 : -1;
    struct argvec files = ARGVEC_INIT;
    list_files(&files, v->profile_dir, ".fdata");
    v->fdata_files = files.n;
    v->fdata_bytes = file_size(v->fdata);
    argvec_clear(&files);
    strbuf_release(&sb);
    free(log);
    return rc;
}

int bolt_optimize(struct bolt_variant *v)
{
    struct strbuf sb = STRBUF_INIT;
    char *log = path_join(v->dir, "optimize.log");
    char *data_opt = xasprintf("-data=%s", v->fdata);
    const char *argv[] = { bolt_prog, v->input, "-o", v->output, data_opt, BOLT_OPT_OPTIONS,
                           NULL };
    uint64_t t0 = now_ns();
    strbuf_init(&sb, 0);
    progress("%s: BOLT optimize", v->name);
    unlink(v->output);
    int rc = run_step(v, "optimize", argv, log);
    progress_done();
    v->seconds += (double)(now_ns() - t0) / 1e9;
    if (rc < 0 || strbuf_read_file(&sb, log) < 0)
        goto fail;
    char *dyno = bolt_dyno_stats(sb.buf);
    if (dyno) {
        rc = stamp_write(v->dyno_stats, dyno);
        free(dyno);
    }
    if (rc == 0 && bolt_parse_profiled(sb.buf, &v->profiled, &v->functions) < 0)
        rc = error("%s: llvm-bolt printed no \"functions ... have non-empty execution profile\" "
                   "line (log %s)", v->name, log);
    if (rc == 0 && v->profiled == 0)
        rc = error("%s: BOLT found no function with profile in %s (profile %s does not match "
                   "the binary; log %s)", v->name, v->input, v->fdata, log);
    if (rc == 0 && file_size(v->output) <= 0)
        rc = error("%s: llvm-bolt wrote no %s (log %s)", v->name, v->output, log);
    goto out;
fail:
    unlink(v->output);
    rc = -1;
out:
    if (rc < 0)
        unlink(v->output);
    strbuf_release(&sb);
    free(log);
    free(data_opt);
    return rc;
}

int bolt_perf_check(void)
{
    char *perf = find_in_path("perf");
    if (!perf)
        return error("--bolt-profile=perf: no perf here (Debian package linux-perf); use "
                     "--bolt-profile=instrument");
    char tmpl[] = "/tmp/pgolab-lbr-XXXXXX";
    int fd = mkstemp(tmpl);
    if (fd >= 0)
        close(fd);
    char *log = xasprintf("%s.log", tmpl);
    const char *argv[] = { perf, "record", "-q", "-e", "cycles:u", "-j", "any,u", "-o", tmpl,
                           "--", "true", NULL };
    struct subprocess sp = { .argv = argv, .log_path = log, .timeout_s = 20 };
    int st = stamp_write(log, "") < 0 ? -1 : subprocess_run(&sp);
    char *why = file_tail(log, 1);
    why[strcspn(why, "\n")] = '\0';
    unlink(tmpl);
    unlink(log);
    free(log);
    free(perf);
    int rc = 0;
    if (st != 0)
        rc = error("--bolt-profile=perf: `perf record -e cycles:u -j any,u` fails here (%s): no "
                   "LBR branch sampling (a VM or a CPU without it), so perf2bolt would have no "
                   "branch profile; use --bolt-profile=instrument", *why ? why : "no reason given");
    free(why);
    return rc;
}

void bolt_variant_release(struct bolt_variant *v)
{
    free(v->instrumented);
    free(v->profile_dir);
    free(v->fdata);
    free(v->output);
    free(v->dyno_stats);
    v->instrumented = v->profile_dir = v->fdata = v->output = v->dyno_stats = NULL;
}
