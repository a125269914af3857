/* placement: the CPU placement as data: CPU lists, its description and JSON (see
 * placement.h). No state of its own. */
#include "model/placement.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
