/* step_gains: what each step added (see step_gains.h). */
#include "report/step_gains.h"
#include "model/cells.h"
#include "model/precision.h"
#include "report/common.h"
#include "stats/sequential.h"
#include "util/util.h"

#include <math.h>
#include <string.h>

int report_step_base(const struct experiment_config *cfg, int v)
{
    if (v <= 0)
        return -1;
    const char *name = cfg->variants[v].name;
    const char *plus = strrchr(name, '+');
    if (plus)
        for (int u = 0; u < cfg->nvariants; u++)
            if (u != v && strlen(cfg->variants[u].name) == (size_t)(plus - name) &&
                !strncmp(cfg->variants[u].name, name, (size_t)(plus - name)))
                return u;
    return 0;
}

/* One block: a line per variant with its change in metric m (label: what m is) over the
 * variant it builds on, over the nc cells (ws[k], ts[k]). */
static void step_block(struct strbuf *out, const struct experiment_config *cfg,
                       const struct experiment_result *res, enum experiment_metric m,
                       const char *label, const int *ws, const int *ts, int nc)
{
    int nv = cfg->nvariants, width = 10;  /* the name column: at least 10, as wide as a name */
    for (int v = 1; v < nv; v++)
        if ((int)strlen(cfg->variants[v].name) > width)
            width = (int)strlen(cfg->variants[v].name);
    strbuf_addf(out, "\nwhat each step added (%s, all workloads and thread counts pooled, "
                     "95%% CI; + = better):\n", label);
    for (int v = 1; v < nv; v++) {
        int base = report_step_base(cfg, v);
        const char *name = cfg->variants[v].name;
        const char *plus = strrchr(name, '+');
        const char *step = base > 0 && plus ? plus + 1 : name;
        struct experiment_change ch;
        /* the seed: as the seed-000 Average cell of this variant, offset by the base */
        uint64_t seed = report_cell_seed(cfg, 0, v, cfg->nthreads, m) + (uint64_t)base;
        strbuf_addf(out, "  %-*s %s over %s: ", width, name, step, cfg->variants[base].name);
        double lo, hi, pct;
        if (experiment_change_cfg_over(cfg, res, m, base, v, ws, ts, nc, seed, &ch) < 0 ||
            isnan(pct = experiment_change_pct(&ch, &lo, &hi)))
            strbuf_addf(out, "-");
        else if (!ch.stats && ch.sequential)
            strbuf_addf(out, "%+.1f%% (no statistics before %d rounds)", pct, STATS_CS_MIN_ROUNDS);
        else if (!ch.stats)
            strbuf_addf(out, "%+.1f%% (no statistics with 1 round)", pct);
        else
            strbuf_addf(out, "%+.1f%% (95%% CI %+.1f%% .. %+.1f%%)%s", pct, lo, hi,
                        ch.significant ? "" : ", ~ not significant");
        /* a CI clear of 0 that the test does not confirm (too few rounds): say which */
        if (ch.stats && !ch.significant && (lo > 0 || hi < 0) && isfinite(ch.p_value))
            strbuf_addf(out, ": the test's p = %.2f", ch.p_value);
        strbuf_addf(out, "\n");
    }
}

void report_steps(struct strbuf *out, const struct experiment_config *cfg,
                  const struct experiment_result *res)
{
    int nv = cfg->nvariants, nc = cfg->nworkloads * cfg->nthreads;
    if (nv < 3 || nc < 1)
        return;
    int *ws = xcalloc((size_t)nc, sizeof(int)), *ts = xcalloc((size_t)nc, sizeof(int));
    for (int w = 0, k = 0; w < cfg->nworkloads; w++)
        for (int t = 0; t < cfg->nthreads; t++, k++) {
            ws[k] = w;
            ts[k] = cfg->threads[t];
        }
    if (cfg->measure == MEASURE_INSTRUCTIONS) {
        step_block(out, cfg, res, METRIC_INSTR, "instructions per transaction", ws, ts, nc);
        /* what a layout step (BOLT) changes: the cache and branch misses, not the count */
        if (experiment_has_metric(res, -1, METRIC_EST_CYCLES))
            step_block(out, cfg, res, METRIC_EST_CYCLES, "estimated cycles per transaction",
                       ws, ts, nc);
    } else {
        step_block(out, cfg, res, METRIC_TPS, "tps", ws, ts, nc);
        /* the part of the time a build can change */
        if (experiment_has_metric(res, -1, METRIC_SERVER_USER_US))
            step_block(out, cfg, res, METRIC_SERVER_USER_US,
                       "the server's user CPU time per transaction", ws, ts, nc);
    }
    free(ws);
    free(ts);
}
