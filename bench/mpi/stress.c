/*
 * stress.c - the MPICH baseline for shmam's many-to-one stress test: W writers
 * send a total of N integers to one reader, and every one is counted.
 *
 *   mpiexec -n W+1 build/bench/mpi_stress [--total N] [--quick] [--header]
 *           [--timeout S]
 *
 * Ranks 1..W are the writers; writer w sends N/W integers (the first N%W
 * writers one more), each as one blocking MPI_Send of two uint32 words,
 * {sequence number, value(w, sequence)}, to rank 0.  Rank 0 receives all N
 * with MPI_Recv from MPI_ANY_SOURCE.  The clock runs from the end of a barrier
 * (on rank 0) to the last receive.
 *
 * Checks.  For every message rank 0 checks that it comes from a writer, is two
 * words long, carries that writer's next sequence number (MPI does not let two
 * messages from one sender on one communicator and tag overtake each other)
 * and the value that belongs to it; it adds up the values and compares the sum
 * with the one computed from the formula.  At the end it gathers each writer's
 * count of sends and compares them with what it received.  Any mismatch
 * prints "FAILED" on stderr and exits nonzero (MPI_Abort); a lost message
 * would leave rank 0 waiting, so a SIGALRM ends the job after --timeout
 * seconds (default 600).  MPI errors abort (MPI_ERRORS_ARE_FATAL).
 *
 * Output: rank 0 prints two rows in the schema shared by all shmam benchmarks
 * (the header first with --header), one run so no spread:
 *   # bench,impl,shm,procs,pinned,iters,metric,value,unit,spread
 *   mpi_stress,mpich,-,4,0,1000000,seconds,1.4100,s,
 *   mpi_stress,mpich,-,4,0,1000000,msgs_per_s,709220,msgs/s,
 * pinned is 1 when every rank's affinity is a single CPU.  Defaults: N =
 * 1,000,000; --quick: N = 20,000.  With more ranks than CPUs the figures
 * depend on the scheduler: MPICH's waits spin and never yield, so do not bind
 * here (`-bind-to core` puts two spinning ranks on one CPU, and W = 3 then
 * takes a minute instead of about a second; see bench/README.md).
 */
#include <mpi.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common/measure.h"
#include "mpi/usage.h"

#define TAG_DATA 1

struct opts {
    long total, timeout;
    int header;
};

static int rank;

/* A failed check: say so on stderr and take the whole job down. */
__attribute__((format(printf, 1, 2), noreturn)) static void fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "mpi_stress: rank %d: FAILED: ", rank);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}

static void on_alarm(int sig)
{
    static const char msg[] = "mpi_stress: FAILED: timed out (a message lost?)\n";
    (void)sig;
    if (write(2, msg, sizeof msg - 1) < 0)
        _exit(1);
    _exit(1);
}

/* The integer writer w sends as its message number s. */
static uint32_t value(int w, uint32_t s)
{
    return (uint32_t)w * 2654435761u + s * 40503u;
}

/* How many integers writer w (1..writers) sends. */
static long share(long total, int writers, int w)
{
    return total / writers + (w - 1 < total % writers);
}

/* Writer w: send its share, return how many sends it made. */
static long write_all(long n, int w)
{
    long sent = 0;
    for (uint32_t s = 0; s < (uint32_t)n; s++) {
        uint32_t msg[2] = {s, value(w, s)};
        MPI_Send(msg, 2, MPI_UINT32_T, 0, TAG_DATA, MPI_COMM_WORLD);
        sent++;
    }
    return sent;
}

/* Rank 0: receive `total` messages from writers 1..writers, checking each
 * against that writer's next sequence number; returns the sum of the values
 * and leaves each writer's count in next[w]. */
static uint64_t read_all(long total, int writers, uint32_t *next)
{
    uint64_t sum = 0;
    for (long i = 0; i < total; i++) {
        uint32_t msg[2];
        MPI_Status st;
        int n, w;
        MPI_Recv(msg, 2, MPI_UINT32_T, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_UINT32_T, &n);
        w = st.MPI_SOURCE;
        if (w < 1 || w > writers || st.MPI_TAG != TAG_DATA || n != 2)
            fail("message %ld from rank %d, tag %d, %d words", i, w, st.MPI_TAG, n);
        if (msg[0] != next[w] || msg[1] != value(w, msg[0]))
            fail("writer %d: expected message %u, got number %u with value %u", w, next[w],
                 msg[0], msg[1]);
        next[w]++;
        sum += msg[1];
    }
    return sum;
}

/* The usage, for --help and bad command lines (mpi/usage.h). */
static const char usage_text[] =
    "usage: mpiexec -n W+1 mpi_stress [--total N] [--quick] [--header] "
    "[--timeout S]\n";

static void usage(FILE *f, int status)
{
    mpi_usage(rank, f, status, usage_text);
}

static void bad_usage(const char *why)
{
    mpi_bad_usage(rank, "mpi_stress", why, usage_text);
}

static long arg_long(const char *s, const char *opt, long min)
{
    char *end;
    long v = s ? strtol(s, &end, 10) : 0;
    if (!s || *end || v < min || v > UINT32_MAX)
        bad_usage(opt);
    return v;
}

static struct opts parse(int argc, char **argv)
{
    struct opts o = {.total = 1000000, .timeout = 600};
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0)
            o.total = 20000;
        else if (strcmp(argv[i], "--total") == 0)
            o.total = arg_long(argv[++i], "--total needs an integer >= 1", 1);
        else if (strcmp(argv[i], "--timeout") == 0)
            o.timeout = arg_long(argv[++i], "--timeout needs an integer >= 0", 0);
        else if (strcmp(argv[i], "--header") == 0)
            o.header = 1;
        else
            bad_usage("unknown option");
    }
    return o;
}

int main(int argc, char **argv)
{
    if (bm_asks_help(argc, argv))
        usage(stdout, 0);
    int procs;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &procs);
    struct opts o = parse(argc, argv);
    if (procs < 2)
        bad_usage("needs at least one writer (mpiexec -n 2 or more)");
    signal(SIGALRM, on_alarm);
    alarm((unsigned)o.timeout);

    int writers = procs - 1, single = bm_pinned_cpu() >= 0, pinned;
    MPI_Allreduce(&single, &pinned, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    uint32_t *next = calloc((size_t)procs, sizeof *next);
    long *sent = calloc((size_t)procs, sizeof *sent);
    if (!next || !sent)
        fail("out of memory");

    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime(), seconds = 0;
    uint64_t sum = 0;
    long mine = 0;
    if (rank == 0) {
        sum = read_all(o.total, writers, next);
        seconds = MPI_Wtime() - t0;
    } else {
        mine = write_all(share(o.total, writers, rank), rank);
    }
    MPI_Gather(&mine, 1, MPI_LONG, sent, 1, MPI_LONG, 0, MPI_COMM_WORLD);

    if (rank == 0) {
        uint64_t want = 0;
        for (int w = 1; w <= writers; w++) {
            long n = share(o.total, writers, w);
            if (sent[w] != n || next[w] != (uint32_t)n)
                fail("writer %d should send %ld, sent %ld, rank 0 received %u", w, n,
                     sent[w], next[w]);
            for (uint32_t s = 0; s < (uint32_t)n; s++)
                want += value(w, s);
        }
        if (sum != want)
            fail("sum of the values received %llu, sent %llu", (unsigned long long)sum,
                 (unsigned long long)want);
        if (o.header)
            printf("# bench,impl,shm,procs,pinned,iters,metric,value,unit,spread\n");
        printf("mpi_stress,mpich,-,%d,%d,%ld,seconds,%.4f,s,\n", procs, pinned, o.total,
               seconds);
        printf("mpi_stress,mpich,-,%d,%d,%ld,msgs_per_s,%.0f,msgs/s,\n", procs, pinned,
               o.total, (double)o.total / seconds);
        fflush(stdout);
    }
    free(next);
    free(sent);
    MPI_Finalize();
    return 0;
}
