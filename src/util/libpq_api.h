/* libpq_api: libpq, the PostgreSQL client library, loaded on first use instead of linked, so
 * that a pgolab process that talks to no PostgreSQL server (a SQLite run, a report, compare's
 * parent) does not load it and the libraries it pulls in (Kerberos, LDAP, GnuTLS, ...): that
 * is most of a process's start-up time (BENCHMARKS.md, "Process start-up").
 *
 * Owned by src/util; used by src/db/pgsql.c and src/server/flavor_pgsql.c, which include this
 * header instead of <libpq-fe.h>. Every libpq function they call is a macro for its pointer in the
 * table, so their code reads as plain libpq; <libpq-fe.h> still gives the types. The first
 * call of any of them loads libpq.so.5 (thread-safe, once per process); a process that cannot
 * load it stops with one FATAL line naming the library and the package. Code that can report
 * the failure itself (a driver's init) calls libpq_api_load() first. */
#ifndef PGOLAB_UTIL_LIBPQ_API_H
#define PGOLAB_UTIL_LIBPQ_API_H

#include <libpq-fe.h>

#define LIBPQ_LIBRARY "libpq.so.5"

/* The libpq functions pgolab calls: X(name) for each. */
#define LIBPQ_FUNCTIONS(X) \
    X(PQbackendPID) \
    X(PQclear) \
    X(PQcmdTuples) \
    X(PQconnectdbParams) \
    X(PQconsumeInput) \
    X(PQencryptPasswordConn) \
    X(PQerrorMessage) \
    X(PQescapeIdentifier) \
    X(PQescapeLiteral) \
    X(PQescapeStringConn) \
    X(PQexec) \
    X(PQexecParams) \
    X(PQexecPrepared) \
    X(PQfinish) \
    X(PQfreemem) \
    X(PQgetResult) \
    X(PQgetisnull) \
    X(PQgetlength) \
    X(PQgetvalue) \
    X(PQisBusy) \
    X(PQlibVersion) \
    X(PQnfields) \
    X(PQntuples) \
    X(PQparameterStatus) \
    X(PQpingParams) \
    X(PQprepare) \
    X(PQresultErrorField) \
    X(PQresultErrorMessage) \
    X(PQresultStatus) \
    X(PQsendQuery) \
    X(PQsendQueryPrepared) \
    X(PQsetNoticeProcessor) \
    X(PQsocket) \
    X(PQstatus) \
    X(PQtransactionStatus)

/* The table: fn_NAME points to libpq's NAME. */
struct libpq_api {
#define LIBPQ_API_MEMBER(name) __typeof__(&name) fn_##name;
    LIBPQ_FUNCTIONS(LIBPQ_API_MEMBER)
#undef LIBPQ_API_MEMBER
};

/* Loads libpq (once; later calls return the same table). NULL after one error line ("cannot
 * load the PostgreSQL client library libpq.so.5 (...); install the Debian package libpq5"). */
const struct libpq_api *libpq_api_load(void);
/* libpq_api()'s slow path: libpq_api_load(), exit(1) when it fails. */
const struct libpq_api *libpq_api_need(void);
/* Set (release) once the table is complete; read through libpq_api(). */
extern const struct libpq_api *libpq_api_table;

/* The table, loading libpq on the first call; exits when it cannot be loaded. */
static inline const struct libpq_api *libpq_api(void)
{
    const struct libpq_api *t = __atomic_load_n(&libpq_api_table, __ATOMIC_ACQUIRE);
    return t ? t : libpq_api_need();
}

#ifndef LIBPQ_API_NO_MACROS
#define PQclear (libpq_api()->fn_PQclear)
#define PQcmdTuples (libpq_api()->fn_PQcmdTuples)
#define PQconnectdbParams (libpq_api()->fn_PQconnectdbParams)
#define PQconsumeInput (libpq_api()->fn_PQconsumeInput)
#define PQencryptPasswordConn (libpq_api()->fn_PQencryptPasswordConn)
#define PQerrorMessage (libpq_api()->fn_PQerrorMessage)
#define PQbackendPID (libpq_api()->fn_PQbackendPID)
#define PQescapeIdentifier (libpq_api()->fn_PQescapeIdentifier)
#define PQescapeLiteral (libpq_api()->fn_PQescapeLiteral)
#define PQescapeStringConn (libpq_api()->fn_PQescapeStringConn)
#define PQexec (libpq_api()->fn_PQexec)
#define PQexecParams (libpq_api()->fn_PQexecParams)
#define PQexecPrepared (libpq_api()->fn_PQexecPrepared)
#define PQfinish (libpq_api()->fn_PQfinish)
#define PQfreemem (libpq_api()->fn_PQfreemem)
#define PQgetResult (libpq_api()->fn_PQgetResult)
#define PQgetisnull (libpq_api()->fn_PQgetisnull)
#define PQgetlength (libpq_api()->fn_PQgetlength)
#define PQgetvalue (libpq_api()->fn_PQgetvalue)
#define PQisBusy (libpq_api()->fn_PQisBusy)
#define PQlibVersion (libpq_api()->fn_PQlibVersion)
#define PQnfields (libpq_api()->fn_PQnfields)
#define PQntuples (libpq_api()->fn_PQntuples)
#define PQparameterStatus (libpq_api()->fn_PQparameterStatus)
#define PQpingParams (libpq_api()->fn_PQpingParams)
#define PQprepare (libpq_api()->fn_PQprepare)
#define PQresultErrorField (libpq_api()->fn_PQresultErrorField)
#define PQresultErrorMessage (libpq_api()->fn_PQresultErrorMessage)
#define PQresultStatus (libpq_api()->fn_PQresultStatus)
#define PQsendQuery (libpq_api()->fn_PQsendQuery)
#define PQsendQueryPrepared (libpq_api()->fn_PQsendQueryPrepared)
#define PQsetNoticeProcessor (libpq_api()->fn_PQsetNoticeProcessor)
#define PQsocket (libpq_api()->fn_PQsocket)
#define PQstatus (libpq_api()->fn_PQstatus)
#define PQtransactionStatus (libpq_api()->fn_PQtransactionStatus)
#endif

#endif
