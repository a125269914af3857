/* man: the pgolab(1) manual page in roff, generated at run time (`pgolab help --man`) from
 * the same text `pgolab COMMAND --help` prints, so the two cannot drift. */
#ifndef PGOLAB_CLI_MAN_H
#define PGOLAB_CLI_MAN_H

#include <stdio.h>

struct strbuf;

/* One command of the command table (src/main.c). */
struct man_command {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *summary;
};

/* Run c's `--help` with stdout captured into sb (also for `pgolab complete`). 0, or -1 after
 * a message. */
int man_capture_help(const struct man_command *c, struct strbuf *sb);

/* Print pgolab(1) to out: NAME, SYNOPSIS, DESCRIPTION, one section per command (its
 * `--help` output, captured by running fn with stdout on a temporary file), ENVIRONMENT,
 * FILES, EXIT STATUS. 0, or -1 after a message (a command's help that fails). */
int man_print(FILE *out, const struct man_command *cmds, int ncmds, const char *version);

#endif
