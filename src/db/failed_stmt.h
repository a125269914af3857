/* failed_stmt: the statement and table of a failed driver call, kept in its struct db_error
 * (sql, table) so that the one line of an SQL error names them: the statement's text with its
 * values inlined, bounded to DB_ERR_SQL_MAX characters, and the table it names first. Pure
 * string work; owns no state. */
#ifndef PGOLAB_FAILED_STMT_H
#define PGOLAB_FAILED_STMT_H

#include <stddef.h>

#include "db/driver.h"

/* The table sql names first: the identifier after FROM, INTO, UPDATE, TABLE or JOIN (keywords
 * in any case, outside quoted literals; quotes `, " and [] around the name dropped), into out
 * (n >= 1 bytes, cut to fit). Returns its length; 0 (out "") when sql names none (BEGIN). */
size_t db_sql_table(const char *sql, char *out, size_t n);

/* e->sql: sql with its '?' placeholders replaced by the np values of p (DB_INT in decimal,
 * DB_TEXT in single quotes with ' doubled; sql as is when the counts differ), on one line
 * (newlines and tabs as spaces), cut to DB_ERR_SQL_MAX characters with "..." after; e->table:
 * db_sql_table(sql). p may be NULL when np is 0. */
void db_error_set_stmt(struct db_error *e, const char *sql, const struct db_param *p, int np);

#endif
