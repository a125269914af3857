/* config_check: each build's configure outcome against its group's reference build (see
 * config_check.h for why a pgo build's configure can decide otherwise). */
#include "pgo/config_check.h"
#include "pgo/stages.h"
#include "util/fs.h"
#include "util/strbuf.h"
#include "util/util.h"

#include <assert.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* One macro of a config header. */
struct macro {
    char *name;
    char *value;   /* NULL: undefined ("#undef NAME"); "" for "#define NAME" */
};

struct macros {
    struct macro *v;
    int n, cap;
};

static void macros_release(struct macros *m)
{
    for (int i = 0; i < m->n; i++) {
        free(m->v[i].name);
        free(m->v[i].value);
    }
    free(m->v);
    memset(m, 0, sizeof(*m));
}

static const char *skip_space(const char *s, const char *end)
{
    while (s < end && (*s == ' ' || *s == '\t'))
        s++;
    return s;
}

/* The identifier at s (letters, digits, '_'), its length in *len; NULL when none. */
static const char *ident(const char *s, const char *end, size_t *len)
{
    const char *q = s;
    while (q < end && (isalnum((unsigned char)*q) || *q == '_'))
        q++;
    *len = (size_t)(q - s);
    return *len ? s : NULL;
}

/* s with every occurrence of each path replaced by "{path}" (longest paths first is not
 * needed: a build's prefix and build directory do not contain each other's text here, and
 * either order gives the same words for both builds). Caller frees. */
static char *replace_paths(const char *s, const char *const *paths)
{
    struct strbuf sb = STRBUF_INIT;
    strbuf_init(&sb, 0);
    strbuf_addstr(&sb, s);
    for (const char *const *p = paths; p && *p; p++) {
        size_t plen = strlen(*p);
        if (!plen)
            continue;
        struct strbuf out = STRBUF_INIT;
        strbuf_init(&out, sb.len);
        const char *q = sb.buf, *hit;
        while ((hit = strstr(q, *p))) {
            strbuf_add(&out, q, (size_t)(hit - q));
            strbuf_addstr(&out, "{path}");
            q = hit + plen;
        }
        strbuf_addstr(&out, q);
        strbuf_release(&sb);
        sb = out;
    }
    return strbuf_detach(&sb);
}

/* Parse the macros of a config header's text; a later line about the same name wins. */
static void macros_parse(const char *text, const char *const *paths, struct macros *m)
{
    memset(m, 0, sizeof(*m));
    for (const char *line = text; *line;) {
        const char *nl = strchr(line, '\n');
        const char *end = nl ? nl : line + strlen(line);
        const char *s = skip_space(line, end);
        if (end - s >= 2 && s[0] == '/' && s[1] == '*') /* "/ * #undef NAME * /" */
            s = skip_space(s + 2, end);
        bool define = false, undef = false;
        if (s < end && *s == '#') {
            s = skip_space(s + 1, end);
            if (end - s > 6 && !strncmp(s, "define", 6) && (s[6] == ' ' || s[6] == '\t'))
                define = true, s += 6;
            else if (end - s > 5 && !strncmp(s, "undef", 5) && (s[5] == ' ' || s[5] == '\t'))
                undef = true, s += 5;
        }
        size_t nlen = 0;
        const char *name = (define || undef) ? ident(skip_space(s, end), end, &nlen) : NULL;
        /* not a function macro */
        if (name && !(define && name + nlen < end && name[nlen] == '(')) {
            char *value = NULL;
            if (define) {
                const char *v = skip_space(name + nlen, end), *ve = end;
                while (ve > v && isspace((unsigned char)ve[-1]))
                    ve--;
                char *raw = xstrndup(v, (size_t)(ve - v));
                value = replace_paths(raw, paths);
                free(raw);
            }
            int i = 0;
            while (i < m->n && (strlen(m->v[i].name) != nlen || strncmp(m->v[i].name, name, nlen)))
                i++;
            if (i == m->n) {
                if (m->n == m->cap) {
                    m->cap = m->cap ? 2 * m->cap : 64;
                    m->v = xrealloc(m->v, (size_t)m->cap * sizeof(*m->v));
                }
                m->v[m->n].name = xstrndup(name, nlen);
                m->v[m->n].value = NULL;
                m->n++;
            }
            free(m->v[i].value);
            m->v[i].value = value;
        }
        line = nl ? nl + 1 : end;
    }
}

static const struct macro *macro_find(const struct macros *m, const char *name)
{
    for (int i = 0; i < m->n; i++)
        if (!strcmp(m->v[i].name, name))
            return &m->v[i];
    return NULL;
}

/* "NAME defined in A (VALUE), not in B" and the like, for one differing macro. */
static void describe(struct strbuf *sb, const char *name, const char *av, const char *an,
                     const char *bv, const char *bn)
{
    if (sb->len)
        strbuf_addstr(sb, "; ");
    if (av && bv)
        strbuf_addf(sb, "%s is '%s' in %s, '%s' in %s", name, av, an, bv, bn);
    else if (av)
        strbuf_addf(sb, "%s defined in %s (%s), not in %s", name, an, *av ? av : "empty", bn);
    else
        strbuf_addf(sb, "%s defined in %s (%s), not in %s", name, bn, *bv ? bv : "empty", an);
}

static bool same_value(const char *a, const char *b)
{
    return (!a && !b) || (a && b && !strcmp(a, b));
}

char *config_header_diff(const char *ref_text, const char *const *ref_paths, const char *ref_name,
                         const char *text, const char *const *paths, const char *name)
{
    struct macros a, b;
    macros_parse(ref_text, ref_paths, &a);
    macros_parse(text, paths, &b);
    struct strbuf sb = STRBUF_INIT;
    strbuf_init(&sb, 0);
    int ndiff = 0;
    for (int i = 0; i < a.n; i++) {
        const struct macro *o = macro_find(&b, a.v[i].name);
        const char *bv = o ? o->value : NULL;
        if (!same_value(a.v[i].value, bv) && ++ndiff <= CONFIG_DIFF_NAMED)
            describe(&sb, a.v[i].name, a.v[i].value, ref_name, bv, name);
    }
    for (int i = 0; i < b.n; i++)
        if (!macro_find(&a, b.v[i].name) && b.v[i].value && ++ndiff <= CONFIG_DIFF_NAMED)
            describe(&sb, b.v[i].name, NULL, ref_name, b.v[i].value, name);
    macros_release(&a);
    macros_release(&b);
    if (!ndiff) {
        strbuf_release(&sb);
        return NULL;
    }
    assert(sb.len > 0);
    strbuf_addf(&sb, " (%d macro%s differ%s)", ndiff, ndiff == 1 ? "" : "s", ndiff == 1 ? "s" : "");
    return strbuf_detach(&sb);
}

/* DIR/config/HEADER with '/' as '#': where build b keeps its copy of a config header. */
static char *kept_path(const struct pgo_build *b, const char *header)
{
    char *flat = xstrdup(header);
    for (char *c = flat; *c; c++)
        if (*c == '/')
            *c = '#';
    char *dir = path_join(b->dir, "config");
    char *path = path_join(dir, flat);
    free(dir);
    free(flat);
    return path;
}

/* The group's reference: its first compiled build before b (the baseline, or the
 * instrumented build where the group's baseline is not built); NULL when b is it. */
static const struct pgo_build *reference_of(const struct pgo_pipeline *p, const struct pgo_build *b)
{
    for (int i = 0; i < p->nbuilds; i++) {
        const struct pgo_build *r = &p->builds[i];
        if (r == b)
            return NULL;
        if (!r->skip && !r->official && !r->bolt_input)
            return r;
    }
    return NULL;
}

/* Whether b's build directory still holds what b's own configure wrote: not where a later
 * build compiles (a shared directory; the instrumented build's, which every pgo build of
 * "pgo-reuses-instrumented" reuses in turn: there only the baseline and lto own theirs). */
static bool owns_build_dir(const struct pgo_pipeline *p, const struct pgo_build *b)
{
    switch (p->recipe.build_dir) {
    case RECIPE_BUILD_DIR_PER_VARIANT: return true;
    case RECIPE_BUILD_DIR_PGO_REUSES: return b->phase == BUILD_BASELINE;
    case RECIPE_BUILD_DIR_SHARED: return false;
    }
    return false;
}

/* Make sure b's kept copy of header h exists: a fresh build copies it from its build
 * directory (-1 with one line when the build made none); a cached build from before pgolab
 * kept copies takes it from its build directory while that is still its own. 1 when the copy
 * is there, 0 when it cannot be had (an old cache: not compared), -1 on error. */
static int ensure_kept(const struct pgo_pipeline *p, const struct pgo_build *b, const char *h,
                       bool fresh)
{
    char *kept = kept_path(b, h);
    int rc = 1;
    if (fresh || !is_file(kept)) {
        char *made = path_join(b->build_dir, h);
        char *cdir = path_join(b->dir, "config");
        if (!fresh && (!owns_build_dir(p, b) || !is_file(made)))
            rc = 0;
        else if (!is_file(made))
            rc = error("build %s made no %s (the recipe's config_headers name it, relative to "
                       "the build directory %s)", b->name, h, b->build_dir);
        else if (mkdir_p(cdir) < 0 || file_copy(made, kept) < 0)
            rc = -1;
        free(cdir);
        free(made);
    }
    free(kept);
    return rc;
}

int config_check_build(const struct pgo_pipeline *p, const struct pgo_build *b, bool fresh)
{
    const char *const *headers = (const char *const *)p->recipe.config_headers;
    if (!headers || b->official || b->bolt_input)
        return 0;
    int rc = 0;
    for (const char *const *h = headers; rc == 0 && *h; h++) {
        int have = ensure_kept(p, b, *h, fresh);
        const struct pgo_build *r = have > 0 ? reference_of(p, b) : NULL;
        int rhave = r ? ensure_kept(p, r, *h, false) : 0;
        if (have < 0 || rhave < 0) {
            rc = -1;
            break;
        }
        if (!r || !rhave)
            continue;
        char *kept = kept_path(b, *h), *rkept = kept_path(r, *h);
        struct strbuf rt = STRBUF_INIT, t = STRBUF_INIT;
        strbuf_init(&rt, 0);
        strbuf_init(&t, 0);
        if (strbuf_read_file(&rt, rkept) < 0 || strbuf_read_file(&t, kept) < 0) {
            rc = error("build %s: cannot read the kept copies of its configure's %s (%s, %s)",
                       b->name, *h, rkept, kept);
        } else {
            const char *rpaths[] = { r->prefix, r->build_dir, NULL };
            const char *paths[] = { b->prefix, b->build_dir, NULL };
            char *diff = config_header_diff(rt.buf, rpaths, r->name, t.buf, paths, b->name);
            if (diff)
                rc = error("build %s is configured differently from %s: %s: %s; a configure "
                           "check decided otherwise under %s's compiler flags, so it would "
                           "measure another program (its configure log in %s says which "
                           "check and why)", b->name, r->name, *h, diff, b->name, b->build_dir);
            free(diff);
        }
        strbuf_release(&rt);
        strbuf_release(&t);
        free(rkept);
        free(kept);
    }
    return rc;
}
