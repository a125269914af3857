/* fuzz_options.c: libFuzzer target for opts_parse() (src/util/opts.c), sysbench-style
 * command-line parsing. The input is an argv: words separated by NUL bytes (at most 32),
 * parsed against the real tables of `pgolab bench` (the connection and OLTP options) plus one
 * option of every type, then every value read back with the accessor of its type, the way the
 * commands read them. A bad word must give one error, never a crash. */
#include "fuzz.h"

#include <stdlib.h>
#include <string.h>

#include "db/driver.h"
#include "oltp/oltp.h"
#include "util/opts.h"

#define MAX_WORDS 32

static const struct opt_def every_type[] = {
    { "flag", OPT_BOOL, "off", "a bool" },
    { "count", OPT_INT, "3", "an integer" },
    { "ratio", OPT_DOUBLE, "0.5", "a number" },
    { "name", OPT_STRING, NULL, "a string" },
    { "threads-list", OPT_LIST, "1,2", "a list" },
    { "variant", OPT_MULTI, NULL, "repeatable" },
    { "db-password", OPT_STRING, NULL, "a password (overwritten in argv)" },
    OPT_END,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = fuzz_cstr(data, size);
    char *argv[MAX_WORDS + 1];
    int argc = 0;
    /* split on NUL: fuzz_cstr's copy ends at the first one, so walk the raw bytes instead */
    memcpy(buf, data, size);
    for (size_t i = 0; i < size && argc < MAX_WORDS;) {
        argv[argc++] = buf + i;
        while (i < size && buf[i])
            i++;
        i++;
    }
    argv[argc] = NULL;

    const struct opt_def *tables[] = { every_type, db_common_options, oltp_options };
    struct opts o;
    opts_init(&o, tables, 3);
    o.cmd = "bench";
    if (opts_parse(&o, argc, argv) == 0) {
        for (int i = 0; i < o.nvalues; i++) {
            const struct opt_def *d = o.values[i].def;
            int n = 0;
            switch (d->type) {
            case OPT_BOOL: (void)opt_bool(&o, d->name); break;
            case OPT_INT: (void)opt_int(&o, d->name); break;
            case OPT_DOUBLE: (void)opt_double(&o, d->name); break;
            case OPT_STRING: (void)opt_str(&o, d->name); break;
            case OPT_LIST: opt_list_free(opt_list(&o, d->name, &n)); break;
            case OPT_MULTI: (void)opt_multi(&o, d->name, &n); break;
            }
            (void)opt_is_set(&o, d->name);
        }
    }
    opts_release(&o);
    free(buf);
    return 0;
}
