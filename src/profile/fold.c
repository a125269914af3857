/* fold: clone suffixes removed from symbol names (see fold.h). */
#include "profile/fold.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* The markers GCC (ipa-split, ipa-cp, ipa-sra, hot/cold partitioning, LTO privatization,
 * -fsemantic-interposition aliases) and Clang (ThinLTO promotion) append. */
static const char *const markers[] = { "cold", "part", "constprop", "isra", "lto_priv",
                                       "llvm", "localalias", "clone", "specialized" };

/* true when s (starting after a '.') is only markers and numbers separated by dots, and
 * starts with a marker. */
static bool all_clone_suffix(const char *s)
{
    bool first = true;
    while (*s) {
        size_t len = strcspn(s, ".");
        bool ok = false;
        for (size_t i = 0; i < sizeof(markers) / sizeof(markers[0]) && !ok; i++)
            ok = len == strlen(markers[i]) && !strncmp(s, markers[i], len);
        if (!ok && !first) { /* a number: .N (decimal; Clang's .llvm.N is decimal too) */
            ok = len > 0;
            for (size_t i = 0; i < len && ok; i++)
                ok = isdigit((unsigned char)s[i]);
        }
        if (!ok)
            return false;
        first = false;
        s += len;
        if (*s == '.')
            s++;
    }
    return !first;
}

char *profile_fold_name(const char *sym, char *out, size_t n)
{
    /* a symbol version from .dynsym ("memcpy@GLIBC_2.14", "f@@V1") is not part of the name */
    const char *at = strchr(sym, '@');
    size_t cut = at && at > sym ? (size_t)(at - sym) : strlen(sym);
    char base[512];
    snprintf(base, sizeof(base), "%.*s", (int)cut, sym);
    sym = base;
    /* callgrind's recursion depth ("qsort_tuple'2", --separate-recs): the same function */
    char *q = strrchr(base, '\'');
    if (q && q > base && q[1] && strspn(q + 1, "0123456789") == strlen(q + 1))
        *q = 0;
    cut = strlen(base);
    for (const char *d = strchr(sym, '.'); d; d = strchr(d + 1, '.'))
        if (d > sym && all_clone_suffix(d + 1)) {
            cut = (size_t)(d - sym);
            break;
        }
    snprintf(out, n, "%.*s", (int)cut, sym);
    return out;
}
