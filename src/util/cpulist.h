/* cpulist: CPU sets as text in taskset's list syntax ("0", "0-3,6"), for the placement
 * option (model/placement.h) and for the bench report's "cpus_allowed" (the CPUs the bench
 * process may run on). Pure functions; no state, no heap. */
#ifndef PGOLAB_UTIL_CPULIST_H
#define PGOLAB_UTIL_CPULIST_H

#include <sched.h>
#include <stddef.h>

/* A CPU list ("0", "0-3,6") into *set: 0, or -1 (no message) when it is not one or names a
 * CPU >= CPU_SETSIZE. */
int cpu_list_parse(const char *s, cpu_set_t *set);
/* *set as a CPU list ("0-1,3") into buf (size bytes). */
void cpu_list_format(const cpu_set_t *set, char *buf, size_t size);
/* This process's CPU affinity (sched_getaffinity) as a CPU list into buf (size bytes): 0, or
 * -1 with buf empty when the call fails. */
int cpu_list_self(char *buf, size_t size);

#endif
