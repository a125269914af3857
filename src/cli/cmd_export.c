/* export: `pgolab export [TARGET] [--experiment=ID] [--variant=NAME] ...`, a measured build as a
 * Debian package (src/pgo/export.c does it); owns only the CLI. */
#include "cli/cli.h"
#include "cli/shared.h"
#include "pgo/export.h"
#include "store/store.h"
#include "util/fs.h"
#include "util/opts.h"
#include "util/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct opt_def export_options[] = {
    { "results", OPT_STRING, STORE_DEFAULT_PATH,
      "results database the pgo experiment is recorded in" },
    { "experiment", OPT_INT, NULL,
      "the pgo experiment whose build to export (default: the newest complete --search "
      "confirmation of TARGET, else the newest complete pgo experiment by time)" },
    { "variant", OPT_STRING, NULL,
      "the variant to export (default: the winner, the best significant tps gain over baseline; "
      "refused when none is significant)" },
    { "output", OPT_STRING, ".", "directory the .deb is written to" },
    { "name", OPT_STRING, NULL, "the package's name (default: pgolab-TARGET-VARIANT)" },
    OPT_END,
};

static void export_usage(void)
{
    printf("Usage: pgolab export [TARGET] [--experiment=ID] [--variant=NAME] [--results=FILE]\n"
           "                     [--output=DIR] [--name=PACKAGE]\n"
           "\n"
           "Turns a build that `pgolab pgo TARGET` measured (by default the winner of the newest\n"
           "--search) into a Debian package, PACKAGE_VERSION_ARCH.deb, that installs under\n"
           "/opt/pgolab/TARGET-VARIANT only, never over the distribution's files: a server's\n"
           "install prefix (without its test suites), or SQLite's libsqlite3.so with the\n"
           "libsqlite3.so.0 name for LD_LIBRARY_PATH. With a manifest (pgolab-manifest.json:\n"
           "target, source package and version, compiler and flags, trainer, profile digest,\n"
           "the measured gains with their 95%% CIs and the experiment) and a README on running\n"
           "it beside or instead of the distribution's server (/usr/share/doc/PACKAGE).\n"
           "The version is the source's Debian version +pgolabEXPERIMENT. Nothing is rebuilt:\n"
           "the build must still be in its work directory, the binary the one measured.\n"
           "Refused in one line: an unknown experiment or variant (what exists is listed), a\n"
           "build that is gone or changed, a profile that failed its health check, a package\n"
           "of that name already installed (its version named), an existing output file.\n"
           "Then: apt install ./PACKAGE_*.deb; pgolab server start --prefix=/opt/pgolab/...;\n"
           "apt remove PACKAGE.\n"
           "\n"
           "Options:\n");
    opts_print_help(export_options);
}

int cmd_export(int argc, char **argv)
{
    const struct opt_def *tables[] = { export_options };
    struct opts o;
    int rc = 1;
    if (cli_help(argc, argv, export_usage))
        return 0;
    opts_init(&o, tables, 1);
    o.cmd = "export";
    if (opts_parse(&o, argc - 1, argv + 1) < 0 || cli_results_env(&o) < 0)
        goto out;
    if (o.nargs > 1) {
        error("unexpected argument '%s': export takes one TARGET (see `pgolab export help`)",
              o.args[1]);
        goto out;
    }
    const char *outdir = opt_str(&o, "output");
    if (!is_dir(outdir)) {
        error("--output=%s: not a directory (the .deb is written into it)", outdir);
        goto out;
    }
    if (opt_is_set(&o, "experiment") && opt_int(&o, "experiment") < 1) {
        error("--experiment=%lld: an experiment id is 1 or more (see `pgolab history`)",
              (long long)opt_int(&o, "experiment"));
        goto out;
    }
    struct pgo_export_request rq = {
        .results = opt_str(&o, "results"),
        .target = o.nargs ? o.args[0] : NULL,
        .experiment_id = opt_is_set(&o, "experiment") ? opt_int(&o, "experiment") : 0,
        .variant = opt_str(&o, "variant"),
        .outdir = outdir,
        .name = opt_str(&o, "name"),
    };
    rc = pgo_export(&rq);
out:
    opts_release(&o);
    return rc;
}
