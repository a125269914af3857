/* placement: CPU sets of the measured processes (see placement.h). No state of its own. */
#include "experiment/placement.h"
#include "util/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int cpu_placement_parse(const char *s, struct cpu_placement *p)
{
    memset(p, 0, sizeof(*p));
    p->given = true;
    if (!strcmp(s, "auto"))
        p->mode = PLACEMENT_AUTO;
    else if (!strcmp(s, "off"))
        p->mode = PLACEMENT_OFF;
    else {
        char *copy = xstrdup(s), *colon = strchr(copy, ':');
        int bad;
        if (colon)
            *colon = '\0';
        bad = cpu_list_parse(copy, &p->client) < 0 ||
              (colon && cpu_list_parse(colon + 1, &p->server) < 0);
        free(copy);
        if (bad)
            return error("invalid --cpu-placement=%s (expected auto, off, or CLIENT[:SERVER] CPU "
                         "lists as taskset takes them, e.g. 0:1 or 0:1-3)", s);
        p->mode = PLACEMENT_LIST;
        if (!colon)
            CPU_ZERO(&p->server);
    }
    return cpu_placement_resolve(p);
}

static int first_cpu(const cpu_set_t *s)
{
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, s))
            return c;
    return -1;
}

int cpu_placement_resolve(struct cpu_placement *p)
{
    cpu_set_t allowed;
    p->active = false;
    p->why_off[0] = '\0';
    if (p->mode == PLACEMENT_OFF)
        return 0;
    if (sched_getaffinity(0, sizeof(allowed), &allowed) < 0) {
        snprintf(p->why_off, sizeof(p->why_off), "sched_getaffinity: %s", strerror(errno));
        return p->mode == PLACEMENT_LIST ? error("--cpu-placement: %s", p->why_off) : 0;
    }
    int n = CPU_COUNT(&allowed);
    if (p->mode == PLACEMENT_AUTO) {
        if (n < 2) {
            snprintf(p->why_off, sizeof(p->why_off), "%d CPU allowed", n);
            return 0;
        }
        CPU_ZERO(&p->client);
        CPU_SET(first_cpu(&allowed), &p->client);
    } else {
        cpu_set_t out;
        CPU_AND(&out, &p->client, &allowed);
        if (!CPU_EQUAL(&out, &p->client) ||
            (CPU_AND(&out, &p->server, &allowed), !CPU_EQUAL(&out, &p->server))) {
            char a[PLACEMENT_STR_MAX];
            cpu_list_format(&allowed, a, sizeof(a));
            return error("invalid --cpu-placement: it names a CPU this process may not use "
                         "(allowed: %s)", a);
        }
    }
    if (p->mode == PLACEMENT_AUTO || CPU_COUNT(&p->server) == 0) {
        CPU_XOR(&p->server, &allowed, &p->client);
        CPU_AND(&p->server, &p->server, &allowed);
        if (CPU_COUNT(&p->server) == 0)  /* the client has every CPU: the server shares them */
            p->server = allowed;
    }
    cpu_list_format(&p->client, p->client_str, sizeof(p->client_str));
    cpu_list_format(&p->server, p->server_str, sizeof(p->server_str));
    p->active = true;
    return 0;
}

const cpu_set_t *cpu_placement_client(const struct cpu_placement *p, bool in_process, int threads)
{
    if (!p || !p->active)
        return NULL;
    /* auto: several in-process threads pinned to one CPU would take turns on it */
    if (in_process && threads > 1 && p->mode == PLACEMENT_AUTO && CPU_COUNT(&p->client) < threads)
        return NULL;
    return &p->client;
}

const cpu_set_t *cpu_placement_server(const struct cpu_placement *p)
{
    return p && p->active ? &p->server : NULL;
}

void cpu_placement_describe(const struct cpu_placement *p, bool server, char *buf, size_t size)
{
    bool aut = p->mode == PLACEMENT_AUTO;
    if (!p->active)
        snprintf(buf, size, "off%s%s%s", p->why_off[0] ? " (" : "", p->why_off,
                 p->why_off[0] ? ")" : "");
    else if (server)
        snprintf(buf, size, "client on CPU %s, managed server on CPU %s (%s)", p->client_str,
                 p->server_str, aut ? "auto" : "--cpu-placement");
    else
        snprintf(buf, size, "client on CPU %s (%s)", p->client_str,
                 aut ? "auto: SQLite runs at --threads=1 only; more threads are not pinned"
                     : "--cpu-placement");
}

json_t *cpu_placement_json(const struct cpu_placement *p)
{
    if (!p->active)
        return NULL;
    return json_pack("{s:s,s:s,s:s}", "mode", p->mode == PLACEMENT_AUTO ? "auto" : "list",
                     "client", p->client_str, "server", p->server_str);
}

void cpu_placement_from_json(const json_t *j, struct cpu_placement *p)
{
    bool given = p->given;
    memset(p, 0, sizeof(*p));
    p->given = given;
    p->mode = PLACEMENT_OFF;
    const char *mode = json_string_value(json_object_get(j, "mode"));
    const char *c = json_string_value(json_object_get(j, "client"));
    const char *s = json_string_value(json_object_get(j, "server"));
    if (!mode || !c || !s || cpu_list_parse(c, &p->client) < 0 ||
        cpu_list_parse(s, &p->server) < 0)
        return;
    p->mode = strcmp(mode, "auto") ? PLACEMENT_LIST : PLACEMENT_AUTO;
    snprintf(p->client_str, sizeof(p->client_str), "%s", c);
    snprintf(p->server_str, sizeof(p->server_str), "%s", s);
    p->active = true;
}
