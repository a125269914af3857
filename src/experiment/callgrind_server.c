/* callgrind_server: a managed server under valgrind callgrind, and the reading of the files its
 * processes and threads write (see callgrind_server.h). No state. */
#include "experiment/callgrind_server.h"
#include "server/server.h"
#include "util/fs.h"
#include "util/strbuf.h"
#include "util/util.h"

#include <assert.h>
#include <dirent.h>
#include <jansson.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *callgrind_server_marker(enum server_kind kind)
{
    /* PostgreSQL: a backend that ran a statement (PortalRun, simple or extended protocol;
     * exported by the postgres binary for extensions). Not PostgresMain: a start-up probe
     * whose ping timed out under load still gets its backend through start-up (14M
     * instructions, no statement), and how many did moved an A/A pair by 135k instructions per
     * transaction, the 1.0% steps CI saw. MariaDB/MySQL: the loop step of a connection thread
     * (exported by mariadbd) */
    return kind == SERVER_PGSQL ? "PortalRun" : "do_command(";
}

int callgrind_server_wrapper(struct argvec *a, const struct experiment_config *cfg,
                             enum server_kind kind, const char *dir)
{
    const char *vg = cfg->valgrind ? cfg->valgrind : "valgrind";
    char *path = strchr(vg, '/') ? xstrdup(vg) : find_in_path(vg);
    if (!path || access(path, X_OK) < 0) {
        free(path);
        return error("--measure=instructions needs valgrind to run the server under, but %s "
                     "was not found; install it (apt-get install valgrind)", vg);
    }
    argvec_push(a, path);
    free(path);
    argvec_push(a, "--tool=callgrind");
    argvec_push(a, "--cache-sim=yes");
    argvec_push(a, "--branch-sim=yes");
    if (kind == SERVER_PGSQL) {
        /* a forked child starts with the postmaster's counts: zero them at the fork, so a
         * backend's file is its own work (the postmaster's own file then holds only what it
         * did since its last fork: background, never counted) */
        argvec_push(a, "--zero-before=fork_process");
        /* how often a backend finds the client's next request not there yet, and waits for
         * it, depends on timing (0.1-0.2% of an A/A pair's count moved in recv, epoll and the
         * wait loop): reading from the client's socket is not counted. A toggle flips the
         * collection on entry and back on exit, so only the one exported name, never a
         * pattern (a clone nested in it, secure_read.part.0, would flip it back) */
        argvec_push(a, "--toggle-collect=secure_read");
    } else {
        argvec_push(a, "--separate-threads=yes");  /* a file per thread: DIR/cg.PID-NN */
        /* the same for a connection thread: vio_read (recv, and on EAGAIN the poll in
         * vio_io_wait) is reading from the client's socket, exported by mariadbd */
        argvec_push(a, "--toggle-collect=vio_read");
        /* the bench child maps its connections to callgrind's threads and has the counts
         * zeroed and dumped through vgdb (bench/vgdb.h), over FIFOs in this directory */
        argvec_pushf(a, "--vgdb-prefix=%s/vgdb", dir);
    }
    argvec_push(a, "--collect-atstart=yes");  /* a toggle alone would switch it off */
    argvec_pushf(a, "--callgrind-out-file=%s/cg.%%p", dir);
    return 0;
}

int callgrind_server_stop_signal(enum server_kind kind)
{
    /* PostgreSQL's smart shutdown lets each backend read the client's Terminate and exit by
     * itself; the fast one would end a backend that had not read it yet in its error path
     * instead, a different cost depending on timing */
    return kind == SERVER_PGSQL ? SIGTERM : 0;
}

void callgrind_server_options(enum server_kind kind, const char *version, char *const *user,
                              int n, struct argvec *out)
{
    if (kind == SERVER_PGSQL) {
        argvec_push(out, "autovacuum=off");
        /* a backend flushes its pending table statistics at most once a second while it
         * runs (PGSTAT_MIN_INTERVAL), so how many flushes a run has depends on how long it
         * took: an A/A pair under load differed by 1.0% (pgstat_report_stat's flush). Without
         * table counters nothing is pending, and the check stays one cheap call per idle */
        argvec_push(out, "track_counts=off");
    } else {
        /* what valgrind can run: MariaDB 10.11 reserves address space for an 8 TiB buffer
         * pool (valgrind cannot map it, and the start hangs or fails), and its native AIO
         * (io_uring) is not among the system calls valgrind knows */
        if (!version || strncmp(version, "MySQL", 5)) /* MySQL 9.7 has no such option */
            argvec_push(out, "innodb-buffer-pool-size-max=1g");
        argvec_push(out, "innodb-use-native-aio=0");
        /* InnoDB's persistent statistics recalculate in the background after 10% of a
         * table changed; when depends on the clock */
        argvec_push(out, "innodb-stats-auto-recalc=0");
    }
    for (int i = 0; i < n; i++)
        argvec_push(out, user[i]);
}

int callgrind_server_dir(const char *dir, enum server_kind kind)
{
    if (mkdir(dir, 0700) < 0 && errno != EEXIST)
        return error("cannot create %s: %s", dir, strerror(errno));
    if (geteuid() == 0) {
        uid_t uid;
        char *name = NULL;
        if (server_run_user(kind, &uid, &name) < 0)
            return -1;
        free(name);
        if (uid != 0 && chown(dir, uid, (gid_t)-1) < 0)
            return error("cannot give %s to the server's user: %s", dir, strerror(errno));
    }
    return 0;
}

bool callgrind_text_names(const char *text, const char *fn)
{
    assert(text && fn && *fn);
    size_t n = strlen(fn);
    bool prefix = fn[n - 1] == '(';
    for (const char *line = text; *line; ) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        const char *p = line;
        if (*p == 'c')
            p++;
        if (!strncmp(p, "fn=", 3)) {
            p += 3;
            if (*p == '(') {  /* name compression: "(N) NAME" defines N, "(N)" alone uses it */
                const char *close = memchr(p, ')', len - (size_t)(p - line));
                p = close && close[1] == ' ' ? close + 2 : line + len;
            }
            size_t rest = len - (size_t)(p - line);
            if (rest >= n && !memcmp(p, fn, n) && (prefix || rest == n))
                return true;
        }
        line += len + (end ? 1 : 0);
    }
    return false;
}

int callgrind_server_conns(const char *report_json, enum server_kind kind,
                           struct callgrind_server_conn **out, int *n)
{
    const char *driver = kind == SERVER_PGSQL ? "pgsql" : "mysql";
    json_t *root = report_json ? json_loads(report_json, 0, NULL) : NULL;
    json_t *a = json_object_get(root, "server_connections");
    *out = NULL;
    *n = 0;
    if (!json_is_array(a) || json_array_size(a) == 0) {
        json_decref(root);
        return error("the %s driver's connections did not report their server identity (no "
                     "\"server_connections\" in the bench child's report)", driver);
    }
    json_t *rc = json_object_get(root, "reconnects");
    if (json_is_integer(rc) && json_integer_value(rc) > 0) {  /* identities are per connect */
        json_decref(root);
        return error("the %s driver reconnected during the run: the new connection's server "
                     "identity was not reported, so the run cannot be counted exactly", driver);
    }
    *n = (int)json_array_size(a);
    *out = xcalloc((size_t)*n, sizeof(**out));
    for (int i = 0; i < *n; i++) {
        json_t *c = json_array_get(a, (size_t)i);
        json_t *v = json_object_get(c, kind == SERVER_PGSQL ? "pid" : "callgrind_thread");
        json_int_t x = json_is_integer(v) ? json_integer_value(v) : 0;
        if (x <= 0) {
            json_decref(root);
            free(*out);
            *out = NULL;
            *n = 0;
            return error("the %s driver's connection #%d did not report its %s", driver, i,
                         kind == SERVER_PGSQL ? "backend's PID" : "server thread");
        }
        if (kind == SERVER_PGSQL)
            (*out)[i].pid = x;
        else
            (*out)[i].thread = (int)x;
    }
    json_decref(root);
    return 0;
}

/* The file name's process id and, for a per-thread file of the dump (cg.PID.1-NN), its
 * thread number (0 for cg.PID, -1 for any other shape: cg.PID-NN, cg.PID.2-NN). */
static int64_t file_ids(const char *name, int *thread)
{
    char *end;
    int64_t pid = strtoll(name + 3, &end, 10);
    *thread = -1;
    if (!*end) {
        *thread = 0;
    } else if (!strncmp(end, ".1-", 3)) {
        char *e2;
        long t = strtol(end + 3, &e2, 10);
        if (!*e2 && t > 0)
            *thread = (int)t;
    }
    return pid;
}

/* Whether file (pid, thread) is one of the benchmark's connections. */
static bool is_conn(enum server_kind kind, const struct callgrind_server_conn *conns, int n,
                    int64_t pid, int thread)
{
    for (int i = 0; i < n; i++)
        if (kind == SERVER_PGSQL ? conns[i].pid == pid : conns[i].thread == thread)
            return true;
    return false;
}

int callgrind_server_read(const char *dir, enum server_kind kind,
                          const struct callgrind_server_conn *conns, int nconns,
                          struct callgrind_server_counts *out, struct profile_counts *profile)
{
    assert(conns && nconns > 0);
    memset(out, 0, sizeof(*out));
    if (profile)
        memset(profile, 0, sizeof(*profile));
    DIR *d = opendir(dir);
    if (!d)
        return error("cannot read the server's callgrind files in %s: %s", dir, strerror(errno));
    const char *marker = callgrind_server_marker(kind);
    bool pg = kind == SERVER_PGSQL;
    int rc = 0;
    struct dirent *e;
    int64_t dump_pid = 0;  /* MariaDB: the process of the dump */
    while (rc == 0 && (e = readdir(d))) {
        if (strncmp(e->d_name, "cg.", 3) != 0)
            continue;
        int thread;
        int64_t pid = file_ids(e->d_name, &thread);
        if (pg ? thread != 0 : thread <= 0)
            continue;  /* MariaDB: the process's own name, and its files at exit */
        if (!pg && dump_pid && pid != dump_pid) {
            rc = error("%s/%s: callgrind files of two server processes (%lld and %lld)", dir,
                       e->d_name, (long long)dump_pid, (long long)pid);
            break;
        }
        dump_pid = pid;
        char *path = xasprintf("%s/%s", dir, e->d_name);
        struct strbuf sb = STRBUF_INIT;
        struct callgrind_counts c;
        bool mine = is_conn(kind, conns, nconns, pid, thread);
        if (strbuf_read_file(&sb, path) < 0) {
            rc = error("cannot read %s: %s", path, strerror(errno));
        } else if (sb.len == 0) {
            rc = error("%s is empty: the server process ended before callgrind wrote its "
                       "counts (killed?)", path);
        } else if (experiment_callgrind_counts(path, &c) < 0) {
            rc = -1;
        } else if (mine) {
            experiment_callgrind_add(&out->serving, &c);
            out->nserving++;
            struct profile_counts pc;
            if (profile && profile_callgrind_read(path, &pc) == 0) {
                profile_counts_merge(profile, &pc);
                profile_counts_release(&pc);
            } else if (profile) {
                rc = -1;
            }
        } else {
            experiment_callgrind_add(&out->background, &c);
            out->nbackground++;
            if (callgrind_text_names(sb.buf, marker)) {  /* another client's connection */
                if (out->nstrangers < CALLGRIND_STRANGERS_MAX)
                    snprintf(out->strangers[out->nstrangers], sizeof(out->strangers[0]),
                             pg ? "PID %lld" : "thread %lld",
                             (long long)(pg ? pid : thread));
                out->nstrangers++;
            }
        }
        strbuf_release(&sb);
        free(path);
    }
    closedir(d);
    /* every connection's file is there: a missing one would count less, silently */
    for (int i = 0; rc == 0 && i < nconns; i++) {
        char *path = pg ? xasprintf("%s/cg.%lld", dir, (long long)conns[i].pid)
                        : xasprintf("%s/cg.%lld.1-%02d", dir, (long long)dump_pid,
                                    conns[i].thread);
        if (access(path, F_OK) != 0)
            rc = error("%s is missing: the callgrind file of the benchmark's connection #%d "
                       "(%s %lld)", path, i, pg ? "backend PID" : "callgrind thread",
                       (long long)(pg ? conns[i].pid : conns[i].thread));
        free(path);
    }
    if (rc == 0)
        assert(out->nserving == nconns);
    return rc;
}
