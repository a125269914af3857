/* Unit tests for src/pgo/variant_spec.c: [DIMENSION:]...KIND parsed into its kind and build
 * settings, canonical names (a default's value is the default), the refusals (unknown
 * dimension, value or kind, a dimension twice, dimensions on a kind that takes none), and
 * the grouping by build settings (the default group first, a build given twice refused). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "pgo/variant_spec.h"

static const struct variant_spec_kind kinds[] = {
    { "baseline", NULL }, { "pgo", NULL }, { "lto", NULL }, { "pgo+lto", NULL },
    { "bolt", "not yet" }, { "official", "the distribution's binary" },
};
#define NKINDS ((int)(sizeof(kinds) / sizeof(kinds[0])))

static const struct variant_spec defaults = { .cc = (char *)"gcc", .cflags = (char *)"-O2" };

static int parse(const char *text, struct variant_spec *s)
{
    return variant_spec_parse(text, kinds, NKINDS, &defaults, s);
}

static void test_plain(void **state)
{
    (void)state;
    struct variant_spec s;
    assert_int_equal(parse("pgo+lto", &s), 0);
    assert_string_equal(s.name, "pgo+lto");
    assert_string_equal(s.kind, "pgo+lto");
    assert_null(s.cc);
    assert_null(s.cflags);
    variant_spec_release(&s);
    assert_int_equal(parse("official", &s), 0);
    assert_string_equal(s.name, "official");
    variant_spec_release(&s);
}

static void test_dimensions(void **state)
{
    (void)state;
    struct variant_spec s;
    assert_int_equal(parse("clang:pgo+lto", &s), 0);
    assert_string_equal(s.name, "clang:pgo+lto");
    assert_string_equal(s.kind, "pgo+lto");
    assert_string_equal(s.cc, "clang");
    assert_null(s.cflags);
    variant_spec_release(&s);
    /* flags before the compiler: the name is in the table's order */
    assert_int_equal(parse("-O3 -march=native:clang-14:baseline", &s), 0);
    assert_string_equal(s.name, "clang-14:-O3 -march=native:baseline");
    assert_string_equal(s.cc, "clang-14");
    assert_string_equal(s.cflags, "-O3 -march=native");
    variant_spec_release(&s);
    /* the long form, a path */
    assert_int_equal(parse("cc=/usr/bin/clang:cflags=-O3:pgo", &s), 0);
    assert_string_equal(s.name, "/usr/bin/clang:-O3:pgo");
    variant_spec_release(&s);
    /* a default's value is the default */
    assert_int_equal(parse("gcc:-O2:pgo", &s), 0);
    assert_string_equal(s.name, "pgo");
    assert_null(s.cc);
    assert_null(s.cflags);
    variant_spec_release(&s);
    assert_int_equal(parse("gcc:-O3:lto", &s), 0);
    assert_string_equal(s.name, "-O3:lto");
    assert_null(s.cc);
    assert_string_equal(s.cflags, "-O3");
    variant_spec_release(&s);
}

static void test_refused(void **state)
{
    (void)state;
    struct variant_spec s;
    assert_int_equal(parse("pgx", &s), -1);             /* unknown kind */
    assert_int_equal(parse("clang:pgx", &s), -1);       /* unknown kind after a dimension */
    assert_int_equal(parse("icc:pgo", &s), -1);         /* unknown value */
    assert_int_equal(parse("clang14:pgo", &s), -1);     /* not a versioned name */
    assert_int_equal(parse("gcc-:pgo", &s), -1);
    assert_int_equal(parse("opt=3:pgo", &s), -1);       /* unknown dimension */
    assert_int_equal(parse("cc=icc:pgo", &s), -1);      /* not a compiler */
    assert_int_equal(parse("cc=:pgo", &s), -1);         /* empty */
    assert_int_equal(parse("clang:gcc:pgo", &s), -1);   /* the compiler twice */
    assert_int_equal(parse("cflags=-O3 x:pgo", &s), -1);/* not flags */
    assert_int_equal(parse("-fprofile-use:pgo", &s), -1);
    assert_int_equal(parse("clang:official", &s), -1);  /* takes no dimensions */
    assert_int_equal(parse("clang:bolt", &s), -1);
    assert_int_equal(parse("clang::pgo", &s), -1);
    /* the default's value on a kind without dimensions is the kind itself */
    assert_int_equal(parse("gcc:official", &s), 0);
    assert_string_equal(s.name, "official");
    variant_spec_release(&s);
}

static void test_group(void **state)
{
    (void)state;
    const char *texts[] = { "pgo", "clang:pgo+lto", "-O3:pgo", "clang:baseline", "official" };
    struct variant_spec s[5];
    for (int i = 0; i < 5; i++)
        assert_int_equal(parse(texts[i], &s[i]), 0);
    struct variant_group *g;
    int ng;
    assert_int_equal(variant_specs_group(s, 5, &defaults, &g, &ng), 0);
    assert_int_equal(ng, 3);
    assert_null(g[0].label);
    assert_string_equal(g[0].cc, "gcc");
    assert_string_equal(g[0].cflags, "-O2");
    assert_int_equal(g[0].nkinds, 2);
    assert_true(variant_group_has(&g[0], "pgo"));
    assert_true(variant_group_has(&g[0], "official"));
    assert_string_equal(g[1].label, "clang");
    assert_string_equal(g[1].cc, "clang");
    assert_string_equal(g[1].cflags, "-O2");
    assert_int_equal(g[1].nkinds, 2);
    assert_string_equal(g[1].kinds[0], "pgo+lto");
    assert_string_equal(g[1].kinds[1], "baseline");
    assert_null(g[1].kinds[2]);
    assert_string_equal(g[2].label, "-O3");
    assert_string_equal(g[2].cc, "gcc");
    assert_string_equal(g[2].cflags, "-O3");
    assert_false(variant_group_has(&g[2], "baseline"));
    variant_groups_free(g, ng);
    for (int i = 0; i < 5; i++)
        variant_spec_release(&s[i]);
}

static void test_twice(void **state)
{
    (void)state;
    struct variant_spec s[2];
    struct variant_group *g = NULL;
    int ng = 0;
    assert_int_equal(parse("pgo", &s[0]), 0);
    assert_int_equal(parse("gcc:pgo", &s[1]), 0);   /* the same build */
    assert_int_equal(variant_specs_group(s, 2, &defaults, &g, &ng), -1);
    assert_null(g);
    variant_spec_release(&s[1]);
    assert_int_equal(parse("clang:pgo", &s[1]), 0);
    assert_int_equal(variant_specs_group(s, 2, &defaults, &g, &ng), 0);
    assert_int_equal(ng, 2);
    variant_groups_free(g, ng);
    variant_spec_release(&s[0]);
    variant_spec_release(&s[1]);
    /* no variant of the default settings: the default group is there, empty */
    assert_int_equal(parse("clang:pgo", &s[0]), 0);
    assert_int_equal(variant_specs_group(s, 1, &defaults, &g, &ng), 0);
    assert_int_equal(ng, 2);
    assert_int_equal(g[0].nkinds, 0);
    variant_groups_free(g, ng);
    variant_spec_release(&s[0]);
}

static void test_accepted(void **state)
{
    (void)state;
    const char *a = variant_spec_accepted();
    assert_non_null(strstr(a, "compiler (cc=): gcc, clang"));
    assert_non_null(strstr(a, "compiler flags (cflags=)"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain),    cmocka_unit_test(test_dimensions),
        cmocka_unit_test(test_refused),  cmocka_unit_test(test_group),
        cmocka_unit_test(test_twice),    cmocka_unit_test(test_accepted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
