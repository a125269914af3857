/* pgsql: the PostgreSQL driver on libpq (linked). Options are read once by init; each db_conn
 * owns one PGconn and the server-side prepared statements it created. */
#ifndef PGOLAB_DB_PGSQL_H
#define PGOLAB_DB_PGSQL_H

#include "db/driver.h"

struct strbuf;

extern const struct db_driver pgsql_driver;

/* Append sql to out with each '?' placeholder outside quoted literals ('...' or "...")
 * replaced by $1, $2, ... in order (sysbench's pgsql driver does the same). Returns the number
 * of placeholders. */
int pgsql_rewrite_placeholders(struct strbuf *out, const char *sql);

#endif
