/* store_private: what store.c (schema, open, recording) and store_read.c (reading back)
 * share inside src/store: the store handle, the system SQLite's function table and the
 * statement helpers. Not for use outside src/store (the public API is store.h). */
#ifndef PGOLAB_STORE_PRIVATE_H
#define PGOLAB_STORE_PRIVATE_H

#include "store/sqlite_api.h"

#include <jansson.h>
#include <stdint.h>

/* An open results database: the connection and the file's path (messages name it). */
struct store {
    sqlite3 *db;
    char *path;
};

/* The system libsqlite3, loaded by the first store_open()/store_open_read() (store.c); every
 * other function runs on a store those returned, so it is set there. */
extern const struct store_sqlite *store_sq;

/* Print "results file PATH: WHAT: <sqlite message>" and return -1. */
int store_fail(const struct store *s, const char *what);

/* Prepare sql into *st; -1 (message printed, *st NULL) on failure. */
int store_prepare(struct store *s, const char *sql, sqlite3_stmt **st);

/* A heap copy of TEXT column i, or NULL for NULL. */
const char *store_col_dup(sqlite3_stmt *st, int i);

/* REAL column i; NULL (how SQLite stores NaN) reads back as NaN. */
double store_col_double(sqlite3_stmt *st, int i);

/* Run sql (no rows); -1 with "WHAT: <sqlite message>" on failure. */
int store_exec(struct store *s, const char *sql, const char *what);

/* End a transaction: commit when rc is 0, else (or if the commit fails) roll back.
 * Returns 0 or -1. */
int store_txn_end(struct store *s, int rc);

/* FNV-1a (64 bit) of the settings with sorted keys and no whitespace, as "fnv1a64:HEX" (the
 * experiments table's settings_hash). Caller frees. */
char *store_settings_hash(const json_t *settings);

#endif
