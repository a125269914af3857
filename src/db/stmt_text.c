/* stmt_text: a statement's text with its values inlined, and the table it names (see
 * stmt_text.h). */
#include "db/stmt_text.h"
#include "util/strbuf.h"

#include <assert.h>
#include <ctype.h>
#include <stdbool.h>
#include <string.h>
#include <strings.h>

/* Whether the word of length len at w is one after which a table name comes. */
static bool table_keyword(const char *w, size_t len)
{
    static const char *const kw[] = { "FROM", "INTO", "UPDATE", "TABLE", "JOIN" };
    for (size_t i = 0; i < sizeof(kw) / sizeof(kw[0]); i++)
        if (strlen(kw[i]) == len && !strncasecmp(w, kw[i], len))
            return true;
    return false;
}

static bool ident_char(char c)
{
    return isalnum((unsigned char)c) || c == '_' || c == '$' || c == '.';
}

/* The name at s (after spaces), quotes dropped, into out; its length (0: none). */
static size_t copy_name(const char *s, char *out, size_t n)
{
    while (isspace((unsigned char)*s))
        s++;
    if (!strncasecmp(s, "IF NOT EXISTS", 13) || !strncasecmp(s, "IF EXISTS", 9)) {
        s += s[3] == 'N' || s[3] == 'n' ? 13 : 9;
        while (isspace((unsigned char)*s))
            s++;
    }
    char close = *s == '`' ? '`' : *s == '"' ? '"' : *s == '[' ? ']' : 0;
    if (close)
        s++;
    size_t len = 0;
    while (s[len] && (close ? s[len] != close : ident_char(s[len])))
        len++;
    if (!close && (len == 0 || isdigit((unsigned char)s[0])))
        return 0;
    if (len >= n)
        len = n - 1;
    memcpy(out, s, len);
    out[len] = '\0';
    return len;
}

size_t db_sql_table(const char *sql, char *out, size_t n)
{
    assert(n >= 1);
    *out = '\0';
    char q = 0;  /* the quote we are inside, or 0 */
    for (const char *s = sql; *s; s++) {
        if (q) {
            if (*s == q)
                q = 0;
            continue;
        }
        if (*s == '\'' || *s == '"' || *s == '`') {
            q = *s;
            continue;
        }
        if (!isalpha((unsigned char)*s) || (s > sql && ident_char(s[-1])))
            continue;
        size_t len = 0;
        while (isalpha((unsigned char)s[len]))
            len++;
        if (!ident_char(s[len]) && table_keyword(s, len)) {
            size_t got = copy_name(s + len, out, n);
            if (got)
                return got;
        }
        s += len - 1;
    }
    return 0;
}

/* strbuf quote callback of db_sql_expand: 'text', ' doubled (for reading, never sent). */
static void quote_for_message(void *ctx, struct strbuf *out, const char *s, int len)
{
    (void)ctx;
    strbuf_addch(out, '\'');
    for (int i = 0; i < len; i++) {
        if (s[i] == '\'')
            strbuf_addch(out, '\'');
        strbuf_addch(out, s[i]);
    }
    strbuf_addch(out, '\'');
}

void db_error_set_stmt(struct db_error *e, const char *sql, const struct db_param *p, int np)
{
    assert(np == 0 || p);
    struct strbuf full = STRBUF_INIT;
    const char *text = sql;
    if (np > 0 && db_sql_expand(&full, sql, p, np, quote_for_message, NULL) == 0)
        text = full.buf;
    size_t len = strlen(text), keep = len > DB_ERR_SQL_MAX ? DB_ERR_SQL_MAX : len;
    for (size_t i = 0; i < keep; i++)
        e->sql[i] = text[i] == '\n' || text[i] == '\t' || text[i] == '\r' ? ' ' : text[i];
    strcpy(e->sql + keep, len > keep ? "..." : "");
    strbuf_release(&full);
    db_sql_table(sql, e->table, sizeof(e->table));
}

int db_sql_expand(struct strbuf *out, const char *sql, const struct db_param *p, int np,
                  void (*quote)(void *ctx, struct strbuf *out, const char *s, int len), void *ctx)
{
    int used = 0;
    char q = 0;  /* the quote character we are inside, or 0 */
    for (const char *s = sql; *s; s++) {
        if (q) {
            if (*s == q)
                q = 0;
        } else if (*s == '\'' || *s == '"' || *s == '`') {
            q = *s;
        } else if (*s == '?') {
            if (used == np)
                return -1;
            const struct db_param *v = &p[used++];
            if (v->type == DB_INT)
                strbuf_addf(out, "%lld", (long long)v->i);
            else
                quote(ctx, out, v->s, v->len);
            continue;
        }
        strbuf_addch(out, *s);
    }
    return used == np ? 0 : -1;
}
