/* libmariadb_api: libmariadb, MariaDB's client library (MariaDB Connector/C), loaded on first
 * use instead of linked, so that a pgolab process that talks to no MariaDB or MySQL server
 * does not load it and the TLS libraries it pulls in (BENCHMARKS.md, "Process start-up").
 *
 * Owned by src/util; used by src/db/mysql.c and src/server/flavor_mysql.c, which include this
 * header instead of <mysql.h>. Every client function they call is a macro for its pointer in the
 * table, so their code reads as the plain client API; <mysql.h> still gives the types. The
 * first call of any of them loads libmariadb.so.3 (thread-safe, once per process); a process
 * that cannot load it stops with one FATAL line naming the library and the package. Code that
 * can report the failure itself (a driver's init) calls libmariadb_api_load() first. */
#ifndef PGOLAB_UTIL_LIBMARIADB_API_H
#define PGOLAB_UTIL_LIBMARIADB_API_H

#include <mysql.h>

#define LIBMARIADB_LIBRARY "libmariadb.so.3"

/* The client functions pgolab calls: X(name) for each (mysql_library_init and
 * mysql_library_end are <mysql.h>'s names for mysql_server_init and mysql_server_end). */
#define LIBMARIADB_FUNCTIONS(X) \
    X(mysql_affected_rows) \
    X(mysql_close) \
    X(mysql_errno) \
    X(mysql_error) \
    X(mysql_fetch_lengths) \
    X(mysql_fetch_row) \
    X(mysql_field_count) \
    X(mysql_free_result) \
    X(mysql_get_client_info) \
    X(mysql_get_server_info) \
    X(mysql_get_socket) \
    X(mysql_init) \
    X(mysql_num_fields) \
    X(mysql_options) \
    X(mysql_query) \
    X(mysql_real_connect) \
    X(mysql_real_escape_string) \
    X(mysql_real_query) \
    X(mysql_sqlstate) \
    X(mysql_stmt_affected_rows) \
    X(mysql_stmt_bind_param) \
    X(mysql_stmt_bind_result) \
    X(mysql_stmt_close) \
    X(mysql_stmt_errno) \
    X(mysql_stmt_error) \
    X(mysql_stmt_execute) \
    X(mysql_stmt_fetch) \
    X(mysql_stmt_fetch_column) \
    X(mysql_stmt_field_count) \
    X(mysql_stmt_free_result) \
    X(mysql_stmt_init) \
    X(mysql_stmt_param_count) \
    X(mysql_stmt_prepare) \
    X(mysql_stmt_sqlstate) \
    X(mysql_stmt_store_result) \
    X(mysql_store_result) \
    X(mysql_thread_end) \
    X(mysql_thread_init) \
    X(mysql_use_result) \
    X(mysql_server_init) \
    X(mysql_server_end)

/* The table: fn_NAME points to libmariadb's NAME. */
struct libmariadb_api {
#define LIBMARIADB_API_MEMBER(name) __typeof__(&name) fn_##name;
    LIBMARIADB_FUNCTIONS(LIBMARIADB_API_MEMBER)
#undef LIBMARIADB_API_MEMBER
};

/* Loads libmariadb (once; later calls return the same table). NULL after one error line
 * ("cannot load MariaDB's client library libmariadb.so.3 (...); install the Debian package
 * libmariadb3"). */
const struct libmariadb_api *libmariadb_api_load(void);
/* libmariadb_api()'s slow path: libmariadb_api_load(), exit(1) when it fails. */
const struct libmariadb_api *libmariadb_api_need(void);
/* Set (release) once the table is complete; read through libmariadb_api(). */
extern const struct libmariadb_api *libmariadb_api_table;

/* The table, loading libmariadb on the first call; exits when it cannot be loaded. */
static inline const struct libmariadb_api *libmariadb_api(void)
{
    const struct libmariadb_api *t = __atomic_load_n(&libmariadb_api_table, __ATOMIC_ACQUIRE);
    return t ? t : libmariadb_api_need();
}

#ifndef LIBMARIADB_API_NO_MACROS
#undef mysql_library_init
#undef mysql_library_end
#define mysql_library_init (libmariadb_api()->fn_mysql_server_init)
#define mysql_library_end (libmariadb_api()->fn_mysql_server_end)
#define mysql_affected_rows (libmariadb_api()->fn_mysql_affected_rows)
#define mysql_close (libmariadb_api()->fn_mysql_close)
#define mysql_errno (libmariadb_api()->fn_mysql_errno)
#define mysql_error (libmariadb_api()->fn_mysql_error)
#define mysql_fetch_lengths (libmariadb_api()->fn_mysql_fetch_lengths)
#define mysql_fetch_row (libmariadb_api()->fn_mysql_fetch_row)
#define mysql_field_count (libmariadb_api()->fn_mysql_field_count)
#define mysql_free_result (libmariadb_api()->fn_mysql_free_result)
#define mysql_get_client_info (libmariadb_api()->fn_mysql_get_client_info)
#define mysql_get_server_info (libmariadb_api()->fn_mysql_get_server_info)
#define mysql_get_socket (libmariadb_api()->fn_mysql_get_socket)
#define mysql_init (libmariadb_api()->fn_mysql_init)
#define mysql_num_fields (libmariadb_api()->fn_mysql_num_fields)
#define mysql_options (libmariadb_api()->fn_mysql_options)
#define mysql_query (libmariadb_api()->fn_mysql_query)
#define mysql_real_connect (libmariadb_api()->fn_mysql_real_connect)
#define mysql_real_escape_string (libmariadb_api()->fn_mysql_real_escape_string)
#define mysql_real_query (libmariadb_api()->fn_mysql_real_query)
#define mysql_sqlstate (libmariadb_api()->fn_mysql_sqlstate)
#define mysql_stmt_affected_rows (libmariadb_api()->fn_mysql_stmt_affected_rows)
#define mysql_stmt_bind_param (libmariadb_api()->fn_mysql_stmt_bind_param)
#define mysql_stmt_bind_result (libmariadb_api()->fn_mysql_stmt_bind_result)
#define mysql_stmt_close (libmariadb_api()->fn_mysql_stmt_close)
#define mysql_stmt_errno (libmariadb_api()->fn_mysql_stmt_errno)
#define mysql_stmt_error (libmariadb_api()->fn_mysql_stmt_error)
#define mysql_stmt_execute (libmariadb_api()->fn_mysql_stmt_execute)
#define mysql_stmt_fetch (libmariadb_api()->fn_mysql_stmt_fetch)
#define mysql_stmt_fetch_column (libmariadb_api()->fn_mysql_stmt_fetch_column)
#define mysql_stmt_field_count (libmariadb_api()->fn_mysql_stmt_field_count)
#define mysql_stmt_free_result (libmariadb_api()->fn_mysql_stmt_free_result)
#define mysql_stmt_init (libmariadb_api()->fn_mysql_stmt_init)
#define mysql_stmt_param_count (libmariadb_api()->fn_mysql_stmt_param_count)
#define mysql_stmt_prepare (libmariadb_api()->fn_mysql_stmt_prepare)
#define mysql_stmt_sqlstate (libmariadb_api()->fn_mysql_stmt_sqlstate)
#define mysql_stmt_store_result (libmariadb_api()->fn_mysql_stmt_store_result)
#define mysql_store_result (libmariadb_api()->fn_mysql_store_result)
#define mysql_thread_end (libmariadb_api()->fn_mysql_thread_end)
#define mysql_thread_init (libmariadb_api()->fn_mysql_thread_init)
#define mysql_use_result (libmariadb_api()->fn_mysql_use_result)
#define mysql_server_init (libmariadb_api()->fn_mysql_server_init)
#define mysql_server_end (libmariadb_api()->fn_mysql_server_end)
#endif

#endif
