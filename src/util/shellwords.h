/* shellwords: a POSIX shell command text (what `make -n` prints, what dh_auto_configure
 * --no-act prints) split into simple commands and their words, the way sh would split it
 * before any expansion: single quotes, double quotes (with \" \\ \$ \` escapes), backslash
 * escapes and backslash-newline continuations are undone; &&, ||, ;, |, &, (, ) and newlines
 * end a command; a # at a word's start comments to the line's end. Nothing is expanded or run:
 * $VAR, ${...} and $(...) stay as written (a word holding one is the caller's to judge).
 * Owns no state; what it returns is the caller's. */
#ifndef PGOLAB_SHELLWORDS_H
#define PGOLAB_SHELLWORDS_H

#include "util/argvec.h"

/* One simple command: its words, in order. */
struct shell_command {
    struct argvec words;
};

/* Split text into *out (an array of *n commands, none empty; caller frees with
 * shell_commands_free). -1 with *out NULL for an unterminated quote. */
int shell_commands(const char *text, struct shell_command **out, int *n);
void shell_commands_free(struct shell_command *c, int n);

#endif
