/* sqlite_api: the results store's own SQLite, loaded at run time. Owned by src/store and used
 * only by store.c: nothing else in pgolab calls it, and the pgolab binary does not link
 * libsqlite3.
 *
 * Why at run time: the process that measures (`pgolab bench ... run`, the child of every
 * experiment) must contain no SQLite but the variant's (src/db/sqlite.c proves that before it
 * loads the variant). So the store's SQLite, the system libsqlite3.so.0, is loaded (dlopen,
 * RTLD_NOW | RTLD_LOCAL: nothing else in the process can bind to it) by the first store_open()
 * and only in the processes that open a results file: compare, pgo, calibrate, report,
 * history. <sqlite3.h> is included for its types and constants only. */
#ifndef PGOLAB_STORE_SQLITE_API_H
#define PGOLAB_STORE_SQLITE_API_H

#include <sqlite3.h>

#define STORE_SQLITE_LIBRARY "libsqlite3.so.0"

/* The part of the SQLite C API the store calls, resolved in STORE_SQLITE_LIBRARY. */
struct store_sqlite {
    __typeof__(&sqlite3_open_v2) open_v2;
    __typeof__(&sqlite3_close) close;
    __typeof__(&sqlite3_extended_result_codes) extended_result_codes;
    __typeof__(&sqlite3_busy_timeout) busy_timeout;
    __typeof__(&sqlite3_errmsg) errmsg;
    __typeof__(&sqlite3_extended_errcode) extended_errcode;
    __typeof__(&sqlite3_exec) exec;
    __typeof__(&sqlite3_get_autocommit) get_autocommit;
    __typeof__(&sqlite3_changes) changes;
    __typeof__(&sqlite3_last_insert_rowid) last_insert_rowid;
    __typeof__(&sqlite3_prepare_v2) prepare_v2;
    __typeof__(&sqlite3_step) step;
    __typeof__(&sqlite3_reset) reset;
    __typeof__(&sqlite3_finalize) finalize;
    __typeof__(&sqlite3_bind_int) bind_int;
    __typeof__(&sqlite3_bind_int64) bind_int64;
    __typeof__(&sqlite3_bind_double) bind_double;
    __typeof__(&sqlite3_bind_text) bind_text;
    __typeof__(&sqlite3_bind_null) bind_null;
    __typeof__(&sqlite3_column_type) column_type;
    __typeof__(&sqlite3_column_int) column_int;
    __typeof__(&sqlite3_column_int64) column_int64;
    __typeof__(&sqlite3_column_double) column_double;
    __typeof__(&sqlite3_column_text) column_text;
    __typeof__(&sqlite3_column_bytes) column_bytes;
};

/* The table, loading the library on the first call (the library then stays loaded for the
 * process). NULL after printing one error line that starts with what ("results file PATH").
 * Not thread-safe, like the store itself. */
const struct store_sqlite *store_sqlite_load(const char *what);

#endif
