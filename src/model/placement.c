/* placement: the CPU placement as data: CPU lists, its description and JSON (see
 * placement.h). No state of its own. */
#include "model/placement.h"

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
