/*
 * heapmix.h - the workload of heapbench, in one place for both programs that
 * run it: bench/heapbench.c (shmam's heap) and bench/heap_boost.cpp
 * (Boost.Interprocess), so the two see the same sizes in the same order.
 * Plain C that is also C++; header-only (static inline).
 *
 * Each process p draws from its own xorshift64 stream seeded with
 * hm_seed(seed, p).  A length is log-uniform over 64 B .. 16 KB: a power of two
 * 64 << k (k = 0..7, uniform) plus a uniform part below it.  With a shift of
 * S operations (heapbench --shift S; 0, the default, is the mix above), k is
 * the phase op / S or the one after it (mod 8), so the sizes in use move on
 * through all eight, as a program's phases do.  Each process
 * first fills a window of W blocks, then does N operations, each: pick a
 * window slot at random, check and free its block, allocate a new one of a
 * fresh length, write its tag into its first 8 bytes.
 */
#ifndef SHMAM_BENCH_HEAPMIX_H
#define SHMAM_BENCH_HEAPMIX_H

#include <stddef.h>
#include <stdint.h>

#define HM_MIN_LEN 64
#define HM_MAX_LEN 16384 /* exclusive */
#define HM_MAX_PROCS 64
#define HM_MAX_WINDOW 4096

static inline uint64_t hm_seed(uint64_t seed, unsigned proc)
{
    return (seed ^ 0x9e3779b97f4a7c15ull * (proc + 1)) | 1;
}

static inline uint64_t hm_next(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

/* A length of the mix. */
static inline size_t hm_len(uint64_t *x)
{
    uint64_t r = hm_next(x);
    size_t base = (size_t)HM_MIN_LEN << (r % 8);
    return base + (size_t)(r >> 8) % base;
}

/* A length of the mix for operation op (the fill's first: 0) when the mix
 * moves on every `shift` operations (0: never, hm_len). */
static inline size_t hm_len_at(uint64_t *x, uint64_t op, uint64_t shift)
{
    if (shift == 0)
        return hm_len(x);
    uint64_t r = hm_next(x);
    size_t base = (size_t)HM_MIN_LEN << ((op / shift + r % 2) % 8);
    return base + (size_t)(r >> 8) % base;
}

/* The window slot the next operation replaces. */
static inline unsigned hm_slot(uint64_t *x, unsigned window)
{
    return (unsigned)(hm_next(x) >> 11) % window;
}

/* The tag written into a block: the process and the operation. */
static inline uint64_t hm_tag(unsigned proc, uint64_t op)
{
    return (uint64_t)(proc + 1) << 48 | op;
}

#endif
