/*
 * repro_onesided.c (mpi_repro_onesided) - a minimal reproducer of the two
 * MPICH 4.0.2 (ch4:ucx) faults that broke apps/mpi/con.c, for MPICH's bug
 * tracker and for checking a newer MPICH:
 *
 *   mpiexec -n P build/apps/mpi_repro_onesided [--flush all|each] [--rounds R]
 *           [--gets K]
 *
 * 1. MPI_Win_flush_all returns before the caller's MPI_Get operations have
 *    completed.  Each rank owns WORDS words of a window from MPI_Win_allocate
 *    (word i of rank r holds r * WORDS + i) and holds MPI_Win_lock_all for the
 *    whole run.  Every round each rank gets K words into a buffer preset to a
 *    sentinel (even rounds from one other rank, odd rounds from all of them),
 *    flushes, and counts the words still holding the sentinel; a barrier
 *    (MPI_Win_sync on both sides) ends the round.  The MPI standard says every
 *    get has completed when the flush returns.
 *      --flush all    one MPI_Win_flush_all (what con.c did)
 *      --flush each   an MPI_Win_flush per other rank (what con.c does now)
 *    Seen here on 2 CPUs, K = 400, 200 rounds, three runs each: with "all",
 *    P = 3 left 0 to 3 of 600 flushes with gets unwritten, P = 4 28 to 36 of
 *    800, P = 8 66 to 84 of 1600, mostly whole batches (P = 2 never did); the
 *    words arrive, right, during the barrier, and in a variant an MPI_Win_flush
 *    to the same target just after the early return did not wait for them
 *    either.  With "each", no flush left any (P = 3, 4 and 8).
 * 2. MPI_MIN on an unsigned type compares as signed: MPI_Accumulate(MPI_MIN) of
 *    0x80000000 onto 5, both MPI_UINT32_T, leaves 0x80000000 (MPI_Allreduce and
 *    MPI_Reduce_local too; MPICH bug pmodels/mpich#6083, fixed after 4.0.2).  con.c's
 *    labels stay below 2^31, where signed and unsigned order agree.
 *
 * Rank 0 prints one line per check, "ok" or what went wrong; the exit status
 * is 0 only if both were ok.
 */
#include <getopt.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cmdline.h"

#define WORDS 4096           /* window words per rank */
#define SENTINEL 0xdeadbeefu /* no word of the window holds it */

static int rank, nprocs;

/* The usage, to f: stdout for --help, stderr for a bad command line. */
static void usage(FILE *f)
{
    fprintf(f, "usage: mpiexec -n P mpi_repro_onesided [--flush all|each] [--rounds R] "
               "[--gets K]\n");
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        MPI_Abort(MPI_COMM_WORLD, 1);
    return p;
}

/* Get i of round r reads word word_of(i, r) of rank target_of(i, r): in even
 * rounds all gets go to one other rank (which fails more often), in odd rounds
 * they are spread over all others. */
static int target_of(int i, int r)
{
    return (rank + 1 + (r % 2 ? i : r / 2) % (nprocs - 1)) % nprocs;
}

static int word_of(int i, int r)
{
    return (i * 97 + r) % WORDS;
}

/* Check 1: gets left unwritten by the flush, summed over all ranks and rounds
 * into bad[0] (words) and bad[1] (flushes that left any). */
static void check_flush(MPI_Win win, int each, int rounds, int gets, long bad[2])
{
    uint32_t *buf = xmalloc((size_t)gets * sizeof *buf);
    long mine[2] = {0, 0};

    for (int r = 0; r < rounds; r++) {
        for (int i = 0; i < gets; i++) {
            buf[i] = SENTINEL;
            MPI_Get(&buf[i], 1, MPI_UINT32_T, target_of(i, r), word_of(i, r), 1,
                    MPI_UINT32_T, win);
        }
        if (each) {
            for (int t = 0; t < nprocs; t++)
                if (t != rank)
                    MPI_Win_flush(t, win);
        } else {
            MPI_Win_flush_all(win);
        }
        long left = 0;
        for (int i = 0; i < gets; i++)
            left += buf[i] == SENTINEL;
        mine[0] += left, mine[1] += left > 0;
        MPI_Win_sync(win);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Win_sync(win);
    }
    MPI_Reduce(mine, bad, 2, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    free(buf);
}

/* Check 2, on rank 0 against the last rank's word 0 (5 before): the word after
 * an unsigned MPI_MIN of 0x80000000. */
static uint32_t check_min(MPI_Win win)
{
    uint32_t big = 0x80000000u, got = 0;
    int t = nprocs - 1;

    MPI_Accumulate(&big, 1, MPI_UINT32_T, t, 0, 1, MPI_UINT32_T, MPI_MIN, win);
    MPI_Win_flush(t, win);
    MPI_Get(&got, 1, MPI_UINT32_T, t, 0, 1, MPI_UINT32_T, win);
    MPI_Win_flush(t, win);
    return got;
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {{"flush", required_argument, NULL, 'f'},
                                         {"rounds", required_argument, NULL, 'r'},
                                         {"gets", required_argument, NULL, 'k'},
                                         {NULL, 0, NULL, 0}};
    int each = 0, rounds = 200, gets = 400, c;
    uint32_t *base;
    MPI_Win win;

    if (cmdline_asks_help(argc, argv)) {
        usage(stdout);
        return 0;
    }
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (c == 'f' && (!strcmp(optarg, "all") || !strcmp(optarg, "each")))
            each = !strcmp(optarg, "each");
        else if (c == 'r' && (rounds = atoi(optarg)) > 0)
            continue;
        else if (c == 'k' && (gets = atoi(optarg)) > 0)
            continue;
        else {
            usage(stderr);
            return 2;
        }
    }
    if (optind < argc) {
        usage(stderr);
        return 2;
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (nprocs < 2) {
        if (rank == 0)
            fprintf(stderr, "mpi_repro_onesided: needs at least 2 ranks\n");
        MPI_Finalize();
        return 2;
    }
    MPI_Win_allocate(WORDS * sizeof *base, sizeof *base, MPI_INFO_NULL, MPI_COMM_WORLD,
                     &base, &win);
    for (int i = 0; i < WORDS; i++)
        base[i] = (uint32_t)(rank * WORDS + i);
    base[0] = rank == nprocs - 1 ? 5 : base[0];
    MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
    MPI_Win_sync(win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_sync(win);

    long bad[2] = {0, 0};
    check_flush(win, each, rounds, gets, bad);
    uint32_t min = rank == 0 ? check_min(win) : 5;
    if (rank == 0) {
        long flushes = (long)rounds * nprocs;
        if (bad[0])
            printf("mpi_repro_onesided: flush %s: %ld of %ld gets not complete after the "
                   "flush returned, in %ld of %ld flushes: FAILED\n",
                   each ? "each" : "all", bad[0], flushes * gets, bad[1], flushes);
        else
            printf("mpi_repro_onesided: flush %s: all %ld gets complete after %ld flushes: "
                   "ok\n",
                   each ? "each" : "all", flushes * gets, flushes);
        printf(
            "mpi_repro_onesided: MPI_MIN(5, 0x80000000) as MPI_UINT32_T by MPI_Accumulate: "
            "%#x: %s\n",
            (unsigned)min, min == 5 ? "ok" : "FAILED");
        fflush(stdout);
    }
    MPI_Win_unlock_all(win);
    MPI_Win_free(&win);
    MPI_Finalize();
    return rank == 0 && (bad[0] || min != 5) ? 1 : 0;
}
