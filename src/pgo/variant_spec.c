/* variant_spec: the parser of [DIMENSION:]...KIND (see variant_spec.h) and the grouping of
 * parsed variants by their build settings. The dimensions are the table dims[]: a name for
 * the NAME=VALUE form, which bare values are its own, what a valid value is, and the field of
 * struct variant_spec it sets. Owns no state. */
#include "pgo/variant_spec.h"
#include "util/strbuf.h"
#include "util/util.h"

#include <assert.h>
#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MSG "--variants: "

/* gcc, clang, gcc-12, clang-14, clang-14.0 */
static bool compiler_name(const char *v)
{
    size_t n = !strncmp(v, "gcc", 3) ? 3 : !strncmp(v, "clang", 5) ? 5 : 0;
    if (!n)
        return false;
    v += n;
    if (!*v)
        return true;
    if (*v != '-' || !isdigit((unsigned char)v[1]))
        return false;
    for (v++; *v; v++)
        if (!isdigit((unsigned char)*v) && *v != '.')
            return false;
    return true;
}

/* NULL when v is a compiler (a known name, or a path), else why not */
static const char *compiler_invalid(const char *v)
{
    if (compiler_name(v) || (strchr(v, '/') && !strchr(v, ' ')))
        return NULL;
    return "not a compiler";
}

static bool flags_bare(const char *v)
{
    return v[0] == '-';
}

/* every word a flag, none a profile flag (pgolab adds those per build) */
static const char *flags_invalid(const char *v)
{
    if (strstr(v, "-fprofile") || strstr(v, "-fauto-profile"))
        return "must not contain profile flags (pgolab adds them per build)";
    bool word = false;
    for (const char *c = v; *c; c++) {
        if (*c == ' ') {
            word = false;
        } else if (!word) {
            if (*c != '-')
                return "not compiler flags (each word starts with '-')";
            word = true;
        }
    }
    return word || *v ? NULL : "empty";
}

static const struct dimension {
    const char *name;             /* NAME of NAME=VALUE */
    const char *what;             /* in messages */
    const char *accepted;         /* its values, in messages */
    bool (*bare)(const char *v);  /* a value alone that is this dimension's */
    const char *(*invalid)(const char *v); /* NULL: valid, else why not */
    size_t field;                 /* the char * of struct variant_spec */
} dims[] = {
    { "cc", "compiler", "gcc, clang, or a versioned name such as gcc-12 or clang-14 "
      "(cc=PATH: a compiler by its path)", compiler_name, compiler_invalid,
      offsetof(struct variant_spec, cc) },
    { "cflags", "compiler flags", "words starting with '-' that replace --cflags, e.g. -O3 or "
      "'-O3 -march=native'", flags_bare, flags_invalid, offsetof(struct variant_spec, cflags) },
};
#define NDIMS (sizeof(dims) / sizeof(dims[0]))

static char **field(struct variant_spec *s, const struct dimension *d)
{
    return (char **)((char *)s + d->field);
}

static const char *cfield(const struct variant_spec *s, const struct dimension *d)
{
    return *(char *const *)((const char *)s + d->field);
}

const char *variant_spec_accepted(void)
{
    static char text[1024];
    if (!text[0]) {
        struct strbuf sb = STRBUF_INIT;
        strbuf_init(&sb, 0);
        for (size_t i = 0; i < NDIMS; i++)
            strbuf_addf(&sb, "%s%s (%s=): %s", i ? "; " : "", dims[i].what, dims[i].name,
                        dims[i].accepted);
        snprintf(text, sizeof(text), "%s", sb.buf);
        strbuf_release(&sb);
    }
    return text;
}

static char *kind_names(const struct variant_spec_kind *kinds, int n, bool dims_only)
{
    struct strbuf sb = STRBUF_INIT;
    strbuf_init(&sb, 0);
    for (int i = 0; i < n; i++)
        if (!dims_only || !kinds[i].plain_only)
            strbuf_addf(&sb, "%s%s", sb.len ? ", " : "", kinds[i].name);
    return strbuf_detach(&sb);
}

/* One DIMENSION part of text into s. */
static int parse_part(const char *text, const char *part, struct variant_spec *s)
{
    const struct dimension *d = NULL;
    const char *value = part;
    const char *eq = strchr(part, '=');
    /* NAME=VALUE where NAME is a word (a flag such as -march=native is a bare value) */
    if (eq && part[0] != '-') {
        for (size_t i = 0; i < NDIMS && !d; i++)
            if (strlen(dims[i].name) == (size_t)(eq - part) &&
                !strncmp(part, dims[i].name, (size_t)(eq - part)))
                d = &dims[i];
        if (!d) {
            struct strbuf names = STRBUF_INIT;
            strbuf_init(&names, 0);
            for (size_t i = 0; i < NDIMS; i++)
                strbuf_addf(&names, "%s%s", i ? ", " : "", dims[i].name);
            error(MSG "'%s': unknown dimension '%.*s' (known: %s)", text, (int)(eq - part), part,
                  names.buf);
            strbuf_release(&names);
            return -1;
        }
        value = eq + 1;
    } else {
        for (size_t i = 0; i < NDIMS && !d; i++)
            if (dims[i].bare(part))
                d = &dims[i];
        if (!d)
            return error(MSG "'%s': unknown value '%s' (accepted: %s)", text, part,
                         variant_spec_accepted());
    }
    const char *why = *value ? d->invalid(value) : "empty";
    if (why)
        return error(MSG "'%s': %s '%s': %s (accepted: %s)", text, d->what, value, why,
                     d->accepted);
    char **f = field(s, d);
    if (*f)
        return error(MSG "'%s': gives the %s twice ('%s' and '%s')", text, d->what, *f, value);
    *f = xstrdup(value);
    return 0;
}

int variant_spec_parse(const char *text, const struct variant_spec_kind *kinds, int nkinds,
                       const struct variant_spec *defaults, struct variant_spec *out)
{
    assert(text && kinds && nkinds > 0 && defaults && out);
    memset(out, 0, sizeof(*out));
    const char *kind = strrchr(text, ':');
    kind = kind ? kind + 1 : text;
    int k = -1;
    for (int i = 0; i < nkinds && k < 0; i++)
        if (!strcmp(kind, kinds[i].name))
            k = i;
    if (k < 0) {
        char *names = kind_names(kinds, nkinds, kind != text);
        if (kind == text)
            error(MSG "unknown variant '%s' (known: %s)", text, names);
        else
            error(MSG "'%s': unknown variant '%s' (known: %s; before it, dimensions: %s)", text,
                  kind, names, variant_spec_accepted());
        free(names);
        return -1;
    }
    out->kind = xstrdup(kind);
    out->text = xstrdup(text);
    char *dimtext = xstrndup(text, (size_t)(kind - text));
    int rc = 0;
    for (char *save = NULL, *part = strtok_r(dimtext, ":", &save); part && rc == 0;
         part = strtok_r(NULL, ":", &save))
        rc = parse_part(text, part, out);
    if (rc == 0 && kind != text && (text[0] == ':' || strstr(text, "::")))
        rc = error(MSG "'%s': an empty dimension between two ':'", text);
    free(dimtext);
    /* a value equal to the default's is the default: one build, one name */
    struct strbuf name = STRBUF_INIT;
    strbuf_init(&name, 0);
    bool dimensioned = false;
    for (size_t i = 0; i < NDIMS && rc == 0; i++) {
        char **f = field(out, &dims[i]);
        const char *def = cfield(defaults, &dims[i]);
        if (*f && def && !strcmp(*f, def)) {
            free(*f);
            *f = NULL;
        }
        if (*f) {
            strbuf_addf(&name, "%s:", *f);
            dimensioned = true;
        }
    }
    if (rc == 0 && dimensioned && kinds[k].plain_only)
        rc = error(MSG "'%s': %s takes no compiler or flags: %s", text, kind, kinds[k].plain_only);
    strbuf_addstr(&name, kind);
    out->name = strbuf_detach(&name);
    if (rc < 0)
        variant_spec_release(out);
    return rc;
}

void variant_spec_release(struct variant_spec *s)
{
    free(s->name);
    free(s->kind);
    free(s->text);
    for (size_t i = 0; i < NDIMS; i++) {
        char **f = field(s, &dims[i]);
        free(*f);
        *f = NULL;
    }
    memset(s, 0, sizeof(*s));
}

/* Whether a and b set the same dimensions to the same values. */
static bool same_settings(const struct variant_spec *a, const struct variant_spec *b)
{
    for (size_t i = 0; i < NDIMS; i++) {
        const char *x = cfield(a, &dims[i]), *y = cfield(b, &dims[i]);
        if ((x == NULL) != (y == NULL) || (x && strcmp(x, y)))
            return false;
    }
    return true;
}

static void group_add_kind(struct variant_group *g, const char *kind)
{
    g->kinds = xrealloc(g->kinds, (size_t)(g->nkinds + 2) * sizeof(char *));
    g->kinds[g->nkinds++] = xstrdup(kind);
    g->kinds[g->nkinds] = NULL;
}

int variant_specs_group(const struct variant_spec *s, int n, const struct variant_spec *defaults,
                        struct variant_group **out, int *nout)
{
    assert(n >= 0 && defaults && out && nout);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++)
            if (!strcmp(s[i].name, s[j].name))
                return strcmp(s[i].text, s[j].text)
                           ? error(MSG "'%s' and '%s' are the same variant, %s (a dimension "
                                   "given the default's value, --cc's or --cflags', is the "
                                   "default)", s[j].text, s[i].text, s[i].name)
                           : error(MSG "'%s' is given twice", s[i].text);
    struct variant_group *g = xcalloc((size_t)n + 1, sizeof(*g));
    int *opened = xcalloc((size_t)n + 1, sizeof(int)); /* the spec that opened each group */
    int ng = 1;
    g[0].cc = xstrdup(defaults->cc ? defaults->cc : "");
    g[0].cflags = xstrdup(defaults->cflags ? defaults->cflags : "");
    opened[0] = -1;
    for (int i = 0; i < n; i++) {
        int k = -1;
        for (int j = 1; j < ng && k < 0; j++)
            if (same_settings(&s[i], &s[opened[j]]))
                k = j;
        if (k < 0 && same_settings(&s[i], &(struct variant_spec){ 0 }))
            k = 0;
        if (k < 0) {
            k = ng++;
            opened[k] = i;
            g[k].label = xstrndup(s[i].name, strlen(s[i].name) - strlen(s[i].kind) - 1);
            g[k].cc = xstrdup(s[i].cc ? s[i].cc : defaults->cc ? defaults->cc : "");
            g[k].cflags = xstrdup(s[i].cflags ? s[i].cflags
                                              : defaults->cflags ? defaults->cflags : "");
        }
        group_add_kind(&g[k], s[i].kind);
    }
    free(opened);
    *out = g;
    *nout = ng;
    return 0;
}

void variant_groups_free(struct variant_group *g, int n)
{
    for (int i = 0; i < n; i++) {
        free(g[i].label);
        free(g[i].cc);
        free(g[i].cflags);
        for (int k = 0; k < g[i].nkinds; k++)
            free(g[i].kinds[k]);
        free(g[i].kinds);
    }
    free(g);
}

bool variant_group_has(const struct variant_group *g, const char *kind)
{
    for (int i = 0; i < g->nkinds; i++)
        if (!strcmp(g->kinds[i], kind))
            return true;
    return false;
}
