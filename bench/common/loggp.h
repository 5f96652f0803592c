/*
 * loggp.h - what the LogGP benchmarks (bench/loggp.c over shmam,
 * bench/mpi/loggp.c over MPI) share, so that both measure and print the same
 * things: the message sizes, the burst length n of Hoefler's PRTT(n, d, s),
 * the delays of the signature sweep, the quantiles printed, and the pooled
 * quantile with its spread over rounds.  Plain C and libc only.
 *
 * The method (bench/README.md, "loggp"): PRTT(n, d, s) is the time from
 * sending the first of n messages of s bytes, each after a wait of d after the
 * previous send, until the one reply to the last is back; the reply has s
 * bytes, as netgauge's (a 0-byte reply is a labelled variant).  g(s) =
 * (PRTT(n, 0, s) - PRTT(1, 0, s)) / (n - 1); netgauge's estimate of o_s(s) =
 * (PRTT(n, d, s) - PRTT(1, 0, s)) / (n - 1) - d with d = PRTT(1, 0, s).  o_r
 * by netgauge's wait-then-receive: the receiver waits (no library call) and
 * then times the receive of a message already there.  Robust to preemption:
 * each round's PRTT is the median over its bursts, each timed send or receive
 * the median over its messages, and a round more than LG_OFF_FACTOR off the
 * median of the rounds is left out (lg_mark_off) and said.
 */
#ifndef SHMAM_BENCH_LOGGP_H
#define SHMAM_BENCH_LOGGP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/stat.h"

enum {
    LG_N = 8,           /* n of PRTT(n, 0, s) and PRTT(n, d, s) */
    LG_SIG_N = 32,      /* n of the signature sweep's bursts */
    LG_MAX_SIZES = 48,  /* sizes of one run at most */
    LG_ND = 6,          /* delays of the signature sweep */
    LG_NQ = 11,         /* quantiles printed */
    LG_MAX_ROUNDS = 51, /* measured rounds at most */
    LG_WAIT_EXTRA = 8,  /* the receiver's slack after the sender's schedule (lg_recv_at) */
};

/* A round whose PRTT is more than this factor above or below the median of
 * the rounds is left out of the row (lg_mark_off). */
#define LG_OFF_FACTOR 2.0

/* The signature sweep's waits between sends, ns. */
extern const long lg_delays[LG_ND];

/* The quantiles printed (the last is 1, the maximum) and their metric
 * suffixes: "p50", "p999" (99.9 %), "max". */
extern const double lg_q[LG_NQ];
extern const char *const lg_q_name[LG_NQ];

/* The figures per size and round, us, in the order of lg_fig_name (the
 * rows' metric prefixes, "rtt" for "rtt_64"): PRTT(1, 0, s), the same with a
 * 0-byte reply, PRTT(n, 0, s), PRTT(n, d, s) (the four that lg_drop_rounds
 * judges), g, o_s (timed sends, the receiver waiting), netgauge's o_s from
 * the PRTTs, o_r (wait-then-receive), o_r by timed polls (second method). */
enum { LG_RTT, LG_RTT0, LG_PN, LG_PD, LG_G, LG_OS, LG_OSP, LG_OR, LG_ORP, LG_NFIG };
enum { LG_NPRTT = 4 };
extern const char *const lg_fig_name[LG_NFIG];

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

/* When the receiver of PRTT(n, d, s)'s o_r phase, which waits without a
 * library call before each message but the first, may receive message k
 * (0-based) of a burst whose first it ran at t1 (ns): by the sender's
 * schedule, period p = PRTT(n, d, s) - PRTT(1, 0, s) over n - 1 (= d + o_s,
 * netgauge's), plus a slack of p / LG_WAIT_EXTRA: so message k is there, and
 * k + 1 not yet (the receiver's schedule does not drift from the sender's,
 * as a fixed wait d after each receive does when o_r < o_s). */
int64_t lg_recv_at(int64_t t1, int k, long p);

/* Rounds' figures v[k * stride], k < n (NaN: none): clears keep[k] for each
 * round more than LG_OFF_FACTOR above or below the median of the rounds (only
 * for a positive median).  Returns how many it cleared. */
int lg_mark_off(const double *v, int n, size_t stride, unsigned char *keep);

/* Rounds' figures f[k * stride + j] (k < rounds, j < LG_NFIG) of one size:
 * clears keep[k] (set by the caller) of every round one of whose PRTTs is
 * LG_OFF_FACTOR off (lg_mark_off), and says so in a comment line on out
 * naming impl and size; none if that would leave half the rounds or fewer.
 * Returns how many rounds it cleared. */
int lg_drop_rounds(FILE *out, const char *impl, size_t size, const double *f, int rounds,
                   size_t stride, unsigned char *keep);

/* The median and spread over the kept rounds of f[k * stride] that are not
 * NaN (bm_stat_of); no row (n = 0) if none is. */
struct bm_stat lg_of_rounds(const double *f, int rounds, size_t stride,
                            const unsigned char *keep);

/* The median of v[0..n-1] (sorted in place), NaN if n is 0. */
double lg_median(double *v, long n);

#endif
