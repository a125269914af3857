/* shared: the steps the subcommands share (see shared.h). */
#include "cli/shared.h"
#include "experiment/pinning.h"
#include "experiment/record.h"
#include "experiment/run.h"
#include "model/cells.h"
#include "model/precision.h"
#include "stats/sequential.h"
#include "util/fs.h"
#include "util/util.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

bool cli_help(int argc, char **argv, void (*usage)(void))
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "help") || !strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage();
            return true;
        }
    return false;
}

int cli_parse(struct opts *o, const struct opt_def *const *tables, int ntables, int argc,
              char **argv, const char *cmd)
{
    opts_init(o, tables, ntables);
    o->cmd = cmd;
    if (opts_parse(o, argc - 1, argv + 1) < 0)
        return -1;
    if (o->nargs)
        return error("unexpected argument '%s' (see `pgolab %s help`)", o->args[0], cmd);
    /* pgolab's own lists: an empty item or one given twice is a typo, and a thread count or
     * workload given twice would be counted twice in the averages */
    static const char *const lists[] = { "threads", "bench", "variants", "train", NULL };
    for (const char *const *l = lists; *l; l++)
        if (opt_list_check(o, *l) < 0)
            return -1;
    return cli_results_env(o);
}

int cli_results_env(struct opts *o)
{
    const char *env = getenv(STORE_ENV);
    if (!opt_known(o, "results") || opt_is_set(o, "results") || !env || !*env)
        return 0;
    return opts_set(o, "results", env);
}

int cli_fail_if_slower(const struct opts *o, double *pct)
{
    *pct = -1;
    if (!opt_is_set(o, "fail-if-slower"))
        return 0;
    *pct = opt_double(o, "fail-if-slower");
    if (!(*pct >= 0) || *pct >= 100)
        return error("invalid --fail-if-slower=%s (expected a percentage, 0 <= PCT < 100)",
                     opt_str(o, "fail-if-slower"));
    return 0;
}

int cli_target_ci(const struct opts *o, struct experiment_config *cfg)
{
    bool set = opt_is_set(o, "target-ci");
    if (!set) {
        if (opt_is_set(o, "max-rounds") || opt_is_set(o, "max-time"))
            return error("--max-rounds and --max-time cap --target-ci=PCT; without it, --rounds "
                         "sets the rounds");
        return 0;
    }
    double pct = opt_double(o, "target-ci");
    if (!(pct > 0) || pct >= 100)
        return error("invalid --target-ci=%s (expected the 95%% CI half-width to reach, in "
                     "percent: 0 < PCT < 100, e.g. 2)", opt_str(o, "target-ci"));
    if (opt_is_set(o, "rounds"))
        return error("--rounds and --target-ci together: with --target-ci the rounds go on until "
                     "the target is reached; cap them with --max-rounds=N");
    if (cfg->measure != MEASURE_TIME)
        return error("--target-ci needs --measure=time (instruction counts are deterministic: a "
                     "few rounds give tiny CIs)");
    int64_t cap =
        opt_is_set(o, "max-rounds") ? opt_int(o, "max-rounds") : TARGET_MAX_ROUNDS_DEFAULT;
    if (cap < STATS_CS_MIN_ROUNDS || cap > EXPERIMENT_ROUNDS_MAX)
        return error("invalid --max-rounds=%s (expected %d..100000: the sequential CI needs %d "
                     "rounds before it can stop)", opt_str(o, "max-rounds"), STATS_CS_MIN_ROUNDS,
                     STATS_CS_MIN_ROUNDS);
    double tmax = 0;
    if (opt_is_set(o, "max-time")) {
        tmax = (double)opt_int(o, "max-time");
        if (tmax < 1 || tmax > 30 * 86400.0)
            return error("invalid --max-time=%s (expected seconds of measurement, 1..2592000)",
                         opt_str(o, "max-time"));
    }
    cfg->target_ci = pct;
    cfg->rounds = (int)cap;
    cfg->max_time_s = tmax;
    cfg->cs_rounds = (int)(cap / 2 > TARGET_CS_ROUNDS_MIN ? cap / 2 : TARGET_CS_ROUNDS_MIN);
    return 0;
}

int cli_precision(const struct opts *o, struct experiment_config *cfg)
{
    const char *pl = opt_str(o, "cpu-placement");
    if (pl && cpu_placement_parse(pl, &cfg->placement) < 0)
        return -1;
    if (!opt_is_set(o, "cpu-placement"))
        cfg->placement.given = false;
    const char *m = opt_str(o, "target-metric");
    if (!m || !strcmp(m, "tps"))
        cfg->target_metric = METRIC_TPS;
    else if (!strcmp(m, "cpu"))
        cfg->target_metric = METRIC_CPU_US;
    else
        return error("invalid --target-metric=%s (expected tps or cpu)", m);
    if (opt_is_set(o, "target-metric") && cfg->target_ci <= 0)
        return error("--target-metric=%s needs --target-ci=PCT (the metric whose CI must reach "
                     "it)", m);
    if (cfg->target_metric == METRIC_CPU_US && cfg->no_metrics)
        return error("--target-metric=cpu needs the system metrics (CPU time per transaction "
                     "comes from them): drop --metrics=off");
    return 0;
}

/* c->found, and c->state from c->l */
static void calibration_state(struct cli_calibration *c)
{
    c->found = true;
    machine_state_of(&c->l.cfg, &c->l.res, &c->state);
    c->state.experiment_id = c->l.exp.id;
    c->state.created_at = c->l.exp.created_at;
}

int cli_calibration_for(struct store *store, struct experiment_loaded *l, struct cli_calibration *c)
{
    if (l->cfg.measure != MEASURE_TIME || !strcmp(l->exp.kind, "calibrate"))
        return 0;
    json_t *env = l->exp.environment_json ? json_loads(l->exp.environment_json, 0, NULL) : NULL;
    const char *host = json_string_value(json_object_get(env, "hostname"));
    int st = host ? machine_calibration_find(store, host, l->exp.id, &c->l) : 1;
    json_decref(env);
    if (st < 0)
        return -1;
    if (st == 0) {
        calibration_state(c);
        l->cfg.calibration = &c->state;
    }
    return 0;
}

int cli_calibration_apply(const struct opts *o, struct experiment_config *cfg, struct store *store,
                          struct cli_calibration *c)
{
    bool from = opt_known(o, "from-calibration") && opt_bool(o, "from-calibration");
    if (from && cfg->target_ci <= 0)
        return error("--from-calibration starts --target-ci=PCT from `pgolab calibrate`'s "
                     "recommendation: give --target-ci too");
    if (from && opt_is_set(o, "time"))
        return error("--from-calibration sets --time to the calibration's recommended run "
                     "length: leave --time out, or --from-calibration");
    if (cfg->measure != MEASURE_TIME)
        return 0;
    int st = machine_calibration_find(store, NULL, 0, &c->l);
    if (st < 0)
        return -1;
    if (st > 0) {
        if (from)
            return error("--from-calibration: no complete `pgolab calibrate` of this host in %s "
                         "(run pgolab calibrate --results=%s first)", store_path(store),
                         store_path(store));
        return 0;
    }
    calibration_state(c);
    cfg->calibration = &c->state;
    if (!from)
        return 0;
    struct machine_recommendation rec;
    machine_recommend(&c->l.cfg, &c->l.res, cfg->target_ci, &rec);
    if (!rec.ok)
        return error("--from-calibration: calibration %lld %s", (long long)c->l.exp.id, rec.why);
    cfg->time_s = rec.run_s;
    if (!opt_is_set(o, "max-rounds")) {
        cfg->rounds = rec.max_rounds < TARGET_CS_ROUNDS_MIN ? TARGET_CS_ROUNDS_MIN : rec.max_rounds;
        cfg->cs_rounds = cfg->rounds / 2 > TARGET_CS_ROUNDS_MIN ? cfg->rounds / 2
                                                               : TARGET_CS_ROUNDS_MIN;
    }
    if (!cfg->placement.given)
        cfg->placement = c->l.cfg.placement;
    fprintf(stderr, "from calibration %lld: --time=%g (about %d rounds to +/-%g%%, %.0f s of "
                    "measurement), --max-rounds=%d, CPU placement %s\n",
            (long long)c->l.exp.id, rec.run_s, rec.rounds, cfg->target_ci, rec.wall_s,
            cfg->rounds, cfg->placement.active ? "on" : "off");
    return 0;
}

void cli_calibration_release(struct cli_calibration *c)
{
    if (c->found)
        experiment_loaded_release(&c->l);
    memset(c, 0, sizeof(*c));
}

int cli_results_open_existing(const char *path, struct store **store)
{
    struct stat st;
    if (!path || !*path)
        return error("--results: empty path");
    if (stat(path, &st) < 0) {
        if (errno == ENOENT) {
            char *last = store_last_path();
            char *abs = abs_path(path);
            int rc;
            if (last && strcmp(last, abs) && access(last, F_OK) == 0)
                rc = error("no results file %s; experiments were last recorded in %s "
                           "(--results=%s, or set %s=%s once)",
                           path, last, last, STORE_ENV, last);
            else
                rc = error("no results file %s (pgolab compare, pgo and calibrate record their "
                           "experiments there; --results=FILE or %s=FILE names another)",
                           path, STORE_ENV);
            free(last);
            free(abs);
            return rc;
        }
        return error("results file %s: %s", path, strerror(errno));
    }
    /* SQLite would take an empty file for a new database and this read would write one */
    if (S_ISREG(st.st_mode) && st.st_size == 0)
        return error("results file %s: empty (0 bytes), not a pgolab results database (pgolab "
                     "compare, pgo and calibrate record their experiments in one)", path);
    return store_open_read(path, store);
}

int cli_threads(const struct opts *o, const char *example, struct experiment_config *cfg)
{
    int n = 0, rc = 0;
    char **list = opt_list(o, "threads", &n);
    if (n < 1) {
        rc = error("--threads needs at least one thread count, e.g. %s", example);
    } else {
        cfg->threads = xcalloc((size_t)n, sizeof(int));
        cfg->nthreads = n;
        rc = parse_thread_list(list, n, cfg->threads);
    }
    opt_list_free(list);
    return rc;
}

int cli_time_tables(const struct opts *o, struct experiment_config *cfg)
{
    int64_t time_s = opt_int(o, "time");
    int64_t ntables = opt_int(o, "tables"), size = opt_int(o, "table-size");
    if (time_s <= 0 || time_s > 86400 * 7)
        return error("invalid --time=%s (%s: seconds from 1 to %d, a week)", opt_str(o, "time"),
                     time_s <= 0 ? "too small" : "out of range", 86400 * 7);
    if (ntables < 1 || ntables > 100000)
        return error("invalid --tables=%s (%s: 1 to 100000)", opt_str(o, "tables"),
                     ntables < 1 ? "too small" : "out of range");
    if (size < 1 || size > INT_MAX)
        return error("invalid --table-size=%s (%s: 1 to %d rows)", opt_str(o, "table-size"),
                     size < 1 ? "too small" : "out of range", INT_MAX);
    cfg->time_s = (double)time_s;
    cfg->tables = (int)ntables;
    cfg->table_size = (int)size;
    return 0;
}

int cli_experiment_setup(const struct opts *o, struct experiment_config *cfg,
                         struct cli_experiment *x)
{
    if (opt_is_set(o, "rand-seed") && opt_int(o, "rand-seed") != 0) {
        cfg->seed = (uint64_t)opt_int(o, "rand-seed");
        x->bench_args[0] = xasprintf("--rand-seed=%lld", (long long)opt_int(o, "rand-seed"));
        cfg->bench_args = x->bench_args;
    } else {
        cfg->seed = now_ns() ^ ((uint64_t)getpid() << 32);
    }

    struct stat st;
    if (opt_str(o, "workdir")) {
        x->workdir = xstrdup(opt_str(o, "workdir"));
        x->made_workdir = stat(x->workdir, &st) < 0;
    } else if ((x->workdir = experiment_default_workdir())) {
        x->made_workdir = x->temp_workdir = true;
    } else {
        return -1;
    }
    cfg->workdir = x->workdir;
    x->pgolab = self_exe();
    cfg->pgolab = x->pgolab;
    cfg->progress = true;
    return store_open(opt_str(o, "results"), &x->store);
}

void cli_experiment_release(struct cli_experiment *x, bool ran)
{
    if ((ran && x->made_workdir) || x->temp_workdir)
        remove_tree(x->workdir);
    free(x->bench_args[0]);
    free(x->workdir);
    free(x->pgolab);
    store_close(x->store);
    memset(x, 0, sizeof(*x));
}
