/* pgsql: placeholder, replaced by the real driver. */
#include "db/pgsql.h"
#include "util/util.h"

static int ph_init(const struct opts *o)
{
    (void)o;
    return error("the pgsql driver is not built yet");
}

const struct db_driver pgsql_driver = {
    .name = "pgsql",
    .descr = "placeholder",
    .init = ph_init,
};
