/* sqlite: the embedded SQLite driver. It loads the libsqlite3 of the variant under test at run
 * time (--sqlite-library) into its own link-map namespace, so it is the only SQLite code the
 * measured process runs even if pgolab itself links another SQLite. */
#ifndef PGOLAB_DB_SQLITE_H
#define PGOLAB_DB_SQLITE_H

#include "db/driver.h"

extern const struct db_driver sqlite_driver;

#endif
