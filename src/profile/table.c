/* table: a folded profile file read back into counts per function and per DSO (see
 * profile.h), and the one-profile top-N table of `bench --profile`. */
#include "profile/profile.h"
#include "profile/fold.h"
#include "util/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct fnmap {
    struct profile_fn *v;
    int n, cap;
    int *slots;  /* open addressing over v's indices, -1 empty */
    int nslots;
};

static uint64_t str_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ull;
    }
    return h;
}

static void fnmap_add(struct fnmap *m, const char *name, size_t namelen, const char *dso,
                      size_t dsolen, uint64_t count)
{
    if ((m->n + 1) * 2 > m->nslots) {
        int ns = m->nslots ? m->nslots * 2 : 1024;
        free(m->slots);
        m->slots = xmalloc(sizeof(int) * (size_t)ns);
        for (int i = 0; i < ns; i++)
            m->slots[i] = -1;
        m->nslots = ns;
        for (int i = 0; i < m->n; i++) {
            size_t j = str_hash(m->v[i].name) & (size_t)(ns - 1);
            while (m->slots[j] >= 0)
                j = (j + 1) & (size_t)(ns - 1);
            m->slots[j] = i;
        }
    }
    char *key = xstrndup(name, namelen);
    size_t j = str_hash(key) & (size_t)(m->nslots - 1);
    for (; m->slots[j] >= 0; j = (j + 1) & (size_t)(m->nslots - 1))
        if (!strcmp(m->v[m->slots[j]].name, key)) {
            m->v[m->slots[j]].count += count;
            free(key);
            return;
        }
    if (m->n == m->cap) {
        m->cap = m->cap ? m->cap * 2 : 256;
        m->v = xrealloc(m->v, sizeof(*m->v) * (size_t)m->cap);
    }
    m->v[m->n] = (struct profile_fn){ key, xstrndup(dso, dsolen), count };
    m->slots[j] = m->n++;
}

static int fn_cmp(const void *a, const void *b)
{
    const struct profile_fn *x = a, *y = b;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* The key of a leaf frame "dso`func": the function, or "[dso]" for an address without a
 * symbol (already in that form), so a function pairs across builds whatever its DSO's path. */
int profile_read(const char *folded_path, struct profile_run *r)
{
    char why[512];
    if (profile_read_quiet(folded_path, r, why, sizeof(why)) == 0)
        return 0;
    return error("%s", why);
}

int profile_read_quiet(const char *folded_path, struct profile_run *r, char *why, size_t n)
{
    memset(r, 0, sizeof(*r));
    FILE *f = fopen(folded_path, "r");
    if (!f) {
        snprintf(why, n, "profile %s: %s", folded_path, strerror(errno));
        return -1;
    }
    struct fnmap fns = { 0 }, dsos = { 0 };
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int lineno = 0, rc = -1;
    bool magic = false, ended = false;
    while ((len = getline(&line, &cap, f)) > 0) {
        lineno++;
        if (line[len - 1] != '\n') {
            snprintf(why, n, "profile %s is truncated (line %d has no end)", folded_path,
                     lineno);
            goto out;
        }
        line[--len] = 0;
        if (lineno == 1) {
            if (strcmp(line, "# pgolab-profile-folded 1")) {
                snprintf(why, n, "%s is not a pgolab folded profile (expected \"# "
                                 "pgolab-profile-folded 1\" first)", folded_path);
                goto out;
            }
            magic = true;
            continue;
        }
        if (line[0] == '#') {
            const char *h = line + 2;
            char word[64];
            if (!strcmp(line, "# end")) {
                ended = true;
                break;
            } else if (!strncmp(h, "event ", 6)) {
                free(r->event);
                r->event = xstrdup(h + 6);
            } else if (sscanf(h, "frequency %d", &r->frequency) == 1) {
            } else if (sscanf(h, "kernel %63s", word) == 1) {
                r->kernel = !strcmp(word, "yes");
            } else if (sscanf(h, "transactions %lf", &r->transactions) == 1) {
            } else if (!strncmp(h, "lost ", 5)) {
                r->lost = strtoull(h + 5, NULL, 10);
            } else if (!strncmp(h, "note ", 5)) {
                r->notes = xrealloc(r->notes, sizeof(char *) * (size_t)(r->nnotes + 1));
                r->notes[r->nnotes++] = xstrdup(h + 5);
            }
            continue;
        }
        char *sp = strrchr(line, ' ');
        char *end;
        unsigned long long count = sp ? strtoull(sp + 1, &end, 10) : 0;
        if (!sp || end == sp + 1 || *end) {
            snprintf(why, n, "profile %s: line %d is not \"STACK COUNT\"", folded_path,
                     lineno);
            goto out;
        }
        *sp = 0;
        const char *leaf = strrchr(line, ';');
        leaf = leaf ? leaf + 1 : line;
        const char *tick = strchr(leaf, '`');
        const char *dso = tick ? leaf : "[unknown]";
        size_t dsolen = tick ? (size_t)(tick - leaf) : strlen(dso);
        const char *fn = tick ? tick + 1 : leaf;
        char folded[512];  /* symbolization folded already; a file from elsewhere may not be */
        profile_fold_name(fn, folded, sizeof(folded));
        fnmap_add(&fns, folded, strlen(folded), dso, dsolen, count);
        fnmap_add(&dsos, dso, dsolen, dso, dsolen, count);
        r->samples += count;
    }
    if (!magic)
        snprintf(why, n, "profile %s is empty", folded_path);
    else if (!ended)
        snprintf(why, n, "profile %s is truncated (no \"# end\" line)", folded_path);
    else
        rc = 0;
out:
    free(line);
    fclose(f);
    free(fns.slots);
    free(dsos.slots);
    r->fns = fns.v;
    r->nfns = fns.n;
    r->dsos = dsos.v;
    r->ndsos = dsos.n;
    if (r->fns)
        qsort(r->fns, (size_t)r->nfns, sizeof(*r->fns), fn_cmp);
    if (r->dsos)
        qsort(r->dsos, (size_t)r->ndsos, sizeof(*r->dsos), fn_cmp);
    if (!r->event)
        r->event = xstrdup("?");
    if (rc < 0)
        profile_run_release(r);
    return rc;
}

void profile_run_release(struct profile_run *r)
{
    for (int i = 0; i < r->nfns; i++) {
        free(r->fns[i].name);
        free(r->fns[i].dso);
    }
    for (int i = 0; i < r->ndsos; i++) {
        free(r->dsos[i].name);
        free(r->dsos[i].dso);
    }
    for (int i = 0; i < r->nnotes; i++)
        free(r->notes[i]);
    free(r->fns);
    free(r->dsos);
    free(r->notes);
    free(r->event);
    memset(r, 0, sizeof(*r));
}

void profile_print_top(FILE *out, const struct profile_run *r, int top)
{
    double tot = r->samples ? (double)r->samples : 1;
    bool instr = !strcmp(r->event, "instructions");
    fprintf(out, "\nCPU profile: %llu %s%s", (unsigned long long)r->samples,
            instr ? "instructions" : r->event, instr ? "" : " samples");
    if (r->frequency)
        fprintf(out, " at %d Hz", r->frequency);
    fprintf(out, ", %s", instr ? "user space (callgrind)" : r->kernel ? "user + kernel" :
            "user space only");
    if (r->lost)
        fprintf(out, ", %llu lost", (unsigned long long)r->lost);
    fprintf(out, "\n");
    for (int i = 0; i < r->nnotes; i++)
        fprintf(out, "note: %s\n", r->notes[i]);
    fprintf(out, "\n%8s  %s\n", instr ? "Instr%" : "Samples%", "DSO");
    for (int i = 0; i < r->ndsos && i < top; i++)
        fprintf(out, "%8.4f  <%s>\n", 100.0 * (double)r->dsos[i].count / tot, r->dsos[i].name);
    fprintf(out, "\n%8s  %-40s %s\n", instr ? "Instr%" : "Samples%", "function", "DSO");
    for (int i = 0; i < r->nfns && i < top; i++)
        fprintf(out, "%8.4f  %-40s %s\n", 100.0 * (double)r->fns[i].count / tot, r->fns[i].name,
                r->fns[i].dso);
}
