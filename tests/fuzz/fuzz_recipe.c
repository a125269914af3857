/* fuzz_recipe.c: libFuzzer target for recipe_load() (src/pgo/recipe.c), the parser and
 * validator of a PGO recipe file (the files in recipes/, or a user's file given as the target of
 * `pgolab pgo`). Any bytes: a recipe, or one error line naming the file. */
#include "fuzz.h"

#include <stdlib.h>

#include "pgo/recipe.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *path = fuzz_tmpfile("recipe", ".json", data, size);
    if (!path)
        return 0;
    struct recipe r;
    if (recipe_load(path, &r) == 0)
        recipe_release(&r);
    fuzz_tmpfile_remove(path);
    return 0;
}
