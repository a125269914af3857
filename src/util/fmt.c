/* fmt: formatting helpers shared by the reports (see fmt.h). */
#include "util/fmt.h"
#include "util/util.h"

#include <math.h>
#include <time.h>

char *fmt_num(double x)
{
    return xasprintf("%.15g", x);
}

void iso_time(struct strbuf *sb, double t)
{
    char buf[64];
    struct tm tm;
    /* 0 .. 9999-12-31T23:59:59Z: a time outside (a damaged results database: found by
     * tests/fuzz/fuzz_store.c) has no time_t or no 4-digit year; NaN is not a time */
    if (!(t >= 0 && t < 253402300800.0)) {
        strbuf_addstr(sb, "unknown");
        return;
    }
    time_t s = (time_t)t;
    if (!gmtime_r(&s, &tm)) {
        strbuf_addstr(sb, "unknown");
        return;
    }
    strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
    strbuf_addstr(sb, buf);
}

json_t *jreal(double x)
{
    return isfinite(x) ? json_real(x) : json_null();
}

json_t *jstr(const char *s)
{
    json_t *j = s ? json_string(s) : NULL;
    return j ? j : json_null();
}
