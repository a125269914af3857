/* exam: the measured workloads' hottest functions against each trainer's profile (see
 * exam.h). */
#include "pgo/exam.h"
#include "pgo/stages.h"
#include "server/server.h"
#include "util/argvec.h"
#include "util/fs.h"
#include "util/progress.h"
#include "util/strbuf.h"
#include "util/util.h"

#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the comparison (pure) ------------------------------------------------------------ */

double exam_log_transactions(const char *text)
{
    double sum = 0;
    for (const char *at = text; (at = strstr(at, "transactions:"));) {
        at += strlen("transactions:");
        sum += strtod(at, NULL);
    }
    return sum;
}

static int cmp_count_desc(const void *a, const void *b)
{
    const struct fn_count *x = *(const struct fn_count *const *)a;
    const struct fn_count *y = *(const struct fn_count *const *)b;
    return x->count < y->count ? 1 : x->count > y->count ? -1 : 0;
}

int exam_top(const struct fn_counts *c, int n, const struct fn_count ***out)
{
    const struct fn_count **all = xcalloc((size_t)c->n + 1, sizeof(*all));
    unsigned long long total = 0;
    for (int i = 0; i < c->n; i++)
        total += c->v[i].count;
    int k = 0;
    for (int i = 0; i < c->n; i++) /* a trace (start-up code) is not what the workload runs */
        if (c->v[i].count > 0 && c->v[i].count >= total / EXAM_TRACE)
            all[k++] = &c->v[i];
    qsort(all, (size_t)k, sizeof(*all), cmp_count_desc);
    *out = all;
    return k < n ? k : n;
}

void exam_compare(const struct fn_counts *exam, double exam_txns, const struct fn_counts *train,
                  double train_txns, struct pgo_exam *e)
{
    const struct fn_count **top;
    int n = exam_top(exam, EXAM_TOP, &top);
    e->rows = xcalloc((size_t)n + 1, sizeof(*e->rows));
    e->nrows = n;
    e->ncold = 0;
    e->exam_txns = exam_txns;
    e->train_txns = train_txns;
    for (int i = 0; i < n; i++) {
        const struct fn_count *t = fn_counts_find(train, top[i]);
        struct exam_row *r = &e->rows[i];
        assert(top[i]->display != NULL);
        r->function = xstrdup(top[i]->display);
        r->exam_per_txn = exam_txns > 0 ? (double)top[i]->count / exam_txns
                                        : (double)top[i]->count;
        double tc = t ? (double)t->count : 0;
        r->train_per_txn = train_txns > 0 ? tc / train_txns : tc;
        r->cold = tc == 0;
        e->ncold += r->cold;
    }
    free(top);
}

void pgo_exam_release(struct pgo_exam *e)
{
    for (int i = 0; i < e->nrows; i++)
        free(e->rows[i].function);
    free(e->rows);
    free(e->workload);
    free(e->trainer);
    memset(e, 0, sizeof(*e));
}

/* ---- the exam run ----------------------------------------------------------------------- */

/* Is the trainer's whole mix the workload w (its profile is w's exam profile)? */
static bool trainer_is(const struct pgo_trainer *t, const char *w)
{
    return !t->suite && t->workloads[0] && !t->workloads[1] && !strcmp(t->workloads[0], w);
}

/* What an exam profile depends on: the instrumented build and the training settings. */
static char *exam_stamp(const struct pgo_pipeline *p, const char *w)
{
    struct strbuf r = STRBUF_INIT;
    strbuf_init(&r, 0);
    for (char **o = p->recipe.train_options; o && *o; o++)
        strbuf_addf(&r, "option %s\n", *o);
    char *rkey = path_key(r.buf);
    strbuf_release(&r);
    char *s = xasprintf("instrumented-sha256: %s\nworkload: %s\ntime: %d\nthreads: %d\n"
                        "tables: %d\ntable-size: %d\nrecipe-training: %s\n",
                        p->builds[1].sha256, w, p->rq->train_time, p->rq->train_threads,
                        p->rq->tables, p->rq->table_size, rkey);
    free(rkey);
    return s;
}

/* Where w's exam keeps its profile, stamp, log and names: ROOT/exam-W[.stamp|.log|...]. */
static char *exam_path(const struct pgo_pipeline *p, const char *w, const char *suffix)
{
    return xasprintf("%s/exam-%s%s", p->root, w, suffix);
}

/* Run w on the instrumented build into its exam profile, unless the one there is of the
 * same stamp. 0 or -1. */
static int exam_profile(struct pgo_pipeline *p, const char *w)
{
    char *stamp = exam_stamp(p, w), *stamp_path = exam_path(p, w, ".stamp");
    char *dir = exam_path(p, w, ""), *log = exam_path(p, w, ".log");
    char *profdata = exam_path(p, w, ".profdata");
    int rc = -1;
    if (!p->rq->rebuild && stamp_matches(stamp_path, stamp) && is_dir(dir)) {
        progress_phase_done("exam: %s, the profile of an earlier run (cached)", w);
        rc = 0;
        goto out;
    }
    uint64_t t0 = now_ns();
    unlink(stamp_path);
    char *names = exam_path(p, w, ".names");
    unlink(names);
    free(names);
    if (profile_wipe(p->profile_raw) < 0 || dir_share_files(p->profile_raw) < 0 ||
        stamp_write(log, "") < 0)
        goto out;
    char *name = xasprintf("the measured workload %s (its exam profile)", w);
    char *mix[] = { (char *)w, NULL };
    struct pgo_trainer x = { .name = name, .workloads = mix };
    int trc = pgo_train_server(p, &x, p->builds[1].prefix, log);
    free(name);
    if (trc < 0 || *p->interrupted || profile_move(p->profile_raw, dir) < 0) {
        profile_wipe(p->profile_raw);
        remove_tree(dir);
        goto out;
    }
    if (p->cc.family != CC_GCC) {
        struct profile_info info = { 0 };
        int crc = profile_collect(&p->cc, dir, profdata, &info);
        profile_info_release(&info);
        if (crc < 0) {
            remove_tree(dir);
            goto out;
        }
    }
    rc = stamp_write(stamp_path, stamp);
    if (rc == 0)
        progress_phase_done("exam: %s on the instrumented build in %.0f s (its profile against "
                            "the trainers')", w, (double)(now_ns() - t0) / 1e9);
out:
    free(stamp);
    free(stamp_path);
    free(dir);
    free(log);
    free(profdata);
    return rc;
}

/* GCC: name the exam's top functions from the names file a fresh exam wrote (the notes
 * under the instrumented build directory can be gone by a later run: a recipe that builds
 * every phase in one directory), else from the notes, then keep them in that file. */
static int name_top(struct pgo_pipeline *p, const char *w, const struct fn_count **top, int n)
{
    char *path = exam_path(p, w, ".names");
    struct strbuf sb = STRBUF_INIT;
    strbuf_init(&sb, 0);
    if (strbuf_read_file(&sb, path) == 0)
        for (int i = 0; i < n; i++) {
            char *key = xasprintf("%s %lu ", top[i]->file, top[i]->ident);
            const char *at = strstr(sb.buf, key);
            if (at && (at == sb.buf || at[-1] == '\n')) {
                at += strlen(key);
                ((struct fn_count *)top[i])->name = xstrndup(at, strcspn(at, "\n"));
            }
            free(key);
        }
    strbuf_release(&sb);
    struct fn_count **fns = xcalloc((size_t)n + 1, sizeof(*fns));
    for (int i = 0; i < n; i++)
        fns[i] = (struct fn_count *)top[i];
    int rc = fn_counts_name_gcc(&p->cc, p->builds[1].build_dir, fns, n);
    strbuf_init(&sb, 0);
    for (int i = 0; i < n && rc == 0; i++)
        if (fns[i]->name)
            strbuf_addf(&sb, "%s %lu %s\n", fns[i]->file, fns[i]->ident, fns[i]->name);
    if (rc == 0 && sb.len)
        stamp_write(path, sb.buf);
    strbuf_release(&sb);
    free(fns);
    free(path);
    return rc;
}

/* The transactions of a bench log (0 when it cannot be read). */
static double log_txns(const char *path)
{
    struct strbuf sb = STRBUF_INIT;
    strbuf_init(&sb, 0);
    double n = strbuf_read_file(&sb, path) == 0 ? exam_log_transactions(sb.buf) : 0;
    strbuf_release(&sb);
    return n;
}

/* The trainer's profile as counts. */
static int trainer_counts(struct pgo_pipeline *p, const struct pgo_trainer *t,
                          struct fn_counts *c)
{
    return fn_counts_read(&p->cc, t->profile_dir, t->profdata, c);
}

/* w against every trainer that is not w itself. */
static int exam_workload(struct pgo_pipeline *p, const char *w)
{
    const struct pgo_trainer *own = NULL;
    bool needed = false;
    for (int i = 0; i < p->ntrainers; i++) {
        if (trainer_is(&p->trainers[i], w))
            own = &p->trainers[i];
        else
            needed = true;
    }
    if (!needed)
        return 0;
    char *dir = own ? xstrdup(own->profile_dir) : exam_path(p, w, "");
    char *profdata = own ? (own->profdata ? xstrdup(own->profdata) : NULL)
                         : exam_path(p, w, ".profdata");
    char *log = own ? xasprintf("%s/train-%s.log", p->root, own->key) : exam_path(p, w, ".log");
    struct fn_counts exam = { 0 };
    const struct fn_count **top = NULL;
    int rc = -1;
    if (!own && exam_profile(p, w) < 0)
        goto out;
    progress("exam %s: reading its profile", w);
    if (fn_counts_read(&p->cc, dir, p->cc.family == CC_GCC ? NULL : profdata, &exam) < 0)
        goto out;
    int n = exam_top(&exam, EXAM_TOP, &top);
    if (p->cc.family == CC_GCC && name_top(p, w, top, n) < 0)
        goto out;
    fn_counts_describe((struct fn_count **)top, n);
    double exam_txns = log_txns(log);
    for (int i = 0; i < p->ntrainers; i++) {
        const struct pgo_trainer *t = &p->trainers[i];
        if (t == own)
            continue;
        struct fn_counts tc = { 0 };
        if (trainer_counts(p, t, &tc) < 0) {
            fn_counts_release(&tc);
            goto out;
        }
        char *tlog = xasprintf("%s/train-%s.log", p->root, t->key);
        p->exams = xrealloc(p->exams, (size_t)(p->nexams + 1) * sizeof(*p->exams));
        struct pgo_exam *e = &p->exams[p->nexams++];
        memset(e, 0, sizeof(*e));
        e->workload = xstrdup(w);
        e->trainer = xstrdup(t->name);
        exam_compare(&exam, exam_txns, &tc, t->suite ? 0 : log_txns(tlog), e);
        free(tlog);
        fn_counts_release(&tc);
    }
    rc = 0;
out:
    progress_done();
    free(top);
    fn_counts_release(&exam);
    free(dir);
    free(profdata);
    free(log);
    return rc;
}

int pgo_exam_run(struct pgo_pipeline *p)
{
    if (p->library || !p->rq->measure || p->builds[1].skip)
        return 0;
    for (int w = 0; w < p->rq->nbench; w++)
        if (exam_workload(p, p->rq->bench[w]) < 0 || *p->interrupted)
            return -1;
    return 0;
}

/* ---- printing --------------------------------------------------------------------------- */

/* "f, g and 3 more": the cold functions of e, at most 4 named. Caller frees. */
static char *cold_list(const struct pgo_exam *e)
{
    struct strbuf sb = STRBUF_INIT;
    strbuf_init(&sb, 0);
    int named = 0;
    for (int i = 0; i < e->nrows; i++) {
        if (!e->rows[i].cold)
            continue;
        if (named == 4) {
            strbuf_addf(&sb, " and %d more", e->ncold - 4);
            break;
        }
        strbuf_addf(&sb, "%s%s", named ? ", " : "", e->rows[i].function);
        named++;
    }
    return strbuf_detach(&sb);
}

/* "warning: trainer T never ran ...", without indent or newline. Caller frees. */
static char *warn_text(const struct pgo_pipeline *p, const struct pgo_exam *e)
{
    assert(e->ncold > 0);
    char *list = cold_list(e);
    char *text = xasprintf("warning%s%s: trainer %s never ran %d of the measured %s's %d hottest "
                           "functions (%s): its pgo build optimizes them as cold code",
                           p->label ? " " : "", p->label ? p->label : "", e->trainer, e->ncold,
                           e->workload, e->nrows, list);
    free(list);
    return text;
}

static void warn_line(const struct pgo_pipeline *p, const struct pgo_exam *e)
{
    char *text = warn_text(p, e);
    printf("  %s\n", text);
    free(text);
}

/* A count per transaction in 14 columns: "0" for none, "<0.1" for a trace. */
static const char *per_txn(double v, char buf[32])
{
    if (v == 0)
        snprintf(buf, 32, "%14s", "0");
    else if (v < 0.1)
        snprintf(buf, 32, "%14s", "<0.1");
    else
        snprintf(buf, 32, "%14.1f", v);
    return buf;
}

static void print_one(const struct pgo_pipeline *p)
{
    for (int i = 0; i < p->nexams; i++) {
        const struct pgo_exam *e = &p->exams[i];
        int wide = (int)strlen(e->workload) > 14 ? (int)strlen(e->workload) : 14;
        printf("  %-13s %s%s%s against trainer %s: its %d hottest functions on the instrumented "
               "build, counter sums per %s\n", i ? "" : "exam", p->label ? p->label : "",
               p->label ? " " : "", e->workload, e->trainer, e->nrows,
               e->train_txns > 0 ? "transaction" : "run (the trainer has no transactions)");
        printf("  %-13s   %-44s %*s %14s\n", "", "function", wide, e->workload, "training");
        for (int r = 0; r < e->nrows; r++) {
            const struct exam_row *x = &e->rows[r];
            char a[32], b[32];
            printf("  %-13s   %-44.44s %*s %s%s\n", "", x->function, wide,
                   per_txn(x->exam_per_txn, a), per_txn(x->train_per_txn, b),
                   x->cold ? "  cold" : "");
        }
        if (e->ncold)
            warn_line(p, e);
    }
}

void pgo_exam_print(const struct pgo_pipeline *p)
{
    print_one(p);
    for (int g = 0; g < p->ngroups; g++)
        print_one(&p->groups[g]);
}

void pgo_exam_warn(const struct pgo_pipeline *p)
{
    for (int g = -1; g < p->ngroups; g++) {
        const struct pgo_pipeline *q = g < 0 ? p : &p->groups[g];
        for (int i = 0; i < q->nexams; i++)
            if (q->exams[i].ncold)
                warn_line(q, &q->exams[i]);
    }
}

json_t *pgo_exam_json(const struct pgo_pipeline *p)
{
    json_t *all = json_array();
    for (int g = -1; g < p->ngroups; g++) {
        const struct pgo_pipeline *q = g < 0 ? p : &p->groups[g];
        for (int i = 0; i < q->nexams; i++) {
            const struct pgo_exam *e = &q->exams[i];
            json_t *rows = json_array();
            for (int r = 0; r < e->nrows; r++)
                json_array_append_new(rows, json_pack("{s:s,s:f,s:f,s:b}", "function",
                                                      e->rows[r].function, "measured_per_txn",
                                                      e->rows[r].exam_per_txn, "training_per_txn",
                                                      e->rows[r].train_per_txn, "cold",
                                                      e->rows[r].cold));
            json_t *o = json_pack("{s:s,s:s,s:f,s:f,s:i,s:o}", "workload", e->workload,
                                  "trainer", e->trainer, "measured_transactions", e->exam_txns,
                                  "training_transactions", e->train_txns, "cold", e->ncold,
                                  "functions", rows);
            if (!o)
                die("out of memory");
            if (q->label)
                json_object_set_new(o, "group", json_string(q->label));
            if (e->ncold) {
                char *text = warn_text(q, e);
                json_object_set_new(o, "warning", json_string(text));
                free(text);
            }
            json_array_append_new(all, o);
        }
    }
    return all;
}
