/* mysql: placeholder, replaced by the real driver. */
#include "db/mysql.h"
#include "util/util.h"

static int ph_init(const struct opts *o)
{
    (void)o;
    return error("the mysql driver is not built yet");
}

const struct db_driver mysql_driver = {
    .name = "mysql",
    .descr = "placeholder",
    .init = ph_init,
};
