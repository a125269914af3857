/* procstat: parsers of /proc/stat, /proc/vmstat and /proc/loadavg (see procstat.h). */
#include "metrics/procstat.h"
#include "util/util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint64_t proc_cpu_total(const struct proc_cpu *c)
{
    return c->user + c->nice + c->system + c->idle + c->iowait + c->irq + c->softirq + c->steal;
}

/* The line of text that starts with key followed by a blank, or NULL. */
static const char *find_line(const char *text, const char *key)
{
    size_t n = strlen(key);
    for (const char *l = text; l && *l;) {
        if (!strncmp(l, key, n) && (l[n] == ' ' || l[n] == '\t'))
            return l + n;
        l = strchr(l, '\n');
        if (l)
            l++;
    }
    return NULL;
}

/* One unsigned decimal after blanks into *v; advances *p. -1 when there is none. */
static int next_u64(const char **p, uint64_t *v)
{
    const char *s = *p;
    while (*s == ' ' || *s == '\t')
        s++;
    if (*s < '0' || *s > '9')
        return -1;
    char *end;
    errno = 0;
    unsigned long long x = strtoull(s, &end, 10);
    if (errno)
        return -1;
    *v = (uint64_t)x;
    *p = end;
    return 0;
}

int procstat_parse_stat(const char *text, struct proc_stat *out)
{
    memset(out, 0, sizeof(*out));
    const char *p = find_line(text, "cpu");
    if (!p)
        return -1;
    uint64_t *f[] = { &out->cpu.user, &out->cpu.nice, &out->cpu.system, &out->cpu.idle,
                      &out->cpu.iowait, &out->cpu.irq, &out->cpu.softirq, &out->cpu.steal,
                      &out->cpu.guest, &out->cpu.guest_nice };
    /* user nice system idle are in every kernel; the rest came later (2.5.41 .. 2.6.33) */
    for (size_t i = 0; i < ARRAY_SIZE(f); i++)
        if (next_u64(&p, f[i]) < 0 && i < 4)
            return -1;
    for (const char *l = text; l && *l;) {
        if (!strncmp(l, "cpu", 3) && l[3] >= '0' && l[3] <= '9')
            out->ncpu++;
        l = strchr(l, '\n');
        if (l)
            l++;
    }
    if (!(p = find_line(text, "intr")) || next_u64(&p, &out->intr) < 0)
        return -1;
    if (!(p = find_line(text, "ctxt")) || next_u64(&p, &out->ctxt) < 0)
        return -1;
    if ((p = find_line(text, "procs_running")))
        next_u64(&p, &out->procs_running);
    if ((p = find_line(text, "procs_blocked")))
        next_u64(&p, &out->procs_blocked);
    return 0;
}

int procstat_parse_vmstat(const char *text, struct proc_vmstat *out)
{
    static const char *const keys[] = { "pgfault", "pgmajfault", "pswpin", "pswpout" };
    uint64_t *f[] = { &out->pgfault, &out->pgmajfault, &out->pswpin, &out->pswpout };
    memset(out, 0, sizeof(*out));
    for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
        const char *p = find_line(text, keys[i]);
        if ((!p || next_u64(&p, f[i]) < 0) && i == 0)
            return -1;
    }
    return 0;
}

int procstat_parse_loadavg(const char *text, struct proc_loadavg *out)
{
    memset(out, 0, sizeof(*out));
    unsigned long last;
    if (sscanf(text, "%lf %lf %lf %d/%d %lu", &out->load1, &out->load5, &out->load15,
               &out->running, &out->total, &last) != 6)
        return -1;
    return 0;
}

int procstat_read(const char *root, const char *rel, struct strbuf *out)
{
    char *path = xasprintf("%s/%s", root, rel);
    strbuf_reset(out);
    int rc = strbuf_read_file(out, path);
    int e = errno;
    free(path);
    errno = e;
    return rc;
}
