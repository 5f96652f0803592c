/*
 * splitc_selftest.c - exercises every function of the Split-C layer and checks
 * every value; prints "splitc_selftest: P ranks, ALG: verified" at rank 0 and
 * exits 0, or names the first wrong value and exits 1.
 *
 *   shmamrun -n P [-a ALG] build/apps/splitc_selftest [--bad-gptr]
 *
 * --bad-gptr makes the last rank put past the end of rank 0's part, which must
 * abort the job with a message (the test suite checks that it does).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cmdline.h"
#include "splitc/splitc.h"

#define WORDS 64 /* words per rank in the word regions */
#define BULK_TAIL                                                                          \
    20011           /* bytes per rank's slot in the bulk region: 3 chunks, the             \
                     * last of these (bulk_len) */
#define STORES 3000 /* one-word stores each rank sends */
#define BCAST (3 * 8192 + 17)
#define H_RING 1 /* an application handler */

static int failures;
static volatile int ring_seen;

#define EXPECT(cond, ...)                                                                  \
    do {                                                                                   \
        if (!(cond) && failures++ < 10) {                                                  \
            fprintf(stderr, "splitc_selftest: rank %d: %s:%d: ", sc_rank(), __FILE__,      \
                    __LINE__);                                                             \
            fprintf(stderr, __VA_ARGS__);                                                  \
            fputc('\n', stderr);                                                           \
        }                                                                                  \
    } while (0)

static uint32_t word(int from, int to, int i)
{
    return (uint32_t)(from * 1000003u + to * 10007u + i * 31u + 7u);
}

static uint64_t word64(int from, int to, int i)
{
    return (uint64_t)word(from, to, i) << 32 | word(to, from, i + 1);
}

static unsigned char byte(int from, size_t i)
{
    return (unsigned char)(from * 131 + i * 7 + i / 251);
}

static void h_ring(am_token_t *t, const uint32_t *args, int nargs, void *d, size_t len)
{
    ring_seen =
        nargs == 1 && args[0] == word((int)am_token_source(t), sc_rank(), 0) ? 1 : -1;
}

/* Region basics and unaligned puts/gets of both widths to and from every rank. */
static void test_words(void)
{
    int me = sc_rank(), p = sc_nprocs();
    uint32_t *w32;
    uint64_t *w64;
    unsigned r32 = sc_region_alloc((size_t)p * 4 * WORDS, (void **)&w32);
    unsigned r64 = sc_region_alloc((size_t)p * 8 * WORDS + 1, (void **)&w64);
    EXPECT(r64 == r32 + 1, "region ids %u then %u", r32, r64);
    EXPECT(sc_region_base(r32) == w32 && sc_region_size(r64) == (size_t)p * 8 * WORDS + 1,
           "region base or size");
    EXPECT(((uintptr_t)w32 & 63) == 0 && w32[0] == 0 && w32[p * WORDS - 1] == 0,
           "region not aligned or not zeroed");
    sc_barrier(); /* before anyone writes into our parts */
    for (int to = 0; to < p; to++)
        for (int i = 0; i < WORDS; i++) {
            size_t k = (size_t)me * WORDS + (size_t)i;
            sc_put32(sc_gptr((unsigned)to, r32, k * 4), word(me, to, i));
            sc_put64(sc_gptr((unsigned)to, r64, k * 8 + 1),
                     word64(me, to, i)); /* unaligned */
        }
    sc_sync();
    sc_barrier();
    for (int from = 0; from < p; from++)
        for (int i = 0; i < WORDS; i++) {
            size_t k = (size_t)from * WORDS + (size_t)i;
            uint64_t v;
            memcpy(&v, (char *)w64 + k * 8 + 1, 8);
            EXPECT(w32[k] == word(from, me, i), "put32 from %d word %d: %u", from, i,
                   w32[k]);
            EXPECT(v == word64(from, me, i), "put64 from %d word %d", from, i);
        }
    uint32_t *g32 = calloc((size_t)p * WORDS, 4);
    uint64_t *g64 = calloc((size_t)p * WORDS, 8);
    for (int from = 0; from < p; from++)
        for (int i = 0; i < WORDS; i++) {
            size_t k = (size_t)me * WORDS + (size_t)i, j = (size_t)from * WORDS + (size_t)i;
            sc_get32(&g32[j], sc_gptr((unsigned)from, r32, k * 4));
            sc_get64(&g64[j], sc_gptr((unsigned)from, r64, k * 8 + 1));
        }
    sc_sync();
    for (int from = 0; from < p; from++)
        for (int i = 0; i < WORDS; i++) {
            size_t j = (size_t)from * WORDS + (size_t)i;
            EXPECT(g32[j] == word(me, from, i), "get32 from %d word %d", from, i);
            EXPECT(g64[j] == word64(me, from, i), "get64 from %d word %d", from, i);
        }
    free(g32);
    free(g64);
    sc_barrier();
}

/* Many stores of both widths, to rank-dependent targets, then a store sync. */
static void test_stores(void)
{
    int me = sc_rank(), p = sc_nprocs();
    uint64_t *slots;
    unsigned r = sc_region_alloc((size_t)p * STORES * 8, (void **)&slots);
    for (int i = 0; i < STORES; i++) {
        int to = (me + i) % p;
        size_t k = (size_t)me * STORES + (size_t)i;
        if (i & 1)
            sc_store64(sc_gptr((unsigned)to, r, k * 8), word64(me, to, i));
        else
            sc_store32(sc_gptr((unsigned)to, r, k * 8), word(me, to, i));
    }
    sc_all_store_sync();
    for (int from = 0; from < p; from++)
        for (int i = 0; i < STORES; i++) {
            size_t k = (size_t)from * STORES + (size_t)i;
            uint64_t want = (from + i) % p != me ? 0
                            : i & 1              ? word64(from, me, i)
                                                 : word(from, me, i);
            EXPECT(slots[k] == want, "store from %d number %d", from, i);
        }
}

/* Bytes each rank puts, stores and gets per rank: three long messages, two of
 * the longest the endpoint takes. */
static size_t bulk_len(void)
{
    return 2 * am_ep_long_max(sc_ep()) + BULK_TAIL;
}

/* Byte ranges crossing chunk boundaries, at odd offsets. */
static void test_bulk(void)
{
    int me = sc_rank(), p = sc_nprocs();
    const size_t nbulk = bulk_len(), slot = nbulk + 8;
    unsigned char *put, *store;
    unsigned rp = sc_region_alloc((size_t)p * slot, (void **)&put);
    unsigned rs = sc_region_alloc((size_t)p * slot, (void **)&store);
    unsigned char *src = malloc(nbulk), *got = malloc((size_t)p * nbulk);
    for (size_t i = 0; i < nbulk; i++)
        src[i] = byte(me, i);
    for (int to = 0; to < p; to++) {
        sc_bulk_put(sc_gptr((unsigned)to, rp, (size_t)me * slot + 3), src, nbulk);
        sc_bulk_store(sc_gptr((unsigned)to, rs, (size_t)me * slot + 5), src, nbulk);
    }
    sc_sync();
    sc_all_store_sync();
    for (int from = 0; from < p; from++)
        for (size_t i = 0; i < nbulk; i++) {
            unsigned char *a = put + (size_t)from * slot + 3,
                          *b = store + (size_t)from * slot + 5;
            if (a[i] != byte(from, i) || b[i] != byte(from, i)) {
                EXPECT(0, "bulk put/store from %d byte %zu", from, i);
                break;
            }
        }
    for (int from = 0; from < p; from++)
        sc_bulk_get(got + (size_t)from * nbulk,
                    sc_gptr((unsigned)from, rp, (size_t)me * slot + 3), nbulk);
    sc_sync();
    for (int from = 0; from < p; from++)
        for (size_t i = 0; i < nbulk; i++)
            if (got[(size_t)from * nbulk + i] != byte(me, i)) {
                EXPECT(0, "bulk get from %d byte %zu", from, i);
                break;
            }
    free(src);
    free(got);
    sc_barrier();
}

static void test_collectives(void)
{
    int me = sc_rank(), p = sc_nprocs();
    unsigned char *buf = malloc(BCAST);
    for (int round = 0; round < 3; round++) {
        int root = (round + 1) % p;
        for (size_t i = 0; i < BCAST; i++)
            buf[i] = me == root ? byte(root + round, i) : 0;
        sc_broadcast(buf, BCAST, root);
        for (size_t i = 0; i < BCAST; i++)
            if (buf[i] != byte(root + round, i)) {
                EXPECT(0, "broadcast %d from %d byte %zu", round, root, i);
                break;
            }
    }
    free(buf);
    uint64_t n = (uint64_t)p;
    EXPECT(sc_allreduce_sum_u64((uint64_t)me + 1) == n * (n + 1) / 2, "sum_u64");
    EXPECT(sc_allreduce_max_u64((uint64_t)me * 5) == (n - 1) * 5, "max_u64");
    EXPECT(sc_allreduce_xor_u64(1ull << me) == (1ull << p) - 1, "xor_u64");
    EXPECT(sc_allreduce_sum_d(0.5 * me) == 0.25 * (double)(n * (n - 1)), "sum_d");
    EXPECT(sc_allreduce_max_d(-1.0 * me) == 0.0, "max_d");
    /* Back-to-back reductions with different ops must not mix. */
    for (int i = 0; i < 20; i++)
        EXPECT(sc_allreduce_sum_u64((uint64_t)i) == (uint64_t)i * n, "sum_u64 round %d", i);
}

/* An application handler, sc_wait_until and sc_now. */
static void test_ring(void)
{
    int me = sc_rank(), p = sc_nprocs();
    uint32_t a = word(me, (me + 1) % p, 0);
    double t0 = sc_now();
    int rc = am_request(sc_ep(), (unsigned)((me + 1) % p), H_RING, &a, 1);
    EXPECT(rc == 0, "am_request: %s", am_strerror(rc));
    sc_wait_until(&ring_seen);
    EXPECT(ring_seen == 1, "ring message had the wrong value");
    EXPECT(sc_now() >= t0, "sc_now went backwards");
    sc_barrier();
}

/* The usage, to f: stdout for --help, stderr for a bad command line. */
static void usage(FILE *f)
{
    fprintf(f, "usage: shmamrun -n P [-a ALG] splitc_selftest [--bad-gptr]\n");
}

int main(int argc, char **argv)
{
    if (cmdline_asks_help(argc, argv)) {
        usage(stdout);
        return 0;
    }
    int bad = argc == 2 && strcmp(argv[1], "--bad-gptr") == 0;
    if (argc > 1 + bad) {
        usage(stderr);
        return 2;
    }
    sc_init(&argc, &argv);
    am_set_handler(sc_ep(), H_RING, h_ring);
    test_words();
    if (bad) {
        unsigned r = sc_region_alloc(16, NULL);
        if (sc_rank() == sc_nprocs() - 1)
            sc_put32(sc_gptr(0, r, 16), 1); /* one word past the end */
        sc_sync();
        sc_barrier();
    }
    test_stores();
    test_bulk();
    test_collectives();
    test_ring();
    int bad_ranks = (int)sc_allreduce_sum_u64(failures != 0);
    if (sc_rank() == 0)
        printf("splitc_selftest: %d ranks, %s: %s\n", sc_nprocs(), am_ep_claim(sc_ep()),
               bad_ranks ? "FAILED" : "verified");
    fflush(stdout); /* a failing rank's exit may stop us before exit flushes */
    sc_finalize();
    return bad_ranks != 0;
}
