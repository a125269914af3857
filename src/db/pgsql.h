/* pgsql: placeholder header, replaced by the real driver. */
#ifndef PGOLAB_DB_PGSQL_H
#define PGOLAB_DB_PGSQL_H

#include "db/driver.h"

extern const struct db_driver pgsql_driver;

#endif
