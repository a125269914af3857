/* environment: what an experiment records of the machine it runs on (kernel, CPU, cores,
 * memory, load, CPU governor, pgolab version) and the differences between two such records
 * that can move results (a resume on another machine; `pgolab report --compare`). Reads /proc,
 * /sys and uname; owns no state; returned strings are the caller's. */
#ifndef PGOLAB_MODEL_ENVIRONMENT_H
#define PGOLAB_MODEL_ENVIRONMENT_H

#include <stdbool.h>

#include "util/strbuf.h"

/* The environment as JSON object text (caller frees): pgolab_version, started_at (now),
 * hostname, kernel, kernel_version, machine, cpu_model, cores, memory_bytes, loadavg_1m,
 * cpufreq_governor (null where unreadable). */
char *experiment_environment_json(void);

/* The differences between two environments (experiment_environment_json() texts) that can
 * move results: hostname, kernel, kernel_version, machine, cpu_model, cores, memory_bytes,
 * cpufreq_governor, pgolab_version, and loadavg_1m when with_load and the two differ by 0.5
 * or more (half a core of other work). Appended to out one per line, "label: a -> b\n".
 * Returns how many differ. */
int experiment_env_diff(const char *env_a, const char *env_b, bool with_load,
                        struct strbuf *out);

#endif
