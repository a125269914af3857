/* variant_options: the server options of one variant only, given as VARIANT:NAME=VALUE
 * (--variant-server-option of compare and pgo; a configuration A/B is then a variant like a
 * build): checked against the variants and their server family, and given to each variant
 * (struct variant's server_options). Owns no state. */
#ifndef PGOLAB_EXPERIMENT_VARIANT_OPTIONS_H
#define PGOLAB_EXPERIMENT_VARIANT_OPTIONS_H

#include "model/model.h"

/* Each of vals[0..n) ("VARIANT:NAME=VALUE", as --variant-server-option takes it) into its
 * variant among v[0..nv): VARIANT is the name of one of them (the longest name followed by
 * ':' wins, so a name may itself hold ':'), the variant must be a managed server
 * (VARIANT_SERVER), and NAME=VALUE an option its family takes (server_option_args_as(); the
 * options pgolab manages are refused) and not given twice for the variant. With apply false
 * only checked. Nothing is changed on error. -1 after one line naming the value and what
 * would be right. */
int experiment_variant_server_options(const char *const *vals, int n, struct variant *v, int nv,
                                      bool apply);

#endif
