/*
 * loggp.h - what the LogGP benchmarks (bench/loggp.c over shmam,
 * bench/mpi/loggp.c over MPI) share, so that both measure and print the same
 * things: the message sizes, the burst length n of Hoefler's PRTT(n, d, s),
 * the delays of the signature sweep, the quantiles printed, and the pooled
 * quantile with its spread over rounds.  Plain C and libc only.
 *
 * The method (bench/README.md, "loggp"): PRTT(n, d, s) is the time from
 * sending the first of n messages of s bytes, each after a wait of d after the
 * previous send, until the one reply to the last is back.  g(s) =
 * (PRTT(n, 0, s) - PRTT(1, 0, s)) / (n - 1); the PRTT(n, d, s) estimate of
 * o_s(s) = (PRTT(n, d, s) - PRTT(1, 0, s)) / (n - 1) - d with d = PRTT(1, 0, s).
 */
#ifndef SHMAM_BENCH_LOGGP_H
#define SHMAM_BENCH_LOGGP_H

#include <stddef.h>

#include "common/stat.h"

enum {
    LG_N = 8,           /* n of PRTT(n, 0, s) and PRTT(n, d, s) */
    LG_SIG_N = 32,      /* n of the signature sweep's bursts */
    LG_MAX_SIZES = 48,  /* sizes of one run at most */
    LG_ND = 6,          /* delays of the signature sweep */
    LG_NQ = 11,         /* quantiles printed */
    LG_MAX_ROUNDS = 51, /* measured rounds at most */
};

/* The signature sweep's waits between sends, ns. */
extern const long lg_delays[LG_ND];

/* The quantiles printed (the last is 1, the maximum) and their metric
 * suffixes: "p50", "p999" (99.9 %), "max". */
extern const double lg_q[LG_NQ];
extern const char *const lg_q_name[LG_NQ];

/* The sizes of a run into s[] (at most LG_MAX_SIZES), ascending, no repeats:
 * 0, every power of two from 1 to max, and each of the nlim configured
 * limits lim[] (the largest size of a protocol) and the size after it, where
 * they are at most max.  Their count. */
int lg_sizes(size_t max, const size_t *lim, int nlim, size_t *s);

/* Messages of s bytes a phase sends in a round of `per` operations: per up
 * to 8 KB, then fewer as s grows (per x 8192 / s), at least `least`. */
long lg_count(size_t s, long per, long least);

/* The q-quantile of rounds x m samples v[r * m + i] (every round's samples,
 * pooled), by nearest rank; its spread the lowest and highest of the rounds'
 * own q-quantiles, between which the pooled one always lies.  Sorts each
 * round's samples in place. */
struct bm_stat lg_quantile(double *v, int rounds, long m, double q);

#endif
