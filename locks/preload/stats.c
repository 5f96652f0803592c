/*
 * stats.c - the preload library's statistics (stats.h has the contract).
 */
#include <atomic_ops.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "stats.h"

#define TOP 20 /* locks reported one by one; the rest are summed */

static struct pm_stats *volatile all;
static const char *lock_name, *wait_name;
static int out = 2; /* stderr as it was at the start: programs close theirs */

unsigned long long pm_now_ns(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (unsigned long long)t.tv_sec * 1000000000ull + (unsigned long long)t.tv_nsec;
}

/* The bucket of v ns: 4 per power of two (v < 4: v itself). */
static unsigned bucket_of(unsigned long long v)
{
    if (v < 4)
        return (unsigned)v;
    unsigned msb = 63u - (unsigned)__builtin_clzll(v);
    return 4 * (msb - 1) + (unsigned)((v >> (msb - 2)) & 3);
}

/* The largest value of bucket b. */
static unsigned long long bucket_top(unsigned b)
{
    if (b < 4)
        return b;
    unsigned msb = b / 4 + 1, sub = b % 4;
    return ((4ull + sub + 1) << (msb - 2)) - 1;
}

static unsigned long long percentile(const unsigned long long *h, double p)
{
    unsigned long long n = 0, seen = 0;

    for (unsigned b = 0; b < PM_BUCKETS; b++)
        n += h[b];
    for (unsigned b = 0; b < PM_BUCKETS; b++)
        if ((seen += h[b]) > 0 && (double)seen >= p * (double)n)
            return bucket_top(b);
    return 0;
}

void pm_stats_register(struct pm_stats *s, const void *m)
{
    s->mutex = m;
    s->next = all;
    all = s;
}

void pm_stats_acquired(struct pm_stats *s, unsigned long long *since, unsigned long long t0,
                       int contended)
{
    unsigned long long now = pm_now_ns();

    s->acq++;
    s->contended += contended != 0;
    s->wait[bucket_of(now - t0)]++;
    *since = now;
}

void pm_stats_released(struct pm_stats *s, unsigned long long since)
{
    s->hold[bucket_of(pm_now_ns() - since)]++;
}

static void line(const char *who, const struct pm_stats *s)
{
    dprintf(out,
            "shmam-locks: lock %s wait %s mutex %s: acquisitions %llu contended %llu "
            "(%.1f%%) wait_ns p50 %llu p99 %llu p99.9 %llu hold_ns p50 %llu p99 %llu "
            "p99.9 %llu\n",
            lock_name, wait_name, who, s->acq, s->contended,
            s->acq ? 100.0 * (double)s->contended / (double)s->acq : 0.0,
            percentile(s->wait, .5), percentile(s->wait, .99), percentile(s->wait, .999),
            percentile(s->hold, .5), percentile(s->hold, .99), percentile(s->hold, .999));
}

static void report(void)
{
    static struct pm_stats rest;
    struct pm_stats *top[TOP] = {0};
    unsigned locks = 0;
    char who[32];

    for (struct pm_stats *s = all; s; s = s->next) {
        if (!s->acq)
            continue;
        locks++;
        struct pm_stats *o = s;
        for (unsigned i = 0; i < TOP && o; i++)
            if (!top[i] || top[i]->acq < o->acq) {
                struct pm_stats *t = top[i];
                top[i] = o;
                o = t;
            }
        if (o) {
            rest.acq += o->acq;
            rest.contended += o->contended;
            for (unsigned b = 0; b < PM_BUCKETS; b++) {
                rest.wait[b] += o->wait[b];
                rest.hold[b] += o->hold[b];
            }
        }
    }
    dprintf(out, "shmam-locks: lock %s wait %s: %u mutexes used\n", lock_name, wait_name,
            locks);
    for (unsigned i = 0; i < TOP && top[i]; i++) {
        snprintf(who, sizeof who, "%p%s", top[i]->mutex, top[i]->kept ? " (glibc's)" : "");
        line(who, top[i]);
    }
    if (rest.acq)
        line("(the others)", &rest);
}

void pm_stats_start(const char *lock, const char *wait)
{
    int fd = fcntl(2, F_DUPFD_CLOEXEC, 3);

    lock_name = lock;
    wait_name = wait;
    if (fd >= 0)
        out = fd;
    atexit(report);
}
