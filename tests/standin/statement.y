/* statement.y: a bison grammar for the stand-in's generated statements (standin.c), so the
 * stand-in, like MariaDB (sql/sql_yacc.yy), has a parser generated into its build directory:
 * bison writes #line directives naming that file's absolute path, GCC's profile checksum of
 * each parser function includes it, and the mariadb recipe's pgo build must therefore compile
 * where the instrumented build did (recipe "build_dir": "pgo-reuses-instrumented"). The
 * grammar is the five statement shapes; the value is the number of column references. */
%define api.pure full
%define api.prefix {standin_yy}
%parse-param {const char **cursor} {unsigned *columns}
%lex-param {const char **cursor}

%code provides {
/* Parse one statement: its column references counted into *columns; 0, or 1 on a syntax
 * error. */
int standin_parse(const char *statement, unsigned *columns);
}

%code {
#include <string.h>
static int standin_yylex(STANDIN_YYSTYPE *value, const char **cursor);
static void standin_yyerror(const char **cursor, unsigned *columns, const char *message);
}

%token SELECT FROM WHERE BETWEEN AND ORDER BY UPDATE SET INSERT INTO VALUES SUM
%token NAME NUMBER STRING

%%

statement: select | update | insert ;

select: SELECT items FROM NAME where order ;
items: item | items ',' item ;
item: column | SUM '(' column ')' ;
where: WHERE column '=' NUMBER | WHERE column BETWEEN NUMBER AND NUMBER ;
order: %empty | ORDER BY column ;

update: UPDATE NAME SET column '=' column '+' NUMBER WHERE column '=' NUMBER ;

insert: INSERT INTO NAME '(' columns ')' VALUES '(' values ')' ;
columns: column | columns ',' column ;
values: value | values ',' value ;
value: NUMBER | STRING ;

column: NAME { (*columns)++; } ;

%%

static const struct { const char *word; int token; } words[] = {
    { "SELECT", SELECT }, { "FROM", FROM }, { "WHERE", WHERE }, { "BETWEEN", BETWEEN },
    { "AND", AND }, { "ORDER", ORDER }, { "BY", BY }, { "UPDATE", UPDATE }, { "SET", SET },
    { "INSERT", INSERT }, { "INTO", INTO }, { "VALUES", VALUES }, { "SUM", SUM },
};

static int standin_yylex(STANDIN_YYSTYPE *value, const char **cursor)
{
    const char *s = *cursor;
    (void)value;
    while (*s == ' ')
        s++;
    if (!*s) {
        *cursor = s;
        return 0;
    }
    const char *start = s;
    int token;
    if ((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_') {
        while ((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_' ||
               (*s >= '0' && *s <= '9'))
            s++;
        token = NAME;
        for (size_t i = 0; i < sizeof(words) / sizeof(*words); i++)
            if (strlen(words[i].word) == (size_t)(s - start) &&
                !strncmp(words[i].word, start, (size_t)(s - start)))
                token = words[i].token;
    } else if (*s >= '0' && *s <= '9') {
        while (*s >= '0' && *s <= '9')
            s++;
        token = NUMBER;
    } else if (*s == '\'') {
        s++;
        while (*s && *s != '\'')
            s++;
        if (*s)
            s++;
        token = STRING;
    } else {
        token = (unsigned char)*s++;
    }
    *cursor = s;
    return token;
}

static void standin_yyerror(const char **cursor, unsigned *columns, const char *message)
{
    (void)cursor, (void)columns, (void)message; /* the caller counts the failures */
}

int standin_parse(const char *statement, unsigned *columns)
{
    return standin_yyparse(&statement, columns);
}
