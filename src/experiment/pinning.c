/* pinning: --cpu-placement resolved and each run's CPU sets (see pinning.h). No state of its
 * own. */
#include "experiment/pinning.h"
#include "util/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
