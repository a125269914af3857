/* search_rank: the choices of `pgolab pgo --search` as pure functions (pgo/search.c runs the
 * phases): the order of the candidates by the screen's change against baseline, which of them
 * the confirmation keeps, and the winner of the confirmation. A change is in percent with
 * + = better (experiment_change_pct(), model/cells.h); NAN when the variant has no data.
 * Owns no state; the caller owns every array. */
#ifndef PGOLAB_PGO_SEARCH_RANK_H
#define PGOLAB_PGO_SEARCH_RANK_H

#include <stdbool.h>

/* order[0..n): the indices of pct[0..n) from the best (highest) change to the worst, the NAN
 * ones last; equal changes keep their given order. */
void search_rank(const double *pct, int n, int *order);

/* keep[0..n): true for the first `want` (>= 1) candidates of search_rank()'s order that have a
 * change (not NAN). Returns how many were kept (fewer than want when fewer have data). */
int search_keep(const double *pct, int n, int want, bool *keep);

/* The winner of the confirmation among pct[0..n) (the changes by time against baseline) with
 * significant[0..n): the highest change among the significant positive ones; -1 when none is
 * significantly better. */
int search_winner(const double *pct, const bool *significant, int n);

#endif
