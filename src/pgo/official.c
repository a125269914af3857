/* official: the `official` variant of a server target (--variants=...,official): the
 * distribution's own server binary of the source being built (the recipe's server.official,
 * e.g. Debian's /usr/lib/postgresql/15/bin/postgres, or --official=PATH), measured, gated and
 * reported like the builds so that "is my build as fast as the official binary?" is one column
 * of the report. It is never built: the pipeline only checks it (it runs, it is a server of
 * the recipe's family, of the same major version as the source, whose datadirs it shares in
 * the gate and the measurement) and hashes it. */
#include "pgo/apt.h"
#include "pgo/major.h"
#include "pgo/source.h"
#include "pgo/stages.h"
#include "server/server.h"
#include "toolchain/toolchain.h"
#include "util/fs.h"
#include "util/strbuf.h"
#include "util/subprocess.h"
#include "util/util.h"

#include <assert.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The major version of a server version ("15.13", "10.11.6", a Debian version such as
 * "1:10.11.6-0+deb12u1" or "15.13-0+deb12u1"): PostgreSQL 10 and later its first number,
 * older PostgreSQL and MariaDB/MySQL the first two ("9.6", "10.11", "8.0"). Caller frees;
 * NULL when the text starts with no number. */
static char *major_of(enum server_kind kind, const char *version)
{
    const char *colon = strchr(version, ':'), *v = version;
    if (colon && colon > version && strspn(version, "0123456789") == (size_t)(colon - version))
        v = colon + 1; /* a Debian epoch */
    if (!isdigit((unsigned char)*v))
        return NULL;
    long first = strtol(v, NULL, 10);
    size_t n = strspn(v, "0123456789");
    if ((kind == SERVER_PGSQL && first >= 10) || v[n] != '.' ||
        !isdigit((unsigned char)v[n + 1]))
        return xstrndup(v, n);
    return xstrndup(v, n + 1 + strspn(v + n + 1, "0123456789"));
}

/* BINARY --version as "PostgreSQL 15.13" into *version and the bare number into *number.
 * -1 after a message naming the binary. */
static int server_version(const struct pgo_pipeline *p, const char *bin, const char *what,
                          char **version, char **number)
{
    struct strbuf out = STRBUF_INIT;
    const char *argv[] = { bin, "--version", NULL };
    struct subprocess sp = { .argv = argv, .out = &out, .timeout_s = 30, .quiet_stderr = 1 };
    int st = subprocess_run(&sp), rc = 0;
    char *flavor = NULL;
    *version = *number = NULL;
    if (st != 0 || server_parse_version(p->recipe.server_kind, out.buf, number, &flavor) < 0) {
        size_t first = strcspn(out.buf, "\n");
        rc = error("%s %s is not a %s server (`%s --version` %s '%.*s')", what, bin,
                   p->recipe.server_kind == SERVER_MYSQL ? "MariaDB/MySQL" : "PostgreSQL",
                   bin, st == 0 ? "says" : "fails, saying", (int)(first > 80 ? 80 : first),
                   first ? out.buf : "nothing");
    } else {
        *version = xasprintf("%s %s", flavor, *number);
    }
    free(flavor);
    strbuf_release(&out);
    return rc;
}

static void official_package(struct pgo_pipeline *p, const char *bin);

bool pgo_official_wanted(const struct pgo_request *rq)
{
    for (int i = 0; i < rq->nvariants; i++)
        if (!strcmp(rq->variants[i], "official"))
            return true;
    return false;
}

int pgo_official_check(struct pgo_pipeline *p)
{
    if (p->library || !pgo_official_wanted(p->rq))
        return 0;
    const char *bin = p->rq->official ? p->rq->official : p->recipe.official_binary;
    if (!bin)
        return error("--variants: official: the %s recipe names no official binary "
                     "(\"server\": {\"official\": {\"binary\": PATH}}); give one with "
                     "--official=PATH", p->recipe.name);
    if (!is_file(bin) || access(bin, X_OK) != 0) {
        const char *pkg = p->rq->official ? NULL : p->recipe.official_package;
        return error("--variants: official: %s is not an executable file%s%s%s", bin,
                     pkg ? " (install Debian's " : "", pkg ? pkg : "", pkg ? ")" : "");
    }
    p->official_bin = xstrdup(bin);
    if (server_version(p, bin, "--variants: official:", &p->official_version,
                       &p->official_number) < 0)
        return -1;
    official_package(p, bin);
    return 0;
}

/* The first line a command printed, or NULL when it failed or printed nothing. */
static char *first_line_of(const char *const *argv)
{
    struct strbuf out = STRBUF_INIT;
    strbuf_init(&out, 0);
    struct subprocess sp = { .argv = argv, .out = &out, .timeout_s = 30, .quiet_stderr = 1 };
    char *line = NULL;
    if (subprocess_run(&sp) == 0 && out.len && strcspn(out.buf, "\n"))
        line = xstrndup(out.buf, strcspn(out.buf, "\n"));
    strbuf_release(&out);
    return line;
}

int pgo_official_package_of(const char *bin, char **pkg, char **version)
{
    /* "postgresql-15: /usr/lib/postgresql/15/bin/postgres" (a diverted file: "diversion by
     * ..." lines, which have no ": /") */
    const char *search[] = { "dpkg-query", "-S", bin, NULL };
    char *owner = first_line_of(search);
    char *colon = owner ? strstr(owner, ": /") : NULL;
    *pkg = *version = NULL;
    if (colon)
        *colon = '\0';
    if (colon && !strchr(owner, ' ')) {
        const char *show[] = { "dpkg-query", "-W", "-f=${Version}", owner, NULL };
        *version = first_line_of(show);
        if (*version)
            *pkg = xstrdup(owner);
    }
    free(owner);
    return *pkg ? 0 : -1;
}

/* The Debian package that installed bin and its exact version (p->official_package,
 * p->official_debversion; both stay NULL for a binary no package installed). */
static void official_package(struct pgo_pipeline *p, const char *bin)
{
    pgo_official_package_of(bin, &p->official_package, &p->official_debversion);
}

int pgo_official_same_revision(const struct pgo_pipeline *p, const char *dir, const char *version)
{
    if (!p->official_bin)
        return 0;
    char *mismatch = pgo_source_version_mismatch(dir);
    if (mismatch) {
        error("--variants: official: %s; official is compared only with a build of a tree "
              "whose version is known (fetch it again, or pass --source=DIR)", mismatch);
        free(mismatch);
        return -1;
    }
    /* a tree's version from its .dsc alone has no epoch; dpkg's has */
    if (!p->official_debversion || !version ||
        !strcmp(pgo_version_without_epoch(version),
                pgo_version_without_epoch(p->official_debversion)))
        return 0;
    struct apt_conf apt;
    char *cmd = NULL;
    const char *pkg = p->recipe.debian_package;
    if (pkg && apt_conf_open(&apt, NULL) == 0) {
        cmd = apt_fetch_command(&apt, pkg, p->official_debversion);
        apt_conf_release(&apt);
    }
    error("--variants: official: %s is Debian's %s %s, but the source tree %s is %s: official is "
          "compared only with a build of its exact revision (else the gain includes the version "
          "change); %s%s%s", p->official_bin, p->official_package, p->official_debversion, dir,
          version, cmd ? "fetch that one with `" : "pass --source=DIR of that revision",
          cmd ? cmd : "", cmd ? "` (without --source, pgolab pgo fetches it itself)" : "");
    free(cmd);
    return -1;
}

int pgo_official_same_major(const struct pgo_pipeline *p, const char *what, const char *version)
{
    if (!p->official_bin || !version)
        return 0;
    assert(p->official_number != NULL);
    char *want = major_of(p->recipe.server_kind, version);
    char *have = major_of(p->recipe.server_kind, p->official_number);
    int rc = 0;
    if (want && have && strcmp(want, have))
        rc = error("--variants: official: %s is %s (major version %s), but %s is %s (major "
                   "version %s): an official binary must be of the source's major version "
                   "(--official=PATH names another)", p->official_bin, p->official_version,
                   have, what, version, want);
    free(want);
    free(have);
    return rc;
}

int pgo_official_against(const struct pgo_pipeline *p, const struct pgo_build *b)
{
    if (!p->official_bin)
        return 0;
    char *version = NULL, *number = NULL;
    int rc = server_version(p, b->product, "the build", &version, &number);
    if (rc == 0) {
        char *what = xasprintf("the %s build %s", b->name, b->product);
        rc = pgo_official_same_major(p, what, number);
        free(what);
    }
    free(version);
    free(number);
    return rc;
}

int pgo_official_hash(struct pgo_pipeline *p, struct pgo_build *b)
{
    assert(b->official && p->official_bin);
    free(b->sha256);
    b->sha256 = sha256_file(b->product);
    b->cached = true; /* nothing to build */
    return b->sha256 ? 0 : -1;
}

void pgo_official_print(const struct pgo_pipeline *p, const struct pgo_build *b)
{
    printf("  %-13s %s  sha256 %.16s  (%s, the distribution's binary: not built)\n", b->name,
           b->product, b->sha256 ? b->sha256 : "?", p->official_version);
}
