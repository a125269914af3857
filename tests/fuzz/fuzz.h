/* fuzz.h: what the libFuzzer targets in tests/fuzz/ share. Each target file defines
 * LLVMFuzzerTestOneInput() (libFuzzer's entry point: one input, any bytes, must not crash,
 * leak, exit or hang); `make fuzz` links it with libFuzzer (clang -fsanitize=fuzzer), and
 * tests/fuzz/replay.c links the same file into a cmocka test that feeds it every file of
 * tests/fuzz/corpus/NAME/ and tests/fuzz/regressions/NAME/ (make unit / make check).
 * fuzz_tmpfile() is for the parsers that read a file: the input is written to a private file
 * (tmpfs when /dev/shm is writable) that the target removes with fuzz_tmpfile_remove(). */
#ifndef PGOLAB_FUZZ_H
#define PGOLAB_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* data[0..size) as a new NUL-terminated string (an embedded NUL ends it early). Caller frees. */
char *fuzz_cstr(const uint8_t *data, size_t size);

/* Write data[0..size) to a new private file named after tag; its path (caller frees), or NULL
 * when it cannot be written (the target then returns: a full disk is not a finding). */
char *fuzz_tmpfile(const char *tag, const char *suffix, const uint8_t *data, size_t size);
/* Remove path and its SQLite companions (-journal, -wal, -shm), and free path. */
void fuzz_tmpfile_remove(char *path);

#endif
