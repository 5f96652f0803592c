/*
 * place.h - where a benchmark process runs, and a monotonic clock: header-only,
 * so that the C++ baselines (heap_boost, spsc_boost) share them with the C
 * programs instead of keeping copies.
 */
#ifndef BENCH_PLACE_H
#define BENCH_PLACE_H

#include <sched.h>
#include <time.h>

/* Pins the calling process to the (i % n)-th of the n CPUs it may use now;
 * 0, or -1 (errno set) with the process left as it was. */
static inline int bm_pin_nth(unsigned i)
{
    cpu_set_t allowed, one;
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0)
        return -1;
    int want = (int)(i % (unsigned)CPU_COUNT(&allowed));
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &allowed) && want-- == 0) {
            CPU_ZERO(&one);
            CPU_SET(c, &one);
            return sched_setaffinity(0, sizeof one, &one);
        }
    return -1;
}

/* CLOCK_MONOTONIC in seconds. */
static inline double bm_mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#endif
