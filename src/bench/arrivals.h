/* arrivals: the open-loop event generator of `--rate` (sysbench's event queue). One thread
 * draws exponential inter-arrival gaps (a Poisson process of the given mean rate), and at each
 * arrival time puts the arrival's timestamp on a bounded FIFO; idle workers take the oldest.
 * The time an arrival waits in the queue belongs to its event's latency (the caller measures
 * from the timestamp). A full queue stops the generator and is reported (sysbench: exit 1).
 * The runner owns the struct; the generator thread only pushes, workers only pop. */
#ifndef PGOLAB_ARRIVALS_H
#define PGOLAB_ARRIVALS_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* sysbench's event queue size (slots) */
#define ARRIVALS_QUEUE_SLOTS 131072

struct arrivals {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    uint64_t *ring;
    size_t cap, head, len;     /* under mu */
    uint64_t taken;            /* arrivals popped so far: events started (under mu) */
    double rate;               /* arrivals per second */
    uint64_t rng;              /* splitmix64 state (generator thread only) */
    uint64_t start_ns, end_ns; /* arrivals in [start_ns, end_ns); end_ns 0 = no end */
    pthread_t tid;
    bool running;              /* the generator thread exists */
    int closed;                /* no more pushes, wake poppers (atomic) */
    int full;                  /* the queue overflowed (atomic) */
};

/* Start the generator: arrivals from start_ns (ns, now_ns() clock) at `rate` per second on
 * average, into a queue of cap slots, until end_ns (0 = until arrivals_close). 0, or -1 when
 * the thread cannot be created (errno). */
int arrivals_start(struct arrivals *a, double rate, size_t cap, uint64_t seed, uint64_t start_ns,
                   uint64_t end_ns);
/* Take the oldest arrival's timestamp into *t_ns, waiting for one. 0, or -1 once *stop is set
 * or the queue is stopped and empty (checked at least every 20 ms). */
int arrivals_pop(struct arrivals *a, uint64_t *t_ns, const volatile int *stop);
/* Arrivals waiting now. */
size_t arrivals_length(struct arrivals *a);
/* Arrivals taken by workers so far (events started): with the time since start_ns, the rate
 * actually achieved, which a full queue's message names beside the requested one. */
uint64_t arrivals_taken(struct arrivals *a);
/* Whether the queue overflowed (the generator has stopped). */
bool arrivals_overflowed(const struct arrivals *a);
/* Stop generating and wake every waiting worker (they return -1 once the queue is empty or
 * they see stop); joins the generator. Idempotent. */
void arrivals_stop(struct arrivals *a);
/* arrivals_stop, then free the queue: only once no worker can be in arrivals_pop. */
void arrivals_release(struct arrivals *a);

#endif
