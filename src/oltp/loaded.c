/* loaded: the count of rows a prepare inserted, kept in a file for its parent (loaded.h). */
#include "oltp/loaded.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int fd = -2; /* -2: not opened yet; -1: no file (or it could not be opened) */
static unsigned long long count;

void oltp_loaded_add(unsigned rows)
{
    char buf[32];
    pthread_mutex_lock(&lock);
    if (fd == -2) {
        const char *path = getenv(OLTP_LOADED_ENV);
        fd = path && *path ? open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600) : -1;
    }
    count += rows;
    if (fd >= 0) {
        /* fixed width, so each write replaces the whole number (a reader never sees a mix) */
        int n = snprintf(buf, sizeof(buf), "%20llu\n", count);
        if (pwrite(fd, buf, (size_t)n, 0) != n) {
            close(fd); /* progress only: the prepare goes on without it */
            fd = -1;
        }
    }
    pthread_mutex_unlock(&lock);
}

long long oltp_loaded_read(const char *path)
{
    char buf[32];
    int f = open(path, O_RDONLY | O_CLOEXEC);
    if (f < 0)
        return -1;
    ssize_t n = pread(f, buf, sizeof(buf) - 1, 0);
    close(f);
    if (n < 21)
        return -1;
    buf[n] = '\0';
    return strtoll(buf, NULL, 10);
}
