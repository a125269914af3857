/* libmariadb_api: loads libmariadb into the table of util/libmariadb_api.h, once per process. */
#define LIBMARIADB_API_NO_MACROS
#include "util/libmariadb_api.h"
#include "util/dlapi.h"
#include "util/util.h"

#include <stdlib.h>

const struct libmariadb_api *libmariadb_api_table;
static struct libmariadb_api api;
static const struct dlapi_sym syms[] = {
#define LIBMARIADB_API_SYM(name) { #name, offsetof(struct libmariadb_api, fn_##name) },
    LIBMARIADB_FUNCTIONS(LIBMARIADB_API_SYM)
#undef LIBMARIADB_API_SYM
};
static struct dlapi_lib lib = {
    .what = "MariaDB's client library", .soname = LIBMARIADB_LIBRARY, .package = "libmariadb3",
    .syms = syms, .nsyms = ARRAY_SIZE(syms), .table = &api, .lock = PTHREAD_MUTEX_INITIALIZER,
};

const struct libmariadb_api *libmariadb_api_load(void)
{
    const struct libmariadb_api *t = dlapi_load(&lib);
    if (t)
        __atomic_store_n(&libmariadb_api_table, t, __ATOMIC_RELEASE);
    return t;
}

const struct libmariadb_api *libmariadb_api_need(void)
{
    const struct libmariadb_api *t = libmariadb_api_load();
    if (!t)
        exit(1);
    return t;
}
