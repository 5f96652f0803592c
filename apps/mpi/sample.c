/*
 * mpi/sample.c - SAMPLE over MPI, for comparison with apps/sample.c: the same
 * keys (same per-rank generator and seed), oversampling, splitters, local LSD
 * radix sort and verification, with MPI collectives in place of active
 * messages: MPI_Gather/MPI_Bcast for samples and splitters, MPI_Alltoall of
 * bucket counts then MPI_Alltoallv for the key exchange, MPI_Gather of each
 * rank's count/min/max and MPI_Allreduce for the totals and the multiset hash.
 *
 *   mpiexec -n P build/apps/mpi_sample [--keys N] [--seed S] [--oversample K]
 *
 * Rank 0 prints phase times and
 *   app,sample,<N>keys,mpich,-,<P>,<seconds>,<verified|FAILED>
 * with seconds covering splitters, exchange and local sort, as in the shmam
 * version.  Exits 1 if verification fails; --corrupt flips one key after sorting.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct opts {
    size_t keys;
    uint64_t seed;
    unsigned oversample;
    int corrupt;
};

static int rank, nprocs;

/* The generator, hash and sort below are those of apps/sample.c. */
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
}

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

static void usage(void)
{
    if (rank == 0)
        fprintf(stderr, "usage: mpi_sample [--keys N] [--seed S] [--oversample K]\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
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

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        MPI_Abort(MPI_COMM_WORLD, 1);
    return p;
}

static void splitters(const uint32_t *keys, const struct opts *o, uint64_t *rng,
                      uint32_t *split)
{
    unsigned per = o->oversample * (unsigned)nprocs;
    size_t total = (size_t)per * (size_t)nprocs;
    uint32_t *mine = xmalloc(per * 4), *all = rank == 0 ? xmalloc(total * 4) : NULL;
    for (unsigned i = 0; i < per; i++)
        mine[i] = keys[next(rng) % o->keys];
    MPI_Gather(mine, (int)per, MPI_UINT32_T, all, (int)per, MPI_UINT32_T, 0,
               MPI_COMM_WORLD);
    if (rank == 0) {
        uint32_t *tmp = xmalloc(total * 4);
        radix_sort(all, tmp, total);
        for (int i = 1; i < nprocs; i++)
            split[i - 1] = all[(size_t)i * per];
        free(tmp);
        free(all);
    }
    MPI_Bcast(split, nprocs - 1, MPI_UINT32_T, 0, MPI_COMM_WORLD);
    free(mine);
}

/* Exchange keys by bucket; returns the keys that land here, *n their count. */
static uint32_t *exchange(const uint32_t *keys, size_t nkeys, const uint32_t *split,
                          size_t *n)
{
    int *scount = calloc((size_t)nprocs, sizeof(int)),
        *rcount = xmalloc((size_t)nprocs * 4);
    int *sdisp = xmalloc((size_t)nprocs * 4), *rdisp = xmalloc((size_t)nprocs * 4);
    unsigned *to = xmalloc(nkeys * sizeof *to);
    uint32_t *sendbuf = xmalloc(nkeys * 4);
    for (size_t i = 0; i < nkeys; i++)
        scount[to[i] = owner(keys[i], split, (unsigned)nprocs - 1)]++;
    MPI_Alltoall(scount, 1, MPI_INT, rcount, 1, MPI_INT, MPI_COMM_WORLD);
    size_t total = 0;
    for (int r = 0, s = 0; r < nprocs; r++) {
        sdisp[r] = s;
        s += scount[r];
        rdisp[r] = (int)total;
        total += (size_t)rcount[r];
    }
    for (size_t i = 0; i < nkeys; i++)
        sendbuf[sdisp[to[i]]++] = keys[i];
    for (int r = 0; r < nprocs; r++)
        sdisp[r] -= scount[r];
    uint32_t *bucket = xmalloc(total * 4);
    MPI_Alltoallv(sendbuf, scount, sdisp, MPI_UINT32_T, bucket, rcount, rdisp, MPI_UINT32_T,
                  MPI_COMM_WORLD);
    free(scount);
    free(rcount);
    free(sdisp);
    free(rdisp);
    free(to);
    free(sendbuf);
    *n = total;
    return bucket;
}

static int verify(const uint32_t *bucket, size_t n, const struct hash *before,
                  size_t n_per_rank)
{
    int ok = 1;
    for (size_t i = 1; i < n; i++)
        ok &= bucket[i - 1] <= bucket[i];
    uint64_t info[3] = {n, n ? bucket[0] : 0, n ? bucket[n - 1] : 0};
    uint64_t *all = rank == 0 ? xmalloc((size_t)nprocs * 24) : NULL;
    MPI_Gather(info, 3, MPI_UINT64_T, all, 3, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        uint64_t last = 0;
        int seen = 0;
        for (int r = 0; r < nprocs; r++) {
            if (all[r * 3] == 0)
                continue;
            if (seen && all[r * 3 + 1] < last) {
                fprintf(stderr, "mpi_sample: rank %d starts below rank %d's end\n", r,
                        r - 1);
                ok = 0;
            }
            last = all[r * 3 + 2];
            seen = 1;
        }
        free(all);
    }
    struct hash after = hash_keys(bucket, n);
    uint64_t mine[2] = {after.count, after.sum - before->sum}, tot[2], x;
    uint64_t xmine = after.xor ^before->xor ;
    MPI_Allreduce(mine, tot, 2, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&xmine, &x, 1, MPI_UINT64_T, MPI_BXOR, MPI_COMM_WORLD);
    if (tot[0] != (uint64_t)nprocs * n_per_rank || tot[1] != 0 || x != 0) {
        if (rank == 0)
            fprintf(stderr, "mpi_sample: keys lost or changed: %llu of %llu, hash %s\n",
                    (unsigned long long)tot[0], (unsigned long long)nprocs * n_per_rank,
                    tot[1] || x ? "differs" : "equal");
        ok = 0;
    }
    int all_ok;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return all_ok;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    struct opts o = parse(argc, argv);
    uint64_t rng = mix64(o.seed * 0x2545f4914f6cdd1dull + (uint64_t)rank);
    uint32_t *keys = xmalloc(o.keys * 4), *split = xmalloc((size_t)nprocs * 4), *bucket;
    size_t n;

    double t[6];
    MPI_Barrier(MPI_COMM_WORLD);
    t[0] = MPI_Wtime();
    for (size_t i = 0; i < o.keys; i++)
        keys[i] = (uint32_t)(next(&rng) >> 32);
    struct hash before = hash_keys(keys, o.keys);
    MPI_Barrier(MPI_COMM_WORLD);
    t[1] = MPI_Wtime();
    splitters(keys, &o, &rng, split);
    MPI_Barrier(MPI_COMM_WORLD);
    t[2] = MPI_Wtime();
    bucket = exchange(keys, o.keys, split, &n);
    MPI_Barrier(MPI_COMM_WORLD);
    t[3] = MPI_Wtime();
    uint32_t *tmp = xmalloc(n * 4);
    radix_sort(bucket, tmp, n);
    free(tmp);
    MPI_Barrier(MPI_COMM_WORLD);
    t[4] = MPI_Wtime();
    if (o.corrupt && rank == 0 && n)
        bucket[n / 2] ^= 1;
    int ok = verify(bucket, n, &before, o.keys);
    t[5] = MPI_Wtime();

    uint64_t mine = n, most;
    MPI_Reduce(&mine, &most, 1, MPI_UINT64_T, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf(
            "mpi_sample: %d ranks x %zu keys, oversampling %u, largest bucket %.3f x N\n",
            nprocs, o.keys, o.oversample, (double)most / (double)o.keys);
        printf("mpi_sample: generate %.4f s, splitters %.4f s, exchange %.4f s, "
               "sort %.4f s, verify %.4f s\n",
               t[1] - t[0], t[2] - t[1], t[3] - t[2], t[4] - t[3], t[5] - t[4]);
        printf("app,sample,%zukeys,mpich,-,%d,%.4f,%s\n", o.keys, nprocs, t[4] - t[1],
               ok ? "verified" : "FAILED");
        fflush(stdout);
    }
    free(keys);
    free(split);
    free(bucket);
    MPI_Finalize();
    return ok ? 0 : 1;
}
