/* cli: one entry point per subcommand (git-style command table in main.c). Each takes the
 * subcommand's argv (argv[0] is the subcommand name) and returns the process exit code:
 * 0 ok, 1 error or bad input, 2 forced shutdown / interrupted (sysbench's meaning),
 * 3 a variant is significantly slower than --fail-if-slower allows. */
#ifndef PGOLAB_CLI_H
#define PGOLAB_CLI_H

int cmd_bench(int argc, char **argv);
int cmd_pgo(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_history(int argc, char **argv);
int cmd_calibrate(int argc, char **argv);
int cmd_server(int argc, char **argv);
int cmd_export(int argc, char **argv);

/* Each variant kind `pgolab pgo --variants` accepts (a server target's: a library's are among
 * them) to fn, in the help's order (cli/pgo.c; for `pgolab complete`). */
void cli_pgo_variant_kinds(void (*fn)(const char *kind));

#endif
