/* fuzz_child_json.c: libFuzzer target for experiment_parse_run() (src/experiment/run.c), the
 * reader of the JSON report a `pgolab bench --format=json run` child prints, which the
 * experiment engine trusts for every run it records. Any text: a run_result or one error. */
#include "fuzz.h"

#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "experiment/run.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_cstr(data, size);
    struct run_result r;
    memset(&r, 0, sizeof(r));
    if (experiment_parse_run(text, &r) == 0 && !r.json)
        abort(); /* a parsed report keeps its text */
    free(r.json);
    free(text);
    return 0;
}
