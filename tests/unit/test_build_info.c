/* Unit tests for src/toolchain/build_info.h: configure option words (shell-quoted as
 * pg_config and a build log print them) and the features they set, the features two builds
 * set otherwise (pgo's official against the recipe, compare's variants), the flags that decide
 * the code, a compiler's short name, one build's line and two builds' differences; the
 * reading of a pgolab build directory (stamp, build.log, src/Makefile.global) and of a
 * pg_config beside the binary, in files this test writes; the .comment and DWARF producer of
 * this test's own binary; and server_version_series() (src/server), which names a release of
 * its own in the differences. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "server/server.h"
#include "toolchain/build_info.h"
#include "util/fs.h"
#include "util/strbuf.h"
#include "util/util.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#define UNIT_TMPDIR_TEMPLATE "/tmp/pgolab-build-info.XXXXXX"
#include "unit_helpers.h"

/* A part of Debian's PostgreSQL 15 pg_config --configure, as it prints it. */
static const char debian_configure[] =
    " '--build=x86_64-linux-gnu' '--prefix=/usr' '--disable-silent-rules' '--with-tcl' "
    "'--with-openssl' '--with-extra-version= (Debian 15.18-0+deb12u1)' '--enable-debug' "
    "'--with-uuid=e2fs' '--with-system-tzdata=/usr/share/zoneinfo' "
    "'CFLAGS=-g -O2 -fstack-protector-strong' '--with-icu' '--with-llvm' 'LLVM_CONFIG=/x'";

static void write_file(const char *path, const char *text, mode_t mode)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    assert_int_equal(chmod(path, mode), 0);
}

static void test_words_split(void **state)
{
    (void)state;
    struct argvec w = ARGVEC_INIT;
    build_words_split(debian_configure, &w);
    assert_int_equal(w.n, 13);
    assert_string_equal(w.v[0], "--build=x86_64-linux-gnu");
    assert_string_equal(w.v[5], "--with-extra-version= (Debian 15.18-0+deb12u1)");
    assert_string_equal(w.v[9], "CFLAGS=-g -O2 -fstack-protector-strong");
    argvec_clear(&w);
    /* subprocess_argv_str()'s quoting, as a build log's "$ cd ..." line has it */
    build_words_split("cmake /src '-DCMAKE_C_FLAGS=-O2 ' 'it'\\''s' -DWITH_SSL=system", &w);
    assert_int_equal(w.n, 5);
    assert_string_equal(w.v[2], "-DCMAKE_C_FLAGS=-O2 ");
    assert_string_equal(w.v[3], "it's");
    argvec_clear(&w);
}

static void test_feature_of(void **state)
{
    (void)state;
    static const struct { const char *opt, *feature; } cases[] = {
        { "--with-icu", "icu" }, { "--without-icu", "icu" }, { "--with-uuid=e2fs", "uuid" },
        { "--enable-debug", "debug" }, { "--disable-rpath", "rpath" },
        { "-DWITH_SSL=system", "WITH_SSL" }, { "-DPLUGIN_S3:BOOL=NO", "PLUGIN_S3" },
        /* not features: paths, variables, build-process options, labels, cmake's own */
        { "--prefix=/usr", NULL }, { "CFLAGS=-O2", NULL }, { "--disable-silent-rules", NULL },
        { "--disable-dependency-tracking", NULL }, { "--with-extra-version= (Debian)", NULL },
        { "-DCMAKE_BUILD_TYPE=Release", NULL }, { "-DNDEBUG", NULL },
    };
    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        char *f = build_feature_of(cases[i].opt);
        if (cases[i].feature)
            assert_string_equal(f, cases[i].feature);
        else
            assert_null(f);
        free(f);
    }
}

/* The recipe's PostgreSQL options against Debian's pg_config --configure (a part of it): each
 * feature set otherwise named once, equal settings, paths and build-process options left
 * out; the last of one side's two settings wins, as in configure. */
static void test_features_differ(void **state)
{
    (void)state;
    struct argvec built = ARGVEC_INIT, off = ARGVEC_INIT, out = ARGVEC_INIT;
    const char *b[] = { "--without-icu", "--without-readline", "--without-llvm",
                        "--with-system-tzdata=/usr/share/zoneinfo", NULL };
    const char *o[] = { "--build=x86_64-linux-gnu", "--prefix=/usr", "--disable-silent-rules",
                        "--with-icu", "--with-openssl", "--with-llvm", "--without-llvm",
                        "--with-system-tzdata=/usr/share/zoneinfo", NULL };
    argvec_pushv(&built, b);
    argvec_pushv(&off, o);
    build_features_differ(&built, &off, &out);
    assert_int_equal(out.n, 3);
    assert_string_equal(out.v[0], "icu");
    assert_string_equal(out.v[1], "readline");
    assert_string_equal(out.v[2], "openssl");
    assert_string_equal(build_feature_setting(&off, "llvm"), "--without-llvm");
    assert_null(build_feature_setting(&off, "readline"));
    argvec_clear(&out);
    build_features_differ(&built, &built, &out);
    assert_int_equal(out.n, 0);
    argvec_clear(&built);
    argvec_clear(&off);
    argvec_clear(&out);
}

static void test_code_flags(void **state)
{
    (void)state;
    struct argvec f = ARGVEC_INIT;
    build_code_flags("-Wall -Wmissing-prototypes -fno-strict-aliasing -fwrapv -g -g -O2 "
                     "-DNDEBUG -I/usr/include -std=c11 -fno-omit-frame-pointer", &f);
    char *j = argvec_join(&f);
    assert_string_equal(j, "-fno-strict-aliasing -fwrapv -g -O2 -fno-omit-frame-pointer");
    free(j);
    argvec_clear(&f);
}

static void test_compiler_short(void **state)
{
    (void)state;
    static const struct { const char *text, *want; } cases[] = {
        { "gcc (Debian 12.2.0-14+deb12u1) 12.2.0", "gcc 12.2.0" },
        { "GCC: (Debian 12.2.0-14) 12.2.0; GCC: (Debian 11.3.0-1) 11.3.0", "gcc 12.2.0" },
        { "GNU C17 12.2.0", "gcc 12.2.0" },
        { "Debian clang version 14.0.6", "clang 14.0.6" },
        { "gcc", "gcc" },
        { "icx 2024.1", "icx 2024.1" },
    };
    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        char *s = build_compiler_short(cases[i].text);
        assert_string_equal(s, cases[i].want);
        free(s);
    }
    assert_null(build_compiler_short(NULL));
}

/* Debian's PostgreSQL 15 (pg_config: a compiler without its version) against a pgolab build
 * (its stamp's compiler, its own flags, the recipe's options). */
static void debian_and_built(struct build_info *deb, struct build_info *built)
{
    memset(deb, 0, sizeof(*deb));
    memset(built, 0, sizeof(*built));
    deb->compiler = xstrdup("gcc");
    deb->compiler_from = "pg_config --cc";
    deb->cflags = xstrdup("-Wall -fwrapv -g -O2 -fstack-protector-strong");
    deb->cflags_from = "pg_config --cflags";
    build_words_split(debian_configure, &deb->configure);
    deb->configure_from = "pg_config --configure";
    built->compiler = xstrdup("gcc (Debian 12.2.0-14+deb12u1) 12.2.0");
    built->compiler_from = "pgolab stamp";
    built->cflags = xstrdup("-Wall -fwrapv -O3");
    built->cflags_from = "the build's src/Makefile.global";
    const char *opts[] = { "--without-icu", "--without-llvm", "--without-readline",
                           "--with-uuid=ossp", "--with-system-tzdata=/usr/share/zoneinfo",
                           "CC=gcc", NULL };
    argvec_pushv(&built->configure, opts);
    built->configure_from = "pgolab build.log";
}

static void test_describe(void **state)
{
    (void)state;
    struct build_info deb, built, none;
    debian_and_built(&deb, &built);
    char *d = build_info_describe(&deb);
    assert_string_equal(d, "gcc, version not known (pg_config --cc); flags -fwrapv -g -O2 "
                           "-fstack-protector-strong (pg_config --cflags); configure --with-tcl "
                           "--with-openssl --enable-debug --with-uuid=e2fs "
                           "--with-system-tzdata=/usr/share/zoneinfo --with-icu --with-llvm "
                           "(pg_config --configure)");
    free(d);
    memset(&none, 0, sizeof(none));
    d = build_info_describe(&none);
    assert_string_equal(d, "compiler not known; flags not known; configure options not known "
                           "(the binary does not say them)");
    free(d);
    build_info_release(&deb);
    build_info_release(&built);
}

static void test_differences(void **state)
{
    (void)state;
    struct build_info deb, built;
    debian_and_built(&deb, &built);
    char *d = build_info_differences(&deb, "pg15", &built, "pg18");
    assert_non_null(d);
    /* compiler: the same name, one version unknown; flags each side's own; configure: the
     * features both set first, in the baseline's order (uuid's two values, then icu and
     * llvm), then those one side leaves to its default */
    assert_string_equal(d, "compiler gcc in both, pg15's version not known; "
                           "flags only in pg15: -g -O2 -fstack-protector-strong, "
                           "flags only in pg18: -O3; "
                           "configure --with-uuid=e2fs in pg15, --with-uuid=ossp in pg18; "
                           "icu, llvm: --with in pg15, --without in pg18; "
                           "tcl, openssl: --with in pg15, default in pg18; "
                           "debug: --enable in pg15, default in pg18; "
                           "readline: default in pg15, --without in pg18");
    free(d);
    /* the same build: nothing to say */
    assert_null(build_info_differences(&built, "a", &built, "b"));
    /* what one side does not know is said, not compared */
    struct build_info unknown;
    memset(&unknown, 0, sizeof(unknown));
    d = build_info_differences(&built, "a", &unknown, "b");
    assert_string_equal(d, "compiler of b not known; flags of b not known; configure options of "
                           "b not known");
    free(d);
    build_info_release(&deb);
    build_info_release(&built);
}

/* A pgolab build directory as `pgolab pgo` leaves it: WORK/TARGET/VARIANT/{stamp,build.log,
 * build/src/Makefile.global,prefix/bin/postgres}. */
static void test_pgolab_build(void **state)
{
    (void)state;
    char *variant = xasprintf("%s/work/postgresql-18-gcc-0123/pgo", tmpdir);
    char *bin = xasprintf("%s/prefix/bin/postgres", variant);
    char *mk = xasprintf("%s/build/src", variant);
    assert_int_equal(mkdir_p(mk), 0);
    char *bindir = xasprintf("%s/prefix/bin", variant);
    assert_int_equal(mkdir_p(bindir), 0);
    write_file(bin, "not an ELF file\n", 0755);
    char *p = xasprintf("%s/stamp", variant);
    write_file(p, "stamp: 2\nsteps: 0123\nsource: abcd\ncompiler: gcc (Debian 12.2.0-14) "
                  "12.2.0\ncflags: -O2\nphase-flags: -fprofile-use -fprofile-partial-training\n",
               0644);
    free(p);
    p = xasprintf("%s/build.log", variant);
    char *log = xasprintf("$ cd %s/build && %s/work/src/postgresql-18/configure --prefix=%s/prefix "
                          "--without-icu '--with-x=a b' CC=gcc CFLAGS=-O2\nchecking...\n"
                          "$ cd %s/build && make -j2\n", variant, tmpdir, variant, variant);
    write_file(p, log, 0644);
    free(p);
    struct build_info bi;
    build_info_read(bin, &bi);
    assert_string_equal(bi.compiler, "gcc (Debian 12.2.0-14) 12.2.0");
    assert_string_equal(bi.compiler_from, "pgolab stamp");
    /* no src/Makefile.global and no DWARF: the flags pgolab gave, named as such */
    assert_string_equal(bi.cflags, "-O2 -fprofile-use -fprofile-partial-training");
    assert_non_null(strstr(bi.cflags_from, "pgolab stamp"));
    assert_string_equal(bi.configure_from, "pgolab build.log");
    char *j = argvec_join(&bi.configure); /* the work directory's paths left out */
    assert_string_equal(j, "--without-icu --with-x=a b CC=gcc CFLAGS=-O2");
    assert_int_equal(bi.configure.n, 4);
    free(j);
    build_info_release(&bi);
    /* the build's own record of its flags wins, the phase's flags after it */
    p = xasprintf("%s/Makefile.global", mk);
    write_file(p, "CC = gcc\nCFLAGS = -Wall -fwrapv -O2\nCFLAGS_SL = -fPIC\n", 0644);
    free(p);
    build_info_read(bin, &bi);
    assert_string_equal(bi.cflags, "-Wall -fwrapv -O2 -fprofile-use -fprofile-partial-training");
    build_info_release(&bi);
    /* the stamp's {profile_dir} is the directory its profile-dir line names */
    p = xasprintf("%s/stamp", variant);
    write_file(p, "stamp: 2\ncompiler: gcc\ncflags: -O2\nphase-flags: -fprofile-use={profile_dir} "
                  "-fprofile-correction\ntrainer: t\nprofile-dir: /w/profile-t\n", 0644);
    free(p);
    build_info_read(bin, &bi);
    assert_string_equal(bi.cflags, "-Wall -fwrapv -O2 -fprofile-use=/w/profile-t -fprofile-correction");
    build_info_release(&bi);
    /* a prefix without a pgolab stamp is not a pgolab build */
    p = xasprintf("%s/stamp", variant);
    write_file(p, "something else\n", 0644);
    free(p);
    build_info_read(bin, &bi);
    assert_null(bi.compiler);
    assert_null(bi.configure_from);
    build_info_release(&bi);
    free(log);
    free(bindir);
    free(mk);
    free(bin);
    free(variant);
}

/* A pg_config beside the binary answers --cc, --cflags and --configure. */
static void test_pg_config(void **state)
{
    (void)state;
    char *dir = xasprintf("%s/pg/bin", tmpdir);
    assert_int_equal(mkdir_p(dir), 0);
    char *bin = xasprintf("%s/postgres", dir), *tool = xasprintf("%s/pg_config", dir);
    write_file(bin, "not an ELF file\n", 0755);
    char *script = xasprintf("#!/bin/sh\ncase \"$1\" in\n--cc) echo gcc ;;\n"
                             "--cflags) echo '-Wall -O2 -g' ;;\n"
                             "--configure) echo \"%s\" ;;\nesac\n", debian_configure);
    write_file(tool, script, 0755);
    struct build_info bi;
    build_info_read(bin, &bi);
    assert_string_equal(bi.compiler, "gcc");
    assert_string_equal(bi.compiler_from, "pg_config --cc");
    assert_string_equal(bi.cflags, "-Wall -O2 -g");
    assert_string_equal(bi.configure_from, "pg_config --configure");
    assert_string_equal(build_feature_setting(&bi.configure, "icu"), "--with-icu");
    build_info_release(&bi);
    free(script);
    free(tool);
    free(bin);
    free(dir);
}

/* This test's own binary: its .comment names the compiler that built it, and, when it was
 * built with -g, its first compile unit's producer names the same version. */
static void test_own_elf(void **state)
{
    (void)state;
    char version[64];
#ifdef __clang__
    snprintf(version, sizeof(version), "%d.%d.%d", __clang_major__, __clang_minor__,
             __clang_patchlevel__);
#else
    snprintf(version, sizeof(version), "%d.%d.%d", __GNUC__, __GNUC_MINOR__, __GNUC_PATCHLEVEL__);
#endif
    char *self = self_exe();
    char *c = build_elf_comment(self);
    assert_non_null(c);
    assert_non_null(strstr(c, version));
    char *p = build_dwarf_producer(self);
    if (p)
        assert_non_null(strstr(p, version));
    assert_null(build_elf_comment("/nonexistent"));
    assert_null(build_dwarf_producer("/etc/hostname"));
    free(p);
    free(c);
    free(self);
}

static void test_series(void **state)
{
    (void)state;
    static const struct { const char *version, *series; } cases[] = {
        { "PostgreSQL 15.18", "PostgreSQL 15" }, { "PostgreSQL 18.6", "PostgreSQL 18" },
        { "PostgreSQL 9.6.24", "PostgreSQL 9.6" }, { "MariaDB 10.11.19", "MariaDB 10.11" },
        { "MariaDB 11.8.9", "MariaDB 11.8" }, { "MySQL 8.0.33", "MySQL 8.0" },
        { "version unknown", NULL }, { NULL, NULL },
    };
    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        char *s = server_version_series(cases[i].version);
        if (cases[i].series)
            assert_string_equal(s, cases[i].series);
        else
            assert_null(s);
        free(s);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_words_split),    cmocka_unit_test(test_feature_of),
        cmocka_unit_test(test_features_differ), cmocka_unit_test(test_code_flags),
        cmocka_unit_test(test_compiler_short), cmocka_unit_test(test_describe),
        cmocka_unit_test(test_differences),    cmocka_unit_test(test_pgolab_build),
        cmocka_unit_test(test_pg_config),      cmocka_unit_test(test_own_elf),
        cmocka_unit_test(test_series),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
