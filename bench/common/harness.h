/*
 * harness.h - what every benchmark does the same way, written once: how it
 * fails, its clock and what a read of it costs, its time limit, and the flags
 * every one takes.  Plain C and libc only, so the MPI programs link it too;
 * the shmam side (errors of the runtime, the spin policy, waits) is in
 * am_harness.h.
 */
#ifndef SHMAM_BENCH_HARNESS_H
#define SHMAM_BENCH_HARNESS_H

#include <stdint.h>
#include <time.h>

/* A program's usage line(s): bm_program answers --help with them (stdout,
 * exit 0), before a job starts; bm_bad_line is a bad command line (them on
 * stderr, exit 2), a callback for bm_opt_long and the like. */
void bm_program(const char *prog, const char *usage, int argc, char **argv);
__attribute__((noreturn)) void bm_bad_line(void);

/* Names this program in every failure: "PROG: rank R: FAILED: ..." (no rank
 * part while rank < 0). */
void bm_setup(const char *prog, int rank);
void bm_set_rank(int rank);

/* hook, if not NULL, runs before a failure's exit: an MPI program's
 * MPI_Abort, so that the whole job goes down. */
void bm_on_fail(void (*hook)(void));

/* Says what failed on stderr and exits 1 (after on_fail). */
__attribute__((format(printf, 1, 2), noreturn)) void bm_fail(const char *fmt, ...);

/* Fails with "PROG: FAILED: timed out (a message lost?)" if the program is
 * still running after `seconds` (0: never): a lost message must not hang a
 * report.  Async-signal-safe: the message is made before. */
void bm_timeout(unsigned seconds);

/* CLOCK_MONOTONIC in nanoseconds; inline, so that what a read costs is
 * the read (timed loops call it between operations). */
static inline int64_t bm_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* What one bm_now_ns costs, in ns: the median of 1001 back-to-back pairs. */
double bm_clock_cost_ns(void);

/* Is arg one of the flags every benchmark takes?  "--header" sets *header,
 * "--verbose" *verbose (a program without --verbose passes NULL).  1 if it
 * was one, else 0. */
int bm_common_flag(const char *arg, int *header, int *verbose);

#endif
