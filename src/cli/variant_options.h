/* variant_options: --variant-server-option=VARIANT:NAME=VALUE of compare and pgo, a server
 * option of one variant only (a configuration A/B is then a variant like a build): parsed,
 * checked against the variants and the server family, and given to each variant
 * (struct variant's server_options). Owns no state. */
#ifndef PGOLAB_CLI_VARIANT_OPTIONS_H
#define PGOLAB_CLI_VARIANT_OPTIONS_H

#include "model/model.h"
#include "util/options.h"

/* The option's table entry, for the option tables of compare and pgo. */
#define CLI_VARIANT_SERVER_OPTION                                                                 \
    { "variant-server-option", OPT_MULTI, NULL, "a server option of one managed-server variant only, VARIANT:NAME=VALUE (repeatable), e.g. B:shared_buffers=256MB; it comes after the --server-option values on that variant's command line and replaces one of the same name, so a configuration A/B is a variant like a build; recorded with the variant (settings, --output JSON, the report's variant lines)" }

/* Every --variant-server-option of o into its variant among v[0..nv): VARIANT is the name of
 * one of them (the longest name followed by ':' wins, so a name may itself hold ':'), the
 * variant must be a managed server (VARIANT_SERVER), and NAME=VALUE must be an option its
 * family takes (server_option_args_as(); the options pgolab manages are refused) and not
 * given twice for the variant. Nothing is changed on error. -1 after one line naming the
 * value and what would be right. */
int cli_variant_server_options(const struct opts *o, struct variant *v, int nv);

#endif
