/* sqlite_api: loads the results store's SQLite (the system libsqlite3.so.0) at run time into a
 * table of function pointers (see sqlite_api.h for why). Owned by src/store; the table is
 * process-wide and filled once. */
#include "store/sqlite_api.h"
#include "util/util.h"

#include <dlfcn.h>
#include <stdlib.h>

static struct store_sqlite api;
static int loaded;

const struct store_sqlite *store_sqlite_load(const char *what)
{
    if (loaded)
        return &api;
    void *h = dlopen(STORE_SQLITE_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *why = dlerror();
        error("%s: cannot load the system SQLite (%s); install libsqlite3-0", what,
              why ? why : STORE_SQLITE_LIBRARY);
        return NULL;
    }
#define SYM(field)                                                                             \
    do {                                                                                       \
        *(void **)&api.field = dlsym(h, "sqlite3_" #field);                                    \
        if (!api.field) {                                                                      \
            error("%s: the system SQLite (%s) has no sqlite3_" #field, what,                   \
                  STORE_SQLITE_LIBRARY);                                                       \
            dlclose(h);                                                                        \
            return NULL;                                                                       \
        }                                                                                      \
    } while (0)
    SYM(open_v2);
    SYM(close);
    SYM(extended_result_codes);
    SYM(busy_timeout);
    SYM(errmsg);
    SYM(extended_errcode);
    SYM(exec);
    SYM(get_autocommit);
    SYM(changes);
    SYM(last_insert_rowid);
    SYM(prepare_v2);
    SYM(step);
    SYM(reset);
    SYM(finalize);
    SYM(bind_int);
    SYM(bind_int64);
    SYM(bind_double);
    SYM(bind_text);
    SYM(bind_null);
    SYM(column_type);
    SYM(column_int);
    SYM(column_int64);
    SYM(column_double);
    SYM(column_text);
    SYM(column_bytes);
#undef SYM
    loaded = 1;
    return &api;
}
