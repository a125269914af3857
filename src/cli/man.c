/* man: pgolab(1) from the commands' own --help text (see man.h). */
#include "cli/man.h"
#include "util/strbuf.h"
#include "util/util.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int man_capture_help(const struct man_command *c, struct strbuf *sb)
{
    FILE *tmp = tmpfile();
    if (!tmp)
        return error("help --man: no temporary file for `pgolab %s --help`", c->name);
    fflush(stdout);
    int saved = dup(STDOUT_FILENO);
    if (saved < 0 || dup2(fileno(tmp), STDOUT_FILENO) < 0) {
        fclose(tmp);
        return error("help --man: cannot redirect the output of `pgolab %s --help`", c->name);
    }
    char *argv[] = { (char *)c->name, (char *)"--help", NULL };
    int rc = c->fn(2, argv);
    fflush(stdout);
    dup2(saved, STDOUT_FILENO);
    close(saved);
    rewind(tmp);
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), tmp)) > 0)
        strbuf_add(sb, buf, n);
    fclose(tmp);
    if (rc != 0)
        return error("help --man: `pgolab %s --help` exited %d", c->name, rc);
    return 0;
}

/* Text as roff without filling: backslashes doubled, a leading '.' or '\'' protected. */
static void roff_verbatim(FILE *out, const char *text)
{
    fputs(".nf\n", out);
    const char *p = text;
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        if (len && (p[0] == '.' || p[0] == '\''))
            fputs("\\&", out);
        for (size_t i = 0; i < len; i++) {
            if (p[i] == '\\')
                fputs("\\e", out);
            else if (p[i] == '-')
                fputs("\\-", out);
            else
                fputc(p[i], out);
        }
        fputc('\n', out);
        p += len + (nl ? 1 : 0);
    }
    fputs(".fi\n", out);
}

int man_print(FILE *out, const struct man_command *cmds, int ncmds, const char *version)
{
    struct strbuf *help = xcalloc((size_t)ncmds, sizeof(*help));
    int rc = 0;
    for (int i = 0; i < ncmds && rc == 0; i++) {
        help[i] = (struct strbuf)STRBUF_INIT;
        rc = man_capture_help(&cmds[i], &help[i]);
    }
    if (rc == 0) {
        fprintf(out, ".TH PGOLAB 1 \"\" \"pgolab %s\" \"User Commands\"\n", version);
        fputs(".SH NAME\npgolab \\- OLTP benchmark workbench: sysbench-compatible load, A/B "
              "experiments with statistics, PGO builds\n", out);
        fputs(".SH SYNOPSIS\n.nf\n\\fBpgolab\\fR \\fICOMMAND\\fR [\\fIoptions\\fR]\n"
              "\\fBpgolab help\\fR [\\fB\\-\\-man\\fR]\n\\fBpgolab \\-\\-version\\fR\n.fi\n", out);
        fputs(".SH DESCRIPTION\npgolab answers \"is build B of my OLTP database faster than "
              "build A, by how much, and why?\" and makes the faster build with profile-guided "
              "optimization. Commands:\n", out);
        for (int i = 0; i < ncmds; i++)
            fprintf(out, ".TP\n.B %s\n%s\n", cmds[i].name, cmds[i].summary);
        for (int i = 0; i < ncmds; i++) {
            fprintf(out, ".SH \"PGOLAB %s\"\n", cmds[i].name);
            roff_verbatim(out, help[i].buf ? help[i].buf : "");
        }
        fputs(".SH ENVIRONMENT\n.TP\n.B PGOLAB_RESULTS\nThe results database when "
              "\\-\\-results is not given (default ./pgolab.db).\n"
              ".TP\n.B MYSQL_PWD, PGPASSWORD\nThe server account's password, as the "
              "\\-\\-mysql\\-password / \\-\\-pgsql\\-password options.\n", out);
        fputs(".SH FILES\n.TP\n.B ./pgolab.db\nThe results database (every experiment, run "
              "by run).\n.TP\n.B RESULTS.logs/\nServer logs named in error messages, kept "
              "beside the results database.\n.TP\n.B ~/.local/state/pgolab/last-results\n"
              "Where experiments were last recorded (named when a results file is missing).\n"
              ".TP\n.B PREFIX/share/pgolab/recipes/\nThe PGO recipes of \\fBpgolab pgo\\fR.\n",
              out);
        fputs(".SH EXIT STATUS\n0 ok, 1 error or bad input, 2 interrupted, 3 "
              "\\-\\-fail\\-if\\-slower tripped.\n", out);
    }
    for (int i = 0; i < ncmds; i++)
        strbuf_release(&help[i]);
    free(help);
    return rc;
}
