/*
 * sample.c - SAMPLE: sample sort of 32-bit keys (Split-C suite; Lumetta &
 * Culler 1998, section 4.3), fine-grained all-to-all communication.
 *
 *   shmamrun -n P [-a ALG] build/apps/sample [--keys N] [--seed S] [--oversample K]
 *
 * Each rank generates N random keys (default 262,144, the paper's size) from its
 * own seeded generator.  Splitters: each rank picks K·P random samples of its
 * keys (K = 64 by default) and bulk-puts them into rank 0's sample array; rank 0
 * sorts the K·P·P samples and broadcasts every (K·P)-th as the P-1 splitters.
 * Distribution: every key goes to the rank owning its bucket as one short active
 * message (one am_request per key), whose handler appends it to the local bucket;
 * sc_all_store_sync then guarantees every key has landed.  Each rank then sorts
 * its bucket with an LSD radix sort, 8 bits per pass.
 *
 * Verification: every part sorted; parts ordered across ranks (rank 0 reads each
 * rank's count, minimum and maximum with one-word gets); the total count and a
 * multiset hash (sum and xor of a 64-bit mix of every key) equal before and after.
 * Rank 0 prints phase times (maxima over ranks are implied: phases end in a
 * barrier) and the line
 *   app,sample,<N>keys,<claim>,<shm>,<P>,<seconds>,<verified|FAILED>
 * where seconds covers splitters, distribution and local sort (not generating
 * the input, not verification).  Exits 1 if verification fails.  The hidden
 * option --corrupt flips one key after sorting, to show that failure is caught.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "splitc/splitc.h"

#define H_KEY 1 /* one key for this rank's bucket */

struct opts {
    size_t keys;
    uint64_t seed;
    unsigned oversample;
    int corrupt;
};

static uint32_t *bucket; /* keys that landed here */
static size_t bucket_n, bucket_cap, bucket_max;

/* splitmix64: the per-rank key generator and, finalizer only, the key hash. */
static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t next(uint64_t *state)
{
    return mix64(*state += 0x9e3779b97f4a7c15ull);
}

static void usage(void)
{
    fprintf(stderr, "usage: sample [--keys N] [--seed S] [--oversample K]\n");
    exit(2);
}

static struct opts parse(int argc, char **argv)
{
    struct opts o = {.keys = 262144, .seed = 1, .oversample = 64};
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(argv[i], "--corrupt") == 0)
            o.corrupt = 1;
        else if (v && strcmp(argv[i], "--keys") == 0 && ++i)
            o.keys = strtoull(v, NULL, 0);
        else if (v && strcmp(argv[i], "--seed") == 0 && ++i)
            o.seed = strtoull(v, NULL, 0);
        else if (v && strcmp(argv[i], "--oversample") == 0 && ++i)
            o.oversample = (unsigned)strtoul(v, NULL, 0);
        else
            usage();
    }
    if (o.keys == 0 || o.keys > (1u << 28) || o.oversample == 0 || o.oversample > 4096)
        usage();
    return o;
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

/* LSD radix sort of a[0..n), 8 bits per pass, using tmp[0..n). */
static void radix_sort(uint32_t *a, uint32_t *tmp, size_t n)
{
    for (int shift = 0; shift < 32; shift += 8) {
        size_t count[257] = {0};
        for (size_t i = 0; i < n; i++)
            count[((a[i] >> shift) & 255) + 1]++;
        for (int b = 0; b < 256; b++)
            count[b + 1] += count[b];
        for (size_t i = 0; i < n; i++)
            tmp[count[(a[i] >> shift) & 255]++] = a[i];
        uint32_t *swap = a;
        a = tmp;
        tmp = swap;
    }
    /* Four passes: the result is back in the caller's a. */
}

/* Which rank's bucket holds `key`: the number of splitters <= key. */
static unsigned owner(uint32_t key, const uint32_t *split, unsigned nsplit)
{
    unsigned lo = 0, hi = nsplit;
    while (lo < hi) {
        unsigned mid = (lo + hi) / 2;
        if (split[mid] <= key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Rank 0 gathers every rank's samples, sorts them and broadcasts P-1 splitters. */
static void splitters(const uint32_t *keys, const struct opts *o, uint64_t *rng,
                      uint32_t *split)
{
    unsigned p = (unsigned)sc_nprocs(), per = o->oversample * p;
    size_t total = (size_t)per * p;
    uint32_t *all, *mine = malloc(per * sizeof *mine);
    unsigned region = sc_region_alloc(sc_rank() == 0 ? total * 4 : 0, (void **)&all);
    for (unsigned i = 0; i < per; i++)
        mine[i] = keys[next(rng) % o->keys];
    sc_bulk_put(sc_gptr(0, region, (uint64_t)sc_rank() * per * 4), mine, per * 4);
    sc_sync();
    sc_barrier();
    if (sc_rank() == 0) {
        uint32_t *tmp = malloc(total * 4);
        radix_sort(all, tmp, total);
        for (unsigned i = 1; i < p; i++)
            split[i - 1] = all[(size_t)i * per];
        free(tmp);
    }
    sc_broadcast(split, (p - 1) * 4, 0);
    free(mine);
}

static void distribute(const uint32_t *keys, size_t n, const uint32_t *split)
{
    unsigned me = (unsigned)sc_rank(), nsplit = (unsigned)sc_nprocs() - 1;
    for (size_t i = 0; i < n; i++) {
        unsigned to = owner(keys[i], split, nsplit);
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

struct hash {
    uint64_t count, sum, xor;
};

static struct hash hash_keys(const uint32_t *k, size_t n)
{
    struct hash h = {n, 0, 0};
    for (size_t i = 0; i < n; i++) {
        uint64_t m = mix64(k[i] + 0x632be59bd9b4e019ull);
        h.sum += m;
        h.xor ^= m;
    }
    return h;
}

/* Returns 1 if the distributed result is a sorted permutation of the input. */
static int verify(const struct hash *before, size_t n_per_rank)
{
    int p = sc_nprocs(), ok = 1;
    for (size_t i = 1; i < bucket_n; i++)
        ok &= bucket[i - 1] <= bucket[i];
    uint64_t *info;
    unsigned region = sc_region_alloc(3 * 8, (void **)&info);
    info[0] = bucket_n;
    info[1] = bucket_n ? bucket[0] : 0;
    info[2] = bucket_n ? bucket[bucket_n - 1] : 0;
    sc_barrier();
    if (sc_rank() == 0) {
        uint64_t *all = malloc((size_t)p * 3 * 8), last = 0;
        int seen = 0;
        for (int r = 0; r < p; r++)
            for (int w = 0; w < 3; w++)
                sc_get64(&all[r * 3 + w], sc_gptr((unsigned)r, region, (uint64_t)w * 8));
        sc_sync();
        for (int r = 0; r < p; r++) {
            if (all[r * 3] == 0)
                continue;
            if (seen && all[r * 3 + 1] < last) {
                fprintf(stderr, "sample: rank %d starts below rank %d's end\n", r, r - 1);
                ok = 0;
            }
            last = all[r * 3 + 2];
            seen = 1;
        }
        free(all);
    }
    struct hash after = hash_keys(bucket, bucket_n);
    uint64_t count = sc_allreduce_sum_u64(after.count);
    uint64_t sum = sc_allreduce_sum_u64(after.sum) - sc_allreduce_sum_u64(before->sum);
    uint64_t xor = sc_allreduce_xor_u64(after.xor ^before->xor);
    if (count != (uint64_t)p * n_per_rank || sum != 0 || xor != 0) {
        if (sc_rank() == 0)
            fprintf(stderr, "sample: keys lost or changed: %llu of %llu, hash %s\n",
                    (unsigned long long)count, (unsigned long long)p * n_per_rank,
                    sum || xor? "differs" : "equal");
        ok = 0;
    }
    return sc_allreduce_max_u64(!ok) == 0;
}

int main(int argc, char **argv)
{
    sc_init(&argc, &argv);
    am_set_handler(sc_ep(), H_KEY, h_key);
    struct opts o = parse(argc, argv);
    int p = sc_nprocs();
    uint64_t rng = mix64(o.seed * 0x2545f4914f6cdd1dull + (uint64_t)sc_rank());
    bucket_max = 4 * o.keys + 4096;
    bucket_cap = o.keys + o.keys / 4 + 1024;
    bucket = malloc(bucket_cap * sizeof *bucket);
    uint32_t *keys = malloc(o.keys * sizeof *keys), *split = malloc((size_t)p * 4);
    if (!bucket || !keys || !split)
        abort();

    double t[6];
    sc_barrier();
    t[0] = sc_now();
    for (size_t i = 0; i < o.keys; i++)
        keys[i] = (uint32_t)(next(&rng) >> 32);
    struct hash before = hash_keys(keys, o.keys);
    sc_barrier();
    t[1] = sc_now();
    splitters(keys, &o, &rng, split);
    sc_barrier();
    t[2] = sc_now();
    distribute(keys, o.keys, split);
    t[3] = sc_now();
    uint32_t *tmp = malloc((bucket_n ? bucket_n : 1) * sizeof *tmp);
    radix_sort(bucket, tmp, bucket_n);
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
        printf("app,sample,%zukeys,%s,%s,%d,%.4f,%s\n", o.keys, am_ep_claim(sc_ep()),
               shm && *shm ? shm : "posix", p, t[4] - t[1], ok ? "verified" : "FAILED");
        fflush(stdout);
    }
    free(keys);
    free(split);
    free(bucket);
    sc_finalize();
    return ok ? 0 : 1;
}
