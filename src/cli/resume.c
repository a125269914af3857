/* resume: the recorded settings of an experiment as its command's options (see resume.h). */
#include "cli/resume.h"
#include "cli/shared.h"
#include "experiment/record.h"
#include "store/store.h"
#include "util/fs.h"
#include "util/strbuf.h"
#include "util/util.h"

#include <assert.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void add(struct resume_options *ro, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void add(struct resume_options *ro, const char *name, const char *fmt, ...)
{
    va_list ap;
    struct strbuf sb = STRBUF_INIT;
    va_start(ap, fmt);
    strbuf_vaddf(&sb, fmt, ap);
    va_end(ap);
    ro->names = xrealloc(ro->names, sizeof(char *) * (size_t)(ro->n + 1));
    ro->values = xrealloc(ro->values, sizeof(char *) * (size_t)(ro->n + 1));
    ro->names[ro->n] = xstrdup(name);
    ro->values[ro->n] = strbuf_detach(&sb);
    ro->n++;
}

void resume_options_release(struct resume_options *ro)
{
    for (int i = 0; i < ro->n; i++) {
        free(ro->names[i]);
        free(ro->values[i]);
    }
    free(ro->names);
    free(ro->values);
    memset(ro, 0, sizeof(*ro));
}

/* A JSON array of strings or integers as "a,b,c" (NULL when key is not a non-empty array). */
static char *join_array(json_t *a)
{
    if (!json_is_array(a) || json_array_size(a) == 0)
        return NULL;
    struct strbuf sb = STRBUF_INIT;
    strbuf_init(&sb, 0);
    for (size_t i = 0; i < json_array_size(a); i++) {
        json_t *x = json_array_get(a, i);
        if (i)
            strbuf_addch(&sb, ',');
        if (json_is_integer(x))
            strbuf_addf(&sb, "%lld", (long long)json_integer_value(x));
        else
            strbuf_addstr(&sb, json_string_value(x) ? json_string_value(x) : "");
    }
    return strbuf_detach(&sb);
}

/* key (a JSON array) of set as the list option name. */
static void add_list(struct resume_options *ro, json_t *set, const char *key, const char *name)
{
    char *v = join_array(json_object_get(set, key));
    if (v)
        add(ro, name, "%s", v);
    free(v);
}

/* key (a JSON number) of set as option name: an integer when it is one. */
static void add_number(struct resume_options *ro, json_t *set, const char *key, const char *name)
{
    json_t *x = json_object_get(set, key);
    if (json_is_integer(x))
        add(ro, name, "%lld", (long long)json_integer_value(x));
    else if (json_is_real(x))
        add(ro, name, "%.15g", json_real_value(x));
}

/* --variant NAME=KIND:WHAT of every recorded variant, in order (compare). */
static void add_variants(struct resume_options *ro, json_t *set)
{
    json_t *names = json_object_get(set, "variants");
    for (size_t i = 0; i < json_array_size(names); i++) {
        const char *name = json_string_value(json_array_get(names, i));
        if (!name)
            continue;
        char *key = xasprintf("variant.%s", name);
        json_t *v = json_object_get(set, key);
        free(key);
        const char *lib = json_string_value(json_object_get(v, "library"));
        const char *drv = json_string_value(json_object_get(v, "driver"));
        if (!lib)
            continue;
        if (drv && strstr(lib, "://")) /* a running server: its library is KIND://HOST:PORT */
            add(ro, "variant", "%s=%s", name, lib);
        else
            add(ro, "variant", "%s=%s:%s", name, drv ? drv : "sqlite", lib);
        json_t *so = json_object_get(v, "server_options");
        for (size_t k = 0; k < json_array_size(so); k++)
            if (json_string_value(json_array_get(so, k)))
                add(ro, "variant-server-option", "%s:%s", name,
                    json_string_value(json_array_get(so, k)));
    }
}

int resume_options_from_settings(const char *settings, const char *kind,
                                 struct resume_options *out)
{
    json_t *set = settings ? json_loads(settings, 0, NULL) : NULL;
    if (!json_is_object(set)) {
        json_decref(set);
        return -1;
    }
    bool compare = kind && !strcmp(kind, "compare");
    if (compare)
        add_variants(out, set);
    json_t *a = json_object_get(set, "server_options");
    for (size_t i = 0; compare && i < json_array_size(a); i++)
        if (json_string_value(json_array_get(a, i)))
            add(out, "server-option", "%s", json_string_value(json_array_get(a, i)));
    add_list(out, set, "workloads", "bench");
    add_list(out, set, "threads", "threads");
    json_t *tci = json_object_get(set, "target_ci");
    if (json_is_object(tci)) { /* rounds is then the cap */
        add_number(out, tci, "pct", "target-ci");
        add_number(out, set, "rounds", "max-rounds");
        add_number(out, tci, "max_time_s", "max-time");
        const char *metric = json_string_value(json_object_get(tci, "metric"));
        if (compare)
            add(out, "target-metric", "%s", metric ? metric : "tps");
    } else {
        add_number(out, set, "rounds", "rounds");
    }
    add_number(out, set, "time_s", "time");
    add_number(out, set, "tables", "tables");
    add_number(out, set, "table_size", "table-size");
    if (compare) {
        const char *reset = json_string_value(json_object_get(set, "reset"));
        add(out, "reset", "%s", reset ? reset : "run");
        json_t *wr = json_object_get(set, "warmup_runs");
        add(out, "warmup-runs", "%lld",
            json_is_integer(wr) ? (long long)json_integer_value(wr) : 0LL);
        const char *clients = json_string_value(json_object_get(set, "clients"));
        if (clients)
            add(out, "clients", "%s", clients);
    }
    const char *measure = json_string_value(json_object_get(set, "measure"));
    add(out, "measure", "%s", measure ? measure : "time");
    add_number(out, set, "events", "events");
    a = json_object_get(set, "bench_args"); /* compare: --rand-seed=N, also every child's */
    for (size_t i = 0; compare && i < json_array_size(a); i++) {
        const char *b = json_string_value(json_array_get(a, i));
        if (b && !strncmp(b, "--rand-seed=", 12))
            add(out, "rand-seed", "%s", b + 12);
    }
    json_t *pgo = json_object_get(set, "pgo");
    if (!compare && json_is_object(pgo)) {
        add_list(out, pgo, "train", "train");
        add_number(out, pgo, "train_time", "train-time");
        add_number(out, pgo, "train_threads", "train-threads");
        const char *gate = json_string_value(json_object_get(pgo, "gate"));
        if (gate)
            add(out, "gate", "%s", gate);
    }
    json_decref(set);
    return 0;
}

/* Items of a comma-separated list, spaces around them removed (caller frees the list). */
static char **items(const char *s, int *n)
{
    char **list = split_list(s, n);
    for (int i = 0; i < *n; i++) {
        char *b = list[i], *e = b + strlen(b);
        while (*b == ' ' || *b == '\t')
            b++;
        while (e > b && (e[-1] == ' ' || e[-1] == '\t'))
            e--;
        memmove(list[i], b, (size_t)(e - b));
        list[i][e - b] = '\0';
    }
    return list;
}

/* Two words as numbers when both are, else as text. */
static bool same_word(const char *a, const char *b)
{
    double x, y;
    if (parse_double(a, &x) == 0 && parse_double(b, &y) == 0)
        return x == y;
    return !strcmp(a, b);
}

bool resume_same_value(enum opt_type type, const char *given, const char *recorded)
{
    assert(given && recorded);
    switch (type) {
    case OPT_BOOL:
        return parse_bool(given) == parse_bool(recorded);
    case OPT_INT:
    case OPT_DOUBLE:
        return same_word(given, recorded);
    case OPT_LIST: {
        int na, nb;
        char **a = items(given, &na), **b = items(recorded, &nb);
        bool same = na == nb;
        for (int i = 0; same && i < na; i++)
            same = same_word(a[i], b[i]);
        opt_list_free(a);
        opt_list_free(b);
        return same;
    }
    default:
        return !strcmp(given, recorded);
    }
}

/* The definition of a registered option (NULL when o has none by that name). */
static const struct opt_def *def_of(const struct opts *o, const char *name)
{
    for (int i = 0; i < o->nvalues; i++)
        if (!strcmp(o->values[i].def->name, name))
            return o->values[i].def;
    return NULL;
}

/* values[0..n) as the option text: "--name=V", or (repeated) "--name V1 --name V2". */
static char *option_text(const char *name, const char *const *values, int n, bool multi)
{
    struct strbuf sb = STRBUF_INIT;
    strbuf_init(&sb, 0);
    for (int i = 0; i < n; i++)
        strbuf_addf(&sb, "%s--%s%s%s", i ? " " : "", name, multi ? " " : "=", values[i]);
    return strbuf_detach(&sb);
}

/* Check (given) or fill (not given) option name of o from ro. -1 after a message. */
static int apply(struct opts *o, const struct resume_options *ro, const char *name,
                 long long id)
{
    const struct opt_def *def = def_of(o, name);
    if (!def)
        return 0; /* not an option of this command */
    bool multi = def->type == OPT_MULTI;
    const char **rec = xcalloc((size_t)ro->n + 1, sizeof(char *));
    int nrec = 0, rc = 0;
    for (int i = 0; i < ro->n; i++)
        if (!strcmp(ro->names[i], name))
            rec[nrec++] = ro->values[i];
    assert(nrec >= 1 && (multi || nrec == 1));
    if (opt_is_set(o, name)) {
        int ngiven = 1;
        const char *one[1] = { opt_str(o, name) };
        if (!strcmp(name, "measure") && parse_bool(one[0]) == 1)
            one[0] = "time"; /* pgo's --measure=on */
        const char *const *given = multi ? opt_multi(o, name, &ngiven) : one;
        bool same = ngiven == nrec;
        for (int i = 0; same && i < nrec; i++)
            same = multi ? !strcmp(given[i], rec[i])
                         : resume_same_value(def->type, given[i], rec[i]);
        if (!same) {
            char *g = option_text(name, given, ngiven, multi);
            char *r = option_text(name, rec, nrec, multi);
            rc = error("cannot resume experiment %lld: %s differs from its recorded %s (leave "
                       "--%s out to continue with the recorded settings)", id, g, r, name);
            free(g);
            free(r);
        }
    } else {
        for (int i = 0; i < nrec && rc == 0; i++)
            if (opts_set(o, name, rec[i]) < 0)
                rc = error("cannot resume experiment %lld: its recorded --%s=%s is not a valid "
                           "value; give the options it started with", id, name, rec[i]);
    }
    free(rec);
    return rc;
}

/* Options that are settings but recorded only when given: given now and absent from ro, they
 * would change the experiment. -1 after a message. */
static int refuse_unrecorded(const struct opts *o, const struct resume_options *ro,
                             const char *cmd, long long id)
{
    static const char *const only_when_given[] = { "server-option", "variant-server-option",
                                                   "target-ci", "max-rounds",
                                                   "max-time", "clients", "rand-seed" };
    for (size_t k = 0; k < ARRAY_SIZE(only_when_given); k++) {
        const char *name = only_when_given[k];
        bool recorded = false;
        for (int i = 0; i < ro->n && !recorded; i++)
            recorded = !strcmp(ro->names[i], name);
        /* pgo's --rand-seed is not a setting (the seed is stored apart, and a resume keeps
         * it) */
        if (!strcmp(name, "rand-seed") && strcmp(cmd, "compare"))
            continue;
        if (!recorded && def_of(o, name) && opt_is_set(o, name))
            return error("cannot resume experiment %lld: --%s=%s differs from its recorded "
                         "settings, which have no --%s (leave --%s out to continue with the "
                         "recorded settings)", id, name, opt_str(o, name), name, name);
    }
    return 0;
}

/* The newest pgo experiment of the store that did not complete (0: none). */
static int newest_unfinished(const struct store_experiment *e, void *ctx)
{
    int64_t *id = ctx;
    if (!strcmp(e->kind, "pgo") && strcmp(e->status, "complete"))
        *id = e->id;
    return 0;
}

/* pgo's bare --resume: the newest unfinished pgo experiment of --results, as --resume=ID (so
 * its recorded settings are taken like those of a given ID). None, or no results file yet:
 * left as it is (the pipeline says so and starts a new one). 0 or -1. */
static int resolve_newest(struct opts *o)
{
    const char *path = opt_str(o, "results");
    struct store *s;
    if (!path || file_size(path) < 0)
        return 0;
    if (cli_results_open_existing(path, &s) < 0)
        return -1;
    int64_t id = 0;
    int rc = store_experiments_list(s, newest_unfinished, &id);
    store_close(s);
    if (rc < 0 || !id)
        return rc;
    char num[32];
    snprintf(num, sizeof(num), "%lld", (long long)id);
    fprintf(stderr, "--resume: experiment %s, the newest unfinished pgo experiment in %s\n", num,
            path);
    return opts_set(o, "resume", num);
}

int cli_resume_settings(struct opts *o, const char *cmd)
{
    const char *r = opt_is_set(o, "resume") ? opt_str(o, "resume") : NULL;
    int64_t id;
    if (r && !strcmp(r, "on") && !strcmp(cmd, "pgo")) {
        if (resolve_newest(o) < 0)
            return -1;
        r = opt_str(o, "resume");
    }
    if (!r || parse_int64(r, &id) < 0 || id < 1)
        return 0; /* none, pgo's bare --resume, or bad (the command says so) */
    struct store *s;
    if (cli_results_open_existing(opt_str(o, "results"), &s) < 0)
        return -1;
    struct store_experiment e;
    struct resume_options ro;
    memset(&ro, 0, sizeof(ro));
    int rc = -1;
    if (experiment_lookup(s, id, &e) < 0) {
        store_close(s);
        return -1;
    }
    if (!strcmp(e.status, "complete"))
        error("experiment %lld is complete; nothing to resume", (long long)id);
    else if (strcmp(e.kind, cmd))
        error("experiment %lld was recorded by `pgolab %s`, not `pgolab %s`; resume it with "
              "`pgolab %s%s --resume=%lld`", (long long)id, e.kind, cmd, e.kind,
              !strcmp(e.kind, "pgo") ? " TARGET" : "", (long long)id);
    else if (resume_options_from_settings(e.settings_json, cmd, &ro) < 0) {
        warning("experiment %lld: its recorded settings are unreadable; the options given are "
                "taken as they are", (long long)id);
        rc = 0;
    } else {
        rc = refuse_unrecorded(o, &ro, cmd, (long long)id);
    }
    /* each option once, in the order recorded */
    for (int i = 0; rc == 0 && i < ro.n; i++) {
        bool first = true;
        for (int j = 0; j < i && first; j++)
            first = strcmp(ro.names[j], ro.names[i]) != 0;
        if (first)
            rc = apply(o, &ro, ro.names[i], (long long)id);
    }
    resume_options_release(&ro);
    store_experiment_release(&e);
    store_close(s);
    return rc;
}
