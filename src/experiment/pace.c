/* pace: when a plain progress line is due off a terminal (see pace.h). */
#include "experiment/pace.h"
#include "util/util.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>

double pace_interval(void)
{
    const char *e = getenv(PACE_KNOB); /* a test knob (util/knobs.c) */
    double s;
    if (e && *e && parse_double(e, &s) == 0 && s >= 0)
        return s;
    return PACE_INTERVAL_DEFAULT_S;
}

void pace_begin(struct pace *p, double now, double interval_s)
{
    assert(interval_s >= 0);
    p->interval_s = interval_s;
    p->last_s = now;
    p->round_s = now;
}

void pace_round(struct pace *p, double now)
{
    p->round_s = now;
}

bool pace_due(const struct pace *p, double now, bool round_end)
{
    assert(p->interval_s >= 0);
    bool quiet_long = now - p->last_s >= p->interval_s;
    if (round_end)
        return quiet_long;
    /* within a round: only a long one (its end is the line of a short one) */
    return quiet_long && now - p->round_s >= p->interval_s && p->interval_s > 0;
}

void pace_printed(struct pace *p, double now)
{
    p->last_s = now;
}

void pace_add_duration(struct strbuf *sb, double s)
{
    long t = s > 0 ? (long)(s + 0.5) : 0; /* NAN > 0 is false */
    if (t >= 3600)
        strbuf_addf(sb, "%ldh%02ldm", t / 3600, t / 60 % 60);
    else if (t >= 60)
        strbuf_addf(sb, "%ldm%02lds", t / 60, t % 60);
    else
        strbuf_addf(sb, "%lds", t);
}
