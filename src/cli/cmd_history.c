/* cmd_history: `pgolab history [--results=FILE]`, one line per experiment recorded in the results
 * database (id, date, kind, status, variants, workloads, runs done/planned); owns only the CLI. */
#include "cli/cli.h"
#include "cli/shared.h"
#include "store/store.h"
#include "util/opts.h"
#include "util/strbuf.h"
#include "util/util.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const struct opt_def history_options[] = {
    { "results", OPT_STRING, STORE_DEFAULT_PATH, "results database to list" },
    OPT_END,
};

static void history_usage(void)
{
    printf("Usage: pgolab history [--results=FILE]\n"
           "\n"
           "Lists the experiments recorded in the results database, oldest first: id, start\n"
           "date (local time), kind (compare, pgo, calibrate), status (running, complete,\n"
           "interrupted, failed), variants, workloads and runs recorded / planned (\"<=\": at\n"
           "most, --target-ci stops when the target is reached).\n"
           "`pgolab report --experiment=ID` prints one; `pgolab compare --resume=ID` (or\n"
           "`pgolab pgo sqlite --resume=ID`) continues an interrupted one.\n"
           "\n"
           "Options:\n");
    opts_print_help(history_options);
}

/* One listed experiment, as text columns. */
struct row {
    char *col[7];
};

struct listing {
    struct row *rows;
    int n;
};

/* Runs planned by the settings (variants x workloads x threads x rounds), or -1 if unknown;
 * *cap = 1 when the rounds are --target-ci's cap (the experiment may stop before). */
static long long planned_runs(const char *settings_json, int *cap)
{
    json_t *s = settings_json ? json_loads(settings_json, 0, NULL) : NULL;
    json_t *r = json_object_get(s, "rounds");
    long long n = -1;
    *cap = json_is_object(json_object_get(s, "target_ci"));
    if (json_is_array(json_object_get(s, "variants")) &&
        json_is_array(json_object_get(s, "workloads")) &&
        json_is_array(json_object_get(s, "threads")) && json_is_integer(r))
        n = (long long)json_array_size(json_object_get(s, "variants")) *
            (long long)json_array_size(json_object_get(s, "workloads")) *
            (long long)json_array_size(json_object_get(s, "threads")) * json_integer_value(r);
    json_decref(s);
    return n;
}

static char *workloads_of(const char *settings_json)
{
    json_t *s = settings_json ? json_loads(settings_json, 0, NULL) : NULL;
    json_t *a = json_object_get(s, "workloads");
    struct strbuf sb = STRBUF_INIT;
    for (size_t i = 0; i < json_array_size(a); i++) {
        const char *w = json_string_value(json_array_get(a, i));
        strbuf_addf(&sb, "%s%s", i ? "," : "", w ? w : "?");
    }
    if (!sb.len)
        strbuf_addstr(&sb, "-");
    json_decref(s);
    return strbuf_detach(&sb);
}

static int list_cb(const struct store_experiment *e, void *ctx)
{
    struct listing *l = ctx;
    struct strbuf sb = STRBUF_INIT;
    char date[64];
    struct tm tm;
    /* a damaged database's time may be no time (NaN, 1e248: no time_t; see fmt.h iso_time) */
    time_t t = e->created_at >= 0 && e->created_at < 253402300800.0 ? (time_t)e->created_at : -1;
    if (t >= 0 && localtime_r(&t, &tm))
        strftime(date, sizeof(date), "%Y-%m-%d %H:%M", &tm);
    else
        snprintf(date, sizeof(date), "unknown");

    l->rows = xrealloc(l->rows, sizeof(*l->rows) * (size_t)(l->n + 1));
    struct row *r = &l->rows[l->n++];
    r->col[0] = xasprintf("%lld", (long long)e->id);
    r->col[1] = xstrdup(date);
    r->col[2] = xstrdup(e->kind);
    r->col[3] = xstrdup(e->status);
    for (int v = 0; v < e->nvariants; v++)
        strbuf_addf(&sb, "%s%s", v ? "," : "", e->variants[v].name);
    r->col[4] = strbuf_detach(&sb);
    r->col[5] = workloads_of(e->settings_json);
    int cap;
    long long planned = planned_runs(e->settings_json, &cap);
    if (planned >= 0)
        r->col[6] = xasprintf("%lld/%s%lld", (long long)e->nruns, cap ? "<=" : "", planned);
    else
        r->col[6] = xasprintf("%lld/?", (long long)e->nruns);
    return 0;
}

int cmd_history(int argc, char **argv)
{
    static const char *const head[7] = { "id", "started", "kind", "status",
                                          "variants", "workloads", "runs" };
    const struct opt_def *tables[] = { history_options };
    struct listing l = { NULL, 0 };
    struct store *store = NULL;
    struct opts o;
    int rc = 1;

    if (cli_help(argc, argv, history_usage))
        return 0;
    if (cli_parse(&o, tables, 1, argc, argv, "history") < 0)
        goto out;
    const char *path = opt_str(&o, "results");
    if (cli_results_open_existing(path, &store) < 0 ||
        store_experiments_list(store, list_cb, &l) < 0)
        goto out;
    if (!l.n) {
        printf("no experiments in %s\n", path);
        rc = 0;
        goto out;
    }
    size_t w[7];
    for (int c = 0; c < 7; c++) {
        w[c] = strlen(head[c]);
        for (int i = 0; i < l.n; i++)
            if (strlen(l.rows[i].col[c]) > w[c])
                w[c] = strlen(l.rows[i].col[c]);
    }
    for (int i = -1; i < l.n; i++) {
        struct strbuf line = STRBUF_INIT;
        for (int c = 0; c < 7; c++) {
            const char *s = i < 0 ? head[c] : l.rows[i].col[c];
            if (c == 0) /* ids right-aligned */
                strbuf_addf(&line, "%*s", (int)w[c], s);
            else
                strbuf_addf(&line, "  %-*s", c == 6 ? 0 : (int)w[c], s);
        }
        strbuf_rtrim(&line);
        printf("%s\n", line.buf);
        strbuf_release(&line);
    }
    rc = 0;
out:
    for (int i = 0; i < l.n; i++)
        for (int c = 0; c < 7; c++)
            free(l.rows[i].col[c]);
    free(l.rows);
    store_close(store);
    opts_release(&o);
    return rc;
}
