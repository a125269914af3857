/* correction: GCC's profile corrections of a pgo build counted from its log (see
 * correction.h for what GCC does and why the count is of objects). */
#include "pgo/correction.h"
#include "util/strbuf.h"
#include "util/util.h"

#include <assert.h>
#include <ctype.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#define LINE_SOURCES 3 /* source files the summary names */

/* Step back over ":DIGITS" ending at end (exclusive) in [line, end): the ':' or NULL. */
static const char *back_number(const char *line, const char *end)
{
    const char *q = end;
    while (q > line && isdigit((unsigned char)q[-1]))
        q--;
    return q < end && q > line && q[-1] == ':' ? q - 1 : NULL;
}

/* The source file of a note line "FILE:LINE:COL: note: ..." (or "FILE:LINE: note: ..."):
 * NULL when the phrase is not a compiler's note (an echoed command, a quote of it). */
static char *note_source(const char *line, size_t len)
{
    const char *hit = memmem(line, len, GCC_CORRECTION_NOTE, strlen(GCC_CORRECTION_NOTE));
    if (!hit || !strncmp(line, "$ ", 2) || hit - line < 4 || hit[-1] != ' ' || hit[-2] != ':')
        return NULL;
    const char *c1 = back_number(line, hit - 2); /* ":COL" or ":LINE" */
    if (!c1)
        return NULL;
    const char *c2 = back_number(line, c1);      /* ":LINE" when there is a column */
    const char *file_end = c2 ? c2 : c1;
    return file_end > line ? xstrndup(line, (size_t)(file_end - line)) : NULL;
}

int profile_corrections_read(const char *log_text, struct profile_corrections *c)
{
    memset(c, 0, sizeof(*c));
    c->counted = true;
    for (const char *line = log_text; line && *line;) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        char *src = note_source(line, len);
        if (src) {
            c->objects++;
            bool seen = false;
            for (int i = 0; i < c->sources.n && !seen; i++)
                seen = !strcmp(c->sources.v[i], src);
            if (!seen)
                argvec_push(&c->sources, src);
            free(src);
        }
        line += len + (nl ? 1 : 0);
    }
    assert(c->sources.n <= c->objects);
    return c->objects;
}

char *profile_corrections_line(const struct profile_corrections *c)
{
    if (!c->counted)
        return xstrdup("GCC's profile corrections are not counted (the target's own PGO "
                       "flags, without -fopt-info-note-ipa)");
    if (c->objects == 0)
        return xstrdup("GCC corrected no profile counts (0 objects with inconsistent counts)");
    struct strbuf sb = STRBUF_INIT;
    strbuf_init(&sb, 0);
    strbuf_addf(&sb, "GCC corrected inconsistent profile counts in %d object%s: ", c->objects,
                c->objects == 1 ? "" : "s");
    for (int i = 0; i < c->sources.n && i < LINE_SOURCES; i++)
        strbuf_addf(&sb, "%s%s", i ? ", " : "", c->sources.v[i]);
    if (c->sources.n > LINE_SOURCES)
        strbuf_addf(&sb, " and %d more", c->sources.n - LINE_SOURCES);
    strbuf_addstr(&sb, " (-fprofile-correction smoothed counters that broke flow conservation: "
                       "racing or cut-off counts; the build log has each note)");
    return strbuf_detach(&sb);
}

json_t *profile_corrections_json(const struct profile_corrections *c)
{
    if (!c->counted)
        return json_null();
    json_t *src = json_array();
    for (int i = 0; i < c->sources.n; i++)
        json_array_append_new(src, json_string(c->sources.v[i]));
    return json_pack("{s:i,s:o}", "objects", c->objects, "sources", src);
}

void profile_corrections_release(struct profile_corrections *c)
{
    argvec_clear(&c->sources);
    memset(c, 0, sizeof(*c));
}
