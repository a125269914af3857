/* search: `pgolab pgo TARGET --search` for a server or library target, after the builds and
 * the gate:
 * 1. the screen: baseline and every candidate (each measured build but baseline and official)
 *    in one pgo experiment by instructions (the server, or for a library the whole benchmark
 *    process, under callgrind, 1 thread,
 *    rq->search_events transactions, 1 round: the counts are deterministic), the candidates
 *    ranked by their change in estimated cycles per transaction against baseline, pooled over
 *    the measured workloads (search_rank.h);
 * 2. the confirmation: the best rq->search_keep against baseline (and official when it is in
 *    --variants) by time with the user's settings (--time, --rounds or --target-ci, --threads),
 *    a second pgo experiment;
 * 3. the winner, printed last (lines starting "search:"): the ranking, then the kept variant
 *    with the best significant tps gain over baseline, or, when none is significantly faster,
 *    the best by the simulation and what would resolve it; its name (the variant spec),
 *    compiler, flags, where its per-function difference is (the screen, run with --profile:
 *    callgrind's instructions per function), gains over baseline and official with their 95%
 *    CIs and the install prefix; with --output also as the "search" key of that file.
 * Each measurement is pgo_measure() with p->rq pointing, for the screen only, at a copy of the
 * request changed to the screen's settings, and p->measure_only / p->outcome set for the call
 * (stages.h); all three are restored before this returns. A signal stops it like pgo_measure:
 * the results database keeps every finished run, and the same command again continues it
 * (pgo_measure, for a search's measurement: the newest experiment with the same builds, by
 * their sha256, and settings is resumed when unfinished, and a complete screen is reused as it
 * is: its counts are deterministic; a complete confirmation is measured anew). */
#include "pgo/stages.h"
#include "pgo/search_rank.h"
#include "util/strbuf.h"
#include "util/util.h"

#include <assert.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One measurement of the builds only[0..) (pgo_measured_builds' order) into *o, with p->rq
 * set to rq for it. The exit code of pgo_measure. */
static int measure(struct pgo_pipeline *p, struct store *store, const struct pgo_request *rq,
                   const bool *only, struct pgo_outcome *o)
{
    const struct pgo_request *saved = p->rq;
    p->rq = rq;
    p->measure_only = only;
    p->outcome = o;
    int rc = pgo_measure(p, store);
    p->rq = saved;
    p->measure_only = NULL;
    p->outcome = NULL;
    return rc;
}

/* "+1.2% (95% CI +0.3% .. +2.0%)", with ", ~ not significant" (and the test's p when the CI
 * alone would look significant) or the reason for no CI */
static void add_change(struct strbuf *sb, const struct pgo_change *c)
{
    if (isnan(c->pct))
        strbuf_addf(sb, "- (no data)");
    else if (!c->stats)
        strbuf_addf(sb, "%+.1f%% (no statistics: too few rounds)", c->pct);
    else {
        strbuf_addf(sb, "%+.1f%% (95%% CI %+.1f%% .. %+.1f%%", c->pct, c->lo, c->hi);
        if (c->significant)
            strbuf_addstr(sb, ")");
        else if ((c->lo > 0 || c->hi < 0) && isfinite(c->p_value))
            /* a CI clear of 0 that the test does not confirm (too few rounds): say so */
            strbuf_addf(sb, ", ~ not significant: the test's p = %.2f)", c->p_value);
        else
            strbuf_addstr(sb, ", ~ not significant)");
    }
}

/* The index of build b in o (-1: not measured there). */
static int index_of(const struct pgo_outcome *o, const struct pgo_build *b)
{
    for (int i = 0; i < o->nv; i++)
        if (o->build[i] == b)
            return i;
    return -1;
}

static json_t *change_json(const struct pgo_change *c)
{
    if (isnan(c->pct))
        return json_null();
    return json_pack("{s:f,s:o,s:b}", "pct", c->pct,
                     "ci_pct", c->stats ? json_pack("[f,f]", c->lo, c->hi) : json_null(),
                     "significant", c->significant);
}

/* The winner (or best by the simulation) b's lines: spec, compiler, flags, the screen that holds
 * its per-function difference (screen_id in results), the library, the prefix. */
static void print_build(const struct pgo_build *b, long long screen_id, const char *results)
{
    printf("  variant spec    %s\n", b->name);
    printf("  compiler        %s\n", b->pipeline->cc.version ? b->pipeline->cc.version : "?");
    printf("  flags           %s\n", b->flags ? b->flags : "");
    printf("  per function    pgolab report --experiment=%lld --results=%s (the screen: each "
           "function's exact instructions against the baseline's)\n", screen_id, results);
    if (b->pipeline->library)
        printf("  library         %s\n", b->product);
    printf("  install prefix  %s\n", b->prefix ? b->prefix : "-");
}

/* Add the "search" object to the --output file the confirmation wrote. 0 or -1. */
static int output_json(const char *path, json_t *search)
{
    json_error_t err;
    json_t *root = json_load_file(path, 0, &err);
    if (!root || !json_is_object(root)) {
        json_decref(root);
        return error("--output=%s: cannot read it back to add the search (%s)", path, err.text);
    }
    json_object_set(root, "search", search);
    char *tmp = xasprintf("%s.tmp", path);
    int rc = json_dump_file(root, tmp, JSON_INDENT(2)) < 0 || rename(tmp, path) < 0
                 ? error("--output=%s: cannot write the search into it", path) : 0;
    free(tmp);
    json_decref(root);
    return rc;
}

/* 3. the block of the winner, last: the screen's ranking (so; candidates so->build[cand[i]]
 * with changes pct[i], kept[i]), then the winner of the confirmation co; the same into js. */
static void print_winner(const struct pgo_request *rq, const struct pgo_outcome *so,
                         const int *cand, const double *pct, const bool *kept, int nc,
                         const struct pgo_outcome *co, json_t *js)
{
    int *order = xcalloc((size_t)nc + 1, sizeof(int));
    search_rank(pct, nc, order);
    json_t *ranking = json_array();
    printf("\nsearch: the screen (experiment %lld): estimated cycles per transaction against "
           "baseline, %d workload%s pooled, + = better:\n", (long long)so->experiment_id,
           rq->nbench, rq->nbench == 1 ? "" : "s");
    for (int r = 0; r < nc; r++) {
        int i = order[r];
        const struct pgo_build *b = so->build[cand[i]];
        if (isnan(pct[i]))
            printf("  %2d. %-24s -%s\n", r + 1, b->name, kept[i] ? "  (kept)" : "");
        else
            printf("  %2d. %-24s %+7.2f%%%s\n", r + 1, b->name, pct[i], kept[i] ? "  (kept)" : "");
        json_array_append_new(ranking, json_pack("{s:s,s:o,s:b}", "variant", b->name,
                                                 "est_cycles_change_pct",
                                                 isnan(pct[i]) ? json_null() : json_real(pct[i]),
                                                 "kept", kept[i]));
    }
    /* the confirmation's candidates: every measured build but baseline and official */
    int n = co->nv, off = -1;
    double *tps = xcalloc((size_t)n + 1, sizeof(double));
    bool *sig = xcalloc((size_t)n + 1, sizeof(bool));
    for (int i = 0; i < n; i++) {
        off = co->build[i]->official ? i : off;
        bool cand_i = i > 0 && !co->build[i]->official;
        tps[i] = cand_i ? co->vs_base[i].pct : NAN;
        sig[i] = cand_i && co->vs_base[i].significant;
    }
    int w = search_winner(tps, sig, n);
    struct strbuf sb = STRBUF_INIT;
    strbuf_init(&sb, 0);
    const struct pgo_build *b;
    json_t *jw;
    if (w >= 0) {
        b = co->build[w];
        strbuf_addf(&sb, "search: winner %s (confirmed by time, experiment %lld): tps ", b->name,
                    (long long)co->experiment_id);
        add_change(&sb, &co->vs_base[w]);
        strbuf_addf(&sb, " over baseline");
        if (off >= 0) {
            strbuf_addf(&sb, ", ");
            add_change(&sb, &co->vs_official[w]);
            strbuf_addf(&sb, " over official");
        }
        printf("%s\n", sb.buf);
        jw = json_pack("{s:s,s:b,s:o,s:o}", "variant", b->name, "significant_by_time", 1,
                       "tps_over_baseline", change_json(&co->vs_base[w]),
                       "tps_over_official",
                       off >= 0 ? change_json(&co->vs_official[w]) : json_null());
    } else {
        strbuf_addf(&sb, "search: no kept variant is significantly faster than baseline by time "
                         "(experiment %lld; tps", (long long)co->experiment_id);
        for (int i = 1, first = 1; i < n; i++)
            if (!co->build[i]->official) {
                strbuf_addf(&sb, "%s %s ", first ? ":" : ";", co->build[i]->name);
                add_change(&sb, &co->vs_base[i]);
                first = 0;
            }
        printf("%s)\n", sb.buf);
        int best = order[0];
        b = so->build[cand[best]];
        int ci = index_of(co, b);
        printf("search: best by the simulation: %s, estimated cycles per transaction %+.2f%% "
               "against baseline; more rounds (--rounds=N, or --target-ci) or a quieter machine "
               "would resolve it by time\n", b->name, pct[best]);
        if (ci >= 0) {
            strbuf_reset(&sb);
            add_change(&sb, &co->vs_base[ci]);
            strbuf_addf(&sb, " over baseline");
            if (off >= 0) {
                strbuf_addf(&sb, ", ");
                add_change(&sb, &co->vs_official[ci]);
                strbuf_addf(&sb, " over official");
            }
            printf("  tps             %s\n", sb.buf);
        }
        jw = json_pack("{s:s,s:b,s:f,s:o,s:o}", "variant", b->name, "significant_by_time", 0,
                       "est_cycles_change_pct", pct[best],
                       "tps_over_baseline", ci >= 0 ? change_json(&co->vs_base[ci]) : json_null(),
                       "tps_over_official",
                       ci >= 0 && off >= 0 ? change_json(&co->vs_official[ci]) : json_null());
    }
    print_build(b, so->experiment_id, rq->results);
    const char *cc = b->pipeline->cc.version;
    json_object_set_new(jw, "compiler", cc ? json_string(cc) : json_null());
    json_object_set_new(jw, "flags", json_string(b->flags ? b->flags : ""));
    json_object_set_new(jw, "prefix", b->prefix ? json_string(b->prefix) : json_null());
    if (b->pipeline->library)
        json_object_set_new(jw, "library", json_string(b->product));
    json_object_set_new(js, "screen_experiment", json_integer(so->experiment_id));
    json_object_set_new(js, "confirm_experiment", json_integer(co->experiment_id));
    json_object_set_new(js, "ranking", ranking);
    json_object_set_new(js, "winner", jw);
    strbuf_release(&sb);
    free(order);
    free(tps);
    free(sig);
}

int pgo_search(struct pgo_pipeline *p, struct store *store)
{
    const struct pgo_request *rq = p->rq;
    assert(rq->search && rq->search_keep >= 1);
    const struct pgo_build **m = NULL;
    int n = pgo_measured_builds(p, &m), rc = 1, official = -1, ncand = 0;
    bool *only = xcalloc((size_t)n + 1, sizeof(bool));
    struct pgo_outcome so, co;
    memset(&so, 0, sizeof(so));
    memset(&co, 0, sizeof(co));
    int *cand = xcalloc((size_t)n + 1, sizeof(int));
    double *pct = xcalloc((size_t)n + 1, sizeof(double));
    bool *kept = xcalloc((size_t)n + 1, sizeof(bool));
    for (int k = 0; k < n; k++) {
        official = m[k]->official ? k : official;
        only[k] = !m[k]->official;
        ncand += k > 0 && !m[k]->official;
    }
    if (ncand < 2) {
        error("--search: %d candidate%s besides baseline and official; a search needs at least "
              "2 (e.g. --variants=baseline,pgo,pgo+lto,clang:pgo+lto)", ncand,
              ncand == 1 ? "" : "s");
        goto out;
    }

    /* 1. the screen: its own settings in a copy of the request */
    struct pgo_request screen = *rq;
    int one_thread[1] = { 1 };
    screen.measure_kind = MEASURE_INSTRUCTIONS;
    screen.threads = one_thread;
    screen.nthreads = 1;
    screen.threads_set = false;
    screen.events = rq->search_events;
    screen.rounds = 1;
    screen.target_ci = 0;
    screen.max_time_s = 0;
    screen.cs_rounds = 0;
    screen.output = NULL;
    screen.fail_pct = -1;
    /* callgrind's counts per function, kept with the runs: the screen's report shows each
     * candidate's functions against the baseline's, exactly (what a gain is made of) */
    screen.profile = true;
    screen.resume_id = 0;
    printf("search: the screen: baseline and %d candidates by estimated cycles per transaction "
           "(%s under callgrind, 1 thread, %lld transactions per run, 1 round)\n\n",
           ncand, p->library ? "the benchmark process with the library" : "the server",
           (long long)rq->search_events);
    rc = measure(p, store, &screen, only, &so);
    if (rc != 0 || !so.complete || so.nv < 2) {
        if (rc == 0) {
            error("--search: the screen did not finish; nothing to confirm");
            rc = 1;
        } else if (rc == 2)
            error("--search: interrupted in the screen (experiment %lld keeps the runs that "
                  "finished); run the same command again: it continues the screen",
                  (long long)so.experiment_id);
        goto out;
    }
    int nc = 0;
    for (int i = 1; i < so.nv; i++)
        if (!so.build[i]->official) {
            cand[nc] = i;
            pct[nc++] = so.vs_base[i].pct;
        }
    int nkept = search_keep(pct, nc, rq->search_keep, kept);
    if (nkept == 0) {
        rc = 1;
        error("--search: the screen (experiment %lld) has no estimated cycles for any candidate",
              (long long)so.experiment_id);
        goto out;
    }

    /* 2. the confirmation: baseline, the kept ones, official; by time, the user's settings */
    struct strbuf names = STRBUF_INIT;
    strbuf_init(&names, 0);
    for (int k = 0; k < n; k++)
        only[k] = k == 0 || k == official;
    for (int i = 0; i < nc; i++)
        if (kept[i]) {
            const struct pgo_build *b = so.build[cand[i]];
            for (int k = 0; k < n; k++)
                only[k] = only[k] || m[k] == b;
            strbuf_addf(&names, "%s%s", names.len ? ", " : "", b->name);
        }
    printf("\nsearch: the confirmation: %s against baseline%s by time\n\n", names.buf,
           official >= 0 ? " and official" : "");
    strbuf_release(&names);
    rc = measure(p, store, rq, only, &co);
    if ((rc != 0 && rc != 3) || !co.complete || co.nv < 2) {
        if (rc == 2)
            error("--search: interrupted in the confirmation (experiment %lld keeps the runs that "
                  "finished; the screen is experiment %lld); run the same command again: it "
                  "reuses the screen and continues the confirmation", (long long)co.experiment_id,
                  (long long)so.experiment_id);
        else if (rc == 0)
            rc = 1;
        goto out;
    }

    /* 3. the winner, last */
    json_t *js = json_object();
    print_winner(rq, &so, cand, pct, kept, nc, &co, js);
    if (rq->output && output_json(rq->output, js) < 0 && rc == 0)
        rc = 1;
    json_decref(js);
out:
    pgo_outcome_release(&so);
    pgo_outcome_release(&co);
    free(only);
    free(cand);
    free(pct);
    free(kept);
    free(m);
    return rc;
}
