/* shellwords: shell command text into commands and words, no expansion (shellwords.h). */
#include "util/shellwords.h"
#include "util/strbuf.h"
#include "util/util.h"

#include <assert.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* The characters that end a word and, but for space and tab, a command. */
static bool is_break(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '&' || c == '|' ||
           c == '(' || c == ')';
}

/* Append the command being built to the list, unless it is empty. */
static void end_command(struct argvec *cur, struct shell_command **out, int *n, int *alloc)
{
    if (cur->n == 0)
        return;
    if (*n == *alloc) {
        *alloc = *alloc ? 2 * *alloc : 4;
        *out = xrealloc(*out, (size_t)*alloc * sizeof(**out));
    }
    (*out)[(*n)++].words = *cur;
    *cur = (struct argvec)ARGVEC_INIT;
}

/* One word starting at *at (not a break): its text into w, *at past it. -1 for an
 * unterminated quote. */
static int read_word(const char **at, struct strbuf *w)
{
    const char *p = *at;
    while (*p && !is_break(*p)) {
        if (*p == '\\') {
            if (p[1] == '\n') { /* a continuation: nothing */
                p += 2;
                continue;
            }
            if (p[1])
                strbuf_addch(w, p[1]);
            p += p[1] ? 2 : 1;
        } else if (*p == '\'') {
            const char *end = strchr(p + 1, '\'');
            if (!end)
                return -1;
            strbuf_add(w, p + 1, (size_t)(end - p - 1));
            p = end + 1;
        } else if (*p == '"') {
            for (p++; *p && *p != '"'; p++) {
                if (*p == '\\' && p[1] == '\n') {
                    p++;
                    continue;
                }
                if (*p == '\\' && (p[1] == '"' || p[1] == '\\' || p[1] == '$' || p[1] == '`'))
                    p++;
                strbuf_addch(w, *p);
            }
            if (*p != '"')
                return -1;
            p++;
        } else {
            strbuf_addch(w, *p++);
        }
    }
    *at = p;
    return 0;
}

int shell_commands(const char *text, struct shell_command **out, int *n)
{
    assert(text && out && n);
    *out = NULL;
    *n = 0;
    int alloc = 0;
    struct argvec cur = ARGVEC_INIT;
    struct strbuf w = STRBUF_INIT;
    strbuf_init(&w, 0);
    for (const char *p = text; *p;) {
        if (*p == ' ' || *p == '\t') {
            p++;
        } else if (*p == '\\' && p[1] == '\n') {
            p += 2;
        } else if (*p == '#') {
            p += strcspn(p, "\n");
        } else if (is_break(*p)) {
            end_command(&cur, out, n, &alloc);
            p++;
        } else {
            strbuf_reset(&w);
            if (read_word(&p, &w) < 0) {
                strbuf_release(&w);
                argvec_clear(&cur);
                shell_commands_free(*out, *n);
                *out = NULL;
                *n = 0;
                return -1;
            }
            argvec_push(&cur, w.buf);
        }
    }
    end_command(&cur, out, n, &alloc);
    strbuf_release(&w);
    return 0;
}

void shell_commands_free(struct shell_command *c, int n)
{
    for (int i = 0; i < n; i++)
        argvec_clear(&c[i].words);
    free(c);
}
