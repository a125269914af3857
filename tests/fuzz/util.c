/* util.c: the helpers of tests/fuzz/fuzz.h, shared by the targets and the replay test. */
#include "fuzz.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char *fuzz_cstr(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        abort();
    memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

char *fuzz_tmpfile(const char *tag, const char *suffix, const uint8_t *data, size_t size)
{
    const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    char *path = malloc(strlen(dir) + strlen(tag) + strlen(suffix) + 40);
    if (!path)
        abort();
    sprintf(path, "%s/pgolab-fuzz-%s-%ld-XXXXXX%s", dir, tag, (long)getpid(), suffix);
    int fd = mkstemps(path, (int)strlen(suffix));
    if (fd < 0) {
        free(path);
        return NULL;
    }
    size_t off = 0;
    while (off < size) {
        ssize_t n = write(fd, data + off, size - off);
        if (n <= 0)
            break;
        off += (size_t)n;
    }
    close(fd);
    if (off < size) {
        fuzz_tmpfile_remove(path);
        return NULL;
    }
    return path;
}

void fuzz_tmpfile_remove(char *path)
{
    static const char *const companions[] = { "-journal", "-wal", "-shm" };
    char buf[4096];
    if (!path)
        return;
    unlink(path);
    for (size_t i = 0; i < sizeof(companions) / sizeof(companions[0]); i++) {
        snprintf(buf, sizeof(buf), "%s%s", path, companions[i]);
        unlink(buf);
    }
    free(path);
}
