/* flags: the PGO compiler flag table (gcc/clang x baseline/instrumented/pgo) and compiler
 * probing. The table is data so that other targets (server recipes) reuse the same shape. */
#include "toolchain/toolchain.h"
#include "util/fs.h"
#include "util/strbuf.h"
#include "util/subprocess.h"
#include "util/util.h"

#include <ctype.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


/* ---- the flag table ----------------------------------------------------------------- */

#define MAX_PHASE_FLAGS 8

struct pgo_flagset {
    enum cc_family cc;
    enum build_phase phase;
    const char *flags[MAX_PHASE_FLAGS];  /* NULL-terminated templates */
};

/* Sources: reference/pgo.md 4.1 (flags), 4.2 (GCC names .gcda files after the mangled
 * absolute object path; -fprofile-prefix-path strips the build dir so the instrumented and
 * pgo builds may live in different directories), 4.3 (threads: prefer-atomic / atomic
 * counters; -fprofile-correction), 4.4 (missing or stale profiles become hard errors).
 * -ftest-coverage only writes a .gcno notes file beside each instrumented object (the same
 * instrumentation, code and checksums): it names the functions of the .gcda counts, which the
 * profile health check (pgo/profile_check.c) reads with gcov-dump.
 * -fopt-info-note-ipa makes -fprofile-correction visible: GCC then notes "correcting
 * inconsistent profile data" in the log of each compilation whose counts it had to correct
 * (pgo/correction.c counts them; without the flag it corrects silently). */
static const struct pgo_flagset pgo_flag_table[] = {
    { CC_GCC, BUILD_BASELINE, { NULL } },
    { CC_GCC, BUILD_INSTRUMENTED,
      { "-fprofile-generate={profile_dir}", "-fprofile-update=prefer-atomic",
        "-fprofile-prefix-path={build_dir}", "-ftest-coverage", NULL } },
    { CC_GCC, BUILD_PGO,
      { "-fprofile-use={profile_dir}", "-fprofile-correction",
        "-fprofile-prefix-path={build_dir}", "-Wmissing-profile", "-Werror=missing-profile",
        "-Werror=coverage-mismatch", "-fopt-info-note-ipa", NULL } },
    { CC_CLANG, BUILD_BASELINE, { NULL } },
    { CC_CLANG, BUILD_INSTRUMENTED,
      { "-fprofile-instr-generate={profile_dir}/%p-%m.profraw", "-fprofile-update=atomic",
        NULL } },
    { CC_CLANG, BUILD_PGO,
      { "-fprofile-instr-use={profdata}", "-Werror=profile-instr-missing",
        "-Werror=profile-instr-out-of-date", "-Werror=profile-instr-unprofiled", NULL } },
};

const char *build_phase_name(enum build_phase phase)
{
    static const char *const names[] = { "baseline", "instrumented", "pgo" };
    return (unsigned)phase < ARRAY_SIZE(names) ? names[phase] : "?";
}

const char *cc_family_name(enum cc_family cc)
{
    return cc == CC_CLANG ? "clang" : "gcc";
}

const char *const *pgo_flag_templates(enum cc_family cc, enum build_phase phase)
{
    for (size_t i = 0; i < ARRAY_SIZE(pgo_flag_table); i++)
        if (pgo_flag_table[i].cc == cc && pgo_flag_table[i].phase == phase)
            return pgo_flag_table[i].flags;
    return NULL;
}

/* Expand one template into sb. -1 with a message on a missing or relative path. */
static int expand_template(struct strbuf *sb, const char *tmpl, const struct pgo_paths *paths)
{
    static const struct {
        const char *key;
        size_t off;
    } keys[] = {
        { "{profile_dir}", offsetof(struct pgo_paths, profile_dir) },
        { "{profdata}", offsetof(struct pgo_paths, profdata) },
        { "{build_dir}", offsetof(struct pgo_paths, build_dir) },
    };
    const char *p = tmpl;
    while (*p) {
        const char *brace = strchr(p, '{');
        if (!brace) {
            strbuf_addstr(sb, p);
            break;
        }
        strbuf_add(sb, p, (size_t)(brace - p));
        size_t k;
        for (k = 0; k < ARRAY_SIZE(keys); k++)
            if (!strncmp(brace, keys[k].key, strlen(keys[k].key)))
                break;
        if (k == ARRAY_SIZE(keys)) {
            strbuf_addch(sb, '{');
            p = brace + 1;
            continue;
        }
        const char *val = *(const char *const *)((const char *)paths + keys[k].off);
        if (!val || val[0] != '/')
            return error("PGO flag %s needs an absolute path for %s (got %s)", tmpl, keys[k].key,
                         val ? val : "none");
        strbuf_addstr(sb, val);
        p = brace + strlen(keys[k].key);
    }
    return 0;
}

int pgo_phase_flags(struct argvec *out, enum cc_family cc, enum build_phase phase,
                    const struct pgo_paths *paths)
{
    const char *const *t = pgo_flag_templates(cc, phase);
    static const struct pgo_paths none = { NULL, NULL, NULL };
    if (!t)
        return error("no PGO flags for %s / %s", cc_family_name(cc), build_phase_name(phase));
    if (!paths)
        paths = &none;
    for (; *t; t++) {
        struct strbuf sb = STRBUF_INIT;
        strbuf_init(&sb, 0);
        if (expand_template(&sb, *t, paths) < 0) {
            strbuf_release(&sb);
            return -1;
        }
        argvec_push(out, sb.buf);
        strbuf_release(&sb);
    }
    return 0;
}

/* ---- compilers ---------------------------------------------------------------------- */

/* The value of "#define NAME VALUE" in `cc -dM -E` output, or NULL. */
static const char *macro_value(const char *macros, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = macros; p && (p = strstr(p, "#define ")); p++) {
        const char *q = p + strlen("#define ");
        if (!strncmp(q, name, n) && q[n] == ' ')
            return q + n + 1;
    }
    return NULL;
}

int cc_family_from_macros(const char *macros)
{
    if (macro_value(macros, "__clang__"))
        return CC_CLANG;
    if (macro_value(macros, "__GNUC__"))
        return CC_GCC;
    return -1;
}

int cc_major_from_macros(const char *macros)
{
    const char *v = macro_value(macros, "__clang_major__");
    if (!v)
        v = macro_value(macros, "__GNUC__");
    return v ? atoi(v) : 0;
}

/* llvm-profdata of the same LLVM as this clang (pgo.md 4.1: profiles are version-bound). */
static char *find_profdata(const char *cc, int major)
{
    char *cc_path = find_in_path(cc);
    if (cc_path) {
        char real[PATH_MAX];
        if (realpath(cc_path, real)) {
            char *slash = strrchr(real, '/');
            if (slash) {
                *slash = '\0';
                char *sibling = path_join(real, "llvm-profdata");
                if (access(sibling, X_OK) == 0) {
                    free(cc_path);
                    return sibling;
                }
                free(sibling);
            }
        }
        free(cc_path);
    }
    if (major > 0) {
        char *name = xasprintf("llvm-profdata-%d", major);
        char *p = find_in_path(name);
        free(name);
        if (p)
            return p;
    }
    return find_in_path("llvm-profdata");
}

/* Run argv and collect its stdout; -1 with a message when it fails. */
static int run_capture(const char *cc, const char *const *argv, struct strbuf *out)
{
    struct subprocess sp = { .argv = argv, .out = out, .quiet_stderr = 1 };
    int rc = subprocess_run(&sp);
    if (rc > 0) {
        char *cmd = subprocess_argv_str(argv);
        error("--cc=%s: '%s' failed (exit %d)", cc, cmd, rc);
        free(cmd);
    }
    return rc == 0 ? 0 : -1;
}

int cc_probe(const char *cc, struct cc_info *info)
{
    struct strbuf ver = STRBUF_INIT, macros = STRBUF_INIT;
    const char *ver_argv[] = { cc, "--version", NULL };
    const char *mac_argv[] = { cc, "-dM", "-E", "-x", "c", "/dev/null", NULL };
    int rc = -1;
    memset(info, 0, sizeof(*info));
    strbuf_init(&ver, 0);
    strbuf_init(&macros, 0);
    char *found = find_in_path(cc);
    free(found);
    if (!found) {
        error("--cc=%s: compiler not found%s", cc, strchr(cc, '/') ? "" : " on PATH");
        goto out;
    }
    if (run_capture(cc, mac_argv, &macros) < 0)
        goto out;
    /* The predefined macros tell gcc from clang (clang also defines __GNUC__). */
    int fam = cc_family_from_macros(macros.buf);
    if (fam < 0) {
        error("--cc=%s: not gcc or clang (neither __GNUC__ nor __clang__ is predefined)", cc);
        goto out;
    }
    if (run_capture(cc, ver_argv, &ver) < 0)
        goto out;
    char *nl = strchr(ver.buf, '\n');
    info->cc = xstrdup(cc);
    info->family = (enum cc_family)fam;
    info->version = nl ? xstrndup(ver.buf, (size_t)(nl - ver.buf)) : xstrdup(ver.buf);
    info->major = cc_major_from_macros(macros.buf);
    if (info->family == CC_CLANG) {
        info->profdata = find_profdata(cc, info->major);
        if (!info->profdata) {
            cc_info_release(info);
            error("--cc=%s: llvm-profdata not found (Debian package llvm; run "
                  "scripts/install-deps.sh)", cc);
            goto out;
        }
    }
    rc = 0;
out:
    strbuf_release(&ver);
    strbuf_release(&macros);
    return rc;
}

void cc_info_release(struct cc_info *info)
{
    free(info->cc);
    free(info->version);
    free(info->profdata);
    memset(info, 0, sizeof(*info));
}
