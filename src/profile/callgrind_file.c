/* callgrind_file: self instruction counts per function from a callgrind output file, and the
 * exact profile of an instruction-mode run as a folded file (see profile.h). The format is
 * valgrind's "Callgrind Format Specification": "ob=", "fn=" (with "(id) name" compression)
 * set the current object and function; a cost line is positions then event counts; the one
 * cost line after "calls=" is the inclusive cost of that call, not the caller's own. */
#include "profile/profile.h"
#include "profile/fold.h"
#include "util/util.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A compressed name table ("(id) name" defines, "(id)" refers). */
struct names {
    char **v;
    int n;
};

static const char *name_ref(struct names *t, const char *s)
{
    if (*s != '(')
        return s;
    char *end;
    long id = strtol(s + 1, &end, 10);
    if (*end != ')' || id < 0 || id > 10000000)
        return s;
    const char *name = end + 1;
    while (*name == ' ')
        name++;
    if (id >= t->n) {
        t->v = xrealloc(t->v, sizeof(char *) * (size_t)(id + 1));
        memset(t->v + t->n, 0, sizeof(char *) * (size_t)(id + 1 - t->n));
        t->n = (int)id + 1;
    }
    if (*name) {
        free(t->v[id]);
        t->v[id] = xstrdup(name);
    }
    return t->v[id] ? t->v[id] : "???";
}

static void names_free(struct names *t)
{
    for (int i = 0; i < t->n; i++)
        free(t->v[i]);
    free(t->v);
}

/* The index of key in c (added with count 0 when new). */
static int key_index(struct profile_counts *c, const char *key, int *cap)
{
    int i;
    for (i = c->n - 1; i >= 0 && strcmp(c->keys[i], key); i--)
        ;
    if (i < 0) {
        i = c->n;
        if (c->n == *cap) {
            *cap = *cap ? *cap * 2 : 256;
            c->keys = xrealloc(c->keys, sizeof(char *) * (size_t)*cap);
            c->counts = xrealloc(c->counts, sizeof(uint64_t) * (size_t)*cap);
        }
        c->keys[c->n] = xstrdup(key);
        c->counts[c->n++] = 0;
    }
    return i;
}

int profile_callgrind_read(const char *cg_path, struct profile_counts *out)
{
    memset(out, 0, sizeof(*out));
    FILE *f = fopen(cg_path, "r");
    if (!f)
        return error("cannot read the callgrind output %s: %s", cg_path, strerror(errno));
    struct names obs = { 0 }, fns = { 0 };
    char *line = NULL, key[1024], fold[512];
    size_t lcap = 0;
    int cap = 0, npos = 1, cur = -1;
    bool skip_next = false;
    const char *ob = "???";
    key[0] = 0;
    while (getline(&line, &lcap, f) > 0) {
        line[strcspn(line, "\n")] = 0;
        char c = line[0];
        if (isdigit((unsigned char)c) || c == '+' || c == '-' || c == '*') {
            if (skip_next) {  /* the inclusive cost of the call above */
                skip_next = false;
                continue;
            }
            if (cur < 0)
                continue;
            char *p = line;
            for (int i = 0; i < npos; i++) {  /* the positions */
                while (*p == ' ')
                    p++;
                p += strcspn(p, " ");
            }
            char *end;
            unsigned long long v = strtoull(p, &end, 10);  /* the first event: Ir */
            if (end != p) {
                out->counts[cur] += v;
                out->total += v;
            }
        } else if (!strncmp(line, "positions:", 10)) {
            npos = 0;
            for (char *t = strtok(line + 10, " "); t; t = strtok(NULL, " "))
                npos++;
            if (!npos)
                npos = 1;
        } else if (!strncmp(line, "ob=", 3)) {
            ob = name_ref(&obs, line + 3);
        } else if (!strncmp(line, "cob=", 4)) {
            name_ref(&obs, line + 4);  /* defines a name; the callee's object */
        } else if (!strncmp(line, "fn=", 3)) {
            const char *fn = name_ref(&fns, line + 3);
            const char *base = strrchr(ob, '/');
            profile_fold_name(fn, fold, sizeof(fold));
            snprintf(key, sizeof(key), "%s`%s", base ? base + 1 : ob, fold);
            cur = key_index(out, key, &cap);
        } else if (!strncmp(line, "cfn=", 4)) {
            name_ref(&fns, line + 4);
        } else if (!strncmp(line, "calls=", 6)) {
            skip_next = true;
        }
    }
    free(line);
    fclose(f);
    names_free(&obs);
    names_free(&fns);
    if (!out->n)
        return error("%s has no function costs (not a callgrind output?)", cg_path);
    return 0;
}

void profile_counts_merge(struct profile_counts *into, const struct profile_counts *x)
{
    int cap = into->n;  /* key_index grows the arrays when n reaches cap */
    for (int i = 0; i < x->n; i++) {
        int k = key_index(into, x->keys[i], &cap);
        into->counts[k] += x->counts[i];
    }
    into->total += x->total;
}

void profile_counts_release(struct profile_counts *c)
{
    for (int i = 0; i < c->n; i++)
        free(c->keys[i]);
    free(c->keys);
    free(c->counts);
    memset(c, 0, sizeof(*c));
}

int profile_write_instructions(const char *folded_path, const struct profile_counts *small,
                               const struct profile_counts *big, uint64_t transactions)
{
    char *tmp = xasprintf("%s.tmp", folded_path);
    FILE *f = fopen(tmp, "w");
    if (!f) {
        int e = errno;
        free(tmp);
        return error("cannot write %s: %s", folded_path, strerror(e));
    }
    uint64_t total = 0;
    fprintf(f, "# pgolab-profile-folded 1\n# event instructions\n# transactions %llu\n"
               "# note exact: callgrind self instructions per function, marginal over the N - "
               "N/5 events\n", (unsigned long long)transactions);
    for (int i = 0; i < big->n; i++) {
        uint64_t s = 0;
        for (int k = 0; k < small->n; k++)
            if (!strcmp(small->keys[k], big->keys[i])) {
                s = small->counts[k];
                break;
            }
        if (big->counts[i] <= s)
            continue;
        fprintf(f, "%s %llu\n", big->keys[i], (unsigned long long)(big->counts[i] - s));
        total += big->counts[i] - s;
    }
    fprintf(f, "# samples %llu\n# end\n", (unsigned long long)total);
    int rc = ferror(f) ? -1 : 0;
    if (fclose(f) != 0 || rc < 0 || rename(tmp, folded_path) < 0)
        rc = error("cannot write %s: %s", folded_path, strerror(errno));
    free(tmp);
    return rc;
}
