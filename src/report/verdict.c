/* verdict: the closing verdict of an experiment report (see verdict.h). Reads results only;
 * owns no state. */
#include "report/verdict.h"
#include "model/cells.h"
#include "model/machine.h"
#include "model/model.h"
#include "model/precision.h"
#include "report/common.h"
#include "report/rep.h"
#include "stats/compare.h"
#include "stats/sequential.h"
#include "util/fmt.h"
#include "util/strbuf.h"
#include "util/util.h"

#include <assert.h>
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ALPHA 0.05
#define POWER 0.8

/* A short name of a metric for the verdict's sentences. */
static const char *gain_name(enum experiment_metric m)
{
    switch (m) {
    case METRIC_TPS: return "tps";
    case METRIC_LAT_AVG_MS: return "avg latency";
    case METRIC_LAT_P95_MS: return "p95 latency";
    case METRIC_CPU_US: return "CPU/txn";
    case METRIC_INSTR: return "instructions/txn";
    case METRIC_EST_CYCLES: return "est. cycles/txn";
    default: return experiment_metric_key(m);
    }
}

void rep_env_load(const struct experiment_result *res, double *load1, int *cores)
{
    *load1 = NAN;
    *cores = 0;
    json_t *env = res->env_json ? json_loads(res->env_json, 0, NULL) : NULL;
    if (!env)
        return;
    json_t *l = json_object_get(env, "loadavg_1m");
    if (json_is_number(l))
        *load1 = json_number_value(l);
    *cores = (int)json_integer_value(json_object_get(env, "cores"));
    json_decref(env);
}

/* The next step of an unresolved variant (see report_verdict_compute()). */
static void next_step(const struct experiment_config *cfg, const struct experiment_result *res,
                      const struct verdict *vd, struct verdict_variant *vv)
{
    const struct experiment_change *ch = &vv->gain[0].ch;
    bool seq = cfg->target_ci > 0 && cfg->measure == MEASURE_TIME;
    if (vd->busy && vd->excluded > 0) {
        /* --exclude-distrusted left runs out on a busy machine: more of the same rounds would
         * be left out too */
        vv->next = VERDICT_BUSY;
        return;
    }
    if (!ch->ncells || !ch->stats) {
        vv->next = VERDICT_STATISTICS;
        vv->rounds_needed = seq ? STATS_CS_MIN_ROUNDS : stats_min_rounds(ALPHA);
        return;
    }
    if (cfg->measure == MEASURE_INSTRUCTIONS) {
        /* deterministic counts: a CI clear of 0 is a real difference; with fewer rounds
         * than the rank test can ever reject at, the next step is those rounds, not "the
         * same work" */
        if (report_p_decides(ch) && vv->rounds < stats_min_rounds(ALPHA)) {
            vv->next = VERDICT_MORE_ROUNDS;
            vv->rounds_needed = stats_min_rounds(ALPHA);
        } else {
            vv->next = VERDICT_SAME;
        }
        return;
    }
    if (vd->busy) {
        vv->next = VERDICT_BUSY;
        return;
    }
    double pct = fabs(experiment_change_pct(ch, NULL, NULL));
    long need = -1;
    if (seq) {  /* the rounds the confidence sequence needs to be +/- the observed change */
        double sd = experiment_round_log_sd_max(cfg, res, vv->gain[0].m, vv->v);
        int n = isfinite(sd) && pct > 0 ? machine_rounds_for(sd, pct) : INT32_MAX;
        need = n == INT32_MAX ? -1 : n;
    } else if (isfinite(vv->noise_pct) && pct > 0) {
        need = stats_rounds_needed(vv->noise_pct / 100, pct / 100, ALPHA, POWER);
    }
    long cap = 10L * vv->rounds > 200 ? 10L * vv->rounds : 200;
    if (need > 0 && need <= cap) {
        vv->next = VERDICT_MORE_ROUNDS;
        vv->rounds_needed = (int)(need > vv->rounds ? need : vv->rounds + 1);
    } else {
        vv->next = VERDICT_INSTRUCTIONS;
    }
}

void report_verdict_compute(const struct experiment_config *cfg,
                            const struct experiment_result *res, struct verdict *out)
{
    int nw = cfg->nworkloads, nt = cfg->nthreads, nc = nw * nt;
    int *ws = xcalloc((size_t)nc + 1, sizeof(int)), *ts = xcalloc((size_t)nc + 1, sizeof(int));
    bool instr = cfg->measure == MEASURE_INSTRUCTIONS;

    assert(cfg->nvariants >= 1);
    memset(out, 0, sizeof(*out));
    const char *stop = experiment_target_stop_reason(cfg, res);
    out->max_time_stopped = stop && !strcmp(stop, "--max-time") && !res->signal && !res->error;
    for (int w = 0, i = 0; w < nw; w++)
        for (int t = 0; t < nt; t++, i++) {
            ws[i] = w;
            ts[i] = cfg->threads[t];
        }
    rep_env_load(res, &out->load1, &out->cores);
    for (int i = 0; i < res->nruns; i++) {
        const struct run_metrics *m = &res->runs[i].metrics;
        if (!m->available)
            continue;
        out->runs_metrics++;
        out->distrusted += metrics_flags(m) != 0;
    }
    /* --exclude-distrusted: the runs it left out had metrics and were distrusted; they still
     * count towards a busy machine */
    out->exclude = res->exclude_distrusted;
    out->excluded = res->excluded;
    assert(out->excluded >= 0 && (out->exclude || !out->excluded));
    out->runs_metrics += out->excluded;
    out->distrusted += out->excluded;
    out->busy = (!instr && out->cores > 0 && isfinite(out->load1) &&
                 out->load1 >= out->cores / 2.0) ||
                (out->runs_metrics > 0 && 4 * out->distrusted >= out->runs_metrics);

    enum experiment_metric gains[VERDICT_GAINS];
    int ng = 0;
    gains[ng++] = instr ? METRIC_INSTR : METRIC_TPS;
    if (instr) {
        if (experiment_has_metric(res, -1, METRIC_EST_CYCLES))
            gains[ng++] = METRIC_EST_CYCLES;
    } else {
        gains[ng++] = METRIC_LAT_AVG_MS;
        if (experiment_has_metric(res, -1, METRIC_CPU_US))
            gains[ng++] = METRIC_CPU_US;
    }
    assert(ng <= VERDICT_GAINS);

    out->nvariants = cfg->nvariants - 1;
    out->vars = xcalloc((size_t)out->nvariants + 1, sizeof(*out->vars));
    for (int v = 1; v < cfg->nvariants; v++) {
        struct verdict_variant *vv = &out->vars[v - 1];
        vv->v = v;
        vv->ngain = ng;
        vv->noise_pct = NAN;
        vv->rounds = -1;
        for (int g = 0; g < ng; g++) {
            enum experiment_metric m = gains[g];
            /* the seed of the Average row (one workload) and of seed 002's "all" row */
            uint64_t seed = report_all_cells_seed(cfg, v, m);
            vv->gain[g].m = m;
            if (experiment_change_cfg(cfg, res, m, v, ws, ts, nc, seed, &vv->gain[g].ch) < 0)
                memset(&vv->gain[g].ch, 0, sizeof(vv->gain[g].ch));
        }
        /* per cell of the primary metric: significance, rounds and noise */
        for (int i = 0; i < nc; i++) {
            struct experiment_change ch;
            struct experiment_precision p;
            int ti = i % nt;
            if (experiment_change_cfg(cfg, res, gains[0], v, &ws[i], &ts[i], 1,
                                      report_cell_seed(cfg, ws[i], v, ti, gains[0]), &ch) < 0 ||
                !ch.ncells)
                continue;
            vv->cells++;
            if (ch.significant) {
                bool better = experiment_change_pct(&ch, NULL, NULL) > 0;
                vv->better += better;
                vv->worse += !better;
            }
            experiment_precision_cell(cfg, res, gains[0], v, ws[i], ts[i], &p);
            if (vv->rounds < 0 || p.rounds < vv->rounds)
                vv->rounds = p.rounds;
            if (isfinite(p.cv_base) && isfinite(p.cv_var)) {
                double cv = sqrt((p.cv_base * p.cv_base + p.cv_var * p.cv_var) / 2) * 100;
                if (!(cv <= vv->noise_pct))
                    vv->noise_pct = cv;
            }
        }
        if (vv->rounds < 0)
            vv->rounds = 0;
        assert(vv->better + vv->worse <= vv->cells);
        if (vv->gain[0].ch.significant || vv->better || vv->worse)
            vv->next = VERDICT_RESOLVED;
        else
            next_step(cfg, res, out, vv);
    }
    free(ws);
    free(ts);
}

void report_verdict_release(struct verdict *vd)
{
    free(vd->vars);
    vd->vars = NULL;
    vd->nvariants = 0;
}

/* "tps +15.5% (95% CI +3.1% .. +28.0%), better" and the like. */
static void gain_text(struct strbuf *sb, const struct verdict_gain *g)
{
    const struct experiment_change *ch = &g->ch;
    double lo, hi, pct = experiment_change_pct(ch, &lo, &hi);
    strbuf_addf(sb, "%s ", gain_name(g->m));
    if (!ch->ncells || !isfinite(pct)) {
        strbuf_addstr(sb, "-");
        return;
    }
    strbuf_addf(sb, "%+.1f%%", fabs(pct) < 0.05 ? 0.0 : pct);
    if (!ch->stats) {
        strbuf_addstr(sb, " (no CI yet)");
        return;
    }
    strbuf_addf(sb, " (%g%% CI %+.1f%% .. %+.1f%%)", ch->level * 100, lo, hi);
    if (ch->significant)
        strbuf_addstr(sb, pct > 0 ? " better" : " worse");
    else if (report_p_decides(ch) && !ch->sequential)
        /* the CI excludes 0 but the rank test does not reject: it decided */
        strbuf_addf(sb, " ~ (Mann-Whitney p %.3f >= %g)", ch->p_value, ALPHA);
    else
        strbuf_addstr(sb, " ~");
}

/* The next-step sentence of vv (empty when resolved). */
static void next_text(struct strbuf *sb, const struct experiment_config *cfg,
                      const struct verdict *vd, const struct verdict_variant *vv)
{
    bool seq = cfg->target_ci > 0 && cfg->measure == MEASURE_TIME;
    double pct = fabs(experiment_change_pct(&vv->gain[0].ch, NULL, NULL));
    switch (vv->next) {
    case VERDICT_RESOLVED:
        break;
    case VERDICT_STATISTICS:
        strbuf_addf(sb, "no statistics from %d round%s: needs at least %d rounds (%s=%d)",
                    vv->rounds, vv->rounds == 1 ? "" : "s", vv->rounds_needed,
                    seq ? "--max-rounds" : "--rounds", vv->rounds_needed);
        break;
    case VERDICT_MORE_ROUNDS:
        strbuf_addf(sb, "not resolved: needs about %d more rounds to resolve a change of "
                        "%.1f%% (%s=%d%s)",
                    vv->rounds_needed - vv->rounds, pct, seq ? "--max-rounds" : "--rounds",
                    vv->rounds_needed,
                    vd->max_time_stopped ? ", and a --max-time that lets them run: "
                                           "--max-time stopped these rounds" : "");
        break;
    case VERDICT_INSTRUCTIONS:
        strbuf_addf(sb, "not resolved: a change of %.1f%% is below what time can resolve on "
                        "this noise; use --measure=instructions", pct);
        break;
    case VERDICT_BUSY:
        strbuf_addstr(sb, "not resolved: the machine was busy (");
        if (isfinite(vd->load1) && vd->cores > 0)
            strbuf_addf(sb, "load %.2f on %d cores at the start", vd->load1, vd->cores);
        if (vd->runs_metrics)
            strbuf_addf(sb, "%s%d of %d runs distrusted",
                        isfinite(vd->load1) && vd->cores > 0 ? "; " : "", vd->distrusted,
                        vd->runs_metrics);
        strbuf_addstr(sb, "): rerun when it is quiet");
        break;
    case VERDICT_SAME:
        strbuf_addstr(sb, "no difference in instructions per transaction: the builds do the "
                          "same work");
        break;
    }
}

/* The lines of one variant (the primary gain and its cells; the other gains; the noise; the
 * next step when unresolved), each without its bullet or indent, into lines[0..4). */
static int variant_lines(const struct experiment_config *cfg, const struct verdict *vd,
                         const struct verdict_variant *vv, struct strbuf lines[4])
{
    int n = 0;
    struct strbuf *sb = &lines[n++];
    strbuf_addf(sb, "%s: ", cfg->variants[vv->v].name);
    gain_text(sb, &vv->gain[0]);
    strbuf_addf(sb, "; significant in %d of %d cell%s", vv->better + vv->worse, vv->cells,
                vv->cells == 1 ? "" : "s");
    if (vv->better && vv->worse)
        strbuf_addf(sb, " (%d better, %d worse)", vv->better, vv->worse);
    if (vv->ngain > 1)
        sb = &lines[n++];
    for (int g = 1; g < vv->ngain; g++) {
        strbuf_addstr(sb, g == 1 ? "also: " : "; ");
        gain_text(sb, &vv->gain[g]);
    }
    sb = &lines[n++];
    strbuf_addstr(sb, "noise: ");
    if (isfinite(vv->noise_pct))
        strbuf_addf(sb, "one run's %s varies by up to %.1f%% (CV) over %d round%s",
                    gain_name(vv->gain[0].m), vv->noise_pct, vv->rounds,
                    vv->rounds == 1 ? "" : "s");
    else
        strbuf_addf(sb, "unknown from %d round%s", vv->rounds, vv->rounds == 1 ? "" : "s");
    if (vd->runs_metrics)
        strbuf_addf(sb, "; %d of %d runs distrusted", vd->distrusted, vd->runs_metrics);
    if (vd->exclude)
        strbuf_addf(sb, "%s%d left out (--exclude-distrusted)", vd->runs_metrics ? ", " : "; ",
                    vd->excluded);
    if (vv->next != VERDICT_RESOLVED) {
        sb = &lines[n++];
        strbuf_addstr(sb, "next: ");
        next_text(sb, cfg, vd, vv);
    }
    assert(n <= 4);
    return n;
}

void report_verdict_format(struct strbuf *out, const struct experiment_config *cfg,
                           const struct verdict *vd, enum report_format fmt)
{
    if (fmt != REPORT_TEXT && fmt != REPORT_MARKDOWN)
        return;
    bool md = fmt == REPORT_MARKDOWN;
    strbuf_addf(out, md ? "\n### Verdict against %s\n\n" : "\nVerdict against %s",
                cfg->variants[0].name);
    strbuf_addf(out, "%severy cell pooled, 95%% CI, positive = better; \"~\" = not significant"
                     "%s\n",
                md ? "" : " (", md ? "" : ")");
    if (!vd->nvariants)
        strbuf_addstr(out, md ? "- no variant besides the baseline\n"
                              : "  no variant besides the baseline\n");
    for (int i = 0; i < vd->nvariants; i++) {
        struct strbuf lines[4] = { STRBUF_INIT, STRBUF_INIT, STRBUF_INIT, STRBUF_INIT };
        int n = variant_lines(cfg, vd, &vd->vars[i], lines);
        for (int k = 0; k < n; k++)
            strbuf_addf(out, "%s%s\n", md ? "- " : (k ? "    " : "  "),
                        lines[k].buf);
        for (int k = 0; k < 4; k++)
            strbuf_release(&lines[k]);
    }
}

static const char *next_key(enum verdict_next n)
{
    switch (n) {
    case VERDICT_RESOLVED: return "resolved";
    case VERDICT_MORE_ROUNDS: return "more_rounds";
    case VERDICT_STATISTICS: return "statistics";
    case VERDICT_INSTRUCTIONS: return "measure_instructions";
    case VERDICT_BUSY: return "rerun_busy";
    case VERDICT_SAME: return "same";
    }
    return "?";
}

json_t *report_verdict_json(const struct experiment_config *cfg, const struct verdict *vd)
{
    json_t *root = json_object(), *vars = json_array();
    for (int i = 0; i < vd->nvariants; i++) {
        const struct verdict_variant *vv = &vd->vars[i];
        json_t *o = json_object(), *gains = json_array();
        json_object_set_new(o, "variant", jstr(cfg->variants[vv->v].name));
        for (int g = 0; g < vv->ngain; g++) {
            struct strbuf sb = STRBUF_INIT;
            experiment_change_format(&sb, &vv->gain[g].ch);
            json_array_append_new(gains,
                                  json_pack("{s:s, s:o}", "metric",
                                            experiment_metric_key(vv->gain[g].m), "change",
                                            report_change_json(&vv->gain[g].ch, sb.buf)));
            strbuf_release(&sb);
        }
        json_object_set_new(o, "gains", gains);
        json_object_set_new(o, "cells", json_integer(vv->cells));
        json_object_set_new(o, "cells_better", json_integer(vv->better));
        json_object_set_new(o, "cells_worse", json_integer(vv->worse));
        json_object_set_new(o, "rounds", json_integer(vv->rounds));
        json_object_set_new(o, "noise_cv_pct",
                            isfinite(vv->noise_pct) ? jreal(vv->noise_pct) : json_null());
        json_object_set_new(o, "next", json_string(next_key(vv->next)));
        json_object_set_new(o, "rounds_needed",
                            vv->next == VERDICT_MORE_ROUNDS || vv->next == VERDICT_STATISTICS
                                ? json_integer(vv->rounds_needed) : json_null());
        struct strbuf lines[4] = { STRBUF_INIT, STRBUF_INIT, STRBUF_INIT, STRBUF_INIT };
        struct strbuf all = STRBUF_INIT;
        int n = variant_lines(cfg, vd, vv, lines);
        for (int k = 0; k < n; k++)
            strbuf_addf(&all, "%s%s", k ? "\n" : "", lines[k].buf);
        json_object_set_new(o, "text", json_string(all.buf));
        for (int k = 0; k < 4; k++)
            strbuf_release(&lines[k]);
        strbuf_release(&all);
        json_array_append_new(vars, o);
    }
    json_object_set_new(root, "variants", vars);
    json_object_set_new(root, "runs_with_metrics", json_integer(vd->runs_metrics));
    json_object_set_new(root, "distrusted_runs", json_integer(vd->distrusted));
    if (vd->exclude)  /* only with the option: the JSON is otherwise as before */
        json_object_set_new(root, "distrusted_runs_left_out", json_integer(vd->excluded));
    json_object_set_new(root, "busy", json_boolean(vd->busy));
    return root;
}

void experiment_report_verdict(FILE *out, const struct experiment_config *cfg,
                               const struct experiment_result *res)
{
    struct verdict vd;
    struct strbuf sb = STRBUF_INIT;
    if (cfg->nvariants < 2)
        return;
    report_verdict_compute(cfg, res, &vd);
    report_verdict_format(&sb, cfg, &vd, REPORT_TEXT);
    fputs(sb.buf, out);
    fflush(out);
    strbuf_release(&sb);
    report_verdict_release(&vd);
}

void report_verdict_rep(struct rep *r)
{
    struct verdict vd;
    if (r->cfg->nvariants < 2)
        return;  /* nothing to compare (a calibration's single variant) */
    report_verdict_compute(r->cfg, r->res, &vd);
    if (r->fmt == REPORT_JSON) {
        if (!r->extra)
            r->extra = json_object();
        json_object_set_new(r->extra, "verdict", report_verdict_json(r->cfg, &vd));
    } else {
        report_verdict_format(r->out, r->cfg, &vd, r->fmt);
    }
    report_verdict_release(&vd);
}
