/* last_path: where experiments were last recorded (see store.h, store_remember_path): one
 * line in $XDG_STATE_HOME/pgolab/last-results, so `pgolab history` in another directory can
 * name the results file instead of only saying ./pgolab.db is missing. */
#include "store/store.h"
#include "util/fs.h"
#include "util/strbuf.h"
#include "util/util.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/* $XDG_STATE_HOME/pgolab (or ~/.local/state/pgolab), or NULL without a home (caller frees). */
static char *state_dir(void)
{
    const char *x = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
    if (x && *x == '/')
        return xasprintf("%s/pgolab", x);
    return home && *home ? xasprintf("%s/.local/state/pgolab", home) : NULL;
}

void store_remember_path(const char *path)
{
    char *dir = state_dir();
    if (!dir)
        return;
    char *abs = abs_path(path), *file = xasprintf("%s/last-results", dir);
    char *tmp = xasprintf("%s.tmp%d", file, (int)getpid());
    FILE *f;
    struct stat st;
    if ((stat(dir, &st) == 0 || mkdir_p(dir) == 0) && (f = fopen(tmp, "w"))) {
        bool ok = fprintf(f, "%s\n", abs) > 0;
        if (fclose(f) == 0 && ok)
            rename(tmp, file);
    }
    unlink(tmp);
    free(tmp);
    free(file);
    free(abs);
    free(dir);
}

char *store_last_path(void)
{
    char *dir = state_dir();
    if (!dir)
        return NULL;
    char *file = xasprintf("%s/last-results", dir);
    struct strbuf sb = STRBUF_INIT;
    char *out = NULL;
    if (strbuf_read_file(&sb, file) == 0) {
        strbuf_rtrim(&sb);
        if (sb.len)
            out = strbuf_detach(&sb);
    }
    strbuf_release(&sb);
    free(file);
    free(dir);
    return out;
}
