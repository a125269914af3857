/* side: two variants' profiles side by side over their rounds, in the seed-002 shape, with
 * each row's spread across rounds and a mark when it is not stable (see profile.h). */
#include "profile/profile.h"
#include "util/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One row of a side: a function (or DSO) over the rounds. */
struct row {
    const char *name, *dso;
    double share;        /* % of the side's samples, pooled over the rounds */
    double min, max;     /* % in the round where it was lowest / highest */
    double per_txn;      /* instructions per transaction (instruction profiles), else NAN */
    int rank;            /* 1-based, by share */
};

struct entry {
    const char *name, *dso;
    int run;
    uint64_t count;
};

static int entry_cmp(const void *a, const void *b)
{
    const struct entry *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : x->run - y->run;
}

static int row_cmp(const void *a, const void *b)
{
    const struct row *x = a, *y = b;
    if (x->share != y->share)
        return x->share > y->share ? -1 : 1;
    return strcmp(x->name, y->name);
}

bool profile_unstable(double share_pct, double min_pct, double max_pct, int nrounds)
{
    if (nrounds < 2)
        return false;
    double lim = PROFILE_UNSTABLE_REL * share_pct;
    if (lim < PROFILE_UNSTABLE_PP)
        lim = PROFILE_UNSTABLE_PP;
    return max_pct - min_pct > lim;
}

/* The rows of side s, by function (dsos false) or by DSO, sorted by share. */
static struct row *side_rows(const struct profile_side *s, bool dsos, int *nrows)
{
    int n = 0;
    for (int r = 0; r < s->nruns; r++)
        n += dsos ? s->runs[r].ndsos : s->runs[r].nfns;
    struct entry *e = xcalloc((size_t)(n ? n : 1), sizeof(*e));
    uint64_t total = 0;
    double txns = 0;
    n = 0;
    for (int r = 0; r < s->nruns; r++) {
        const struct profile_run *pr = &s->runs[r];
        int k = dsos ? pr->ndsos : pr->nfns;
        const struct profile_fn *f = dsos ? pr->dsos : pr->fns;
        for (int i = 0; i < k; i++)
            e[n++] = (struct entry){ f[i].name, f[i].dso, r, f[i].count };
        total += pr->samples;
        txns += pr->transactions;
    }
    qsort(e, (size_t)n, sizeof(*e), entry_cmp);
    struct row *rows = xcalloc((size_t)(n ? n : 1), sizeof(*rows));
    double *round_share = xcalloc((size_t)(s->nruns ? s->nruns : 1), sizeof(double));
    int nr = 0;
    for (int i = 0; i < n;) {
        int j = i;
        uint64_t sum = 0;
        memset(round_share, 0, sizeof(double) * (size_t)s->nruns);
        for (; j < n && !strcmp(e[j].name, e[i].name); j++) {
            sum += e[j].count;
            const struct profile_run *pr = &s->runs[e[j].run];
            if (pr->samples)
                round_share[e[j].run] += 100.0 * (double)e[j].count / (double)pr->samples;
        }
        struct row *rw = &rows[nr++];
        rw->name = e[i].name;
        rw->dso = e[i].dso;
        rw->share = total ? 100.0 * (double)sum / (double)total : 0;
        rw->min = INFINITY;
        rw->max = -INFINITY;
        for (int r = 0; r < s->nruns; r++) {
            rw->min = fmin(rw->min, round_share[r]);
            rw->max = fmax(rw->max, round_share[r]);
        }
        rw->per_txn = txns > 0 ? (double)sum / txns : NAN;
        i = j;
    }
    free(round_share);
    free(e);
    qsort(rows, (size_t)nr, sizeof(*rows), row_cmp);
    for (int i = 0; i < nr; i++)
        rows[i].rank = i + 1;
    *nrows = nr;
    return rows;
}

static const struct row *find_row(const struct row *rows, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(rows[i].name, name))
            return &rows[i];
    return NULL;
}

static void cell(FILE *out, const struct row *r, int nrounds, bool dso, int width)
{
    if (!r) {
        fprintf(out, "%*s", 24 + width, "");
        return;
    }
    char name[256];
    snprintf(name, sizeof(name), dso ? "<%s>" : "%s", r->name);
    fprintf(out, "%7.3f [%6.3f-%6.3f]%c %-*.*s", r->share, r->min, r->max,
            profile_unstable(r->share, r->min, r->max, nrounds) ? '!' : ' ', width, width, name);
}

static void side_table(FILE *out, const struct profile_side *a, const struct profile_side *b,
                       const struct row *ra, int na, const struct row *rb, int nb, int top,
                       bool dso, const char *unit)
{
    int n = na > nb ? na : nb;
    if (n > top)
        n = top;
    fprintf(out, "%-7s %-15s  %-30.30s | %-7s %-15s  %s\n", unit, "[round range]", a->variant,
            unit, "[round range]", b->variant);
    for (int i = 0; i < n; i++) {
        cell(out, i < na ? &ra[i] : NULL, a->nruns, dso, 30);
        fprintf(out, " | ");
        cell(out, i < nb ? &rb[i] : NULL, b->nruns, dso, 30);
        fprintf(out, "\n");
    }
}

static struct profile_share share_of(const struct row *r, int nrounds)
{
    struct profile_share s = { .per_txn = NAN };
    if (!r)
        return s;
    s.present = true;
    s.share = r->share;
    s.min = r->min;
    s.max = r->max;
    s.per_txn = r->per_txn;
    s.rank = r->rank;
    s.unstable = profile_unstable(r->share, r->min, r->max, nrounds);
    return s;
}

static int diff_cmp(const void *x, const void *y)
{
    const struct profile_diff_row *p = x, *q = y;
    double a = fabs(p->change), b = fabs(q->change);
    if (a != b)
        return a > b ? -1 : 1;
    return strcmp(p->name, q->name);
}

/* The union of both sides' top `top` rows, by the size of the change. */
static struct profile_diff_row *diff_rows(const struct row *ra, int na, int nruns_a,
                                          const struct row *rb, int nb, int nruns_b, int top,
                                          int *nout)
{
    struct profile_diff_row *d = xcalloc((size_t)(2 * top + 1), sizeof(*d));
    int nd = 0;
    for (int s = 0; s < 2; s++) {
        const struct row *rows = s ? rb : ra;
        int n = s ? nb : na;
        for (int i = 0; i < n && i < top; i++) {
            bool seen = false;
            for (int k = 0; k < nd && !seen; k++)
                seen = !strcmp(d[k].name, rows[i].name);
            if (seen)
                continue;
            struct profile_diff_row *x = &d[nd++];
            x->name = rows[i].name;
            x->dso = rows[i].dso;
            x->a = share_of(find_row(ra, na, rows[i].name), nruns_a);
            x->b = share_of(find_row(rb, nb, rows[i].name), nruns_b);
            x->change = x->b.share - x->a.share;
            double range_a = x->a.present ? x->a.max - x->a.min : 0;
            double range_b = x->b.present ? x->b.max - x->b.min : 0;
            x->within_noise = nruns_a >= 2 && nruns_b >= 2 &&
                              fabs(x->change) <= fmax(range_a, range_b);
        }
    }
    qsort(d, (size_t)nd, sizeof(*d), diff_cmp);
    *nout = nd;
    return d;
}

static void fmt_share(char *buf, size_t n, const struct profile_share *s)
{
    if (!s->present)
        snprintf(buf, n, "%7.3f %-16s", 0.0, "(absent)");
    else
        snprintf(buf, n, "%7.3f [%6.3f-%6.3f]%c", s->share, s->min, s->max,
                 s->unstable ? '!' : ' ');
}

static uint64_t side_samples(const struct profile_side *s)
{
    uint64_t n = 0;
    for (int i = 0; i < s->nruns; i++)
        n += s->runs[i].samples;
    return n;
}

void profile_diff_make(struct profile_diff *d, const struct profile_side *a,
                       const struct profile_side *b, int top)
{
    memset(d, 0, sizeof(*d));
    const struct profile_run *r0 = a->nruns ? &a->runs[0] : b->nruns ? &b->runs[0] : NULL;
    d->event = r0 ? r0->event : "";
    d->frequency = r0 ? r0->frequency : 0;
    d->kernel = r0 && r0->kernel;
    d->nruns_a = a->nruns;
    d->nruns_b = b->nruns;
    d->samples_a = side_samples(a);
    d->samples_b = side_samples(b);
    for (int dsos = 0; dsos < 2; dsos++) {
        int na, nb, n;
        struct row *ra = side_rows(a, dsos, &na), *rb = side_rows(b, dsos, &nb);
        struct profile_diff_row *rows = diff_rows(ra, na, a->nruns, rb, nb, b->nruns, top, &n);
        if (dsos) {
            d->dsos = rows;
            d->ndsos = n;
        } else {
            d->fns = rows;
            d->nfns = n;
        }
        free(ra);
        free(rb);
    }
}

void profile_diff_release(struct profile_diff *d)
{
    free(d->dsos);
    free(d->fns);
    memset(d, 0, sizeof(*d));
}

void profile_print_side_by_side(FILE *out, const char *title, const struct profile_side *a,
                                const struct profile_side *b, int top)
{
    int nfa, nfb, nda, ndb;
    struct row *fa = side_rows(a, false, &nfa), *fb = side_rows(b, false, &nfb);
    struct row *da = side_rows(a, true, &nda), *db = side_rows(b, true, &ndb);
    const struct profile_run *r0 = a->nruns ? &a->runs[0] : b->nruns ? &b->runs[0] : NULL;
    bool instr = r0 && !strcmp(r0->event, "instructions");
    const char *unit = instr ? "Instr%" : "Samples%";
    uint64_t sa = side_samples(a), sb = side_samples(b);

    fprintf(out, "\n%s\n", title);
    if (instr)
        fprintf(out, "Exact profile: instructions per function (callgrind, self cost, the marginal "
                     "N - N/5 events), %% of the run's instructions\n");
    else if (r0)
        fprintf(out, "Sampled profile: %s at %d Hz, %s; %s %llu samples in %d round%s, %s %llu "
                     "in %d\n", r0->event, r0->frequency,
                r0->kernel ? "user + kernel" : "user space only (kernel left out)", a->variant,
                (unsigned long long)sa, a->nruns, a->nruns == 1 ? "" : "s", b->variant,
                (unsigned long long)sb, b->nruns);
    fprintf(out, "%% pooled over the rounds; [round range] = lowest-highest round; ! = not "
                 "stable across rounds (range > max(%.1f points, %.0f%% of the share))\n",
            PROFILE_UNSTABLE_PP, 100 * PROFILE_UNSTABLE_REL);
    if (a->nruns < 2 || b->nruns < 2)
        fprintf(out, "(a side with 1 round: no stability marks)\n");

    fprintf(out, "\nBy DSO\n");
    side_table(out, a, b, da, nda, db, ndb, top, true, unit);
    fprintf(out, "\nTop %d functions\n", top);
    side_table(out, a, b, fa, nfa, fb, nfb, top, false, unit);

    /* the diff view: the union of both top lists, by the size of the change */
    int nd;
    struct profile_diff_row *d = diff_rows(fa, nfa, a->nruns, fb, nfb, b->nruns, top, &nd);
    fprintf(out, "\nDiff %s - %s (points of %s, largest change first; ~ = within the rounds' "
                 "range)\n", b->variant, a->variant, unit);
    fprintf(out, "%8s  %-25s  %-25s  %s%s\n", "change", a->variant, b->variant,
            instr ? "Ir/txn a -> b     " : "", "function (DSO)");
    for (int i = 0; i < nd; i++) {
        char ca[64], cb[64];
        fmt_share(ca, sizeof(ca), &d[i].a);
        fmt_share(cb, sizeof(cb), &d[i].b);
        fprintf(out, "%+8.3f%c %-25s  %-25s  ", d[i].change, d[i].within_noise ? '~' : ' ', ca,
                cb);
        if (instr)
            fprintf(out, "%8.0f -> %-8.0f ", d[i].a.present ? d[i].a.per_txn : 0,
                    d[i].b.present ? d[i].b.per_txn : 0);
        fprintf(out, "%s (%s)\n", d[i].name, d[i].dso);
    }
    /* the files' notes, once each */
    const struct profile_side *sides[2] = { a, b };
    int shown = 0;
    const char *seen[32];
    for (int s = 0; s < 2; s++)
        for (int r = 0; r < sides[s]->nruns; r++)
            for (int k = 0; k < sides[s]->runs[r].nnotes; k++) {
                const char *note = sides[s]->runs[r].notes[k];
                bool dup = false;
                for (int j = 0; j < shown && !dup; j++)
                    dup = !strcmp(seen[j], note);
                if (dup || shown == 32)
                    continue;
                seen[shown++] = note;
                fprintf(out, "note: %s\n", note);
            }
    free(d);
    free(fa);
    free(fb);
    free(da);
    free(db);
}
