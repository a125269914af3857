/* variant_options: VARIANT:NAME=VALUE server options into the variants (see
 * variant_options.h). Owns no state. */
#include "experiment/variant_options.h"
#include "server/server.h"
#include "util/argvec.h"
#include "util/strbuf.h"
#include "util/util.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#define OPT "--variant-server-option="

/* The names of v[0..nv) as "A, B" (caller frees). */
static char *variant_names(const struct variant *v, int nv)
{
    struct strbuf sb = STRBUF_INIT;
    strbuf_init(&sb, 0);
    for (int i = 0; i < nv; i++)
        strbuf_addf(&sb, "%s%s", i ? ", " : "", v[i].name);
    return strbuf_detach(&sb);
}

/* The variant val names (the longest name followed by ':'), or -1. */
static int variant_of(const char *val, const struct variant *v, int nv)
{
    int best = -1;
    size_t best_len = 0;
    for (int i = 0; i < nv; i++) {
        size_t n = strlen(v[i].name);
        if (n > best_len && !strncmp(val, v[i].name, n) && val[n] == ':') {
            best = i;
            best_len = n;
        }
    }
    return best;
}

/* Check one value; its variant's index into *which. -1 after a message. */
static int check_one(const char *val, const struct variant *v, int nv, int *which)
{
    const char *colon = strchr(val, ':');
    if (!colon || colon == val || !colon[1])
        return error(OPT "%s: expected VARIANT:NAME=VALUE, e.g. --variant-server-option="
                     "%s:shared_buffers=256MB", val, nv > 1 ? v[1].name : v[0].name);
    int i = variant_of(val, v, nv);
    if (i < 0) {
        char *names = variant_names(v, nv);
        error(OPT "%s: no variant named '%.*s' (the variants: %s)", val, (int)(colon - val),
              val, names);
        free(names);
        return -1;
    }
    if (v[i].kind != VARIANT_SERVER)
        return error(OPT "%s: variant %s is %s, not a server pgolab starts; server options are "
                     "for NAME=mysql:BINARY-or-PREFIX and NAME=pgsql:BINARY-or-PREFIX variants",
                     val, v[i].name, v[i].kind == VARIANT_SQLITE ? "a SQLite library"
                                                                  : "a running server");
    const char *opt = val + strlen(v[i].name) + 1;
    char *what = xasprintf(OPT "%s:", v[i].name);
    struct argvec tmp = ARGVEC_INIT;
    int rc = server_option_args_as(v[i].server_kind, opt, what, &tmp);
    argvec_clear(&tmp);
    free(what);
    if (rc < 0)
        return -1;
    *which = i;
    return 0;
}

int experiment_variant_server_options(const char *const *vals, int n, struct variant *v, int nv,
                                      bool apply)
{
    if (n == 0)
        return 0;
    assert(nv > 0 && v != NULL && vals != NULL);
    int *which = xcalloc((size_t)n, sizeof(int));
    int rc = 0;
    for (int k = 0; k < n && rc == 0; k++) {
        rc = check_one(vals[k], v, nv, &which[k]);
        for (int j = 0; j < k && rc == 0; j++) {
            const char *a = vals[j] + strlen(v[which[j]].name) + 1;
            const char *b = vals[k] + strlen(v[which[k]].name) + 1;
            if (which[j] == which[k] && server_option_same(a, b))
                rc = error(OPT "%s: variant %s already has %s (give each option once per "
                           "variant)", vals[k], v[which[k]].name, a);
        }
    }
    for (int k = 0; k < n && rc == 0 && apply; k++)
        experiment_variant_add_option(&v[which[k]], vals[k] + strlen(v[which[k]].name) + 1);
    free(which);
    return rc;
}
