/*
 * keys.h - SAMPLE's kernels that need no communication, shared by the shmam
 * version (apps/sample.c) and the MPICH version (apps/mpi/sample.c): the
 * options, the per-rank key generator, splitter choice from the gathered
 * samples, the bucket search, the local LSD radix sort, and the pieces of
 * verification (sortedness, order across ranks, a multiset hash).
 *
 * The keys depend only on the seed and the rank, so both versions sort the
 * same keys.  Nothing here communicates; out of memory ends the process with
 * exit status 1.
 */
#ifndef APPS_COMMON_KEYS_H
#define APPS_COMMON_KEYS_H

#include <stddef.h>
#include <stdint.h>

/* The command line of both versions. */
struct keys_options {
    size_t keys;         /* --keys N: keys per rank */
    uint64_t seed;       /* --seed S */
    unsigned oversample; /* --oversample K: samples per rank and per bucket */
    int corrupt;         /* hidden --corrupt: flip one key after sorting */
    int batched;         /* --batched: each rank's keys for a destination go
                          * together (long messages; MPI: always so) */
};

/* A multiset hash: count, and the sum and xor of a 64-bit mix of every key.
 * Two multisets with equal hashes are equal but with negligible probability. */
struct keys_hash {
    uint64_t count, sum, xor;
};

/* Parses argv into o, defaults filled in.  Returns 0, or -1 on a bad command
 * line (the caller prints its usage). */
int keys_parse(int argc, char **argv, struct keys_options *o);

/* The state of rank's generator for the seed. */
uint64_t keys_rng(uint64_t seed, int rank);

/* The next 64-bit value of the generator (splitmix64). */
uint64_t keys_next(uint64_t *state);

/* keys[0..n): n keys, the high halves of the generator's next values. */
void keys_generate(uint32_t *keys, size_t n, uint64_t *state);

/* out[0..count): random picks (with repeats) among keys[0..n), from the
 * generator. */
void keys_pick(const uint32_t *keys, size_t n, uint64_t *state, uint32_t *out,
               size_t count);

/* Sorts the p*per gathered samples in place and writes the p-1 splitters,
 * every per-th sample, to split[0..p-1). */
void keys_splitters(uint32_t *samples, size_t per, unsigned p, uint32_t *split);

/* Which rank's bucket holds key: the number of splitters <= key. */
unsigned keys_owner(uint32_t key, const uint32_t *split, unsigned nsplit);

/* LSD radix sort of a[0..n), 8 bits per pass, using tmp[0..n); the result is
 * in a. */
void keys_radix_sort(uint32_t *a, uint32_t *tmp, size_t n);

/* The hash of k[0..n). */
struct keys_hash keys_hash(const uint32_t *k, size_t n);

/* 1 if a[0..n) is sorted. */
int keys_sorted(const uint32_t *a, size_t n);

/* A sorted part's count, minimum and maximum (0, 0 when empty), into info. */
void keys_summary(const uint32_t *a, size_t n, uint64_t info[3]);

/* Given every rank's keys_summary, info[3*r..3*r+3) for r < p: 1 if the
 * non-empty parts are ordered across ranks, else 0 after saying where they are
 * not on stderr, prefixed "prog: ". */
int keys_check_order(const uint64_t *info, int p, const char *prog);

/* Given the totals over ranks of the count and of the differences (after -
 * before) of the sums and the xors: 1 if count == want and the hash did not
 * change, else 0, and when loud, says so on stderr, prefixed "prog: ". */
int keys_check_total(uint64_t count, uint64_t want, uint64_t dsum, uint64_t dxor, int loud,
                     const char *prog);

#endif
