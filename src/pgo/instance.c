/* instance: a server of one of the pipeline's builds, started by src/server on a private
 * datadir for training, the gate or the suite, and the `pgolab bench` children run against
 * it; a trainer's workloads on such a server (pgo_train_server(): training and BOLT's). The
 * server is stopped by the caller with server_stop(): a clean shutdown, which is what makes
 * an instrumented server write its profile data. */
#include "pgo/stages.h"
#include "server/server.h"
#include "util/fs.h"
#include "util/progress.h"
#include "util/strbuf.h"
#include "util/subprocess.h"
#include "util/util.h"

#include <stdlib.h>
#include <string.h>

#define LOG_TAIL_LINES 15
#define BENCH_TIMEOUT_SLACK_S 600.0  /* prepare of big tables, verify: generous, but bounded */

int pgo_server_start(struct pgo_pipeline *p, const char *prefix, const char *datadir,
                     char **options, const char *save_log, struct server *s)
{
    int n = 0;
    while (options && options[n])
        n++;
    bool binary = is_file(prefix); /* the official variant's server binary */
    struct server_config cfg = {
        .kind = p->recipe.server_kind,
        .prefix = binary ? NULL : prefix,
        .server = binary ? prefix : NULL,
        .datadir = datadir,
        .options = options,
        .noptions = n,
        .stop_with_parent = true,
        .start_timeout_s = 120,
        .save_log = save_log,
    };
    return server_start(s, &cfg);
}

int pgo_bench(struct pgo_pipeline *p, const struct server *s, const char *const *args,
              const char *log, struct strbuf *out)
{
    struct argvec argv = ARGVEC_INIT, env = ARGVEC_INIT;
    argvec_push(&argv, p->pgolab);
    argvec_push(&argv, "bench");
    server_client_args(s, &argv);
    argvec_pushf(&argv, "--tables=%d", p->rq->tables);
    argvec_pushf(&argv, "--table-size=%d", p->rq->table_size);
    argvec_pushv(&argv, args);
    server_client_env(s, &env);
    char *cmd = subprocess_argv_str(argvec_argv(&argv));
    char *line = xasprintf("$ %s\n", cmd);
    file_append(log, line);
    free(line);
    double limit = BENCH_TIMEOUT_SLACK_S + p->rq->train_time * 2.0 + p->rq->time_s * 2.0;
    struct subprocess sp = { .argv = argvec_argv(&argv), .env = env.n ? argvec_argv(&env) : NULL,
                             .log_path = log, .out = out, .timeout_s = limit,
                             .stop = p->interrupted };
    int st = subprocess_run(&sp);
    int rc = 0;
    if (st != 0) {
        if (st > 0 && !*p->interrupted) {
            char *tail = file_tail(log, LOG_TAIL_LINES);
            error("%s failed (exit %d)\n--- last lines of %s ---\n%s", cmd, st, log, tail);
            free(tail);
        }
        rc = -1;
    }
    free(cmd);
    argvec_clear(&argv);
    argvec_clear(&env);
    return rc;
}

#define TRAIN_STOP_TIMEOUT_S 300.0 /* an instrumented server writing its profile takes a while */

/* The trainer's workloads (or the suite) against a started instrumented server. */
static int train_on(struct pgo_pipeline *p, struct pgo_trainer *t, const struct server *s,
                    const char *log)
{
    if (t->suite)
        return 0; /* the suite starts its own server: see pgo_train */
    char *first = t->workloads[0];
    const char *prep[] = { "--threads=1", first, "prepare", NULL };
    if (pgo_bench(p, s, prep, log, NULL) < 0)
        return -1;
    int n = 0;
    while (t->workloads[n])
        n++;
    for (int i = 0; i < n && !*p->interrupted; i++) {
        char *time = xasprintf("--time=%d", p->rq->train_time);
        char *threads = xasprintf("--threads=%d", p->rq->train_threads);
        const char *run[] = { time, threads, t->workloads[i], "run", NULL };
        progress("training %s: %s %d/%d, %d s, %d threads", t->name, t->workloads[i], i + 1, n,
                 p->rq->train_time, p->rq->train_threads);
        int rc = pgo_bench(p, s, run, log, NULL);
        free(time);
        free(threads);
        if (rc < 0)
            return -1;
    }
    progress_done();
    return 0;
}

int pgo_train_server(struct pgo_pipeline *p, struct pgo_trainer *t, const char *prefix,
                     const char *log)
{
    struct server s;
    char *server_log = xasprintf("%s.server", log);
    progress("training %s: starting the instrumented server", t->name);
    int started = pgo_server_start(p, prefix, NULL, p->recipe.train_options, server_log, &s);
    free(server_log);
    if (started < 0)
        return -1;
    int trc = train_on(p, t, &s, log);
    /* a clean shutdown writes the profile, also after a failed trainer */
    progress("training %s: clean shutdown (writes the profile)", t->name);
    int src = server_stop(&s, TRAIN_STOP_TIMEOUT_S);
    progress_done();
    server_release(&s);
    if (*p->interrupted)
        return -1;
    /* the cause only: pgo_train's next line names the lost profile and how to go on */
    if (trc < 0 && src < 0)
        return error("training %s: the instrumented server died during the training (its log "
                     "is %s.server)", t->name, log);
    if (trc < 0)
        return -1;
    if (src < 0)
        return error("training %s: the instrumented server %s/%s did not shut down cleanly, "
                     "so its profile data may be incomplete", t->name, prefix,
                     p->recipe.server_binary);
    return 0;
}
