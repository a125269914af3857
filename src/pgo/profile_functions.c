/* profile_functions: every function's count in a whole profile (see profile_functions.h). */
#include "pgo/profile_functions.h"
#include "util/signals.h"
#include "util/argvec.h"
#include "util/fs.h"
#include "util/strbuf.h"
#include "util/subprocess.h"
#include "util/util.h"

#include <assert.h>
#include <ctype.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#define DUMP_BATCH 200 /* .gcda files per gcov-dump call */

static struct fn_count *push(struct fn_counts *c)
{
    if (c->n == c->alloc) {
        c->alloc = c->alloc ? 2 * c->alloc : 256;
        c->v = xrealloc(c->v, (size_t)c->alloc * sizeof(*c->v));
    }
    struct fn_count *f = &c->v[c->n++];
    memset(f, 0, sizeof(*f));
    return f;
}

bool prof_next_line(const char **p, const char **line, size_t *len)
{
    if (!**p)
        return false;
    const char *nl = strchr(*p, '\n');
    *line = *p;
    *len = nl ? (size_t)(nl - *p) : strlen(*p);
    *p = nl ? nl + 1 : *p + *len;
    return true;
}

unsigned long long prof_sum_numbers(const char *v, const char *end)
{
    unsigned long long sum = 0;
    while (v < end) {
        while (v < end && !isdigit((unsigned char)*v))
            v++;
        if (v >= end)
            break;
        char *e;
        sum += strtoull(v, &e, 10);
        v = e;
    }
    return sum;
}

int prof_run_tool(const char *what, const char *const *argv, struct strbuf *out)
{
    struct subprocess sp = { .argv = argv, .out = out, .quiet_stderr = 1 };
    int st = subprocess_run(&sp);
    if (st != 0) {
        char *cmd = subprocess_argv_str(argv);
        if (st > 0 && !sig_child_interrupted(st)) /* else the user's interrupt */
            error("%s: %s failed (exit %d)", what, cmd, st);
        free(cmd);
        return -1;
    }
    return 0;
}

char *gcov_dump_program(int gcc_major)
{
    char name[32];
    snprintf(name, sizeof(name), "gcov-dump-%d", gcc_major);
    char *p = gcc_major > 0 ? find_in_path(name) : NULL;
    if (!p)
        p = find_in_path("gcov-dump");
    if (!p)
        error("the profile check needs gcov-dump (GCC's profile reader, in Debian's gcc-%d "
              "package: apt-get install gcc-%d)", gcc_major > 0 ? gcc_major : 12,
              gcc_major > 0 ? gcc_major : 12);
    return p;
}

char *gcda_notes_path(const char *notes_dir, const char *gcda)
{
    const char *base = strrchr(gcda, '/');
    base = base ? base + 1 : gcda;
    char *rel = xstrdup(base);
    for (char *s = rel; *s; s++)
        if (*s == '#')
            *s = '/';
    size_t n = strlen(rel);
    assert(n > 5 && !strcmp(rel + n - 5, ".gcda"));
    strcpy(rel + n - 5, ".gcno");
    char *path = rel[0] == '/' ? xstrdup(rel) : path_join(notes_dir, rel);
    free(rel);
    return path;
}

/* gcov-dump -l: "PATH.gcda:  01000000:  12:FUNCTION ident=N, ..." opens a function; its
 * "COUNTERS arcs K counts" record is followed by "   I: c c c" value lines. */
void fn_counts_parse_gcov_dump(const char *text, struct fn_counts *out)
{
    const char *p = text, *line;
    size_t len;
    struct fn_count *cur = NULL;
    bool arcs = false;
    while (prof_next_line(&p, &line, &len)) {
        const char *sep = memmem(line, len, ".gcda:", 6);
        if (!sep)
            continue;
        const char *rest = sep + 6, *end = line + len;
        size_t rlen = (size_t)(end - rest);
        const char *fn = memmem(rest, rlen, "FUNCTION ident=", 15);
        if (fn) {
            const char *base = line;
            for (const char *s = line; s < sep; s++)
                if (*s == '/')
                    base = s + 1;
            cur = push(out);
            cur->file = xstrndup(base, (size_t)(sep + 5 - base));
            cur->ident = strtoul(fn + 15, NULL, 10);
            arcs = false;
            continue;
        }
        if (memmem(rest, rlen, "COUNTERS ", 9)) {
            arcs = memmem(rest, rlen, "COUNTERS arcs ", 14) != NULL;
            continue;
        }
        /* a values line: spaces, an index, ':' */
        const char *s = rest;
        while (s < end && *s == ' ')
            s++;
        const char *d = s;
        while (s < end && isdigit((unsigned char)*s))
            s++;
        if (s > d && s < end && *s == ':') {
            if (arcs && cur)
                cur->count += prof_sum_numbers(s + 1, end);
        } else {
            arcs = false; /* another record */
        }
    }
}

/* llvm-profdata show --all-functions --counts: "  NAME:" opens a function, then
 * "    Function count: N" and "    Block counts: [a, b, ...]". */
void fn_counts_parse_profdata(const char *text, struct fn_counts *out)
{
    const char *p = text, *line;
    size_t len;
    struct fn_count *cur = NULL;
    while (prof_next_line(&p, &line, &len)) {
        if (len > 3 && line[0] == ' ' && line[1] == ' ' && line[2] != ' ' && line[len - 1] == ':') {
            cur = push(out);
            cur->name = xstrndup(line + 2, len - 3);
            continue;
        }
        if (len > 0 && line[0] != ' ') {
            cur = NULL; /* the summary after the functions */
            continue;
        }
        if (!cur)
            continue;
        const char *fc = memmem(line, len, "Function count:", 15);
        const char *bc = memmem(line, len, "Block counts:", 13);
        if (fc)
            cur->count += strtoull(fc + 15, NULL, 10);
        else if (bc)
            cur->count += prof_sum_numbers(bc + 13, line + len);
    }
}

char *fn_counts_gcno_name(const char *text, unsigned long ident)
{
    const char *p = text, *line;
    size_t len;
    while (prof_next_line(&p, &line, &len)) {
        const char *f = memmem(line, len, "FUNCTION ident=", 15);
        if (!f || strtoul(f + 15, NULL, 10) != ident)
            continue;
        const char *q = memchr(line, '`', len);
        const char *e = q ? memchr(q + 1, '\'', (size_t)(line + len - q - 1)) : NULL;
        if (e)
            return xstrndup(q + 1, (size_t)(e - q - 1));
    }
    return NULL;
}

static int cmp_identity(const void *a, const void *b)
{
    const struct fn_count *x = a, *y = b;
    if (x->file || y->file) {
        int c = strcmp(x->file ? x->file : "", y->file ? y->file : "");
        if (c)
            return c;
        return x->ident < y->ident ? -1 : x->ident > y->ident;
    }
    return strcmp(x->name ? x->name : "", y->name ? y->name : "");
}

void fn_counts_sort(struct fn_counts *c)
{
    if (c->n > 1)
        qsort(c->v, (size_t)c->n, sizeof(*c->v), cmp_identity);
}

const struct fn_count *fn_counts_find(const struct fn_counts *c, const struct fn_count *f)
{
    if (!c->n)
        return NULL;
    return bsearch(f, c->v, (size_t)c->n, sizeof(*c->v), cmp_identity);
}

int fn_counts_read(const struct cc_info *cc, const char *dir, const char *profdata,
                   struct fn_counts *out)
{
    int rc = 0;
    if (cc->family == CC_GCC) {
        char *dump = gcov_dump_program(cc->major);
        if (!dump)
            return -1;
        struct argvec files = ARGVEC_INIT;
        list_files(&files, dir, ".gcda");
        for (int i = 0; i < files.n && rc == 0; i += DUMP_BATCH) {
            struct argvec argv = ARGVEC_INIT;
            argvec_push(&argv, dump);
            argvec_push(&argv, "-l");
            for (int j = i; j < files.n && j < i + DUMP_BATCH; j++)
                argvec_push(&argv, files.v[j]);
            struct strbuf sb = STRBUF_INIT;
            strbuf_init(&sb, 1 << 20);
            rc = prof_run_tool("reading a profile", argvec_argv(&argv), &sb);
            if (rc == 0)
                fn_counts_parse_gcov_dump(sb.buf, out);
            strbuf_release(&sb);
            argvec_clear(&argv);
        }
        argvec_clear(&files);
        free(dump);
    } else {
        if (!cc->profdata || !profdata)
            return error("reading a profile: no llvm-profdata for %s", cc->cc);
        const char *argv[] = { cc->profdata, "show", "--all-functions", "--counts", profdata,
                               NULL };
        struct strbuf sb = STRBUF_INIT;
        strbuf_init(&sb, 1 << 20);
        rc = prof_run_tool("reading a profile", argv, &sb);
        if (rc == 0)
            fn_counts_parse_profdata(sb.buf, out);
        strbuf_release(&sb);
    }
    if (rc == 0)
        fn_counts_sort(out);
    return rc;
}

int fn_counts_name_gcc(const struct cc_info *cc, const char *notes_dir, struct fn_count **fns,
                       int n)
{
    char *dump = gcov_dump_program(cc->major);
    if (!dump)
        return -1;
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        if (fns[i]->name || !fns[i]->file)
            continue;
        char *notes = gcda_notes_path(notes_dir, fns[i]->file);
        if (is_file(notes)) {
            struct strbuf sb = STRBUF_INIT;
            strbuf_init(&sb, 0);
            const char *argv[] = { dump, notes, NULL };
            if ((rc = prof_run_tool("reading a profile", argv, &sb)) == 0)
                fns[i]->name = fn_counts_gcno_name(sb.buf, fns[i]->ident);
            strbuf_release(&sb);
        }
        free(notes);
    }
    free(dump);
    return rc;
}

/* The object of a GCC data file's base name: after the last '#', without ".gcda" and a
 * source extension ("storage#innobase#row#row0sel.cc.gcda" -> "row0sel"). Caller frees. */
static char *object_of(const char *file)
{
    static const char *const ext[] = { ".gcda", ".cc", ".cpp", ".cxx", ".c" };
    const char *hash = strrchr(file, '#');
    char *o = xstrdup(hash ? hash + 1 : file);
    for (size_t i = 0; i < ARRAY_SIZE(ext); i++) {
        size_t n = strlen(o), e = strlen(ext[i]);
        if (n > e && !strcmp(o + n - e, ext[i]))
            o[n - e] = '\0';
    }
    return o;
}

/* name cut before its parameter list (a demangled C++ name; "(anonymous namespace)::f" and
 * "operator()" keep theirs). Caller frees. */
static char *without_params(const char *name)
{
    int depth = 0;
    for (const char *s = name; *s; s++) {
        if (*s == '<')
            depth++;
        else if (*s == '>' && depth > 0)
            depth--;
        else if (*s == '(' && depth == 0 && strncmp(s, "(anonymous", 10) &&
                 !(s >= name + 8 && !strncmp(s - 8, "operator", 8)))
            return xstrndup(name, (size_t)(s - name));
    }
    return xstrdup(name);
}

void fn_counts_describe(struct fn_count **fns, int n)
{
    /* one c++filt for every mangled name */
    struct argvec argv = ARGVEC_INIT;
    argvec_push(&argv, "c++filt");
    int *which = xcalloc((size_t)n + 1, sizeof(*which));
    int nm = 0;
    for (int i = 0; i < n; i++) {
        const char *name = fns[i]->name;
        const char *colon = name ? strrchr(name, ':') : NULL; /* clang's "file.c:_Z..." */
        const char *bare = colon && colon[1] == '_' ? colon + 1 : name;
        if (bare && !strncmp(bare, "_Z", 2)) {
            argvec_push(&argv, bare);
            which[nm++] = i;
        }
    }
    char **demangled = xcalloc((size_t)n + 1, sizeof(*demangled));
    if (nm) {
        struct strbuf sb = STRBUF_INIT;
        strbuf_init(&sb, 0);
        struct subprocess sp = { .argv = argvec_argv(&argv), .out = &sb, .quiet_stderr = 1 };
        if (subprocess_run(&sp) == 0) {
            const char *p = sb.buf, *line;
            size_t len;
            for (int k = 0; k < nm && prof_next_line(&p, &line, &len); k++)
                demangled[which[k]] = xstrndup(line, len);
        }
        strbuf_release(&sb);
    }
    for (int i = 0; i < n; i++) {
        struct fn_count *f = fns[i];
        char *fn = demangled[i] ? without_params(demangled[i])
                                : xstrdup(f->name ? f->name : "");
        free(f->display);
        if (f->file) {
            char *obj = object_of(f->file);
            f->display = f->name ? xasprintf("%s:%s", obj, fn)
                                 : xasprintf("%s:#%lu", obj, f->ident);
            free(obj);
        } else {
            f->display = xstrdup(fn);
        }
        free(fn);
        free(demangled[i]);
    }
    free(demangled);
    free(which);
    argvec_clear(&argv);
}

void fn_counts_release(struct fn_counts *c)
{
    for (int i = 0; i < c->n; i++) {
        free(c->v[i].file);
        free(c->v[i].name);
        free(c->v[i].display);
    }
    free(c->v);
    memset(c, 0, sizeof(*c));
}
