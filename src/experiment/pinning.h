/* pinning: --cpu-placement in the experiment engine: the option parsed and resolved against
 * the CPUs this process may use (sched_getaffinity), and the CPU sets of each run's client
 * (the bench child) and managed server, which run.c hands to the child's fork
 * (util/subprocess) and the server's (server/process.c). What a placement is (struct
 * cpu_placement, its modes, its description and JSON) is placement.h's, a data type the
 * reports read too. No state of its own; the struct is the caller's. */
#ifndef PGOLAB_EXPERIMENT_PINNING_H
#define PGOLAB_EXPERIMENT_PINNING_H

#include <sched.h>
#include <stdbool.h>

#include "model/placement.h"

/* --cpu-placement=auto|off|CLIENT[:SERVER] into *p (zeroed first, then resolved by
 * cpu_placement_resolve() against the CPUs this process may use: a list naming a CPU outside
 * them is refused). -1 after a one-line message naming the option and what would be right. */
int cpu_placement_parse(const char *s, struct cpu_placement *p);

/* Resolve p->mode against the CPUs allowed to this process (sched_getaffinity): fills active,
 * the sets and their strings. 0, or -1 after a message (a list outside the allowed CPUs). */
int cpu_placement_resolve(struct cpu_placement *p);

/* The CPUs for one run's client (the bench child) and managed server, NULL = leave it alone.
 * in_process: the client is the engine (SQLite); threads: the run's client threads. */
const cpu_set_t *cpu_placement_client(const struct cpu_placement *p, bool in_process, int threads);
const cpu_set_t *cpu_placement_server(const struct cpu_placement *p);

#endif
