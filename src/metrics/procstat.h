/* procstat: the Linux /proc files of the whole machine system metrics are read from, parsed
 * into plain structs (a process's /proc/PID/stat is util/pidstat.h's).
 * Parsers take the file's text (so tests feed canned snapshots); procstat_read() reads one
 * file under a procfs root (normally "/proc"). Field meanings are proc(5)'s; time fields are
 * in clock ticks (USER_HZ, sysconf(_SC_CLK_TCK), 100 on Linux). Owns no state. */
#ifndef PGOLAB_METRICS_PROCSTAT_H
#define PGOLAB_METRICS_PROCSTAT_H

#include <stdint.h>

#include "util/strbuf.h"

/* The aggregate "cpu" line of /proc/stat, ticks since boot over all CPUs. guest and
 * guest_nice are already included in user and nice (proc(5)), so they are not summed again. */
struct proc_cpu {
    uint64_t user, nice, system, idle, iowait, irq, softirq, steal, guest, guest_nice;
};

/* /proc/stat: the cpu line, the number of cpuN lines, and the counters since boot. */
struct proc_stat {
    struct proc_cpu cpu;
    int ncpu;                /* cpuN lines */
    uint64_t intr;           /* first number of "intr": interrupts serviced */
    uint64_t ctxt;           /* context switches */
    uint64_t procs_running;  /* runnable tasks now */
    uint64_t procs_blocked;  /* tasks blocked on I/O now */
};

/* /proc/vmstat counters since boot (pages, or events for the faults). */
struct proc_vmstat {
    uint64_t pgfault, pgmajfault;  /* page faults (all / major) */
    uint64_t pswpin, pswpout;      /* pages swapped in / out */
};

/* /proc/loadavg: "0.52 0.58 0.59 3/412 12345". */
struct proc_loadavg {
    double load1, load5, load15;
    int running, total;  /* runnable scheduling entities now / all of them */
};

/* Sum of the cpu line's times (user + nice + system + idle + iowait + irq + softirq + steal). */
uint64_t proc_cpu_total(const struct proc_cpu *c);

/* Parse the text of /proc/stat. 0, or -1 (no message) when the cpu, intr or ctxt line is
 * missing or malformed. */
int procstat_parse_stat(const char *text, struct proc_stat *out);
/* Parse /proc/vmstat; counters it lacks are 0. -1 when pgfault is missing. */
int procstat_parse_vmstat(const char *text, struct proc_vmstat *out);
/* Parse /proc/loadavg. -1 when it is not five fields of that shape. */
int procstat_parse_loadavg(const char *text, struct proc_loadavg *out);

/* The text of ROOT/REL into out (reset first). 0, or -1 with errno set. */
int procstat_read(const char *root, const char *rel, struct strbuf *out);

#endif
