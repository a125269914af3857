/* commands: `pgolab bench`'s commands on a checked configuration (cli/cmd_bench.c turns the
 * options into it): prepare, prewarm (warmup), run, cleanup, verify and info. Under mpirun
 * each rank calls bench_command(); prepare and cleanup run on rank 0 only. */
#ifndef PGOLAB_BENCH_COMMANDS_H
#define PGOLAB_BENCH_COMMANDS_H

#include <stdbool.h>

#include "bench/output.h"
#include "db/driver.h"
#include "oltp/oltp.h"

/* Run bi->command with driver drv (initialized here, with bi->opts, and done afterwards) on
 * workload wl (NULL for a bare `info`) and the OLTP settings o; output as text, or JSON with
 * json. bi->lib is filled from the driver; `run` also multiplies bi->threads by the ranks and
 * reads bi->opts for --thread-init-timeout, --histogram and --profile*. Returns the exit code:
 * 0 ok, 1 error (said on stderr), 2 interrupted or forced shutdown. A run whose workers are
 * still blocked in the client library ends the process itself (_exit). */
int bench_command(struct bench_info *bi, const struct db_driver *drv, const struct workload *wl,
                  const struct oltp_opts *o, bool json);

#endif
