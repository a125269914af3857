/* knobs: the test-only environment knobs, in one table. A knob changes what pgolab measures
 * (slows a variant, injects faults, loads SQLite another way, adds compiler flags to one
 * build), so no result may be made under one without showing it: main() announces every set
 * knob on stderr once (knobs_announce; child pgolab processes, which inherit the knobs, stay
 * quiet: PGOLAB_TEST_KNOBS_ANNOUNCED), `bench --format=json` records them in the
 * run's JSON and an experiment in its environment (knobs_json, key "test_knobs").
 * Owns nothing: values are the process environment's. */
#ifndef PGOLAB_UTIL_KNOBS_H
#define PGOLAB_UTIL_KNOBS_H

#include <jansson.h>

struct test_knob {
    const char *name;   /* the environment variable, e.g. "PGOLAB_THROTTLE" */
    const char *what;   /* what it does, for the stderr line */
};

/* The knobs, NULL-terminated (name NULL). */
extern const struct test_knob test_knobs[];

/* One "WARNING: test knob NAME=VALUE is set (...)" line on stderr per set (non-empty) knob,
 * then PGOLAB_TEST_KNOBS_ANNOUNCED=1 in the environment; prints nothing when that is already
 * set (a child of a pgolab that announced) or on a second call. */
void knobs_announce(void);

/* A new JSON object {NAME: VALUE} of the set knobs, or NULL when none is set. */
json_t *knobs_json(void);

#endif
