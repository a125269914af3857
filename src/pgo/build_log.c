/* build_log: what a pgo build's log says about the profile it was compiled with (build_log.h). */
#include "pgo/build_log.h"
#include "toolchain/toolchain.h"
#include "util/util.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OUT_OF_DATE "profile data may be out of date"

char *build_log_object_stem(const char *object)
{
    const char *base = strrchr(object, '/');
    base = base ? base + 1 : object;
    size_t n = strlen(base);
    if (n > 2 && !strcmp(base + n - 2, ".o"))
        n -= 2;
    /* cmake's objects keep the source's suffix: sql_parse.cc.o */
    static const char *const src[] = { ".c", ".cc", ".cpp", ".cxx", ".C" };
    for (size_t i = 0; i < ARRAY_SIZE(src); i++) {
        size_t k = strlen(src[i]);
        if (n > k && !strncmp(base + n - k, src[i], k)) {
            n -= k;
            break;
        }
    }
    return xstrndup(base, n);
}

/* The object a line of build output starts compiling, or NULL: a compile command ("... -c
 * ... -o X.o ...") or cmake's "Building C object X" / "Building CXX object X". */
static char *compiled_object(const char *l)
{
    const char *b = strstr(l, "Building C object ");
    size_t skip = strlen("Building C object ");
    if (!b) {
        b = strstr(l, "Building CXX object ");
        skip = strlen("Building CXX object ");
    }
    if (b) {
        b += skip;
        return xstrndup(b, strcspn(b, " \t\r"));
    }
    if (!strstr(l, " -c ") && !strstr(l, " -c\t"))
        return NULL;
    for (const char *o = l; (o = strstr(o, " -o ")); o++) {
        const char *v = o + 4;
        size_t n = strcspn(v, " \t\r");
        if (n > 2 && !strncmp(v + n - 2, ".o", 2))
            return xstrndup(v, n);
    }
    return NULL;
}

/* "of N functions, M have mismatched data" (also "of 1 function, 1 has"): 0 and both set,
 * or -1. */
static int parse_counts(const char *l, int *functions, int *mismatched)
{
    const char *of = strstr(l, OUT_OF_DATE);
    of = of ? strstr(of, ": of ") : NULL;
    if (!of)
        return -1;
    int n, m;
    if (sscanf(of, ": of %d function%*[s], %d ha", &n, &m) == 2 ||
        sscanf(of, ": of %d function, %d ha", &n, &m) == 2) {
        *functions = n;
        *mismatched = m;
        return 0;
    }
    return -1;
}

/* The hot object stem that object is, or NULL. */
static const char *hot_stem(const char *object, const char *const *hot_objects)
{
    char *stem = build_log_object_stem(object);
    const char *hot = NULL;
    for (const char *const *h = hot_objects; h && *h && !hot; h++)
        if (!strcmp(stem, *h))
            hot = *h;
    free(stem);
    return hot;
}

/* One message line: 0 when let through (counted), -1 with s->problem set. */
static int scan_message(const char *l, const char *hit, const char *object, bool strict,
                        const char *const *hot_objects, struct build_log_scan *s)
{
    /* GCC: "profile count data file not found"; clang: "no profile data available for file"
     * (-Wprofile-instr-unprofiled: not one function of the file in the profile) */
    if (strstr(hit, "not found") || strstr(hit, "no profile data available")) {
        s->missing++;
        if (!strict)
            return 0;
        s->problem = xasprintf("'%s': the recipe needs profile data for every object", hit);
        return -1;
    }
    int functions, mismatched;
    if (strict || strcmp(hit, OUT_OF_DATE) || parse_counts(l, &functions, &mismatched) < 0) {
        s->problem = object ? xasprintf("'%s' after the compile of %s", hit, object)
                            : xasprintf("'%s'", hit);
        return -1;
    }
    if (!object) {
        s->problem = xasprintf("'%s' before any compile command: its object is unknown", hit);
        return -1;
    }
    const char *hot = hot_stem(object, hot_objects);
    if (hot) {
        s->problem = xasprintf("'%s' in %s (%d of %d functions), an object of the recipe's hot "
                               "functions (%s): its profile may be stale", hit, object, mismatched,
                               functions, hot);
        return -1;
    }
    s->stale = xrealloc(s->stale, (size_t)(s->nstale + 1) * sizeof(*s->stale));
    s->stale[s->nstale++] = (struct build_log_stale){ xstrdup(object), functions, mismatched };
    s->stale_functions += mismatched;
    return 0;
}

int build_log_scan(const char *log, bool strict, const char *const *hot_objects,
                   struct build_log_scan *out)
{
    memset(out, 0, sizeof(*out));
    char *object = NULL;
    int rc = 0;
    for (const char *line = log ? log : ""; *line && rc == 0;) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        char *l = xstrndup(line, len);
        if (!strncmp(l, "$ ", 2)) {
            /* a step's own command: a new step, no object compiled yet */
            free(object);
            object = NULL;
        } else if (strstr(l, "error:") || strstr(l, "warning:")) {
            /* Only the compiler's diagnostics count: a build tool echoes its compile
             * commands, whose -Werror=coverage-mismatch would match. */
            const char *hit = pgo_log_problem(l);
            if (hit)
                rc = scan_message(l, hit, object, strict, hot_objects, out);
        } else {
            char *o = compiled_object(l);
            if (o) {
                free(object);
                object = o;
            }
        }
        free(l);
        line += len + (nl ? 1 : 0);
    }
    free(object);
    assert(rc == 0 || out->problem);
    return rc;
}

void build_log_scan_release(struct build_log_scan *s)
{
    for (int i = 0; i < s->nstale; i++)
        free(s->stale[i].object);
    free(s->stale);
    free(s->problem);
    memset(s, 0, sizeof(*s));
}
