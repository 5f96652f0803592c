/*
 * measure.h - small measuring helpers shared by every benchmark (shmam's and the
 * MPI baselines): clocks, the median, and whether this process is pinned.
 * Plain C and libc only, so the MPI programs can link it too.
 */
#ifndef SHMAM_BENCH_MEASURE_H
#define SHMAM_BENCH_MEASURE_H

/* The monotonic clock in seconds and in microseconds. */
double bm_now_s(void);
double bm_now_us(void);

/* qsort comparator for doubles, ascending. */
int bm_cmp_double(const void *a, const void *b);

/* Median of v[0..n-1], n > 0; sorts v in place, so v[0] and v[n-1] are then the
 * lowest and highest. */
double bm_median(double *v, long n);

/* The CPU this process is bound to, or -1 if it may run on several. */
int bm_pinned_cpu(void);

#endif
