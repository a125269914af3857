/* profiles: an experiment's stored CPU profiles read back (see profiles.h). */
#include "model/profiles.h"
#include "util/fs.h"
#include "util/util.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

char *experiment_profile_dir(const char *results_path, int64_t experiment_id)
{
    return xasprintf("%s.profiles/%lld", results_path, (long long)experiment_id);
}

/* The folded file name of run r ("profile": {"file"}), or NULL. */
static const char *run_file(const struct run_result *r, json_t **root)
{
    *root = r->json ? json_loads(r->json, 0, NULL) : NULL;
    return json_string_value(json_object_get(json_object_get(*root, "profile"), "file"));
}

bool experiment_has_profiles(const struct experiment_result *res)
{
    /* a run's own "profile" object; its "options" echo "profile": "off" too */
    for (int i = 0; i < res->nruns; i++) {
        if (!res->runs[i].json || !strstr(res->runs[i].json, "\"profile\""))
            continue;
        json_t *root;
        bool has = run_file(&res->runs[i], &root) != NULL ||
                   json_is_object(json_object_get(root, "profile"));
        json_decref(root);
        if (has)
            return true;
    }
    return false;
}

/* Read the profiles of variant v's runs of (w, threads) into side (runs allocated). Returns
 * the number of files that could not be read. */
static int load_side(const struct experiment_config *cfg, const struct experiment_result *res,
                     const char *dir, int v, int w, int threads, struct profile_side *side,
                     struct profile_run **runs)
{
    int bad = 0, n = 0;
    *runs = xcalloc((size_t)res->nruns + 1, sizeof(**runs));
    for (int i = 0; i < res->nruns; i++) {
        const struct run_result *r = &res->runs[i];
        if (r->variant != v || r->workload != w || r->threads != threads)
            continue;
        json_t *root;
        const char *file = run_file(r, &root);
        if (file) {
            char *path = path_join(dir, file);
            char why[512];
            if (profile_read_quiet(path, &(*runs)[n], why, sizeof(why)) == 0) {
                n++;
            } else {
                warning("%s: round %d of %s (%s, threads=%d) is left out of the side-by-side",
                        why, r->round, cfg->variants[v].name, cfg->workloads[w], threads);
                bad++;
            }
            free(path);
        }
        json_decref(root);
    }
    side->variant = cfg->variants[v].name;
    side->runs = *runs;
    side->nruns = n;
    return bad;
}

static void free_runs(struct profile_run *runs, int n)
{
    for (int i = 0; i < n; i++)
        profile_run_release(&runs[i]);
    free(runs);
}

int experiment_profile_each(const struct experiment_config *cfg,
                            const struct experiment_result *res, const char *dir,
                            experiment_profile_pair_fn fn, void *ctx)
{
    if (!experiment_has_profiles(res))
        return 0;
    int bad = 0;
    for (int w = 0; w < cfg->nworkloads; w++)
        for (int t = 0; t < cfg->nthreads; t++) {
            struct profile_side a;
            struct profile_run *ra;
            bad += load_side(cfg, res, dir, 0, w, cfg->threads[t], &a, &ra);
            for (int v = 1; v < cfg->nvariants; v++) {
                struct profile_side b;
                struct profile_run *rb;
                bad += load_side(cfg, res, dir, v, w, cfg->threads[t], &b, &rb);
                if (a.nruns || b.nruns)
                    fn(ctx, cfg->workloads[w], cfg->threads[t], &a, &b);
                free_runs(rb, b.nruns);
            }
            free_runs(ra, a.nruns);
        }
    return bad;
}

struct text_ctx {
    FILE *out;
    int top;
};

static void text_pair(void *ctx, const char *workload, int threads, const struct profile_side *a,
                      const struct profile_side *b)
{
    struct text_ctx *c = ctx;
    char *title = xasprintf("CPU profile: %s, threads=%d: %s vs %s", workload, threads,
                            a->variant, b->variant);
    profile_print_side_by_side(c->out, title, a, b, c->top);
    free(title);
}

int experiment_profile_report(FILE *out, const struct experiment_config *cfg,
                              const struct experiment_result *res, const char *dir, int top)
{
    struct text_ctx c = { out, top };
    int bad = experiment_profile_each(cfg, res, dir, text_pair, &c);
    if (bad)
        fprintf(out, "\n%d profile file%s could not be read (warnings above); those runs are "
                     "left out of the profiles, the tables are complete\n", bad,
                bad == 1 ? "" : "s");
    return bad;
}

struct fline {
    char *stack;
    unsigned long long count;
};

static int fline_cmp(const void *a, const void *b)
{
    return strcmp(((const struct fline *)a)->stack, ((const struct fline *)b)->stack);
}

int experiment_profile_folded(FILE *out, const struct experiment_config *cfg,
                              const struct experiment_result *res, const char *dir)
{
    struct fline *v = NULL;
    size_t n = 0, cap = 0;
    int bad = 0;
    for (int i = 0; i < res->nruns; i++) {
        const struct run_result *r = &res->runs[i];
        json_t *root;
        const char *file = run_file(r, &root);
        if (!file) {
            json_decref(root);
            continue;
        }
        char *path = path_join(dir, file);
        struct profile_run check;  /* the same checks as the tables: missing, truncated */
        char why[512];
        if (profile_read_quiet(path, &check, why, sizeof(why)) < 0) {
            warning("%s: round %d of %s (%s, threads=%d) is left out", why, r->round,
                    cfg->variants[r->variant].name, cfg->workloads[r->workload], r->threads);
            bad++;
        } else {
            profile_run_release(&check);
            FILE *f = fopen(path, "r");
            char *line = NULL;
            size_t lcap = 0;
            while (f && getline(&line, &lcap, f) > 0) {
                line[strcspn(line, "\n")] = 0;
                char *sp = strrchr(line, ' ');
                if (line[0] == '#' || !sp)
                    continue;
                *sp = 0;
                if (n == cap) {
                    cap = cap ? cap * 2 : 4096;
                    v = xrealloc(v, sizeof(*v) * cap);
                }
                v[n].stack = xasprintf("%s;%s;%s", cfg->variants[r->variant].name,
                                       cfg->workloads[r->workload], line);
                v[n++].count = strtoull(sp + 1, NULL, 10);
            }
            free(line);
            if (f)
                fclose(f);
        }
        free(path);
        json_decref(root);
    }
    if (n)
        qsort(v, n, sizeof(*v), fline_cmp);
    for (size_t i = 0; i < n;) {
        size_t j = i;
        unsigned long long sum = 0;
        for (; j < n && !strcmp(v[j].stack, v[i].stack); j++)
            sum += v[j].count;
        fprintf(out, "%s %llu\n", v[i].stack, sum);
        for (size_t k = i; k < j; k++)
            free(v[k].stack);
        i = j;
    }
    free(v);
    return bad;
}
