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
 * (sample_batched with --batched, which changes nothing here: the exchange is
 * one MPI_Alltoallv either way, the match for the shmam version's batched
 * SAMPLE).
 * with seconds covering splitters, exchange and local sort, as in the shmam
 * version.  Exits 1 if verification fails; --corrupt flips one key after sorting.
 *
 * The generator, splitter choice, bucket search, radix sort and the local
 * pieces of verification are apps/common/keys.c, the shmam version's code.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/cmdline.h"
#include "common/keys.h"

static int rank, nprocs;

/* The usage, to f: stdout for --help, stderr for a bad command line. */
static void usage(FILE *f)
{
    fprintf(f, "usage: mpiexec -n P mpi_sample [--keys N] [--seed S] [--oversample K] "
               "[--batched]\n");
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        MPI_Abort(MPI_COMM_WORLD, 1);
    return p;
}

static void splitters(const uint32_t *keys, const struct keys_options *o, uint64_t *rng,
                      uint32_t *split)
{
    unsigned per = o->oversample * (unsigned)nprocs;
    size_t total = (size_t)per * (size_t)nprocs;
    uint32_t *mine = xmalloc(per * 4), *all = rank == 0 ? xmalloc(total * 4) : NULL;
    keys_pick(keys, o->keys, rng, mine, per);
    MPI_Gather(mine, (int)per, MPI_UINT32_T, all, (int)per, MPI_UINT32_T, 0,
               MPI_COMM_WORLD);
    if (rank == 0)
        keys_splitters(all, per, (unsigned)nprocs, split);
    free(all);
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
        scount[to[i] = keys_owner(keys[i], split, (unsigned)nprocs - 1)]++;
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

static int verify(const uint32_t *bucket, size_t n, const struct keys_hash *before,
                  size_t n_per_rank)
{
    int ok = keys_sorted(bucket, n);
    uint64_t info[3];
    keys_summary(bucket, n, info);
    uint64_t *all = rank == 0 ? xmalloc((size_t)nprocs * 24) : NULL;
    MPI_Gather(info, 3, MPI_UINT64_T, all, 3, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    if (rank == 0)
        ok &= keys_check_order(all, nprocs, "mpi_sample");
    free(all);
    struct keys_hash after = keys_hash(bucket, n);
    uint64_t mine[2] = {after.count, after.sum - before->sum}, tot[2], x;
    uint64_t xmine = after.xor ^before->xor ;
    MPI_Allreduce(mine, tot, 2, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&xmine, &x, 1, MPI_UINT64_T, MPI_BXOR, MPI_COMM_WORLD);
    ok &= keys_check_total(tot[0], (uint64_t)nprocs * n_per_rank, tot[1], x, rank == 0,
                           "mpi_sample");
    int all_ok;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return all_ok;
}

int main(int argc, char **argv)
{
    struct keys_options o;

    if (cmdline_asks_help(argc, argv)) {
        usage(stdout);
        return 0;
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (keys_parse(argc, argv, &o) < 0) {
        if (rank == 0)
            usage(stderr);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    uint64_t rng = keys_rng(o.seed, rank);
    uint32_t *keys = xmalloc(o.keys * 4), *split = xmalloc((size_t)nprocs * 4), *bucket;
    size_t n;

    double t[6];
    MPI_Barrier(MPI_COMM_WORLD);
    t[0] = MPI_Wtime();
    keys_generate(keys, o.keys, &rng);
    struct keys_hash before = keys_hash(keys, o.keys);
    MPI_Barrier(MPI_COMM_WORLD);
    t[1] = MPI_Wtime();
    splitters(keys, &o, &rng, split);
    MPI_Barrier(MPI_COMM_WORLD);
    t[2] = MPI_Wtime();
    bucket = exchange(keys, o.keys, split, &n);
    MPI_Barrier(MPI_COMM_WORLD);
    t[3] = MPI_Wtime();
    uint32_t *tmp = xmalloc(n * 4);
    keys_radix_sort(bucket, tmp, n);
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
        printf("app,%s,%zukeys,mpich,-,%d,%.4f,%s\n",
               o.batched ? "sample_batched" : "sample", o.keys, nprocs, t[4] - t[1],
               ok ? "verified" : "FAILED");
        fflush(stdout);
    }
    free(keys);
    free(split);
    free(bucket);
    MPI_Finalize();
    return ok ? 0 : 1;
}
