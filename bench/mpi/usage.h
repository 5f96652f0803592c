/*
 * usage.h - how an MPI baseline starts, and how it ends on --help or a bad
 * command line: rank 0 prints the usage (and why it is bad) to f, every rank
 * ends MPI if it was started, then exits with status (stdout and 0 for
 * --help, asked before MPI_Init as rank 0; stderr and 2 for a bad command
 * line).  Failures are the harness's (common/harness.h).
 */
#ifndef SHMAM_BENCH_MPI_USAGE_H
#define SHMAM_BENCH_MPI_USAGE_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/harness.h"
#include "common/measure.h"

static inline _Noreturn void mpi_usage(int rank, FILE *f, int status, const char *text)
{
    int started;
    if (rank == 0)
        fputs(text, f);
    MPI_Initialized(&started);
    if (started)
        MPI_Finalize();
    exit(status);
}

static inline _Noreturn void mpi_bad_usage(int rank, const char *prog, const char *why,
                                           const char *text)
{
    if (rank == 0)
        fprintf(stderr, "%s: %s\n", prog, why);
    mpi_usage(rank, stderr, 2, text);
}

static inline void mpi_abort_job(void)
{
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* MPI_Init, and failures (bm_fail) named for prog and this rank that take
 * the whole job down.  This rank; *procs the job's size. */
static inline int mpi_start(const char *prog, int *argc, char ***argv, int *procs)
{
    int rank;
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, procs);
    bm_setup(prog, rank);
    bm_on_fail(mpi_abort_job);
    return rank;
}

/* Collective over a job of two: are both ranks pinned to CPUs of their own? */
static inline int mpi_pinned_pair(void)
{
    int cpu = bm_pinned_cpu(), cpus[2];
    MPI_Allgather(&cpu, 1, MPI_INT, cpus, 1, MPI_INT, MPI_COMM_WORLD);
    return cpus[0] >= 0 && cpus[1] >= 0 && cpus[0] != cpus[1];
}

/* Ends a job that is not of two ranks (exit 2, rank 0 saying why). */
static inline void mpi_need_two(const char *prog, int rank, int procs)
{
    if (procs == 2)
        return;
    if (rank == 0)
        fprintf(stderr, "%s: run me with exactly two ranks (mpiexec -n 2)\n", prog);
    MPI_Finalize();
    exit(2);
}

#endif
