/* distro: Debian's configure options and compile flags of a source tree, read by dry runs of
 * its debian/rules, for the distro variant (distro.h). */
#include "pgo/distro.h"
#include "util/fs.h"
#include "util/shellwords.h"
#include "util/strbuf.h"
#include "util/subprocess.h"
#include "util/util.h"

#include <assert.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DRY_RUN_TIMEOUT_S 120
#define MAX_DEPTH 4 /* sh -c inside sh -c inside dh_auto_configure's command: deep enough */

/* The compile flags Debian passes (dpkg-buildflags' names). */
static const char *const flag_names[] = { "CFLAGS", "CXXFLAGS", "CPPFLAGS", "LDFLAGS" };

/* The settings dpkg-buildflags reads, as a rules file may set them (dpkg-buildflags(1)). */
static const char *const maint_suffixes[] = { "MAINT_APPEND", "MAINT_PREPEND", "MAINT_SET",
                                              "MAINT_STRIP" };

/* Run argv in cwd with env (NULL-terminated or NULL); stdout into out. The exit status, or
 * -1. With why, a failure's reason: the first stderr line that says "error", else its last
 * line (caller frees; NULL when it wrote none). */
static int run_capture(const char *const *argv, const char *cwd, const char *const *env,
                       struct strbuf *out, char **why)
{
    char *errlog = NULL;
    if (why) {
        *why = NULL;
        int fd = private_tmpfile("pgolab-distro-err", &errlog);
        if (fd < 0)
            return -1;
        close(fd);
    }
    struct subprocess sp = { .argv = argv, .cwd = cwd, .env = env, .out = out,
                             .log_path = errlog, .quiet_stderr = 1,
                             .timeout_s = DRY_RUN_TIMEOUT_S };
    int rc = subprocess_run(&sp);
    struct strbuf err = STRBUF_INIT;
    strbuf_init(&err, 0);
    if (why && rc != 0 && strbuf_read_file(&err, errlog) == 0) {
        while (err.len && err.buf[err.len - 1] == '\n') /* its last line, not an empty one */
            err.buf[--err.len] = '\0';
        const char *line = strstr(err.buf, "error");
        if (!line)
            line = err.buf + err.len;
        while (line > err.buf && line[-1] != '\n')
            line--;
        if (*line)
            *why = xstrndup(line, strcspn(line, "\n"));
    }
    strbuf_release(&err);
    if (errlog)
        unlink(errlog);
    free(errlog);
    return rc;
}

/* path's last component ("{source}/configure": "configure"). */
static const char *base_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

char *pgo_distro_option_name(const char *opt)
{
    const char *from = opt;
    if (!strncmp(opt, "-D", 2) && opt[2] != '-')
        from = opt + 2; /* cmake's -DNAME[:TYPE]=VALUE */
    size_t n = strcspn(from, from == opt ? "=" : ":=");
    return xstrndup(from, n);
}

/* Whether rule's option names opt: its name, or the whole option. */
static bool rule_matches(const char *rule, const char *opt)
{
    char *name = pgo_distro_option_name(opt);
    char *rname = pgo_distro_option_name(rule);
    bool hit = !strcmp(rule, opt) || (!strchr(rule, '=') && !strcmp(rname, name));
    free(name);
    free(rname);
    return hit;
}

/* Whether name (an option's) is an install directory: autoconf's --prefix, --exec-prefix and
 * --*dir (bindir, libdir, mandir, sysconfdir, ...), cmake's CMAKE_INSTALL_*, INSTALL_* and
 * *_INSTALL_* (MySQL's INSTALL_LIBDIR, ROUTER_INSTALL_LIBDIR). */
static bool install_dir(const char *opt, const char *name)
{
    size_t n = strlen(name);
    if (!strncmp(opt, "--", 2))
        return !strcmp(name, "--prefix") || !strcmp(name, "--exec-prefix") ||
               (n > 5 && !strcmp(name + n - 3, "dir") && strchr(opt, '='));
    if (!strncmp(opt, "-D", 2))
        return !strncmp(name, "CMAKE_INSTALL_", 14) || !strncmp(name, "INSTALL_", 8) ||
               strstr(name, "_INSTALL_") != NULL;
    return false;
}

const char *pgo_distro_drop_reason(const struct recipe *r, const char *opt)
{
    for (int i = 0; i < r->ndistro_drop; i++)
        if (rule_matches(r->distro_drop[i].option, opt))
            return r->distro_drop[i].reason;
    char *name = pgo_distro_option_name(opt);
    bool dir = install_dir(opt, name);
    free(name);
    if (dir)
        return "an install directory of the package: the variant installs under its own prefix";
    if (opt[0] != '-' && !strchr(opt, '='))
        return "Debian's source directory: the variant builds the tree pgolab was given";
    return NULL;
}

/* ---- the dry runs ------------------------------------------------------------------- */

/* The make variables names[] as debian/rules sets them, into vals[] (caller frees each; NULL
 * where empty): a second makefile whose target prints them with $(info), under make -n, so
 * nothing of the rules runs but its $(shell ...) assignments. 0 or -1. */
static int rules_vars(const char *tree, const char *const *names, int n, char **vals)
{
    char *helper = NULL;
    int fd = private_tmpfile("pgolab-distro-vars", &helper);
    if (fd < 0)
        return -1;
    struct strbuf mk = STRBUF_INIT;
    strbuf_init(&mk, 0);
    strbuf_addstr(&mk, ".PHONY: pgolab-distro-vars\npgolab-distro-vars:\n");
    for (int i = 0; i < n; i++)
        strbuf_addf(&mk, "\t$(info pgolab-var %s=$(%s))\n", names[i], names[i]);
    bool wrote = write(fd, mk.buf, mk.len) == (ssize_t)mk.len;
    close(fd);
    strbuf_release(&mk);
    struct strbuf out = STRBUF_INIT;
    strbuf_init(&out, 0);
    const char *argv[] = { "make", "-n", "-s", "--no-print-directory", "-f", "debian/rules",
                           "-f", helper, "pgolab-distro-vars", NULL };
    char *why = NULL;
    int rc = wrote ? run_capture(argv, tree, NULL, &out, &why) : -1;
    unlink(helper);
    free(helper);
    if (rc != 0) {
        strbuf_release(&out);
        error("%s/debian/rules: its make variables could not be read (make -n exited %d%s%s)",
              tree, rc, why ? ": " : "", why ? why : "");
        free(why);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        char *key = xasprintf("pgolab-var %s=", names[i]);
        const char *at = strstr(out.buf, key);
        vals[i] = NULL;
        if (at) {
            at += strlen(key);
            size_t len = strcspn(at, "\n");
            while (len && at[len - 1] == ' ')
                len--;
            if (len)
                vals[i] = xstrndup(at, len);
        }
        free(key);
    }
    strbuf_release(&out);
    return 0;
}

/* What the dry runs found: the program's command. */
struct found {
    struct argvec assigns, args;  /* NAME=VALUE before the program; its arguments */
    char *dir;                    /* where it runs, relative to the tree or absolute */
    bool dh;                      /* printed by dh_auto_configure --no-act */
};

static int find_in(const char *tree, const char *text, const char *prog, const char *dir,
                   int depth, struct found *f);

/* A dh_auto_configure command (words from k) asked what it would run: --no-act after its name,
 * in the tree. */
static int ask_dh(const char *tree, const struct argvec *w, int k, const char *prog,
                  const char *dir, int depth, struct found *f)
{
    struct argvec argv = ARGVEC_INIT;
    argvec_push(&argv, w->v[k]);
    argvec_push(&argv, "--no-act");
    for (int i = k + 1; i < w->n; i++)
        argvec_push(&argv, w->v[i]);
    struct strbuf out = STRBUF_INIT;
    strbuf_init(&out, 0);
    char *cwd = dir[0] == '/' ? xstrdup(dir) : path_join(tree, dir);
    char *why = NULL;
    int rc = run_capture(argvec_argv(&argv), cwd, NULL, &out, &why);
    int found = 0;
    if (rc != 0)
        found = error("%s: `%s --no-act`, which says what debian/rules would configure, exited "
                      "%d%s%s", tree, w->v[k], rc, why ? ": " : "", why ? why : "");
    else if ((found = find_in(tree, out.buf, prog, dir, depth + 1, f)) == 1)
        f->dh = true;
    free(why);
    free(cwd);
    strbuf_release(&out);
    argvec_clear(&argv);
    return found;
}

/* Look for prog among the commands of text (run in dir): 1 found (into f), 0 not, -1 error.
 * `cd DIR` moves; `sh -c TEXT` and dh_auto_configure are looked into. */
static int find_in(const char *tree, const char *text, const char *prog, const char *dir,
                   int depth, struct found *f)
{
    struct shell_command *c;
    int n, rc = 0;
    if (depth > MAX_DEPTH)
        return 0;
    if (shell_commands(text, &c, &n) < 0)
        return error("%s/debian/rules: its dry run printed a command with an unterminated "
                     "quote", tree);
    char *cur = xstrdup(dir);
    for (int i = 0; i < n && rc == 0; i++) {
        const struct argvec *w = &c[i].words;
        int k = 0;
        while (k < w->n && strchr(w->v[k], '=') && w->v[k][0] != '-' && w->v[k][0] != '=')
            k++;
        if (k == w->n)
            continue;
        const char *cmd = base_of(w->v[k]);
        if (!strcmp(cmd, "cd") && k + 1 < w->n) {
            char *next = w->v[k + 1][0] == '/' || !strcmp(cur, ".")
                             ? xstrdup(w->v[k + 1]) : path_join(cur, w->v[k + 1]);
            free(cur);
            cur = next;
        } else if ((!strcmp(cmd, "sh") || !strcmp(cmd, "bash")) && k + 2 < w->n &&
                   !strcmp(w->v[k + 1], "-c")) {
            rc = find_in(tree, w->v[k + 2], prog, cur, depth + 1, f);
        } else if (!strcmp(cmd, "dh_auto_configure")) {
            rc = ask_dh(tree, w, k, prog, cur, depth, f);
        } else if (!strcmp(cmd, prog)) {
            for (int a = 0; a < k; a++)
                argvec_push(&f->assigns, w->v[a]);
            for (int a = k + 1; a < w->n; a++)
                argvec_push(&f->args, w->v[a]);
            f->dir = xstrdup(cur);
            rc = 1;
        }
    }
    free(cur);
    shell_commands_free(c, n);
    return rc;
}

/* The commands `make -n` prints for the rules' configure target: the -arch override, the plain
 * one, else (only dh's "%" rule answers) dh_auto_configure itself. 1 found, 0 not, -1. */
static int find_configure(const char *tree, const char *prog, struct found *f, char **via)
{
    static const char *const targets[] = { "override_dh_auto_configure-arch",
                                            "override_dh_auto_configure" };
    for (size_t t = 0; t < ARRAY_SIZE(targets); t++) {
        struct strbuf out = STRBUF_INIT;
        strbuf_init(&out, 0);
        const char *argv[] = { "make", "-n", "-s", "--no-print-directory", "-f", "debian/rules",
                               targets[t], NULL };
        int rc = run_capture(argv, tree, NULL, &out, NULL);
        char *dh_only = xasprintf("dh %s", targets[t]);
        bool own = rc == 0 && out.len && strncmp(out.buf, dh_only, strlen(dh_only));
        free(dh_only);
        int found = own ? find_in(tree, out.buf, prog, ".", 0, f) : 0;
        strbuf_release(&out);
        if (found != 0) {
            *via = xasprintf("debian/rules %s%s", targets[t],
                             f->dh ? ", dh_auto_configure --no-act" : "");
            return found;
        }
        if (own) /* the override runs something else: not the configure pgolab knows */
            return error("%s/debian/rules: its %s runs no %s that pgolab can find (a dry run of "
                         "make -n printed none; is the tree already configured?)", tree,
                         targets[t], prog);
    }
    int found = find_in(tree, "dh_auto_configure", prog, ".", 0, f);
    if (found == 1)
        *via = xstrdup("dh_auto_configure --no-act (debian/rules overrides no configure)");
    return found;
}

/* The flags: the rules' own make variables, else dpkg-buildflags with the rules' settings. */
static int read_flags(const char *tree, struct pgo_distro *d, char **flags)
{
    const size_t nf = ARRAY_SIZE(flag_names), nm = ARRAY_SIZE(maint_suffixes);
    const int nnames = (int)(nf + 1 + nf * nm);
    char **names = xcalloc((size_t)nnames, sizeof(*names));
    char **vals = xcalloc((size_t)nnames, sizeof(*vals));
    int k = 0;
    for (size_t i = 0; i < nf; i++)
        names[k++] = xstrdup(flag_names[i]);
    names[k++] = xstrdup("DEB_BUILD_MAINT_OPTIONS");
    for (size_t i = 0; i < nf; i++)
        for (size_t m = 0; m < nm; m++)
            names[k++] = xasprintf("DEB_%s_%s", flag_names[i], maint_suffixes[m]);
    assert(k == nnames);
    int rc = rules_vars(tree, (const char *const *)names, nnames, vals);
    bool own = rc == 0 && vals[0];
    d->maint_options = rc == 0 && vals[nf] ? xstrdup(vals[nf]) : NULL;
    d->flags_from = xstrdup(own ? "debian/rules (dpkg's buildflags.mk: dpkg-buildflags)"
                                : "dpkg-buildflags");
    struct argvec env = ARGVEC_INIT; /* dpkg-buildflags' settings, as the rules set them */
    for (int i = (int)nf; rc == 0 && i < nnames; i++)
        if (vals[i])
            argvec_pushf(&env, "%s=%s", names[i], vals[i]);
    for (size_t i = 0; rc == 0 && i < nf; i++) {
        if (own) {
            flags[i] = xstrdup(vals[i] ? vals[i] : "");
            continue;
        }
        struct strbuf out = STRBUF_INIT;
        strbuf_init(&out, 0);
        const char *argv[] = { "dpkg-buildflags", "--get", flag_names[i], NULL };
        char *why = NULL;
        if (run_capture(argv, tree, env.n ? argvec_argv(&env) : NULL, &out, &why) != 0)
            rc = error("dpkg-buildflags --get %s failed in %s (Debian package dpkg-dev)%s%s",
                       flag_names[i], tree, why ? ": " : "", why ? why : "");
        free(why);
        out.buf[strcspn(out.buf, "\n")] = '\0';
        flags[i] = xstrdup(out.buf);
        strbuf_release(&out);
    }
    for (int i = 0; i < nnames; i++) {
        free(names[i]);
        free(vals[i]);
    }
    free(names);
    free(vals);
    argvec_clear(&env);
    return rc;
}

/* f's words into d: the assignments before the program and its options, each kept or
 * dropped with its reason; relative values taken from Debian's build directory. */
static void sort_options(const struct recipe *r, const struct found *f, struct pgo_distro *d)
{
    for (int i = 0; i < f->assigns.n; i++) {
        const char *a = f->assigns.v[i];
        char *name = xstrndup(a, strcspn(a, "="));
        if (!strcmp(name, "CC") || !strcmp(name, "CXX"))
            argvec_pushf(&d->dropped, "%s (the compiler is pgolab's --cc, GCC as Debian's)", a);
        else if (!strcmp(name, "PATH"))
            argvec_pushf(&d->dropped, "%s (the build runs with pgolab's PATH)", a);
        else if (strchr(a, '$'))
            argvec_pushf(&d->dropped, "%s (a shell expansion pgolab does not evaluate)", a);
        else
            argvec_push(&d->env, a);
        free(name);
    }
    for (int i = 0; i < f->args.n; i++) {
        const char *o = f->args.v[i];
        const char *why = pgo_distro_drop_reason(r, o);
        if (why) {
            argvec_pushf(&d->dropped, "%s (%s)", o, why);
            continue;
        }
        const char *eq = strchr(o, '=');
        const char *val = eq ? eq + 1 : o;
        if (!strncmp(val, "../", 3) || !strncmp(val, "./", 2)) {
            char *abs = path_join(d->builddir, val);
            argvec_pushf(&d->options, "%.*s%s", (int)(val - o), o, abs);
            free(abs);
        } else {
            argvec_push(&d->options, o);
        }
    }
}

int pgo_distro_read(const char *tree, const struct recipe *r, struct pgo_distro *out)
{
    memset(out, 0, sizeof(*out));
    assert(r->has_distro);
    char *rules = path_join(tree, "debian/rules");
    bool have = is_file(rules);
    free(rules);
    if (!have)
        return error("the distro variant is built as Debian builds the package, from its "
                     "debian/rules, and %s has none (a Debian source package tree is needed: "
                     "leave out --source, or give the tree `apt-get source` unpacks)", tree);
    const char *prog = base_of(r->distro_run[0]);
    struct found f = { ARGVEC_INIT, ARGVEC_INIT, NULL, false };
    char *flags[ARRAY_SIZE(flag_names)] = { NULL };
    int rc = find_configure(tree, prog, &f, &out->via);
    if (rc == 0)
        rc = error("%s/debian/rules: no %s command in the dry run of its configure (make -n "
                   "-f debian/rules override_dh_auto_configure, dh_auto_configure --no-act); "
                   "the recipe's distro.run names %s", tree, prog, r->distro_run[0]);
    if (rc == 1)
        rc = read_flags(tree, out, flags);
    if (rc == 0) {
        out->builddir = f.dir[0] == '/' ? xstrdup(f.dir) : path_join(tree, f.dir);
        /* debhelper's cmake build system adds CPPFLAGS to CFLAGS and CXXFLAGS, as cmake reads
         * no CPPFLAGS (Debian::Debhelper::Buildsystem::cmake, compat 9 and later) */
        if (f.dh && !strcmp(prog, "cmake") && flags[2] && *flags[2])
            for (int i = 0; i < 2; i++) {
                char *both = xasprintf("%s %s", flags[i], flags[2]);
                free(flags[i]);
                flags[i] = both;
            }
        for (size_t i = 0; i < ARRAY_SIZE(flag_names); i++)
            argvec_pushf(&out->env, "%s=%s", flag_names[i], flags[i]);
        sort_options(r, &f, out);
        /* what configure compiles with: an option CFLAGS=... (PostgreSQL's rules pass one)
         * wins over the environment's */
        out->cflags = xstrdup(flags[0]);
        for (int i = 0; i < out->options.n; i++)
            if (!strncmp(out->options.v[i], "CFLAGS=", 7)) {
                free(out->cflags);
                out->cflags = xstrdup(out->options.v[i] + 7);
            }
    }
    for (size_t i = 0; i < ARRAY_SIZE(flag_names); i++)
        free(flags[i]);
    argvec_clear(&f.assigns);
    argvec_clear(&f.args);
    free(f.dir);
    if (rc < 0)
        pgo_distro_release(out);
    return rc < 0 ? -1 : 0;
}

/* Whether Debian package pkg is installed (dpkg-query). */
static bool installed(const char *pkg)
{
    struct strbuf out = STRBUF_INIT;
    strbuf_init(&out, 0);
    const char *argv[] = { "dpkg-query", "-W", "-f=${Status}", pkg, NULL };
    bool yes = run_capture(argv, NULL, NULL, &out, NULL) == 0 && strstr(out.buf, "ok installed");
    strbuf_release(&out);
    return yes;
}

/* Append pkg to the space-separated list unless it is there. */
static void add_package(struct strbuf *pkgs, const char *pkg)
{
    char *word = xasprintf(" %s ", pkg), *padded = xasprintf(" %s ", pkgs->buf ? pkgs->buf : "");
    if (!strstr(padded, word))
        strbuf_addf(pkgs, "%s%s", pkgs->len ? " " : "", pkg);
    free(word);
    free(padded);
}

int pgo_distro_check(const struct pgo_distro *d, const struct recipe *r)
{
    struct strbuf what = STRBUF_INIT, pkgs = STRBUF_INIT, dflt = STRBUF_INIT;
    strbuf_init(&what, 0);
    strbuf_init(&pkgs, 0);
    strbuf_init(&dflt, 0);
    for (int k = 0; k < r->ndistro_requires; k++) { /* what the configure uses by default */
        const struct recipe_distro_rule *q = &r->distro_requires[k];
        if (!q->option && !installed(q->package)) {
            strbuf_addf(&dflt, "%s%s", dflt.len ? ", " : "", q->package);
            add_package(&pkgs, q->package);
        }
    }
    if (dflt.len)
        strbuf_addf(&what, "its configure's defaults (%s)", dflt.buf);
    for (int i = 0; i < d->options.n; i++)
        for (int k = 0; k < r->ndistro_requires; k++) {
            const struct recipe_distro_rule *q = &r->distro_requires[k];
            if (!q->option || !rule_matches(q->option, d->options.v[i]) || installed(q->package))
                continue;
            strbuf_addf(&what, "%s%s (%s)", what.len ? ", " : "", d->options.v[i], q->package);
            add_package(&pkgs, q->package);
        }
    int rc = 0;
    if (what.len)
        rc = error("the distro variant builds %s with Debian's options, and these need Debian "
                   "packages not installed: %s: apt-get install %s (or leave distro out of "
                   "--variants)", r->title, what.buf, pkgs.buf);
    strbuf_release(&what);
    strbuf_release(&pkgs);
    strbuf_release(&dflt);
    return rc;
}

void pgo_distro_print(const struct pgo_distro *d)
{
    printf("  %-13s flags from %s%s%s:", "", d->flags_from,
           d->maint_options ? ", DEB_BUILD_MAINT_OPTIONS=" : "",
           d->maint_options ? d->maint_options : "");
    for (int i = 0; i < d->env.n; i++)
        printf(" %s", d->env.v[i]);
    printf("\n");
    char *opts = argvec_join(&d->options);
    printf("  %-13s options from %s: %s\n", "", d->via, opts);
    free(opts);
    for (int i = 0; i < d->dropped.n; i++)
        printf("  %-13s dropped %s\n", "", d->dropped.v[i]);
}

void pgo_distro_release(struct pgo_distro *d)
{
    free(d->via);
    free(d->builddir);
    argvec_clear(&d->options);
    argvec_clear(&d->env);
    argvec_clear(&d->dropped);
    free(d->maint_options);
    free(d->flags_from);
    free(d->cflags);
    memset(d, 0, sizeof(*d));
}
