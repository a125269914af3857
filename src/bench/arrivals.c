/* arrivals: --rate's Poisson event generator and bounded arrival queue (see arrivals.h). */
#include "bench/arrivals.h"
#include "util/util.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* splitmix64 (Steele, Lea, Flood 2014): a uniform double in (0, 1]. */
static double uniform01(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return ((double)(z >> 11) + 1.0) / 9007199254740992.0;  /* (k+1) / 2^53 */
}

/* Exponential gap of mean 1/rate s, in ns (inverse transform of a uniform in (0, 1]). */
static uint64_t next_gap(struct arrivals *a)
{
    double g = -log(uniform01(&a->rng)) * 1e9 / a->rate;
    return g < 1 ? 1 : (uint64_t)g;
}

static void nap(uint64_t ns)
{
    struct timespec ts = { (time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull) };
    nanosleep(&ts, NULL);
}

/* Generator: push every arrival that is due (a batch at high rates, where one sleep per
 * arrival is impossible), then sleep until the next one, at most 10 ms (to notice close). */
static void *generate(void *arg)
{
    struct arrivals *a = arg;
    uint64_t next = a->start_ns + next_gap(a);
    while (!__atomic_load_n(&a->closed, __ATOMIC_ACQUIRE)) {
        uint64_t now = now_ns();
        if (next <= now) {
            pthread_mutex_lock(&a->mu);
            for (; next <= now && (!a->end_ns || next < a->end_ns); next += next_gap(a)) {
                if (a->len == a->cap) {
                    __atomic_store_n(&a->full, 1, __ATOMIC_RELEASE);
                    break;
                }
                a->ring[(a->head + a->len++) % a->cap] = next;
            }
            pthread_cond_broadcast(&a->cv);
            pthread_mutex_unlock(&a->mu);
            if (__atomic_load_n(&a->full, __ATOMIC_ACQUIRE) || (a->end_ns && next >= a->end_ns))
                break;
            continue;
        }
        uint64_t d = next - now;
        nap(d < 10000000ull ? d : 10000000ull);
    }
    return NULL;
}

int arrivals_start(struct arrivals *a, double rate, size_t cap, uint64_t seed, uint64_t start_ns,
                   uint64_t end_ns)
{
    memset(a, 0, sizeof(*a));
    pthread_mutex_init(&a->mu, NULL);
    pthread_cond_init(&a->cv, NULL);
    a->ring = xcalloc(cap, sizeof(*a->ring));
    a->cap = cap;
    a->rate = rate;
    a->rng = seed;
    a->start_ns = start_ns;
    a->end_ns = end_ns;
    int e = pthread_create(&a->tid, NULL, generate, a);
    if (e) {
        errno = e;
        return -1;
    }
    a->running = true;
    return 0;
}

int arrivals_pop(struct arrivals *a, uint64_t *t_ns, const volatile int *stop)
{
    pthread_mutex_lock(&a->mu);
    while (!a->len) {
        if (__atomic_load_n(stop, __ATOMIC_RELAXED) ||
            __atomic_load_n(&a->closed, __ATOMIC_ACQUIRE)) {
            pthread_mutex_unlock(&a->mu);
            return -1;
        }
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 20000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&a->cv, &a->mu, &ts);
    }
    if (__atomic_load_n(stop, __ATOMIC_RELAXED)) {
        pthread_mutex_unlock(&a->mu);
        return -1;
    }
    *t_ns = a->ring[a->head];
    a->head = (a->head + 1) % a->cap;
    a->len--;
    a->taken++;
    pthread_mutex_unlock(&a->mu);
    return 0;
}

size_t arrivals_length(struct arrivals *a)
{
    pthread_mutex_lock(&a->mu);
    size_t n = a->len;
    pthread_mutex_unlock(&a->mu);
    return n;
}

uint64_t arrivals_taken(struct arrivals *a)
{
    pthread_mutex_lock(&a->mu);
    uint64_t n = a->taken;
    pthread_mutex_unlock(&a->mu);
    return n;
}

bool arrivals_overflowed(const struct arrivals *a)
{
    return __atomic_load_n(&a->full, __ATOMIC_ACQUIRE) != 0;
}

void arrivals_stop(struct arrivals *a)
{
    __atomic_store_n(&a->closed, 1, __ATOMIC_RELEASE);
    pthread_mutex_lock(&a->mu);
    pthread_cond_broadcast(&a->cv);
    pthread_mutex_unlock(&a->mu);
    if (a->running)
        pthread_join(a->tid, NULL);
    a->running = false;
}

void arrivals_release(struct arrivals *a)
{
    arrivals_stop(a);
    free(a->ring);
    a->ring = NULL;
    pthread_mutex_destroy(&a->mu);
    pthread_cond_destroy(&a->cv);
}
