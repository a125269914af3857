/* compile: one library build (stamp, log, skip when up to date) and a few of them in parallel.
 * The struct lib_build's inputs belong to the caller, its results to the struct. */
#include "toolchain/toolchain.h"
#include "util/progress.h"
#include "util/signals.h"
#include "util/strbuf.h"
#include "util/subprocess.h"
#include "util/util.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define LOG_TAIL_LINES 15

const char *pgo_log_problem(const char *log_text)
{
    /* GCC: -Wmissing-profile, -Wcoverage-mismatch, corrupt .gcda; clang: -Wprofile-instr-missing,
     * -unprofiled, -out-of-date, and the backend's hash-mismatch remark (pgo.md 4.4). */
    static const char *const phrases[] = {
        "profile count data file not found",
        "does not match its profile data",
        "coverage-mismatch",
        "corrupted profile info",
        "no profile data available",
        "profile data may be out of date",
        "profile data may be incomplete",
        "profile data may be corrupt",
        "function control flow change detected",
        "could not read profile",
        "hash mismatch",
    };
    /* Look at the compiler's messages only: lines starting with "$ " echo the command, whose
     * -Werror=... options would match. */
    for (const char *line = log_text; line && *line;) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        if (strncmp(line, "$ ", 2)) {
            char *l = xstrndup(line, len);
            const char *hit = NULL;
            for (size_t i = 0; i < ARRAY_SIZE(phrases) && !hit; i++)
                if (strcasestr(l, phrases[i]))
                    hit = phrases[i];
            free(l);
            if (hit)
                return hit;
        }
        line += len + (nl ? 1 : 0);
    }
    return NULL;
}

static double seconds_since(uint64_t t0)
{
    return (double)(now_ns() - t0) / 1e9;
}

/* "phase build failed ...: CMD" plus the tail of the log, as one message. */
static int build_failed(const struct lib_build *b, const char *why)
{
    char *cmd = subprocess_argv_str(b->argv);
    char *tail = file_tail(b->log, LOG_TAIL_LINES);
    error("%s build %s: %s\n--- last lines of %s ---\n%s", b->name, why, cmd, b->log, tail);
    free(cmd);
    free(tail);
    return -1;
}

int lib_build_run(struct lib_build *b)
{
    b->status = -1;
    b->skipped = false;
    if (sig_caught())
        return -1; /* interrupted before this build started: nothing touched, nothing said */
    b->seconds = 0;
    free(b->lib);
    free(b->log);
    free(b->sha256);
    b->sha256 = NULL;
    b->lib = path_join(b->dir, b->output);
    b->log = path_join(b->dir, "build.log");
    if (mkdir_p(b->dir) < 0)
        return -1;

    char *cmd = subprocess_argv_str(b->argv);
    char *stamp_path = path_join(b->dir, "stamp");
    char *stamp = xasprintf("command: %s\ndir: %s\n%s\n", cmd, b->dir,
                            b->stamp_extra ? b->stamp_extra : "");
    int rc = -1;

    free(b->why);
    b->why = NULL;
    if (!b->force && is_file(b->lib) && stamp_matches(stamp_path, stamp)) {
        b->sha256 = sha256_file(b->lib);
        if (b->sha256) {
            b->skipped = true;
            b->status = rc = 0;
        }
        goto out;
    }

    /* why it is built again (a first build says nothing) */
    char *changed = b->force ? NULL : stamp_first_change(stamp_path, stamp);
    static const struct {
        const char *key, *words;
    } causes[] = {
        { "command", "its compile command changed (the flags or a path)" },
        { "dir", "its build directory changed" },
        { "source-sha256", "the source changed" },
        { "compiler", "the compiler changed" },
        { "profile", "its profile changed (retrained)" },
    };
    if (b->force)
        b->why = xstrdup("--rebuild was given");
    else if (changed) {
        const char *words = NULL;
        for (size_t i = 0; i < ARRAY_SIZE(causes) && !words; i++)
            if (!strcmp(changed, causes[i].key))
                words = causes[i].words;
        b->why = words ? xasprintf("%s since the cached build", words)
                       : xasprintf("its stamp's %s changed since the cached build",
                                   *changed ? changed : "text");
    } else if (is_file(stamp_path)) { /* the stamp matches: the output went missing */
        b->why = xasprintf("its output %s was removed", b->lib);
    }
    free(changed);
    if (b->why) {
        progress_done();
        fprintf(stderr, "rebuilding %s: %s\n", b->name, b->why);
    }
    unlink(stamp_path);
    unlink(b->lib);
    char *header = xasprintf("$ cd %s && %s\n", b->dir, cmd);
    rc = stamp_write(b->log, header); /* truncates the log; subprocess appends */
    free(header);
    if (rc < 0)
        goto out;

    uint64_t t0 = now_ns();
    struct subprocess sp = { .argv = b->argv, .cwd = b->dir, .log_path = b->log,
                             .stop = b->stop };
    int st = subprocess_run(&sp);
    b->seconds = seconds_since(t0);
    rc = -1;
    if (st < 0)
        goto out;
    if (st != 0) {
        char *why = xasprintf("failed (exit %d)", st);
        if (!sig_child_interrupted(st)) /* else the user's Ctrl-C: the caller says so */
            build_failed(b, why);
        free(why);
        goto out;
    }
    if (!is_file(b->lib)) {
        build_failed(b, "produced no output");
        goto out;
    }
    if (b->phase == BUILD_PGO) {
        struct strbuf logtext = STRBUF_INIT;
        strbuf_init(&logtext, 0);
        const char *problem = NULL;
        if (strbuf_read_file(&logtext, b->log) == 0)
            problem = pgo_log_problem(logtext.buf);
        strbuf_release(&logtext);
        if (problem) {
            char *why = xasprintf("did not use the profile data ('%s' in the log)", problem);
            build_failed(b, why);
            free(why);
            unlink(b->lib);
            goto out;
        }
    }
    b->sha256 = sha256_file(b->lib);
    if (!b->sha256 || stamp_write(stamp_path, stamp) < 0)
        goto out;
    /* the fingerprint: what built it (the stamp) plus what came out */
    char *fp_path = path_join(b->dir, "fingerprint");
    char *fp = xasprintf("%soutput: %s\noutput-sha256: %s\n", stamp, b->lib, b->sha256);
    rc = stamp_write(fp_path, fp);
    free(fp_path);
    free(fp);
    if (rc < 0)
        goto out;
    b->status = rc = 0;
out:
    free(cmd);
    free(stamp_path);
    free(stamp);
    return rc;
}

struct parallel_state {
    struct lib_build *builds;
    int n;
    atomic_int next;
    atomic_int done;
};

static void *build_worker(void *arg)
{
    struct parallel_state *ps = arg;
    for (;;) {
        int i = atomic_fetch_add(&ps->next, 1);
        if (i >= ps->n)
            break;
        lib_build_run(&ps->builds[i]);
        atomic_fetch_add(&ps->done, 1);
    }
    return NULL;
}

int lib_build_parallel(struct lib_build *builds, int n, int jobs, const char *what)
{
    struct parallel_state ps = { .builds = builds, .n = n };
    pthread_t tids[16];
    int nt = jobs < 1 ? 1 : jobs;
    if (nt > n)
        nt = n;
    if (nt > (int)ARRAY_SIZE(tids))
        nt = (int)ARRAY_SIZE(tids);
    atomic_init(&ps.next, 0);
    atomic_init(&ps.done, 0);
    for (int i = 0; i < n; i++)
        builds[i].status = -1;

    uint64_t t0 = now_ns();
    int started = 0;
    for (; started < nt; started++) {
        int e = pthread_create(&tids[started], NULL, build_worker, &ps);
        if (e) {
            error("pthread_create: %s", strerror(e));
            break;
        }
    }
    if (!started) /* no threads at all: build here */
        build_worker(&ps);
    long shown = -1;
    int shown_done = -1;
    while (atomic_load(&ps.done) < n) {
        long secs = (long)seconds_since(t0);
        int done = atomic_load(&ps.done);
        if (secs != shown || done != shown_done) /* redraw when the text changes */
            progress("%s: %d/%d done, %ld s", what, done, n, secs);
        shown = secs;
        shown_done = done;
        struct timespec ts = { 0, 250 * 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
    for (int i = 0; i < started; i++)
        pthread_join(tids[i], NULL);
    progress_done();
    for (int i = 0; i < n; i++)
        if (builds[i].status != 0)
            return -1;
    int reused = 0;
    for (int i = 0; i < n; i++)
        reused += builds[i].skipped;
    if (reused == n)
        progress_phase_done("%s: %d/%d done (cached)", what, n, n);
    else
        progress_phase_done("%s: %d/%d done in %.0f s", what, n, n, seconds_since(t0));
    return 0;
}

void lib_build_release(struct lib_build *b)
{
    free(b->lib);
    free(b->log);
    free(b->sha256);
    free(b->why);
    b->lib = b->log = b->sha256 = b->why = NULL;
}
