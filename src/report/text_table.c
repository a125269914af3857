/* text_table: text tables that line up on the decimal point (see text_table.h). */
#include "report/text_table.h"
#include "util/strbuf.h"
#include "util/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void table_init(struct table *t, int ncols, int nrows)
{
    t->ncols = ncols;
    t->nrows = nrows;
    t->head = xcalloc((size_t)ncols, sizeof(char *));
    t->main = xcalloc((size_t)(ncols * nrows) + 1, sizeof(char *));
    t->spread = xcalloc((size_t)(ncols * nrows) + 1, sizeof(char *));
}

void table_set(struct table *t, int row, int col, char *main, char *spread)
{
    int i = row * t->ncols + col;
    free(t->main[i]);
    free(t->spread[i]);
    t->main[i] = main;
    t->spread[i] = spread;
}

void table_release(struct table *t)
{
    for (int i = 0; i < t->ncols; i++)
        free(t->head[i]);
    for (int i = 0; i < t->ncols * t->nrows; i++) {
        free(t->main[i]);
        free(t->spread[i]);
    }
    free(t->head);
    free(t->main);
    free(t->spread);
    memset(t, 0, sizeof(*t));
}

static size_t slen(const char *s)
{
    return s ? strlen(s) : 0;
}

static void pad(struct strbuf *sb, size_t n)
{
    while (n--)
        strbuf_addch(sb, ' ');
}

void table_render(const struct table *t, struct strbuf *sb)
{
    size_t *wm = xcalloc((size_t)t->ncols, sizeof(size_t));
    size_t *ws = xcalloc((size_t)t->ncols, sizeof(size_t));
    size_t *w = xcalloc((size_t)t->ncols, sizeof(size_t));
    for (int c = 0; c < t->ncols; c++) {
        for (int r = 0; r < t->nrows; r++) {
            size_t m = slen(t->main[r * t->ncols + c]), s = slen(t->spread[r * t->ncols + c]);
            wm[c] = m > wm[c] ? m : wm[c];
            ws[c] = s > ws[c] ? s : ws[c];
        }
        w[c] = wm[c] + (ws[c] ? ws[c] + 1 : 0);
        if (slen(t->head[c]) > w[c]) {
            wm[c] += slen(t->head[c]) - w[c];
            w[c] = slen(t->head[c]);
        }
    }
    /* Header: right-aligned with the main parts (the medians), then padded to the width. */
    for (int c = 0; c < t->ncols; c++) {
        size_t h = slen(t->head[c]), left = wm[c] > h ? wm[c] - h : 0;
        strbuf_addstr(sb, c ? " | " : "| ");
        pad(sb, left);
        strbuf_addstr(sb, t->head[c] ? t->head[c] : "");
        pad(sb, w[c] - left - h);
    }
    strbuf_addstr(sb, " |\n");
    /* Markdown separator, right-aligned columns: "|---------:|" is as wide as "| cell |". */
    for (int c = 0; c < t->ncols; c++) {
        strbuf_addch(sb, '|');
        for (size_t i = 0; i < w[c] + 1; i++)
            strbuf_addch(sb, '-');
        strbuf_addch(sb, ':');
    }
    strbuf_addstr(sb, "|\n");
    for (int r = 0; r < t->nrows; r++) {
        for (int c = 0; c < t->ncols; c++) {
            const char *m = t->main[r * t->ncols + c], *s = t->spread[r * t->ncols + c];
            strbuf_addstr(sb, c ? " | " : "| ");
            pad(sb, wm[c] - slen(m));
            strbuf_addstr(sb, m ? m : "");
            if (ws[c]) {
                strbuf_addch(sb, ' ');
                strbuf_addstr(sb, s ? s : "");
                pad(sb, ws[c] - slen(s));
            }
        }
        strbuf_addstr(sb, " |\n");
    }
    free(wm);
    free(ws);
    free(w);
}

int table_decimals(double minv)
{
    if (!(minv > 0) || !isfinite(minv))
        return 2;
    int d = 3 - (int)floor(log10(minv));
    return d < 2 ? 2 : d > 4 ? 4 : d;
}
