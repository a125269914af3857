/* status: what a driver call returns and how it failed (enum db_status, struct db_error) and
 * the values bound to a statement (struct db_param): the vocabulary the driver interface
 * (driver.h) and the statement text (stmt_text.h) share, so that neither
 * includes the other. Types only; owns no state. */
#ifndef PGOLAB_DB_STATUS_H
#define PGOLAB_DB_STATUS_H

#include <stdint.h>

/* Error classes (sysbench §9): retryable errors roll back and re-run the event. */
enum db_status {
    DB_OK = 0,
    DB_RETRY,      /* deadlock / busy / locked: roll back, count an error, re-run the event */
    DB_RECONNECT,  /* lost connection, ignorable: the driver has already reconnected and
                    * re-prepared every statement of the connection (the db_stmt pointers stay
                    * valid); the event is re-run and a reconnect counted. If reconnecting
                    * fails the driver returns DB_FATAL instead. */
    DB_FATAL,      /* anything else: stop the run */
};

/* Characters of a failed statement kept in its error (db_error.sql), "..." after. */
#define DB_ERR_SQL_MAX 200

struct db_error {
    enum db_status status;
    int code;          /* native code (SQLite extended result code, MySQL errno; 0 for
                        * PostgreSQL, whose SQLSTATE is in `state`) */
    char state[8];     /* SQLSTATE when the driver has one ("40P01"), else "" */
    char msg[512];     /* native message */
    /* The statement of a fatal error, with its values, and the table it names ("" when the
     * error came from no statement, e.g. a connect): set by the db_* wrappers below and by
     * a workload whose prepare failed (db/stmt_text.h). */
    char sql[DB_ERR_SQL_MAX + 4];
    char table[64];
};

enum db_ptype { DB_INT, DB_TEXT };

struct db_param {
    enum db_ptype type;
    int64_t i;
    const char *s;  /* DB_TEXT: not NUL-terminated necessarily */
    int len;
};

#endif
