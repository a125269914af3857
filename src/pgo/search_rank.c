/* search_rank: the ranking, keeping and winner rules of --search (see search_rank.h). */
#include "pgo/search_rank.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>

/* a before b: a has a change and b none, or both have one and a's is higher */
static bool before(double a, double b)
{
    if (isnan(a))
        return false;
    return isnan(b) || a > b;
}

void search_rank(const double *pct, int n, int *order)
{
    assert(n >= 0 && (n == 0 || (pct && order)));
    for (int i = 0; i < n; i++)
        order[i] = i;
    /* insertion sort: stable, and n is a handful of variants */
    for (int i = 1; i < n; i++) {
        int x = order[i], j = i;
        for (; j > 0 && before(pct[x], pct[order[j - 1]]); j--)
            order[j] = order[j - 1];
        order[j] = x;
    }
}

int search_keep(const double *pct, int n, int want, bool *keep)
{
    assert(want >= 1 && n >= 0);
    int *order = calloc((size_t)n + 1, sizeof(int));
    assert(order);
    search_rank(pct, n, order);
    int kept = 0;
    for (int i = 0; i < n; i++)
        keep[i] = false;
    for (int i = 0; i < n && kept < want; i++)
        if (!isnan(pct[order[i]])) {
            keep[order[i]] = true;
            kept++;
        }
    free(order);
    return kept;
}

int search_winner(const double *pct, const bool *significant, int n)
{
    int best = -1;
    for (int i = 0; i < n; i++)
        if (significant[i] && pct[i] > 0 && (best < 0 || pct[i] > pct[best]))
            best = i;
    return best;
}
