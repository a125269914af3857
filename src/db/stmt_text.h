/* stmt_text: the text of a '?'-placeholder statement: with its values inlined (the statement a
 * text protocol sends, --db-ps-mode=disable, and the one a failed driver call names), and the
 * table it names. A failed call's statement and table are kept in its struct db_error (sql,
 * table) so that the one line of an SQL error names them, bounded to DB_ERR_SQL_MAX
 * characters. Pure string work; owns no state. */
#ifndef PGOLAB_STMT_TEXT_H
#define PGOLAB_STMT_TEXT_H

#include <stddef.h>

#include "db/status.h"

struct strbuf;

/* Text of a '?'-placeholder statement with its parameters inlined, for --db-ps-mode=disable:
 * DB_INT as decimal, DB_TEXT via quote(ctx, out, s, len), which appends the quoted literal
 * (e.g. mysql_real_escape_string, PQescapeStringConn). '?' inside quoted literals of sql is not
 * a placeholder. Returns 0, or -1 if the placeholder and parameter counts differ. */
int db_sql_expand(struct strbuf *out, const char *sql, const struct db_param *p, int np,
                  void (*quote)(void *ctx, struct strbuf *out, const char *s, int len), void *ctx);

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
