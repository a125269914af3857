/* subprocess: run a program from an argv array (fork + execvp, never a shell string).
 * The caller owns every string it passes; nothing passed in is kept after the call. */
#ifndef PGOLAB_SUBPROCESS_H
#define PGOLAB_SUBPROCESS_H

#include "util/strbuf.h"

#include <sched.h>
#include <sys/resource.h>
#include <signal.h>
#include <sys/types.h>

struct subprocess {
    const char *const *argv;  /* NULL-terminated; argv[0] is looked up in PATH */
    const char *cwd;          /* directory to run in, or NULL */
    const char *const *env;   /* extra "NAME=VALUE" entries (NULL-terminated), or NULL */
    const char *log_path;     /* append the child's stdout and stderr here, or NULL */
    struct strbuf *out;       /* collect the child's stdout here (wins over log_path), or NULL */
    int quiet_stderr;         /* with out set and no log_path: send stderr to /dev/null */
    double timeout_s;         /* > 0: SIGTERM the child after this many seconds (SIGKILL 5 s
                               * later); the result is then 128+SIGTERM or 128+SIGKILL */
    /* Watching the child (optional; used by src/metrics' sampler): started(pid, hook_ctx)
     * right after the fork, tick(hook_ctx) about every tick_s seconds while it runs (with out
     * set; without it, every 10 ms); rusage, if set, gets the child's resource usage (wait4). */
    void (*started)(int pid, void *ctx);
    void (*tick)(void *ctx);
    void *hook_ctx;
    double tick_s;
    struct rusage *rusage;
    const cpu_set_t *cpus;    /* non-NULL: the child's CPU affinity (sched_setaffinity before
                               * exec, so every thread it makes inherits it) */
    const volatile sig_atomic_t *stop; /* non-NULL: the child runs in a process group of its
                               * own, and once *stop is non-zero (the caller's signal handler
                               * set it) the whole group gets SIGTERM, SIGKILL 5 s later: a
                               * signal to pgolab alone also ends a long build step */
    /* run_as: non-zero = setgroups/setgid/setuid to run_uid/run_gid in the child before exec
     * (pgolab is root and the program must run as the user a server runs as, e.g. an
     * instrumented server's `--version`: its profile files must belong to that user) */
    int run_as;
    uid_t run_uid;
    gid_t run_gid;
};

/* Run to completion. Returns the exit status (0..255), 128+signal when killed,
 * or -1 (with a message) when the program could not be started. */
int subprocess_run(const struct subprocess *sp);

/* Render argv as one shell-quoted line, for error messages and logs (caller frees). */
char *subprocess_argv_str(const char *const *argv);

/* Last `lines` lines of a text file, for "tail of the log" error messages, each line clipped
 * to FILE_TAIL_LINE_MAX bytes (caller frees). */
#define FILE_TAIL_LINE_MAX 400
char *file_tail(const char *path, int lines);

#endif
