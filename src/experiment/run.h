/* run: one run of an experiment and the data under it. A run starts from a fresh copy of the
 * workload's prepared data (a SQLite file, or a stopped managed server's datadir, copied with
 * cp -a), starts the variant's managed server on that copy when it has one (restarted for
 * every run, stopped cleanly after it), runs the child `pgolab bench ... --format=json run`
 * (two children under callgrind in instruction mode, src/experiment/callgrind.h), parses and
 * checks the child's report, records the run in the results store and appends it to the
 * result. This file also prepares a workload's template once, and holds the flag of the
 * signal that stops an experiment and the one-line message it stops with. The loop that
 * decides which run comes when is experiment.c's. Database files and datadirs live in
 * cfg->workdir and are removed as it goes; the logs stay there. */
#ifndef PGOLAB_EXPERIMENT_RUN_H
#define PGOLAB_EXPERIMENT_RUN_H

#include "model/model.h"
#include "server/server.h"
#include "store/store.h"
#include "util/argvec.h"
#include "util/signals.h"

/* Read a child's `bench run --format=json` report into r (tps, qps, latencies, counts; r->json
 * gets a copy of the text). Indices are left alone. -1 with a message if it is not one. */
int experiment_parse_run(const char *json, struct run_result *r);

/* Create the default directory for an experiment's databases and logs: a new private
 * /dev/shm/pgolab.XXXXXX when /dev/shm is writable (tmpfs, the seeds' "RAM disk"), else
 * ./.pgolab/run.XXXXXX (mkdtemp, then mode 0711: a managed server's user can pass through it).
 * Caller frees (and removes it); NULL with a message. */
char *experiment_default_workdir(void);

/* ---- for the engine's own files (src/experiment/) */

/* One experiment_run() in progress, as every run of it sees it: the experiment as defined
 * (plain data, the caller's) and the handles the engine runs it with. Made by
 * experiment_run() for the length of the call. */
struct experiment_engine {
    const struct experiment_config *cfg;
    /* The results store the runs are recorded in (with cfg->experiment_id > 0), or NULL:
     * nothing is recorded. The caller's; experiment_run() never closes it. */
    struct store *store;
};

/* Catch SIGINT, SIGTERM and SIGHUP into this file's flag until sig_restore(saved); the flag
 * starts as sig_caught() (a signal an enclosing catch took, such as pgo's), else 0. */
void run_catch_signals(struct sig_saved *saved);
/* Whether the runs' JSON reports stay in memory once recorded (see keep_run_json in model.h):
 * always without a store to record them in. */
bool run_keeps_json(const struct experiment_engine *en);
/* The signal caught since run_catch_signals(), or 0. */
int run_signal(void);
/* "SIGINT", "SIGTERM" or "a signal". */
const char *run_signal_name(int sig);

/* Record why the experiment stops, print it, return -1. */
int run_fail(struct experiment_result *res, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Last `lines` lines of a log file as one line ("a | b | c"); caller frees. */
char *run_log_tail(const char *path, int lines);

/* The start of a child's argv, a initialized here: [valgrind ... when cg_out] PGOLAB bench
 * TARGET --tables=T --table-size=N --threads=K, where TARGET is --sqlite-library=L
 * --sqlite-db=DB, or the client options of the variant's running server (srv), or of its
 * external server. cg_out: run the child under `valgrind --tool=callgrind` writing its
 * profile there (NULL: run it directly). The caller adds the rest (options, workload,
 * command). */
void run_child_argv(struct argvec *a, const struct experiment_config *cfg,
                    const struct variant *var, const char *db, const struct server *srv,
                    int threads, const char *cg_out);

/* Remove a variant's data at path (SQLite files, or a datadir tree). */
void run_remove_data(const struct variant *var, const char *path);

/* Prepare the workload's data once, with variant v's build, into template (a managed server:
 * its own datadir, with the server started for it and stopped after; an external server: in
 * place, after a cleanup). 0, or -1 after run_fail(). */
int run_prepare_template(const struct experiment_engine *en, struct experiment_result *res,
                         int w, int v, const char *template);

/* One child of a run: a fresh copy of the template at rundb (template NULL: rundb as the
 * previous run left it), then `pgolab bench ... run` with its JSON report into out, stderr
 * into log. Time mode: --time and a report every second. Instruction
 * mode (cg_out set): under callgrind, 1 thread, --events=events --time=0, and a fixed
 * --rand-seed unless the options give one, so every variant does the same work. ms (or NULL):
 * the system-metrics sampler (src/metrics/sampler.h) watches the child and the managed
 * server while it runs. Returns the child's exit status, or -2 after run_fail() when the
 * copy failed. */
struct metrics_sampler;
int run_child(const struct experiment_engine *en, struct experiment_result *res,
              const struct variant *var, const char *workload, int threads,
              const char *template, const char *rundb, const char *log,
              const char *cg_out, int events, struct strbuf *out, struct metrics_sampler *ms);

/* One run: child bench run on rundb (a fresh copy of template first unless template is NULL;
 * instruction mode always copies), parse, check, record in the store, append to res. 0, or
 * -1 after run_fail(). */
int run_once(const struct experiment_engine *en, struct experiment_result *res, int w,
             int t, int round, int v, const char *template, const char *rundb);

#endif
