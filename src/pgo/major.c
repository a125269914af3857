/* major: which major version of a recipe target pgolab builds (--db-version=MAJOR, recipe
 * key "versions"): the one asked for, else the one of the distribution's binary installed
 * here (the recipe's server.official.binary, {major} tried for each of the recipe's majors,
 * or --official=PATH: its --version), else the recipe's default (Debian 12's). The recipe
 * holds what differs between majors as data (recipe.h); this file only picks one and applies
 * it (recipe_select_major). */
#include "pgo/major.h"
#include "server/server.h"
#include "util/fs.h"
#include "util/strbuf.h"
#include "util/subprocess.h"
#include "util/util.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The recipe major that the server binary bin's --version is of, or NULL. */
static char *major_of_binary(const struct recipe *r, const char *bin)
{
    if (!is_file(bin) || access(bin, X_OK) != 0)
        return NULL;
    struct strbuf out = STRBUF_INIT;
    strbuf_init(&out, 0);
    const char *argv[] = { bin, "--version", NULL };
    struct subprocess sp = { .argv = argv, .out = &out, .timeout_s = 30, .quiet_stderr = 1 };
    char *number = NULL, *flavor = NULL, *found = NULL;
    if (subprocess_run(&sp) == 0 &&
        server_parse_version(r->server_kind, out.buf, &number, &flavor) == 0)
        for (char **m = r->majors; *m && !found; m++) {
            size_t n = strlen(*m);
            /* "15" of "15.18", "10.11" of "10.11.19"; not "1" of "15.18" */
            if (!strncmp(number, *m, n) && (number[n] == '.' || !number[n]))
                found = xstrdup(*m);
        }
    free(number);
    free(flavor);
    strbuf_release(&out);
    return found;
}

/* The major of the official binary installed here (see above), or NULL. */
static char *installed_major(const struct recipe *r, const char *official)
{
    if (official)
        return major_of_binary(r, official);
    if (!r->official_binary)
        return NULL;
    if (!strstr(r->official_binary, "{major}"))
        return major_of_binary(r, r->official_binary);
    char *best = NULL;
    for (char **m = r->majors; *m; m++) {
        struct recipe_vars v = { .major = *m };
        char *bin = recipe_expand(r->official_binary, &v);
        char *got = major_of_binary(r, bin);
        free(bin);
        /* the default when it is installed, else the newest installed */
        if (got && (!best || strcmp(best, r->major_default))) {
            free(best);
            best = got;
        } else {
            free(got);
        }
    }
    return best;
}

int pgo_major_select(struct recipe *r, const char *db_version, const char *official)
{
    if (db_version || !r->majors)
        return db_version ? recipe_select_major(r, db_version) : 0;
    char *m = installed_major(r, official);
    int rc = recipe_select_major(r, m ? m : r->major_default);
    free(m);
    return rc;
}
