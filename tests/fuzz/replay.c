/* replay.c: the fuzz targets as unit tests (cmocka). Linked with one target file
 * (tests/fuzz/fuzz_NAME.c, -DFUZZ_NAME="NAME") by the ordinary compiler, without libFuzzer:
 * one test per file of tests/fuzz/corpus/NAME/ (the seeds) and tests/fuzz/regressions/NAME/
 * (every input that once crashed a target, kept so the bug stays fixed), each fed to
 * LLVMFuzzerTestOneInput() once. `make unit`, `make check` and, instrumented, `make check-asan`
 * run them; a crash, a sanitizer report or an exit fails the test binary (the targets'
 * one-line errors for bad inputs are expected output). Run from the
 * repository's top (the directories are relative to it). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"

#ifndef FUZZ_NAME
#error "build with -DFUZZ_NAME=\"NAME\" (the target's name)"
#endif

/* Read all of path into a new buffer (*size bytes); fails the test if it cannot. */
static uint8_t *slurp(const char *path, size_t *size)
{
    struct stat st;
    int fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    assert_int_equal(fstat(fd, &st), 0);
    uint8_t *buf = malloc((size_t)st.st_size + 1);
    assert_non_null(buf);
    size_t off = 0;
    while (off < (size_t)st.st_size) {
        ssize_t n = read(fd, buf + off, (size_t)st.st_size - off);
        assert_true(n > 0);
        off += (size_t)n;
    }
    close(fd);
    *size = off;
    return buf;
}

static void replay_one(void **state)
{
    const char *path = *state;
    size_t size;
    uint8_t *data = slurp(path, &size);
    assert_int_equal(LLVMFuzzerTestOneInput(data, size), 0);
    free(data);
}

/* Append a test for every regular file in dir (sorted by name); a missing dir adds none. */
static void add_dir(const char *dir, struct CMUnitTest **tests, int *n)
{
    struct dirent **ents;
    int k = scandir(dir, &ents, NULL, alphasort);
    for (int i = 0; i < k; i++) {
        char *path = malloc(strlen(dir) + strlen(ents[i]->d_name) + 2);
        struct stat st;
        sprintf(path, "%s/%s", dir, ents[i]->d_name);
        if (ents[i]->d_name[0] != '.' && stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
            *tests = realloc(*tests, sizeof(**tests) * (size_t)(*n + 1));
            struct CMUnitTest t = { path, replay_one, NULL, NULL, path };
            (*tests)[(*n)++] = t;
        } else {
            free(path);
        }
        free(ents[i]);
    }
    if (k >= 0)
        free(ents);
}

int main(void)
{
    struct CMUnitTest *tests = NULL;
    int n = 0;
    add_dir("tests/fuzz/corpus/" FUZZ_NAME, &tests, &n);
    add_dir("tests/fuzz/regressions/" FUZZ_NAME, &tests, &n);
    if (n == 0) {
        fprintf(stderr, "replay: no inputs in tests/fuzz/corpus/%s (run from the repository's top)\n",
                FUZZ_NAME);
        return 1;
    }
    int rc = _cmocka_run_group_tests("fuzz_" FUZZ_NAME, tests, (size_t)n, NULL, NULL);
    for (int i = 0; i < n; i++)
        free((void *)tests[i].initial_state);
    free(tests);
    return rc;
}
