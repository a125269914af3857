/* mysql: MySQL/MariaDB driver on libmariadb (MariaDB Connector/C), sysbench's --db-driver=mysql.
 * Options are read once by init (process-wide); each db_conn owns one MYSQL handle and the
 * statements prepared on it, which survive a reconnect (re-prepared in place). */
#ifndef PGOLAB_DB_MYSQL_H
#define PGOLAB_DB_MYSQL_H

#include "db/driver.h"

extern const struct db_driver mysql_driver;

#endif
