/* pidstat: /proc/PID/stat parsed (see pidstat.h). */
#include "util/pidstat.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Fields 4 (ppid) to 22 (starttime), the last one parsed: proc(5) numbers them from 1. */
#define FIRST_FIELD 4
#define LAST_FIELD 22

int pidstat_parse(const char *text, struct proc_pid_stat *out)
{
    memset(out, 0, sizeof(*out));
    const char *open = strchr(text, '('), *close = strrchr(text, ')');
    if (!open || !close || close < open || sscanf(text, "%d", &out->pid) != 1)
        return -1;
    size_t n = (size_t)(close - open - 1);
    if (n >= sizeof(out->comm))
        n = sizeof(out->comm) - 1;
    memcpy(out->comm, open + 1, n);
    out->comm[n] = '\0';
    const char *p = close + 1;
    while (*p == ' ')
        p++;
    if (!*p)
        return -1;
    out->state = *p++; /* field 3 */
    uint64_t v[LAST_FIELD - FIRST_FIELD + 1];
    for (int i = 0; i <= LAST_FIELD - FIRST_FIELD; i++) {
        char *end;
        while (*p == ' ')
            p++;
        if (*p == '-') /* the signed fields pgolab does not use (priority, nice) */
            p++;
        if (*p < '0' || *p > '9')
            return -1;
        v[i] = strtoull(p, &end, 10);
        p = end;
    }
#define FIELD(k) v[(k) - FIRST_FIELD]
    out->ppid = (int)FIELD(4);
    out->pgrp = (int)FIELD(5);
    out->minflt = FIELD(10);
    out->majflt = FIELD(12);
    out->utime = FIELD(14);
    out->stime = FIELD(15);
    out->cutime = FIELD(16);
    out->cstime = FIELD(17);
    out->num_threads = (int)FIELD(20);
    out->starttime = FIELD(22);
#undef FIELD
    return 0;
}

int pidstat_read(const char *root, long pid, struct proc_pid_stat *out)
{
    /* field 22 ends within about 500 bytes: a 64-byte comm and 20-digit numbers at most */
    char path[4096], buf[1024];
    memset(out, 0, sizeof(*out));
    if (pid <= 0 || snprintf(path, sizeof(path), "%s/%ld/stat", root ? root : "/proc", pid)
                        >= (int)sizeof(path))
        return -1;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    return pidstat_parse(buf, out);
}
