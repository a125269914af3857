/* suite: the recipe's regression suite (PostgreSQL `make installcheck`, a mysql-test-run
 * subset) run against one build of a server target. The correctness gate (gate.c) runs it on
 * every pgo build and BOLT variant; the trainer "suite" (train.c) runs it on the instrumented
 * build. Owns no state: the server it starts is stopped before it returns. */
#include "pgo/stages.h"
#include "server/server.h"
#include "util/fs.h"
#include "util/strbuf.h"
#include "util/subprocess.h"
#include "util/util.h"

#include <stdlib.h>
#include <string.h>

#define LOG_TAIL_LINES 25
#define STOP_TIMEOUT_S 120.0
#define SUITE_TIMEOUT_S 3600.0

int pgo_run_suite(struct pgo_pipeline *p, const struct pgo_build *b, char **options,
                  const char *log)
{
    const char *prefix = b->prefix;
    struct server s;
    if (p->recipe.nsuite == 0)
        return error("the %s recipe has no \"suite\" (the regression tests): use --gate=checksum "
                     "and a workload trainer", p->recipe.name);
    bool own = p->recipe.suite_own_server; /* the suite starts the build's servers */
    memset(&s, 0, sizeof(s));
    char *server_log = xasprintf("%s.server", log);
    int started = own ? 0 : pgo_server_start(p, prefix, NULL, options, server_log, &s);
    free(server_log);
    if (started < 0)
        return -1;
    char *line = own ? xasprintf("# suite: %s (it starts the build's own servers)\n", b->name)
                     : xasprintf("# suite: %s (pid %d) on %s\n", s.binary, (int)s.pid, s.datadir);
    int rc = file_append(log, line);
    free(line);
    for (int i = 0; i < p->recipe.nsuite && rc == 0 && !*p->interrupted; i++) {
        const struct recipe_step *st = &p->recipe.suite[i];
        struct recipe_vars v;
        pgo_build_vars(p, b, &v);
        if (!own) {
            v.host = s.host;
            v.port = s.port;
            v.socket = s.socket;
            v.socket_dir = s.socket_dir;
            v.user = s.kind == SERVER_PGSQL ? "postgres" : "root";
            v.db = s.db;
        }
        struct argvec argv = ARGVEC_INIT, env = ARGVEC_INIT;
        char *cwd = NULL;
        recipe_expand_step(st, &v, &argv, &env, &cwd);
        char *cmd = subprocess_argv_str(argvec_argv(&argv));
        char *line = xasprintf("$ cd %s && %s\n", cwd, cmd);
        file_append(log, line);
        free(line);
        struct subprocess sp = { .argv = argvec_argv(&argv), .cwd = cwd,
                                 .env = env.n ? argvec_argv(&env) : NULL, .log_path = log,
                                 .timeout_s = SUITE_TIMEOUT_S, .stop = p->interrupted };
        int status = subprocess_run(&sp);
        if (status != 0 && !*p->interrupted) {
            char *tail = file_tail(log, LOG_TAIL_LINES);
            rc = error("regression suite failed: step %s (exit %d): %s\n--- last lines of %s "
                       "---\n%s", st->name, status, cmd, log, tail);
            free(tail);
        } else if (status != 0) {
            rc = -1;
        }
        free(cmd);
        free(cwd);
        argvec_clear(&argv);
        argvec_clear(&env);
    }
    if (own)
        return rc;
    if (server_stop(&s, STOP_TIMEOUT_S) < 0 && rc == 0)
        rc = error("the server of %s did not stop cleanly after the regression suite", prefix);
    server_release(&s);
    return rc;
}
