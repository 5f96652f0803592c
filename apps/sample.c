/*
 * sample.c - SAMPLE: sample sort of 32-bit keys (Split-C suite; Lumetta &
 * Culler 1998, section 4.3), fine-grained all-to-all communication.
 *
 *   shmamrun -n P [-a ALG] build/apps/sample [--keys N] [--seed S] [--oversample K]
 *                                            [--batched]
 *
 * Each rank generates N random keys (default 262,144, the paper's size) from its
 * own seeded generator.  Splitters: each rank picks K·P random samples of its
 * keys (K = 64 by default) and bulk-puts them into rank 0's sample array; rank 0
 * sorts the K·P·P samples and broadcasts every (K·P)-th as the P-1 splitters.
 * Distribution: every key goes to the rank owning its bucket as one short active
 * message (one am_request per key), whose handler appends it to the local bucket;
 * sc_all_store_sync then guarantees every key has landed.  With --batched, each
 * rank first sorts its keys by destination and sends each destination its keys
 * together, as long messages of up to long_max bytes (one per destination at
 * the default sizes), whose handler appends them all: the match for MPICH's
 * MPI_Alltoallv (apps/mpi/sample.c).  Each rank then sorts its bucket with an
 * LSD radix sort, 8 bits per pass.
 *
 * Verification: every part sorted; parts ordered across ranks (rank 0 reads each
 * rank's count, minimum and maximum with one-word gets); the total count and a
 * multiset hash (sum and xor of a 64-bit mix of every key) equal before and after.
 * Rank 0 prints phase times (maxima over ranks are implied: phases end in a
 * barrier) and the line
 *   app,sample,<N>keys,<claim>,<shm>,<P>,<seconds>,<verified|FAILED>
 * (sample_batched with --batched)
 * where seconds covers splitters, distribution and local sort (not generating
 * the input, not verification).  Exits 1 if verification fails.  The hidden
 * option --corrupt flips one key after sorting, to show that failure is caught.
 *
 * The generator, splitter choice, bucket search, radix sort and the local
 * pieces of verification are apps/common/keys.c, shared with the MPICH
 * version apps/mpi/sample.c; this file holds the communication.
 */
#include <stdio.h>
#include <stdlib.h>

#include "common/cmdline.h"
#include "common/keys.h"
#include "splitc/splitc.h"

#define H_KEY 1  /* one key for this rank's bucket */
#define H_KEYS 2 /* keys for this rank's bucket, as a long message's data */

static uint32_t *bucket; /* keys that landed here */
static size_t bucket_n, bucket_cap, bucket_max;

/* The usage, to f: stdout for --help, stderr for a bad command line. */
static void usage(FILE *f)
{
    fprintf(f, "usage: shmamrun -n P [-a ALG] sample [--keys N] [--seed S] "
               "[--oversample K] [--batched]\n");
}

static void append(uint32_t key)
{
    if (bucket_n == bucket_cap) {
        if (bucket_cap == bucket_max) {
            fprintf(stderr, "sample: rank %d: bucket overflow (%zu keys)\n", sc_rank(),
                    bucket_max);
            abort();
        }
        bucket_cap = bucket_cap * 2 < bucket_max ? bucket_cap * 2 : bucket_max;
        bucket = realloc(bucket, bucket_cap * sizeof *bucket);
        if (!bucket)
            abort();
    }
    bucket[bucket_n++] = key;
}

static void h_key(am_token_t *t, const uint32_t *args, int nargs, void *d, size_t len)
{
    append(args[0]);
}

static void h_keys(am_token_t *t, const uint32_t *args, int nargs, void *d, size_t len)
{
    const uint32_t *k = d;
    for (size_t i = 0; i < len / sizeof *k; i++)
        append(k[i]);
}

/* Rank 0 gathers every rank's samples, sorts them and broadcasts P-1 splitters. */
static void splitters(const uint32_t *keys, const struct keys_options *o, uint64_t *rng,
                      uint32_t *split)
{
    unsigned p = (unsigned)sc_nprocs(), per = o->oversample * p;
    size_t total = (size_t)per * p;
    uint32_t *all, *mine = malloc(per * sizeof *mine);
    unsigned region = sc_region_alloc(sc_rank() == 0 ? total * 4 : 0, (void **)&all);
    keys_pick(keys, o->keys, rng, mine, per);
    sc_bulk_put(sc_gptr(0, region, (uint64_t)sc_rank() * per * 4), mine, per * 4);
    sc_sync();
    sc_barrier();
    if (sc_rank() == 0)
        keys_splitters(all, per, p, split);
    sc_broadcast(split, (p - 1) * 4, 0);
    free(mine);
}

static void distribute(const uint32_t *keys, size_t n, const uint32_t *split)
{
    unsigned me = (unsigned)sc_rank(), nsplit = (unsigned)sc_nprocs() - 1;
    for (size_t i = 0; i < n; i++) {
        unsigned to = keys_owner(keys[i], split, nsplit);
        if (to == me) {
            append(keys[i]);
            continue;
        }
        int rc = am_request(sc_ep(), to, H_KEY, &keys[i], 1);
        if (rc < 0) {
            fprintf(stderr, "sample: rank %u: am_request: %s\n", me, am_strerror(rc));
            exit(1);
        }
    }
    sc_all_store_sync();
}

/* --batched: the keys by destination (a counting sort), then each
 * destination's keys as long messages of up to long_max bytes, starting with
 * the next rank so that no destination gets everyone's keys at once. */
static void distribute_batched(const uint32_t *keys, size_t n, const uint32_t *split)
{
    unsigned p = (unsigned)sc_nprocs(), me = (unsigned)sc_rank();
    size_t *start = calloc(p + 1, sizeof *start), *fill = malloc(p * sizeof *fill);
    uint32_t *by_dest = malloc((n ? n : 1) * sizeof *by_dest);
    if (!start || !fill || !by_dest)
        abort();
    for (size_t i = 0; i < n; i++)
        start[keys_owner(keys[i], split, p - 1) + 1]++;
    for (unsigned d = 0; d < p; d++)
        fill[d] = start[d + 1] += start[d];
    for (size_t i = n; i-- > 0;)
        by_dest[--fill[keys_owner(keys[i], split, p - 1)]] = keys[i];
    size_t max = am_ep_long_max(sc_ep()) / sizeof *by_dest;
    for (unsigned k = 1; k <= p; k++) {
        unsigned d = (me + k) % p;
        for (size_t i = start[d]; i < start[d + 1]; i += max) {
            size_t m = start[d + 1] - i < max ? start[d + 1] - i : max;
            if (d == me) {
                for (size_t j = 0; j < m; j++)
                    append(by_dest[i + j]);
                continue;
            }
            int rc = am_request_long(sc_ep(), d, H_KEYS, by_dest + i, m * sizeof *by_dest,
                                     NULL, 0);
            if (rc < 0) {
                fprintf(stderr, "sample: rank %u: am_request_long: %s\n", me,
                        am_strerror(rc));
                exit(1);
            }
        }
    }
    free(start);
    free(fill);
    free(by_dest);
    sc_all_store_sync();
}

/* Returns 1 if the distributed result is a sorted permutation of the input. */
static int verify(const struct keys_hash *before, size_t n_per_rank)
{
    int p = sc_nprocs(), ok = keys_sorted(bucket, bucket_n);
    uint64_t *info;
    unsigned region = sc_region_alloc(3 * 8, (void **)&info);
    keys_summary(bucket, bucket_n, info);
    sc_barrier();
    if (sc_rank() == 0) {
        uint64_t *all = malloc((size_t)p * 3 * 8);
        for (int r = 0; r < p; r++)
            for (int w = 0; w < 3; w++)
                sc_get64(&all[r * 3 + w], sc_gptr((unsigned)r, region, (uint64_t)w * 8));
        sc_sync();
        ok &= keys_check_order(all, p, "sample");
        free(all);
    }
    struct keys_hash after = keys_hash(bucket, bucket_n);
    uint64_t count = sc_allreduce_sum_u64(after.count);
    uint64_t sum = sc_allreduce_sum_u64(after.sum) - sc_allreduce_sum_u64(before->sum);
    uint64_t xor = sc_allreduce_xor_u64(after.xor ^before->xor);
    ok &= keys_check_total(count, (uint64_t)p * n_per_rank, sum, xor, sc_rank() == 0,
                           "sample");
    return sc_allreduce_max_u64(!ok) == 0;
}

int main(int argc, char **argv)
{
    struct keys_options o;

    if (cmdline_asks_help(argc, argv)) {
        usage(stdout);
        return 0;
    }
    sc_init(&argc, &argv);
    am_set_handler(sc_ep(), H_KEY, h_key);
    am_set_handler(sc_ep(), H_KEYS, h_keys);
    if (keys_parse(argc, argv, &o) < 0) {
        if (sc_rank() == 0)
            usage(stderr);
        exit(2);
    }
    int p = sc_nprocs();
    uint64_t rng = keys_rng(o.seed, sc_rank());
    bucket_max = 4 * o.keys + 4096;
    bucket_cap = o.keys + o.keys / 4 + 1024;
    bucket = malloc(bucket_cap * sizeof *bucket);
    uint32_t *keys = malloc(o.keys * sizeof *keys), *split = malloc((size_t)p * 4);
    if (!bucket || !keys || !split)
        abort();

    double t[6];
    sc_barrier();
    t[0] = sc_now();
    keys_generate(keys, o.keys, &rng);
    struct keys_hash before = keys_hash(keys, o.keys);
    sc_barrier();
    t[1] = sc_now();
    splitters(keys, &o, &rng, split);
    sc_barrier();
    t[2] = sc_now();
    (o.batched ? distribute_batched : distribute)(keys, o.keys, split);
    t[3] = sc_now();
    uint32_t *tmp = malloc((bucket_n ? bucket_n : 1) * sizeof *tmp);
    keys_radix_sort(bucket, tmp, bucket_n);
    free(tmp);
    sc_barrier();
    t[4] = sc_now();
    if (o.corrupt && sc_rank() == 0 && bucket_n)
        bucket[bucket_n / 2] ^= 1;
    int ok = verify(&before, o.keys);
    t[5] = sc_now();

    uint64_t most = sc_allreduce_max_u64(bucket_n);
    if (sc_rank() == 0) {
        const char *shm = getenv("SHMAM_SHM");
        printf("sample: %d ranks x %zu keys, oversampling %u, largest bucket %.3f x N\n", p,
               o.keys, o.oversample, (double)most / (double)o.keys);
        printf("sample: generate %.4f s, splitters %.4f s, distribute %.4f s, sort %.4f s, "
               "verify %.4f s\n",
               t[1] - t[0], t[2] - t[1], t[3] - t[2], t[4] - t[3], t[5] - t[4]);
        printf("app,%s,%zukeys,%s,%s,%d,%.4f,%s\n", o.batched ? "sample_batched" : "sample",
               o.keys, am_ep_claim(sc_ep()), shm && *shm ? shm : "posix", p, t[4] - t[1],
               ok ? "verified" : "FAILED");
        fflush(stdout);
    }
    free(keys);
    free(split);
    free(bucket);
    sc_finalize();
    return ok ? 0 : 1;
}
