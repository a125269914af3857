#!/usr/bin/env bash
# tier: full (make check-full, .ci/run): it downloads Debian sid's MySQL server (about 55 MB)
# parity_mysql97.t: parity_sysbench.t's checks (the schema, the data, the statements and rows
# the server counted per transaction, the general log's statements in order, the output's
# lines) for the mysql driver on Oracle MySQL 9.7 instead of MariaDB: Debian sid's mysqld with
# sid's C library (lib.sh mysql_sid), started by `pgolab server start --prefix`. On MySQL the
# rows InnoDB wrote (Innodb_rows_*) stand in for Handler_write/update/delete, which also count
# MySQL's internal temporary tables. The checks' output is parity_sysbench.t's, as it is.
. "$(dirname "$0")/lib.sh"

mysql_sid
PARITY_DRIVERS=mysql PARITY_MYSQL_PREFIX=$MYSQL_SID_PREFIX bash "$E2E_DIR/parity_sysbench.t"
