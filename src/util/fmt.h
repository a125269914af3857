/* fmt: small formatting helpers shared by the reports: numbers without exponent surprises,
 * ISO-8601 times, and JSON values that degrade to null. Returned strings are caller-owned. */
#ifndef PGOLAB_FMT_H
#define PGOLAB_FMT_H

#include <jansson.h>

#include "util/strbuf.h"

/* x as "%.15g" (run times and seeds without an exponent for ordinary values). */
char *fmt_num(double x);
/* Append t (seconds since the epoch, UTC) as "YYYY-MM-DDTHH:MM:SSZ"; "unknown" for a t that
 * is not a time from 1970 to the year 9999 (negative, NaN, huge: a damaged stored value). */
void iso_time(struct strbuf *sb, double t);
/* A JSON number, or null when x is not finite (jansson refuses NAN and infinities). */
json_t *jreal(double x);
/* A JSON string, or null for NULL (or invalid UTF-8). */
json_t *jstr(const char *s);

#endif
