/* placement: which CPUs the measured processes run on (--cpu-placement of compare, pgo and
 * calibrate). Pinning the client (the bench child) and a managed server's process tree to
 * separate CPUs with sched_setaffinity keeps them from migrating between CPUs and from
 * competing for one, which the scheduler otherwise decides anew in every run: one source of
 * run-to-run variance (BENCHMARKS.md, placement, measures whether it helps here).
 *
 * Modes: off (the scheduler decides; the CLIs' default), auto (with at least 2 CPUs allowed to
 * pgolab, the client on the first of them and a managed server on the rest; an in-process
 * SQLite client with --threads=1 is pinned to that one CPU, with more threads it is left
 * alone, as its threads would share one CPU), or CLIENT[:SERVER], two CPU lists in taskset's
 * syntax ("0", "2-3,6"): the client on CLIENT, a managed server on SERVER (the rest of the
 * allowed CPUs when SERVER is left out).
 * This header is the data type, read by the reports too: the struct, CPU lists, the report's
 * description and the settings' JSON. Parsing the option, resolving it against the allowed
 * CPUs and each run's sets are the engine's (experiment/pinning.h). The struct is a value (no
 * heap). */
#ifndef PGOLAB_MODEL_PLACEMENT_H
#define PGOLAB_MODEL_PLACEMENT_H

#include "util/cpulist.h"

#include <sched.h>
#include <stdbool.h>

#include <jansson.h>

enum placement_mode { PLACEMENT_AUTO, PLACEMENT_OFF, PLACEMENT_LIST };

#define PLACEMENT_STR_MAX 128

struct cpu_placement {
    enum placement_mode mode;  /* as given (PLACEMENT_AUTO when zero) */
    bool given;                /* --cpu-placement was on the command line */
    bool active;               /* resolved: client and server hold the sets to apply */
    cpu_set_t client, server;
    char client_str[PLACEMENT_STR_MAX], server_str[PLACEMENT_STR_MAX];  /* taskset lists */
    char why_off[PLACEMENT_STR_MAX];  /* auto resolved to off: why ("1 CPU allowed") */
};

/* One line for the report header: "client on CPU 0, managed server on CPU 1 (auto)" (without
 * server: the client's part alone, noting auto's SQLite rule), or "off (1 CPU allowed)" /
 * "off". server: the experiment has a managed server. */
void cpu_placement_describe(const struct cpu_placement *p, bool server, char *buf, size_t size);

/* The settings value (new reference): {"mode": "auto"|"list", "client": "0", "server": "1"};
 * NULL when not active (the settings then have no key, as before placement existed). */
json_t *cpu_placement_json(const struct cpu_placement *p);
/* The settings value back (NULL or not an object: off). Not resolved again: the recorded sets. */
void cpu_placement_from_json(const json_t *j, struct cpu_placement *p);

#endif
