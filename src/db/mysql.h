/* mysql: placeholder header, replaced by the real driver. */
#ifndef PGOLAB_DB_MYSQL_H
#define PGOLAB_DB_MYSQL_H

#include "db/driver.h"

extern const struct db_driver mysql_driver;

#endif
