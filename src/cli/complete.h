/* complete: `pgolab complete`, the hidden helper of the bash completion (complete.c says what
 * it prints). Owns no state. */
#ifndef PGOLAB_CLI_COMPLETE_H
#define PGOLAB_CLI_COMPLETE_H

#include "cli/man.h"

/* `pgolab complete WHAT [ARG] [--results=FILE]` (argv[0] = "complete") with the command table
 * cmds[0..ncmds): the words, one per line; 0, or 1 (printing nothing) for unknown input. */
int complete_main(int argc, char **argv, const struct man_command *cmds, int ncmds);

#endif
