/* profile_diff: `pgolab report --profile` in markdown, CSV and JSON (see profile_diff.h); the text
 * form is profile/side.c's side-by-side. */
#include "report/profile_diff.h"

#include "model/profiles.h"
#include "report/text_table.h"
#include "util/fmt.h"
#include "util/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct ctx {
    struct strbuf *out;
    enum report_format fmt;
    int top;
    json_t *pairs;  /* JSON: one object per pair */
};

/* ---- CSV */

static const char *const csv_head =
    "workload,threads,baseline,variant,event,kind,name,dso,"
    "baseline_pct,baseline_min_pct,baseline_max_pct,baseline_rank,baseline_unstable,"
    "variant_pct,variant_min_pct,variant_max_pct,variant_rank,variant_unstable,"
    "change_points,within_noise,baseline_per_txn,variant_per_txn\n";

static void csv_share(struct strbuf *sb, const struct profile_share *s)
{
    report_csv_num(sb, s->share);
    report_csv_num(sb, s->present ? s->min : NAN);
    report_csv_num(sb, s->present ? s->max : NAN);
    report_csv_num(sb, s->present ? s->rank : NAN);
    strbuf_addstr(sb, s->present ? (s->unstable ? ",1" : ",0") : ",");
}

static void csv_rows(struct ctx *c, const char *workload, int threads, const char *va,
                     const char *vb, const struct profile_diff *d, bool dsos)
{
    const struct profile_diff_row *rows = dsos ? d->dsos : d->fns;
    int n = dsos ? d->ndsos : d->nfns;
    for (int i = 0; i < n; i++) {
        const struct profile_diff_row *r = &rows[i];
        struct strbuf *sb = c->out;
        report_csv_field(sb, workload);
        strbuf_addf(sb, ",%d,", threads);
        report_csv_field(sb, va);
        strbuf_addch(sb, ',');
        report_csv_field(sb, vb);
        strbuf_addch(sb, ',');
        report_csv_field(sb, d->event);
        strbuf_addstr(sb, dsos ? ",dso," : ",function,");
        report_csv_field(sb, r->name);
        strbuf_addch(sb, ',');
        report_csv_field(sb, r->dso);
        csv_share(sb, &r->a);
        csv_share(sb, &r->b);
        report_csv_num(sb, r->change);
        strbuf_addstr(sb, d->nruns_a >= 2 && d->nruns_b >= 2 ? (r->within_noise ? ",1" : ",0")
                                                             : ",");
        report_csv_num(sb, r->a.present ? r->a.per_txn : NAN);
        report_csv_num(sb, r->b.present ? r->b.per_txn : NAN);
        strbuf_addch(sb, '\n');
    }
}

/* ---- JSON */

static json_t *share_json(const struct profile_share *s)
{
    json_t *o = json_object();
    json_object_set_new(o, "present", json_boolean(s->present));
    json_object_set_new(o, "pct", jreal(s->share));
    json_object_set_new(o, "min_pct", s->present ? jreal(s->min) : json_null());
    json_object_set_new(o, "max_pct", s->present ? jreal(s->max) : json_null());
    json_object_set_new(o, "rank", s->present ? json_integer(s->rank) : json_null());
    json_object_set_new(o, "unstable", json_boolean(s->unstable));
    json_object_set_new(o, "per_txn", jreal(s->present ? s->per_txn : NAN));
    return o;
}

static json_t *rows_json(const struct profile_diff_row *rows, int n, bool judged)
{
    json_t *a = json_array();
    for (int i = 0; i < n; i++) {
        json_t *o = json_object();
        json_object_set_new(o, "name", jstr(rows[i].name));
        json_object_set_new(o, "dso", jstr(rows[i].dso));
        json_object_set_new(o, "baseline", share_json(&rows[i].a));
        json_object_set_new(o, "variant", share_json(&rows[i].b));
        json_object_set_new(o, "change_points", jreal(rows[i].change));
        json_object_set_new(o, "within_noise",
                            judged ? json_boolean(rows[i].within_noise) : json_null());
        json_array_append_new(a, o);
    }
    return a;
}

static json_t *pair_json(const char *workload, int threads, const char *va, const char *vb,
                         const struct profile_diff *d)
{
    bool judged = d->nruns_a >= 2 && d->nruns_b >= 2;
    json_t *o = json_object();
    json_object_set_new(o, "workload", jstr(workload));
    json_object_set_new(o, "threads", json_integer(threads));
    json_object_set_new(o, "baseline", jstr(va));
    json_object_set_new(o, "variant", jstr(vb));
    json_object_set_new(o, "event", jstr(d->event));
    json_object_set_new(o, "frequency_hz", json_integer(d->frequency));
    json_object_set_new(o, "kernel", json_boolean(d->kernel));
    json_t *rounds = json_object(), *samples = json_object();
    json_object_set_new(rounds, "baseline", json_integer(d->nruns_a));
    json_object_set_new(rounds, "variant", json_integer(d->nruns_b));
    json_object_set_new(samples, "baseline", json_integer((json_int_t)d->samples_a));
    json_object_set_new(samples, "variant", json_integer((json_int_t)d->samples_b));
    json_object_set_new(o, "rounds", rounds);
    json_object_set_new(o, "samples", samples);
    json_object_set_new(o, "dsos", rows_json(d->dsos, d->ndsos, judged));
    json_object_set_new(o, "functions", rows_json(d->fns, d->nfns, judged));
    return o;
}

/* ---- markdown */

static char *md_share(const struct profile_share *s)
{
    if (!s->present)
        return xstrdup("(absent)");
    return xasprintf("%.3f [%.3f-%.3f]%s", s->share, s->min, s->max, s->unstable ? " !" : "");
}

/* Markdown cells must not hold a "|": C++ names (operator|) are escaped. */
static char *md_text(const char *fmt_dso, const char *name, const char *dso)
{
    char *raw = fmt_dso ? xasprintf(fmt_dso, name, dso) : xstrdup(name);
    struct strbuf sb = STRBUF_INIT;
    for (const char *p = raw; *p; p++) {
        if (*p == '|')
            strbuf_addch(&sb, '\\');
        strbuf_addch(&sb, *p);
    }
    free(raw);
    return strbuf_detach(&sb);
}

static void md_table(struct ctx *c, const char *va, const char *vb, const struct profile_diff *d,
                     bool dsos)
{
    const struct profile_diff_row *rows = dsos ? d->dsos : d->fns;
    int n = dsos ? d->ndsos : d->nfns;
    bool judged = d->nruns_a >= 2 && d->nruns_b >= 2;
    bool instr = !strcmp(d->event, "instructions");
    int ncol = instr ? 6 : 4;
    struct table t;
    table_init(&t, ncol, n);
    t.head[0] = xstrdup("change (points)");
    t.head[1] = xasprintf("%s %%", va);
    t.head[2] = xasprintf("%s %%", vb);
    if (instr) {
        t.head[3] = xasprintf("%s Ir/txn", va);
        t.head[4] = xasprintf("%s Ir/txn", vb);
    }
    t.head[ncol - 1] = xstrdup(dsos ? "DSO" : "function (DSO)");
    for (int i = 0; i < n; i++) {
        const struct profile_diff_row *r = &rows[i];
        table_set(&t, i, 0, xasprintf("%+.3f%s", r->change, judged && r->within_noise ? " ~" : ""),
                  NULL);
        table_set(&t, i, 1, md_share(&r->a), NULL);
        table_set(&t, i, 2, md_share(&r->b), NULL);
        if (instr) {
            table_set(&t, i, 3, r->a.present ? xasprintf("%.0f", r->a.per_txn) : xstrdup("-"),
                      NULL);
            table_set(&t, i, 4, r->b.present ? xasprintf("%.0f", r->b.per_txn) : xstrdup("-"),
                      NULL);
        }
        table_set(&t, i, ncol - 1, dsos ? md_text(NULL, r->name, NULL)
                                        : md_text("%s (%s)", r->name, r->dso), NULL);
    }
    strbuf_addf(c->out, "\n#### %s\n\n", dsos ? "By DSO" : "Top functions");
    table_render(&t, c->out);
    table_release(&t);
}

static void md_pair(struct ctx *c, const char *workload, int threads, const char *va,
                    const char *vb, const struct profile_diff *d)
{
    strbuf_addf(c->out, "\n### CPU profile: %s, threads=%d: %s vs %s\n\n", workload, threads,
                va, vb);
    if (!strcmp(d->event, "instructions"))
        strbuf_addstr(c->out, "Exact profile: instructions per function (callgrind, self cost), "
                              "% of the run's instructions.");
    else
        strbuf_addf(c->out, "Sampled profile: %s at %d Hz, %s; %s %llu samples in %d round%s, "
                            "%s %llu in %d.", d->event, d->frequency,
                    d->kernel ? "user + kernel" : "user space only", va,
                    (unsigned long long)d->samples_a, d->nruns_a, d->nruns_a == 1 ? "" : "s", vb,
                    (unsigned long long)d->samples_b, d->nruns_b);
    strbuf_addf(c->out, " Shares are %% pooled over the rounds, [lowest-highest round]; ! = not "
                        "stable across rounds (range > max(%.1f points, %.0f%% of the share)); "
                        "~ = the change is within the rounds' range. Rows: the union of both "
                        "top-%d lists, largest change first.\n",
                PROFILE_UNSTABLE_PP, 100 * PROFILE_UNSTABLE_REL, c->top);
    md_table(c, va, vb, d, true);
    md_table(c, va, vb, d, false);
}

static void on_pair(void *vctx, const char *workload, int threads, const struct profile_side *a,
                    const struct profile_side *b)
{
    struct ctx *c = vctx;
    struct profile_diff d;
    profile_diff_make(&d, a, b, c->top);
    switch (c->fmt) {
    case REPORT_CSV:
        csv_rows(c, workload, threads, a->variant, b->variant, &d, true);
        csv_rows(c, workload, threads, a->variant, b->variant, &d, false);
        break;
    case REPORT_JSON:
        json_array_append_new(c->pairs, pair_json(workload, threads, a->variant, b->variant, &d));
        break;
    default:
        md_pair(c, workload, threads, a->variant, b->variant, &d);
        break;
    }
    profile_diff_release(&d);
}

int report_profiles(struct strbuf *out, enum report_format fmt,
                    const struct experiment_config *cfg, const struct experiment_result *res,
                    const char *dir, int top)
{
    struct ctx c = { out, fmt, top, NULL };
    if (fmt == REPORT_CSV)
        strbuf_addstr(out, csv_head);
    if (fmt == REPORT_JSON)
        c.pairs = json_array();
    else if (fmt == REPORT_MARKDOWN)
        strbuf_addstr(out, "\n## CPU profiles\n");
    int bad = experiment_profile_each(cfg, res, dir, on_pair, &c);
    if (fmt == REPORT_JSON) {
        json_t *root = report_experiment_json(cfg, res);
        json_object_set_new(root, "top", json_integer(top));
        json_object_set_new(root, "unreadable_profiles", json_integer(bad));
        json_object_set_new(root, "profiles", c.pairs);
        char *s = json_dumps(root, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
        strbuf_addstr(out, s);
        strbuf_addch(out, '\n');
        free(s);
        json_decref(root);
    } else if (fmt == REPORT_MARKDOWN && bad) {
        strbuf_addf(out, "\n%d profile file%s could not be read (warnings on stderr); those runs "
                         "are left out of the profiles.\n", bad, bad == 1 ? "" : "s");
    }
    return bad;
}
