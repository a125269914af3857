/* libpq_api: loads libpq into the table of util/libpq_api.h, once per process. */
#define LIBPQ_API_NO_MACROS
#include "util/libpq_api.h"
#include "util/dlapi.h"
#include "util/util.h"

#include <stdlib.h>

const struct libpq_api *libpq_api_table;
static struct libpq_api api;
static const struct dlapi_sym syms[] = {
#define LIBPQ_API_SYM(name) { #name, offsetof(struct libpq_api, fn_##name) },
    LIBPQ_FUNCTIONS(LIBPQ_API_SYM)
#undef LIBPQ_API_SYM
};
static struct dlapi_lib lib = {
    .what = "the PostgreSQL client library", .soname = LIBPQ_LIBRARY, .package = "libpq5",
    .syms = syms, .nsyms = ARRAY_SIZE(syms), .table = &api, .lock = PTHREAD_MUTEX_INITIALIZER,
};

const struct libpq_api *libpq_api_load(void)
{
    const struct libpq_api *t = dlapi_load(&lib);
    if (t)
        __atomic_store_n(&libpq_api_table, t, __ATOMIC_RELEASE);
    return t;
}

const struct libpq_api *libpq_api_need(void)
{
    const struct libpq_api *t = libpq_api_load();
    if (!t)
        exit(1);
    return t;
}
