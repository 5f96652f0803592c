/*
 * measure.h - small helpers shared by every benchmark (shmam's and the MPI
 * baselines): clocks, the median, whether this process is pinned, and whether
 * the command line asks for help.  Plain C and libc only, so the MPI programs
 * can link it too.
 */
#ifndef SHMAM_BENCH_MEASURE_H
#define SHMAM_BENCH_MEASURE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The monotonic clock in seconds and in microseconds. */
double bm_now_s(void);
double bm_now_us(void);

/* qsort comparator for doubles, ascending. */
int bm_cmp_double(const void *a, const void *b);

/* Median of v[0..n-1], n > 0; sorts v in place, so v[0] and v[n-1] are then the
 * lowest and highest. */
double bm_median(double *v, long n);

/* A message's sequence number s, in its first and last 4 bytes (n >= 8);
 * bm_stamped: are both there (0 if n < 8)? */
void bm_stamp(char *p, size_t n, uint32_t s);
int bm_stamped(const char *p, size_t n, uint32_t s);

/* The CPU this process is bound to, or -1 if it may run on several. */
int bm_pinned_cpu(void);

/* Is --help or -h among argv[1 .. argc-1]?  Every benchmark asks first thing in
 * main, before am_init or MPI_Init (which start or join a job), and then prints
 * its usage on stdout and exits 0. */
int bm_asks_help(int argc, char **argv);

/* Command-line numbers.  arg_long: s as a whole number of at least min into
 * *v; 0, or -1 if s is NULL, not a number or too small.  sizes: s as a
 * comma-separated list of message sizes, strictly ascending, each 8 B to
 * 1 GiB, at most max of them, into sizes[]; their count, or -1. */
int bm_arg_long(const char *s, long min, long *v);
int bm_parse_sizes(const char *s, size_t *sizes, int max);

/* The same for an option's value: on a bad one, bad() (which exits: a
 * program's usage on stderr, status 2). */
long bm_opt_long(const char *s, long min, void (*bad)(void));
long bm_opt_range(const char *s, long lo, long hi, void (*bad)(void));
int bm_opt_sizes(const char *s, size_t *sizes, int max, void (*bad)(void));

/* s as a comma-separated list of whole numbers lo..hi, at most max of them,
 * into v[]; their count, or -1 (also for an empty list). */
int bm_parse_counts(const char *s, unsigned *v, int max, unsigned lo, unsigned hi);

/* Waits for the n children in pid[], killing those still running stuck_s
 * seconds from now; how many failed (killed, or an exit other than 0). */
int bm_reap(const pid_t *pid, unsigned n, double stuck_s);

/* The path of program `name` in the directory of this program's own binary,
 * if it is an executable file there (a benchmark's baseline built beside it),
 * else NULL.  The string is static: the next call overwrites it. */
const char *bm_program_beside(const char *name);

/* Is argv[*i] a baseline's flag: "--boost PATH" (*path = PATH, *i moves on
 * past it) or "--no-boost" (*path = NULL)?  1 if it was one, else 0. */
int bm_baseline_flag(int argc, char **argv, int *i, const char **path);

#endif
