/* slower: the --fail-if-slower check of one experiment and of two (see slower.h). */
#include "report/slower.h"
#include "model/cells.h"
#include "model/precision.h"
#include "report/common.h"
#include "report/versus.h"
#include "util/strbuf.h"
#include "util/util.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void add_slower_line(struct strbuf *why, const char *vname, const char *bname,
                            const char *workload, int threads, const struct experiment_change *ch,
                            const char *metric)
{
    struct strbuf sb = STRBUF_INIT;
    experiment_change_format(&sb, ch);
    strbuf_addf(why, "%s vs %s, %s, ", vname, bname, workload);
    if (threads)
        strbuf_addf(why, "%d thread%s", threads, threads == 1 ? "" : "s");
    else
        strbuf_addstr(why, "Average over thread counts");
    strbuf_addf(why, ": %s %s\n", metric, sb.buf);
    strbuf_release(&sb);
}

static bool slower_than(const struct experiment_change *ch, double pct)
{
    return ch->ncells && ch->stats && ch->significant &&
           experiment_change_pct(ch, NULL, NULL) < -pct;
}

int report_slower(const struct experiment_config *cfg, const struct experiment_result *res,
                  double pct, struct strbuf *why)
{
    int n = 0, nt = cfg->nthreads;
    int *ws = xcalloc((size_t)nt, sizeof(int));
    /* instruction mode: "slower" = significantly more instructions per transaction */
    enum experiment_metric m = cfg->measure == MEASURE_INSTRUCTIONS ? METRIC_INSTR : METRIC_TPS;
    for (int w = 0; w < cfg->nworkloads; w++) {
        for (int k = 0; k < nt; k++)
            ws[k] = w;
        for (int v = 1; v < cfg->nvariants; v++)
            for (int row = 0; row <= nt; row++) {
                struct experiment_change ch;
                if (row == nt && nt < 2)
                    continue; /* the Average of one row is that row */
                int tv[1] = { row < nt ? cfg->threads[row] : 0 };
                uint64_t seed = report_cell_seed(cfg, w, v, row, m);
                if (experiment_change_cfg(cfg, res, m, v, ws, row < nt ? tv : cfg->threads,
                                      row < nt ? 1 : nt, seed, &ch) < 0 ||
                    !slower_than(&ch, pct))
                    continue;
                add_slower_line(why, cfg->variants[v].name, cfg->variants[0].name,
                                cfg->workloads[w], row < nt ? tv[0] : 0, &ch,
                                m == METRIC_INSTR ? "instructions per transaction" : "tps");
                n++;
            }
    }
    free(ws);
    return n;
}

/* Print the --fail-if-slower verdict (the slower cells in why, n of them) on stderr. */
static int print_fail_if_slower(double pct, int n, const struct strbuf *why, const char *than)
{
    if (!n) {
        fprintf(stderr, "--fail-if-slower=%g: no tps cell significantly slower than %s by more "
                        "than %g%%\n",
                pct, than, pct);
        return 0;
    }
    fprintf(stderr, "--fail-if-slower=%g: %d tps cell%s significantly slower than %s by more "
                    "than %g%% (exit 3):\n",
            pct, n, n == 1 ? "" : "s", than, pct);
    for (const char *line = why->len ? why->buf : ""; *line;) {
        const char *nl = strchr(line, '\n');
        int len = nl ? (int)(nl - line) : (int)strlen(line);
        fprintf(stderr, "  %.*s\n", len, line);
        line += len + (nl ? 1 : 0);
    }
    return 1;
}

int report_fail_if_slower(const struct experiment_config *cfg, const struct experiment_result *res,
                          double pct)
{
    struct strbuf why = STRBUF_INIT;
    int n = report_slower(cfg, res, pct, &why);
    char *than = xasprintf("the baseline %s", cfg->variants[0].name);
    int rc = print_fail_if_slower(pct, n, &why, than);
    free(than);
    strbuf_release(&why);
    return rc;
}

int report_compare_slower(const struct experiment_loaded *a, const struct experiment_loaded *b,
                          double pct, struct strbuf *why)
{
    int nc, n = 0;
    if ((a->cfg.measure == MEASURE_INSTRUCTIONS) != (b->cfg.measure == MEASURE_INSTRUCTIONS))
        return 0; /* time against instructions: nothing comparable (the report says so) */
    /* instruction mode: "slower" = significantly more instructions per transaction */
    enum experiment_metric m = a->cfg.measure == MEASURE_INSTRUCTIONS ? METRIC_INSTR : METRIC_TPS;
    struct compare_cell *cells = compare_cells(&a->cfg, &b->cfg, &nc);
    char *na = xasprintf("experiment %lld", (long long)a->cfg.experiment_id);
    char *nb = NULL;
    for (int i = 0; i < nc; i++) {
        const struct compare_cell *c = &cells[i];
        int n1, n2;
        struct experiment_change ch;
        double *x1 = compare_values(a, c->va, c->wa, c->threads, m, &n1);
        double *x2 = compare_values(b, c->vb, c->wb, c->threads, m, &n2);
        compare_change(x1, n1, x2, n2, m, compare_seed(a, b, i, m), &ch);
        free(x1);
        free(x2);
        if (!slower_than(&ch, pct))
            continue;
        free(nb);
        nb = xasprintf("%s in experiment %lld", c->variant, (long long)b->cfg.experiment_id);
        add_slower_line(why, nb, na, c->workload, c->threads, &ch,
                        m == METRIC_INSTR ? "instructions per transaction" : "tps");
        n++;
    }
    free(nb);
    free(na);
    free(cells);
    return n;
}

int report_compare_fail_if_slower(const struct experiment_loaded *a,
                                  const struct experiment_loaded *b, double pct)
{
    struct strbuf why = STRBUF_INIT;
    int n = report_compare_slower(a, b, pct, &why);
    char *than = xasprintf("the same cell of experiment %lld", (long long)a->cfg.experiment_id);
    int rc = print_fail_if_slower(pct, n, &why, than);
    free(than);
    strbuf_release(&why);
    return rc;
}
