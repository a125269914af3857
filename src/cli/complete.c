/* complete: `pgolab complete WHAT ...`, the hidden helper of the bash completion
 * (completions/pgolab.bash): it prints the words a command line can continue with, one per
 * line, from the binary's own tables, so the completion never goes stale:
 *   commands                     the commands of main.c's table
 *   options COMMAND              COMMAND's options as its --help prints them ("--time=" for an
 *                                option with a value, "--histogram" for an on/off flag)
 *   words COMMAND                COMMAND's positional words (bench: workloads, then its
 *                                commands; pgo, export: targets; server: start, status, stop)
 *   values OPTION [--results=F]  the values of OPTION: db-driver, workloads (testname, bench,
 *                                train), variants (the kinds of --variants), targets,
 *                                experiments (ids in the results database F, default
 *                                $PGOLAB_RESULTS or ./pgolab.db; nothing when there is none),
 *                                variant (the variants of the newest pgo experiment of F)
 * Unknown input prints nothing and exits 1: a completion must never print an error into the
 * user's command line. Owns no state. */
#include "cli/complete.h"
#include "cli/cli.h"
#include "db/driver.h"
#include "oltp/oltp.h"
#include "pgo/recipe.h"
#include "store/store.h"
#include "util/strbuf.h"
#include "util/util.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void print_word(const char *w)
{
    printf("%s\n", w);
}

/* Each word of a "a, b, c" list on a line of its own. */
static void print_list(const char *list)
{
    char *copy = xstrdup(list);
    for (char *save = NULL, *w = strtok_r(copy, ", ", &save); w; w = strtok_r(NULL, ", ", &save))
        print_word(w);
    free(copy);
}

static void print_workloads(void)
{
    int n = 0;
    workload_at(0, &n);
    for (int i = 0; i < n; i++)
        print_word(workload_at(i, &n)->name);
}

/* COMMAND's options from its --help: each "  --NAME..." at the start of a help line. */
static int print_options(const struct man_command *c)
{
    struct strbuf sb = STRBUF_INIT;
    strbuf_init(&sb, 0);
    /* the help goes to a temporary file; its messages on stderr would reach the terminal */
    if (man_capture_help(c, &sb) < 0) {
        strbuf_release(&sb);
        return 1;
    }
    for (const char *line = sb.buf; line && *line;) {
        const char *p = line + strspn(line, " ");
        if (p > line && !strncmp(p, "--", 2) && islower((unsigned char)p[2])) {
            size_t len = 2 + strspn(p + 2, "abcdefghijklmnopqrstuvwxyz0123456789-");
            /* "--flag[=on|off]" is a flag; "--name=VALUE" takes a value */
            bool value = p[len] == '=';
            printf("%.*s%s\n", (int)len, p, value ? "=" : "");
        }
        line = strchr(line, '\n');
        line = line ? line + 1 : NULL;
    }
    strbuf_release(&sb);
    return 0;
}

struct ids {
    bool pgo_only, quiet;
    int64_t newest_pgo;
};

static int print_id(const struct store_experiment *e, void *ctx)
{
    struct ids *x = ctx;
    if (!strcmp(e->kind, "pgo"))
        x->newest_pgo = e->id;
    if (!x->quiet && (!x->pgo_only || !strcmp(e->kind, "pgo")))
        printf("%lld\n", (long long)e->id);
    return 0;
}

/* The experiment ids of the results database (only pgo ones with pgo_only), or the variants
 * of its newest pgo experiment. Nothing, exit 1, without a database. */
static int print_experiments(const char *results, bool pgo_only, bool variants)
{
    struct store *s = NULL;
    struct ids x = { pgo_only, variants, 0 };
    if (!results || access(results, R_OK) != 0 || store_open_read(results, &s) < 0)
        return 1;
    if (variants) {
        store_experiments_list(s, print_id, &x); /* quiet: the newest pgo one only */
        struct store_experiment e;
        if (x.newest_pgo && store_experiment_get(s, x.newest_pgo, &e) == 0) {
            for (int i = 0; i < e.nvariants; i++)
                print_word(e.variants[i].name);
            store_experiment_release(&e);
        }
    } else {
        store_experiments_list(s, print_id, &x);
    }
    store_close(s);
    return 0;
}

int complete_main(int argc, char **argv, const struct man_command *cmds, int ncmds)
{
    /* a completion prints words or nothing: the messages of what it runs stay unseen */
    if (!freopen("/dev/null", "w", stderr))
        return 1;
    if (argc < 2)
        return 1;
    const char *what = argv[1], *arg = argc > 2 ? argv[2] : "";
    const char *results = getenv(STORE_ENV);
    for (int i = 3; i < argc; i++)
        if (!strncmp(argv[i], "--results=", 10))
            results = argv[i] + 10;
    if (!results || !*results)
        results = STORE_DEFAULT_PATH;
    if (!strcmp(what, "commands")) {
        for (int i = 0; i < ncmds; i++)
            print_word(cmds[i].name);
        print_word("help");
        return 0;
    }
    if (!strcmp(what, "options")) {
        for (int i = 0; i < ncmds; i++)
            if (!strcmp(cmds[i].name, arg))
                return print_options(&cmds[i]);
        return 1;
    }
    if (!strcmp(what, "words")) {
        if (!strcmp(arg, "bench")) {
            print_workloads();
            print_list("prepare, prewarm, run, cleanup, verify, info, help");
        } else if (!strcmp(arg, "pgo") || !strcmp(arg, "export")) {
            char *names = recipe_names();
            print_list(names);
            free(names);
        } else if (!strcmp(arg, "server")) {
            print_list("start, status, stop, help");
        } else if (!strcmp(arg, "help")) {
            for (int i = 0; i < ncmds; i++)
                print_word(cmds[i].name);
        } else {
            return 1;
        }
        return 0;
    }
    if (!strcmp(what, "values")) {
        if (!strcmp(arg, "db-driver"))
            print_list(db_driver_names());
        else if (!strcmp(arg, "testname") || !strcmp(arg, "bench") || !strcmp(arg, "train"))
            print_workloads();
        else if (!strcmp(arg, "variants"))
            cli_pgo_variant_kinds(print_word);
        else if (!strcmp(arg, "target")) {
            char *names = recipe_names();
            print_list(names);
            free(names);
        } else if (!strcmp(arg, "experiment") || !strcmp(arg, "resume"))
            return print_experiments(results, false, false);
        else if (!strcmp(arg, "pgo-experiment"))
            return print_experiments(results, true, false);
        else if (!strcmp(arg, "variant"))
            return print_experiments(results, true, true);
        else
            return 1;
        return 0;
    }
    return 1;
}
