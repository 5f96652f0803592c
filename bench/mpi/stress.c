/*
 * stress.c - the MPICH baseline for shmam's many-to-one stress test: W writers
 * send integers to one reader for T seconds, and every one is counted.
 *
 *   mpiexec -n W+1 build/bench/mpi_stress [--seconds T | --total N]
 *           [--repeat R] [--yield] [--quick] [--header] [--timeout S] [--verbose]
 *
 * A run.  Ranks 1..W are the writers, rank 0 the reader.  Start: after an
 * MPI_Barrier (every rank has finished the run before), rank 0 reads its clock,
 * t0, and MPI_Bcasts t0 to the writers; a writer starts sending only when the
 * broadcast has given it t0, so no writer starts before rank 0's clock.  Writer
 * w then sends integers, each one blocking MPI_Send of two uint32 words
 * {sequence number, value(w, sequence)}, until t0 + T (CLOCK_MONOTONIC, which
 * all ranks of one node share; read after the first send and then every 64,
 * since a read costs about 150 ns on this VM: every writer sends at least one
 * integer, so no run is empty), then one end marker carrying its count.  With --total N
 * instead, writer w sends N/W integers (the first N%W writers one more) and
 * then its end marker.  Rank 0 receives from MPI_ANY_SOURCE until every writer
 * has ended; the run's time is from t0 to the last integer (its clock is read
 * at the first end marker and after each integer that follows it, i.e. in the
 * tail only; with --total, at the N-th integer).
 *
 * Repeats.  One unmeasured warm-up run (T/10, or N/10 integers), then R
 * measured runs (--repeat, default 5).  Rows (rank 0), in the schema shared by
 * all shmam benchmarks (the header first with --header):
 *   bench,impl,shm,procs,pinned,iters,metric,value,unit,spread
 *   mpi_stress,mpich,-,4,0,ITERS,s_per_1e6,0.8123,s,0.8011-0.8400
 *   mpi_stress,mpich,-,4,0,ITERS,msgs_per_s,1231072,msgs/s,1190476-1248283
 *   mpi_stress,mpich,-,4,0,ITERS,run_seconds,1.0001,s,1.0000-1.0002
 * s_per_1e6: seconds per 10^6 integers (elapsed / delivered x 10^6) of each
 * run; msgs_per_s its inverse; run_seconds the runs' durations; value the
 * median over the runs, spread the lowest-highest run.  ITERS is the median
 * over the runs of the integers one run delivered (with --total: N).  pinned
 * is 1 when every rank's affinity is a single CPU.
 *
 * Waiting.  MPICH's own waits (MPI_Send, MPI_Recv, MPI_Wait) spin and never
 * yield (bench/README.md, MPICH section).  Rank 0 receives with MPI_Irecv and
 * an MPI_Test loop instead of MPI_Recv, so that it can watch for a stall.
 * --yield makes the waits of both sides give the CPU away after 64 failed
 * MPI_Tests in a row (sched_yield), as shmam's stress reader does after 64
 * empty polls and its senders after a short backoff: writers then send with
 * MPI_Isend and an MPI_Test loop.  The yielding is the benchmark's, not
 * MPICH's; it lets W + 1 > CPUs ranks be bound (-bind-to core) like shmam's.
 *
 * Checks.  For every message rank 0 checks that it comes from a writer that
 * has not ended, is two words long (an end marker: one word), carries that
 * writer's next sequence number (MPI does not let two messages from one
 * sender on one communicator overtake each other) and the value that belongs
 * to it; each end marker's count must equal the integers received from that
 * writer (with --total: its share), and the sum of all values the sum
 * computed from the counts.  Any mismatch prints "FAILED" on stderr and aborts
 * the job (MPI_Abort, exit nonzero).  If rank 0 receives nothing for STALL_S
 * (10) seconds while some writer has not ended, it prints "mpi_stress: STALL:"
 * with every writer's count and aborts: a lost message fails the run instead
 * of hiding behind a time limit.  A SIGALRM after --timeout seconds (default
 * 600 + 2 (R + 1) T) ends anything else that hangs.  MPI errors abort.
 * Defaults: T = 1 s, R = 5; --quick: T = 0.2 s, R = 3.
 */
#include <limits.h>
#include <mpi.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common/measure.h"
#include "common/stat.h"
#include "mpi/usage.h"

#define TAG_DATA 1
#define TAG_END 2
#define CLOCK_EVERY 64  /* sends between a writer's clock readings */
#define YIELD_AFTER 64  /* failed MPI_Tests in a row before --yield yields */
#define IDLE_CHECK 1024 /* failed MPI_Tests in a row between rank 0's stall checks */
#define STALL_S 10.0
#define MAX_REPEAT 101

struct opts {
    double seconds;
    long total, timeout; /* total 0: time-bounded runs */
    int repeat, yield, header, verbose;
};

/* One run as rank 0 saw it. */
struct run {
    double elapsed;
    long delivered;
    uint32_t fewest, most; /* integers from the writer that sent the fewest, most */
};

static int rank;

/* The integer writer w sends as its message number s. */
static uint32_t value(int w, uint32_t s)
{
    return (uint32_t)w * 2654435761u + s * 40503u;
}

/* How many integers writer w (1..writers) sends of a fixed total. */
static long share(long total, int writers, int w)
{
    return total / writers + (w - 1 < total % writers);
}

/* --yield's wait for *req: MPI_Test in a loop, giving the CPU away after
 * YIELD_AFTER failures in a row. */
static void wait_yielding(MPI_Request *req)
{
    int done = 0;
    for (long fails = 0;; fails++) {
        MPI_Test(req, &done, MPI_STATUS_IGNORE);
        if (done)
            return;
        if (fails >= YIELD_AFTER)
            sched_yield();
    }
}

/* Writer w: integers until `limit` are sent or the clock passes `deadline`
 * (checked after the first send and every CLOCK_EVERY after it), then the end
 * marker; returns the count. */
static uint32_t write_run(int w, uint32_t limit, double deadline, int yield)
{
    uint32_t s = 0;
    for (; s < limit; s++) {
        if (s % CLOCK_EVERY == 1 && bm_now_s() >= deadline)
            break;
        uint32_t msg[2] = {s, value(w, s)};
        if (yield) {
            MPI_Request req;
            MPI_Isend(msg, 2, MPI_UINT32_T, 0, TAG_DATA, MPI_COMM_WORLD, &req);
            wait_yielding(&req);
        } else {
            MPI_Send(msg, 2, MPI_UINT32_T, 0, TAG_DATA, MPI_COMM_WORLD);
        }
    }
    MPI_Send(&s, 1, MPI_UINT32_T, 0, TAG_END, MPI_COMM_WORLD);
    return s;
}

/* Rank 0: nothing has arrived for STALL_S seconds; say who sent what, abort. */
__attribute__((noreturn)) static void stall(int writers, const uint32_t *next,
                                            const char *ended)
{
    fprintf(stderr, "mpi_stress: STALL: no message for %.0f s with writers still sending;",
            STALL_S);
    for (int w = 1; w <= writers; w++)
        fprintf(stderr, " writer %d: %u%s", w, next[w], ended[w] ? " (ended)" : "");
    fputc('\n', stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}

/* Rank 0: the next message, from any writer, into msg (2 words); status in
 * *st.  Tests in a loop (yielding if asked) and watches for a stall. */
static void next_message(uint32_t *msg, MPI_Status *st, int yield, int writers,
                         const uint32_t *next, const char *ended)
{
    MPI_Request req;
    int done = 0;
    double idle_since = 0;
    MPI_Irecv(msg, 2, MPI_UINT32_T, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &req);
    for (long fails = 0;; fails++) {
        MPI_Test(&req, &done, st);
        if (done)
            return;
        if (yield && fails >= YIELD_AFTER)
            sched_yield();
        if (fails % IDLE_CHECK == IDLE_CHECK - 1) {
            double now = bm_now_s();
            if (idle_since == 0)
                idle_since = now;
            else if (now - idle_since > STALL_S)
                stall(writers, next, ended);
        }
    }
}

/* Rank 0: one run from t0 until every writer has ended, checking every
 * message; `total` 0 for a time-bounded run. */
static struct run read_run(double t0, long total, int writers, int yield)
{
    uint32_t *next = calloc((size_t)writers + 1, sizeof *next);
    char *ended = calloc((size_t)writers + 1, 1);
    uint64_t sum = 0, want = 0;
    struct run r = {0, 0, UINT32_MAX, 0};
    double t_last = t0;
    int n_ended = 0;
    if (!next || !ended)
        bm_fail("out of memory");
    while (n_ended < writers) {
        uint32_t msg[2];
        MPI_Status st;
        int n, w;
        next_message(msg, &st, yield, writers, next, ended);
        MPI_Get_count(&st, MPI_UINT32_T, &n);
        w = st.MPI_SOURCE;
        if (w < 1 || w > writers || ended[w])
            bm_fail("a message from rank %d, which is no writer or has ended", w);
        if (st.MPI_TAG == TAG_END && n == 1) {
            if (msg[0] != next[w] || (total && next[w] != share(total, writers, w)))
                bm_fail("writer %d ended after %u integers, rank 0 received %u", w, msg[0],
                        next[w]);
            ended[w] = 1;
            if (n_ended++ == 0 && !total)
                t_last = bm_now_s(); /* in case no integer follows */
            continue;
        }
        if (st.MPI_TAG != TAG_DATA || n != 2)
            bm_fail("writer %d: a message with tag %d and %d words", w, st.MPI_TAG, n);
        if (msg[0] != next[w] || msg[1] != value(w, msg[0]))
            bm_fail("writer %d: expected integer %u, got number %u with value %u", w,
                    next[w], msg[0], msg[1]);
        next[w]++;
        sum += msg[1];
        r.delivered++;
        if (total ? r.delivered == total : n_ended > 0)
            t_last = bm_now_s();
    }
    for (int w = 1; w <= writers; w++) {
        for (uint32_t s = 0; s < next[w]; s++)
            want += value(w, s);
        r.fewest = next[w] < r.fewest ? next[w] : r.fewest;
        r.most = next[w] > r.most ? next[w] : r.most;
    }
    if (sum != want)
        bm_fail("sum of the values received %llu, sent %llu", (unsigned long long)sum,
                (unsigned long long)want);
    r.elapsed = t_last - t0;
    free(next);
    free(ended);
    return r;
}

/* Both sides of one run of `seconds` (or `total` integers). */
static struct run one_run(double seconds, long total, int writers, int yield)
{
    double t0 = 0;
    struct run r = {0, 0, 0, 0};
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        t0 = bm_now_s();
    MPI_Bcast(&t0, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD); /* the start gate */
    if (rank == 0)
        return read_run(t0, total, writers, yield);
    uint32_t limit = total ? (uint32_t)share(total, writers, rank) : UINT32_MAX;
    write_run(rank, limit, total ? 1e300 : t0 + seconds, yield);
    return r;
}

/* The usage, for --help and bad command lines (mpi/usage.h). */
static const char usage_text[] =
    "usage: mpiexec -n W+1 mpi_stress [--seconds T | --total N] [--repeat R] [--yield]\n"
    "           [--quick] [--header] [--timeout S] [--verbose]\n"
    "  W writers send {sequence, value} integers to rank 0 for T seconds (default\n"
    "  1) or N in total; R runs (default 5) after one warm-up run; rows s_per_1e6,\n"
    "  msgs_per_s, run_seconds: median over the runs, spread lowest-highest.\n"
    "  --yield: waits yield the CPU after 64 failed MPI_Tests (for -bind-to core\n"
    "  with more ranks than CPUs).  --quick: T = 0.2, R = 3.\n";

static struct opts parse(int argc, char **argv)
{
    struct opts o = {.seconds = 1.0, .repeat = 5, .timeout = -1};
    int timed = 0;
    for (int i = 1; i < argc; i++) {
        char *end;
        if (strcmp(argv[i], "--quick") == 0) {
            o.seconds = 0.2, o.repeat = 3;
        } else if (strcmp(argv[i], "--seconds") == 0) {
            const char *s = argv[++i];
            o.seconds = s ? strtod(s, &end) : 0;
            if (!s || *end || !(o.seconds >= 0.001 && o.seconds <= 3600))
                mpi_bad_usage("--seconds needs a number from 0.001 to 3600");
            timed = 1;
        } else if (strcmp(argv[i], "--total") == 0) {
            o.total = mpi_arg_long(argv[++i], "--total needs an integer from 1 to 2^32 - 1",
                                   1, UINT32_MAX);
        } else if (strcmp(argv[i], "--repeat") == 0) {
            o.repeat = (int)mpi_arg_long(
                argv[++i], "--repeat needs an integer from 1 to 101", 1, MAX_REPEAT);
        } else if (strcmp(argv[i], "--timeout") == 0) {
            o.timeout =
                mpi_arg_long(argv[++i], "--timeout needs an integer >= 0", 0, 1 << 30);
        } else if (strcmp(argv[i], "--yield") == 0) {
            o.yield = 1;
        } else if (!bm_common_flag(argv[i], &o.header, &o.verbose)) {
            mpi_bad_usage("unknown option");
        }
    }
    if (timed && o.total)
        mpi_bad_usage("--seconds and --total exclude each other");
    if (o.timeout < 0)
        o.timeout = 600 + (long)(2 * (o.repeat + 1) * (o.total ? 0 : o.seconds));
    return o;
}

/* Rank 0: the rows from the measured runs. */
static void report(const struct opts *o, const struct run *runs, int procs, int pinned)
{
    struct bm_row row = {stdout, "mpi_stress", "-", procs, pinned};
    double per[MAX_REPEAT], rate[MAX_REPEAT], secs[MAX_REPEAT], got[MAX_REPEAT];
    int n = o->repeat;
    for (int i = 0; i < n; i++) {
        if (runs[i].delivered == 0 || !(runs[i].elapsed > 0))
            bm_fail("run %d delivered %ld integers in %g s", i, runs[i].delivered,
                    runs[i].elapsed);
        secs[i] = runs[i].elapsed;
        got[i] = (double)runs[i].delivered;
        per[i] = secs[i] / got[i] * 1e6;
        rate[i] = got[i] / secs[i];
        if (o->verbose)
            fprintf(stderr,
                    "mpi_stress: run %d: %ld integers in %.6f s, %u to %u per writer\n", i,
                    runs[i].delivered, secs[i], runs[i].fewest, runs[i].most);
    }
    long iters = o->total ? o->total : (long)(bm_stat_of(got, n).median + 0.5);
    if (o->header)
        bm_print_header(stdout);
    bm_print(&row, "mpich", iters, "s_per_1e6", bm_stat_of(per, n), "s", 4);
    bm_print(&row, "mpich", iters, "msgs_per_s", bm_stat_of(rate, n), "msgs/s", 0);
    bm_print(&row, "mpich", iters, "run_seconds", bm_stat_of(secs, n), "s", 4);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    mpi_program("mpi_stress", usage_text, argc, argv);
    int procs;
    rank = mpi_start(&argc, &argv, &procs);
    struct opts o = parse(argc, argv);
    if (procs < 2)
        mpi_bad_usage("needs at least one writer (mpiexec -n 2 or more)");
    bm_timeout((unsigned)o.timeout);

    int writers = procs - 1, single = bm_pinned_cpu() >= 0, pinned;
    MPI_Allreduce(&single, &pinned, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    static struct run runs[MAX_REPEAT];
    long warm_total = o.total ? (o.total / 10 > writers ? o.total / 10 : writers) : 0;
    one_run(o.seconds / 10, warm_total, writers, o.yield);
    for (int i = 0; i < o.repeat; i++)
        runs[i] = one_run(o.seconds, o.total, writers, o.yield);
    if (rank == 0)
        report(&o, runs, procs, pinned);
    MPI_Finalize();
    return 0;
}
