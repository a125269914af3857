/* dlapi: a shared library loaded at run time, on first use, into a table of function pointers:
 * the client libraries a pgolab process may never need (util/libpq_api.h,
 * util/libmariadb_api.h). The caller owns the table (a struct of typed function pointers) and
 * describes it in a struct dlapi_lib; dlapi fills it once per process, under the lib's lock.
 * The library then stays loaded for the life of the process. */
#ifndef PGOLAB_UTIL_DLAPI_H
#define PGOLAB_UTIL_DLAPI_H

#include <pthread.h>
#include <stddef.h>

/* One function of a table: its name in the library and its member's offset in the table. */
struct dlapi_sym {
    const char *name;
    size_t offset;
};

/* A library and its table. Static storage, every field but loaded set by the caller. */
struct dlapi_lib {
    const char *what;    /* what the library is, for errors: "the PostgreSQL client library" */
    const char *soname;  /* dlopen's name, e.g. "libpq.so.5" */
    const char *package; /* the Debian package that installs it */
    const struct dlapi_sym *syms;
    size_t nsyms;
    void *table;         /* filled by the first successful load */
    pthread_mutex_t lock;
    void *loaded;        /* table once every function is in it, else NULL */
};

/* lib's table, loading the library on the first call (dlopen RTLD_NOW | RTLD_GLOBAL: the
 * library's own plugins may bind to it) and resolving every function of syms; thread-safe.
 * NULL after one error line naming what, the soname, the reason and the package; a later call
 * tries again. */
void *dlapi_load(struct dlapi_lib *lib);

#endif
