/* fold: compiler clones folded into the function they were made from, so a baseline and a
 * PGO or LTO build of the same code line up function by function. No state. */
#ifndef PGOLAB_PROFILE_FOLD_H
#define PGOLAB_PROFILE_FOLD_H

#include <stddef.h>

/* The function name of symbol sym with every clone suffix removed, into out (size n, always
 * NUL-terminated): from the first '.' after which the rest of the name is made only of the
 * clone markers GCC and Clang add, each optionally followed by numbers (".cold", ".cold.N",
 * ".part.N", ".constprop.N", ".isra.N", ".lto_priv.N", ".llvm.N", ".localalias", ".clone.N",
 * ".str.N" is not one) and their combinations ("foo.constprop.0.isra.0.cold" -> "foo").
 * A symbol version ("memcpy@GLIBC_2.14", "f@@V1") and callgrind's recursion depth
 * ("qsort_tuple'2") are dropped first. A name without such a
 * suffix is copied as is ("a.b" stays "a.b"). Returns out. */
char *profile_fold_name(const char *sym, char *out, size_t n);

#endif
