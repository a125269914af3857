/* fuzz_store.c: libFuzzer target for the results-database reader: the input is the bytes of a
 * results database file (the seeds are small valid ones that `pgolab compare` wrote), read the
 * way `pgolab report` and `compare --resume` read it: store_open() (src/store/store.c), every
 * experiment listed, each loaded with its runs and their JSON columns (experiment_load(),
 * src/experiment/record.c), then `pgolab report` in text and JSON on the latest and `pgolab
 * history`. A damaged or
 * odd database must give one error, never a crash. */
#include "fuzz.h"

#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "model/model.h"
#include "experiment/record.h"
#include "store/store.h"

#define MAX_IDS 4

struct ids {
    int64_t id[MAX_IDS];
    int n;
};

static int collect(const struct store_experiment *e, void *ctx)
{
    struct ids *ids = ctx;
    if (ids->n < MAX_IDS)
        ids->id[ids->n++] = e->id;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *path = fuzz_tmpfile("store", ".db", data, size);
    if (!path)
        return 0;
    struct store *s = NULL;
    struct ids ids = { { 0 }, 0 };
    if (store_open(path, &s) == 0) {
        if (store_experiments_list(s, collect, &ids) == 0)
            for (int i = 0; i < ids.n; i++) {
                struct experiment_loaded l;
                if (experiment_load(s, ids.id[i], &l) == 0)
                    experiment_loaded_release(&l);
            }
        store_close(s);
    }
    if (ids.n > 0) {
        static const char *const formats[] = { "--format=text", "--format=json" };
        for (size_t f = 0; f < sizeof(formats) / sizeof(formats[0]); f++) {
            char results[4200];
            snprintf(results, sizeof(results), "--results=%s", path);
            char *argv[] = { "report", results, (char *)formats[f], NULL };
            cmd_report(3, argv);
        }
        char results[4200];
        snprintf(results, sizeof(results), "--results=%s", path);
        char *argv[] = { "history", results, NULL };
        cmd_history(2, argv);
    }
    fuzz_tmpfile_remove(path);
    return 0;
}
