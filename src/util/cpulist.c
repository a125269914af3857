/* cpulist: CPU lists in taskset's syntax (see cpulist.h). */
#include "util/cpulist.h"

#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

int cpu_list_parse(const char *s, cpu_set_t *set)
{
    CPU_ZERO(set);
    if (!s || !*s)
        return -1;
    while (*s) {
        char *end;
        errno = 0;
        long a = strtol(s, &end, 10), b;
        if (end == s || errno || a < 0 || a >= CPU_SETSIZE)
            return -1;
        b = a;
        s = end;
        if (*s == '-') {
            s++;
            b = strtol(s, &end, 10);
            if (end == s || errno || b < a || b >= CPU_SETSIZE)
                return -1;
            s = end;
        }
        for (long c = a; c <= b; c++)
            CPU_SET((int)c, set);
        if (*s == ',' && s[1])
            s++;
        else if (*s)
            return -1;
    }
    return 0;
}

void cpu_list_format(const cpu_set_t *set, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int c = 0; c < CPU_SETSIZE; c++) {
        if (!CPU_ISSET(c, set))
            continue;
        int e = c;
        while (e + 1 < CPU_SETSIZE && CPU_ISSET(e + 1, set))
            e++;
        int k = e > c ? snprintf(buf + len, size - len, "%s%d-%d", len ? "," : "", c, e)
                      : snprintf(buf + len, size - len, "%s%d", len ? "," : "", c);
        if (k < 0 || (size_t)k >= size - len)
            return;
        len += (size_t)k;
        c = e;
    }
}

int cpu_list_self(char *buf, size_t size)
{
    cpu_set_t set;
    assert(buf && size > 0);
    buf[0] = '\0';
    if (sched_getaffinity(0, sizeof(set), &set) < 0)
        return -1;
    cpu_list_format(&set, buf, size);
    return 0;
}
