/* session: start/stop of one profiled process and its JSON (see session.h). */
#include "profile/session.h"
#include "util/util.h"

#include <stdlib.h>
#include <string.h>

void profile_session_start(struct profile_session *ps, pid_t target, const char *raw_path,
                           int freq, bool quiet)
{
    memset(ps, 0, sizeof(*ps));
    ps->raw_path = xstrdup(raw_path);
    ps->freq = freq;
    int rc = profile_sampler_start(&ps->s, target, raw_path, freq);
    if (rc == 0) {
        ps->running = true;
        ps->event = xstrdup(ps->s.event);
        ps->kernel = ps->s.kernel;
        ps->note = ps->s.note ? xstrdup(ps->s.note) : NULL;
        return;
    }
    ps->refused = xstrdup(rc == 1 && ps->s.note ? ps->s.note : "the profiler did not start");
    if (!quiet)
        warning("%s", ps->refused);
    profile_sampler_release(&ps->s);
}

void profile_session_stop(struct profile_session *ps)
{
    if (!ps->running)
        return;
    ps->running = false;
    ps->written = profile_sampler_stop(&ps->s) == 0;
    ps->sampler_cpu_s = ps->s.cpu_s;
}

json_t *profile_session_json(const struct profile_session *ps)
{
    if (ps->refused)
        return json_pack("{s:s}", "refused", ps->refused);
    if (!ps->written)
        return json_pack("{s:s}", "error", "the profiler failed: no profile");
    json_t *j = json_pack("{s:s, s:i, s:b, s:s}", "event", ps->event, "frequency", ps->freq,
                          "kernel", ps->kernel, "raw", ps->raw_path);
    if (ps->note)
        json_object_set_new(j, "note", json_string(ps->note));
    json_object_set_new(j, "sampler_cpu_s", json_real(ps->sampler_cpu_s));
    return j;
}

void profile_session_release(struct profile_session *ps)
{
    if (ps->running)
        profile_session_stop(ps);
    free(ps->raw_path);
    free(ps->event);
    free(ps->note);
    free(ps->refused);
    memset(ps, 0, sizeof(*ps));
}
