/* argvec: a growable NULL-terminated argv of owned strings, for child processes (run with
 * subprocess_run, never through a shell). */
#include "util/argvec.h"
#include "util/strbuf.h"
#include "util/util.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>


void argvec_push(struct argvec *a, const char *s)
{
    if (a->n + 2 > a->alloc) {
        a->alloc = a->alloc ? a->alloc * 2 : 16;
        a->v = xrealloc(a->v, sizeof(char *) * (size_t)a->alloc);
    }
    a->v[a->n++] = xstrdup(s);
    a->v[a->n] = NULL;
}

void argvec_pushf(struct argvec *a, const char *fmt, ...)
{
    struct strbuf sb = STRBUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    strbuf_vaddf(&sb, fmt, ap);
    va_end(ap);
    argvec_push(a, sb.buf ? sb.buf : "");
    strbuf_release(&sb);
}

void argvec_pushv(struct argvec *a, const char *const *v)
{
    for (; v && *v; v++)
        argvec_push(a, *v);
}

void argvec_split(struct argvec *a, const char *s)
{
    while (s && *s) {
        while (*s && isspace((unsigned char)*s))
            s++;
        const char *start = s;
        while (*s && !isspace((unsigned char)*s))
            s++;
        if (s > start) {
            char *w = xstrndup(start, (size_t)(s - start));
            argvec_push(a, w);
            free(w);
        }
    }
}

const char *const *argvec_argv(struct argvec *a)
{
    static const char *const empty[] = { NULL };
    return a->v ? (const char *const *)a->v : empty;
}

char *argvec_join(const struct argvec *a)
{
    struct strbuf sb = STRBUF_INIT;
    strbuf_init(&sb, 0);
    for (int i = 0; i < a->n; i++) {
        if (i)
            strbuf_addch(&sb, ' ');
        strbuf_addstr(&sb, a->v[i]);
    }
    return strbuf_detach(&sb);
}

void argvec_clear(struct argvec *a)
{
    for (int i = 0; i < a->n; i++)
        free(a->v[i]);
    free(a->v);
    a->v = NULL;
    a->n = a->alloc = 0;
}
