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
    time_t s = (time_t)t;
    struct tm tm;
    gmtime_r(&s, &tm);
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
