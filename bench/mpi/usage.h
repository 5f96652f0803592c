/*
 * usage.h - how an MPI baseline ends on --help or a bad command line: rank 0
 * prints the usage (and why it is bad) to f, every rank ends MPI if it was
 * started, then exits with status (stdout and 0 for --help, asked before
 * MPI_Init as rank 0; stderr and 2 for a bad command line).
 */
#ifndef SHMAM_BENCH_MPI_USAGE_H
#define SHMAM_BENCH_MPI_USAGE_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

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

#endif
