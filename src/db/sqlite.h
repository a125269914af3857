/* sqlite: the embedded SQLite driver. It loads the libsqlite3 of the variant under test at run
 * time (--sqlite-library) with a plain dlopen, after proving that no other SQLite is in the
 * process (pgolab links none; the results store loads its own only in the processes that open
 * a store), so the variant is the only SQLite code the measured process runs. */
#ifndef PGOLAB_DB_SQLITE_H
#define PGOLAB_DB_SQLITE_H

#include "db/driver.h"

extern const struct db_driver sqlite_driver;

#endif
