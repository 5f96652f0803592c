/*
 * stats.h - the preload library's per-lock statistics (SHMAM_LOCK_STATS=1):
 * acquisitions, contended ones (the first attempt found the lock taken),
 * and histograms of the wait (call to acquisition) and hold (acquisition to
 * unlock) times, printed on stderr at exit, busiest lock first.
 *
 * Only the lock's holder writes a lock's record (right after acquiring and
 * right before releasing), so the counts need no atomics; the report at exit
 * reads them while other threads may still run (a snapshot).  Histograms
 * have 4 buckets per power of two of nanoseconds, so a percentile is exact
 * to within 19%: the report gives each bucket's upper bound.
 */
#ifndef SHMAM_PRELOAD_STATS_H
#define SHMAM_PRELOAD_STATS_H

#define PM_BUCKETS 256

struct pm_stats {
    const void *mutex;     /* the program's, for the report */
    int kept;              /* glibc's own (the report says so) */
    struct pm_stats *next; /* every record, newest first */
    unsigned long long acq, contended;
    unsigned long long wait[PM_BUCKETS], hold[PM_BUCKETS];
};

unsigned long long pm_now_ns(void);
/* Once, before any record: names the lock and policy and reports at exit. */
void pm_stats_start(const char *lock, const char *wait);
/* A new record, for mutex m (under the library's table lock). */
void pm_stats_register(struct pm_stats *s, const void *m);
/* By the new holder: an acquisition whose wait began at t0; *since = now. */
void pm_stats_acquired(struct pm_stats *s, unsigned long long *since, unsigned long long t0,
                       int contended);
/* By the holder about to release: a hold that began at since. */
void pm_stats_released(struct pm_stats *s, unsigned long long since);

#endif
