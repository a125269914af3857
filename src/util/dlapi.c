/* dlapi: loads a shared library into a caller's table of function pointers (see dlapi.h). */
#include "util/dlapi.h"
#include "util/util.h"

#include <assert.h>
#include <dlfcn.h>

void *dlapi_load(struct dlapi_lib *lib)
{
    assert(lib && lib->what && lib->soname && lib->package && lib->syms && lib->table);
    pthread_mutex_lock(&lib->lock);
    if (lib->loaded)
        goto out;
    void *h = dlopen(lib->soname, RTLD_NOW | RTLD_GLOBAL);
    if (!h) {
        const char *why = dlerror();
        error("cannot load %s %s (%s); install the Debian package %s", lib->what, lib->soname,
              why ? why : "dlopen failed", lib->package);
        goto out;
    }
    for (size_t i = 0; i < lib->nsyms; i++) {
        void *fn = dlsym(h, lib->syms[i].name);
        if (!fn) {
            error("%s %s has no function %s; install the Debian package %s", lib->what,
                  lib->soname, lib->syms[i].name, lib->package);
            dlclose(h);
            goto out;
        }
        *(void **)((char *)lib->table + lib->syms[i].offset) = fn;
    }
    lib->loaded = lib->table;
out:;
    void *t = lib->loaded;
    pthread_mutex_unlock(&lib->lock);
    return t;
}
