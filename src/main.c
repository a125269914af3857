/* main: the command table (git-style): `pgolab <command> [args]` -> cmd_<command>();
 * `pgolab help [COMMAND|--man]`, `pgolab --version` and the hidden `pgolab complete` (the bash
 * completion's helper, cli/complete.c). */
#include "cli/cli.h"
#include "cli/complete.h"
#include "cli/man.h"
#include "version.h"
#include "util/knobs.h"

#include <stdio.h>
#include <string.h>

static const struct man_command commands[] = {
    { "bench", cmd_bench,
      "sysbench-compatible OLTP benchmark (prepare|run|cleanup|help|verify|info)" },
    { "pgo", cmd_pgo, "build baseline/instrumented/PGO variants, train, measure the gain" },
    { "compare", cmd_compare, "measure and compare existing builds (variants)" },
    { "report", cmd_report, "report a stored experiment (text, markdown, csv, json, html)" },
    { "history", cmd_history, "list the experiments in the results database" },
    { "calibrate", cmd_calibrate, "A/A experiment: this machine's noise floor" },
    { "server", cmd_server, "managed MariaDB/PostgreSQL server instances (start|stop|status)" },
    { "export", cmd_export, "a measured build (the --search winner) as a Debian package" },
};

static void usage(FILE *f)
{
    fprintf(f, "usage: pgolab <command> [options]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        fprintf(f, "  %-9s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\n`pgolab help COMMAND` (or `pgolab COMMAND --help`) shows a command's options;\n"
               "`pgolab help --man` prints the manual page pgolab(1); `pgolab --version`.\n");
}

int main(int argc, char **argv)
{
    knobs_announce();
    if (argc < 2) {
        usage(stderr);
        return 1;
    }
    if (!strcmp(argv[1], "help") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        if (argc > 2 && !strcmp(argv[2], "--man"))
            return man_print(stdout, commands, (int)(sizeof(commands) / sizeof(commands[0])),
                             PGOLAB_VERSION) < 0;
        for (size_t i = 0; argc > 2 && i < sizeof(commands) / sizeof(commands[0]); i++)
            if (!strcmp(argv[2], commands[i].name)) {
                char *hargv[] = { argv[2], (char *)"--help", NULL };
                return commands[i].fn(2, hargv);
            }
        if (argc > 2) {
            fprintf(stderr, "FATAL: unknown command '%s' (see `pgolab help`)\n", argv[2]);
            return 1;
        }
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "version") || !strcmp(argv[1], "--version")) {
        printf("pgolab %s\n", PGOLAB_VERSION);
        return 0;
    }
    if (!strcmp(argv[1], "complete")) /* the bash completion's helper, not in the help */
        return complete_main(argc - 1, argv + 1, commands,
                             (int)(sizeof(commands) / sizeof(commands[0])));
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        if (!strcmp(argv[1], commands[i].name))
            return commands[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "FATAL: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 1;
}
