/* stored: `pgolab report`'s output of loaded experiments (report/stored.h). */
#include "report/stored.h"
#include "model/profiles.h"
#include "report/html.h"
#include "report/profile_diff.h"
#include "report/trainers.h"
#include "util/util.h"

#include <stdlib.h>

/* The side-by-side CPU profiles of experiment id as text (for the HTML page), or NULL when
 * it has none. */
static char *html_profiles(const char *results, int64_t id, const struct experiment_loaded *l)
{
    char *buf = NULL;
    size_t len = 0;
    if (!experiment_has_profiles(&l->res))
        return NULL;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        die("out of memory");
    char *dir = experiment_profile_dir(results, id);
    experiment_profile_report(f, &l->cfg, &l->res, dir, PROFILE_TOP_DEFAULT);
    free(dir);
    fclose(f);
    return buf;
}

int report_stored(struct strbuf *out, const struct report_stored_request *rq,
                  const struct experiment_loaded *a, const struct experiment_loaded *b,
                  bool *profile_done)
{
    enum report_format fmt = rq->fmt;
    *profile_done = false;
    if (b) {
        if (rq->html)
            report_html_compare(out, a, b, rq->chartjs);
        else
            report_compare(out, a, b, fmt);
    } else if (rq->html) {
        char *profiles = html_profiles(rq->results, rq->id, a);
        report_html_experiment(out, a, rq->chartjs, profiles);
        free(profiles);
    } else if (!rq->folded && !(rq->profile && (fmt == REPORT_CSV || fmt == REPORT_JSON))) {
        /* a pgo experiment with several trainers: the matrix pgo printed after the tables */
        const char **trainer_of = report_trainers_of(a);
        struct report_options ro = { .trust_table = rq->trust_table,
                                     .no_verdict = report_stored_verdict_after(rq, false) };
        report_experiment_opts(out, &a->cfg, &a->res, rq->shape, fmt, trainer_of, &ro);
        free(trainer_of);
        if (fmt == REPORT_TEXT || fmt == REPORT_MARKDOWN)
            report_exam_warnings(out, a);
    }
    if (!rq->profile || !(fmt == REPORT_MARKDOWN || fmt == REPORT_CSV || fmt == REPORT_JSON))
        return 0;
    /* the profiles as data (csv, json: they alone) or appended to the markdown report */
    if (!experiment_has_profiles(&a->res))
        return error("experiment %lld has no CPU profiles (it ran without --profile)",
                     (long long)rq->id);
    char *dir = experiment_profile_dir(rq->results, rq->id);
    int bad = report_profiles(out, fmt, &a->cfg, &a->res, dir, PROFILE_TOP_DEFAULT);
    free(dir);
    *profile_done = true;  /* not printed again as text */
    return bad ? 1 : 0;
}

bool report_stored_verdict_after(const struct report_stored_request *rq, bool compare)
{
    return !compare && !rq->html && rq->profile && !rq->folded && rq->fmt == REPORT_TEXT &&
           rq->shape != REPORT_RUNS;
}

int report_stored_profiles_text(FILE *out, const struct report_stored_request *rq,
                                const struct experiment_loaded *a)
{
    char *dir = experiment_profile_dir(rq->results, rq->id);
    int rc = 0;
    if (!experiment_has_profiles(&a->res)) {
        error("experiment %lld has no CPU profiles (it ran without --profile)",
              (long long)rq->id);
        rc = 1;
    } else if ((rq->folded ? experiment_profile_folded(out, &a->cfg, &a->res, dir)
                           : experiment_profile_report(out, &a->cfg, &a->res, dir,
                                                       PROFILE_TOP_DEFAULT)) > 0) {
        rc = 1;  /* a profile file was missing or truncated: said, the rest printed */
    }
    free(dir);
    fflush(out);
    return rc;
}
