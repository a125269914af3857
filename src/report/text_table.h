/* text_table: the text tables of the reports. Each cell is a main part (right-aligned) and an
 * optional spread (left-aligned after it), so the medians line up on the decimal point;
 * rendered as a pipe table that reads well in a terminal and is valid Markdown. The table owns
 * its strings; what it renders goes to the caller's strbuf. */
#ifndef PGOLAB_REPORT_TEXT_TABLE_H
#define PGOLAB_REPORT_TEXT_TABLE_H

#include "util/strbuf.h"

/* A table of ncols columns (head) and nrows rows. */
struct table {
    int ncols, nrows;
    char **head;           /* ncols */
    char **main, **spread; /* nrows * ncols, NULL = empty */
};

/* An empty table: ncols headers and nrows x ncols cells, all NULL. */
void table_init(struct table *t, int ncols, int nrows);
/* Set a cell (row < nrows, col < ncols), taking ownership of main and spread (either NULL). */
void table_set(struct table *t, int row, int col, char *main, char *spread);
/* Free every string of t and zero it. */
void table_release(struct table *t);
/* Append the table to sb: header line, "|----:|" separator, one line per row. */
void table_render(const struct table *t, struct strbuf *sb);

/* Decimals for a table whose smallest value is minv: about four significant digits, 2..4
 * places (TPS 1234.56, latency 0.1234 ms). */
int table_decimals(double minv);

#endif
