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

/* This program's name and usage text, and its rank (0 before MPI_Init). */
static const char *mpi_prog = "mpi", *mpi_text = "";
static int mpi_rank;

static inline _Noreturn void mpi_usage(FILE *f, int status);

/* Names the program and its usage, and answers --help (before MPI_Init);
 * first thing in main. */
static inline void mpi_program(const char *prog, const char *text, int argc, char **argv)
{
    mpi_prog = prog, mpi_text = text;
    if (bm_asks_help(argc, argv))
        mpi_usage(stdout, 0);
}

static inline _Noreturn void mpi_usage(FILE *f, int status)
{
    int started;
    if (mpi_rank == 0)
        fputs(mpi_text, f);
    MPI_Initialized(&started);
    if (started)
        MPI_Finalize();
    exit(status);
}

static inline _Noreturn void mpi_bad_usage(const char *why)
{
    if (mpi_rank == 0)
        fprintf(stderr, "%s: %s\n", mpi_prog, why);
    mpi_usage(stderr, 2);
}

/* An option's value: a whole number min..max, or a bad command line. */
static inline long mpi_arg_long(const char *s, const char *why, long min, long max)
{
    long v = 0;
    if (bm_arg_long(s, min, &v) < 0 || v > max)
        mpi_bad_usage(why);
    return v;
}

static inline void mpi_abort_job(void)
{
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* MPI_Init, and failures (bm_fail) named for the program and this rank
 * that take the whole job down.  This rank; *procs the job's size. */
static inline int mpi_start(int *argc, char ***argv, int *procs)
{
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &mpi_rank);
    MPI_Comm_size(MPI_COMM_WORLD, procs);
    bm_setup(mpi_prog, mpi_rank);
    bm_on_fail(mpi_abort_job);
    return mpi_rank;
}

/* Collective over a job of two: rank 1 sends its totals, messages and bytes
 * received, with `tag`; rank 0 fails unless they are what it sent. */
static inline void mpi_check_totals(unsigned long msgs, unsigned long bytes, int tag)
{
    unsigned long totals[2] = {msgs, bytes}, got[2];
    if (mpi_rank == 1) {
        MPI_Send(totals, 2, MPI_UNSIGNED_LONG, 0, tag, MPI_COMM_WORLD);
        return;
    }
    MPI_Recv(got, 2, MPI_UNSIGNED_LONG, 1, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (got[0] != totals[0] || got[1] != totals[1])
        bm_fail("sent %lu messages (%lu bytes), rank 1 received %lu (%lu bytes)", totals[0],
                totals[1], got[0], got[1]);
}

/* After the command line (a bad one says so first): ends a job of other than
 * two ranks (exit 2, rank 0 saying why); else, collectively, are both ranks
 * pinned to CPUs of their own? */
static inline int mpi_pinned_pair(int procs)
{
    if (procs != 2) {
        if (mpi_rank == 0)
            fprintf(stderr, "%s: run me with exactly two ranks (mpiexec -n 2)\n", mpi_prog);
        MPI_Finalize();
        exit(2);
    }
    int cpu = bm_pinned_cpu(), cpus[2];
    MPI_Allgather(&cpu, 1, MPI_INT, cpus, 1, MPI_INT, MPI_COMM_WORLD);
    return cpus[0] >= 0 && cpus[1] >= 0 && cpus[0] != cpus[1];
}

#endif
