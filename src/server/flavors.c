/* flavors: the registry of server families (server_flavor.h): every family's table, found by
 * kind or by name, and the small path helpers the families and the lifecycle share. The
 * bottom of src/server/: it calls into no other file of the folder. Owns no state. */
#include "server/server_flavor.h"
#include "util/fs.h"
#include "util/util.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------------ the families */

const struct server_flavor *const srv_flavors[SRV_FLAVORS] = {
    &server_pgsql_flavor,
    &server_mysql_flavor,
};

const struct server_flavor *srv_flavor(enum server_kind kind)
{
    for (size_t i = 0; i < ARRAY_SIZE(srv_flavors); i++)
        if (srv_flavors[i]->kind == kind)
            return srv_flavors[i];
    die("BUG: no server family of kind %d", (int)kind);
}

const char *server_kind_name(enum server_kind kind)
{
    return srv_flavor(kind)->name;
}

int server_kind_parse(const char *name, enum server_kind *kind)
{
    if (!name)
        return -1;
    for (size_t i = 0; i < ARRAY_SIZE(srv_flavors); i++) {
        bool match = !strcmp(name, srv_flavors[i]->name);
        for (const char *const *a = srv_flavors[i]->aliases; a && *a && !match; a++)
            match = !strcmp(name, *a);
        if (match) {
            *kind = srv_flavors[i]->kind;
            return 0;
        }
    }
    return -1;
}

/* ------------------------------------------------------------------ small helpers */

bool srv_is_exec(const char *p)
{
    return is_file(p) && access(p, X_OK) == 0;
}

char *srv_dir_of(const char *path)
{
    const char *sl = strrchr(path, '/');
    if (!sl)
        return xstrdup(".");
    if (sl == path)
        return xstrdup("/");
    return xstrndup(path, (size_t)(sl - path));
}

const char *srv_base_name(const char *path)
{
    const char *sl = strrchr(path, '/');
    return sl ? sl + 1 : path;
}

char *srv_find_in_path(const char *name)
{
    char *found = find_in_path(name);
    char *a = found ? abs_path(found) : NULL;
    free(found);
    return a;
}


bool srv_exists(const char *dir, const char *name)
{
    char *p = path_join(dir, name);
    struct stat st;
    bool r = lstat(p, &st) == 0;
    free(p);
    return r;
}

bool srv_has_dir(const char *dir, const char *name)
{
    char *p = path_join(dir, name);
    bool r = is_dir(p);
    free(p);
    return r;
}
