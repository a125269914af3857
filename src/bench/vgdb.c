/* vgdb: the benchmark client's view of a server under valgrind callgrind: its thread numbers,
 * callgrind's zero and dump (see vgdb.h). Owns no state. */
#include "bench/vgdb.h"
#include "util/strbuf.h"
#include "util/subprocess.h"
#include "util/util.h"

#include <assert.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int vgdb_thread_of(const char *text, int64_t lwpid)
{
    assert(text);
    for (const char *p = text; (p = strstr(p, "Thread ")); p++) {
        if (p != text && p[-1] != '\n')
            continue;  /* "Thread N:" opens a line */
        char *end;
        long tid = strtol(p + 7, &end, 10);
        if (end == p + 7 || *end != ':' || tid <= 0)
            continue;
        const char *eol = strchr(end, '\n');
        const char *lw = strstr(end, "(lwpid ");
        if (!lw || (eol && lw > eol))
            continue;
        if (strtoll(lw + 7, NULL, 10) == lwpid)
            return (int)tid;
    }
    return 0;
}

long vgdb_process_of(int64_t tid)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%" PRId64 "/status", tid);
    FILE *f = fopen(path, "r");
    char line[256];
    long pid = 0;
    while (f && fgets(line, sizeof(line), f))
        if (!strncmp(line, "Tgid:", 5)) {
            pid = strtol(line + 5, NULL, 10);
            break;
        }
    if (f)
        fclose(f);
    return pid > 0 ? pid : 0;
}

/* Run vgdb with the monitor command cmd into out (its stdout). 0, or -1 with a message. */
static int run_vgdb(const char *prefix, long pid, const char *cmd, struct strbuf *out)
{
    char *pfx = xasprintf("--vgdb-prefix=%s", prefix);
    char *pidopt = pid > 0 ? xasprintf("--pid=%ld", pid) : NULL;
    const char *argv[] = { "vgdb", pfx, pidopt ? pidopt : cmd, pidopt ? cmd : NULL, NULL };
    /* a server blocked in system calls answers once vgdb has woken it (ptrace), well under
     * a second; the bound is for a valgrind that is gone */
    struct subprocess sp = { .argv = argv, .out = out, .quiet_stderr = 1, .timeout_s = 60 };
    int st = subprocess_run(&sp);
    free(pfx);
    free(pidopt);
    if (st != 0)
        return error("vgdb --vgdb-prefix=%s %s failed (exit %d): is the server still running "
                     "under valgrind?", prefix, cmd, st);
    return 0;
}

int vgdb_threads(const char *prefix, long pid, const int64_t *os, int n, int *out)
{
    struct strbuf sb = STRBUF_INIT;
    int rc = run_vgdb(prefix, pid, "v.info scheduler", &sb);
    for (int i = 0; rc == 0 && i < n; i++) {
        out[i] = vgdb_thread_of(sb.buf ? sb.buf : "", os[i]);
        if (!out[i])
            rc = error("the server thread %" PRId64 " serving connection #%d is not among the "
                       "threads valgrind runs under %s", os[i], i, prefix);
    }
    strbuf_release(&sb);
    return rc;
}

int vgdb_command(const char *prefix, long pid, const char *cmd)
{
    struct strbuf sb = STRBUF_INIT;
    int rc = run_vgdb(prefix, pid, cmd, &sb);
    strbuf_release(&sb);
    return rc;
}
