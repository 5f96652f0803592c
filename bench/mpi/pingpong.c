/*
 * pingpong.c - the MPICH baseline for shmam's point-to-point figures: round
 * trip, gap and streaming bandwidth between two ranks, with MPI.
 *
 *   mpiexec -n 2 -bind-to core build/bench/mpi_pingpong [--quick] [--header]
 *           [--iters N] [--rounds R] [--windows K] [--timeout S] [--verbose]
 *
 * Kinds.  Rank 0 measures every kind below once per round:
 *   rtt_0B, rtt_4B, rtt_32B  N/R round trips each of an MPI_Send of 0, 1 or 8
 *        uint32 words (a short AM with 0, 1 or 8 arguments), answered by rank 1
 *        with the same words (MPI_Recv, MPI_Send); time per round trip.
 *   g_oneway_4B  a one-way flood of N/R one-word messages: rank 0 issues
 *        windows of WIN (64) MPI_Isend and waits for each window (MPI_Waitall),
 *        rank 1 pre-posts windows of WIN MPI_Irecv and sends a 0-byte ack after
 *        the last; time per message, the ack included.  Nothing comes back per
 *        message, so this is less work than shmam's g.
 *   g_reply_4B  the same work as shmam's g (bench/logp.c): a stream of N/R
 *        one-word requests, each answered by rank 1 with a one-word reply that
 *        rank 0 receives.  Rank 0 posts an MPI_Irecv for a request's reply and
 *        MPI_Sends the request, then MPI_Tests the oldest outstanding replies
 *        until one has not arrived (never blocking: AM's one am_poll after each
 *        send); with REPLY_WIN (128, a shmam queue) requests outstanding it
 *        MPI_Waits for the oldest first, as a full queue blocks an am_request.
 *        Rank 1 MPI_Recvs each request and MPI_Sends its reply.  Time per
 *        request over the whole stream, the last replies drained.
 *   bw_S  for S = 64, 128, ..., 8192 bytes: K windows (default 50) of WIN
 *        MPI_Isend of S bytes, each window acknowledged by a 0-byte message
 *        once rank 1 has all of it (osu_bw's scheme), in MB/s (10^6 bytes).
 *
 * Estimator (the instrument's one, bench/common/stat.h).  One unmeasured
 * warm-up round, then R measured rounds (--rounds, default 5).  Within a
 * round the kinds run in ABBA order (bm_abba: the reverse order in odd
 * rounds), so that no kind always runs first or after the same neighbour.  A
 * round's figure is the MEAN over that kind's whole run in the round (total
 * time over its operations, one clock reading at each end); the row's value is
 * the median over the rounds and its spread the lowest and highest round.  A
 * preemption of either rank spoils the round it hits, which shows in the
 * spread and leaves the median alone as long as fewer than half are hit.
 *
 * Checks.  Every message carries a sequence number (in its tag modulo 2^15
 * and, when it has a payload, in its first word); each receiver checks
 * source, tag, length and sequence of every message, replies and echoes
 * included; rank 1 checks all eight words of each 32-byte message and rank 0
 * the echo of each.  In the warm-up round every bandwidth message carries a
 * full pattern that rank 1 checks byte by byte (timed windows rewrite only
 * the sequence word).  At the end rank 1 reports how many messages and bytes
 * it received and rank 0 compares them with what it sent.  Any mismatch
 * prints "FAILED" on stderr and aborts the job (exit nonzero); a run that
 * hangs (a lost message) is stopped by a SIGALRM after --timeout seconds
 * (default 600).  MPI errors abort (MPI_ERRORS_ARE_FATAL).
 *
 * Output: rank 0 prints one row per kind in the schema shared by all shmam
 * benchmarks (the header first with --header; every round's figure on stderr
 * with --verbose):
 *   bench,impl,shm,procs,pinned,iters,metric,value,unit,spread
 *   mpi_pingpong,mpich,-,2,1,100000,rtt_0B,0.330,us,0.318-0.352
 * iters: the round trips, messages or requests of all measured rounds (N
 * rounded down to a multiple of R; the flood to whole windows; bw_S: K x WIN
 * x R messages).  pinned is 1 when each rank's affinity is a single CPU and
 * the two differ (`mpiexec -bind-to core` on a 2-CPU machine), as shmam's
 * `shmamrun --bind`: MPICH's waits spin without ever yielding (see the MPICH
 * section of bench/README.md), so unpinned both ranks may share a CPU and the
 * figures then measure the scheduler.  Defaults: N = 100000, K = 50;
 * --quick: N = 10000, K = 10.
 */
#include <limits.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common/measure.h"
#include "common/stat.h"
#include "mpi/usage.h"

#define WIN 64        /* messages per window of the flood and bandwidth loops */
#define REPLY_WIN 128 /* g_reply_4B's outstanding requests at most: a shmam queue */
#define MAX_ROUNDS 101
#define MAX_SIZE 8192
#define N_SIZES 8     /* 64 B .. 8 KB */
#define TAG_ACK 32767 /* the ack of a flood or window; sequence tags stay below */
#define TAG_SUMMARY 32766

/* The kinds, in the order of the rows; bw_<64 << i>_MBps for K_BW0 + i. */
enum { K_RTT0, K_RTT4, K_RTT32, K_GONEWAY, K_GREPLY, K_BW0, N_KINDS = K_BW0 + N_SIZES };

static const char *const kind_names[K_BW0] = {"rtt_0B", "rtt_4B", "rtt_32B", "g_oneway_4B",
                                              "g_reply_4B"};

struct opts {
    long iters, rounds, windows, timeout;
    int header, verbose;
};

static int rank;
static uint32_t seq;        /* rank 0: messages sent; rank 1: messages received */
static unsigned long bytes; /* rank 0: payload bytes sent; rank 1: received */

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
        bm_fail("message %u arrived from rank %d with tag %d", s, st->MPI_SOURCE,
                st->MPI_TAG);
    if (got != len)
        bm_fail("message %u of %d bytes arrived with %d", s, len, got);
}

/* Rank 0: n round trips of `words` words; returns microseconds per trip. */
static double rtt_trips(long n, int words)
{
    uint32_t out[8], in[8];
    MPI_Status st;
    double t0 = bm_now_us();
    for (long i = 0; i < n; i++) {
        uint32_t s = seq++;
        for (int k = 0; k < words; k++)
            out[k] = word(s, k);
        MPI_Send(out, words, MPI_UINT32_T, 1, seq_tag(s), MPI_COMM_WORLD);
        MPI_Recv(in, words, MPI_UINT32_T, 1, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        check_status(&st, s, 4 * words);
        if (words && memcmp(in, out, 4 * (size_t)words) != 0)
            bm_fail("round trip %u came back with word 0 = %u", s, in[0]);
        bytes += 4 * (unsigned long)words;
    }
    return (bm_now_us() - t0) / (double)n;
}

/* Rank 1: answer n messages of `words` words with the same words (the round
 * trips' echo and g_reply_4B's reply). */
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
                bm_fail("message %u has a wrong word %d", s, k);
        bytes += 4 * (unsigned long)words;
        MPI_Send(in, words, MPI_UINT32_T, 0, seq_tag(s), MPI_COMM_WORLD);
    }
}

/* Rank 0: has the reply to request s (receive *req into *in) run?  Waits for
 * it if `block`, else tests once; checks it when it has. */
static int reply_arrived(MPI_Request *req, const uint32_t *in, uint32_t s, int block)
{
    MPI_Status st;
    int done = 1;
    if (block)
        MPI_Wait(req, &st);
    else
        MPI_Test(req, &done, &st);
    if (done) {
        check_status(&st, s, 4);
        if (*in != s)
            bm_fail("the reply to request %u carries %u", s, *in);
    }
    return done;
}

/* Rank 0: g_reply_4B's stream of n one-word requests (rank 1: rtt_serve(n,
 * 1)); returns microseconds per request. */
static double reply_stream(long n)
{
    static uint32_t in[REPLY_WIN];
    MPI_Request req[REPLY_WIN];
    uint32_t first = seq; /* request i carries first + i */
    long head = 0;        /* the oldest request whose reply has not run */
    double t0 = bm_now_us();
    for (long i = 0; i < n; i++) {
        if (i - head == REPLY_WIN) {
            reply_arrived(&req[head % REPLY_WIN], &in[head % REPLY_WIN],
                          first + (uint32_t)head, 1);
            head++;
        }
        uint32_t s = seq++;
        MPI_Irecv(&in[i % REPLY_WIN], 1, MPI_UINT32_T, 1, MPI_ANY_TAG, MPI_COMM_WORLD,
                  &req[i % REPLY_WIN]);
        MPI_Send(&s, 1, MPI_UINT32_T, 1, seq_tag(s), MPI_COMM_WORLD);
        bytes += 4;
        while (head <= i && reply_arrived(&req[head % REPLY_WIN], &in[head % REPLY_WIN],
                                          first + (uint32_t)head, 0))
            head++;
    }
    for (; head < n; head++)
        reply_arrived(&req[head % REPLY_WIN], &in[head % REPLY_WIN], first + (uint32_t)head,
                      1);
    return (bm_now_us() - t0) / (double)n;
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
            bm_fail("message %u carries sequence number %u", s, got);
        if (full)
            for (int b = 4; b < size; b++)
                if (p[b] != (unsigned char)(word(s, b % 8) >> (b % 4 * 8)))
                    bm_fail("message %u has a wrong byte at %d", s, b);
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
        bm_fail("expected an ack, got tag %d with %d bytes", st.MPI_TAG, n);
}

/* Rank 0: a flood of `windows` windows of one-word messages and the final
 * ack; returns microseconds per message. */
static double flood(long windows, unsigned char *buf)
{
    double t0 = bm_now_us();
    for (long w = 0; w < windows; w++)
        send_window(buf, 4, 0);
    wait_ack();
    return (bm_now_us() - t0) / (double)(windows * WIN);
}

static void flood_serve(long windows, unsigned char *buf)
{
    for (long w = 0; w < windows; w++)
        recv_window(buf, 4, 0);
    send_ack();
}

/* Rank 0: `windows` windows of `size` bytes, each acknowledged, patterned in
 * full if `full`; returns MB/s (bytes per microsecond). */
static double bandwidth(int size, long windows, int full, unsigned char *buf)
{
    double t0 = bm_now_us();
    for (long w = 0; w < windows; w++) {
        send_window(buf, size, full);
        wait_ack();
    }
    return (double)windows * WIN * size / (bm_now_us() - t0);
}

static void bandwidth_serve(int size, long windows, int full, unsigned char *buf)
{
    for (long w = 0; w < windows; w++) {
        recv_window(buf, size, full);
        send_ack();
    }
}

/* Both ranks: one run of kind k (n round trips, messages or requests; the
 * warm-up round patterns bandwidth messages in full); rank 0 returns its
 * figure, rank 1 0. */
static double run_kind(int k, long n, long windows, int warmup, unsigned char *buf)
{
    static const int words[3] = {0, 1, 8};
    if (k <= K_RTT32) {
        if (rank == 1) {
            rtt_serve(n, words[k]);
            return 0;
        }
        return rtt_trips(n, words[k]);
    }
    if (k == K_GONEWAY) {
        if (rank == 1) {
            flood_serve(n / WIN, buf);
            return 0;
        }
        return flood(n / WIN, buf);
    }
    if (k == K_GREPLY) {
        if (rank == 1) {
            rtt_serve(n, 1);
            return 0;
        }
        return reply_stream(n);
    }
    int size = 64 << (k - K_BW0);
    if (rank == 1) {
        bandwidth_serve(size, windows, warmup, buf);
        return 0;
    }
    return bandwidth(size, windows, warmup, buf);
}

/* The usage, for --help and bad command lines (mpi/usage.h). */
static const char usage_text[] =
    "usage: mpiexec -n 2 -bind-to core mpi_pingpong [--quick] [--header] [--iters N]\n"
    "           [--rounds R] [--windows K] [--timeout S] [--verbose]\n"
    "  rtt_0B rtt_4B rtt_32B g_oneway_4B g_reply_4B bw_64_MBps .. bw_8192_MBps:\n"
    "  N/R trips/messages/requests (K windows of 64 for bw) per kind and round,\n"
    "  R rounds (default 5) after one warm-up round, kinds in ABBA order;\n"
    "  value = median of the round means, spread = lowest-highest round.\n"
    "  Defaults N = 100000, K = 50; --quick: N = 10000, K = 10.\n";

static struct opts parse(int argc, char **argv)
{
    struct opts o = {.iters = 100000, .rounds = 5, .windows = 50, .timeout = 600};
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0)
            o.iters = 10000, o.windows = 10;
        else if (strcmp(argv[i], "--iters") == 0)
            o.iters = mpi_arg_long(argv[++i], "--iters needs an integer >= 1", 1, LONG_MAX);
        else if (strcmp(argv[i], "--rounds") == 0)
            o.rounds =
                mpi_arg_long(argv[++i], "--rounds needs an integer >= 1", 1, LONG_MAX);
        else if (strcmp(argv[i], "--windows") == 0)
            o.windows =
                mpi_arg_long(argv[++i], "--windows needs an integer >= 1", 1, LONG_MAX);
        else if (strcmp(argv[i], "--timeout") == 0)
            o.timeout =
                mpi_arg_long(argv[++i], "--timeout needs an integer >= 0", 0, LONG_MAX);
        else if (!bm_common_flag(argv[i], &o.header, &o.verbose))
            mpi_bad_usage("unknown option");
    }
    if (o.rounds > MAX_ROUNDS || o.iters / o.rounds < WIN)
        mpi_bad_usage("need rounds <= 101 and iters / rounds >= 64");
    return o;
}

/* Rank 0: the rows, from per-round figures res[kind][round]. */
static void report(const struct opts *o, int pinned, double res[N_KINDS][MAX_ROUNDS])
{
    struct bm_row row = {stdout, "mpi_pingpong", "-", 2, pinned};
    long n = o->iters / o->rounds, r = o->rounds;
    if (o->header)
        bm_print_header(stdout);
    for (int k = 0; k < N_KINDS; k++) {
        char name[32];
        long iters = k == K_GONEWAY ? n / WIN * WIN * r
                     : k < K_BW0    ? n * r
                                    : o->windows * WIN * r;
        if (k < K_BW0)
            snprintf(name, sizeof name, "%s", kind_names[k]);
        else
            snprintf(name, sizeof name, "bw_%d_MBps", 64 << (k - K_BW0));
        if (o->verbose)
            for (int i = 0; i < r; i++)
                fprintf(stderr, "mpi_pingpong: %s round %d: %.3f\n", name, i, res[k][i]);
        bm_print(&row, "mpich", iters, name, bm_stat_of(res[k], (int)r),
                 k < K_BW0 ? "us" : "MB/s", k < K_BW0 ? 3 : 1);
    }
    fflush(stdout);
}

int main(int argc, char **argv)
{
    mpi_program("mpi_pingpong", usage_text, argc, argv);
    int procs;
    rank = mpi_start(&argc, &argv, &procs);
    struct opts o = parse(argc, argv);
    bm_timeout((unsigned)o.timeout);

    int pinned = mpi_pinned_pair(procs);
    long n = o.iters / o.rounds;
    unsigned char *buf = calloc(WIN, MAX_SIZE);
    static double res[N_KINDS][MAX_ROUNDS];
    if (!buf)
        bm_fail("out of memory");

    /* Round -1 is the warm-up; then the kinds of round r in ABBA order. */
    MPI_Barrier(MPI_COMM_WORLD);
    for (long r = -1; r < o.rounds; r++)
        for (int j = 0; j < N_KINDS; j++) {
            int k = bm_abba((int)(r < 0 ? 0 : r), j, N_KINDS);
            double v = run_kind(k, n, o.windows, r < 0, buf);
            if (r >= 0)
                res[k][r] = v;
        }

    mpi_check_totals(seq, bytes, TAG_SUMMARY); /* every message and byte */
    if (rank == 0) {
        for (int k = 0; k < N_KINDS; k++)
            for (long r = 0; r < o.rounds; r++)
                if (!(res[k][r] > 0))
                    bm_fail("kind %d has no figure in round %ld", k, r);
        report(&o, pinned, res);
    }
    free(buf);
    MPI_Finalize();
    return 0;
}
