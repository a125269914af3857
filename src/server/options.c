/* options: the --server-option values of a managed server: one value translated into the
 * server's arguments per family (server_flavor.h's option_arg), the options pgolab manages
 * itself refused, and a variant's own options merged over the global ones (a variant's
 * option replaces a global one of the same name). Owns no state. */
#include "server/server_flavor.h"
#include "util/util.h"

#include <assert.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Canonical option name for comparisons: lower case, '_' -> '-', no leading dashes, no
 * MariaDB "loose-" prefix, up to '='. Caller frees. */
static char *option_name(const char *opt)
{
    while (*opt == '-')
        opt++;
    if (!strncasecmp(opt, "loose-", 6) || !strncasecmp(opt, "loose_", 6))
        opt += 6;
    size_t n = strcspn(opt, "=");
    char *name = xstrndup(opt, n);
    for (char *p = name; *p; p++)
        *p = *p == '_' ? '-' : (char)tolower((unsigned char)*p);
    return name;
}

int server_option_args_as(enum server_kind kind, const char *opt, const char *what,
                          struct argvec *out)
{
    const struct server_flavor *f = srv_flavor(kind);
    bool pass = !strncmp(opt, "--", 2);
    char *name;

    assert(what != NULL);
    if (!*opt || (*opt == '-' && !pass))
        return error("%s%s: expected NAME=VALUE%s", what, opt, f->option_hint);
    name = option_name(opt);
    if (!*name) {
        free(name);
        return error("%s%s: expected NAME=VALUE", what, opt);
    }
    for (const char *const *m = f->managed_options; *m; m++)
        if (!strcmp(name, *m)) {
            error("%s%s: pgolab sets that itself (see --datadir and --port)", what, opt);
            free(name);
            return -1;
        }
    free(name);
    if (pass) {
        argvec_push(out, opt);
        return 0;
    }
    return f->option_arg(opt, what, out);
}

int server_option_args(enum server_kind kind, const char *opt, struct argvec *out)
{
    return server_option_args_as(kind, opt, "--server-option=", out);
}

bool server_option_same(const char *a, const char *b)
{
    char *na = option_name(a), *nb = option_name(b);
    bool same = *na && !strcmp(na, nb);
    free(na);
    free(nb);
    return same;
}

void server_options_merge(char *const *global, int nglobal, char *const *own, int nown,
                          struct argvec *out)
{
    assert(nglobal == 0 || global != NULL);
    assert(nown == 0 || own != NULL);
    for (int g = 0; g < nglobal; g++) {
        bool replaced = false;
        for (int o = 0; o < nown && !replaced; o++)
            replaced = server_option_same(global[g], own[o]);
        if (!replaced)
            argvec_push(out, global[g]);
    }
    for (int o = 0; o < nown; o++)
        argvec_push(out, own[o]);
}
