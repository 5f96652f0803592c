/*
 * stat.h - the one estimator every benchmark reports, and the row it prints.
 *
 * A benchmark measures in rounds.  Each round's figure is the MEAN over the
 * whole round (its total time over its operations), after an unmeasured
 * warm-up round; kinds compared with each other (algorithms, AM and raw) are
 * measured in every round, interleaved ABBA (bm_abba).  The row's value is the
 * MEDIAN over the rounds, its spread the lowest and the highest round: a round
 * hit by a preemption shows in the spread, not in the value, as long as fewer
 * than half are hit.  Two figures whose spreads overlap are "within noise".
 * Plain C and libc only: the MPI programs link it too.
 */
#ifndef SHMAM_BENCH_STAT_H
#define SHMAM_BENCH_STAT_H

#include <stdio.h>

struct bm_stat {
    double median, lo, hi;
    int n; /* rounds it stands on; 0: none (print nothing) */
};

/* The median, lowest and highest of v[0..n-1]; v is not changed. */
struct bm_stat bm_stat_of(const double *v, int n);

/* The per-round quotients a[i] / b[i] summarised (an in-run ratio). */
struct bm_stat bm_stat_ratio(const double *a, const double *b, int n);

/* The index of the k-th kind of n in round r: rounds alternate between the
 * forward and the reverse order (ABBA), so no kind always runs first. */
int bm_abba(int r, int k, int n);

/* Where a row goes and what every row of one program shares. */
struct bm_row {
    FILE *out;
    const char *bench, *shm; /* shm: "posix", "sysv" or "-" */
    int procs, pinned;
};

/* Prints "bench,impl,shm,procs,pinned,iters,metric,value,unit,LOW-HIGH" with
 * prec decimals (nothing if s.n == 0). */
void bm_print(const struct bm_row *r, const char *impl, long iters, const char *metric,
              struct bm_stat s, const char *unit, int prec);

/* The schema's header line. */
void bm_print_header(FILE *out);

#endif
