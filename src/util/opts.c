/* opts: sysbench-style option parsing (see opts.h). */
#include "util/opts.h"
#include "util/util.h"
#include "util/strbuf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Compare option names treating '-' and '_' as the same character. */
static bool name_eq(const char *a, const char *b, size_t blen)
{
    size_t i;
    for (i = 0; i < blen && a[i]; i++) {
        char x = a[i] == '_' ? '-' : a[i];
        char y = b[i] == '_' ? '-' : b[i];
        if (x != y)
            return false;
    }
    return i == blen && a[i] == '\0';
}

static struct opt_value *find(const struct opts *o, const char *name, size_t len)
{
    for (int i = 0; i < o->nvalues; i++)
        if (name_eq(o->values[i].def->name, name, len))
            return &o->values[i];
    return NULL;
}

int parse_bool(const char *s)
{
    static const char *yes[] = { "on", "true", "1", "yes" };
    static const char *no[] = { "off", "false", "0", "no" };
    for (size_t i = 0; i < ARRAY_SIZE(yes); i++) {
        if (!strcasecmp(s, yes[i]))
            return 1;
        if (!strcasecmp(s, no[i]))
            return 0;
    }
    return -1;
}

void opts_init(struct opts *o, const struct opt_def *const *tables, int ntables)
{
    int n = 0;
    memset(o, 0, sizeof(*o));
    for (int t = 0; t < ntables; t++)
        for (const struct opt_def *d = tables[t]; d->name; d++)
            n++;
    o->values = xcalloc((size_t)n, sizeof(*o->values));
    for (int t = 0; t < ntables; t++)
        for (const struct opt_def *d = tables[t]; d->name; d++) {
            if (find(o, d->name, strlen(d->name)))
                continue; /* first table wins for a shared name */
            struct opt_value *v = &o->values[o->nvalues++];
            v->def = d;
            v->value = d->defval ? xstrdup(d->defval) : NULL;
            if (d->type == OPT_MULTI) {
                v->multi = xcalloc(2, sizeof(char *));
                if (d->defval)
                    v->multi[v->nmulti++] = xstrdup(d->defval);
            }
        }
    o->args = xcalloc((size_t)1, sizeof(char *));
}

void opts_release(struct opts *o)
{
    for (int i = 0; i < o->nvalues; i++) {
        free(o->values[i].value);
        for (int j = 0; j < o->values[i].nmulti; j++)
            free(o->values[i].multi[j]);
        free(o->values[i].multi);
    }
    free(o->values);
    for (int i = 0; i < o->nargs; i++)
        free(o->args[i]);
    free(o->args);
    memset(o, 0, sizeof(*o));
}

static int set_value(struct opt_value *v, const char *value)
{
    const char *name = v->def->name;
    int64_t i;
    double d;
    switch (v->def->type) {
    case OPT_BOOL:
        if (parse_bool(value) < 0)
            return error("invalid value for --%s: '%s' (expected on or off)", name, value);
        break;
    case OPT_INT:
        if (parse_int64(value, &i) < 0) {
            char *end;
            errno = 0;
            (void)strtoll(value, &end, 10);
            if (errno == ERANGE && !*end)
                return error("invalid value for --%s: '%s' is out of range (at most %lld)", name,
                             value, (long long)INT64_MAX);
            return error("invalid value for --%s: '%s' (expected an integer)", name, value);
        }
        break;
    case OPT_DOUBLE:
        if (parse_double(value, &d) < 0)
            return error("invalid value for --%s: '%s' (expected a number)", name, value);
        break;
    case OPT_MULTI:
        if (!v->set) { /* the first occurrence replaces the default */
            for (int j = 0; j < v->nmulti; j++)
                free(v->multi[j]);
            v->nmulti = 0;
        }
        v->multi = xrealloc(v->multi, sizeof(char *) * (size_t)(v->nmulti + 2));
        v->multi[v->nmulti++] = xstrdup(value);
        v->multi[v->nmulti] = NULL;
        break;
    default:
        break;
    }
    free(v->value);
    v->value = xstrdup(value);
    v->set = true;
    v->given++;
    return 0;
}

/* Levenshtein distance of a[0..alen) and b, '-' and '_' the same character. */
static size_t edit_distance(const char *a, size_t alen, const char *b)
{
    size_t blen = strlen(b);
    size_t *row = xcalloc(blen + 1, sizeof(size_t));
    for (size_t j = 0; j <= blen; j++)
        row[j] = j;
    for (size_t i = 1; i <= alen; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= blen; j++) {
            char x = a[i - 1] == '_' ? '-' : a[i - 1], y = b[j - 1] == '_' ? '-' : b[j - 1];
            size_t best = diag + (x != y);
            if (row[j] + 1 < best)
                best = row[j] + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            diag = row[j];
            row[j] = best;
        }
    }
    size_t d = row[blen];
    free(row);
    return d;
}

const char *opt_nearest(const struct opts *o, const char *name, size_t len)
{
    const char *best = NULL;
    size_t best_d = 0;
    for (int i = 0; i < o->nvalues; i++) {
        size_t d = edit_distance(name, len, o->values[i].def->name);
        if (!best || d < best_d) {
            best = o->values[i].def->name;
            best_d = d;
        }
    }
    return best;
}

/* The one line of an unknown option: "FATAL: invalid option: --x (did you mean --y? see
 * pgolab CMD --help)"; -1. */
static int unknown_option(const struct opts *o, const char *arg, const char *name, size_t len)
{
    const char *near = opt_nearest(o, name, len);
    struct strbuf hint = STRBUF_INIT;
    /* as git does, only a plausible typo is suggested: at most half the characters edited */
    if (near && 2 * edit_distance(name, len, near) <= (len > strlen(near) ? len : strlen(near)))
        strbuf_addf(&hint, "did you mean --%s? ", near);
    strbuf_addf(&hint, "see pgolab%s%s --help", o->cmd ? " " : "", o->cmd ? o->cmd : "");
    error("invalid option: %s (%s)", arg, hint.buf);
    strbuf_release(&hint);
    return -1;
}

int opts_set(struct opts *o, const char *name, const char *value)
{
    struct opt_value *v = find(o, name, strlen(name));
    if (!v) {
        char *arg = xasprintf("--%s", name);
        unknown_option(o, arg, name, strlen(name));
        free(arg);
        return -1;
    }
    return set_value(v, value);
}

int opts_parse(struct opts *o, int argc, char **argv)
{
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (strncmp(a, "--", 2) || a[2] == '\0') {
            o->args = xrealloc(o->args, sizeof(char *) * (size_t)(o->nargs + 2));
            o->args[o->nargs++] = xstrdup(a);
            o->args[o->nargs] = NULL;
            continue;
        }
        const char *name = a + 2;
        const char *eq = strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        struct opt_value *v = find(o, name, len);
        if (!v)
            return unknown_option(o, a, name, len);
        if (!eq && v->def->type == OPT_MULTI && i + 1 < argc) {
            /* "--variant A=..." (value as the next word) for repeatable options only;
             * the others keep sysbench's --name=value form. */
            if (set_value(v, argv[++i]) < 0)
                return -1;
            continue;
        }
        if (!eq && v->def->type != OPT_BOOL) {
            fprintf(stderr, "FATAL: option --%s needs a value (--%s=...)\n", v->def->name,
                    v->def->name);
            return -1;
        }
        if (set_value(v, eq ? eq + 1 : "on") < 0)
            return -1;
        /* The value is copied: blank a password in argv itself, so the process title
         * (/proc/PID/cmdline, ps) does not show it (as the mysql client does). */
        if (eq && strstr(v->def->name, "password"))
            memset((char *)eq + 1, 'x', strlen(eq + 1));
    }
    return 0;
}

static const struct opt_value *get(const struct opts *o, const char *name)
{
    const struct opt_value *v = find(o, name, strlen(name));
    if (!v) {
        fprintf(stderr, "BUG: option --%s is not registered\n", name);
        abort();
    }
    return v;
}

const char *opt_str(const struct opts *o, const char *name)
{
    return get(o, name)->value;
}

int64_t opt_int(const struct opts *o, const char *name)
{
    const char *s = get(o, name)->value;
    int64_t v = 0;
    if (s)
        parse_int64(s, &v);
    return v;
}

double opt_double(const struct opts *o, const char *name)
{
    const char *s = get(o, name)->value;
    double v = 0;
    if (s)
        parse_double(s, &v);
    return v;
}

bool opt_bool(const struct opts *o, const char *name)
{
    const char *s = get(o, name)->value;
    return s && parse_bool(s) == 1;
}

bool opt_known(const struct opts *o, const char *name)
{
    return find(o, name, strlen(name)) != NULL;
}

bool opt_is_set(const struct opts *o, const char *name)
{
    return get(o, name)->set;
}

int opt_given(const struct opts *o, const char *name)
{
    return get(o, name)->given;
}

const char *const *opt_multi(const struct opts *o, const char *name, int *count)
{
    const struct opt_value *v = get(o, name);
    if (v->def->type != OPT_MULTI) {
        fprintf(stderr, "BUG: option --%s is not repeatable\n", name);
        abort();
    }
    if (count)
        *count = v->nmulti;
    return (const char *const *)v->multi;
}

char **split_list(const char *s, int *count)
{
    int n = 0, cap = 4;
    char **list = xcalloc((size_t)cap + 1, sizeof(char *));
    while (s && *s) {
        const char *c = strchr(s, ',');
        size_t len = c ? (size_t)(c - s) : strlen(s);
        if (len) {
            if (n == cap) {
                cap *= 2;
                list = xrealloc(list, sizeof(char *) * ((size_t)cap + 1));
            }
            list[n++] = xstrndup(s, len);
        }
        if (!c)
            break;
        s = c + 1;
    }
    list[n] = NULL;
    if (count)
        *count = n;
    return list;
}

int opt_list_check(const struct opts *o, const char *name)
{
    const char *value = opt_known(o, name) && opt_is_set(o, name) ? opt_str(o, name) : NULL;
    if (!value || !*value)
        return 0;
    int n = 0;
    char **items = split_list(value, &n);
    const char *twice = NULL;
    for (int a = 0; a < n && !twice; a++)
        for (int b = a + 1; b < n && !twice; b++)
            if (!strcmp(items[a], items[b]))
                twice = items[a];
    int rc = 0;
    if (value[0] == ',' || value[strlen(value) - 1] == ',' || strstr(value, ",,"))
        rc = error("invalid value for --%s: '%s' has an empty item (expected ITEM,ITEM,... "
                   "without empty ones)", name, value);
    else if (twice)
        rc = error("invalid value for --%s: '%s' names '%s' twice (each item once)", name,
                   value, twice);
    opt_list_free(items);
    return rc;
}

char **opt_list(const struct opts *o, const char *name, int *count)
{
    return split_list(opt_str(o, name), count);
}

void opt_list_free(char **list)
{
    for (char **p = list; p && *p; p++)
        free(*p);
    free(list);
}

int parse_thread_list(char **list, int n, int *out)
{
    for (int i = 0; i < n; i++) {
        int64_t k;
        if (parse_int64(list[i], &k) < 0 || k <= 0 || k > 100000)
            return error("invalid thread count '%s' in --threads (expected integers 1..100000)",
                         list[i]);
        out[i] = (int)k;
        for (int j = 0; j < i; j++)
            if (out[j] == out[i])
                return error("invalid value for --threads: thread count %d is given twice as "
                             "'%s' and '%s' (each thread count once)", out[i], list[j], list[i]);
    }
    return 0;
}

void opts_print_help(const struct opt_def *table)
{
    for (const struct opt_def *d = table; d->name; d++) {
        struct strbuf left = STRBUF_INIT;
        strbuf_addf(&left, "  --%s", d->name);
        switch (d->type) {
        case OPT_BOOL: strbuf_addstr(&left, "[=on|off]"); break;
        case OPT_INT:
        case OPT_DOUBLE: strbuf_addstr(&left, "=N"); break;
        case OPT_LIST: strbuf_addstr(&left, "=[LIST,...]"); break;
        default: strbuf_addstr(&left, "=STRING"); break;
        }
        printf("%-29s %s%s", left.buf, d->help ? d->help : "",
               d->type == OPT_MULTI ? " (repeatable)" : "");
        if (d->defval && *d->defval)
            printf(" [%s]", d->defval);
        putchar('\n');
        strbuf_release(&left);
    }
}
