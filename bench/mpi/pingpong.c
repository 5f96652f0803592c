/*
 * pingpong.c - the MPICH baseline for shmam's point-to-point figures: round
 * trip, gap and streaming bandwidth between two ranks, with MPI.
 *
 *   mpiexec -n 2 [-bind-to core] build/bench/mpi_pingpong [--quick] [--header]
 *           [--iters N] [--warmup W] [--rounds R] [--windows K] [--timeout S]
 *           [--verbose]
 *
 * Method.  Rank 0 measures every metric once per round, in R rounds (default
 * 5), so that all of them see the same mix of machine states:
 *   rtt_0B, rtt_4B, rtt_32B  N/R round trips each (after W warmup trips) of an
 *        MPI_Send of 0, 1 or 8 uint32 words (a short AM with 0, 1 or 8
 *        arguments) answered by rank 1 with the same words (MPI_Recv, MPI_Send).
 *   g_4B  a flood of N/R one-word messages: rank 0 issues windows of WIN
 *        MPI_Isend and waits for each window (MPI_Waitall), rank 1 pre-posts
 *        windows of WIN MPI_Irecv; rank 1 sends a 0-byte ack after the last.
 *        Time per message is the gap g (the sender cannot run ahead of the
 *        receiver by more than MPI's eager buffering, a few windows at most).
 *   bw_S  for S = 64, 128, ..., 8192 bytes: K windows (default 50) of WIN
 *        MPI_Isend of S bytes, each window acknowledged by a 0-byte message
 *        once rank 1 has all of it (osu_bw's scheme), in MB/s (10^6 bytes).
 * Robust statistics as in bench/rtt.c: the round trips read CLOCK_MONOTONIC
 * every BATCH (64) trips, the flood and the bandwidth loops every window, and
 * a round's figure is the median of its batch means, which a preemption of
 * either rank on this busy machine spoils a batch or two of instead of
 * inflating the whole mean.  A row reports the median over the rounds and the
 * spread (lowest-highest round).
 *
 * Checks.  Every message carries a sequence number (in its tag modulo
 * 2^15 and, when it has a payload, in its first word); each receiver checks
 * source, tag, length and sequence of every message, rank 1 checks all eight
 * words of each 32-byte message and rank 0 the echo of each; bandwidth
 * warmup windows carry a full pattern that rank 1 checks byte by byte (timed
 * windows rewrite only the sequence word).  At the end rank 1 reports how many
 * messages and bytes it received and rank 0 compares them with what it sent.
 * Any mismatch prints "FAILED" on stderr and aborts the job (exit nonzero); a
 * run that hangs (a lost message) is stopped by a SIGALRM after --timeout
 * seconds (default 600).  MPI errors abort (MPI_ERRORS_ARE_FATAL).
 *
 * Output: rank 0 prints one row per metric in the schema shared by all shmam
 * benchmarks (the header first with --header):
 *   # bench,impl,shm,procs,pinned,iters,metric,value,unit,spread
 *   mpi_pingpong,mpich,-,2,1,100000,rtt_0B,0.950,us,0.900-1.100
 * pinned is 1 when each rank's affinity is a single CPU and the two CPUs
 * differ (as `mpiexec -bind-to core` places them on a 2-CPU machine).
 * Defaults: N = 100000, W = 1000, K = 50; --quick: N = 10000, W = 200,
 * K = 10.  MPICH's waits spin; unpinned, both ranks may share a CPU.
 */
#include <mpi.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "common/measure.h"
#include "mpi/usage.h"

#define BATCH 64 /* round trips per clock reading */
#define WIN 64   /* messages per window of the flood and bandwidth loops */
#define MAX_ROUNDS 101
#define MAX_SIZE 8192
#define N_SIZES 8     /* 64 B .. 8 KB */
#define TAG_ACK 32767 /* the ack of a flood or window; sequence tags stay below */
#define TAG_SUMMARY 32766

enum { M_RTT0, M_RTT4, M_RTT32, M_G4, M_BW0, N_METRICS = M_BW0 + N_SIZES };

struct opts {
    long iters, warmup, rounds, windows, timeout;
    int header, verbose;
};

static int rank;
static uint32_t seq;        /* rank 0: messages sent; rank 1: messages received */
static unsigned long bytes; /* rank 0: payload bytes sent; rank 1: received */
static double *batch_buf;   /* room for one round's batch means */
static int verbose;

/* A failed check: say so on stderr and take the whole job down. */
__attribute__((format(printf, 1, 2), noreturn)) static void fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "mpi_pingpong: rank %d: FAILED: ", rank);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}

static void on_alarm(int sig)
{
    static const char msg[] = "mpi_pingpong: FAILED: timed out (a message lost?)\n";
    (void)sig;
    if (write(2, msg, sizeof msg - 1) < 0)
        _exit(1);
    _exit(1);
}

/* Batch means of one timed loop (see bench/rtt.c). */
struct marks {
    double last;
    int n;
};

static void marks_start(struct marks *m)
{
    m->n = 0;
    m->last = bm_now_us();
}

static void marks_batch(struct marks *m, long per_batch)
{
    double t = bm_now_us();
    batch_buf[m->n++] = (t - m->last) / (double)per_batch;
    m->last = t;
}

static double marks_median(struct marks *m)
{
    return bm_median(batch_buf, m->n);
}

/* Word k of message s: what the sender writes and the receiver expects. */
static uint32_t word(uint32_t s, int k)
{
    return k == 0 ? s : s ^ (uint32_t)k * 0x9e3779b9u;
}

static int seq_tag(uint32_t s)
{
    return (int)(s & 0x7fff) % TAG_SUMMARY;
}

/* Receiver side of every message: right source, tag and length. */
static void check_status(const MPI_Status *st, uint32_t s, int len)
{
    int got;
    MPI_Get_count(st, MPI_BYTE, &got);
    if (st->MPI_SOURCE != 1 - rank || st->MPI_TAG != seq_tag(s))
        fail("message %u arrived from rank %d with tag %d", s, st->MPI_SOURCE, st->MPI_TAG);
    if (got != len)
        fail("message %u of %d bytes arrived with %d", s, len, got);
}

/* Rank 0: n round trips of `words` words; returns the median batch mean. */
static double rtt_trips(long n, int words)
{
    uint32_t out[8], in[8];
    MPI_Status st;
    struct marks m;
    marks_start(&m);
    for (long i = 0; i < n; i++) {
        uint32_t s = seq++;
        for (int k = 0; k < words; k++)
            out[k] = word(s, k);
        MPI_Send(out, words, MPI_UINT32_T, 1, seq_tag(s), MPI_COMM_WORLD);
        MPI_Recv(in, words, MPI_UINT32_T, 1, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        check_status(&st, s, 4 * words);
        if (words && memcmp(in, out, 4 * (size_t)words) != 0)
            fail("round trip %u came back with word 0 = %u", s, in[0]);
        bytes += 4 * (unsigned long)words;
        if ((i + 1) % BATCH == 0)
            marks_batch(&m, BATCH);
    }
    return m.n ? marks_median(&m) : 0.0;
}

/* Rank 1: echo n messages of `words` words. */
static void rtt_serve(long n, int words)
{
    uint32_t in[8];
    MPI_Status st;
    for (long i = 0; i < n; i++) {
        uint32_t s = seq++;
        MPI_Recv(in, words, MPI_UINT32_T, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        check_status(&st, s, 4 * words);
        for (int k = 0; k < words; k++)
            if (in[k] != word(s, k))
                fail("message %u has a wrong word %d", s, k);
        bytes += 4 * (unsigned long)words;
        MPI_Send(in, words, MPI_UINT32_T, 0, seq_tag(s), MPI_COMM_WORLD);
    }
}

/* Rank 0: one window of WIN messages of `size` bytes from buffer `buf` (WIN
 * slots of MAX_SIZE); with `full`, every byte is patterned, else only the
 * sequence word is rewritten. */
static void send_window(unsigned char *buf, int size, int full)
{
    MPI_Request req[WIN];
    MPI_Status st[WIN]; /* MPI_STATUSES_IGNORE draws a GCC 12 warning */
    for (int j = 0; j < WIN; j++) {
        uint32_t s = seq++;
        unsigned char *p = buf + (size_t)j * MAX_SIZE;
        if (full)
            for (int b = 4; b < size; b++)
                p[b] = (unsigned char)(word(s, b % 8) >> (b % 4 * 8));
        memcpy(p, &s, 4);
        MPI_Isend(p, size, MPI_BYTE, 1, seq_tag(s), MPI_COMM_WORLD, &req[j]);
    }
    MPI_Waitall(WIN, req, st);
    bytes += (unsigned long)WIN * (unsigned long)size;
}

/* Rank 1: receive one window as send_window sent it, checking every message. */
static void recv_window(unsigned char *buf, int size, int full)
{
    MPI_Request req[WIN];
    MPI_Status st[WIN];
    for (int j = 0; j < WIN; j++)
        MPI_Irecv(buf + (size_t)j * MAX_SIZE, size, MPI_BYTE, 0, MPI_ANY_TAG,
                  MPI_COMM_WORLD, &req[j]);
    MPI_Waitall(WIN, req, st);
    for (int j = 0; j < WIN; j++) {
        uint32_t s = seq++, got;
        const unsigned char *p = buf + (size_t)j * MAX_SIZE;
        check_status(&st[j], s, size);
        memcpy(&got, p, 4);
        if (got != s)
            fail("message %u carries sequence number %u", s, got);
        if (full)
            for (int b = 4; b < size; b++)
                if (p[b] != (unsigned char)(word(s, b % 8) >> (b % 4 * 8)))
                    fail("message %u has a wrong byte at %d", s, b);
    }
    bytes += (unsigned long)WIN * (unsigned long)size;
}

static void send_ack(void)
{
    MPI_Send(NULL, 0, MPI_BYTE, 0, TAG_ACK, MPI_COMM_WORLD);
}

static void wait_ack(void)
{
    MPI_Status st;
    int n;
    MPI_Recv(NULL, 0, MPI_BYTE, 1, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, MPI_BYTE, &n);
    if (st.MPI_TAG != TAG_ACK || n != 0)
        fail("expected an ack, got tag %d with %d bytes", st.MPI_TAG, n);
}

/* Rank 0: a flood of `windows` windows of one-word messages and the final
 * ack; returns the median per-message time over the windows (the last one
 * includes the ack). */
static double flood(long windows, unsigned char *buf)
{
    struct marks m;
    marks_start(&m);
    double t0 = m.last;
    for (long w = 0; w < windows; w++) {
        send_window(buf, 4, 0);
        if (w + 1 == windows)
            wait_ack();
        marks_batch(&m, WIN);
    }
    if (verbose)
        fprintf(stderr, "mpi_pingpong: flood of %ld messages: plain mean %.3f us\n",
                windows * WIN, (m.last - t0) / (double)(windows * WIN));
    return m.n ? marks_median(&m) : 0.0;
}

static void flood_serve(long windows, unsigned char *buf)
{
    for (long w = 0; w < windows; w++)
        recv_window(buf, 4, 0);
    send_ack();
}

/* Rank 0: `warmup` patterned windows, then `windows` timed ones of `size`
 * bytes, each acknowledged; returns MB/s from the median window time. */
static double bandwidth(int size, long warmup, long windows, unsigned char *buf)
{
    struct marks m;
    for (long w = 0; w < warmup; w++) {
        send_window(buf, size, 1);
        wait_ack();
    }
    marks_start(&m);
    for (long w = 0; w < windows; w++) {
        send_window(buf, size, 0);
        wait_ack();
        marks_batch(&m, 1);
    }
    return (double)WIN * size / marks_median(&m);
}

static void bandwidth_serve(int size, long warmup, long windows, unsigned char *buf)
{
    for (long w = 0; w < warmup + windows; w++) {
        recv_window(buf, size, w < warmup);
        send_ack();
    }
}

/* The usage, for --help and bad command lines (mpi/usage.h). */
static const char usage_text[] =
    "usage: mpiexec -n 2 [-bind-to core] mpi_pingpong [--quick] [--header] "
    "[--iters N] [--warmup W] [--rounds R] [--windows K] [--timeout S] "
    "[--verbose]\n";

static void usage(FILE *f, int status)
{
    mpi_usage(rank, f, status, usage_text);
}

static void bad_usage(const char *why)
{
    mpi_bad_usage(rank, "mpi_pingpong", why, usage_text);
}

static long arg_long(const char *s, const char *why, long min)
{
    char *end;
    long v = s ? strtol(s, &end, 10) : 0;
    if (!s || *end || v < min)
        bad_usage(why);
    return v;
}

static struct opts parse(int argc, char **argv)
{
    struct opts o = {
        .iters = 100000, .warmup = 1000, .rounds = 5, .windows = 50, .timeout = 600};
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0)
            o.iters = 10000, o.warmup = 200, o.windows = 10;
        else if (strcmp(argv[i], "--iters") == 0)
            o.iters = arg_long(argv[++i], "--iters needs an integer >= 1", 1);
        else if (strcmp(argv[i], "--warmup") == 0)
            o.warmup = arg_long(argv[++i], "--warmup needs an integer >= 0", 0);
        else if (strcmp(argv[i], "--rounds") == 0)
            o.rounds = arg_long(argv[++i], "--rounds needs an integer >= 1", 1);
        else if (strcmp(argv[i], "--windows") == 0)
            o.windows = arg_long(argv[++i], "--windows needs an integer >= 1", 1);
        else if (strcmp(argv[i], "--timeout") == 0)
            o.timeout = arg_long(argv[++i], "--timeout needs an integer >= 0", 0);
        else if (strcmp(argv[i], "--header") == 0)
            o.header = 1;
        else if (strcmp(argv[i], "--verbose") == 0)
            o.verbose = 1;
        else
            bad_usage("unknown option");
    }
    if (o.rounds > MAX_ROUNDS || o.iters / o.rounds < WIN)
        bad_usage("need rounds <= 101 and iters / rounds >= 64");
    return o;
}

/* One round of every metric; rank 0 stores its figures in r[metric]. */
static void round_all(const struct opts *o, unsigned char *buf, double *r)
{
    static const int words[3] = {0, 1, 8};
    long n = o->iters / o->rounds, warm_windows = o->warmup / WIN + 1;
    for (int k = 0; k < 3; k++) {
        if (rank == 0) {
            rtt_trips(o->warmup, words[k]);
            r[M_RTT0 + k] = rtt_trips(n, words[k]);
        } else {
            rtt_serve(o->warmup + n, words[k]);
        }
    }
    if (rank == 0) {
        flood(warm_windows, buf);
        r[M_G4] = flood(n / WIN, buf);
    } else {
        flood_serve(warm_windows, buf);
        flood_serve(n / WIN, buf);
    }
    for (int k = 0; k < N_SIZES; k++) {
        int size = 64 << k;
        if (rank == 0)
            r[M_BW0 + k] = bandwidth(size, 2, o->windows, buf);
        else
            bandwidth_serve(size, 2, o->windows, buf);
    }
}

/* Rank 0: the rows, from per-round figures res[metric][round]. */
static void report(const struct opts *o, int procs, int pinned,
                   double res[N_METRICS][MAX_ROUNDS])
{
    static const char *const names[] = {"rtt_0B", "rtt_4B", "rtt_32B", "g_4B"};
    long n = o->iters / o->rounds;
    int rounds = (int)o->rounds;
    if (o->header)
        printf("# bench,impl,shm,procs,pinned,iters,metric,value,unit,spread\n");
    for (int k = 0; k < N_METRICS; k++) {
        char name[32];
        long iters = k < M_G4    ? n * rounds
                     : k == M_G4 ? n / WIN * WIN * rounds
                                 : o->windows * WIN * rounds;
        const char *fmt = k < M_BW0 ? "%.3f" : "%.1f";
        char med[32], lo[32], hi[32];
        if (k < M_BW0)
            snprintf(name, sizeof name, "%s", names[k]);
        else
            snprintf(name, sizeof name, "bw_%d_MBps", 64 << (k - M_BW0));
        if (o->verbose)
            for (int i = 0; i < rounds; i++)
                fprintf(stderr, "mpi_pingpong: %s round %d: %.3f\n", name, i, res[k][i]);
        double m = bm_median(res[k], rounds); /* sorts res[k] */
        snprintf(med, sizeof med, fmt, m);
        snprintf(lo, sizeof lo, fmt, res[k][0]);
        snprintf(hi, sizeof hi, fmt, res[k][rounds - 1]);
        printf("mpi_pingpong,mpich,-,%d,%d,%ld,%s,%s,%s,%s-%s\n", procs, pinned, iters,
               name, med, k < M_BW0 ? "us" : "MB/s", lo, hi);
    }
    fflush(stdout);
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
    verbose = o.verbose;
    if (procs != 2) {
        if (rank == 0)
            fprintf(stderr, "mpi_pingpong: run me with exactly two ranks (mpiexec -n 2)\n");
        MPI_Finalize();
        return 2;
    }
    signal(SIGALRM, on_alarm);
    alarm((unsigned)o.timeout);

    int cpu = bm_pinned_cpu(), cpus[2];
    MPI_Allgather(&cpu, 1, MPI_INT, cpus, 1, MPI_INT, MPI_COMM_WORLD);
    int pinned = cpus[0] >= 0 && cpus[1] >= 0 && cpus[0] != cpus[1];
    long n = o.iters / o.rounds;
    batch_buf = malloc(((size_t)(n > o.warmup ? n : o.warmup) / BATCH + o.windows + 2) *
                       sizeof *batch_buf);
    unsigned char *buf = calloc(WIN, MAX_SIZE);
    static double res[N_METRICS][MAX_ROUNDS];
    if (!batch_buf || !buf)
        fail("out of memory");

    MPI_Barrier(MPI_COMM_WORLD);
    for (long k = 0; k < o.rounds; k++) {
        double r[N_METRICS];
        round_all(&o, buf, r);
        for (int m = 0; m < N_METRICS; m++)
            res[m][k] = r[m];
    }

    /* Rank 1's totals against rank 0's: every message and byte accounted for. */
    unsigned long totals[2] = {seq, bytes};
    if (rank == 1) {
        MPI_Send(totals, 2, MPI_UNSIGNED_LONG, 0, TAG_SUMMARY, MPI_COMM_WORLD);
    } else {
        unsigned long got[2];
        MPI_Recv(got, 2, MPI_UNSIGNED_LONG, 1, TAG_SUMMARY, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
        if (got[0] != totals[0] || got[1] != totals[1])
            fail("sent %lu messages (%lu bytes), rank 1 received %lu (%lu bytes)",
                 totals[0], totals[1], got[0], got[1]);
        for (int m = 0; m < N_METRICS; m++)
            for (long k = 0; k < o.rounds; k++)
                if (!(res[m][k] > 0))
                    fail("metric %d has no figure in round %ld", m, k);
        report(&o, procs, pinned, res);
    }
    free(buf);
    free(batch_buf);
    MPI_Finalize();
    return 0;
}
