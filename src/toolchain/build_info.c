/* build_info: how a binary was built, read from the binary and the files around it (see
 * build_info.h for the sources and their order). Runs pg_config when one is beside the
 * binary; reads ELF and DWARF with elfutils (libelf, libdw). Owns no state. */
#include "toolchain/build_info.h"
#include "util/fs.h"
#include "util/strbuf.h"
#include "util/subprocess.h"
#include "util/util.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The directory part of path ("." for a bare name). Caller frees. */
static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return xstrdup(".");
    return xstrndup(path, slash == path ? 1 : (size_t)(slash - path));
}

char *build_pg_config(const char *bin, const char *opt)
{
    char *dir = dir_of(bin);
    char *tool = path_join(dir, "pg_config");
    char *text = NULL;
    if (is_file(tool)) {
        struct strbuf out = STRBUF_INIT;
        strbuf_init(&out, 0);
        const char *argv[] = { tool, opt, NULL };
        struct subprocess sp = { .argv = argv, .out = &out, .timeout_s = 30, .quiet_stderr = 1 };
        if (subprocess_run(&sp) == 0 && out.len) {
            size_t n = strcspn(out.buf, "\n");
            size_t lead = strspn(out.buf, " ");
            text = xstrndup(out.buf + lead, n - (lead < n ? lead : n));
        }
        strbuf_release(&out);
    }
    free(tool);
    free(dir);
    return text;
}

/* ---- ELF and DWARF ------------------------------------------------------------------ */

/* path opened as ELF (*fd its descriptor), or NULL. */
static Elf *elf_open(const char *path, int *fd)
{
    static bool init;
    if (!init) {
        elf_version(EV_CURRENT);
        init = true;
    }
    *fd = open(path, O_RDONLY | O_CLOEXEC);
    if (*fd < 0)
        return NULL;
    Elf *elf = elf_begin(*fd, ELF_C_READ, NULL);
    if (!elf || elf_kind(elf) != ELF_K_ELF) {
        if (elf)
            elf_end(elf);
        close(*fd);
        return NULL;
    }
    return elf;
}

/* The section of elf named name, or NULL. */
static Elf_Scn *section_named(Elf *elf, const char *name)
{
    size_t shstrndx;
    if (elf_getshdrstrndx(elf, &shstrndx) != 0)
        return NULL;
    for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
        GElf_Shdr sh;
        const char *n = gelf_getshdr(scn, &sh) ? elf_strptr(elf, shstrndx, sh.sh_name) : NULL;
        if (n && !strcmp(n, name))
            return scn;
    }
    return NULL;
}

char *build_elf_comment(const char *path)
{
    int fd;
    Elf *elf = elf_open(path, &fd);
    Elf_Scn *scn = elf ? section_named(elf, ".comment") : NULL;
    Elf_Data *d = scn ? elf_getdata(scn, NULL) : NULL;
    struct strbuf sb = STRBUF_INIT;
    strbuf_init(&sb, 0);
    const char *p = d ? d->d_buf : NULL;
    for (size_t at = 0; p && at < d->d_size;) {
        size_t n = strnlen(p + at, d->d_size - at);
        bool dup = n && sb.len && strstr(sb.buf, p + at); /* one entry per compiler */
        if (n && !dup)
            strbuf_addf(&sb, "%s%.*s", sb.len ? "; " : "", (int)n, p + at);
        at += n + 1;
    }
    if (elf) {
        elf_end(elf);
        close(fd);
    }
    if (!sb.len) {
        strbuf_release(&sb);
        return NULL;
    }
    return strbuf_detach(&sb);
}

/* The separate debug file of elf by its GNU build-id (Debian's -dbgsym packages install
 * them there), or NULL. Caller frees. */
static char *debug_file_of(Elf *elf)
{
    Elf_Scn *scn = section_named(elf, ".note.gnu.build-id");
    Elf_Data *d = scn ? elf_getdata(scn, NULL) : NULL;
    GElf_Nhdr nh;
    size_t name_off, desc_off;
    if (!d || gelf_getnote(d, 0, &nh, &name_off, &desc_off) == 0 || nh.n_type != NT_GNU_BUILD_ID ||
        nh.n_descsz < 2)
        return NULL;
    const unsigned char *id = (const unsigned char *)d->d_buf + desc_off;
    struct strbuf sb = STRBUF_INIT;
    strbuf_init(&sb, 0);
    strbuf_addf(&sb, "/usr/lib/debug/.build-id/%02x/", id[0]);
    for (size_t i = 1; i < nh.n_descsz; i++)
        strbuf_addf(&sb, "%02x", id[i]);
    strbuf_addstr(&sb, ".debug");
    if (!is_file(sb.buf)) {
        strbuf_release(&sb);
        return NULL;
    }
    return strbuf_detach(&sb);
}

/* The first compile unit's DW_AT_producer of elf, or NULL. Caller frees. */
static char *producer_of(Elf *elf)
{
    Dwarf *dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
    if (!dw)
        return NULL;
    char *out = NULL;
    Dwarf_Off next;
    size_t hsize;
    Dwarf_Die die;
    Dwarf_Attribute at;
    if (dwarf_nextcu(dw, 0, &next, &hsize, NULL, NULL, NULL) == 0 &&
        dwarf_offdie(dw, hsize, &die)) {
        const char *p = dwarf_formstring(dwarf_attr(&die, DW_AT_producer, &at));
        out = p && *p ? xstrdup(p) : NULL;
    }
    dwarf_end(dw);
    return out;
}

char *build_dwarf_producer(const char *path)
{
    int fd;
    Elf *elf = elf_open(path, &fd);
    if (!elf)
        return NULL;
    char *out = producer_of(elf);
    char *debug = out ? NULL : debug_file_of(elf);
    elf_end(elf);
    close(fd);
    if (debug) {
        Elf *d = elf_open(debug, &fd);
        if (d) {
            out = producer_of(d);
            elf_end(d);
            close(fd);
        }
        free(debug);
    }
    return out;
}

/* ---- a pgolab build ----------------------------------------------------------------- */

/* The pgolab build directory (VARIANT) whose install prefix holds bin
 * (VARIANT/prefix/DIR/NAME, with VARIANT/stamp a pgolab stamp), and the stamp's text into
 * stamp; or NULL. Caller frees. */
static char *pgolab_build_dir(const char *bin, struct strbuf *stamp)
{
    char *d = dir_of(bin), *prefix = dir_of(d);
    const char *base = strrchr(prefix, '/');
    char *variant = NULL;
    if (base && !strcmp(base + 1, "prefix")) {
        variant = dir_of(prefix);
        char *path = path_join(variant, "stamp");
        /* "stamp: N" opens it since format 2; format 1 had the compiler line too */
        if (strbuf_read_file(stamp, path) < 0 ||
            (strncmp(stamp->buf, "stamp: ", 7) && !strstr(stamp->buf, "\ncompiler: "))) {
            free(variant);
            variant = NULL;
        }
        free(path);
    }
    free(d);
    free(prefix);
    return variant;
}

/* The value of key's "key: value" line in text, or NULL (not there, or empty). Caller
 * frees. */
static char *line_value(const char *text, const char *key)
{
    size_t kl = strlen(key);
    for (const char *at = text; at && *at; at = strchr(at, '\n') ? strchr(at, '\n') + 1 : NULL) {
        if (!strncmp(at, key, kl) && at[kl] == ':' && at[kl + 1] == ' ') {
            const char *v = at + kl + 2;
            size_t n = strcspn(v, "\n");
            return n ? xstrndup(v, n) : NULL;
        }
    }
    return NULL;
}

/* The stamp's value of key with its {profile_dir} placeholder (a stamp names the profile
 * directory on a line of its own, so that its key does not depend on where the profile is)
 * replaced by that line's directory, or by "PROFILE_DIR" when the stamp has none. Caller
 * frees; NULL when the stamp has no such key. */
static char *stamp_flags_value(const char *stamp, const char *key)
{
    char *v = line_value(stamp, key);
    const char *at = v ? strstr(v, "{profile_dir}") : NULL;
    if (!at)
        return v;
    char *dir = line_value(stamp, "profile-dir");
    struct strbuf sb = STRBUF_INIT;
    strbuf_init(&sb, 0);
    const char *p = v;
    for (; (at = strstr(p, "{profile_dir}")); p = at + strlen("{profile_dir}")) {
        strbuf_add(&sb, p, (size_t)(at - p));
        strbuf_addstr(&sb, dir && *dir ? dir : "PROFILE_DIR");
    }
    strbuf_addstr(&sb, p);
    free(dir);
    free(v);
    return strbuf_detach(&sb);
}

/* The stamp's flags: cflags, then the phase's flags and options, or NULL when all are empty. */
static char *stamp_flags(const char *stamp)
{
    static const char *const keys[] = { "cflags", "phase-flags", "phase-options" };
    struct strbuf sb = STRBUF_INIT;
    strbuf_init(&sb, 0);
    for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
        char *v = stamp_flags_value(stamp, keys[i]);
        if (v && *v)
            strbuf_addf(&sb, "%s%s", sb.len ? " " : "", v);
        free(v);
    }
    if (!sb.len) {
        strbuf_release(&sb);
        return NULL;
    }
    return strbuf_detach(&sb);
}

/* The configure options of the first step of variant's build.log ("$ cd DIR && PROGRAM
 * OPTIONS"): the words after the program that start with '-' or set a variable, without
 * those that name a path of the work directory (the prefix, the source). 0, or -1 when the
 * log has no such line. */
static int log_configure(const char *variant, struct argvec *out)
{
    char *path = path_join(variant, "build.log");
    FILE *f = fopen(path, "r");
    free(path);
    char *line = NULL;
    size_t cap = 0;
    int rc = -1;
    const char *cmd = f && getline(&line, &cap, f) > 0 && !strncmp(line, "$ cd ", 5)
                          ? strstr(line, " && ") : NULL;
    if (f)
        fclose(f);
    if (cmd) {
        struct argvec w = ARGVEC_INIT;
        build_words_split(cmd + 4, &w);
        char *work = dir_of(variant); /* TARGET-..., then the work directory above it */
        char *root = dir_of(work);
        int i = 0;
        if (i < w.n && !strcmp(w.v[i], "env"))
            for (i++; i < w.n && strchr(w.v[i], '=') && w.v[i][0] != '-'; i++)
                ;
        for (i++; i < w.n; i++) /* the program itself skipped */
            if ((w.v[i][0] == '-' || strchr(w.v[i], '=')) && !strstr(w.v[i], root))
                argvec_push(out, w.v[i]);
        free(work);
        free(root);
        argvec_clear(&w);
        rc = 0;
    }
    free(line);
    return rc;
}

/* A configure build's own record of its compile flags: the "CFLAGS = " line of
 * BUILD/src/Makefile.global (PostgreSQL: what pg_config --cflags prints), or NULL. */
static char *makefile_cflags(const char *variant)
{
    char *path = xasprintf("%s/build/src/Makefile.global", variant);
    struct strbuf sb = STRBUF_INIT;
    strbuf_init(&sb, 0);
    char *out = NULL;
    if (strbuf_read_file(&sb, path) == 0)
        for (const char *at = sb.buf; at && *at && !out;
             at = strchr(at, '\n') ? strchr(at, '\n') + 1 : NULL)
            if (!strncmp(at, "CFLAGS = ", 9))
                out = xstrndup(at + 9, strcspn(at + 9, "\n"));
    strbuf_release(&sb);
    free(path);
    return out;
}

/* What a pgolab build directory tells (build_info_read()'s first source). */
static void read_pgolab_build(const char *variant, const char *stamp, struct build_info *bi)
{
    if ((bi->compiler = line_value(stamp, "compiler")))
        bi->compiler_from = "pgolab stamp";
    char *own = makefile_cflags(variant);
    if (own) {
        char *phase = stamp_flags_value(stamp, "phase-flags");
        bi->cflags = phase ? xasprintf("%s %s", own, phase) : xstrdup(own);
        bi->cflags_from = phase ? "the build's src/Makefile.global and the stamp's phase flags"
                                : "the build's src/Makefile.global";
        free(phase);
        free(own);
    }
    if (log_configure(variant, &bi->configure) == 0)
        bi->configure_from = "pgolab build.log";
}

void build_info_read(const char *bin, struct build_info *bi)
{
    memset(bi, 0, sizeof(*bi));
    struct strbuf stamp = STRBUF_INIT;
    strbuf_init(&stamp, 0);
    char *variant = pgolab_build_dir(bin, &stamp);
    if (variant)
        read_pgolab_build(variant, stamp.buf, bi);
    char *conf = build_pg_config(bin, "--configure");
    if (conf && !bi->configure_from) {
        build_words_split(conf, &bi->configure);
        bi->configure_from = "pg_config --configure";
    }
    free(conf);
    if (!bi->cflags && (bi->cflags = build_pg_config(bin, "--cflags")))
        bi->cflags_from = "pg_config --cflags";
    char *producer = build_dwarf_producer(bin);
    if (!bi->compiler && (bi->compiler = build_elf_comment(bin)))
        bi->compiler_from = ".comment";
    /* "GNU C17 12.2.0 -mtune=generic -O2": the compiler, then its options */
    const char *opts = producer ? strstr(producer, " -") : NULL;
    if (!bi->compiler && producer) {
        bi->compiler = xstrndup(producer, opts ? (size_t)(opts - producer) : strlen(producer));
        bi->compiler_from = "DWARF producer";
    }
    if (!bi->cflags && opts) {
        bi->cflags = xstrdup(opts + 1);
        bi->cflags_from = "DWARF producer";
    }
    if (!bi->cflags && variant && (bi->cflags = stamp_flags(stamp.buf)))
        bi->cflags_from = "pgolab stamp: the flags given to the build, which adds its own";
    if (!bi->compiler && (bi->compiler = build_pg_config(bin, "--cc")))
        bi->compiler_from = "pg_config --cc";
    free(producer);
    free(variant);
    strbuf_release(&stamp);
}

void build_info_release(struct build_info *bi)
{
    free(bi->compiler);
    free(bi->cflags);
    argvec_clear(&bi->configure);
    memset(bi, 0, sizeof(*bi));
}
