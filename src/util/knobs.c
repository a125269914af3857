/* knobs: the test-only environment knobs (see knobs.h). */
#include "util/knobs.h"
#include "util/util.h"

#include <stdbool.h>
#include <stdlib.h>

const struct test_knob test_knobs[] = {
    { "PGOLAB_THROTTLE", "the runner slows that library's bench runs down" },
    { "PGOLAB_FAULT_RETRY_EVERY", "injected retryable errors" },
    { "PGOLAB_FAULT_AT", "one injected driver-call failure (the fault walk)" },
    { "PGOLAB_SQLITE_LOAD", "SQLite variants loaded another way" },
    { "PGOLAB_PGO_EXTRA_CFLAGS", "extra compiler flags for the pgo build only" },
    { "PGOLAB_LATENCY_FILE", "bench writes every counted latency to that path.RANK" },
    { "PGOLAB_MPI_MERGE_TIMES", "rank 0 says what merging the ranks' interval lines cost" },
    { "PGOLAB_CHARTJS", "the HTML report inlines another chart library file" },
    { "PGOLAB_PROGRESS_EVERY", "seconds between an experiment's progress lines off a terminal" },
    { "PGOLAB_METRICS_PROC", "system metrics are read from that directory instead of /proc" },
    { NULL, NULL },
};

static const char *knob_value(const struct test_knob *k)
{
    const char *v = getenv(k->name);
    return v && *v ? v : NULL;
}

/* Set for the children once the knobs were announced, so compare's or pgo's bench children
 * (whose stderr may reach the terminal) do not say it again. */
#define ANNOUNCED "PGOLAB_TEST_KNOBS_ANNOUNCED"

void knobs_announce(void)
{
    static bool done;
    if (done)
        return;
    done = true;
    if (getenv(ANNOUNCED))
        return;
    bool any = false;
    for (const struct test_knob *k = test_knobs; k->name; k++) {
        const char *v = knob_value(k);
        if (v)
            warning("test knob %s=%s is set (%s; for tests only, recorded as test_knobs)",
                    k->name, v, k->what);
        any = any || v;
    }
    if (any)
        setenv(ANNOUNCED, "1", 1);
}

json_t *knobs_json(void)
{
    json_t *o = NULL;
    for (const struct test_knob *k = test_knobs; k->name; k++) {
        const char *v = knob_value(k);
        if (!v)
            continue;
        if (!o)
            o = json_object();
        json_object_set_new(o, k->name, json_string(v));
    }
    return o;
}
